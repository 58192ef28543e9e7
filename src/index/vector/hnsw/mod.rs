//! HNSW sub-indices (IVF_HNSW_FLAT, IVF_HNSW_SQ, IVF_HNSW_PQ): each IVF partition's
//! graph lives in `index.idx` (rows located by that file's own IVF message, levels by
//! `lance:hnsw`), its vectors or codes in `auxiliary.idx` like the flat sub-index's.
//! [`graph`] decodes and validates, [`traverse`] searches as lance does, [`scorer`]
//! gives single-row distances; this module ties them to a segment's files.

pub(crate) mod graph;
pub(crate) mod scorer;
pub(crate) mod traverse;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::RecordBatch;

use self::graph::{decode_graph, decode_hnsw_meta, HnswGraph, HnswMeta};
use self::graph::{NEIGHBORS_COLUMN, VECTOR_ID_COLUMN};
use self::scorer::Scorer;
use self::traverse::{search, HnswQuery};
use super::format::{decode_ivf, partition_ranges, Metric, Quantizer};
use super::partition::Partition;
use crate::error::{Error, Result};
use crate::io::IoStats;
use crate::lance::data_file::DataFileReader;
use crate::lance::selection::RowSelection;

/// The graph side of an HNSW segment: `index.idx`, where each partition's rows are, and
/// each partition's levels and entry point.
#[derive(Debug, Clone)]
pub(crate) struct GraphFile {
    /// The reader of `index.idx`.
    pub file: DataFileReader,
    /// Graph rows of each partition in `index.idx`.
    pub rows: Vec<Range<u64>>,
    /// Each partition's HNSW metadata.
    pub meta: Vec<HnswMeta>,
    /// Fields read: `__vector_id`, `__neighbors` (not the stored `_distance`s).
    pub columns: [usize; 2],
}

impl GraphFile {
    /// Decode the graph layout of `index.idx` (`file`) from its schema metadata and the
    /// bytes of its IVF message (which holds the partitions' graph row ranges).
    pub(crate) fn open(
        file: DataFileReader,
        metadata: &HashMap<String, String>,
        ivf: &[u8],
    ) -> Result<Self> {
        let at = |e: Error| e.at(file.path().as_ref(), None);
        let ivf = decode_ivf(ivf).map_err(at)?;
        let rows = partition_ranges(&ivf, file.num_rows()).map_err(at)?;
        let meta = decode_hnsw_meta(metadata, &rows).map_err(at)?;
        let columns = file.field_indices(&[VECTOR_ID_COLUMN, NEIGHBORS_COLUMN])?;
        Ok(Self {
            rows,
            meta,
            columns: [columns[0], columns[1]],
            file,
        })
    }

    /// Bytes held (for the cache weigher).
    pub(crate) fn size_bytes(&self) -> usize {
        self.rows.len() * 16
            + self
                .meta
                .iter()
                .map(|m| m.level_offsets.len() * 8 + 16)
                .sum::<usize>()
    }

    /// Read the graph rows of `partitions` (sorted, distinct ids) in one read: a batch
    /// holding them in that order, `None` when they hold no rows.
    pub(crate) async fn read(
        &self,
        partitions: &[usize],
        stats: &IoStats,
    ) -> Result<Option<RecordBatch>> {
        let rows: Vec<u64> = partitions
            .iter()
            .filter_map(|&p| self.rows.get(p).cloned())
            .flatten()
            .collect();
        if rows.is_empty() {
            return Ok(None);
        }
        let selection = RowSelection::Rows(rows);
        self.file
            .read_rows(&self.columns, &selection, stats)
            .await
            .map(Some)
    }

    /// Decode partition `p`'s graph from `batch` rows `at..` (as [`Self::read`] returned
    /// them), over `storage_rows` stored vectors; `Corrupt` naming `index.idx`.
    pub(crate) fn decode(
        &self,
        batch: Option<&RecordBatch>,
        at: usize,
        p: usize,
        storage_rows: usize,
    ) -> Result<HnswGraph> {
        let named = |e: Error| {
            e.context(format!("partition {p}"))
                .at(self.file.path().as_ref(), None)
        };
        let meta = self
            .meta
            .get(p)
            .ok_or_else(|| named(Error::corrupt("no HNSW metadata")))?;
        let len = meta.rows() as usize;
        let slice = match batch {
            Some(b) if at + len <= b.num_rows() => b.slice(at, len),
            Some(_) => {
                return Err(named(Error::corrupt(
                    "fewer graph rows read than the partitions hold",
                )))
            }
            None if len == 0 => {
                return decode_graph(&empty_graph_batch(), meta, storage_rows).map_err(named)
            }
            None => return Err(named(Error::corrupt("graph rows not read"))),
        };
        decode_graph(&slice, meta, storage_rows).map_err(named)
    }
}

/// A graph batch of no rows.
fn empty_graph_batch() -> RecordBatch {
    use arrow_array::{ListArray, UInt32Array};
    use arrow_schema::{DataType, Field, Schema};
    let item = Arc::new(Field::new("item", DataType::UInt32, true));
    let schema = Schema::new(vec![
        Field::new(VECTOR_ID_COLUMN, DataType::UInt32, true),
        Field::new(NEIGHBORS_COLUMN, DataType::List(Arc::clone(&item)), true),
    ]);
    let ids = UInt32Array::from(Vec::<u32>::new());
    let lists = ListArray::new_null(item, 0);
    RecordBatch::try_new(Arc::new(schema), vec![Arc::new(ids), Arc::new(lists)])
        .unwrap_or_else(|_| RecordBatch::new_empty(Arc::new(Schema::empty())))
}

/// The effective `ef` of a search for `k` rows (the query's `k` times its refine
/// factor): the one asked, else lance's default `k + k / 2`; an `ef` below `k` is refused
/// as pylance refuses it.
pub(crate) fn effective_ef(ef: Option<usize>, k: usize) -> Result<usize> {
    let ef = ef.unwrap_or(k + k / 2);
    if ef < k {
        return Err(Error::InvalidArgument(format!(
            "ef must be greater than or equal to k (ef {ef}, k {k} including the refine factor)"
        )));
    }
    Ok(ef)
}

/// Search one partition's graph: `(row id, distance)` nearest first, at most `k`; rows
/// failing `admitted` are never returned (lance's prefilter: deletions and a prefilter),
/// and the count of distances computed.
#[allow(clippy::too_many_arguments)]
pub(crate) fn search_partition(
    graph: &HnswGraph,
    part: &Partition,
    quantizer: &Quantizer,
    metric: Metric,
    query: &[f32],
    centroid: &[f32],
    half_precision: bool,
    params: &HnswQuery,
    admitted: impl Fn(u64) -> bool,
) -> Result<(Vec<(u64, f32)>, u64)> {
    let scorer = Scorer::new(part, quantizer, metric, query, centroid, half_precision)?;
    let mask: Vec<bool> = part.row_ids.iter().map(|&r| admitted(r)).collect();
    let mut computed = 0u64;
    let mut distance = |id: u32| {
        computed += 1;
        scorer.distance(id)
    };
    let nodes = search(graph, params, Some(&mask), &mut distance);
    let mut seen = std::collections::HashSet::new();
    let hits = nodes
        .into_iter()
        .filter_map(|n| part.row_ids.get(n.id as usize).map(|&r| (r, n.dist)))
        .filter(|(r, _)| seen.insert(*r))
        .collect();
    Ok((hits, computed))
}
