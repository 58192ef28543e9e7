//! `LIST_ELEMENT_KEY_ENCODING_ARROW_ROW_V1` (spec: "Key Encoding").
//!
//! A key tuple is the concatenation of the arrow-row encodings of its keys, each encoded
//! ascending with nulls first. This module encodes with the `arrow-row` crate (pinned to
//! 58 by Cargo.toml); the bytes are pinned independently by golden tests
//! (`tests/suite/list_element_key_encoding.rs`) and by the Python generator's own encoder
//! (`tests/fixtures/list_element/gen_list_element.py`), so an arrow-row change that
//! altered them would be caught.
//!
//! Key types ([`KeyType`]) are the spec's table: bool, int8..int64, uint8..uint64, float,
//! double, date32:day, date64:ms, timestamp:{unit}:{tz}, string, large_string, binary,
//! large_binary, spelled as Lance logical types. A string key accepts Utf8 and Utf8View
//! arrays, a binary key Binary and BinaryView; the large and view variants give the same
//! bytes.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{
    new_null_array, Array, ArrayRef, BinaryArray, BooleanArray, Float32Array, Float64Array,
    Int16Array, Int32Array, Int64Array, Int8Array, LargeBinaryArray, LargeStringArray, StringArray,
    UInt16Array, UInt32Array, UInt64Array, UInt8Array,
};
use arrow_array::{GenericListArray, OffsetSizeTrait, StructArray};
use arrow_buffer::NullBuffer;
use arrow_row::{RowConverter, SortField};
use arrow_schema::{DataType, SortOptions};

use crate::error::{Error, Result};
use crate::index::sql::value::ElementValue;

pub(crate) use crate::index::key_type::KeyType;

impl KeyType {
    /// Value width W of a fixed-width key (`None` for strings and binaries).
    #[cfg(test)]
    pub(crate) fn fixed_width(&self) -> Option<usize> {
        match self {
            KeyType::Bool | KeyType::Int8 | KeyType::UInt8 => Some(1),
            KeyType::Int16 | KeyType::UInt16 => Some(2),
            KeyType::Int32 | KeyType::UInt32 | KeyType::Float32 | KeyType::Date32 => Some(4),
            KeyType::Int64
            | KeyType::UInt64
            | KeyType::Float64
            | KeyType::Date64
            | KeyType::Timestamp { .. } => Some(8),
            KeyType::Utf8 | KeyType::LargeUtf8 | KeyType::Binary | KeyType::LargeBinary => None,
        }
    }

    /// A one-element array of this key type holding `value` (null for `None`).
    /// `InvalidArgument` when the value does not fit the type.
    pub(crate) fn scalar_array(&self, value: Option<&ElementValue>) -> Result<ArrayRef> {
        let data_type = self.arrow_type();
        let Some(value) = value else {
            return Ok(new_null_array(&data_type, 1));
        };
        let mismatch = || {
            Error::InvalidArgument(format!(
                "value {value} does not fit a key of type {}",
                self.logical_type()
            ))
        };
        use ElementValue as V;
        let int = |v: &ElementValue| match v {
            V::Int(i) => Some(i128::from(*i)),
            V::UInt(u) => Some(i128::from(*u)),
            _ => None,
        };
        let array: ArrayRef = match self {
            KeyType::Bool => match value {
                V::Bool(b) => Arc::new(BooleanArray::from(vec![*b])),
                _ => return Err(mismatch()),
            },
            KeyType::Int8 => Arc::new(Int8Array::from(vec![fit::<i8>(int(value), mismatch)?])),
            KeyType::Int16 => Arc::new(Int16Array::from(vec![fit::<i16>(int(value), mismatch)?])),
            KeyType::Int32 | KeyType::Date32 => {
                let array = Int32Array::from(vec![fit::<i32>(int(value), mismatch)?]);
                retype(Arc::new(array), data_type)?
            }
            KeyType::Int64 | KeyType::Date64 | KeyType::Timestamp { .. } => {
                let array = Int64Array::from(vec![fit::<i64>(int(value), mismatch)?]);
                retype(Arc::new(array), data_type)?
            }
            KeyType::UInt8 => Arc::new(UInt8Array::from(vec![fit::<u8>(int(value), mismatch)?])),
            KeyType::UInt16 => Arc::new(UInt16Array::from(vec![fit::<u16>(int(value), mismatch)?])),
            KeyType::UInt32 => Arc::new(UInt32Array::from(vec![fit::<u32>(int(value), mismatch)?])),
            KeyType::UInt64 => Arc::new(UInt64Array::from(vec![fit::<u64>(int(value), mismatch)?])),
            KeyType::Float32 => match value {
                V::Float32(f) => Arc::new(Float32Array::from(vec![*f])),
                _ => return Err(mismatch()),
            },
            KeyType::Float64 => match value {
                V::Float(f) => Arc::new(Float64Array::from(vec![*f])),
                _ => return Err(mismatch()),
            },
            KeyType::Utf8 | KeyType::LargeUtf8 => {
                let V::Bytes(bytes) = value else {
                    return Err(mismatch());
                };
                let text = std::str::from_utf8(bytes).map_err(|_| mismatch())?;
                if *self == KeyType::Utf8 {
                    Arc::new(StringArray::from(vec![text]))
                } else {
                    Arc::new(LargeStringArray::from(vec![text]))
                }
            }
            KeyType::Binary => match value {
                V::Bytes(b) => Arc::new(BinaryArray::from(vec![b.as_slice()])),
                _ => return Err(mismatch()),
            },
            KeyType::LargeBinary => match value {
                V::Bytes(b) => Arc::new(LargeBinaryArray::from(vec![b.as_slice()])),
                _ => return Err(mismatch()),
            },
        };
        Ok(array)
    }
}

fn fit<T: TryFrom<i128>>(value: Option<i128>, mismatch: impl Fn() -> Error) -> Result<T> {
    value.and_then(|v| T::try_from(v).ok()).ok_or_else(mismatch)
}

/// Reinterpret a primitive array as another type with the same physical layout.
fn retype(array: ArrayRef, data_type: DataType) -> Result<ArrayRef> {
    if array.data_type() == &data_type {
        return Ok(array);
    }
    let data = array
        .to_data()
        .into_builder()
        .data_type(data_type)
        .build()?;
    Ok(arrow_array::make_array(data))
}

/// Sort options of every key: ascending, nulls first.
pub(crate) const KEY_SORT_OPTIONS: SortOptions = SortOptions {
    descending: false,
    nulls_first: true,
};

/// Encodes keys and key tuples of one index (its `key_types`, in key order).
pub(crate) struct KeyEncoder {
    key_types: Vec<KeyType>,
    /// One single-field converter per key (keys encode independently; a tuple is the
    /// concatenation).
    converters: Vec<RowConverter>,
}

impl std::fmt::Debug for KeyEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyEncoder")
            .field("key_types", &self.key_types)
            .finish()
    }
}

impl KeyEncoder {
    /// An encoder for these key types (at least one).
    pub(crate) fn new(key_types: Vec<KeyType>) -> Result<Self> {
        if key_types.is_empty() {
            return Err(Error::InvalidArgument(
                "a list element index needs at least one key".into(),
            ));
        }
        let converters = key_types
            .iter()
            .map(|k| {
                let field = SortField::new_with_options(k.arrow_type(), KEY_SORT_OPTIONS);
                RowConverter::new(vec![field]).map_err(Error::from)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(KeyEncoder {
            key_types,
            converters,
        })
    }

    /// The key types, in key order.
    #[cfg(test)]
    pub(crate) fn key_types(&self) -> &[KeyType] {
        &self.key_types
    }

    /// The encoding of one key (`position` in key order); `None` encodes a null.
    pub(crate) fn encode_key(
        &self,
        position: usize,
        value: Option<&ElementValue>,
    ) -> Result<Vec<u8>> {
        let (key_type, converter) = self
            .key_types
            .get(position)
            .zip(self.converters.get(position))
            .ok_or_else(|| Error::InvalidArgument(format!("no key at position {position}")))?;
        let array = key_type.scalar_array(value)?;
        let rows = converter.convert_columns(&[array])?;
        Ok(rows.row(0).data().to_vec())
    }

    /// The encoding of a tuple of the first `values.len()` keys (a prefix of the key
    /// order, or the whole tuple).
    #[cfg(test)]
    pub(crate) fn encode_tuple(&self, values: &[Option<ElementValue>]) -> Result<Vec<u8>> {
        if values.len() > self.key_types.len() {
            return Err(Error::InvalidArgument(format!(
                "{} values for {} keys",
                values.len(),
                self.key_types.len()
            )));
        }
        let mut out = Vec::new();
        for (position, value) in values.iter().enumerate() {
            out.extend(self.encode_key(position, value.as_ref())?);
        }
        Ok(out)
    }

    /// Encode whole key columns (one array per key, equal lengths) into one Binary value
    /// per row. Nulls in the arrays encode as null keys.
    pub(crate) fn encode_columns(&self, columns: &[ArrayRef]) -> Result<BinaryArray> {
        if columns.len() != self.key_types.len() {
            return Err(Error::InvalidArgument(format!(
                "{} key columns for {} keys",
                columns.len(),
                self.key_types.len()
            )));
        }
        let mut fields = Vec::with_capacity(columns.len());
        for (column, key_type) in columns.iter().zip(&self.key_types) {
            if !key_type.accepts(column.data_type()) {
                return Err(Error::InvalidArgument(format!(
                    "key column of type {} for a key of type {key_type}",
                    column.data_type()
                )));
            }
            fields.push(SortField::new_with_options(
                column.data_type().clone(),
                KEY_SORT_OPTIONS,
            ));
        }
        let converter = RowConverter::new(fields)?;
        let rows = converter.convert_columns(columns)?;
        Ok(BinaryArray::from_iter_values(
            rows.iter().map(|r| r.data().to_vec()),
        ))
    }

    /// The index entries of a list<struct> column (spec: "Storage Layout"): one entry per
    /// element, whose value is the element's encoded key tuple (a null element gives a
    /// tuple of null keys); a null list gives one entry with a null value; an empty list
    /// gives none. `key_children` are the positions of the key fields among the element
    /// struct's children, in key order.
    pub(crate) fn encode_entries(
        &self,
        list: &dyn Array,
        key_children: &[usize],
    ) -> Result<ListElementEntries> {
        match list.data_type() {
            DataType::List(_) => self.entries_of(list.as_list::<i32>(), key_children),
            DataType::LargeList(_) => self.entries_of(list.as_list::<i64>(), key_children),
            other => Err(Error::InvalidArgument(format!(
                "list element entries need a List or LargeList of Struct, got {other}"
            ))),
        }
    }

    fn entries_of<O: OffsetSizeTrait>(
        &self,
        list: &GenericListArray<O>,
        key_children: &[usize],
    ) -> Result<ListElementEntries> {
        let elements = list.values().as_struct_opt().ok_or_else(|| {
            Error::InvalidArgument(format!(
                "list element entries need a list of Struct, got a list of {}",
                list.values().data_type()
            ))
        })?;
        let key_columns = logical_key_columns(elements, key_children)?;
        let element_values = self.encode_columns(&key_columns)?;
        let mut values: Vec<Option<&[u8]>> = Vec::new();
        let mut rows = Vec::new();
        let offsets = list.value_offsets();
        for row in 0..list.len() {
            if list.is_null(row) {
                values.push(None);
                rows.push(row);
                continue;
            }
            let (start, end) = (offsets[row].as_usize(), offsets[row + 1].as_usize());
            for element in start..end {
                values.push(Some(element_values.value(element)));
                rows.push(row);
            }
        }
        Ok(ListElementEntries {
            values: BinaryArray::from(values),
            rows,
        })
    }
}

/// The key columns of an element struct with the struct's own validity applied, so that
/// a null element's keys are all null whatever its child slots hold.
fn logical_key_columns(elements: &StructArray, key_children: &[usize]) -> Result<Vec<ArrayRef>> {
    key_children
        .iter()
        .map(|&child| {
            let column = elements.columns().get(child).ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "element struct has {} children, no child {child}",
                    elements.num_columns()
                ))
            })?;
            let Some(element_nulls) = elements.nulls().filter(|n| n.null_count() > 0) else {
                return Ok(Arc::clone(column));
            };
            let nulls = NullBuffer::union(Some(element_nulls), column.logical_nulls().as_ref());
            let data = column.to_data().into_builder().nulls(nulls).build()?;
            Ok(arrow_array::make_array(data))
        })
        .collect()
}

/// Index entries computed from list data (what the target's `page_data.lance` holds
/// before sorting).
#[derive(Debug, Clone)]
pub(crate) struct ListElementEntries {
    /// Encoded key tuples; null for a null list.
    pub values: BinaryArray,
    /// For each entry, the position of its row in the input list array.
    pub rows: Vec<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logical_types_round_trip() {
        for name in [
            "bool",
            "int8",
            "int16",
            "int32",
            "int64",
            "uint8",
            "uint16",
            "uint32",
            "uint64",
            "float",
            "double",
            "date32:day",
            "date64:ms",
            "timestamp:s:-",
            "timestamp:us:UTC",
            "timestamp:ns:+08:00",
            "timestamp:ms:America/New_York",
            "string",
            "large_string",
            "binary",
            "large_binary",
        ] {
            let key = KeyType::from_logical_type(name).unwrap();
            assert_eq!(key.logical_type(), name);
            assert!(key.accepts(&key.arrow_type()), "{name}");
        }
        for bad in [
            "halffloat",
            "decimal:128:10:2",
            "time32:ms",
            "timestamp:xs:-",
            "timestamp:us",
            "timestamp:us:",
            "list.struct",
            "fixed_size_binary:4",
            "",
        ] {
            assert_eq!(KeyType::from_logical_type(bad), None, "{bad}");
        }
    }

    #[test]
    fn view_types_are_accepted_by_their_plain_key() {
        assert!(KeyType::Utf8.accepts(&DataType::Utf8View));
        assert!(KeyType::Binary.accepts(&DataType::BinaryView));
        assert!(!KeyType::LargeUtf8.accepts(&DataType::Utf8));
        assert!(!KeyType::Utf8.accepts(&DataType::Binary));
    }

    #[test]
    fn scalar_values_must_fit() {
        let e = KeyEncoder::new(vec![KeyType::Int8, KeyType::UInt8]).unwrap();
        assert!(e.encode_key(0, Some(&ElementValue::Int(200))).is_err());
        assert!(e.encode_key(1, Some(&ElementValue::Int(-1))).is_err());
        assert!(e.encode_key(0, Some(&ElementValue::Bytes(vec![]))).is_err());
        assert!(e.encode_key(2, None).is_err());
        assert!(KeyEncoder::new(vec![]).is_err());
        assert_eq!(
            e.encode_key(1, Some(&ElementValue::UInt(255))).unwrap(),
            [1, 0xFF]
        );
    }
}
