//! The BLOOMFILTER scalar index (pylance 14 `lance-index/src/scalar/bloomfilter.rs`):
//! inexact, one split-block bloom filter per zone.
//!
//! One file, `bloomfilter.lance` (Lance 2.2), one row per zone: `fragment_id`,
//! `zone_start`, `zone_length` (UInt64), `has_null` (Boolean), `bloom_filter_data`
//! (Binary: the filter's 32-byte blocks, eight little-endian u32 words each). Schema
//! metadata: `bloomfilter_item` (rows per zone), `bloomfilter_probability`, and
//! `null_bitmap` (global buffer of the exact null rows, a serialized `RowAddrTreeMap`).
//!
//! A value is hashed with XxHash64 (seed 0) over its little-endian bytes at the column's
//! width (strings and binaries: their bytes) — the Parquet SBBF scheme lance copies
//! (`lance-core/src/utils/bloomfilter/sbbf.rs`).

pub(crate) mod exec;
pub(crate) mod kind;
pub(crate) mod sbbf;

#[cfg(test)]
mod tests;

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;

use crate::error::{Error, Result};
use crate::index::key::Key;
use crate::index::zones::{decode_bounds, ZoneBound};
use crate::io::cache::DeepSize;
use sbbf::Sbbf;

/// Type names (after the last '/') of BLOOMFILTER index details.
pub(crate) const BLOOM_DETAILS_TYPES: [&str; 2] = [
    "lance.table.BloomFilterIndexDetails",
    "lance.index.pb.BloomFilterIndexDetails",
];
/// File name of a bloom-filter index.
pub(crate) const BLOOM_FILE: &str = "bloomfilter.lance";

/// One zone's filter.
#[derive(Debug, Clone)]
pub(crate) struct BloomZone {
    /// Where it is.
    pub(crate) bound: ZoneBound,
    /// Whether the zone has null values.
    pub(crate) has_null: bool,
    /// The filter.
    pub(crate) filter: Sbbf,
}

/// A decoded bloom-filter index.
#[derive(Debug, Clone)]
pub(crate) struct BloomIndex {
    /// Zones sorted by (fragment, start), non-overlapping.
    pub(crate) zones: Vec<BloomZone>,
    /// Global buffer of the exact null rows, if any.
    pub(crate) null_buffer: Option<usize>,
    bytes: usize,
}

impl DeepSize for BloomIndex {
    fn deep_size(&self) -> usize {
        self.bytes
    }
}

impl BloomIndex {
    /// Decode a whole `bloomfilter.lance` batch: every filter a positive multiple of 32
    /// bytes and all of one size, zones in order and not overlapping.
    pub(crate) fn decode(batch: &RecordBatch, null_buffer: Option<usize>) -> Result<Self> {
        let bounds = decode_bounds(batch, "bloom filter index")?;
        let has_null = batch
            .column_by_name("has_null")
            .and_then(|a| a.as_boolean_opt().cloned())
            .ok_or_else(|| {
                Error::corrupt("bloom filter index has no Boolean \"has_null\" column")
            })?;
        let data = batch
            .column_by_name("bloom_filter_data")
            .and_then(|a| a.as_binary_opt::<i32>().cloned())
            .ok_or_else(|| {
                Error::corrupt("bloom filter index has no Binary \"bloom_filter_data\" column")
            })?;
        let mut zones: Vec<BloomZone> = Vec::with_capacity(batch.num_rows());
        let mut size: Option<usize> = None;
        let mut bytes = 64;
        for (i, bound) in bounds.into_iter().enumerate() {
            let raw: &[u8] = if data.is_null(i) { &[] } else { data.value(i) };
            if *size.get_or_insert(raw.len()) != raw.len() {
                return Err(Error::corrupt(format!(
                    "zone {i}: bloom filter of {} bytes, the first zone's has {}",
                    raw.len(),
                    size.unwrap_or_default()
                )));
            }
            let filter = Sbbf::new(raw).map_err(|e| e.context(format!("zone {i}")))?;
            bytes += 64 + raw.len();
            zones.push(BloomZone {
                bound,
                has_null: has_null.value(i),
                filter,
            });
        }
        Ok(Self {
            zones,
            null_buffer,
            bytes,
        })
    }
}

/// The bytes lance hashes for `key` in a column of `data_type` (`None`: not hashed).
pub(crate) fn value_bytes(key: &Key, data_type: &DataType) -> Option<Vec<u8>> {
    use DataType::*;
    Some(match (key, data_type) {
        (Key::Int(v), Int8) => vec![*v as i8 as u8],
        (Key::Int(v), Int16) => (*v as i16).to_le_bytes().to_vec(),
        (Key::Int(v), Int32 | Date32 | Time32(_)) => (*v as i32).to_le_bytes().to_vec(),
        (Key::Int(v), Int64 | Date64 | Time64(_) | Timestamp(_, _)) => v.to_le_bytes().to_vec(),
        (Key::UInt(v), UInt8) => vec![*v as u8],
        (Key::UInt(v), UInt16) => (*v as u16).to_le_bytes().to_vec(),
        (Key::UInt(v), UInt32) => (*v as u32).to_le_bytes().to_vec(),
        (Key::UInt(v), UInt64) => v.to_le_bytes().to_vec(),
        (Key::Float(v), Float32) => (*v as f32).to_le_bytes().to_vec(),
        (Key::Float(v), Float64) => v.to_le_bytes().to_vec(),
        (Key::Bytes(b), Utf8 | LargeUtf8 | Binary | LargeBinary) => b.to_vec(),
        _ => return None,
    })
}
