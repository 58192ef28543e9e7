//! SQL text -> untyped [`Filter`] tree (sqlparser, generic dialect).

use sqlparser::ast::{BinaryOperator, CastKind, DataType as SqlType, Expr, UnaryOperator, Value};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;

use crate::error::{Error, Result};

/// Comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
}

/// An untyped literal as written.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// `NULL`.
    Null,
    /// `TRUE` / `FALSE`.
    Bool(bool),
    /// A number as written (sign included), e.g. "-5", "1.5", "2.5e-1".
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
            Literal::Hex(b) => write!(
                f,
                "X'{}'",
                b.iter().map(|x| format!("{x:02X}")).collect::<String>()
            ),
            Literal::Date(s) => write!(f, "DATE '{s}'"),
            Literal::Timestamp(s) => write!(f, "TIMESTAMP '{s}'"),
            Literal::FloatCast { text, single } => {
                write!(
                    f,
                    "CAST('{text}' AS {})",
                    if *single { "FLOAT" } else { "DOUBLE" }
                )
            }
        }
    }
}

/// One side of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// A column path.
    Column(String),
    /// A literal.
    Literal(Literal),
}

/// An untyped filter tree.
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    /// Conjunction.
    And(Vec<Filter>),
    /// Disjunction.
    Or(Vec<Filter>),
    /// Negation.
    Not(Box<Filter>),
    /// NULL -> FALSE.
    IsTrue(Box<Filter>),
    /// `left op right`.
    Compare {
        /// Left operand.
        left: Operand,
        /// Operator.
        op: CompareOp,
        /// Right operand.
        right: Operand,
    },
    /// `column [NOT] IN (list)`.
    InList {
        /// Column path.
        column: String,
        /// Values.
        list: Vec<Literal>,
        /// `NOT IN`.
        negated: bool,
    },
    /// `column [NOT] BETWEEN low AND high`.
    Between {
        /// Column path.
        column: String,
        /// Low bound (inclusive).
        low: Literal,
        /// High bound (inclusive).
        high: Literal,
        /// `NOT BETWEEN`.
        negated: bool,
    },
    /// `column IS [NOT] NULL`.
    IsNull {
        /// Column path.
        column: String,
        /// `IS NOT NULL`.
        negated: bool,
    },
    /// A bare boolean column.
    Column(String),
}

fn invalid(text: &str, what: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!("filter {text:?}: {what}"))
}

/// Parse a filter expression.
pub fn parse_filter(text: &str) -> Result<Filter> {
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

fn convert(text: &str, expr: &Expr) -> Result<Filter> {
    match expr {
        Expr::Nested(inner) => convert(text, inner),
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => Ok(flatten(convert(text, left)?, convert(text, right)?, true)),
        Expr::BinaryOp {
            left,
            op: BinaryOperator::Or,
            right,
        } => Ok(flatten(convert(text, left)?, convert(text, right)?, false)),
        Expr::BinaryOp { left, op, right } => {
            let op = match op {
                BinaryOperator::Eq => CompareOp::Eq,
                BinaryOperator::NotEq => CompareOp::NotEq,
                BinaryOperator::Lt => CompareOp::Lt,
                BinaryOperator::LtEq => CompareOp::LtEq,
                BinaryOperator::Gt => CompareOp::Gt,
                BinaryOperator::GtEq => CompareOp::GtEq,
                other => return Err(unsupported(text, format!("operator {other}"))),
            };
            Ok(Filter::Compare {
                left: operand(text, left)?,
                op,
                right: operand(text, right)?,
            })
        }
        Expr::UnaryOp {
            op: UnaryOperator::Not,
            expr,
        } => Ok(Filter::Not(Box::new(convert(text, expr)?))),
        Expr::IsTrue(e) => Ok(Filter::IsTrue(Box::new(convert(text, e)?))),
        Expr::IsNotTrue(e) => Ok(Filter::Not(Box::new(Filter::IsTrue(Box::new(convert(
            text, e,
        )?))))),
        Expr::IsFalse(e) => Ok(Filter::IsTrue(Box::new(Filter::Not(Box::new(convert(
            text, e,
        )?))))),
        Expr::IsNotFalse(e) => Ok(Filter::Not(Box::new(Filter::IsTrue(Box::new(
            Filter::Not(Box::new(convert(text, e)?)),
        ))))),
        Expr::IsNull(e) => Ok(Filter::IsNull {
            column: column(text, e)?,
            negated: false,
        }),
        Expr::IsNotNull(e) => Ok(Filter::IsNull {
            column: column(text, e)?,
            negated: true,
        }),
        Expr::InList {
            expr,
            list,
            negated,
        } => Ok(Filter::InList {
            column: column(text, expr)?,
            list: list
                .iter()
                .map(|e| literal(text, e))
                .collect::<Result<_>>()?,
            negated: *negated,
        }),
        Expr::Between {
            expr,
            negated,
            low,
            high,
        } => Ok(Filter::Between {
            column: column(text, expr)?,
            low: literal(text, low)?,
            high: literal(text, high)?,
            negated: *negated,
        }),
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => {
            Ok(Filter::Column(column(text, expr)?))
        }
        other => Err(unsupported(text, format!("expression {other}"))),
    }
}

fn unsupported(text: &str, what: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!(
        "filter {text:?}: {what} is not supported (use comparisons, IN, BETWEEN, IS NULL, AND, OR, NOT)"
    ))
}

fn flatten(a: Filter, b: Filter, and: bool) -> Filter {
    let mut parts = Vec::new();
    for f in [a, b] {
        match (f, and) {
            (Filter::And(v), true) | (Filter::Or(v), false) => parts.extend(v),
            (f, _) => parts.push(f),
        }
    }
    if and {
        Filter::And(parts)
    } else {
        Filter::Or(parts)
    }
}

fn column(text: &str, expr: &Expr) -> Result<String> {
    match expr {
        Expr::Nested(inner) => column(text, inner),
        Expr::Identifier(id) => Ok(id.value.clone()),
        Expr::CompoundIdentifier(ids) => Ok(ids
            .iter()
            .map(|i| i.value.as_str())
            .collect::<Vec<_>>()
            .join(".")),
        other => Err(unsupported(
            text,
            format!("{other} where a column was expected"),
        )),
    }
}

fn operand(text: &str, expr: &Expr) -> Result<Operand> {
    match expr {
        Expr::Nested(inner) => operand(text, inner),
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => {
            Ok(Operand::Column(column(text, expr)?))
        }
        other => Ok(Operand::Literal(literal(text, other)?)),
    }
}

fn literal(text: &str, expr: &Expr) -> Result<Literal> {
    match expr {
        Expr::Nested(inner) => literal(text, inner),
        Expr::Value(v) => value(text, &v.value),
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => match literal(text, expr)? {
            Literal::Number(n) => Ok(Literal::Number(match n.strip_prefix('-') {
                Some(positive) => positive.to_string(),
                None => format!("-{n}"),
            })),
            other => Err(invalid(text, format!("cannot negate {other}"))),
        },
        Expr::TypedString(ts) => {
            let s = string_value(text, &ts.value.value)?;
            match &ts.data_type {
                SqlType::Date => Ok(Literal::Date(s)),
                SqlType::Timestamp(_, _) | SqlType::TimestampNtz(_) | SqlType::Datetime(_) => {
                    Ok(Literal::Timestamp(s))
                }
                other => Err(unsupported(text, format!("{other} literal"))),
            }
        }
        Expr::Cast {
            kind: CastKind::Cast | CastKind::DoubleColon,
            expr,
            data_type,
            ..
        } => {
            let single = match data_type {
                SqlType::Double(_)
                | SqlType::DoublePrecision
                | SqlType::Float64
                | SqlType::Float8 => false,
                SqlType::Float(_) | SqlType::Real | SqlType::Float32 | SqlType::Float4 => true,
                SqlType::Date => return Ok(Literal::Date(cast_text(text, expr)?)),
                SqlType::Timestamp(_, _) => return Ok(Literal::Timestamp(cast_text(text, expr)?)),
                other => return Err(unsupported(text, format!("CAST to {other}"))),
            };
            Ok(Literal::FloatCast {
                text: cast_text(text, expr)?,
                single,
            })
        }
        other => Err(unsupported(
            text,
            format!("{other} where a literal was expected"),
        )),
    }
}

fn cast_text(text: &str, expr: &Expr) -> Result<String> {
    match literal(text, expr)? {
        Literal::String(s) | Literal::Number(s) => Ok(s),
        other => Err(unsupported(text, format!("CAST of {other}"))),
    }
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

fn value(text: &str, v: &Value) -> Result<Literal> {
    Ok(match v {
        Value::Number(n, _) => Literal::Number(n.clone()),
        Value::SingleQuotedString(s) => Literal::String(s.clone()),
        Value::HexStringLiteral(h) => Literal::Hex(
            decode_hex(h).ok_or_else(|| invalid(text, format!("bad hex literal X'{h}'")))?,
        ),
        Value::Boolean(b) => Literal::Bool(*b),
        Value::Null => Literal::Null,
        other => return Err(unsupported(text, format!("literal {other}"))),
    })
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

    fn col(s: &str) -> Operand {
        Operand::Column(s.into())
    }

    #[test]
    fn parses_the_supported_forms() {
        assert_eq!(
            parse_filter("key = 'abc'").unwrap(),
            Filter::Compare {
                left: col("key"),
                op: CompareOp::Eq,
                right: Operand::Literal(Literal::String("abc".into()))
            }
        );
        assert_eq!(
            parse_filter("5 < i").unwrap(),
            Filter::Compare {
                left: Operand::Literal(Literal::Number("5".into())),
                op: CompareOp::Lt,
                right: col("i")
            }
        );
        assert_eq!(
            parse_filter("i = - 5").unwrap(),
            Filter::Compare {
                left: col("i"),
                op: CompareOp::Eq,
                right: Operand::Literal(Literal::Number("-5".into()))
            }
        );
        assert_eq!(
            parse_filter("b IN (X'0102', x'ff')").unwrap(),
            Filter::InList {
                column: "b".into(),
                list: vec![Literal::Hex(vec![1, 2]), Literal::Hex(vec![255])],
                negated: false
            }
        );
        assert_eq!(
            parse_filter("ts >= TIMESTAMP '2024-01-01 00:00:00'").unwrap(),
            Filter::Compare {
                left: col("ts"),
                op: CompareOp::GtEq,
                right: Operand::Literal(Literal::Timestamp("2024-01-01 00:00:00".into()))
            }
        );
        assert_eq!(
            parse_filter("d NOT BETWEEN DATE '2024-01-01' AND DATE '2024-02-01'").unwrap(),
            Filter::Between {
                column: "d".into(),
                low: Literal::Date("2024-01-01".into()),
                high: Literal::Date("2024-02-01".into()),
                negated: true
            }
        );
        assert_eq!(
            parse_filter("f = CAST('NaN' AS DOUBLE)").unwrap(),
            Filter::Compare {
                left: col("f"),
                op: CompareOp::Eq,
                right: Operand::Literal(Literal::FloatCast {
                    text: "NaN".into(),
                    single: false
                })
            }
        );
        assert_eq!(
            parse_filter("f = 'inf'::real").unwrap(),
            Filter::Compare {
                left: col("f"),
                op: CompareOp::Eq,
                right: Operand::Literal(Literal::FloatCast {
                    text: "inf".into(),
                    single: true
                })
            }
        );
        let Filter::Or(parts) = parse_filter("i = 1 OR i = 2 OR i IS NULL").unwrap() else {
            panic!()
        };
        assert_eq!(parts.len(), 3);
        assert!(
            matches!(parse_filter("NOT (i < 5) AND bl").unwrap(), Filter::And(v) if v.len() == 2)
        );
        assert_eq!(
            parse_filter("s = 'it''s'").unwrap(),
            Filter::Compare {
                left: col("s"),
                op: CompareOp::Eq,
                right: Operand::Literal(Literal::String("it's".into()))
            }
        );
    }

    #[test]
    fn rejects_what_it_cannot_answer() {
        for bad in [
            "i = ",
            "i = 1 garbage",
            "upper(s) = 'A'",
            "i + 1 = 2",
            "s LIKE 'a%'",
            "i = j + 1",
            "X'0'= b",
            "",
        ] {
            assert!(
                matches!(parse_filter(bad), Err(Error::InvalidArgument(_))),
                "{bad}"
            );
        }
    }
}
