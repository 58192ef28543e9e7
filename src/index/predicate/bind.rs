//! Untyped [`Filter`] -> typed [`Predicate`]: resolve columns, coerce literals like lance.

use std::ops::Bound;

use arrow_schema::DataType;
use bytes::Bytes;

use super::parse::{CompareOp, Filter, Literal, Operand};
use super::{BoundFilter, ColumnRef, Leaf, LeafQuery, Predicate};
use crate::error::{Error, Result};
use crate::index::key::{is_key_type, Key};
use crate::index::sql_literal::{coerce_literal, CoerceError, Scalar};
use crate::lance::dataset::Schema;

pub(super) fn bind(text: &str, filter: &Filter, schema: &Schema) -> Result<BoundFilter> {
    let mut binder = Binder {
        text,
        schema,
        columns: Vec::new(),
    };
    let predicate = binder.bind(filter)?;
    Ok(BoundFilter {
        text: text.to_string(),
        columns: binder.columns,
        predicate,
    })
}

struct Binder<'a> {
    text: &'a str,
    schema: &'a Schema,
    columns: Vec<ColumnRef>,
}

impl Binder<'_> {
    fn invalid(&self, what: impl std::fmt::Display) -> Error {
        Error::InvalidArgument(format!("filter {:?}: {what}", self.text))
    }

    fn column(&mut self, name: &str) -> Result<usize> {
        if let Some(i) = self.columns.iter().position(|c| c.name == name) {
            return Ok(i);
        }
        let field = self
            .schema
            .field_by_path(name)
            .ok_or_else(|| self.invalid(format!("no column named {name:?}")))?;
        if self.schema.has_children(field.id) {
            return Err(self.invalid(format!(
                "column {name:?} is nested ({})",
                field.logical_type
            )));
        }
        let data_type = self
            .schema
            .arrow_type(field.id)
            .ok()
            .filter(is_key_type)
            .ok_or_else(|| {
                Error::unsupported(format!(
                    "filter {:?}: column {name:?} has type {}, which lakeseek cannot filter on",
                    self.text, field.logical_type
                ))
            })?;
        self.columns.push(ColumnRef {
            name: name.to_string(),
            field_id: field.id,
            data_type,
        });
        Ok(self.columns.len() - 1)
    }

    fn bind(&mut self, f: &Filter) -> Result<Predicate> {
        Ok(match f {
            Filter::And(v) => {
                Predicate::And(v.iter().map(|f| self.bind(f)).collect::<Result<_>>()?)
            }
            Filter::Or(v) => Predicate::Or(v.iter().map(|f| self.bind(f)).collect::<Result<_>>()?),
            Filter::Not(f) => Predicate::Not(Box::new(self.bind(f)?)),
            Filter::IsTrue(f) => Predicate::IsTrue(Box::new(self.bind(f)?)),
            Filter::IsNull { column, negated } => {
                let leaf = Predicate::Leaf(Leaf {
                    column: self.column(column)?,
                    query: LeafQuery::IsNull,
                });
                negate_if(leaf, *negated)
            }
            Filter::Column(name) => {
                let c = self.column(name)?;
                if self.columns[c].data_type != DataType::Boolean {
                    return Err(self.invalid(format!(
                        "column {name:?} is not boolean; compare it with a value"
                    )));
                }
                leaf(c, LeafQuery::Equals(Key::Bool(true)))
            }
            Filter::Compare { left, op, right } => {
                let (name, op, lit) = match (left, right) {
                    (Operand::Column(c), Operand::Literal(l)) => (c, *op, l),
                    (Operand::Literal(l), Operand::Column(c)) => (c, op.swapped(), l),
                    _ => return Err(self.invalid("a comparison needs one column and one literal")),
                };
                let c = self.column(name)?;
                match self.key(c, lit)? {
                    None => leaf(c, LeafQuery::AlwaysNull),
                    Some(k) => self.compare(c, op, k),
                }
            }
            Filter::InList {
                column,
                list,
                negated,
            } => {
                let c = self.column(column)?;
                let mut values = Vec::with_capacity(list.len());
                let mut has_null = false;
                for lit in list {
                    match self.key(c, lit)? {
                        Some(k) => values.push(k),
                        None => has_null = true,
                    }
                }
                negate_if(leaf(c, in_list(values, has_null)), *negated)
            }
            Filter::Between {
                column,
                low,
                high,
                negated,
            } => {
                let c = self.column(column)?;
                let (low, high) = (self.key(c, low)?, self.key(c, high)?);
                let p = match (low, high) {
                    (Some(l), Some(h)) => leaf(
                        c,
                        LeafQuery::Range {
                            lower: Bound::Included(zero_bound(l, false)),
                            upper: Bound::Included(zero_bound(h, true)),
                        },
                    ),
                    (l, h) => Predicate::And(vec![
                        l.map_or(leaf(c, LeafQuery::AlwaysNull), |k| {
                            self.compare(c, CompareOp::GtEq, k)
                        }),
                        h.map_or(leaf(c, LeafQuery::AlwaysNull), |k| {
                            self.compare(c, CompareOp::LtEq, k)
                        }),
                    ]),
                };
                negate_if(p, *negated)
            }
        })
    }

    /// `column op key`, with lance's signed-zero rewrite for float columns.
    fn compare(&self, c: usize, op: CompareOp, k: Key) -> Predicate {
        let query = match op {
            CompareOp::Eq | CompareOp::NotEq => {
                let q = if is_zero(&k) {
                    in_list(vec![k], false)
                } else {
                    LeafQuery::Equals(k)
                };
                return negate_if(leaf(c, q), op == CompareOp::NotEq);
            }
            // x < 0 and x >= 0 use -0.0; x <= 0 and x > 0 use +0.0.
            CompareOp::Lt => LeafQuery::Range {
                lower: Bound::Unbounded,
                upper: Bound::Excluded(zero_bound(k, false)),
            },
            CompareOp::LtEq => LeafQuery::Range {
                lower: Bound::Unbounded,
                upper: Bound::Included(zero_bound(k, true)),
            },
            CompareOp::Gt => LeafQuery::Range {
                lower: Bound::Excluded(zero_bound(k, true)),
                upper: Bound::Unbounded,
            },
            CompareOp::GtEq => LeafQuery::Range {
                lower: Bound::Included(zero_bound(k, false)),
                upper: Bound::Unbounded,
            },
        };
        leaf(c, query)
    }

    fn key(&self, c: usize, lit: &Literal) -> Result<Option<Key>> {
        let col = &self.columns[c];
        let scalar = coerce_literal(lit, &col.data_type).map_err(|e| match e {
            CoerceError::Mismatch => self.invalid(format!(
                "literal {lit} cannot be compared with column {:?} of type {}",
                col.name, col.data_type
            )),
            CoerceError::Invalid(what) => self.invalid(what),
            CoerceError::UnsupportedZone(tz) => Error::unsupported(format!(
                "filter {:?}: unknown time zone {tz:?}",
                self.text
            )),
        })?;
        Ok(scalar.map(|s| match s {
            Scalar::Bool(b) => Key::Bool(b),
            Scalar::Int(v) => Key::Int(v),
            Scalar::UInt(v) => Key::UInt(v),
            Scalar::Float(v) => Key::Float(narrow_float(v, &col.data_type)),
            Scalar::Bytes(b) => Key::Bytes(Bytes::from(b)),
        }))
    }
}

fn narrow_float(v: f64, t: &DataType) -> f64 {
    match t {
        DataType::Float32 => v as f32 as f64,
        DataType::Float16 => half::f16::from_f64(v).to_f64(),
        _ => v,
    }
}

fn is_zero(k: &Key) -> bool {
    matches!(k, Key::Float(v) if *v == 0.0)
}

/// A zero bound becomes -0.0 (`positive == false`) or +0.0; other keys are unchanged.
fn zero_bound(k: Key, positive: bool) -> Key {
    if is_zero(&k) {
        Key::Float(if positive { 0.0 } else { -0.0 })
    } else {
        k
    }
}

fn in_list(mut values: Vec<Key>, has_null: bool) -> LeafQuery {
    if values.iter().any(is_zero) {
        values.push(Key::Float(-0.0));
        values.push(Key::Float(0.0));
    }
    values.sort();
    values.dedup();
    LeafQuery::In { values, has_null }
}

fn leaf(column: usize, query: LeafQuery) -> Predicate {
    Predicate::Leaf(Leaf { column, query })
}

fn negate_if(p: Predicate, negate: bool) -> Predicate {
    if negate {
        Predicate::Not(Box::new(p))
    } else {
        p
    }
}

#[cfg(test)]
mod tests;
