//! [`LeafBuilder`]: turns decoded values (slices of chunks, dictionaries, scalars) into one
//! Arrow array of a leaf type, checking every decoded width and count against the type.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::{make_array, ArrayRef};
use arrow_buffer::{BooleanBufferBuilder, Buffer, MutableBuffer, NullBuffer};
use arrow_data::ArrayDataBuilder;
use arrow_schema::DataType;

use crate::error::{Error, Result};
use crate::lance::compression::DecodedValues;

/// Accumulates the values and validity of one leaf column.
#[derive(Debug)]
pub struct LeafBuilder {
    data_type: DataType,
    storage: Storage,
    /// Created on the first null; `None` means all valid so far.
    validity: Option<BooleanBufferBuilder>,
    len: usize,
}

#[derive(Debug)]
enum Storage {
    /// `DataType::Null`: only a length.
    Null,
    /// `Boolean`: a bitmap.
    Bits(BooleanBufferBuilder),
    /// Byte-aligned fixed width (primitives, decimals, fixed-size binary). A
    /// `MutableBuffer` keeps the 64-byte alignment Arrow checks even when empty.
    Bytes { width: usize, data: MutableBuffer },
    /// Offsets + bytes (Utf8, Binary and their large forms).
    Variable { offsets: Vec<u64>, data: Vec<u8> },
    /// Fixed-size list of a fixed-width item.
    List {
        dimension: usize,
        items: Box<LeafBuilder>,
    },
}

fn fixed_width_bytes(data_type: &DataType) -> Option<usize> {
    match data_type {
        DataType::FixedSizeBinary(n) => usize::try_from(*n).ok(),
        other => other.primitive_width(),
    }
}

impl LeafBuilder {
    /// A builder for `data_type`, or `Unsupported` for types that are not flat leaves.
    pub fn new(data_type: &DataType) -> Result<Self> {
        let storage = match data_type {
            DataType::Null => Storage::Null,
            DataType::Boolean => Storage::Bits(BooleanBufferBuilder::new(0)),
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary => {
                Storage::Variable {
                    offsets: vec![0],
                    data: Vec::new(),
                }
            }
            DataType::FixedSizeList(item, n) => {
                let dimension = usize::try_from(*n)
                    .map_err(|_| Error::corrupt(format!("fixed-size list of size {n}")))?;
                let items = LeafBuilder::new(item.data_type())?;
                if matches!(
                    items.storage,
                    Storage::List { .. } | Storage::Variable { .. }
                ) {
                    return Err(Error::unsupported(format!(
                        "fixed-size list of {}",
                        item.data_type()
                    )));
                }
                Storage::List {
                    dimension,
                    items: Box::new(items),
                }
            }
            other => match fixed_width_bytes(other) {
                Some(width) if width > 0 => Storage::Bytes {
                    width,
                    data: MutableBuffer::new(0),
                },
                _ => {
                    return Err(Error::unsupported(format!(
                        "reading columns of type {other}"
                    )))
                }
            },
        };
        Ok(Self {
            data_type: data_type.clone(),
            storage,
            validity: None,
            len: 0,
        })
    }

    /// Rows pushed so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing was pushed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The target type.
    pub fn data_type(&self) -> &DataType {
        &self.data_type
    }

    /// Bits one value of this type decodes to (fixed-width types only).
    fn value_bits(&self) -> Option<u64> {
        match &self.storage {
            Storage::Bits(_) => Some(1),
            Storage::Bytes { width, .. } => Some(*width as u64 * 8),
            Storage::List { dimension, items } => items.value_bits().map(|b| b * *dimension as u64),
            Storage::Null | Storage::Variable { .. } => None,
        }
    }

    fn push_validity(&mut self, validity: Option<&[bool]>, count: usize) -> Result<()> {
        match validity {
            Some(v) => {
                crate::ensure_corrupt!(
                    v.len() == count,
                    "validity of {} entries for {count} values",
                    v.len()
                );
                if self.validity.is_none() && v.iter().all(|b| *b) {
                    return Ok(());
                }
                let builder = self.validity_builder();
                for &b in v {
                    builder.append(b);
                }
            }
            None => {
                if let Some(b) = self.validity.as_mut() {
                    b.append_n(count, true);
                }
            }
        }
        Ok(())
    }

    fn validity_builder(&mut self) -> &mut BooleanBufferBuilder {
        let len = self.len;
        self.validity.get_or_insert_with(|| {
            let mut b = BooleanBufferBuilder::new(len.max(64));
            b.append_n(len, true);
            b
        })
    }

    /// Append values `range` of `values` with optional per-value validity
    /// (`validity.len() == range.len()`).
    pub fn push_values(
        &mut self,
        values: &DecodedValues,
        range: Range<usize>,
        validity: Option<&[bool]>,
    ) -> Result<()> {
        let count = range.len();
        if let DecodedValues::Fixed {
            bits_per_value: 0,
            num_values,
            ..
        } = values
        {
            // A constant without a scalar: every value is null.
            crate::ensure_corrupt!(
                range.end <= *num_values,
                "value range {range:?} outside {num_values} null values"
            );
            return self.push_nulls(count);
        }
        self.push_storage(values, range)?;
        self.push_validity(validity, count)?;
        self.len += count;
        Ok(())
    }

    fn push_storage(&mut self, values: &DecodedValues, range: Range<usize>) -> Result<()> {
        crate::ensure_corrupt!(range.start <= range.end, "inverted value range {range:?}");
        let expected_bits = self.value_bits();
        match (&mut self.storage, values) {
            (Storage::Null, _) => Ok(()),
            (
                Storage::Bits(bits),
                DecodedValues::Fixed {
                    bits_per_value: 1,
                    num_values,
                    data,
                },
            ) => {
                check_fixed(*num_values, 1, data.len(), &range)?;
                bits.append_packed_range(range, data);
                Ok(())
            }
            (
                Storage::Bytes { width, data: out },
                DecodedValues::Fixed {
                    bits_per_value,
                    num_values,
                    data,
                },
            ) => {
                crate::ensure_corrupt!(
                    Some(*bits_per_value) == expected_bits,
                    "decoded {bits_per_value}-bit values for a {}-byte type",
                    width
                );
                check_fixed(*num_values, *bits_per_value, data.len(), &range)?;
                out.extend_from_slice(&data[range.start * *width..range.end * *width]);
                Ok(())
            }
            (
                Storage::Variable {
                    offsets: out_offsets,
                    data: out,
                },
                DecodedValues::Variable { offsets, data },
            ) => append_variable(out_offsets, out, offsets, data, range),
            (
                Storage::List { dimension, items },
                DecodedValues::FixedSizeList {
                    dimension: d,
                    items: inner,
                    item_validity,
                },
            ) => {
                crate::ensure_corrupt!(
                    *d as usize == *dimension,
                    "fixed-size list of {d} items for a list of {dimension}"
                );
                push_list_items(items, *dimension, inner, item_validity.as_deref(), range)
            }
            (
                Storage::List { dimension, items },
                DecodedValues::Fixed {
                    bits_per_value,
                    num_values,
                    data,
                },
            ) => {
                // A fixed-size list may also come back flattened as one wide value.
                crate::ensure_corrupt!(
                    Some(*bits_per_value) == expected_bits,
                    "decoded {bits_per_value}-bit values for a list of {dimension} x {} bits",
                    items.value_bits().unwrap_or(0)
                );
                let flattened = unflatten(items, *dimension, *num_values, data);
                push_list_items(items, *dimension, &flattened, None, range)
            }
            (_, other) => Err(Error::corrupt(format!(
                "decoded {} values for a column of type {}",
                kind_name(other),
                self.data_type
            ))),
        }
    }

    /// Append `indices[range]` looked up in `dictionary`, with optional validity. Null
    /// entries may hold any index (placeholders); valid ones must be in range.
    pub fn push_dictionary(
        &mut self,
        dictionary: &DecodedValues,
        indices: &DecodedValues,
        range: Range<usize>,
        validity: Option<&[bool]>,
    ) -> Result<()> {
        let DecodedValues::Fixed {
            bits_per_value,
            num_values,
            data,
        } = indices
        else {
            return Err(Error::corrupt("dictionary indices are not fixed-width"));
        };
        crate::ensure_corrupt!(
            matches!(bits_per_value, 8 | 16 | 32 | 64),
            "dictionary indices of {bits_per_value} bits"
        );
        check_fixed(*num_values, *bits_per_value, data.len(), &range)?;
        let dictionary_len = decoded_len(dictionary);
        let width = (*bits_per_value / 8) as usize;
        for (k, row) in range.clone().enumerate() {
            let raw = &data[row * width..(row + 1) * width];
            let mut word = [0u8; 8];
            word[..width].copy_from_slice(raw);
            let index = u64::from_le_bytes(word);
            let valid = validity.is_none_or(|v| v.get(k).copied().unwrap_or(true));
            if index >= dictionary_len as u64 {
                crate::ensure_corrupt!(
                    !valid,
                    "dictionary index {index} out of range for a dictionary of {dictionary_len} items"
                );
                self.push_nulls(1)?;
                continue;
            }
            let v = validity.map(|_| [valid]);
            self.push_values(
                dictionary,
                index as usize..index as usize + 1,
                v.as_ref().map(|a| &a[..]),
            )?;
        }
        Ok(())
    }

    /// Replace the validity of rows `start..` (everything pushed since `start`) with
    /// `validity` (used when validity comes from a separate structure, e.g. 2.3 sparse).
    pub fn override_validity(&mut self, start: usize, validity: &[bool]) -> Result<()> {
        crate::ensure_corrupt!(
            start <= self.len && self.len - start == validity.len(),
            "validity of {} rows for {} decoded rows",
            validity.len(),
            self.len.saturating_sub(start)
        );
        if self.validity.is_none() && validity.iter().all(|v| *v) {
            return Ok(());
        }
        let builder = self.validity_builder();
        builder.truncate(start);
        for &v in validity {
            builder.append(v);
        }
        Ok(())
    }

    /// Append `n` nulls (placeholder values).
    pub fn push_nulls(&mut self, n: usize) -> Result<()> {
        match &mut self.storage {
            Storage::Null => {}
            Storage::Bits(b) => b.append_n(n, false),
            Storage::Bytes { width, data } => {
                let bytes = n
                    .checked_mul(*width)
                    .ok_or_else(|| Error::corrupt("null run too long"))?;
                data.resize(data.len() + bytes, 0);
            }
            Storage::Variable { offsets, data } => {
                let last = data.len() as u64;
                offsets.resize(offsets.len() + n, last);
            }
            Storage::List { dimension, items } => {
                let count = n
                    .checked_mul(*dimension)
                    .ok_or_else(|| Error::corrupt("null run too long"))?;
                items.push_placeholders(count)?;
            }
        }
        if !matches!(self.storage, Storage::Null) || self.validity.is_some() {
            self.validity_builder().append_n(n, false);
        }
        self.len += n;
        Ok(())
    }

    /// Placeholder values that are valid at the item level (children of a null list slot).
    fn push_placeholders(&mut self, n: usize) -> Result<()> {
        let had_validity = self.validity.is_some();
        let before = self.len;
        self.push_nulls(n)?;
        if let Some(v) = self.validity.as_mut() {
            if had_validity {
                // Overwrite the n false bits just appended with true.
                v.truncate(before);
                v.append_n(n, true);
            } else {
                self.validity = None;
            }
        }
        Ok(())
    }

    /// Append value `index` of `values` `n` times (constant pages).
    pub fn push_repeated(&mut self, values: &DecodedValues, index: usize, n: usize) -> Result<()> {
        for _ in 0..n {
            self.push_storage(values, index..index + 1)?;
        }
        self.push_validity(None, n)?;
        self.len += n;
        Ok(())
    }

    /// Build the Arrow array.
    pub fn finish(self) -> Result<ArrayRef> {
        let nulls = self.validity.map(|mut v| NullBuffer::new(v.finish()));
        let builder = match self.storage {
            Storage::Null => return Ok(Arc::new(arrow_array::NullArray::new(self.len))),
            Storage::Bits(mut bits) => ArrayDataBuilder::new(self.data_type.clone())
                .len(self.len)
                .add_buffer(bits.finish().into_inner()),
            Storage::Bytes { data, .. } => ArrayDataBuilder::new(self.data_type.clone())
                .len(self.len)
                .add_buffer(data.into()),
            Storage::Variable { offsets, data } => {
                let offsets_buffer = match self.data_type {
                    DataType::LargeUtf8 | DataType::LargeBinary => {
                        let o: Vec<i64> = offsets
                            .iter()
                            .map(|&o| {
                                i64::try_from(o).map_err(|_| Error::corrupt("offset overflows i64"))
                            })
                            .collect::<Result<_>>()?;
                        Buffer::from_vec(o)
                    }
                    _ => {
                        let o: Vec<i32> = offsets
                            .iter()
                            .map(|&o| {
                                i32::try_from(o).map_err(|_| {
                                    Error::unsupported(format!(
                                        "{} values larger than 2 GiB in one read; read fewer rows",
                                        self.data_type
                                    ))
                                })
                            })
                            .collect::<Result<_>>()?;
                        Buffer::from_vec(o)
                    }
                };
                ArrayDataBuilder::new(self.data_type.clone())
                    .len(self.len)
                    .add_buffer(offsets_buffer)
                    .add_buffer(Buffer::from_vec(data))
            }
            Storage::List { items, .. } => {
                let child = items.finish()?.to_data();
                ArrayDataBuilder::new(self.data_type.clone())
                    .len(self.len)
                    .add_child_data(child)
            }
        };
        let data = builder.nulls(nulls).build().map_err(|e| {
            Error::corrupt(format!("decoded {} data is invalid: {e}", self.data_type))
                .with_source(e)
        })?;
        Ok(make_array(data))
    }
}

fn kind_name(values: &DecodedValues) -> String {
    match values {
        DecodedValues::Fixed { bits_per_value, .. } => format!("{bits_per_value}-bit fixed-width"),
        DecodedValues::Variable { .. } => "variable-width".into(),
        DecodedValues::FixedSizeList { dimension, .. } => format!("fixed-size-list({dimension})"),
    }
}

/// Number of values held by decoded values.
pub(crate) fn decoded_len(values: &DecodedValues) -> usize {
    match values {
        DecodedValues::Fixed { num_values, .. } => *num_values,
        DecodedValues::Variable { offsets, .. } => offsets.len().saturating_sub(1),
        DecodedValues::FixedSizeList {
            dimension, items, ..
        } => {
            if *dimension == 0 {
                0
            } else {
                decoded_len(items) / *dimension as usize
            }
        }
    }
}

fn check_fixed(num_values: usize, bits: u64, data_len: usize, range: &Range<usize>) -> Result<()> {
    crate::ensure_corrupt!(
        range.end <= num_values,
        "value range {range:?} outside {num_values} decoded values"
    );
    let need_bits = (num_values as u128) * (bits as u128);
    crate::ensure_corrupt!(
        need_bits <= (data_len as u128) * 8,
        "{num_values} values of {bits} bits need more than the {data_len} decoded bytes"
    );
    Ok(())
}

/// Append variable-width values `range` (`offsets`, `data` as decoded) to `out_offsets`
/// and `out`, checking the offsets stay inside the data and never decrease.
fn append_variable(
    out_offsets: &mut Vec<u64>,
    out: &mut Vec<u8>,
    offsets: &[u64],
    data: &[u8],
    range: Range<usize>,
) -> Result<()> {
    crate::ensure_corrupt!(
        range.end < offsets.len(),
        "value range {range:?} outside {} variable-width values",
        offsets.len().saturating_sub(1)
    );
    let start = offsets[range.start];
    let end = offsets[range.end];
    crate::ensure_corrupt!(
        start <= end && end <= data.len() as u64,
        "variable-width offsets {start}..{end} outside {} data bytes",
        data.len()
    );
    let mut previous = start;
    let base = out.len() as u64;
    for &o in &offsets[range.start + 1..=range.end] {
        crate::ensure_corrupt!(
            o >= previous,
            "variable-width offsets decrease ({previous} then {o})"
        );
        previous = o;
        out_offsets.push(base + (o - start));
    }
    out.extend_from_slice(&data[start as usize..end as usize]);
    Ok(())
}

/// Fixed-size lists decoded as one wide value each, seen as their `num_values * dimension`
/// items of the item builder's width.
fn unflatten(
    items: &LeafBuilder,
    dimension: usize,
    num_values: usize,
    data: &bytes::Bytes,
) -> DecodedValues {
    DecodedValues::Fixed {
        bits_per_value: items.value_bits().unwrap_or(0),
        num_values: num_values.saturating_mul(dimension),
        data: data.clone(),
    }
}

/// Append the items of fixed-size lists `range` (of `dimension` items each) from the
/// decoded `items`, with their optional LSB-first validity bitmap.
fn push_list_items(
    builder: &mut LeafBuilder,
    dimension: usize,
    items: &DecodedValues,
    item_validity: Option<&[u8]>,
    range: Range<usize>,
) -> Result<()> {
    let item_range = range.start * dimension..range.end * dimension;
    let validity = match item_validity {
        Some(bitmap) => Some(bits_of(bitmap, item_range.clone())?),
        None => None,
    };
    builder.push_values(items, item_range, validity.as_deref())
}

/// Bits `range` of an LSB-first `bitmap` (item validity of a fixed-size list).
fn bits_of(bitmap: &[u8], range: Range<usize>) -> Result<Vec<bool>> {
    let total = range.end;
    crate::ensure_corrupt!(
        bitmap.len() * 8 >= total,
        "item validity bitmap of {} bytes for {total} items",
        bitmap.len()
    );
    Ok(range.map(|i| bitmap[i / 8] & (1 << (i % 8)) != 0).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Array, FixedSizeListArray, Int32Array, StringArray};
    use bytes::Bytes;

    fn fixed32(values: &[i32]) -> DecodedValues {
        let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        DecodedValues::Fixed {
            bits_per_value: 32,
            num_values: values.len(),
            data: Bytes::from(data),
        }
    }

    #[test]
    fn fixed_values_slices_and_nulls() {
        let mut b = LeafBuilder::new(&DataType::Int32).unwrap();
        b.push_values(&fixed32(&[1, 2, 3, 4]), 1..3, None).unwrap();
        b.push_nulls(1).unwrap();
        b.push_values(&fixed32(&[5, 6]), 0..2, Some(&[false, true]))
            .unwrap();
        let a = b.finish().unwrap();
        let a = a.as_any().downcast_ref::<Int32Array>().unwrap();
        let got: Vec<Option<i32>> = a.iter().collect();
        assert_eq!(got, vec![Some(2), Some(3), None, None, Some(6)]);
    }

    #[test]
    fn wrong_width_is_corrupt() {
        let mut b = LeafBuilder::new(&DataType::Int64).unwrap();
        assert!(matches!(
            b.push_values(&fixed32(&[1]), 0..1, None),
            Err(Error::Corrupt { .. })
        ));
        let mut b = LeafBuilder::new(&DataType::Int32).unwrap();
        assert!(matches!(
            b.push_values(&fixed32(&[1]), 0..2, None),
            Err(Error::Corrupt { .. })
        ));
    }

    #[test]
    fn variable_values_and_dictionary() {
        let dict = DecodedValues::Variable {
            offsets: vec![0, 1, 3],
            data: Bytes::from_static(b"abb"),
        };
        let mut b = LeafBuilder::new(&DataType::Utf8).unwrap();
        b.push_values(&dict, 1..2, None).unwrap();
        b.push_dictionary(
            &dict,
            &fixed32(&[1, 0, 7]),
            0..3,
            Some(&[true, true, false]),
        )
        .unwrap();
        let a = b.finish().unwrap();
        let a = a.as_any().downcast_ref::<StringArray>().unwrap();
        let got: Vec<Option<&str>> = a.iter().collect();
        assert_eq!(got, vec![Some("bb"), Some("bb"), Some("a"), None]);
        let mut b = LeafBuilder::new(&DataType::Utf8).unwrap();
        assert!(matches!(
            b.push_dictionary(&dict, &fixed32(&[2]), 0..1, None),
            Err(Error::Corrupt { .. })
        ));
    }

    #[test]
    fn invalid_utf8_is_corrupt() {
        let v = DecodedValues::Variable {
            offsets: vec![0, 2],
            data: Bytes::from_static(&[0xff, 0xfe]),
        };
        let mut b = LeafBuilder::new(&DataType::Utf8).unwrap();
        b.push_values(&v, 0..1, None).unwrap();
        assert!(matches!(b.finish(), Err(Error::Corrupt { .. })));
    }

    #[test]
    fn fixed_size_list_from_list_or_flat_values() {
        let dt = DataType::FixedSizeList(
            Arc::new(arrow_schema::Field::new("item", DataType::Int32, true)),
            2,
        );
        let mut b = LeafBuilder::new(&dt).unwrap();
        let list = DecodedValues::FixedSizeList {
            dimension: 2,
            items: Box::new(fixed32(&[1, 2, 3, 4])),
            item_validity: None,
        };
        b.push_values(&list, 1..2, None).unwrap();
        let wide = DecodedValues::Fixed {
            bits_per_value: 64,
            num_values: 1,
            data: fixed32_bytes(&[5, 6]),
        };
        b.push_values(&wide, 0..1, None).unwrap();
        b.push_nulls(1).unwrap();
        let a = b.finish().unwrap();
        let a = a.as_any().downcast_ref::<FixedSizeListArray>().unwrap();
        assert_eq!(a.len(), 3);
        assert!(a.is_null(2));
        let items = a.values().as_any().downcast_ref::<Int32Array>().unwrap();
        assert_eq!(&items.values()[..4], &[3, 4, 5, 6]);
    }

    fn fixed32_bytes(values: &[i32]) -> Bytes {
        Bytes::from(
            values
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect::<Vec<u8>>(),
        )
    }
}
