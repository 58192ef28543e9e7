//! Typed, totally ordered key values — the order a Lance BTree sorts its values in — and
//! typed access to the values of an Arrow array as keys.
//!
//! * Signed integers, dates, times, durations and timestamps compare as `i64` (their
//!   stored integers); unsigned integers as `u64`.
//! * Floats compare in IEEE total order (`-NaN < -inf < ... < -0.0 < +0.0 < ... < +inf <
//!   +NaN`), and are equal only when their bits are (NaN == NaN, -0.0 != +0.0), exactly
//!   like lance's index and Arrow's comparison kernels.
//! * Strings and binaries compare as unsigned bytes, a proper prefix first.

use std::cmp::Ordering;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, PrimitiveArray};
use arrow_schema::DataType;
use bytes::Bytes;

use crate::error::{Error, Result};

/// An owned key.
#[derive(Debug, Clone)]
pub(crate) enum Key {
    /// Boolean (false < true).
    Bool(bool),
    /// Signed integer, date, time, duration or timestamp.
    Int(i64),
    /// Unsigned integer.
    UInt(u64),
    /// Float of any width, widened exactly to f64.
    Float(f64),
    /// String (UTF-8 bytes) or binary.
    Bytes(Bytes),
}

/// A borrowed key.
#[derive(Debug, Clone, Copy)]
pub(crate) enum KeyRef<'a> {
    /// Boolean.
    Bool(bool),
    /// Signed integer family.
    Int(i64),
    /// Unsigned integer family.
    UInt(u64),
    /// Float family.
    Float(f64),
    /// Strings and binaries.
    Bytes(&'a [u8]),
}

impl Key {
    /// Borrow.
    pub(crate) fn as_key_ref(&self) -> KeyRef<'_> {
        match self {
            Key::Bool(b) => KeyRef::Bool(*b),
            Key::Int(v) => KeyRef::Int(*v),
            Key::UInt(v) => KeyRef::UInt(*v),
            Key::Float(v) => KeyRef::Float(*v),
            Key::Bytes(b) => KeyRef::Bytes(b),
        }
    }
}

impl KeyRef<'_> {
    fn rank(&self) -> u8 {
        match self {
            KeyRef::Bool(_) => 0,
            KeyRef::Int(_) => 1,
            KeyRef::UInt(_) => 2,
            KeyRef::Float(_) => 3,
            KeyRef::Bytes(_) => 4,
        }
    }

    /// Owned copy.
    pub(crate) fn to_key(self) -> Key {
        match self {
            KeyRef::Bool(b) => Key::Bool(b),
            KeyRef::Int(v) => Key::Int(v),
            KeyRef::UInt(v) => Key::UInt(v),
            KeyRef::Float(v) => Key::Float(v),
            KeyRef::Bytes(b) => Key::Bytes(Bytes::copy_from_slice(b)),
        }
    }
}

impl Ord for KeyRef<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (KeyRef::Bool(a), KeyRef::Bool(b)) => a.cmp(b),
            (KeyRef::Int(a), KeyRef::Int(b)) => a.cmp(b),
            (KeyRef::UInt(a), KeyRef::UInt(b)) => a.cmp(b),
            (KeyRef::Float(a), KeyRef::Float(b)) => a.total_cmp(b),
            (KeyRef::Bytes(a), KeyRef::Bytes(b)) => a.cmp(b),
            // Keys of one column always share a variant; order mixed ones deterministically.
            (a, b) => a.rank().cmp(&b.rank()),
        }
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

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Key::Bool(b) => write!(f, "{b}"),
            Key::Int(v) => write!(f, "{v}"),
            Key::UInt(v) => write!(f, "{v}"),
            Key::Float(v) => write!(f, "{v:?}"),
            Key::Bytes(b) => match std::str::from_utf8(b) {
                Ok(s) => write!(f, "{s:?}"),
                Err(_) => write!(
                    f,
                    "X'{}'",
                    b.iter().map(|x| format!("{x:02x}")).collect::<String>()
                ),
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

/// Typed access to an Arrow array's values as keys (cheap: shares the array's buffers).
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

    /// The key at row `i` (`None` for null). `i` must be `< len()`.
    pub(crate) fn get(&self, i: usize) -> Option<KeyRef<'_>> {
        if self.array().is_null(i) {
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
            KeyColumn::F32(a) => KeyRef::Float(a.value(i) as f64),
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

    #[test]
    fn bytes_order_is_unsigned_with_prefix_first() {
        let k = |b: &'static [u8]| Key::Bytes(Bytes::from_static(b));
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
