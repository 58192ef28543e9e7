//! The zone columns every zone-based index file has (`fragment_id`, `zone_start`,
//! `zone_length`), decoded and checked once for zone maps and bloom filters alike.

use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use arrow_array::{Array, ArrowPrimitiveType, RecordBatch};

use super::ZoneBound;
use crate::error::{Error, Result};

/// Column `name` of `batch`; `what` names the index kind in errors.
pub(crate) fn column<'a>(
    batch: &'a RecordBatch,
    name: &str,
    what: &str,
) -> Result<&'a arrow_array::ArrayRef> {
    batch
        .column_by_name(name)
        .ok_or_else(|| Error::corrupt(format!("{what} has no {name:?} column")))
}

/// The non-null unsigned integers of column `name`, widened to `u64`.
pub(crate) fn unsigned<T>(batch: &RecordBatch, name: &str, what: &str) -> Result<Vec<u64>>
where
    T: ArrowPrimitiveType,
    T::Native: Into<u64>,
{
    let a = column(batch, name, what)?;
    let p = a.as_primitive_opt::<T>().ok_or_else(|| {
        Error::corrupt(format!(
            "{what} {name:?} is {}, not {}",
            a.data_type(),
            T::DATA_TYPE
        ))
    })?;
    if p.null_count() > 0 {
        return Err(Error::corrupt(format!("{what} {name:?} has nulls")));
    }
    Ok(p.values().iter().map(|v| (*v).into()).collect())
}

/// The zones of `batch`, checked: fragment ids within `u32`, a positive length inside the
/// 32-bit row offsets, the zones of a fragment in order and not overlapping.
pub(crate) fn decode_bounds(batch: &RecordBatch, what: &str) -> Result<Vec<ZoneBound>> {
    let fragments = unsigned::<UInt64Type>(batch, "fragment_id", what)?;
    let starts = unsigned::<UInt64Type>(batch, "zone_start", what)?;
    let lengths = unsigned::<UInt64Type>(batch, "zone_length", what)?;
    let mut bounds: Vec<ZoneBound> = Vec::with_capacity(batch.num_rows());
    for i in 0..batch.num_rows() {
        let fragment = u32::try_from(fragments[i]).map_err(|_| {
            Error::corrupt(format!(
                "zone {i}: fragment id {} exceeds u32",
                fragments[i]
            ))
        })?;
        let bound = ZoneBound {
            fragment,
            start: starts[i],
            length: lengths[i],
        };
        check_bound(i, &bound, bounds.last())?;
        bounds.push(bound);
    }
    Ok(bounds)
}

/// Zone `i` against the zone before it.
fn check_bound(i: usize, bound: &ZoneBound, prev: Option<&ZoneBound>) -> Result<()> {
    let (fragment, start, length) = (bound.fragment, bound.start, bound.length);
    let end = start.checked_add(length);
    if length == 0 || end.is_none_or(|e| e > 1 << 32) {
        return Err(Error::corrupt(format!(
            "zone {i} (fragment {fragment}, rows {start}+{length}) is empty or leaves the 32-bit row offsets"
        )));
    }
    if let Some(p) = prev {
        let ordered = (p.fragment, p.start) < (fragment, start);
        let overlaps = p.fragment == fragment && p.start + p.length > start;
        if !ordered || overlaps {
            return Err(Error::corrupt(format!(
                "zone {i} (fragment {fragment}, rows {start}+{length}) overlaps or precedes the zone before it (fragment {}, rows {}+{})",
                p.fragment, p.start, p.length
            )));
        }
    }
    Ok(())
}
