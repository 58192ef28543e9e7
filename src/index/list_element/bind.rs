//! Typing an [`ElementExpr`] against the element struct's fields: resolve field names,
//! coerce literals to the field's type, and apply lance's signed-zero rewrite.
//!
//! Literal typing is the one lakeseek's top-level filters use (lance 14's, verified with
//! pylance by the BTree work): an integer literal must fit the integer field (`i8 = 200`
//! is an error), a decimal literal never matches an integer field, strings only match
//! string fields, `X'..'` only binary fields, `DATE` literals date and timestamp fields,
//! `TIMESTAMP` literals timestamp fields (normalised to UTC, read as local time in the
//! field's zone — UTC or a fixed offset — and truncated to its unit), float literals are
//! rounded to the field's width. Comparisons of a float field with a zero literal match
//! both zeros: `= 0` becomes `IN (-0.0, +0.0)`, `<`/`>=` use -0.0, `<=`/`>` use +0.0, an
//! IN list with a zero gets both.

use arrow_schema::{DataType, TimeUnit};

use super::expr::{CompareOp, ElementExpr, Literal, Truth};
use super::resolve::ElementField;
use super::value::ElementValue;
use crate::error::{Error, Result};
use crate::index::sql_literal::{coerce_literal, CoerceError, Scalar};

/// A field a bound predicate refers to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BoundField {
    /// Lance field id.
    pub id: i32,
    /// Current name.
    pub name: String,
    /// Arrow type.
    pub data_type: DataType,
}

/// A typed predicate over one element. Field operands are indices into
/// [`BoundElementPredicate::fields`]; `None` values are NULL literals.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ElementPredicate {
    /// `TRUE`, `FALSE` or `NULL`.
    Constant(Option<bool>),
    /// A boolean field used as a predicate.
    BoolField(usize),
    /// `field op value`.
    Compare {
        /// Field.
        field: usize,
        /// Operator.
        op: CompareOp,
        /// Value (`None`: NULL literal).
        value: Option<ElementValue>,
    },
    /// `left op right`, two fields.
    CompareFields {
        /// Left field.
        left: usize,
        /// Operator.
        op: CompareOp,
        /// Right field.
        right: usize,
    },
    /// `field [NOT] IN (values)`.
    InList {
        /// Field.
        field: usize,
        /// Non-null values, sorted and deduplicated.
        values: Vec<ElementValue>,
        /// Whether the list held a NULL.
        has_null: bool,
        /// `NOT IN`.
        negated: bool,
    },
    /// `field IS [NOT] NULL`.
    IsNull {
        /// Field.
        field: usize,
        /// `IS NOT NULL`.
        negated: bool,
    },
    /// `field IS [NOT] DISTINCT FROM value`.
    DistinctFrom {
        /// Field.
        field: usize,
        /// Value (`None`: NULL).
        value: Option<ElementValue>,
        /// `IS NOT DISTINCT FROM`.
        negated: bool,
    },
    /// `left IS [NOT] DISTINCT FROM right`, two fields.
    DistinctFields {
        /// Left field.
        left: usize,
        /// Right field.
        right: usize,
        /// `IS NOT DISTINCT FROM`.
        negated: bool,
    },
    /// `inner IS [NOT] TRUE|FALSE|UNKNOWN`.
    IsTruth {
        /// Tested predicate.
        inner: Box<ElementPredicate>,
        /// Truth value.
        truth: Truth,
        /// `IS NOT`.
        negated: bool,
    },
    /// Conjunction.
    And(Vec<ElementPredicate>),
    /// Disjunction.
    Or(Vec<ElementPredicate>),
    /// Negation.
    Not(Box<ElementPredicate>),
    /// An expression lakeseek keeps as written (function calls, LIKE, arithmetic ...).
    Opaque(String),
}

/// A predicate typed against the element struct.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BoundElementPredicate {
    /// The predicate text.
    pub text: String,
    /// Fields referred to, in first-use order.
    pub fields: Vec<BoundField>,
    /// The predicate.
    pub predicate: ElementPredicate,
}

impl BoundElementPredicate {
    /// Type `expr` (parsed from `text`) against the element fields.
    pub(crate) fn bind(
        text: &str,
        expr: &ElementExpr,
        element_fields: &[ElementField],
    ) -> Result<Self> {
        let mut binder = Binder {
            text,
            element_fields,
            fields: Vec::new(),
        };
        let predicate = binder.predicate(expr)?;
        Ok(BoundElementPredicate {
            text: text.to_string(),
            fields: binder.fields,
            predicate,
        })
    }

    /// Parse and type a predicate string.
    pub(crate) fn parse(text: &str, element_fields: &[ElementField]) -> Result<Self> {
        let expr = super::expr::parse_element_predicate(text)?;
        Self::bind(text, &expr, element_fields)
    }

    /// SQL-like text of a (sub-)predicate, with current field names.
    pub(crate) fn describe(&self, p: &ElementPredicate) -> String {
        describe(p, &self.fields)
    }
}

struct Binder<'a> {
    text: &'a str,
    element_fields: &'a [ElementField],
    fields: Vec<BoundField>,
}

impl Binder<'_> {
    fn invalid(&self, what: impl std::fmt::Display) -> Error {
        Error::InvalidArgument(format!("any_element predicate {:?}: {what}", self.text))
    }

    fn field(&mut self, name: &str) -> Result<usize> {
        if let Some(i) = self.fields.iter().position(|f| f.name == name) {
            return Ok(i);
        }
        let field = self
            .element_fields
            .iter()
            .find(|f| f.name == name)
            .ok_or_else(|| {
                let names: Vec<_> = self
                    .element_fields
                    .iter()
                    .map(|f| f.name.as_str())
                    .collect();
                self.invalid(format!(
                    "the elements have no field {name:?} (fields: {})",
                    names.join(", ")
                ))
            })?;
        let data_type = field.data_type.clone().ok_or_else(|| {
            Error::unsupported(format!(
                "any_element predicate {:?}: element field {name:?} has type {}, which lakeseek cannot filter on",
                self.text, field.logical_type
            ))
        })?;
        self.fields.push(BoundField {
            id: field.id,
            name: name.to_string(),
            data_type,
        });
        Ok(self.fields.len() - 1)
    }

    fn predicate(&mut self, e: &ElementExpr) -> Result<ElementPredicate> {
        use ElementPredicate as P;
        Ok(match e {
            ElementExpr::And(v) => {
                P::And(v.iter().map(|e| self.predicate(e)).collect::<Result<_>>()?)
            }
            ElementExpr::Or(v) => {
                P::Or(v.iter().map(|e| self.predicate(e)).collect::<Result<_>>()?)
            }
            ElementExpr::Not(e) => P::Not(Box::new(self.predicate(e)?)),
            ElementExpr::Opaque(text) => P::Opaque(text.clone()),
            ElementExpr::Field(name) => {
                let f = self.field(name)?;
                if self.fields[f].data_type != DataType::Boolean {
                    return Err(self.invalid(format!(
                        "field {name:?} is not boolean; compare it with a value"
                    )));
                }
                P::BoolField(f)
            }
            ElementExpr::Literal(Literal::Bool(b)) => P::Constant(Some(*b)),
            ElementExpr::Literal(Literal::Null) => P::Constant(None),
            ElementExpr::Literal(other) => {
                return Err(self.invalid(format!("{other} is not a predicate")))
            }
            ElementExpr::Compare { left, op, right } => self.compare(left, *op, right)?,
            ElementExpr::InList {
                expr,
                list,
                negated,
            } => {
                let ElementExpr::Field(name) = expr.as_ref() else {
                    return Ok(P::Opaque(display(e)));
                };
                let f = self.field(name)?;
                let mut values = Vec::with_capacity(list.len());
                let mut has_null = false;
                for item in list {
                    let ElementExpr::Literal(lit) = item else {
                        return Ok(P::Opaque(display(e)));
                    };
                    match self.value(f, lit)? {
                        Some(v) => values.push(v),
                        None => has_null = true,
                    }
                }
                in_list(f, values, has_null, *negated)
            }
            ElementExpr::Between {
                expr,
                low,
                high,
                negated,
            } => {
                let both = P::And(vec![
                    self.compare(expr, CompareOp::GtEq, low)?,
                    self.compare(expr, CompareOp::LtEq, high)?,
                ]);
                if *negated {
                    P::Not(Box::new(both))
                } else {
                    both
                }
            }
            ElementExpr::IsNull { expr, negated } => match expr.as_ref() {
                ElementExpr::Field(name) => P::IsNull {
                    field: self.field(name)?,
                    negated: *negated,
                },
                ElementExpr::Literal(lit) => P::Constant(Some((*lit == Literal::Null) != *negated)),
                ElementExpr::Opaque(_) => P::Opaque(display(e)),
                other => P::IsTruth {
                    inner: Box::new(self.predicate(other)?),
                    truth: Truth::Unknown,
                    negated: *negated,
                },
            },
            ElementExpr::IsTruth {
                expr,
                truth,
                negated,
            } => P::IsTruth {
                inner: Box::new(self.predicate(expr)?),
                truth: *truth,
                negated: *negated,
            },
            ElementExpr::IsDistinctFrom {
                left,
                right,
                negated,
            } => match (left.as_ref(), right.as_ref()) {
                (ElementExpr::Field(a), ElementExpr::Field(b)) => {
                    let (l, r) = (self.field(a)?, self.field(b)?);
                    self.check_comparable(l, r)?;
                    P::DistinctFields {
                        left: l,
                        right: r,
                        negated: *negated,
                    }
                }
                (ElementExpr::Field(name), ElementExpr::Literal(lit))
                | (ElementExpr::Literal(lit), ElementExpr::Field(name)) => {
                    let f = self.field(name)?;
                    P::DistinctFrom {
                        field: f,
                        value: self.value(f, lit)?,
                        negated: *negated,
                    }
                }
                _ => P::Opaque(display(e)),
            },
        })
    }

    fn compare(
        &mut self,
        left: &ElementExpr,
        op: CompareOp,
        right: &ElementExpr,
    ) -> Result<ElementPredicate> {
        use ElementExpr as E;
        match (left, right) {
            (E::Field(a), E::Field(b)) => {
                let (l, r) = (self.field(a)?, self.field(b)?);
                self.check_comparable(l, r)?;
                Ok(ElementPredicate::CompareFields {
                    left: l,
                    op,
                    right: r,
                })
            }
            (E::Field(name), E::Literal(lit)) => {
                let f = self.field(name)?;
                let value = self.value(f, lit)?;
                Ok(compare_value(f, op, value))
            }
            (E::Literal(lit), E::Field(name)) => {
                let f = self.field(name)?;
                let value = self.value(f, lit)?;
                Ok(compare_value(f, op.swapped(), value))
            }
            (E::Literal(_), E::Literal(_)) => {
                Err(self.invalid("a comparison needs at least one element field"))
            }
            _ => Ok(ElementPredicate::Opaque(format!(
                "{} {} {}",
                display(left),
                op.symbol(),
                display(right)
            ))),
        }
    }

    fn check_comparable(&self, l: usize, r: usize) -> Result<()> {
        let (a, b) = (&self.fields[l].data_type, &self.fields[r].data_type);
        if family(a).is_some() && family(a) == family(b) {
            Ok(())
        } else {
            Err(self.invalid(format!(
                "fields {:?} ({a}) and {:?} ({b}) cannot be compared",
                self.fields[l].name, self.fields[r].name
            )))
        }
    }

    /// A literal coerced to field `f`'s type; `None` for NULL.
    fn value(&self, f: usize, lit: &Literal) -> Result<Option<ElementValue>> {
        let field = &self.fields[f];
        let t = &field.data_type;
        let mismatch = || {
            self.invalid(format!(
                "literal {lit} cannot be compared with field {:?} of type {t}",
                field.name
            ))
        };
        // The list element index keys no fixed-size binaries.
        if matches!(t, DataType::FixedSizeBinary(_)) && *lit != Literal::Null {
            return Err(mismatch());
        }
        let scalar = coerce_literal(lit, t).map_err(|e| match e {
            CoerceError::Mismatch => mismatch(),
            CoerceError::Invalid(what) => self.invalid(what),
            CoerceError::UnsupportedZone(tz) => Error::unsupported(format!(
                "any_element predicate {:?}: unknown time zone {tz:?}",
                self.text
            )),
        })?;
        Ok(scalar.map(|s| match s {
            Scalar::Bool(b) => ElementValue::Bool(b),
            Scalar::Int(v) => ElementValue::Int(v),
            Scalar::UInt(v) => ElementValue::UInt(v),
            Scalar::Float(v) => narrow(v, t),
            Scalar::Bytes(b) => ElementValue::Bytes(b),
        }))
    }
}

/// Comparison families: fields of one family can be compared with each other.
fn family(t: &DataType) -> Option<u8> {
    use DataType as T;
    Some(match t {
        T::Boolean => 0,
        t if t.is_integer() => 1,
        t if t.is_floating() => 2,
        T::Utf8 | T::LargeUtf8 | T::Utf8View => 3,
        T::Binary | T::LargeBinary | T::BinaryView => 4,
        T::Date32 => 5,
        T::Date64 => 6,
        T::Timestamp(TimeUnit::Second, _) => 7,
        T::Timestamp(TimeUnit::Millisecond, _) => 8,
        T::Timestamp(TimeUnit::Microsecond, _) => 9,
        T::Timestamp(TimeUnit::Nanosecond, _) => 10,
        _ => return None,
    })
}

fn narrow(v: f64, t: &DataType) -> ElementValue {
    match t {
        DataType::Float32 => ElementValue::Float32(v as f32),
        _ => ElementValue::Float64(v),
    }
}

/// `field op value` with the signed-zero rewrite.
fn compare_value(field: usize, op: CompareOp, value: Option<ElementValue>) -> ElementPredicate {
    match value {
        Some(v) if v.is_float_zero() => match op {
            CompareOp::Eq | CompareOp::NotEq => {
                in_list(field, vec![v], false, op == CompareOp::NotEq)
            }
            CompareOp::Lt | CompareOp::GtEq => ElementPredicate::Compare {
                field,
                op,
                value: Some(v.with_zero_sign(true)),
            },
            CompareOp::LtEq | CompareOp::Gt => ElementPredicate::Compare {
                field,
                op,
                value: Some(v.with_zero_sign(false)),
            },
        },
        value => ElementPredicate::Compare { field, op, value },
    }
}

fn in_list(
    field: usize,
    mut values: Vec<ElementValue>,
    has_null: bool,
    negated: bool,
) -> ElementPredicate {
    if let Some(zero) = values.iter().find(|v| v.is_float_zero()).cloned() {
        values.push(zero.with_zero_sign(true));
        values.push(zero.with_zero_sign(false));
    }
    values.sort_by(|a, b| a.compare(b).unwrap_or(std::cmp::Ordering::Equal));
    values.dedup();
    ElementPredicate::InList {
        field,
        values,
        has_null,
        negated,
    }
}

fn display(e: &ElementExpr) -> String {
    match e {
        ElementExpr::Field(n) => n.clone(),
        ElementExpr::Literal(l) => l.to_string(),
        ElementExpr::Opaque(t) => t.clone(),
        other => format!("{other:?}"),
    }
}

fn value_text(v: &Option<ElementValue>) -> String {
    v.as_ref()
        .map_or_else(|| "NULL".to_string(), ToString::to_string)
}

/// SQL-like text of a bound predicate.
pub(crate) fn describe(p: &ElementPredicate, fields: &[BoundField]) -> String {
    use ElementPredicate as P;
    let name = |i: &usize| fields.get(*i).map_or("?", |f| f.name.as_str()).to_string();
    let not = |n: bool| if n { "NOT " } else { "" };
    let join = |v: &[ElementPredicate], sep: &str| {
        v.iter()
            .map(|p| format!("({})", describe(p, fields)))
            .collect::<Vec<_>>()
            .join(sep)
    };
    match p {
        P::Constant(c) => match c {
            Some(true) => "TRUE".into(),
            Some(false) => "FALSE".into(),
            None => "NULL".into(),
        },
        P::BoolField(f) => name(f),
        P::Compare { field, op, value } => {
            format!("{} {} {}", name(field), op.symbol(), value_text(value))
        }
        P::CompareFields { left, op, right } => {
            format!("{} {} {}", name(left), op.symbol(), name(right))
        }
        P::InList {
            field,
            values,
            has_null,
            negated,
        } => {
            let mut items: Vec<String> = values.iter().map(ToString::to_string).collect();
            if *has_null {
                items.push("NULL".into());
            }
            format!("{} {}IN ({})", name(field), not(*negated), items.join(", "))
        }
        P::IsNull { field, negated } => format!("{} IS {}NULL", name(field), not(*negated)),
        P::DistinctFrom {
            field,
            value,
            negated,
        } => format!(
            "{} IS {}DISTINCT FROM {}",
            name(field),
            not(*negated),
            value_text(value)
        ),
        P::DistinctFields {
            left,
            right,
            negated,
        } => format!(
            "{} IS {}DISTINCT FROM {}",
            name(left),
            not(*negated),
            name(right)
        ),
        P::IsTruth {
            inner,
            truth,
            negated,
        } => {
            let t = match truth {
                Truth::True => "TRUE",
                Truth::False => "FALSE",
                Truth::Unknown => "UNKNOWN",
            };
            format!("({}) IS {}{t}", describe(inner, fields), not(*negated))
        }
        P::And(v) => join(v, " AND "),
        P::Or(v) => join(v, " OR "),
        P::Not(inner) => format!("NOT ({})", describe(inner, fields)),
        P::Opaque(t) => t.clone(),
    }
}

#[cfg(test)]
mod tests;
