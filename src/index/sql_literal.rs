//! SQL pieces shared by the filter parser ([`predicate`](super::predicate)) and the
//! `any_element` predicate parser ([`list_element`](super::list_element)): comparison
//! operators, untyped literals as written, and their coercion to a column's Arrow type
//! ([`coerce_literal`]: integers in range, floats, strings, binaries, dates and timestamps
//! in the column's unit and zone).
//!
//! Timestamp literals follow DataFusion as lance 14.0.2 runs it: the literal is parsed to a
//! UTC instant (a trailing `Z`, offset or IANA zone name is applied; none means UTC), that
//! instant's wall-clock reading is then taken as local time in the column's zone (UTC,
//! a fixed offset or an IANA name such as `America/New_York`, resolved with chrono-tz); a
//! wall-clock time that zone skips or repeats (a DST change) is refused, as pylance refuses
//! it. `DATE` literals are midnight UTC whatever the column's zone.

use arrow_array::timezone::Tz;
use arrow_array::types::Date32Type;
use arrow_cast::parse::{string_to_timestamp_nanos, Parser as _};
use arrow_schema::{DataType, TimeUnit};
use chrono::{DateTime, LocalResult, Offset, TimeZone};
use sqlparser::ast::{CastKind, DataType as SqlType, Expr, UnaryOperator, Value};

use crate::error::{Error, Result};

/// Comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum CompareOp {
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
    pub(crate) fn swapped(self) -> Self {
        match self {
            CompareOp::Lt => CompareOp::Gt,
            CompareOp::LtEq => CompareOp::GtEq,
            CompareOp::Gt => CompareOp::Lt,
            CompareOp::GtEq => CompareOp::LtEq,
            other => other,
        }
    }

    /// SQL spelling.
    pub(crate) fn symbol(self) -> &'static str {
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
pub(crate) enum Literal {
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
pub(crate) fn try_literal(
    expr: &Expr,
    invalid: &dyn Fn(String) -> Error,
) -> Result<Option<Literal>> {
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

/// A literal coerced to a column type, before the caller's own key or value type.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Scalar {
    /// Boolean.
    Bool(bool),
    /// Signed integers; dates (Date32 days, Date64 ms) and timestamps in the column's unit.
    Int(i64),
    /// Unsigned integers.
    UInt(u64),
    /// Floats, as parsed (the caller narrows to the column's width).
    Float(f64),
    /// UTF-8 strings and binaries.
    Bytes(Vec<u8>),
}

/// Why a literal does not coerce.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum CoerceError {
    /// The literal cannot be compared with the type (or does not fit it).
    Mismatch,
    /// The literal is malformed (`DATE 'x'`, `CAST('y' AS DOUBLE)`, out of range).
    Invalid(String),
    /// A time zone other than UTC and fixed offsets.
    UnsupportedZone(String),
}

const NANOS_PER_DAY: i64 = 86_400_000_000_000;

/// Coerce `lit` to column type `t`; `Ok(None)` for `NULL`.
pub(crate) fn coerce_literal(lit: &Literal, t: &DataType) -> Result<Option<Scalar>, CoerceError> {
    use DataType as T;
    Ok(Some(match (lit, t) {
        (Literal::Null, _) => return Ok(None),
        (Literal::Bool(b), T::Boolean) => Scalar::Bool(*b),
        (Literal::Number(n), t) if t.is_integer() => integer(n, t).ok_or(CoerceError::Mismatch)?,
        (Literal::Number(n), t) if t.is_floating() => {
            Scalar::Float(n.parse().map_err(|_| CoerceError::Mismatch)?)
        }
        (Literal::FloatCast { text, single }, t) if t.is_floating() => Scalar::Float(
            if *single {
                text.trim().parse::<f32>().map(f64::from)
            } else {
                text.trim().parse::<f64>()
            }
            .map_err(|_| CoerceError::Invalid(format!("cannot cast {text:?} to a float")))?,
        ),
        (Literal::String(s), T::Utf8 | T::LargeUtf8 | T::Utf8View) => {
            Scalar::Bytes(s.as_bytes().to_vec())
        }
        (Literal::Hex(b), T::Binary | T::LargeBinary | T::BinaryView) => Scalar::Bytes(b.clone()),
        (Literal::Hex(b), T::FixedSizeBinary(n)) if usize::try_from(*n) == Ok(b.len()) => {
            Scalar::Bytes(b.clone())
        }
        (Literal::Date(s), T::Date32) => Scalar::Int(date_days(s)?),
        (Literal::Date(s), T::Date64) => Scalar::Int(
            date_days(s)?
                .checked_mul(86_400_000)
                .ok_or(CoerceError::Mismatch)?,
        ),
        (Literal::Date(s), T::Timestamp(unit, _)) => {
            let nanos = date_days(s)?
                .checked_mul(NANOS_PER_DAY)
                .ok_or(CoerceError::Mismatch)?;
            // Midnight UTC in any zone (DataFusion casts Date32 to the zoned type as is).
            Scalar::Int(stored_time(nanos, *unit, None)?)
        }
        (Literal::Timestamp(s), T::Timestamp(unit, tz)) => {
            let nanos = string_to_timestamp_nanos(s.trim())
                .map_err(|e| CoerceError::Invalid(format!("bad TIMESTAMP literal {s:?}: {e}")))?;
            Scalar::Int(stored_time(nanos, *unit, tz.as_deref())?)
        }
        _ => return Err(CoerceError::Mismatch),
    }))
}

/// An integer literal that fits the column type (decimals and overflow are refused, as
/// lance does).
fn integer(n: &str, t: &DataType) -> Option<Scalar> {
    let digits = n.strip_prefix('-').unwrap_or(n);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let v: i128 = n.parse().ok()?;
    let (lo, hi): (i128, i128) = match t {
        DataType::Int8 => (i8::MIN.into(), i8::MAX.into()),
        DataType::Int16 => (i16::MIN.into(), i16::MAX.into()),
        DataType::Int32 => (i32::MIN.into(), i32::MAX.into()),
        DataType::Int64 => (i64::MIN.into(), i64::MAX.into()),
        DataType::UInt8 => (0, u8::MAX.into()),
        DataType::UInt16 => (0, u16::MAX.into()),
        DataType::UInt32 => (0, u32::MAX.into()),
        DataType::UInt64 => (0, u64::MAX.into()),
        _ => return None,
    };
    if v < lo || v > hi {
        return None;
    }
    Some(if t.is_unsigned_integer() {
        Scalar::UInt(u64::try_from(v).ok()?)
    } else {
        Scalar::Int(i64::try_from(v).ok()?)
    })
}

fn date_days(s: &str) -> Result<i64, CoerceError> {
    Date32Type::parse(s.trim())
        .map(i64::from)
        .ok_or_else(|| CoerceError::Invalid(format!("bad DATE literal {s:?}")))
}

/// UTC-normalised naive nanoseconds -> the column's stored integer: read as local time in
/// the column's zone, then truncated to its unit (what DataFusion's cast does).
fn stored_time(naive_nanos: i64, unit: TimeUnit, tz: Option<&str>) -> Result<i64, CoerceError> {
    let utc = match tz {
        None => naive_nanos,
        Some(tz) => local_to_utc(naive_nanos, tz)?,
    };
    Ok(match unit {
        TimeUnit::Second => utc / 1_000_000_000,
        TimeUnit::Millisecond => utc / 1_000_000,
        TimeUnit::Microsecond => utc / 1_000,
        TimeUnit::Nanosecond => utc,
    })
}

/// The UTC nanoseconds of wall-clock time `local_nanos` (nanoseconds since the epoch of a
/// naive date-time) in zone `tz`; an error when the zone skips or repeats that time.
fn local_to_utc(local_nanos: i64, tz: &str) -> Result<i64, CoerceError> {
    let zone: Tz = tz
        .parse()
        .map_err(|_| CoerceError::UnsupportedZone(tz.to_string()))?;
    let local = DateTime::from_timestamp_nanos(local_nanos).naive_utc();
    let offset = match zone.offset_from_local_datetime(&local) {
        LocalResult::Single(offset) => offset.fix().local_minus_utc(),
        LocalResult::Ambiguous(..) => {
            return Err(CoerceError::Invalid(format!(
                "local time {local} is ambiguous in time zone {tz} (it occurs twice)"
            )))
        }
        LocalResult::None => {
            return Err(CoerceError::Invalid(format!(
                "local time {local} does not exist in time zone {tz}"
            )))
        }
    };
    local_nanos
        .checked_sub(i64::from(offset) * 1_000_000_000)
        .ok_or_else(|| CoerceError::Invalid("timestamp literal out of range".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(lit: &str, tz: &str) -> Result<Option<Scalar>, CoerceError> {
        coerce_literal(
            &Literal::Timestamp(lit.into()),
            &DataType::Timestamp(TimeUnit::Microsecond, Some(tz.into())),
        )
    }

    #[test]
    fn zoned_literals_are_local_time_in_the_column_zone() {
        // 2024-03-10 01:30 EST = 06:30Z; 03:00 EDT = 07:00Z.
        assert_eq!(
            us("2024-03-10 01:30:00", "America/New_York"),
            Ok(Some(Scalar::Int(1_710_052_200_000_000)))
        );
        assert_eq!(
            us("2024-03-10 03:00:00", "America/New_York"),
            Ok(Some(Scalar::Int(1_710_054_000_000_000)))
        );
        assert_eq!(
            us("2024-03-10 01:30:00", "-05:00"),
            us("2024-03-10 01:30:00", "America/New_York")
        );
        assert_eq!(
            us("2024-03-10 06:30:00", "UTC"),
            Ok(Some(Scalar::Int(1_710_052_200_000_000)))
        );
        // A literal with its own zone is first made UTC, then read in the column's zone.
        assert_eq!(
            us("2024-03-10 01:30:00 America/New_York", "UTC"),
            Ok(Some(Scalar::Int(1_710_052_200_000_000)))
        );
        assert_eq!(
            us("2024-03-10 01:30:00-05:00", "UTC"),
            us("2024-03-10 06:30:00Z", "Etc/UTC")
        );
        // Skipped (spring) and repeated (fall) wall-clock times are refused, like pylance.
        assert!(matches!(
            us("2024-03-10 02:30:00", "America/New_York"),
            Err(CoerceError::Invalid(_))
        ));
        assert!(matches!(
            us("2024-11-03 01:30:00", "America/New_York"),
            Err(CoerceError::Invalid(_))
        ));
        assert!(matches!(
            us("2024-01-01 00:00:00", "Mars/Olympus"),
            Err(CoerceError::UnsupportedZone(_))
        ));
        // DATE is midnight UTC in every zone.
        assert_eq!(
            coerce_literal(
                &Literal::Date("2024-03-10".into()),
                &DataType::Timestamp(TimeUnit::Second, Some("-05:00".into()))
            ),
            Ok(Some(Scalar::Int(1_710_028_800)))
        );
    }
}
