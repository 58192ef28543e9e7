//! The values the SQL stack binds and evaluates: the one value model of
//! [`crate::index::key`] (a literal typed for a field, a row's or an element's value), and
//! typed access to the Arrow arrays of list element fields.

use arrow_array::ArrayRef;
use arrow_schema::DataType;

use crate::error::{Error, Result};
pub(crate) use crate::index::key::Key as ElementValue;
use crate::index::key::KeyColumn;

/// Typed access to an element field's array: the scalar families an element predicate
/// binds (booleans, integers, dates, timestamps, Float32/Float64, strings, binaries);
/// `Unsupported` for any other type.
pub(crate) fn scalar_column(array: &ArrayRef) -> Result<KeyColumn> {
    use DataType as T;
    match array.data_type() {
        T::Boolean
        | T::Int8
        | T::Int16
        | T::Int32
        | T::Int64
        | T::Date32
        | T::Date64
        | T::Timestamp(_, _)
        | T::UInt8
        | T::UInt16
        | T::UInt32
        | T::UInt64
        | T::Float32
        | T::Float64
        | T::Utf8
        | T::LargeUtf8
        | T::Utf8View
        | T::Binary
        | T::LargeBinary
        | T::BinaryView => KeyColumn::new(array),
        other => Err(Error::unsupported(format!(
            "list element field of type {other} cannot be read as a scalar"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Ordering;
    use std::sync::Arc;

    use super::*;
    use arrow_array::{Date32Array, Float32Array, StringViewArray, TimestampMillisecondArray};

    fn value(array: ArrayRef, i: usize) -> Option<ElementValue> {
        scalar_column(&array).unwrap().get(i).map(|v| v.to_key())
    }

    #[test]
    fn float_order_is_total_and_bitwise() {
        let neg_zero = ElementValue::Float32(-0.0);
        let pos_zero = ElementValue::Float32(0.0);
        assert_eq!(neg_zero.compare(&pos_zero), Some(Ordering::Less));
        assert_ne!(neg_zero, pos_zero);
        let nan = ElementValue::Float(f64::NAN);
        assert_eq!(nan, nan.clone());
        assert_eq!(
            nan.compare(&ElementValue::Float(f64::INFINITY)),
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
        let f: ArrayRef = Arc::new(Float32Array::from(vec![Some(1.5), None]));
        assert_eq!(value(Arc::clone(&f), 0), Some(ElementValue::Float32(1.5)));
        assert_eq!(value(Arc::clone(&f), 1), None);
        assert_eq!(value(f, 2), None);
        let d: ArrayRef = Arc::new(Date32Array::from(vec![19000]));
        assert_eq!(value(d, 0), Some(ElementValue::Int(19000)));
        let t: ArrayRef = Arc::new(TimestampMillisecondArray::from(vec![-5]).with_timezone("UTC"));
        assert_eq!(value(t, 0), Some(ElementValue::Int(-5)));
        let s: ArrayRef = Arc::new(StringViewArray::from(vec![
            "a long string over twelve bytes",
        ]));
        assert_eq!(
            value(s, 0),
            Some(ElementValue::Bytes(
                b"a long string over twelve bytes".to_vec()
            ))
        );
        let unsupported: ArrayRef = Arc::new(arrow_array::Float16Array::from(vec![half::f16::ONE]));
        assert!(scalar_column(&unsupported).is_err());
    }
}
