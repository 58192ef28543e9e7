//! The vector part of [`Dataset::describe`](super::Dataset::describe): each vector index's
//! type, metric, partitions, quantizer (sub-vectors and bits) and size, read from its first
//! segment's files through the session's vector cache (so a later query of the same
//! session opens nothing again).

use serde::Serialize;

use crate::error::Result;
use crate::index::vector::caches::vector_cache;
use crate::index::vector::format::Quantizer;
use crate::index::vector::search::{cached_open, is_vector_segment};
use crate::index::vector::segment::OpenSegment;
use crate::io::IoStats;
use crate::lance::dataset::{DatasetVersion, IndexSegment};

/// What a vector index is, in an [`IndexDescription`](crate::IndexDescription).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct VectorIndexDescription {
    /// Index type as the index records it (`"IVF_PQ"`, `"IVF_FLAT"`, `"IVF_HNSW_SQ"`, …);
    /// `None` when its files could not be read (see `error`).
    pub index_type: Option<String>,
    /// Distance metric (`"l2"`, `"cosine"`, `"dot"`, `"hamming"`).
    pub metric: Option<String>,
    /// IVF partitions (of the first segment).
    pub partitions: Option<usize>,
    /// Vector dimension.
    pub dim: Option<usize>,
    /// Quantizer: `"FLAT"` (raw vectors), `"PQ"` or `"SQ"`.
    pub quantizer: Option<String>,
    /// PQ sub-vectors.
    pub sub_vectors: Option<usize>,
    /// Bits per code (PQ: 8 or 4; SQ: 8).
    pub bits: Option<u32>,
    /// Rows indexed (all segments, as far as they were read).
    pub rows: Option<u64>,
    /// Bytes of the index files of every segment, as the manifest records them.
    pub size_bytes: u64,
    /// Why the segment's files were not described (an index kind lakeseek does not read
    /// yet, or a file that does not decode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A [`VectorIndexDescription`] for each index name that is a vector index (`None` for
/// the others): the first segment of each opened (all in one go, through the session's
/// vector cache).
pub(crate) async fn describe_vectors(
    version: &DatasetVersion,
    names: &[&str],
    stats: &IoStats,
) -> Vec<Option<VectorIndexDescription>> {
    let manifest = version.manifest();
    let caches = vector_cache(version);
    let opens = names.iter().map(|name| {
        let segments: Vec<&IndexSegment> = manifest
            .indices
            .iter()
            .filter(|s| s.name == *name && is_vector_segment(s))
            .collect();
        let caches = &caches;
        async move {
            let first = segments.first()?;
            let size_bytes = segments
                .iter()
                .flat_map(|s| &s.files)
                .map(|f| f.size_bytes)
                .sum();
            let opened = cached_open(version, first, caches, stats).await;
            Some(describe(opened, size_bytes))
        }
    });
    futures::future::join_all(opens).await
}

/// The description of an opened (or failed) first segment.
fn describe(opened: Result<OpenSegment>, size_bytes: u64) -> VectorIndexDescription {
    let open = match opened {
        Ok(open) => open,
        Err(e) => {
            return VectorIndexDescription {
                index_type: None,
                metric: None,
                partitions: None,
                dim: None,
                quantizer: None,
                sub_vectors: None,
                bits: None,
                rows: None,
                size_bytes,
                error: Some(e.to_string()),
            }
        }
    };
    let (quantizer, sub_vectors, bits) = match &*open.quantizer {
        Quantizer::Flat { .. } => ("FLAT", None, None),
        Quantizer::Pq(pq) => ("PQ", Some(pq.num_sub_vectors), Some(pq.num_bits)),
        Quantizer::Sq { .. } => ("SQ", None, Some(8)),
        Quantizer::Rq(rq) => ("RQ", None, Some(rq.num_bits.into())),
    };
    VectorIndexDescription {
        index_type: Some(open.header.index_type.clone()),
        metric: Some(open.header.metric.name().to_string()),
        partitions: Some(open.partitions.len()),
        dim: Some(open.header.centroids.dim),
        quantizer: Some(quantizer.to_string()),
        sub_vectors,
        bits,
        rows: Some(open.partitions.iter().map(|r| r.end - r.start).sum()),
        size_bytes,
        error: None,
    }
}
