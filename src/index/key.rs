//! The one value model of the index layer and the filter engine: typed, totally ordered
//! values ([`Key`], borrowed [`KeyRef`]) and typed access to the values of an Arrow array
//! ([`KeyColumn`]). BTree pages, bitmap and zone map keys, SQL literals, and the row values
//! the one three-valued evaluator ([`crate::index::sql::eval`]) reads in rechecks, scans and
//! `any_element` elements are all this type (`ElementValue` is another name for it).
//!
//! The one order ([`KeyRef::compare`], and [`Ord`] for sorting and searching):
//! * booleans `false < true`;
//! * signed integers, dates, times, durations and timestamps as their stored integers
//!   (`i64`), unsigned integers as `u64`; signed and unsigned compare mathematically;
//! * floats in IEEE 754 total order (`-NaN < -inf < ... < -0.0 < +0.0 < ... < +inf <
//!   +NaN`), equal only when their bits are (NaN == NaN, -0.0 != +0.0), exactly like
//!   lance's index and Arrow's comparison kernels; a `Float32` compares as its exact
//!   widening to f64 (NaN payloads kept), so f32 values keep their own total order;
//! * strings and binaries as unsigned bytes, a proper prefix first.
//!
//! Values of different classes (a string and an integer) do not compare: `compare` says
//! `None` (the evaluator's NULL) and [`Ord`] puts them in class order, so that a list of
//! values of one column always sorts and searches by the order above.

use std::cmp::Ordering;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, PrimitiveArray};
use arrow_schema::DataType;
use bytes::Bytes;

use crate::error::{Error, Result};

/// An owned value: a key of an index, a SQL literal typed for a column, or a row's value.
#[derive(Clone)]
pub(crate) enum Key {
    /// Boolean (false < true).
    Bool(bool),
    /// Signed integer, date, time, duration or timestamp (the stored integer in its unit).
    Int(i64),
    /// Unsigned integer.
    UInt(u64),
    /// A literal typed for a Float32 column (kept narrow for its text and its key encoding).
    Float32(f32),
    /// Float of any width, widened exactly to f64 (column values and index keys).
    Float(f64),
    /// String (UTF-8 bytes) or binary.
    Bytes(Vec<u8>),
}

/// A borrowed value.
#[derive(Debug, Clone, Copy)]
pub(crate) enum KeyRef<'a> {
    /// Boolean.
    Bool(bool),
    /// Signed integer family.
    Int(i64),
    /// Unsigned integer family.
    UInt(u64),
    /// Float32 literal.
    Float32(f32),
    /// Float family.
    Float(f64),
    /// Strings and binaries.
    Bytes(&'a [u8]),
}

/// `f` widened to f64 exactly, NaN payload and quiet bit included (`as f64` may quiet a
/// signalling NaN), so widened values keep f32's total order and bit equality.
pub(crate) fn widen_f32(f: f32) -> f64 {
    if !f.is_nan() {
        return f64::from(f);
    }
    let bits = f.to_bits();
    let sign = u64::from(bits >> 31) << 63;
    let payload = u64::from(bits & 0x007f_ffff) << 29;
    f64::from_bits(sign | 0x7ff0_0000_0000_0000 | payload)
}

impl Key {
    /// Borrow.
    pub(crate) fn as_key_ref(&self) -> KeyRef<'_> {
        match self {
            Key::Bool(b) => KeyRef::Bool(*b),
            Key::Int(v) => KeyRef::Int(*v),
            Key::UInt(v) => KeyRef::UInt(*v),
            Key::Float32(v) => KeyRef::Float32(*v),
            Key::Float(v) => KeyRef::Float(*v),
            Key::Bytes(b) => KeyRef::Bytes(b),
        }
    }

    /// Compare in the one order (module docs); `None` when the two classes do not compare
    /// (e.g. a string with an integer).
    pub(crate) fn compare(&self, other: &Key) -> Option<Ordering> {
        self.as_key_ref().compare(&other.as_key_ref())
    }

    /// Whether this is a float zero (either sign).
    pub(crate) fn is_float_zero(&self) -> bool {
        match self {
            Key::Float32(v) => *v == 0.0,
            Key::Float(v) => *v == 0.0,
            _ => false,
        }
    }

    /// The same kind of float zero with the given sign; other values unchanged.
    pub(crate) fn with_zero_sign(&self, negative: bool) -> Key {
        match self {
            Key::Float32(v) if *v == 0.0 => Key::Float32(if negative { -0.0 } else { 0.0 }),
            Key::Float(v) if *v == 0.0 => Key::Float(if negative { -0.0 } else { 0.0 }),
            other => other.clone(),
        }
    }
}

impl<'a> KeyRef<'a> {
    /// Rank of the value's class: values of one class compare, of two classes do not.
    fn class(&self) -> u8 {
        match self {
            KeyRef::Bool(_) => 0,
            KeyRef::Int(_) | KeyRef::UInt(_) => 1,
            KeyRef::Float32(_) | KeyRef::Float(_) => 2,
            KeyRef::Bytes(_) => 3,
        }
    }

    fn as_f64(&self) -> Option<f64> {
        match self {
            KeyRef::Float32(f) => Some(widen_f32(*f)),
            KeyRef::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// Compare in the one order (module docs); `None` when the classes differ.
    pub(crate) fn compare(&self, other: &KeyRef<'_>) -> Option<Ordering> {
        use KeyRef as K;
        Some(match (*self, *other) {
            (K::Bool(a), K::Bool(b)) => a.cmp(&b),
            (K::Int(a), K::Int(b)) => a.cmp(&b),
            (K::UInt(a), K::UInt(b)) => a.cmp(&b),
            (K::Int(a), K::UInt(b)) => i128::from(a).cmp(&i128::from(b)),
            (K::UInt(a), K::Int(b)) => i128::from(a).cmp(&i128::from(b)),
            (K::Bytes(a), K::Bytes(b)) => a.cmp(b),
            (a, b) => a.as_f64()?.total_cmp(&b.as_f64()?),
        })
    }

    /// Owned copy.
    pub(crate) fn to_key(self) -> Key {
        match self {
            KeyRef::Bool(b) => Key::Bool(b),
            KeyRef::Int(v) => Key::Int(v),
            KeyRef::UInt(v) => Key::UInt(v),
            KeyRef::Float32(v) => Key::Float32(v),
            KeyRef::Float(v) => Key::Float(v),
            KeyRef::Bytes(b) => Key::Bytes(b.to_vec()),
        }
    }
}

impl Ord for KeyRef<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.compare(other)
            .unwrap_or_else(|| self.class().cmp(&other.class()))
    }
}

impl PartialOrd for KeyRef<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for KeyRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for KeyRef<'_> {}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_key_ref().cmp(&other.as_key_ref())
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Key {}

/// Bytes print as a byte string (`Bytes(b"abc")`), as explain shows index searches.
impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Key::Bool(b) => f.debug_tuple("Bool").field(b).finish(),
            Key::Int(v) => f.debug_tuple("Int").field(v).finish(),
            Key::UInt(v) => f.debug_tuple("UInt").field(v).finish(),
            Key::Float32(v) => f.debug_tuple("Float32").field(v).finish(),
            Key::Float(v) => f.debug_tuple("Float").field(v).finish(),
            Key::Bytes(b) => f
                .debug_tuple("Bytes")
                .field(&Bytes::copy_from_slice(b))
                .finish(),
        }
    }
}

/// SQL text: `true`, `7`, `0.5`, `'it''s'`, `X'00FF'`.
impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Key::Bool(b) => write!(f, "{b}"),
            Key::Int(v) => write!(f, "{v}"),
            Key::UInt(v) => write!(f, "{v}"),
            Key::Float32(v) => write!(f, "{v:?}"),
            Key::Float(v) => write!(f, "{v:?}"),
            Key::Bytes(b) => match std::str::from_utf8(b) {
                Ok(s) => write!(f, "'{}'", s.replace('\'', "''")),
                Err(_) => {
                    write!(f, "X'")?;
                    for byte in b {
                        write!(f, "{byte:02X}")?;
                    }
                    write!(f, "'")
                }
            },
        }
    }
}

/// Whether an Arrow type can be a BTree key column here.
pub(crate) fn is_key_type(data_type: &DataType) -> bool {
    use DataType::*;
    matches!(
        data_type,
        Boolean
            | Int8
            | Int16
            | Int32
            | Int64
            | UInt8
            | UInt16
            | UInt32
            | UInt64
            | Float16
            | Float32
            | Float64
            | Date32
            | Date64
            | Timestamp(_, _)
            | Time32(_)
            | Time64(_)
            | Duration(_)
            | Utf8
            | LargeUtf8
            | Utf8View
            | Binary
            | LargeBinary
            | BinaryView
            | FixedSizeBinary(_)
    )
}

/// Typed access to an Arrow array's values (cheap: shares the array's buffers). Floats of
/// every width read as [`KeyRef::Float`].
#[derive(Debug, Clone)]
pub(crate) enum KeyColumn {
    /// Booleans.
    Bool(arrow_array::BooleanArray),
    /// Any signed 8..64-bit integer family array, widened on access.
    I8(PrimitiveArray<Int8Type>),
    /// 16-bit.
    I16(PrimitiveArray<Int16Type>),
    /// 32-bit (also Date32, Time32).
    I32(PrimitiveArray<Int32Type>),
    /// 64-bit (also Date64, Time64, Duration, Timestamp).
    I64(PrimitiveArray<Int64Type>),
    /// Unsigned 8-bit.
    U8(PrimitiveArray<UInt8Type>),
    /// Unsigned 16-bit.
    U16(PrimitiveArray<UInt16Type>),
    /// Unsigned 32-bit.
    U32(PrimitiveArray<UInt32Type>),
    /// Unsigned 64-bit.
    U64(PrimitiveArray<UInt64Type>),
    /// Half floats.
    F16(PrimitiveArray<Float16Type>),
    /// Floats.
    F32(PrimitiveArray<Float32Type>),
    /// Doubles.
    F64(PrimitiveArray<Float64Type>),
    /// Any string or binary array.
    Bytes(ArrayRef),
}

fn reinterpret<F: ArrowPrimitiveType, T: ArrowPrimitiveType<Native = F::Native>>(
    array: &ArrayRef,
) -> PrimitiveArray<T> {
    let a = array.as_primitive::<F>();
    PrimitiveArray::<T>::new(a.values().clone(), a.nulls().cloned())
}

impl KeyColumn {
    /// View `array` as keys. `Unsupported` for types a BTree key cannot have.
    pub(crate) fn new(array: &ArrayRef) -> Result<Self> {
        use arrow_schema::TimeUnit as U;
        use DataType::*;
        Ok(match array.data_type() {
            Boolean => KeyColumn::Bool(array.as_boolean().clone()),
            Int8 => KeyColumn::I8(array.as_primitive::<Int8Type>().clone()),
            Int16 => KeyColumn::I16(array.as_primitive::<Int16Type>().clone()),
            Int32 => KeyColumn::I32(array.as_primitive::<Int32Type>().clone()),
            Int64 => KeyColumn::I64(array.as_primitive::<Int64Type>().clone()),
            UInt8 => KeyColumn::U8(array.as_primitive::<UInt8Type>().clone()),
            UInt16 => KeyColumn::U16(array.as_primitive::<UInt16Type>().clone()),
            UInt32 => KeyColumn::U32(array.as_primitive::<UInt32Type>().clone()),
            UInt64 => KeyColumn::U64(array.as_primitive::<UInt64Type>().clone()),
            Float16 => KeyColumn::F16(array.as_primitive::<Float16Type>().clone()),
            Float32 => KeyColumn::F32(array.as_primitive::<Float32Type>().clone()),
            Float64 => KeyColumn::F64(array.as_primitive::<Float64Type>().clone()),
            Date32 => KeyColumn::I32(reinterpret::<Date32Type, Int32Type>(array)),
            Date64 => KeyColumn::I64(reinterpret::<Date64Type, Int64Type>(array)),
            Time32(U::Second) => KeyColumn::I32(reinterpret::<Time32SecondType, Int32Type>(array)),
            Time32(U::Millisecond) => {
                KeyColumn::I32(reinterpret::<Time32MillisecondType, Int32Type>(array))
            }
            Time64(U::Microsecond) => {
                KeyColumn::I64(reinterpret::<Time64MicrosecondType, Int64Type>(array))
            }
            Time64(U::Nanosecond) => {
                KeyColumn::I64(reinterpret::<Time64NanosecondType, Int64Type>(array))
            }
            Duration(U::Second) => {
                KeyColumn::I64(reinterpret::<DurationSecondType, Int64Type>(array))
            }
            Duration(U::Millisecond) => {
                KeyColumn::I64(reinterpret::<DurationMillisecondType, Int64Type>(array))
            }
            Duration(U::Microsecond) => {
                KeyColumn::I64(reinterpret::<DurationMicrosecondType, Int64Type>(array))
            }
            Duration(U::Nanosecond) => {
                KeyColumn::I64(reinterpret::<DurationNanosecondType, Int64Type>(array))
            }
            Timestamp(U::Second, _) => {
                KeyColumn::I64(reinterpret::<TimestampSecondType, Int64Type>(array))
            }
            Timestamp(U::Millisecond, _) => {
                KeyColumn::I64(reinterpret::<TimestampMillisecondType, Int64Type>(array))
            }
            Timestamp(U::Microsecond, _) => {
                KeyColumn::I64(reinterpret::<TimestampMicrosecondType, Int64Type>(array))
            }
            Timestamp(U::Nanosecond, _) => {
                KeyColumn::I64(reinterpret::<TimestampNanosecondType, Int64Type>(array))
            }
            Utf8 | LargeUtf8 | Utf8View | Binary | LargeBinary | BinaryView
            | FixedSizeBinary(_) => KeyColumn::Bytes(Arc::clone(array)),
            other => return Err(Error::unsupported(format!("key column of type {other}"))),
        })
    }

    /// Number of values.
    pub(crate) fn len(&self) -> usize {
        self.array().len()
    }

    fn array(&self) -> &dyn Array {
        match self {
            KeyColumn::Bool(a) => a,
            KeyColumn::I8(a) => a,
            KeyColumn::I16(a) => a,
            KeyColumn::I32(a) => a,
            KeyColumn::I64(a) => a,
            KeyColumn::U8(a) => a,
            KeyColumn::U16(a) => a,
            KeyColumn::U32(a) => a,
            KeyColumn::U64(a) => a,
            KeyColumn::F16(a) => a,
            KeyColumn::F32(a) => a,
            KeyColumn::F64(a) => a,
            KeyColumn::Bytes(a) => a.as_ref(),
        }
    }

    /// Number of nulls.
    #[cfg(test)]
    pub(crate) fn null_count(&self) -> usize {
        self.array().null_count()
    }

    /// The value at row `i` (`None` for null, or when `i` is out of bounds).
    pub(crate) fn get(&self, i: usize) -> Option<KeyRef<'_>> {
        let array = self.array();
        if i >= array.len() || array.is_null(i) {
            return None;
        }
        Some(match self {
            KeyColumn::Bool(a) => KeyRef::Bool(a.value(i)),
            KeyColumn::I8(a) => KeyRef::Int(a.value(i) as i64),
            KeyColumn::I16(a) => KeyRef::Int(a.value(i) as i64),
            KeyColumn::I32(a) => KeyRef::Int(a.value(i) as i64),
            KeyColumn::I64(a) => KeyRef::Int(a.value(i)),
            KeyColumn::U8(a) => KeyRef::UInt(a.value(i) as u64),
            KeyColumn::U16(a) => KeyRef::UInt(a.value(i) as u64),
            KeyColumn::U32(a) => KeyRef::UInt(a.value(i) as u64),
            KeyColumn::U64(a) => KeyRef::UInt(a.value(i)),
            KeyColumn::F16(a) => KeyRef::Float(a.value(i).to_f64()),
            KeyColumn::F32(a) => KeyRef::Float(widen_f32(a.value(i))),
            KeyColumn::F64(a) => KeyRef::Float(a.value(i)),
            KeyColumn::Bytes(a) => KeyRef::Bytes(bytes_at(a.as_ref(), i)),
        })
    }
}

fn bytes_at(a: &dyn Array, i: usize) -> &[u8] {
    match a.data_type() {
        DataType::Utf8 => a.as_string::<i32>().value(i).as_bytes(),
        DataType::LargeUtf8 => a.as_string::<i64>().value(i).as_bytes(),
        DataType::Utf8View => a.as_string_view().value(i).as_bytes(),
        DataType::Binary => a.as_binary::<i32>().value(i),
        DataType::LargeBinary => a.as_binary::<i64>().value(i),
        DataType::BinaryView => a.as_binary_view().value(i),
        DataType::FixedSizeBinary(_) => a.as_fixed_size_binary().value(i),
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use arrow_array::{Float32Array, StringArray, TimestampMicrosecondArray};

    #[test]
    fn float_total_order_and_bit_equality() {
        let mut v: Vec<Key> = [
            f64::NAN,
            1.0,
            -0.0,
            0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -f64::NAN,
        ]
        .iter()
        .map(|f| Key::Float(*f))
        .collect();
        v.sort();
        let bits: Vec<u64> = v
            .iter()
            .map(|k| match k {
                Key::Float(f) => f.to_bits(),
                _ => 0,
            })
            .collect();
        let want: Vec<u64> = [
            -f64::NAN,
            f64::NEG_INFINITY,
            -0.0,
            0.0,
            1.0,
            f64::INFINITY,
            f64::NAN,
        ]
        .iter()
        .map(|f| f.to_bits())
        .collect();
        assert_eq!(bits, want);
        assert_ne!(Key::Float(0.0), Key::Float(-0.0));
        assert_eq!(Key::Float(f64::NAN), Key::Float(f64::NAN));
    }

    use proptest::prelude::{any, prop_assert_eq, proptest};

    proptest! {
        /// Widening keeps f32's total order and bit equality, NaN payloads included, so a
        /// Float32 literal and a widened f32 column value compare as f32s do.
        #[test]
        fn widening_keeps_the_f32_total_order(a in any::<u32>(), b in any::<u32>()) {
            let (x, y) = (f32::from_bits(a), f32::from_bits(b));
            prop_assert_eq!(widen_f32(x).total_cmp(&widen_f32(y)), x.total_cmp(&y));
            prop_assert_eq!(Key::Float32(x).cmp(&Key::Float(widen_f32(y))), x.total_cmp(&y));
            prop_assert_eq!(widen_f32(x).to_bits() == widen_f32(y).to_bits(), a == b);
        }
    }

    #[test]
    fn classes_that_do_not_compare_are_null_to_the_evaluator() {
        assert_eq!(Key::Int(-1).compare(&Key::UInt(0)), Some(Ordering::Less));
        assert_eq!(
            Key::Float32(0.5).compare(&Key::Float(0.5)),
            Some(Ordering::Equal)
        );
        assert_eq!(Key::Int(1).compare(&Key::Float(1.0)), None);
        assert_eq!(Key::Bool(true).compare(&Key::Int(1)), None);
        assert!(Key::Bool(true) < Key::Int(i64::MIN));
        assert!(Key::UInt(u64::MAX) < Key::Float(f64::NEG_INFINITY));
        assert!(Key::Float(f64::NAN) < Key::Bytes(Vec::new()));
    }

    #[test]
    fn bytes_order_is_unsigned_with_prefix_first() {
        let k = |b: &'static [u8]| Key::Bytes(b.to_vec());
        assert!(k(b"") < k(b"\x00"));
        assert!(k(b"\x00") < k(b"\x00\x00"));
        assert!(k(b"\x7f") < k(b"\x80"));
        assert!(k(b"ab") < k(b"abc"));
    }

    #[test]
    fn columns_expose_keys_and_nulls() {
        let a: ArrayRef = Arc::new(StringArray::from(vec![Some("b"), None, Some("")]));
        let c = KeyColumn::new(&a).unwrap();
        assert_eq!(c.get(0), Some(KeyRef::Bytes(b"b")));
        assert_eq!(c.get(1), None);
        assert_eq!(c.get(2), Some(KeyRef::Bytes(b"")));
        let t: ArrayRef =
            Arc::new(TimestampMicrosecondArray::from(vec![Some(-5), None]).with_timezone("UTC"));
        let c = KeyColumn::new(&t).unwrap();
        assert_eq!(c.get(0), Some(KeyRef::Int(-5)));
        assert_eq!(c.null_count(), 1);
        let f: ArrayRef = Arc::new(Float32Array::from(vec![f32::NAN]));
        assert_eq!(
            KeyColumn::new(&f).unwrap().get(0),
            Some(KeyRef::Float(f64::NAN))
        );
    }
}
