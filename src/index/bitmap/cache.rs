//! The session caches of the bitmap-family, zone-map and bloom-filter readers: everything
//! they decode is kept by object path + version, weighed by size, so a warm repeat of a
//! query reads nothing it has read before.

use super::search::KeySamples;
use super::treemap::RowSet;
use crate::index::bloom::BloomIndex;
use crate::index::zonemap::ZoneMap;
use crate::io::cache::{DeepSize, SizedCache};

/// Caches of the scalar index readers other than the BTree.
#[derive(Debug, Clone)]
pub(crate) struct ScalarIndexCaches {
    /// Keys of a bitmap lookup read so far (binary-search samples and brackets).
    pub(crate) bitmap_keys: SizedCache<(), KeySamples>,
    /// Decoded row sets of a bitmap lookup, by row (`u64::MAX - n`: global buffer `n`).
    pub(crate) row_sets: SizedCache<u64, RowSet>,
    /// Decoded zone maps.
    pub(crate) zone_maps: SizedCache<(), ZoneMap>,
    /// Decoded bloom-filter indices.
    pub(crate) blooms: SizedCache<(), BloomIndex>,
}

impl ScalarIndexCaches {
    /// The caches of `session` (kept in its extensions; created with the session's
    /// budget on first use).
    pub(crate) fn of(session: &crate::lance::dataset::DatasetSession) -> std::sync::Arc<Self> {
        session
            .extensions
            .get_or_init(|| Self::new(session.cache_bytes))
    }

    /// Caches holding about `capacity_bytes` each.
    pub(crate) fn new(capacity_bytes: u64) -> Self {
        Self {
            bitmap_keys: SizedCache::new(capacity_bytes),
            row_sets: SizedCache::new(capacity_bytes),
            zone_maps: SizedCache::new(capacity_bytes),
            blooms: SizedCache::new(capacity_bytes),
        }
    }
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
