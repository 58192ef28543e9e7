//! The ZONEMAP scalar index (pylance 14 `lance-index/src/scalar/zonemap.rs`): inexact.
//!
//! One file, `zonemap.lance` (Lance 2.2), one row per zone: `min`, `max` (the indexed
//! type; null when the zone has no comparable value), `null_count`, `nan_count` (UInt32),
//! `fragment_id`, `zone_start`, `zone_length` (UInt64; the zone covers row offsets
//! `zone_start..zone_start + zone_length` of the fragment). Schema metadata:
//! `rows_per_zone`, and `null_bitmap` = the index of a global buffer holding the exact
//! null rows as a serialized `RowAddrTreeMap` (so `IS NULL` is exact).
//!
//! [`ZoneMap::candidates`] keeps every zone whose statistics do not rule the test out; the
//! caller reads only those zones' rows of the column and evaluates the test there
//! ([`exec::recheck_zones`]).

pub(crate) mod exec;
pub(crate) mod kind;

#[cfg(test)]
mod tests;

use std::ops::Bound;

use arrow_array::types::UInt32Type;
use arrow_array::RecordBatch;

use crate::error::{Error, Result};
use crate::index::key::{Key, KeyColumn};
use crate::index::predicate::LeafQuery;
use crate::index::zones::bounds::{column, unsigned};
use crate::index::zones::{decode_bounds, Possible, ZoneBound};
use crate::io::cache::DeepSize;

/// Type names (after the last '/') of ZONEMAP index details.
pub(crate) const ZONEMAP_DETAILS_TYPES: [&str; 2] = [
    "lance.table.ZoneMapIndexDetails",
    "lance.index.pb.ZoneMapIndexDetails",
];
/// File name of a zone map index.
pub(crate) const ZONEMAP_FILE: &str = "zonemap.lance";

/// Statistics of one zone.
#[derive(Debug, Clone)]
pub(crate) struct Zone {
    /// Where it is.
    pub(crate) bound: ZoneBound,
    /// Smallest non-null value (`None`: no comparable value recorded).
    pub(crate) min: Option<Key>,
    /// Largest.
    pub(crate) max: Option<Key>,
    /// Null rows in the zone.
    pub(crate) null_count: u64,
    /// NaN rows in the zone (floats).
    pub(crate) nan_count: u64,
}

/// A decoded zone map.
#[derive(Debug, Clone)]
pub(crate) struct ZoneMap {
    /// Zones sorted by (fragment, start), non-overlapping.
    pub(crate) zones: Vec<Zone>,
    /// Global buffer holding the exact null rows, if the file has one.
    pub(crate) null_buffer: Option<usize>,
    approx_bytes: usize,
}

impl DeepSize for ZoneMap {
    fn deep_size(&self) -> usize {
        self.approx_bytes
    }
}

const WHAT: &str = "zone map";

impl ZoneMap {
    /// Decode the zones of a whole `zonemap.lance` batch, checking every zone: positive
    /// length inside the 32-bit row offsets, counts within the zone, min <= max, zones of
    /// a fragment in order and not overlapping.
    pub(crate) fn decode(batch: &RecordBatch, null_buffer: Option<usize>) -> Result<Self> {
        let mins = KeyColumn::new(column(batch, "min", WHAT)?)?;
        let maxs = KeyColumn::new(column(batch, "max", WHAT)?)?;
        let nulls = unsigned::<UInt32Type>(batch, "null_count", WHAT)?;
        let nans = unsigned::<UInt32Type>(batch, "nan_count", WHAT)?;
        let bounds = decode_bounds(batch, WHAT)?;
        let mut zones = Vec::with_capacity(batch.num_rows());
        let mut approx_bytes = 64;
        for (i, bound) in bounds.into_iter().enumerate() {
            if nulls[i] + nans[i] > bound.length {
                return Err(Error::corrupt(format!(
                    "zone {i}: {} nulls + {} NaNs in a {}-row zone",
                    nulls[i], nans[i], bound.length
                )));
            }
            let zone = Zone {
                bound,
                min: mins.get(i).map(|k| k.to_key()),
                max: maxs.get(i).map(|k| k.to_key()),
                null_count: nulls[i],
                nan_count: nans[i],
            };
            if let (Some(a), Some(b)) = (&zone.min, &zone.max) {
                if a > b {
                    return Err(Error::corrupt(format!("zone {i}: min {a} above max {b}")));
                }
            }
            approx_bytes += 96 + key_len(&zone.min) + key_len(&zone.max);
            zones.push(zone);
        }
        Ok(Self {
            zones,
            null_buffer,
            approx_bytes,
        })
    }

    /// Check that the zones of existing fragments stay inside them (`physical_rows` of a
    /// fragment id; `None`: the fragment no longer exists and its zones are ignored).
    pub(crate) fn check_fragments(&self, physical_rows: &dyn Fn(u32) -> Option<u64>) -> Result<()> {
        for (i, z) in self.zones.iter().enumerate() {
            if let Some(rows) = physical_rows(z.bound.fragment) {
                if z.bound.start + z.bound.length > rows {
                    return Err(Error::corrupt(format!(
                        "zone {i} (rows {}+{}) leaves fragment {} of {rows} rows",
                        z.bound.start, z.bound.length, z.bound.fragment
                    )));
                }
            }
        }
        Ok(())
    }
}

fn key_len(k: &Option<Key>) -> usize {
    match k {
        Some(Key::Bytes(b)) => b.len(),
        _ => 0,
    }
}

/// Whether a zone may hold a row where `query` is TRUE (conservative: never `false` for a
/// zone that does).
pub(crate) fn zone_may_match(zone: &Zone, query: &LeafQuery) -> bool {
    let comparable = zone.bound.length > zone.null_count + zone.nan_count;
    match query {
        LeafQuery::IsNull => zone.null_count > 0,
        LeafQuery::AlwaysNull => false,
        LeafQuery::Equals(v) => value_may_be_in(zone, v, comparable),
        LeafQuery::In { values, .. } => values.iter().any(|v| value_may_be_in(zone, v, comparable)),
        LeafQuery::Range { lower, upper } => {
            if zone.nan_count > 0 && bound_admits_nan(upper) {
                return true;
            }
            let (Some(min), Some(max)) = (low(&zone.min), high(&zone.max)) else {
                return comparable;
            };
            let above = match lower {
                Bound::Unbounded => true,
                Bound::Included(k) => max >= *k,
                Bound::Excluded(k) => max > *k,
            };
            let below = match upper {
                Bound::Unbounded => true,
                Bound::Included(k) => min <= *k,
                Bound::Excluded(k) => min < *k,
            };
            above && below
        }
    }
}

fn value_may_be_in(zone: &Zone, v: &Key, comparable: bool) -> bool {
    if matches!(v, Key::Float(f) if f.is_nan()) {
        return zone.nan_count > 0
            || zone
                .max
                .as_ref()
                .is_some_and(|m| matches!(m, Key::Float(f) if f.is_nan()));
    }
    match (low(&zone.min), high(&zone.max)) {
        (Some(min), Some(max)) => min <= *v && *v <= max,
        _ => comparable,
    }
}

/// An upper bound NaN could satisfy (NaN sorts above every number).
fn bound_admits_nan(upper: &Bound<Key>) -> bool {
    match upper {
        Bound::Unbounded => true,
        Bound::Included(Key::Float(f)) | Bound::Excluded(Key::Float(f)) => f.is_nan(),
        _ => false,
    }
}

/// The zone's min, widened so a zero of either sign counts as -0.0.
fn low(k: &Option<Key>) -> Option<Key> {
    match k {
        Some(Key::Float(f)) if *f == 0.0 => Some(Key::Float(-0.0)),
        other => other.clone(),
    }
}

/// The zone's max, widened so a zero of either sign counts as +0.0.
fn high(k: &Option<Key>) -> Option<Key> {
    match k {
        Some(Key::Float(f)) if *f == 0.0 => Some(Key::Float(0.0)),
        other => other.clone(),
    }
}

/// The truth values `query` may take on the rows of `zone`.
pub(crate) fn zone_possible(zone: &Zone, query: &LeafQuery) -> Possible {
    let has_values = zone.bound.length > zone.null_count;
    let has_nulls = zone.null_count > 0;
    match query {
        LeafQuery::IsNull => Possible {
            t: has_nulls,
            f: has_values,
            n: false,
        },
        LeafQuery::AlwaysNull => Possible {
            t: false,
            f: false,
            n: true,
        },
        LeafQuery::In { has_null: true, .. } => Possible {
            t: zone_may_match(zone, query),
            f: false,
            n: true,
        },
        _ => Possible {
            t: zone_may_match(zone, query),
            f: has_values && zone_may_be_false(zone, query),
            n: has_nulls,
        },
    }
}

/// Whether some non-null row of the zone may make `query` FALSE (conservative).
fn zone_may_be_false(zone: &Zone, query: &LeafQuery) -> bool {
    if zone.nan_count > 0 {
        return true;
    }
    let (Some(min), Some(max)) = (low(&zone.min), high(&zone.max)) else {
        return true;
    };
    match query {
        LeafQuery::Equals(v) => !(min == *v && max == *v),
        LeafQuery::In { values, .. } => !(min == max && values.contains(&min)),
        LeafQuery::Range { lower, upper } => {
            let min_in = match lower {
                Bound::Unbounded => true,
                Bound::Included(k) => min >= *k,
                Bound::Excluded(k) => min > *k,
            };
            let max_in = match upper {
                Bound::Unbounded => true,
                Bound::Included(k) => max <= *k,
                Bound::Excluded(k) => max < *k,
            };
            !(min_in && max_in)
        }
        LeafQuery::IsNull | LeafQuery::AlwaysNull => false,
    }
}
