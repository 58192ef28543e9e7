//! The inner predicate of `any_element(col, 'predicate')`: SQL text → untyped
//! [`ElementExpr`] over the element's fields (sqlparser, generic dialect).
//!
//! Accepted: comparisons `= != <> < <= > >=` (field or literal on either side), `[NOT] IN
//! (...)`, `[NOT] BETWEEN`, `IS [NOT] NULL`, `IS [NOT] TRUE|FALSE|UNKNOWN`, `IS [NOT]
//! DISTINCT FROM`, `AND`, `OR`, `NOT`, parentheses, bare boolean fields, literals (numbers,
//! `'strings'`, `X'hex'`, `TRUE`/`FALSE`/`NULL`, `DATE '...'`, `TIMESTAMP '...'`,
//! `CAST('NaN' AS DOUBLE)` / `'inf'::real`). Function calls (and `LIKE`, arithmetic, ...)
//! are kept as opaque [`ElementExpr::Opaque`] nodes: the planner treats them as conjuncts
//! the keys cannot answer, and the evaluator reports them as unsupported.

use sqlparser::ast::{BinaryOperator, CastKind, DataType as SqlType, Expr, UnaryOperator, Value};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;

use crate::error::{Error, Result};

/// Comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompareOp {
    /// `=`
    Eq,
    /// `!=` / `<>`
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    LtEq,
    /// `>`
    Gt,
    /// `>=`
    GtEq,
}

impl CompareOp {
    /// The operator with its operands swapped (`5 < x` is `x > 5`).
    pub fn swapped(self) -> Self {
        match self {
            CompareOp::Lt => CompareOp::Gt,
            CompareOp::LtEq => CompareOp::GtEq,
            CompareOp::Gt => CompareOp::Lt,
            CompareOp::GtEq => CompareOp::LtEq,
            other => other,
        }
    }

    /// SQL spelling.
    pub fn symbol(self) -> &'static str {
        match self {
            CompareOp::Eq => "=",
            CompareOp::NotEq => "!=",
            CompareOp::Lt => "<",
            CompareOp::LtEq => "<=",
            CompareOp::Gt => ">",
            CompareOp::GtEq => ">=",
        }
    }
}

/// The truth value tested by `IS [NOT] TRUE|FALSE|UNKNOWN`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Truth {
    /// `IS TRUE`.
    True,
    /// `IS FALSE`.
    False,
    /// `IS UNKNOWN`.
    Unknown,
}

/// An untyped literal as written.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// `NULL`.
    Null,
    /// `TRUE` / `FALSE`.
    Bool(bool),
    /// A number as written, sign included (`-5`, `1.5`, `2.5e-1`).
    Number(String),
    /// `'text'`.
    String(String),
    /// `X'0102'`.
    Hex(Vec<u8>),
    /// `DATE '2024-01-01'`.
    Date(String),
    /// `TIMESTAMP '2024-01-01 00:00:00'`.
    Timestamp(String),
    /// `CAST('NaN' AS DOUBLE)`; `single` for FLOAT/REAL.
    FloatCast {
        /// The text cast.
        text: String,
        /// Cast to float32.
        single: bool,
    },
}

impl std::fmt::Display for Literal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Literal::Null => write!(f, "NULL"),
            Literal::Bool(b) => write!(f, "{}", if *b { "TRUE" } else { "FALSE" }),
            Literal::Number(n) => write!(f, "{n}"),
            Literal::String(s) => write!(f, "'{}'", s.replace('\'', "''")),
            Literal::Hex(b) => {
                write!(f, "X'")?;
                for byte in b {
                    write!(f, "{byte:02X}")?;
                }
                write!(f, "'")
            }
            Literal::Date(s) => write!(f, "DATE '{s}'"),
            Literal::Timestamp(s) => write!(f, "TIMESTAMP '{s}'"),
            Literal::FloatCast { text, single } => {
                let t = if *single { "FLOAT" } else { "DOUBLE" };
                write!(f, "CAST('{text}' AS {t})")
            }
        }
    }
}

/// An untyped predicate over the fields of one list element.
#[derive(Debug, Clone, PartialEq)]
pub enum ElementExpr {
    /// A field of the element, by its current name.
    Field(String),
    /// A literal.
    Literal(Literal),
    /// `left op right`.
    Compare {
        /// Left operand.
        left: Box<ElementExpr>,
        /// Operator.
        op: CompareOp,
        /// Right operand.
        right: Box<ElementExpr>,
    },
    /// `expr [NOT] IN (list)`.
    InList {
        /// Tested expression.
        expr: Box<ElementExpr>,
        /// List.
        list: Vec<ElementExpr>,
        /// `NOT IN`.
        negated: bool,
    },
    /// `expr [NOT] BETWEEN low AND high`.
    Between {
        /// Tested expression.
        expr: Box<ElementExpr>,
        /// Low bound (inclusive).
        low: Box<ElementExpr>,
        /// High bound (inclusive).
        high: Box<ElementExpr>,
        /// `NOT BETWEEN`.
        negated: bool,
    },
    /// `expr IS [NOT] NULL`.
    IsNull {
        /// Tested expression.
        expr: Box<ElementExpr>,
        /// `IS NOT NULL`.
        negated: bool,
    },
    /// `expr IS [NOT] TRUE|FALSE|UNKNOWN`.
    IsTruth {
        /// Tested expression.
        expr: Box<ElementExpr>,
        /// Truth value.
        truth: Truth,
        /// `IS NOT ...`.
        negated: bool,
    },
    /// `left IS [NOT] DISTINCT FROM right`.
    IsDistinctFrom {
        /// Left operand.
        left: Box<ElementExpr>,
        /// Right operand.
        right: Box<ElementExpr>,
        /// `IS NOT DISTINCT FROM`.
        negated: bool,
    },
    /// Conjunction (flattened).
    And(Vec<ElementExpr>),
    /// Disjunction (flattened).
    Or(Vec<ElementExpr>),
    /// Negation.
    Not(Box<ElementExpr>),
    /// A function call or other expression kept as written.
    Opaque(String),
}

fn invalid(text: &str, what: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!("any_element predicate {text:?}: {what}"))
}

/// Parse the predicate string of an `any_element` call.
pub fn parse_element_predicate(text: &str) -> Result<ElementExpr> {
    let dialect = GenericDialect {};
    let mut parser = Parser::new(&dialect)
        .try_with_sql(text)
        .map_err(|e| invalid(text, e))?;
    let expr = parser.parse_expr().map_err(|e| invalid(text, e))?;
    if parser.peek_token().token != Token::EOF {
        return Err(invalid(
            text,
            format!("unexpected {} after the expression", parser.peek_token()),
        ));
    }
    convert(text, &expr)
}

/// Convert a sqlparser expression into an [`ElementExpr`].
pub fn convert(text: &str, expr: &Expr) -> Result<ElementExpr> {
    let boxed = |e: &Expr| convert(text, e).map(Box::new);
    Ok(match expr {
        Expr::Nested(inner) => convert(text, inner)?,
        Expr::Identifier(id) => ElementExpr::Field(id.value.clone()),
        Expr::CompoundIdentifier(ids) => {
            let path: Vec<_> = ids.iter().map(|i| i.value.as_str()).collect();
            return Err(invalid(
                text,
                format!(
                    "{} names a nested path; refer to element fields by their own name",
                    path.join(".")
                ),
            ));
        }
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => flatten(convert(text, left)?, convert(text, right)?, true),
        Expr::BinaryOp {
            left,
            op: BinaryOperator::Or,
            right,
        } => flatten(convert(text, left)?, convert(text, right)?, false),
        Expr::BinaryOp { left, op, right } => {
            let op = match op {
                BinaryOperator::Eq => CompareOp::Eq,
                BinaryOperator::NotEq => CompareOp::NotEq,
                BinaryOperator::Lt => CompareOp::Lt,
                BinaryOperator::LtEq => CompareOp::LtEq,
                BinaryOperator::Gt => CompareOp::Gt,
                BinaryOperator::GtEq => CompareOp::GtEq,
                _ => return Ok(ElementExpr::Opaque(expr.to_string())),
            };
            ElementExpr::Compare {
                left: boxed(left)?,
                op,
                right: boxed(right)?,
            }
        }
        Expr::UnaryOp {
            op: UnaryOperator::Not,
            expr: inner,
        } => ElementExpr::Not(boxed(inner)?),
        Expr::IsNull(e) => ElementExpr::IsNull {
            expr: boxed(e)?,
            negated: false,
        },
        Expr::IsNotNull(e) => ElementExpr::IsNull {
            expr: boxed(e)?,
            negated: true,
        },
        Expr::IsTrue(e) => truth(boxed(e)?, Truth::True, false),
        Expr::IsNotTrue(e) => truth(boxed(e)?, Truth::True, true),
        Expr::IsFalse(e) => truth(boxed(e)?, Truth::False, false),
        Expr::IsNotFalse(e) => truth(boxed(e)?, Truth::False, true),
        Expr::IsUnknown(e) => truth(boxed(e)?, Truth::Unknown, false),
        Expr::IsNotUnknown(e) => truth(boxed(e)?, Truth::Unknown, true),
        Expr::IsDistinctFrom(a, b) => ElementExpr::IsDistinctFrom {
            left: boxed(a)?,
            right: boxed(b)?,
            negated: false,
        },
        Expr::IsNotDistinctFrom(a, b) => ElementExpr::IsDistinctFrom {
            left: boxed(a)?,
            right: boxed(b)?,
            negated: true,
        },
        Expr::InList {
            expr: e,
            list,
            negated,
        } => ElementExpr::InList {
            expr: boxed(e)?,
            list: list
                .iter()
                .map(|e| convert(text, e))
                .collect::<Result<_>>()?,
            negated: *negated,
        },
        Expr::Between {
            expr: e,
            negated,
            low,
            high,
        } => ElementExpr::Between {
            expr: boxed(e)?,
            low: boxed(low)?,
            high: boxed(high)?,
            negated: *negated,
        },
        Expr::Function(_) => ElementExpr::Opaque(expr.to_string()),
        other => match literal(text, other)? {
            Some(lit) => ElementExpr::Literal(lit),
            None => ElementExpr::Opaque(other.to_string()),
        },
    })
}

fn truth(expr: Box<ElementExpr>, truth: Truth, negated: bool) -> ElementExpr {
    ElementExpr::IsTruth {
        expr,
        truth,
        negated,
    }
}

fn flatten(a: ElementExpr, b: ElementExpr, and: bool) -> ElementExpr {
    let mut parts = Vec::new();
    for e in [a, b] {
        match (e, and) {
            (ElementExpr::And(v), true) | (ElementExpr::Or(v), false) => parts.extend(v),
            (e, _) => parts.push(e),
        }
    }
    if and {
        ElementExpr::And(parts)
    } else {
        ElementExpr::Or(parts)
    }
}

/// A literal expression; `Ok(None)` when `expr` is not a literal form at all.
fn literal(text: &str, expr: &Expr) -> Result<Option<Literal>> {
    Ok(Some(match expr {
        Expr::Nested(inner) => return literal(text, inner),
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => Literal::Number(n.clone()),
            Value::SingleQuotedString(s) => Literal::String(s.clone()),
            Value::HexStringLiteral(h) => Literal::Hex(
                decode_hex(h).ok_or_else(|| invalid(text, format!("bad hex literal X'{h}'")))?,
            ),
            Value::Boolean(b) => Literal::Bool(*b),
            Value::Null => Literal::Null,
            other => return Err(invalid(text, format!("literal {other} is not supported"))),
        },
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr: inner,
        } => match literal(text, inner)? {
            Some(Literal::Number(n)) => Literal::Number(match n.strip_prefix('-') {
                Some(positive) => positive.to_string(),
                None => format!("-{n}"),
            }),
            _ => return Ok(None),
        },
        Expr::TypedString(ts) => {
            let s = string_value(text, &ts.value.value)?;
            match &ts.data_type {
                SqlType::Date => Literal::Date(s),
                SqlType::Timestamp(_, _) | SqlType::TimestampNtz(_) | SqlType::Datetime(_) => {
                    Literal::Timestamp(s)
                }
                other => return Err(invalid(text, format!("{other} literals are not supported"))),
            }
        }
        Expr::Cast {
            kind: CastKind::Cast | CastKind::DoubleColon,
            expr: inner,
            data_type,
            ..
        } => {
            let Some(cast) = literal(text, inner)? else {
                return Ok(None);
            };
            let cast_text = match cast {
                Literal::String(s) | Literal::Number(s) => s,
                _ => return Ok(None),
            };
            match data_type {
                SqlType::Double(_)
                | SqlType::DoublePrecision
                | SqlType::Float64
                | SqlType::Float8 => Literal::FloatCast {
                    text: cast_text,
                    single: false,
                },
                SqlType::Float(_) | SqlType::Real | SqlType::Float32 | SqlType::Float4 => {
                    Literal::FloatCast {
                        text: cast_text,
                        single: true,
                    }
                }
                SqlType::Date => Literal::Date(cast_text),
                SqlType::Timestamp(_, _) => Literal::Timestamp(cast_text),
                _ => return Ok(None),
            }
        }
        _ => return Ok(None),
    }))
}

fn string_value(text: &str, v: &Value) -> Result<String> {
    match v {
        Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => Ok(s.clone()),
        other => Err(invalid(
            text,
            format!("expected a quoted string, got {other}"),
        )),
    }
}

fn decode_hex(h: &str) -> Option<Vec<u8>> {
    if !h.len().is_multiple_of(2) {
        return None;
    }
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(h.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(n: &str) -> Box<ElementExpr> {
        Box::new(ElementExpr::Field(n.into()))
    }

    fn lit(l: Literal) -> Box<ElementExpr> {
        Box::new(ElementExpr::Literal(l))
    }

    #[test]
    fn parses_every_form() {
        assert_eq!(
            parse_element_predicate("label = 'car'").unwrap(),
            ElementExpr::Compare {
                left: field("label"),
                op: CompareOp::Eq,
                right: lit(Literal::String("car".into()))
            }
        );
        let ElementExpr::And(parts) =
            parse_element_predicate("a = 1 AND (b > -2.5 AND c IS NOT NULL) AND d").unwrap()
        else {
            panic!()
        };
        assert_eq!(parts.len(), 4);
        assert_eq!(
            parts[1],
            ElementExpr::Compare {
                left: field("b"),
                op: CompareOp::Gt,
                right: lit(Literal::Number("-2.5".into()))
            }
        );
        assert_eq!(parts[3], ElementExpr::Field("d".into()));
        assert_eq!(
            parse_element_predicate("x IS NOT UNKNOWN").unwrap(),
            ElementExpr::IsTruth {
                expr: field("x"),
                truth: Truth::Unknown,
                negated: true
            }
        );
        assert_eq!(
            parse_element_predicate("(a > 1) IS FALSE").unwrap(),
            ElementExpr::IsTruth {
                expr: Box::new(ElementExpr::Compare {
                    left: field("a"),
                    op: CompareOp::Gt,
                    right: lit(Literal::Number("1".into()))
                }),
                truth: Truth::False,
                negated: false
            }
        );
        assert_eq!(
            parse_element_predicate("a IS NOT DISTINCT FROM NULL").unwrap(),
            ElementExpr::IsDistinctFrom {
                left: field("a"),
                right: lit(Literal::Null),
                negated: true
            }
        );
        assert!(matches!(
            parse_element_predicate("a NOT IN (1, NULL)").unwrap(),
            ElementExpr::InList { negated: true, ref list, .. } if list.len() == 2
        ));
        assert!(matches!(
            parse_element_predicate("d BETWEEN DATE '2024-01-01' AND DATE '2024-02-01'").unwrap(),
            ElementExpr::Between { negated: false, .. }
        ));
        assert_eq!(
            parse_element_predicate("f = 'nan'::double").unwrap(),
            ElementExpr::Compare {
                left: field("f"),
                op: CompareOp::Eq,
                right: lit(Literal::FloatCast {
                    text: "nan".into(),
                    single: false
                })
            }
        );
        assert_eq!(
            parse_element_predicate("b = X'00ff'").unwrap(),
            ElementExpr::Compare {
                left: field("b"),
                op: CompareOp::Eq,
                right: lit(Literal::Hex(vec![0, 255]))
            }
        );
        let ElementExpr::Or(parts) = parse_element_predicate("a = 1 OR a = 2 OR NOT b").unwrap()
        else {
            panic!()
        };
        assert_eq!(parts[2], ElementExpr::Not(field("b")));
    }

    #[test]
    fn keeps_functions_and_other_operators_opaque() {
        assert_eq!(
            parse_element_predicate("lower(label) = 'car'").unwrap(),
            ElementExpr::Compare {
                left: Box::new(ElementExpr::Opaque("lower(label)".into())),
                op: CompareOp::Eq,
                right: lit(Literal::String("car".into()))
            }
        );
        assert!(matches!(
            parse_element_predicate("label LIKE 'c%'").unwrap(),
            ElementExpr::Opaque(_)
        ));
        assert!(matches!(
            parse_element_predicate("a + 1 = 2").unwrap(),
            ElementExpr::Compare { left, .. } if matches!(*left, ElementExpr::Opaque(_))
        ));
    }

    #[test]
    fn malformed_predicates_are_invalid_arguments() {
        for bad in [
            "",
            "label =",
            "label = 'car' garbage",
            "a.b = 1",
            "b = X'0'",
            "a = 'x",
        ] {
            assert!(
                matches!(parse_element_predicate(bad), Err(Error::InvalidArgument(_))),
                "{bad}"
            );
        }
    }
}
