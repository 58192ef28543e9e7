//! The session cache of vector indices: opened segments (centroids, partition ranges,
//! codebook) and decoded partitions, in one cache of the session's
//! [`CacheShare::VectorIndices`] share, keyed by the `auxiliary.idx` path and size.

use std::sync::Arc;

use super::partition::Partition;
use super::segment::OpenSegment;
use crate::index::caches::session_cache;
use crate::io::budget::CacheShare;
use crate::io::cache::{CacheKey, DeepSize, SizedCache};
use crate::io::ObjectVersion;
use crate::lance::dataset::DatasetVersion;

/// What the cache holds.
#[derive(Debug, Clone)]
pub(crate) enum VectorEntry {
    /// An opened segment (key item `None`).
    Segment(Box<OpenSegment>),
    /// A decoded partition (key item `Some(partition id)`).
    Partition(Arc<Partition>),
}

impl DeepSize for VectorEntry {
    fn deep_size(&self) -> usize {
        match self {
            Self::Segment(s) => s.size_bytes(),
            Self::Partition(p) => p.size_bytes(),
        }
    }
}

/// The session's vector index cache.
pub(crate) type VectorCache = SizedCache<Option<usize>, VectorEntry>;

/// The vector index cache of `dataset`'s session.
pub(crate) fn vector_cache(dataset: &DatasetVersion) -> VectorCache {
    session_cache(dataset.session(), CacheShare::VectorIndices)
}

/// The key of `item` of the segment whose `auxiliary.idx` is `path` of `size` bytes.
pub(crate) fn key(path: &str, size: u64, item: Option<usize>) -> CacheKey<Option<usize>> {
    CacheKey {
        path: path.to_string(),
        version: ObjectVersion { size, etag: None },
        item,
    }
}
