//! Untyped [`Filter`] -> typed [`Predicate`]: resolve columns, coerce literals like lance.

use std::ops::Bound;

use arrow_array::types::Date32Type;
use arrow_cast::parse::{string_to_timestamp_nanos, Parser as _};
use arrow_schema::{DataType, TimeUnit};
use bytes::Bytes;

use super::parse::{CompareOp, Filter, Literal, Operand};
use super::{BoundFilter, ColumnRef, Leaf, LeafQuery, Predicate};
use crate::error::{Error, Result};
use crate::index::key::{is_key_type, Key};
use crate::index::sql_literal::utc_offset_seconds;
use crate::lance::dataset::schema::arrow_type_of;
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

const NANOS_PER_DAY: i64 = 86_400_000_000_000;

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
        let data_type = arrow_type_of(&field.logical_type)
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
        let mismatch = || {
            self.invalid(format!(
                "literal {lit} cannot be compared with column {:?} of type {}",
                col.name, col.data_type
            ))
        };
        use DataType as T;
        let key = match (lit, &col.data_type) {
            (Literal::Null, _) => return Ok(None),
            (Literal::Bool(b), T::Boolean) => Key::Bool(*b),
            (Literal::Number(n), t) if t.is_integer() => self.integer(n, t).ok_or_else(mismatch)?,
            (Literal::Number(n), t) if t.is_floating() => {
                let v: f64 = n.parse().map_err(|_| mismatch())?;
                Key::Float(narrow_float(v, t))
            }
            (Literal::FloatCast { text, single }, t) if t.is_floating() => {
                let v = if *single {
                    text.trim().parse::<f32>().map(|v| v as f64)
                } else {
                    text.trim().parse::<f64>()
                }
                .map_err(|_| self.invalid(format!("cannot cast {text:?} to a float")))?;
                Key::Float(narrow_float(v, t))
            }
            (Literal::String(s), T::Utf8 | T::LargeUtf8 | T::Utf8View) => {
                Key::Bytes(Bytes::from(s.clone().into_bytes()))
            }
            (Literal::Hex(b), T::Binary | T::LargeBinary | T::BinaryView) => {
                Key::Bytes(Bytes::from(b.clone()))
            }
            (Literal::Hex(b), T::FixedSizeBinary(n)) if *n as usize == b.len() => {
                Key::Bytes(Bytes::from(b.clone()))
            }
            (Literal::Date(s), T::Date32) => Key::Int(self.date_days(s)?),
            (Literal::Date(s), T::Date64) => Key::Int(self.date_days(s)? * 86_400_000),
            (Literal::Date(s), T::Timestamp(unit, tz)) => {
                let nanos = self
                    .date_days(s)?
                    .checked_mul(NANOS_PER_DAY)
                    .ok_or_else(mismatch)?;
                Key::Int(self.to_column_time(nanos, *unit, tz.as_deref())?)
            }
            (Literal::Timestamp(s), T::Timestamp(unit, tz)) => {
                let nanos = string_to_timestamp_nanos(s.trim())
                    .map_err(|e| self.invalid(format!("bad TIMESTAMP literal {s:?}: {e}")))?;
                Key::Int(self.to_column_time(nanos, *unit, tz.as_deref())?)
            }
            _ => return Err(mismatch()),
        };
        Ok(Some(key))
    }

    /// An integer literal that fits the column type (decimals and overflow are refused,
    /// as lance does).
    fn integer(&self, n: &str, t: &DataType) -> Option<Key> {
        let digits = n.strip_prefix('-').unwrap_or(n);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let v: i128 = n.parse().ok()?;
        let (lo, hi): (i128, i128) = match t {
            DataType::Int8 => (i8::MIN as i128, i8::MAX as i128),
            DataType::Int16 => (i16::MIN as i128, i16::MAX as i128),
            DataType::Int32 => (i32::MIN as i128, i32::MAX as i128),
            DataType::Int64 => (i64::MIN as i128, i64::MAX as i128),
            DataType::UInt8 => (0, u8::MAX as i128),
            DataType::UInt16 => (0, u16::MAX as i128),
            DataType::UInt32 => (0, u32::MAX as i128),
            DataType::UInt64 => (0, u64::MAX as i128),
            _ => return None,
        };
        if v < lo || v > hi {
            return None;
        }
        Some(if t.is_unsigned_integer() {
            Key::UInt(v as u64)
        } else {
            Key::Int(v as i64)
        })
    }

    fn date_days(&self, s: &str) -> Result<i64> {
        Date32Type::parse(s.trim())
            .map(|d| d as i64)
            .ok_or_else(|| self.invalid(format!("bad DATE literal {s:?}")))
    }

    /// UTC-normalised naive nanoseconds -> the column's stored integer: read as local time
    /// in the column's zone, then truncated to its unit (what DataFusion's cast does).
    fn to_column_time(&self, naive_nanos: i64, unit: TimeUnit, tz: Option<&str>) -> Result<i64> {
        let offset_secs = match tz {
            None => 0,
            Some(tz) => utc_offset_seconds(tz).ok_or_else(|| {
                Error::unsupported(format!(
                    "filter {:?}: time zone {tz:?} (only UTC and fixed offsets like +08:00 are supported)",
                    self.text
                ))
            })?,
        };
        let utc = naive_nanos
            .checked_sub(offset_secs * 1_000_000_000)
            .ok_or_else(|| self.invalid("timestamp literal out of range"))?;
        Ok(match unit {
            TimeUnit::Second => utc / 1_000_000_000,
            TimeUnit::Millisecond => utc / 1_000_000,
            TimeUnit::Microsecond => utc / 1_000,
            TimeUnit::Nanosecond => utc,
        })
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
