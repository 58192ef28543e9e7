//! Values of the scalar fields of a list element, and typed access to Arrow arrays.
//!
//! Order (the order the key encoding preserves, and the order predicates compare in):
//! * booleans `false < true`;
//! * signed integers, dates and timestamps as their stored integers; unsigned integers
//!   as unsigned; signed and unsigned compare mathematically;
//! * floats in IEEE 754 total order (`-NaN < -inf < ... < -0.0 < +0.0 < ... < +inf <
//!   +NaN`), equal only when their bits are — Arrow's comparison kernels and lance's BTree
//!   do the same (the literal rewrite for zero lives in the binder);
//! * strings and binaries as unsigned bytes, a proper prefix first.

use std::cmp::Ordering;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, BooleanArray, PrimitiveArray};
use arrow_schema::DataType;

use crate::error::{Error, Result};

/// A non-null value of one scalar field of a list element, or a literal coerced to a
/// field's type.
#[derive(Debug, Clone)]
pub(crate) enum ElementValue {
    /// Boolean.
    Bool(bool),
    /// Int8..Int64, Date32 (days), Date64 (ms), Timestamp (stored integer in its unit).
    Int(i64),
    /// UInt8..UInt64.
    UInt(u64),
    /// Float32.
    Float32(f32),
    /// Float64.
    Float64(f64),
    /// Strings (UTF-8 bytes) and binaries.
    Bytes(Vec<u8>),
}

impl ElementValue {
    /// Compare two values in the order described in the module docs; `None` when the two
    /// kinds cannot be compared (e.g. a string with an integer).
    pub(crate) fn compare(&self, other: &ElementValue) -> Option<Ordering> {
        use ElementValue as V;
        Some(match (self, other) {
            (V::Bool(a), V::Bool(b)) => a.cmp(b),
            (V::Int(a), V::Int(b)) => a.cmp(b),
            (V::UInt(a), V::UInt(b)) => a.cmp(b),
            (V::Int(a), V::UInt(b)) => i128::from(*a).cmp(&i128::from(*b)),
            (V::UInt(a), V::Int(b)) => i128::from(*a).cmp(&i128::from(*b)),
            (V::Float32(a), V::Float32(b)) => a.total_cmp(b),
            (V::Float64(a), V::Float64(b)) => a.total_cmp(b),
            (V::Float32(a), V::Float64(b)) => f64::from(*a).total_cmp(b),
            (V::Float64(a), V::Float32(b)) => a.total_cmp(&f64::from(*b)),
            (V::Bytes(a), V::Bytes(b)) => a.as_slice().cmp(b.as_slice()),
            _ => return None,
        })
    }

    /// Whether this is a float zero (either sign).
    pub(crate) fn is_float_zero(&self) -> bool {
        match self {
            ElementValue::Float32(v) => *v == 0.0,
            ElementValue::Float64(v) => *v == 0.0,
            _ => false,
        }
    }

    /// The same kind of float zero with the given sign; other values unchanged.
    pub(crate) fn with_zero_sign(&self, negative: bool) -> ElementValue {
        match self {
            ElementValue::Float32(v) if *v == 0.0 => {
                ElementValue::Float32(if negative { -0.0 } else { 0.0 })
            }
            ElementValue::Float64(v) if *v == 0.0 => {
                ElementValue::Float64(if negative { -0.0 } else { 0.0 })
            }
            other => other.clone(),
        }
    }
}

impl PartialEq for ElementValue {
    fn eq(&self, other: &Self) -> bool {
        self.compare(other) == Some(Ordering::Equal)
    }
}

impl std::fmt::Display for ElementValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ElementValue::Bool(b) => write!(f, "{b}"),
            ElementValue::Int(v) => write!(f, "{v}"),
            ElementValue::UInt(v) => write!(f, "{v}"),
            ElementValue::Float32(v) => write!(f, "{v:?}"),
            ElementValue::Float64(v) => write!(f, "{v:?}"),
            ElementValue::Bytes(b) => match std::str::from_utf8(b) {
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

/// Typed, downcast-once access to the values of a scalar Arrow array.
pub(crate) enum FieldColumn<'a> {
    /// Boolean.
    Bool(&'a BooleanArray),
    /// Any signed integer family array, widened to i64.
    Int(IntColumn<'a>),
    /// Any unsigned integer array, widened to u64.
    UInt(UIntColumn<'a>),
    /// Float32.
    Float32(&'a PrimitiveArray<Float32Type>),
    /// Float64.
    Float64(&'a PrimitiveArray<Float64Type>),
    /// Strings and binaries.
    Bytes(BytesColumn<'a>),
}

/// Signed integer family arrays.
pub(crate) enum IntColumn<'a> {
    /// Int8.
    I8(&'a PrimitiveArray<Int8Type>),
    /// Int16.
    I16(&'a PrimitiveArray<Int16Type>),
    /// Int32 or Date32.
    I32(&'a dyn Array),
    /// Int64, Date64 or Timestamp.
    I64(&'a dyn Array),
}

/// Unsigned integer arrays.
pub(crate) enum UIntColumn<'a> {
    /// UInt8.
    U8(&'a PrimitiveArray<UInt8Type>),
    /// UInt16.
    U16(&'a PrimitiveArray<UInt16Type>),
    /// UInt32.
    U32(&'a PrimitiveArray<UInt32Type>),
    /// UInt64.
    U64(&'a PrimitiveArray<UInt64Type>),
}

/// String and binary arrays.
pub(crate) enum BytesColumn<'a> {
    /// Utf8.
    Utf8(&'a arrow_array::StringArray),
    /// LargeUtf8.
    LargeUtf8(&'a arrow_array::LargeStringArray),
    /// Utf8View.
    Utf8View(&'a arrow_array::StringViewArray),
    /// Binary.
    Binary(&'a arrow_array::BinaryArray),
    /// LargeBinary.
    LargeBinary(&'a arrow_array::LargeBinaryArray),
    /// BinaryView.
    BinaryView(&'a arrow_array::BinaryViewArray),
}

impl<'a> FieldColumn<'a> {
    /// Downcast `array`; `Unsupported` for types outside [`is_scalar_field_type`].
    pub(crate) fn new(array: &'a dyn Array) -> Result<Self> {
        use DataType as T;
        Ok(match array.data_type() {
            T::Boolean => FieldColumn::Bool(array.as_boolean()),
            T::Int8 => FieldColumn::Int(IntColumn::I8(array.as_primitive())),
            T::Int16 => FieldColumn::Int(IntColumn::I16(array.as_primitive())),
            T::Int32 | T::Date32 => FieldColumn::Int(IntColumn::I32(array)),
            T::Int64 | T::Date64 | T::Timestamp(_, _) => FieldColumn::Int(IntColumn::I64(array)),
            T::UInt8 => FieldColumn::UInt(UIntColumn::U8(array.as_primitive())),
            T::UInt16 => FieldColumn::UInt(UIntColumn::U16(array.as_primitive())),
            T::UInt32 => FieldColumn::UInt(UIntColumn::U32(array.as_primitive())),
            T::UInt64 => FieldColumn::UInt(UIntColumn::U64(array.as_primitive())),
            T::Float32 => FieldColumn::Float32(array.as_primitive()),
            T::Float64 => FieldColumn::Float64(array.as_primitive()),
            T::Utf8 => FieldColumn::Bytes(BytesColumn::Utf8(array.as_string())),
            T::LargeUtf8 => FieldColumn::Bytes(BytesColumn::LargeUtf8(array.as_string())),
            T::Utf8View => FieldColumn::Bytes(BytesColumn::Utf8View(array.as_string_view())),
            T::Binary => FieldColumn::Bytes(BytesColumn::Binary(array.as_binary())),
            T::LargeBinary => FieldColumn::Bytes(BytesColumn::LargeBinary(array.as_binary())),
            T::BinaryView => FieldColumn::Bytes(BytesColumn::BinaryView(array.as_binary_view())),
            other => {
                return Err(Error::unsupported(format!(
                    "list element field of type {other} cannot be read as a scalar"
                )))
            }
        })
    }

    fn array(&self) -> &dyn Array {
        match self {
            FieldColumn::Bool(a) => *a,
            FieldColumn::Int(IntColumn::I8(a)) => *a,
            FieldColumn::Int(IntColumn::I16(a)) => *a,
            FieldColumn::Int(IntColumn::I32(a)) | FieldColumn::Int(IntColumn::I64(a)) => *a,
            FieldColumn::UInt(UIntColumn::U8(a)) => *a,
            FieldColumn::UInt(UIntColumn::U16(a)) => *a,
            FieldColumn::UInt(UIntColumn::U32(a)) => *a,
            FieldColumn::UInt(UIntColumn::U64(a)) => *a,
            FieldColumn::Float32(a) => *a,
            FieldColumn::Float64(a) => *a,
            FieldColumn::Bytes(b) => match b {
                BytesColumn::Utf8(a) => *a,
                BytesColumn::LargeUtf8(a) => *a,
                BytesColumn::Utf8View(a) => *a,
                BytesColumn::Binary(a) => *a,
                BytesColumn::LargeBinary(a) => *a,
                BytesColumn::BinaryView(a) => *a,
            },
        }
    }

    /// The value at `index` (`None` when null or out of bounds).
    pub(crate) fn value(&self, index: usize) -> Option<ElementValue> {
        let array = self.array();
        if index >= array.len() || array.is_null(index) {
            return None;
        }
        Some(match self {
            FieldColumn::Bool(a) => ElementValue::Bool(a.value(index)),
            FieldColumn::Int(c) => ElementValue::Int(match c {
                IntColumn::I8(a) => i64::from(a.value(index)),
                IntColumn::I16(a) => i64::from(a.value(index)),
                IntColumn::I32(a) => i64::from(i32_value(*a, index)?),
                IntColumn::I64(a) => i64_value(*a, index)?,
            }),
            FieldColumn::UInt(c) => ElementValue::UInt(match c {
                UIntColumn::U8(a) => u64::from(a.value(index)),
                UIntColumn::U16(a) => u64::from(a.value(index)),
                UIntColumn::U32(a) => u64::from(a.value(index)),
                UIntColumn::U64(a) => a.value(index),
            }),
            FieldColumn::Float32(a) => ElementValue::Float32(a.value(index)),
            FieldColumn::Float64(a) => ElementValue::Float64(a.value(index)),
            FieldColumn::Bytes(b) => ElementValue::Bytes(match b {
                BytesColumn::Utf8(a) => a.value(index).as_bytes().to_vec(),
                BytesColumn::LargeUtf8(a) => a.value(index).as_bytes().to_vec(),
                BytesColumn::Utf8View(a) => a.value(index).as_bytes().to_vec(),
                BytesColumn::Binary(a) => a.value(index).to_vec(),
                BytesColumn::LargeBinary(a) => a.value(index).to_vec(),
                BytesColumn::BinaryView(a) => a.value(index).to_vec(),
            }),
        })
    }
}

/// The i32 stored in an Int32 or Date32 array.
fn i32_value(array: &dyn Array, index: usize) -> Option<i32> {
    match array.data_type() {
        DataType::Int32 => Some(array.as_primitive::<Int32Type>().value(index)),
        DataType::Date32 => Some(array.as_primitive::<Date32Type>().value(index)),
        _ => None,
    }
}

/// The i64 stored in an Int64, Date64 or Timestamp array.
fn i64_value(array: &dyn Array, index: usize) -> Option<i64> {
    use arrow_schema::TimeUnit as U;
    match array.data_type() {
        DataType::Int64 => Some(array.as_primitive::<Int64Type>().value(index)),
        DataType::Date64 => Some(array.as_primitive::<Date64Type>().value(index)),
        DataType::Timestamp(U::Second, _) => {
            Some(array.as_primitive::<TimestampSecondType>().value(index))
        }
        DataType::Timestamp(U::Millisecond, _) => Some(
            array
                .as_primitive::<TimestampMillisecondType>()
                .value(index),
        ),
        DataType::Timestamp(U::Microsecond, _) => Some(
            array
                .as_primitive::<TimestampMicrosecondType>()
                .value(index),
        ),
        DataType::Timestamp(U::Nanosecond, _) => {
            Some(array.as_primitive::<TimestampNanosecondType>().value(index))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Date32Array, Float32Array, StringViewArray, TimestampMillisecondArray};

    #[test]
    fn float_order_is_total_and_bitwise() {
        let neg_zero = ElementValue::Float32(-0.0);
        let pos_zero = ElementValue::Float32(0.0);
        assert_eq!(neg_zero.compare(&pos_zero), Some(Ordering::Less));
        assert_ne!(neg_zero, pos_zero);
        let nan = ElementValue::Float64(f64::NAN);
        assert_eq!(nan, nan.clone());
        assert_eq!(
            nan.compare(&ElementValue::Float64(f64::INFINITY)),
            Some(Ordering::Greater)
        );
    }

    #[test]
    fn signed_and_unsigned_compare_mathematically() {
        assert_eq!(
            ElementValue::Int(-1).compare(&ElementValue::UInt(u64::MAX)),
            Some(Ordering::Less)
        );
        assert_eq!(ElementValue::Int(5), ElementValue::UInt(5));
        assert_eq!(
            ElementValue::Int(1).compare(&ElementValue::Bytes(vec![1])),
            None
        );
    }

    #[test]
    fn field_column_reads_every_family() {
        let f = Float32Array::from(vec![Some(1.5), None]);
        let c = FieldColumn::new(&f).unwrap();
        assert_eq!(c.value(0), Some(ElementValue::Float32(1.5)));
        assert_eq!(c.value(1), None);
        assert_eq!(c.value(2), None);
        let d = Date32Array::from(vec![19000]);
        assert_eq!(
            FieldColumn::new(&d).unwrap().value(0),
            Some(ElementValue::Int(19000))
        );
        let t = TimestampMillisecondArray::from(vec![-5]).with_timezone("UTC");
        assert_eq!(
            FieldColumn::new(&t).unwrap().value(0),
            Some(ElementValue::Int(-5))
        );
        let s = StringViewArray::from(vec!["a long string over twelve bytes"]);
        assert_eq!(
            FieldColumn::new(&s).unwrap().value(0),
            Some(ElementValue::Bytes(
                b"a long string over twelve bytes".to_vec()
            ))
        );
        let unsupported = arrow_array::Float16Array::from(vec![half::f16::ONE]);
        assert!(FieldColumn::new(&unsupported).is_err());
    }
}
