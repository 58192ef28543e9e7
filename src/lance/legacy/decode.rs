//! Pure decoders of v1 pages: plain fixed-width values (bit-packed booleans, fixed-size
//! lists and binaries flattened), var-binary positions and values, list offsets.
//!
//! The legacy writer stores no validity: fixed-width nulls come back as whatever value
//! the writer left in the slot (0), lists as empty lists, and a var-binary value of a
//! nullable field is null exactly when it is empty — as lance's legacy reader (and
//! pylance 14.0.2) decodes them.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::builder::BooleanBufferBuilder;
use arrow_array::{make_array, Array, ArrayRef, BooleanArray, FixedSizeListArray};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_data::ArrayDataBuilder;
use arrow_schema::DataType;
use bytes::Bytes;

use crate::error::{Error, Result};

/// How many bytes a value of a fixed-stride type takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Width {
    /// Bit-packed booleans: `n` bits per value (`n` > 1 for fixed-size lists of booleans).
    Bits(u64),
    /// `n` bytes per value.
    Bytes(u64),
}

/// The width of a fixed-stride type (primitives, booleans, fixed-size binaries and
/// fixed-size lists of fixed-stride items), `None` for other types.
pub(crate) fn fixed_width(data_type: &DataType) -> Option<Width> {
    match data_type {
        DataType::Boolean => Some(Width::Bits(1)),
        DataType::FixedSizeBinary(n) => u64::try_from(*n).ok().map(Width::Bytes),
        DataType::FixedSizeList(item, n) => {
            let n = u64::try_from(*n).ok()?;
            match fixed_width(item.data_type())? {
                Width::Bits(b) => Some(Width::Bits(b.checked_mul(n)?)),
                Width::Bytes(b) => Some(Width::Bytes(b.checked_mul(n)?)),
            }
        }
        DataType::Null => None,
        t => t.primitive_width().map(|w| Width::Bytes(w as u64)),
    }
}

impl Width {
    /// The bytes (relative to the page start) holding values `rows`.
    pub(crate) fn byte_range(&self, rows: &Range<u64>) -> Option<Range<u64>> {
        match self {
            Width::Bits(b) => {
                let first = rows.start.checked_mul(*b)?;
                let end = rows.end.checked_mul(*b)?;
                Some(first / 8..end.div_ceil(8))
            }
            Width::Bytes(b) => Some(rows.start.checked_mul(*b)?..rows.end.checked_mul(*b)?),
        }
    }
}

/// Fixed-stride values: `runs` pairs value ranges with the bytes [`Width::byte_range`]
/// said they need.
pub(crate) fn decode_fixed(data_type: &DataType, runs: &[(Range<u64>, Bytes)]) -> Result<ArrayRef> {
    let width = fixed_width(data_type)
        .ok_or_else(|| Error::unsupported(format!("legacy plain pages of {data_type}")))?;
    let total: u64 = runs.iter().map(|(r, _)| r.end - r.start).sum();
    for (rows, bytes) in runs {
        let need = width.byte_range(rows).map(|r| r.end - r.start);
        crate::ensure_corrupt!(
            need == Some(bytes.len() as u64),
            "values {rows:?} need {need:?} bytes, got {}",
            bytes.len()
        );
    }
    match width {
        Width::Bits(bits) => {
            let mut builder = BooleanBufferBuilder::new(usize::try_from(total * bits).unwrap_or(0));
            for (rows, bytes) in runs {
                let skip = (rows.start * bits % 8) as usize;
                let n = ((rows.end - rows.start) * bits) as usize;
                builder.append_packed_range(skip..skip + n, bytes);
            }
            let values = BooleanArray::new(builder.finish(), None);
            wrap_fixed_size_lists(data_type, Arc::new(values), total)
        }
        Width::Bytes(_) => {
            let mut buffer = Vec::with_capacity(runs.iter().map(|(_, b)| b.len()).sum());
            for (_, bytes) in runs {
                buffer.extend_from_slice(bytes);
            }
            let leaf = leaf_type(data_type);
            let leaf_len = buffer.len()
                / fixed_width(leaf).map_or(1, |w| match w {
                    Width::Bytes(b) => b.max(1) as usize,
                    Width::Bits(_) => 1,
                });
            let data = ArrayDataBuilder::new(leaf.clone())
                .len(leaf_len)
                .add_buffer(Buffer::from_vec(buffer))
                .build()?;
            wrap_fixed_size_lists(data_type, make_array(data), total)
        }
    }
}

/// The innermost non-fixed-size-list type.
fn leaf_type(data_type: &DataType) -> &DataType {
    match data_type {
        DataType::FixedSizeList(item, _) => leaf_type(item.data_type()),
        t => t,
    }
}

/// Wrap flattened `values` into the fixed-size lists of `data_type` (`rows` lists).
fn wrap_fixed_size_lists(data_type: &DataType, values: ArrayRef, rows: u64) -> Result<ArrayRef> {
    match data_type {
        DataType::FixedSizeList(item, n) => {
            let inner_rows = rows * (*n as u64);
            let inner = wrap_fixed_size_lists(item.data_type(), values, inner_rows)?;
            Ok(Arc::new(FixedSizeListArray::try_new(
                Arc::clone(item),
                *n,
                inner,
                None,
            )?))
        }
        _ => {
            crate::ensure_corrupt!(
                values.len() as u64 == rows,
                "decoded {} values, expected {rows}",
                values.len()
            );
            Ok(values)
        }
    }
}

/// Little-endian i64 / i32 words of a positions or offsets array, as u64, checked to
/// never decrease.
pub(crate) fn read_offsets(bytes: &[u8], wide: bool) -> Result<Vec<u64>> {
    let size = if wide { 8 } else { 4 };
    crate::ensure_corrupt!(
        bytes.len().is_multiple_of(size),
        "offsets of {} bytes are not whole {size}-byte words",
        bytes.len()
    );
    let mut out = Vec::with_capacity(bytes.len() / size);
    for w in bytes.chunks_exact(size) {
        let v = if wide {
            i64::from_le_bytes(w.try_into().unwrap_or_default())
        } else {
            i64::from(i32::from_le_bytes(w.try_into().unwrap_or_default()))
        };
        let v = u64::try_from(v).map_err(|_| Error::corrupt(format!("negative offset {v}")))?;
        if let Some(&last) = out.last() {
            crate::ensure_corrupt!(v >= last, "offsets decrease: {v} after {last}");
        }
        out.push(v);
    }
    Ok(out)
}

/// Var-binary values: for each run, its `positions` (one more than values, absolute) and
/// the bytes `positions[0]..positions[last]`.
pub(crate) fn decode_binary(
    data_type: &DataType,
    nullable: bool,
    runs: &[(Vec<u64>, Bytes)],
) -> Result<ArrayRef> {
    let large = matches!(data_type, DataType::LargeUtf8 | DataType::LargeBinary);
    let mut values = Vec::with_capacity(runs.iter().map(|(_, b)| b.len()).sum());
    let mut offsets: Vec<i64> = vec![0];
    let mut valid = BooleanBufferBuilder::new(0);
    for (positions, bytes) in runs {
        let (Some(&first), Some(&last)) = (positions.first(), positions.last()) else {
            return Err(Error::corrupt("a binary run without positions"));
        };
        crate::ensure_corrupt!(
            last - first == bytes.len() as u64,
            "binary values {first}..{last} but {} bytes",
            bytes.len()
        );
        for w in positions.windows(2) {
            valid.append(w[1] != w[0]);
            values.extend_from_slice(&bytes[(w[0] - first) as usize..(w[1] - first) as usize]);
            offsets.push(values.len() as i64);
        }
    }
    crate::ensure_corrupt!(
        large || values.len() <= i32::MAX as usize,
        "{} bytes of binary values overflow 32-bit offsets",
        values.len()
    );
    let len = offsets.len() - 1;
    let offsets_buffer = if large {
        Buffer::from_vec(offsets)
    } else {
        Buffer::from_vec(offsets.into_iter().map(|o| o as i32).collect::<Vec<_>>())
    };
    let nulls = nullable
        .then(|| NullBuffer::new(valid.finish()))
        .filter(|n| n.null_count() > 0);
    let data = ArrayDataBuilder::new(data_type.clone())
        .len(len)
        .add_buffer(offsets_buffer)
        .add_buffer(Buffer::from_vec(values))
        .nulls(nulls)
        .build()?;
    Ok(make_array(data))
}

/// The child value ranges of list runs: `offsets` of each run has one more entry than
/// lists; returns (child runs, the runs' list offsets rebased to start at 0 and chained).
pub(crate) fn list_children(runs: &[Vec<u64>]) -> Result<(Vec<Range<u64>>, Vec<u64>)> {
    let mut children = Vec::with_capacity(runs.len());
    let mut offsets = vec![0u64];
    for run in runs {
        let (Some(&first), Some(&last)) = (run.first(), run.last()) else {
            return Err(Error::corrupt("a list run without offsets"));
        };
        let base = *offsets.last().unwrap_or(&0);
        offsets.extend(run.iter().skip(1).map(|o| base + (o - first)));
        if last > first {
            children.push(first..last);
        }
    }
    Ok((children, offsets))
}

/// A list array of `values` with chained `offsets` (no nulls: the legacy writer keeps none).
pub(crate) fn make_list(
    data_type: &DataType,
    offsets: Vec<u64>,
    values: ArrayRef,
) -> Result<ArrayRef> {
    let (DataType::List(item) | DataType::LargeList(item)) = data_type else {
        return Err(Error::unsupported(format!(
            "legacy list of type {data_type}"
        )));
    };
    let last = offsets.last().copied().unwrap_or(0);
    crate::ensure_corrupt!(
        last == values.len() as u64,
        "list offsets end at {last} but {} items were read",
        values.len()
    );
    let values = conform_item(values, item.data_type())?;
    let array: ArrayRef = if matches!(data_type, DataType::LargeList(_)) {
        let o: Vec<i64> = offsets.into_iter().map(|o| o as i64).collect();
        Arc::new(arrow_array::LargeListArray::try_new(
            Arc::clone(item),
            OffsetBuffer::new(ScalarBuffer::from(o)),
            values,
            None,
        )?)
    } else {
        crate::ensure_corrupt!(
            last <= i32::MAX as u64,
            "list of {last} items overflows i32"
        );
        let o: Vec<i32> = offsets.into_iter().map(|o| o as i32).collect();
        Arc::new(arrow_array::ListArray::try_new(
            Arc::clone(item),
            OffsetBuffer::new(ScalarBuffer::from(o)),
            values,
            None,
        )?)
    };
    Ok(array)
}

/// `values` typed exactly as `t` (struct children's names / nullability from the schema).
pub(crate) fn conform_item(values: ArrayRef, t: &DataType) -> Result<ArrayRef> {
    if values.data_type() == t {
        return Ok(values);
    }
    let data = values
        .to_data()
        .into_builder()
        .data_type(t.clone())
        .build()?;
    Ok(make_array(data))
}

/// Whether bit `i` of `bytes` is set (used by tests).
#[cfg(test)]
fn bit(bytes: &[u8], i: usize) -> bool {
    arrow_buffer::bit_util::get_bit(bytes, i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int32Type;
    use arrow_schema::Field;

    #[test]
    fn booleans_keep_their_bit_offsets() {
        let bytes = Bytes::from(vec![0b1010_1100u8, 0b0000_0001]);
        assert!(bit(&bytes, 2));
        let a = decode_fixed(&DataType::Boolean, &[(2..9, bytes)]).unwrap();
        let b = a.as_boolean();
        let got: Vec<bool> = (0..b.len()).map(|i| b.value(i)).collect();
        assert_eq!(got, [true, true, false, true, false, true, true]);
    }

    #[test]
    fn fixed_size_lists_flatten() {
        let t = DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Int32, true)), 2);
        assert_eq!(fixed_width(&t), Some(Width::Bytes(8)));
        let bytes: Vec<u8> = [5i32, 6, 7, 8]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let a = decode_fixed(&t, &[(3..5, Bytes::from(bytes))]).unwrap();
        let l = a.as_fixed_size_list();
        assert_eq!(l.len(), 2);
        assert_eq!(l.value(1).as_primitive::<Int32Type>().values(), &[7, 8]);
        assert!(decode_fixed(&t, &[(3..6, Bytes::from(vec![0u8; 8]))]).is_err());
    }

    #[test]
    fn empty_binaries_of_nullable_fields_are_null() {
        let runs = vec![(vec![10, 12, 12, 13], Bytes::from_static(b"abc"))];
        let a = decode_binary(&DataType::Utf8, true, &runs).unwrap();
        let s = a.as_string::<i32>();
        assert_eq!((s.value(0), s.is_null(1), s.value(2)), ("ab", true, "c"));
        let a = decode_binary(&DataType::Utf8, false, &runs).unwrap();
        assert_eq!(a.null_count(), 0);
        let bad = vec![(vec![10, 14], Bytes::from_static(b"abc"))];
        assert!(decode_binary(&DataType::Utf8, true, &bad).is_err());
    }

    #[test]
    fn offsets_must_not_decrease() {
        let b: Vec<u8> = [3i32, 2].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert!(read_offsets(&b, false).is_err());
        assert!(read_offsets(&b[..7], false).is_err());
        let (children, offsets) = list_children(&[vec![4, 6, 6], vec![9, 10]]).unwrap();
        assert_eq!(children, vec![4..6, 9..10]);
        assert_eq!(offsets, vec![0, 2, 2, 3]);
    }
}
