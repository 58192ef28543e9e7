//! `Binary` (u64 end offsets, then bytes) and `Dictionary` pages of 2.0 files.
//!
//! A binary read takes two waves: the offsets of the wanted rows (plus the one before each
//! run, which gives the run's first byte), then exactly the bytes those offsets span. A
//! null value's offset is raised by the page's `null_adjustment`. A dictionary page's
//! items are decoded once (and cached as the page init); its indices are read by row.

use std::ops::Range;

use arrow_array::{Array, ArrayRef, UInt64Array};
use arrow_buffer::{BooleanBufferBuilder, MutableBuffer};
use arrow_schema::DataType;

use super::arrow::to_array;
use super::values::{as_u64s, decode, decode_offsets, validity_of, Decoded, Rows};
use super::walk::Walk;
use crate::error::{Error, Result};
use crate::lance::page::array_encoding::Node;

/// What the items of a dictionary page decode to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ItemsType<'a> {
    /// Arrow type of the items (the field's value type).
    pub(crate) value_type: &'a DataType,
    /// True when index 0 means null and index `k` is item `k - 1` (strings dictionary-
    /// encoded by the writer); false for fields that are dictionaries in the schema.
    pub(crate) shifted: bool,
}

/// `rows` of a `Binary` node.
pub(crate) fn binary(node: &Node, rows: &Rows, w: &mut Walk<'_>) -> Result<Option<Decoded>> {
    let Node::Binary {
        indices,
        bytes,
        null_adjustment,
    } = node
    else {
        return Err(Error::corrupt("internal: binary decode of another node"));
    };
    let Some(ends) = decode_offsets(indices, rows, w, "binary offsets")? else {
        return Ok(None);
    };
    let plain = ItemsType {
        value_type: &DataType::UInt64,
        shifted: false,
    };
    let spans = BinarySpans::new(rows, &ends, *null_adjustment)?;
    let byte_rows: Vec<Range<u64>> = spans
        .byte_ranges
        .iter()
        .filter(|r| r.start < r.end)
        .cloned()
        .collect();
    let Some(data) = decode(bytes, &byte_rows, w, &plain)? else {
        return Ok(None);
    };
    let Decoded::Fixed {
        bits: 8, data, len, ..
    } = data
    else {
        return Err(Error::corrupt(
            "binary bytes are not an 8-bit flat encoding",
        ));
    };
    let total = spans.offsets.last().copied().unwrap_or(0);
    crate::ensure_corrupt!(
        len as u64 == total,
        "binary values hold {len} bytes, their offsets span {total}"
    );
    Ok(Some(Decoded::Variable {
        offsets: spans.offsets,
        data,
        validity: spans.validity,
    }))
}

/// Offsets, validity and byte ranges of the rows of a binary page.
struct BinarySpans {
    offsets: Vec<u64>,
    validity: Option<arrow_buffer::BooleanBuffer>,
    byte_ranges: Vec<Range<u64>>,
}

impl BinarySpans {
    /// `ends` holds, per run of `rows`, the end offset of the row before the run (unless
    /// the run starts at row 0) and then the run's end offsets.
    fn new(rows: &Rows, ends: &[u64], adjustment: u64) -> Result<Self> {
        let normalize = |v: u64| {
            if v >= adjustment {
                (false, v - adjustment)
            } else {
                (true, v)
            }
        };
        let mut offsets = Vec::with_capacity(ends.len() + 1);
        offsets.push(0u64);
        let mut valid = BooleanBufferBuilder::new(ends.len());
        let mut byte_ranges = Vec::with_capacity(rows.len());
        let mut at = 0usize;
        for r in rows {
            let n = (r.end - r.start) as usize;
            let base = if r.start == 0 {
                0
            } else {
                let v = *ends
                    .get(at)
                    .ok_or_else(|| Error::corrupt("binary offsets: too few values"))?;
                at += 1;
                normalize(v).1
            };
            let run = ends
                .get(at..at + n)
                .ok_or_else(|| Error::corrupt("binary offsets: too few values"))?;
            at += n;
            let mut previous = base;
            let mut out = *offsets.last().unwrap_or(&0);
            for &v in run {
                let (is_valid, end) = normalize(v);
                crate::ensure_corrupt!(
                    end >= previous,
                    "binary offsets decrease ({end} after {previous})"
                );
                out += end - previous;
                offsets.push(out);
                valid.append(is_valid);
                previous = end;
            }
            byte_ranges.push(base..previous);
        }
        let validity = valid.finish();
        let validity = (validity.count_set_bits() < validity.len()).then_some(validity);
        Ok(Self {
            offsets,
            validity,
            byte_ranges,
        })
    }
}

/// `rows` of a `Dictionary` node: its items from the page init (decoded on first use),
/// its indices by row.
pub(crate) fn dictionary(
    node: &Node,
    rows: &Rows,
    w: &mut Walk<'_>,
    items_type: &ItemsType<'_>,
) -> Result<Option<Decoded>> {
    let Node::Dictionary {
        indices,
        items,
        num_items,
    } = node
    else {
        return Err(Error::corrupt(
            "internal: dictionary decode of another node",
        ));
    };
    let dict = match w.dictionaries.get(&w.page) {
        Some(d) => Some(ArrayRef::clone(d)),
        None => {
            let item_rows: Vec<Range<u64>> = if *num_items > 0 {
                std::iter::once(0..u64::from(*num_items)).collect()
            } else {
                Vec::new()
            };
            let plain = ItemsType {
                value_type: items_type.value_type,
                shifted: false,
            };
            match decode(items, &item_rows, w, &plain)? {
                Some(d) => {
                    let array = to_array(d, items_type.value_type)
                        .map_err(|e| e.context("dictionary items"))?;
                    w.dictionaries.insert(w.page, ArrayRef::clone(&array));
                    w.fresh.push(w.page);
                    Some(array)
                }
                None => None,
            }
        }
    };
    let keys = decode(indices, rows, w, items_type)?;
    let (Some(dict), Some(keys)) = (dict, keys) else {
        return Ok(None);
    };
    let take = dictionary_keys(&keys, dict.len(), items_type.shifted)?;
    let values = arrow_select::take::take(dict.as_ref(), &take, None)?;
    Ok(Some(Decoded::Array(values)))
}

/// Take indices into the items from decoded keys (null for null keys, and for key 0 when
/// `shifted`); every index is checked against `num_items`.
fn dictionary_keys(keys: &Decoded, num_items: usize, shifted: bool) -> Result<UInt64Array> {
    let values = as_u64s(keys, "dictionary indices")?;
    let validity = validity_of(keys);
    let mut out = MutableBuffer::new(values.len() * 8);
    let mut valid = BooleanBufferBuilder::new(values.len());
    for (i, &k) in values.iter().enumerate() {
        let is_null = validity.is_some_and(|v| !v.value(i)) || (shifted && k == 0);
        let index = if is_null {
            0
        } else if shifted {
            k - 1
        } else {
            k
        };
        crate::ensure_corrupt!(
            is_null || index < num_items as u64,
            "dictionary index {index} of {num_items} items"
        );
        out.push(index);
        valid.append(!is_null);
    }
    let nulls = arrow_buffer::NullBuffer::new(valid.finish());
    Ok(UInt64Array::new(out.into(), Some(nulls)))
}
