//! Decoded 2.0 values → Arrow arrays of the field's type, every buffer size checked by
//! Arrow's own validation (offsets, UTF-8, lengths) with failures reported as `Corrupt`.

use arrow_array::{make_array, new_null_array, ArrayRef};
use arrow_buffer::{Buffer, NullBuffer};
use arrow_data::ArrayData;
use arrow_schema::DataType;

use super::values::Decoded;
use crate::error::{Error, Result};

/// The Arrow array of `decoded` as `data_type`.
pub(crate) fn to_array(decoded: Decoded, data_type: &DataType) -> Result<ArrayRef> {
    let data = match decoded {
        Decoded::AllNull(len) => return Ok(new_null_array(data_type, len)),
        Decoded::Array(array) => {
            crate::ensure_corrupt!(
                array.data_type() == data_type,
                "dictionary items are {}, the field is {data_type}",
                array.data_type()
            );
            return Ok(array);
        }
        Decoded::Fixed {
            bits,
            len,
            data,
            validity,
        } => {
            let width = fixed_bits(data_type).ok_or_else(|| {
                Error::corrupt(format!("fixed-width values for a {data_type} field"))
            })?;
            crate::ensure_corrupt!(
                width == bits,
                "{bits}-bit values for a {data_type} field ({width} bits)"
            );
            ArrayData::builder(data_type.clone())
                .len(len)
                .add_buffer(data)
                .nulls(validity.map(NullBuffer::new))
                .build()
        }
        Decoded::Variable {
            offsets,
            data,
            validity,
        } => {
            let len = offsets.len().saturating_sub(1);
            let offsets = offsets_buffer(&offsets, data_type)?;
            ArrayData::builder(data_type.clone())
                .len(len)
                .add_buffer(offsets)
                .add_buffer(data)
                .nulls(validity.map(NullBuffer::new))
                .build()
        }
        Decoded::FixedSizeList {
            dimension,
            items,
            validity,
        } => {
            let DataType::FixedSizeList(child, size) = data_type else {
                return Err(Error::corrupt(format!(
                    "fixed-size list values for a {data_type} field"
                )));
            };
            crate::ensure_corrupt!(
                u64::try_from(*size).ok() == Some(dimension),
                "fixed-size lists of {dimension} items for a {data_type} field"
            );
            let len = items.len() / dimension.max(1) as usize;
            let child = to_array(*items, child.data_type())?;
            ArrayData::builder(data_type.clone())
                .len(len)
                .add_child_data(child.to_data())
                .nulls(validity.map(NullBuffer::new))
                .build()
        }
    };
    let data = data
        .map_err(|e| Error::corrupt(format!("decoded values are invalid: {e}")).with_source(e))?;
    Ok(make_array(data))
}

/// Bits per value of a fixed-width Arrow type (1 for booleans).
fn fixed_bits(data_type: &DataType) -> Option<u64> {
    match data_type {
        DataType::Boolean => Some(1),
        DataType::FixedSizeBinary(w) => u64::try_from(*w).ok().map(|w| w * 8),
        other => other.primitive_width().map(|w| w as u64 * 8),
    }
}

fn offsets_buffer(offsets: &[u64], data_type: &DataType) -> Result<Buffer> {
    match data_type {
        DataType::Utf8 | DataType::Binary => {
            let narrow = offsets
                .iter()
                .map(|&o| i32::try_from(o))
                .collect::<std::result::Result<Vec<i32>, _>>()
                .map_err(|_| {
                    Error::corrupt("binary values beyond 2 GiB for a 32-bit-offset type")
                })?;
            Ok(Buffer::from_vec(narrow))
        }
        DataType::LargeUtf8 | DataType::LargeBinary => {
            let wide = offsets
                .iter()
                .map(|&o| i64::try_from(o))
                .collect::<std::result::Result<Vec<i64>, _>>()
                .map_err(|_| Error::corrupt("binary offset beyond i64"))?;
            Ok(Buffer::from_vec(wide))
        }
        other => Err(Error::corrupt(format!(
            "variable-width values for a {other} field"
        ))),
    }
}
