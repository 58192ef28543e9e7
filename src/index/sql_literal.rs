//! SQL pieces shared by the filter parser ([`predicate`](super::predicate)) and the
//! `any_element` predicate parser ([`list_element`](super::list_element)): comparison
//! operators, untyped literals as written, and time zone offsets of timestamp types.

use sqlparser::ast::{CastKind, DataType as SqlType, Expr, UnaryOperator, Value};

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

/// The literal `expr` spells, or `Ok(None)` when it is not a literal form at all (a column,
/// a function call, a cast to a type no literal has, `-'text'`, ...). A literal form that is
/// malformed (`X'0'`, `DATE 5`, a value kind SQL filters do not take) is an error built by
/// `invalid` from its description, so each parser keeps its own error prefix.
pub fn try_literal(expr: &Expr, invalid: &dyn Fn(String) -> Error) -> Result<Option<Literal>> {
    Ok(Some(match expr {
        Expr::Nested(inner) => return try_literal(inner, invalid),
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => Literal::Number(n.clone()),
            Value::SingleQuotedString(s) => Literal::String(s.clone()),
            Value::HexStringLiteral(h) => Literal::Hex(
                decode_hex(h).ok_or_else(|| invalid(format!("bad hex literal X'{h}'")))?,
            ),
            Value::Boolean(b) => Literal::Bool(*b),
            Value::Null => Literal::Null,
            other => return Err(invalid(format!("literal {other} is not supported"))),
        },
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr: inner,
        } => match try_literal(inner, invalid)? {
            Some(Literal::Number(n)) => Literal::Number(match n.strip_prefix('-') {
                Some(positive) => positive.to_string(),
                None => format!("-{n}"),
            }),
            _ => return Ok(None),
        },
        Expr::TypedString(ts) => {
            let s = match &ts.value.value {
                Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => s.clone(),
                other => return Err(invalid(format!("expected a quoted string, got {other}"))),
            };
            match &ts.data_type {
                SqlType::Date => Literal::Date(s),
                SqlType::Timestamp(_, _) | SqlType::TimestampNtz(_) | SqlType::Datetime(_) => {
                    Literal::Timestamp(s)
                }
                other => return Err(invalid(format!("{other} literals are not supported"))),
            }
        }
        Expr::Cast {
            kind: CastKind::Cast | CastKind::DoubleColon,
            expr: inner,
            data_type,
            ..
        } => {
            let text = match try_literal(inner, invalid)? {
                Some(Literal::String(s) | Literal::Number(s)) => s,
                _ => return Ok(None),
            };
            match data_type {
                SqlType::Double(_)
                | SqlType::DoublePrecision
                | SqlType::Float64
                | SqlType::Float8 => Literal::FloatCast {
                    text,
                    single: false,
                },
                SqlType::Float(_) | SqlType::Real | SqlType::Float32 | SqlType::Float4 => {
                    Literal::FloatCast { text, single: true }
                }
                SqlType::Date => Literal::Date(text),
                SqlType::Timestamp(_, _) => Literal::Timestamp(text),
                _ => return Ok(None),
            }
        }
        _ => return Ok(None),
    }))
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

/// Offset east of UTC in seconds of an Arrow timestamp time zone written "UTC", "Z",
/// "+HH:MM", "-HHMM" or "+HH"; `None` for named zones other than UTC.
pub fn utc_offset_seconds(tz: &str) -> Option<i64> {
    if matches!(tz, "UTC" | "utc" | "Z" | "Etc/UTC" | "+00:00" | "-00:00") {
        return Some(0);
    }
    let (sign, rest) = match tz.as_bytes().first()? {
        b'+' => (1, tz.get(1..)?),
        b'-' => (-1, tz.get(1..)?),
        _ => return None,
    };
    let (h, m) = match rest.len() {
        5 if rest.as_bytes().get(2) == Some(&b':') => (rest.get(0..2)?, rest.get(3..5)?),
        4 => (rest.get(0..2)?, rest.get(2..4)?),
        2 => (rest, "00"),
        _ => return None,
    };
    let number = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| s.parse::<i64>().ok())
            .flatten()
    };
    Some(sign * (number(h)? * 3600 + number(m)? * 60))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_offsets() {
        assert_eq!(utc_offset_seconds("UTC"), Some(0));
        assert_eq!(utc_offset_seconds("+05:30"), Some(19_800));
        assert_eq!(utc_offset_seconds("-0100"), Some(-3_600));
        assert_eq!(utc_offset_seconds("+02"), Some(7_200));
        assert_eq!(utc_offset_seconds("Europe/Paris"), None);
        assert_eq!(utc_offset_seconds("+5:30"), None);
        assert_eq!(utc_offset_seconds("+é"), None);
    }
}
