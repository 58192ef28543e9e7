//! The session caches of the bitmap-family, zone-map and bloom-filter readers: everything
//! they decode is kept by object path + version, weighed by size, so a warm repeat of a
//! query reads nothing it has read before.

use super::search::KeySamples;
use super::treemap::RowSet;
use crate::index::caches::session_cache;
use crate::io::budget::CacheShare;
use crate::io::cache::{DeepSize, SizedCache};
use crate::lance::dataset::DatasetVersion;

/// The session's cache of the keys of a bitmap lookup read so far (binary-search samples
/// and brackets).
pub(crate) fn key_cache(dataset: &DatasetVersion) -> SizedCache<(), KeySamples> {
    session_cache(dataset.session(), CacheShare::BitmapKeys)
}

/// The session's cache of decoded row sets of a bitmap lookup, by row (`u64::MAX - n`:
/// global buffer `n`).
pub(crate) fn row_set_cache(dataset: &DatasetVersion) -> SizedCache<u64, RowSet> {
    session_cache(dataset.session(), CacheShare::BitmapRowSets)
}

impl DeepSize for KeySamples {
    fn deep_size(&self) -> usize {
        64 + self.bytes
    }
}

impl DeepSize for RowSet {
    fn deep_size(&self) -> usize {
        self.approx_bytes()
    }
}
