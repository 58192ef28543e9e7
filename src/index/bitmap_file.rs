//! The bitmap lookup file and the serialized row sets several index kinds read: the
//! BITMAP and LABEL_LIST kinds store `bitmap_page_lookup.lance` (column `keys`, one row
//! per distinct value, and column `bitmaps`, each value a serialized `RowAddrTreeMap`, see
//! [`treemap`]); zone maps, bloom filters and label lists keep exact null rows as one such
//! row set in a global buffer ([`exec::read_buffer_row_set`]).
//!
//! * [`exec`]: opening the lookup (through the session caches), the key search, reading
//!   row sets;
//! * [`search`]: the probe search over sorted keys;
//! * [`treemap`]: decoding `RowAddrTreeMap`;
//! * [`cache`]: the session caches of keys and row sets.

pub(crate) mod cache;
pub(crate) mod exec;
pub(crate) mod search;
pub(crate) mod treemap;

use roaring::RoaringTreemap;

use crate::index::kind::row_ids::row_id_addresses;
use crate::lance::dataset::DatasetVersion;
use treemap::RowSet;

/// An exact answer of one index for one test on its column.
#[derive(Debug, Clone, Default)]
pub(crate) struct ExactAnswer {
    /// Row addresses where the test is TRUE.
    pub(crate) true_rows: RoaringTreemap,
    /// Row addresses where it is NULL (ignored when `others_null`).
    pub(crate) null_rows: RoaringTreemap,
    /// Every row not in `true_rows` is NULL (`x IN (.., NULL)`, comparisons with NULL).
    pub(crate) others_null: bool,
    /// What was read.
    pub(crate) read: ReadSummary,
}

/// What answering read (for `--explain` and tests).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ReadSummary {
    /// Lookup keys read from the file (cached ones not counted).
    pub(crate) keys_read: u64,
    /// Search rounds that read keys.
    pub(crate) search_rounds: u32,
    /// Row sets (bitmaps) used.
    pub(crate) bitmaps: u64,
    /// Distinct keys in the lookup.
    pub(crate) lookup_keys: u64,
}

impl ReadSummary {
    /// Add what another segment's answer read (rounds run side by side: the most).
    pub(crate) fn add(&mut self, other: &ReadSummary) {
        self.keys_read += other.keys_read;
        self.search_rounds = self.search_rounds.max(other.search_rounds);
        self.bitmaps += other.bitmaps;
        self.lookup_keys += other.lookup_keys;
    }
}

/// Row addresses of a row set; `Full` fragments expand to the fragment's current rows.
pub(crate) fn addresses(dataset: &DatasetVersion, set: &RowSet) -> RoaringTreemap {
    let manifest = dataset.manifest();
    set.to_addresses(&|f| manifest.fragment(u64::from(f)).map(|fr| fr.physical_rows))
}

/// The row addresses of a row set read from `file`: [`addresses`], or, when the file's
/// sets hold stable row ids, the rows of its covered fragments with those ids.
pub(crate) fn file_addresses(
    dataset: &DatasetVersion,
    file: &exec::BitmapFile,
    set: &RowSet,
) -> RoaringTreemap {
    match &file.row_ids {
        None => addresses(dataset, set),
        Some(fragments) => row_id_addresses(dataset, fragments, &set.to_row_ids()),
    }
}

/// A read summary as explain JSON.
pub(crate) fn read_json(r: &ReadSummary) -> serde_json::Value {
    serde_json::json!({
        "lookup_keys": r.lookup_keys,
        "keys_read": r.keys_read,
        "search_rounds": r.search_rounds,
        "bitmaps_read": r.bitmaps,
        "cached_pages": 0,
    })
}
