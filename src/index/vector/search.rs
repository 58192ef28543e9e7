//! The nearest-neighbour query over a dataset: choose the column's vector index segments,
//! probe each segment's nearest partitions, score them, drop deleted and filtered rows,
//! search the fragments no segment covers exactly, refine, merge, keep `k`.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float16Type, Float32Type, Float64Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use roaring::{RoaringBitmap, RoaringTreemap};

use super::caches::{key, VectorCache, VectorEntry};
use super::distance;
use super::format::{Metric, Quantizer};
use super::hnsw::traverse::HnswQuery;
use super::hnsw::{effective_ef, search_partition};
use super::partition::{index_query, score, Codes, Partition};
use super::pipeline::{cached_partitions, score_probed};
use super::probes::{initial_probes, ProbeRequest};
use super::rq;
use super::segment::{open_segment, read_partitions, OpenSegment, PartitionStore};
use crate::error::{Error, Result};
use crate::index::kind::row_ids::RowIdResolver;
use crate::io::IoStats;
use crate::lance::dataset::take::take_rows;
use crate::lance::dataset::{DatasetVersion, DeletionVector, IndexSegment};

/// Largest `k` accepted.
pub(crate) const MAX_K: usize = 100_000;
/// Name of the system index that defers row address remapping after compaction.
const FRAG_REUSE_INDEX: &str = "__lance_frag_reuse";

/// What to search for and how.
#[derive(Debug, Clone)]
pub(crate) struct NearestParams {
    /// The vector column.
    pub column: String,
    /// The query vector.
    pub query: Vec<f32>,
    /// Rows to return.
    pub k: usize,
    /// Partitions searched at least (per segment).
    pub minimum_nprobes: usize,
    /// Partitions searched at most, when the first ones gave fewer than `k` rows.
    pub maximum_nprobes: Option<usize>,
    /// Re-rank `k * refine` candidates with exact distances read from the data.
    pub refine_factor: Option<u32>,
    /// Search only what the index covers (no exact search of unindexed fragments).
    pub fast_search: bool,
    /// Ignore the index: exact search over every row.
    pub use_index: bool,
    /// Search exactly when the column has no vector index.
    pub allow_scan: bool,
    /// Keep rows with `lower <= distance < upper`.
    pub distance_range: (Option<f32>, Option<f32>),
    /// The metric of an exact search without an index (default L2; an index's own metric
    /// otherwise).
    pub metric: Option<Metric>,
    /// The column holds f16 vectors: lance computes PQ residuals in f16.
    pub half_precision: bool,
    /// HNSW's beam width (default `k * refine + (k * refine) / 2`, as lance).
    pub ef: Option<usize>,
    /// The column holds f32 vectors (set by the search; pylance's probing depends on it).
    pub float32: bool,
}

/// The rows a filter allows, and whether it applies before the search or after it.
#[derive(Debug, Clone)]
pub(crate) struct RowFilter {
    /// Allowed row addresses.
    pub allowed: RoaringTreemap,
    /// Apply after the search (`k` candidates, then the filter).
    pub postfilter: bool,
}

/// One result row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Hit {
    /// Row address.
    pub row: u64,
    /// Distance (approximate unless refined or searched exactly).
    pub distance: f32,
}

/// How the query ran (for `explain` and tests).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub(crate) struct NearestReport {
    /// The index searched (none for an exact search).
    pub index: Option<String>,
    /// Index type (`IVF_PQ`, …).
    pub index_type: Option<String>,
    /// Metric.
    pub metric: String,
    /// Segments searched.
    pub segments: usize,
    /// Partitions probed, over all segments.
    pub partitions_probed: usize,
    /// Partitions served from the session cache.
    pub partitions_cached: usize,
    /// Rows scored from the index (for HNSW: distances computed in the graph search).
    pub rows_scored: u64,
    /// Fragments no segment covers, searched exactly.
    pub unindexed_fragments: Vec<u64>,
    /// Candidates re-ranked with exact distances.
    pub refined: usize,
    /// The beam width of an HNSW sub-index's search (none for other kinds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ef: Option<usize>,
}

/// The answer: hits nearest first, and how they were found.
#[derive(Debug, Clone)]
pub(crate) struct NearestAnswer {
    /// Hits, nearest first (ties by row address).
    pub hits: Vec<Hit>,
    /// How.
    pub report: NearestReport,
}

/// Validate the parameters against the dataset: the column, its type and dimension.
pub(crate) fn check_params(dataset: &DatasetVersion, p: &NearestParams) -> Result<(i32, DataType)> {
    if p.k == 0 || p.k > MAX_K {
        return Err(Error::InvalidArgument(format!(
            "k must be 1..={MAX_K}, got {}",
            p.k
        )));
    }
    if p.query.iter().any(|v| !v.is_finite()) {
        return Err(Error::InvalidArgument(
            "the query vector holds NaN or infinite values".into(),
        ));
    }
    if p.minimum_nprobes == 0 {
        return Err(Error::InvalidArgument("nprobes must be at least 1".into()));
    }
    if p.maximum_nprobes.is_some_and(|m| m < p.minimum_nprobes) {
        return Err(Error::InvalidArgument(
            "maximum_nprobes must be >= minimum_nprobes".into(),
        ));
    }
    if p.refine_factor == Some(0) {
        return Err(Error::InvalidArgument(
            "refine factor must be 1 or more".into(),
        ));
    }
    let schema = &dataset.manifest().schema;
    let field = schema.field_by_path(&p.column).ok_or_else(|| {
        Error::InvalidArgument(format!("no column {:?} in the dataset", p.column))
    })?;
    let (dim, item_type) = match schema.arrow_type(field.id)? {
        DataType::FixedSizeList(item, n)
            if matches!(
                item.data_type(),
                DataType::Float16 | DataType::Float32 | DataType::Float64 | DataType::UInt8
            ) =>
        {
            (n as usize, item.data_type().clone())
        }
        other => {
            return Err(Error::InvalidArgument(format!(
            "column {:?} is {other}, not a fixed-size list of floats or uint8 (a vector column)",
            p.column
        )))
        }
    };
    check_binary(p, &item_type)?;
    if p.query.len() != dim {
        return Err(Error::InvalidArgument(format!(
            "the query has {} dimensions, column {:?} holds vectors of {dim}",
            p.query.len(),
            p.column
        )));
    }
    Ok((field.id, item_type))
}

/// Binary (uint8) vectors take hamming only, and queries of whole bytes; hamming takes
/// binary vectors only.
fn check_binary(p: &NearestParams, item_type: &DataType) -> Result<()> {
    let binary = *item_type == DataType::UInt8;
    match p.metric {
        Some(m) if binary && m != Metric::Hamming => {
            return Err(Error::InvalidArgument(format!(
                "distance type {} does not support uint8 vectors (column {:?}): use hamming",
                m.name(),
                p.column
            )))
        }
        Some(Metric::Hamming) if !binary => {
            return Err(Error::InvalidArgument(format!(
                "hamming distance needs uint8 (binary) vectors; column {:?} holds {item_type}",
                p.column
            )))
        }
        _ => {}
    }
    if binary
        && p.query
            .iter()
            .any(|v| v.fract() != 0.0 || !(0.0..=255.0).contains(v))
    {
        return Err(Error::InvalidArgument(format!(
            "column {:?} holds uint8 vectors: the query's values must be whole numbers 0..=255",
            p.column
        )));
    }
    Ok(())
}

/// The vector index segments on field `field_id` (the deltas of the first such index).
pub(crate) fn vector_segments(dataset: &DatasetVersion, field_id: i32) -> Vec<IndexSegment> {
    let indices = &dataset.manifest().indices;
    let first = indices
        .iter()
        .find(|s| s.fields == [field_id] && is_vector_segment(s));
    match first {
        Some(f) => indices
            .iter()
            .filter(|s| s.name == f.name && s.fields == [field_id] && is_vector_segment(s))
            .cloned()
            .collect(),
        None => Vec::new(),
    }
}

/// Whether `segment` is a vector index (its details say so, or it has none).
pub(crate) fn is_vector_segment(segment: &IndexSegment) -> bool {
    // Older writers (pylance 0.18) record no details: an index on a vector column is a
    // vector index (the caller matches the column).
    segment
        .type_name()
        .is_none_or(|t| t.ends_with("VectorIndexDetails"))
}

/// Run the query.
pub(crate) async fn nearest(
    dataset: &DatasetVersion,
    params: &NearestParams,
    filter: Option<&RowFilter>,
    caches: &VectorCache,
    stats: &IoStats,
) -> Result<NearestAnswer> {
    let (field_id, item_type) = check_params(dataset, params)?;
    let mut typed = params.clone();
    typed.float32 = item_type == DataType::Float32;
    if item_type == DataType::Float16 {
        // Lance casts the query to the column's type: f16 precision.
        typed.query = params
            .query
            .iter()
            .map(|&v| half::f16::from_f32(v).to_f32())
            .collect();
        typed.half_precision = true;
    }
    let params = &typed;
    let manifest = dataset.manifest();
    if manifest.indices.iter().any(|s| s.name == FRAG_REUSE_INDEX) {
        return Err(Error::unsupported(
            "nearest queries on a dataset with a fragment reuse index (deferred remapping)",
        ));
    }
    let mut segments = if params.use_index {
        vector_segments(dataset, field_id)
    } else {
        Vec::new()
    };
    // The segments and the deletion vectors are read in the same wave.
    let opens = futures::future::try_join_all(
        segments
            .iter()
            .map(|s| Box::pin(cached_open(dataset, s, caches, stats))),
    );
    let (opened, mut live) = futures::try_join!(opens, live_fragments(dataset, stats))?;
    // A metric other than the index's: pylance searches exactly, in that metric.
    if let (Some(m), Some(o)) = (params.metric, opened.first()) {
        if m != o.header.metric {
            segments.clear();
        }
    }
    if segments.is_empty() && !params.allow_scan {
        let why = if params.use_index {
            "has no vector index"
        } else {
            "is searched without its index"
        };
        return Err(Error::InvalidArgument(format!(
            "column {:?} {why}; an exact search reads every vector (allow_scan)",
            params.column
        )));
    }
    let prefilter = filter.filter(|f| !f.postfilter).map(|f| &f.allowed);
    live.row_ids = RowIdResolver::for_segments(dataset, &live.deletions, &segments);
    let mut report = NearestReport::default();
    // Without an index or a metric: L2, hamming on binary vectors (as pylance).
    let default_metric = if item_type == DataType::UInt8 {
        Metric::Hamming
    } else {
        Metric::L2
    };
    let (mut metric, mut candidates) = (params.metric.unwrap_or(default_metric), Vec::new());
    let want = params.k * params.refine_factor.unwrap_or(1) as usize;
    let mut covered = RoaringBitmap::new();
    if !segments.is_empty() {
        metric = opened[0].header.metric;
        report.index = Some(segments[0].name.clone());
        report.index_type = Some(opened[0].header.index_type.clone());
        report.segments = opened.len();
        for s in &segments {
            if let Some(b) = &s.fragment_bitmap {
                covered |= b;
            }
        }
        let searches = opened
            .iter()
            .map(|o| search_segment(o, params, &live, prefilter, want, caches, stats));
        if opened[0].graph.is_some() {
            report.ef = Some(super::hnsw::effective_ef(params.ef, want)?);
        }
        for (hits, probed, cached, scored) in futures::future::try_join_all(searches).await? {
            candidates.extend(hits);
            report.partitions_probed += probed;
            report.partitions_cached += cached;
            report.rows_scored += scored;
        }
        candidates = top(candidates, want);
    }
    report.metric = metric.name().to_string();
    let unindexed: Vec<u64> = if params.fast_search && !segments.is_empty() {
        Vec::new()
    } else {
        manifest
            .fragments
            .iter()
            .map(|f| f.id)
            .filter(|id| u32::try_from(*id).map_or(true, |i| !covered.contains(i)))
            .collect()
    };
    report.unindexed_fragments = unindexed.clone();
    // Exact distances: the unindexed fragments' rows, and the candidates when refining.
    // With unindexed fragments searched exactly, pylance re-ranks the index's candidates
    // with exact distances too (so that the two are comparable).
    let refine =
        (params.refine_factor.is_some() || !unindexed.is_empty()) && !candidates.is_empty();
    let mut exact_rows: Vec<u64> = Vec::new();
    if refine {
        exact_rows.extend(candidates.iter().map(|h| h.row));
        report.refined = candidates.len();
    }
    let scan_rows = unindexed_rows(dataset, &unindexed, &live, prefilter);
    exact_rows.extend(&scan_rows);
    let exact = Box::pin(exact_distances(
        dataset,
        &params.column,
        &exact_rows,
        metric,
        &params.query,
        stats,
    ))
    .await?;
    let mut hits: Vec<Hit> = if refine { Vec::new() } else { candidates };
    hits.extend(exact);
    hits.retain(|h| in_range(params.distance_range, h.distance));
    if let Some(f) = filter.filter(|f| f.postfilter) {
        hits = top(hits, want);
        hits.retain(|h| f.allowed.contains(h.row));
    }
    Ok(NearestAnswer {
        hits: top(hits, params.k),
        report,
    })
}

/// Open `segment` through the cache (concurrent misses load once).
pub(crate) async fn cached_open(
    dataset: &DatasetVersion,
    segment: &IndexSegment,
    caches: &VectorCache,
    stats: &IoStats,
) -> Result<OpenSegment> {
    // Keyed by auxiliary.idx (index.idx for a legacy index, which has no auxiliary.idx).
    let file = if segment.file_size(super::segment::AUXILIARY_FILE).is_some() {
        super::segment::AUXILIARY_FILE
    } else {
        super::segment::INDEX_FILE
    };
    let path = dataset.index_file_path(segment, file)?;
    let size = segment.file_size(file).unwrap_or(0);
    let load = async {
        Box::pin(open_segment(dataset, segment, stats))
            .await
            .map(|o| VectorEntry::Segment(Box::new(o)))
    };
    match &*caches
        .get_or_try_load(key(path.as_ref(), size, None), load)
        .await?
    {
        VectorEntry::Segment(open) => Ok((**open).clone()),
        VectorEntry::Partition(_) => Err(Error::corrupt("internal: vector cache entry mixed up")),
    }
}

/// Fragments of the manifest and their deletion vectors.
struct LiveRows {
    fragments: RoaringBitmap,
    deletions: HashMap<u64, Arc<DeletionVector>>,
    physical_rows: HashMap<u64, u64>,
    /// The index's stable row ids to row addresses (the identity without stable ids).
    row_ids: RowIdResolver,
}

impl LiveRows {
    fn contains(&self, row: u64) -> bool {
        let (fragment, offset) = (row >> 32, (row & 0xffff_ffff) as u32);
        u32::try_from(fragment).is_ok_and(|f| self.fragments.contains(f))
            && !self
                .deletions
                .get(&fragment)
                .is_some_and(|d| d.0.contains(offset))
    }
}

async fn live_fragments(dataset: &DatasetVersion, stats: &IoStats) -> Result<LiveRows> {
    let manifest = dataset.manifest();
    let all: Vec<_> = manifest.fragments.iter().collect();
    let deletions = dataset.deletion_vectors(&all, stats).await?;
    Ok(LiveRows {
        fragments: manifest.fragment_ids(),
        deletions,
        physical_rows: manifest
            .fragments
            .iter()
            .map(|f| (f.id, f.physical_rows))
            .collect(),
        row_ids: RowIdResolver::default(),
    })
}

/// Search one segment: probe, score, mask; `(hits, partitions probed, served from cache,
/// rows scored)`.
async fn search_segment(
    open: &OpenSegment,
    params: &NearestParams,
    live: &LiveRows,
    allowed: Option<&RoaringTreemap>,
    want: usize,
    caches: &VectorCache,
    stats: &IoStats,
) -> Result<(Vec<Hit>, usize, usize, u64)> {
    let metric = open.header.metric;
    let query = index_query(metric, &params.query);
    let ranked = distance::rank_partitions(metric, &query, &open.header.centroids);
    let (sorted, order): (Vec<f32>, Vec<usize>) = ranked.into_iter().unzip();
    let max = params
        .maximum_nprobes
        .unwrap_or(order.len())
        .min(order.len());
    let request = ProbeRequest {
        k: params.k,
        minimum: params.minimum_nprobes,
        maximum: params.maximum_nprobes,
        refine_factor: params.refine_factor,
        metric,
        flat_f32: params.float32
            && matches!(*open.quantizer, Quantizer::Flat { .. })
            && matches!(open.store, PartitionStore::Aux { .. }),
    };
    // pylance widens the probes of a dot index by the L2 distances to the centroids.
    let dot_l2: Option<Vec<f32>> = (metric == Metric::Dot).then(|| {
        let l2 = distance::rank_partitions(Metric::L2, &query, &open.header.centroids);
        l2.into_iter().map(|(d, _)| d).collect()
    });
    let mut probed = initial_probes(&request, &sorted, dot_l2.as_deref());
    // RaBitQ: the query prepared once, and lance's running top-k (its pruning bound).
    let mut rabit = match &*open.quantizer {
        Quantizer::Rq(rq) => Some((rq, rq::prepare(rq, &query), rq::TopK::new(want))),
        _ => None,
    };
    let (mut hits, mut cached, mut scored) = (Vec::new(), 0, 0u64);
    let hnsw = match &open.graph {
        Some(_) => Some(HnswQuery {
            k: want,
            ef: effective_ef(params.ef, want)?,
            range: params.distance_range,
        }),
        None => None,
    };
    let mut start = 0;
    // RaBitQ's running bound makes its answer depend on the order partitions are scored.
    let in_order = rabit.is_some();
    loop {
        let ids = &order[start..probed];
        let score_one = |p: usize, part: &Partition| -> Result<()> {
            let centroid = open.header.centroids.row(p);
            // The partition's row ids as row addresses (stable row ids resolved).
            let resolved: Option<HashMap<u64, u64>> = live.row_ids.resolves().then(|| {
                let addresses = live.row_ids.addresses(&part.row_ids);
                (part.row_ids.iter().copied().zip(addresses))
                    .filter_map(|(id, a)| a.map(|a| (id, a)))
                    .collect()
            });
            let address = |id: u64| match &resolved {
                None => Some(id),
                Some(m) => m.get(&id).copied(),
            };
            let admitted = |id: u64| {
                address(id).is_some_and(|row| {
                    live.contains(row) && allowed.is_none_or(|a| a.contains(row))
                })
            };
            let found: Vec<(u64, f32)> = match (&part.graph, &hnsw, rabit.as_mut()) {
                (Some(graph), Some(h), _) => {
                    let (found, computed) = search_partition(
                        graph,
                        part,
                        &open.quantizer,
                        metric,
                        &query,
                        centroid,
                        params.half_precision,
                        h,
                        admitted,
                    )
                    .map_err(|e| e.at(&open.aux_path(), None))?;
                    scored += computed;
                    found
                }
                (_, _, Some((rq, q, top))) => {
                    let Codes::Rq(codes) = &part.codes else {
                        return Err(Error::corrupt("internal: RaBitQ partition without codes"));
                    };
                    let terms = rq::partition_terms(rq, q, metric, &query, centroid);
                    let range = params.distance_range;
                    let d = rq::score(codes, rq, q, terms, range, top, |i| {
                        admitted(part.row_ids[i])
                    });
                    scored += part.row_ids.len() as u64;
                    (part.row_ids.iter().copied().zip(d))
                        .filter_map(|(row, d)| d.map(|d| (row, d)))
                        .collect()
                }
                _ => {
                    let d = score(
                        part,
                        &open.quantizer,
                        metric,
                        &query,
                        centroid,
                        params.half_precision,
                    )
                    .map_err(|e| e.at(&open.aux_path(), None))?;
                    scored += part.row_ids.len() as u64;
                    part.row_ids.iter().copied().zip(d).collect()
                }
            };
            for (id, distance) in found {
                let Some(row) = address(id) else { continue };
                if admitted(id) && in_range(params.distance_range, distance) {
                    hits.push(Hit { row, distance });
                }
            }
            Ok(())
        };
        cached += score_probed(open, ids, caches, stats, in_order, score_one).await?;
        if hits.len() >= params.k || probed >= max {
            break;
        }
        start = probed;
        probed = max;
    }
    Ok((top(hits, want), probed, cached, scored))
}

/// Partitions `ids` of `open`, from the caches or read in one wave.
pub(crate) async fn load_partitions(
    open: &OpenSegment,
    ids: &[usize],
    caches: &VectorCache,
    stats: &IoStats,
) -> Result<(Vec<Arc<Partition>>, usize)> {
    let (mut found, missing) = cached_partitions(open, ids, caches).await;
    let from_cache = ids.len() - missing.len();
    if !missing.is_empty() {
        let (path, size) = (open.aux_path(), open.aux_size());
        let read = Box::pin(read_partitions(open, &missing, stats)).await?;
        for (p, part) in missing.iter().zip(read) {
            let part = Arc::new(part);
            let entry = Arc::new(VectorEntry::Partition(Arc::clone(&part)));
            caches.insert(key(&path, size, Some(*p)), entry).await;
            if let Some(i) = ids.iter().position(|q| q == p) {
                found[i] = Some(part);
            }
        }
    }
    let parts = found
        .into_iter()
        .map(|f| f.ok_or_else(|| Error::corrupt("internal: partition not loaded")))
        .collect::<Result<_>>()?;
    Ok((parts, from_cache))
}

/// Whether `distance` is inside `lower <= d < upper` (pylance applies the range to the
/// index's candidates as it collects them, and again to exact distances).
fn in_range((lower, upper): (Option<f32>, Option<f32>), distance: f32) -> bool {
    lower.is_none_or(|l| distance >= l) && upper.is_none_or(|u| distance < u)
}

/// The `n` nearest hits, nearest first (ties by row address; a row listed twice at the same
/// distance once). Many hits (a warm query scores tens of thousands of rows): the `n`
/// nearest are selected first and only they are sorted.
pub(crate) fn top(mut hits: Vec<Hit>, n: usize) -> Vec<Hit> {
    let order = |a: &Hit, b: &Hit| a.distance.total_cmp(&b.distance).then(a.row.cmp(&b.row));
    if n > 0 && hits.len() > 2 * n {
        hits.select_nth_unstable_by(n - 1, order);
        hits[..n].sort_by(order);
        // A duplicate among the first n would leave fewer than n after dedup: sort all.
        if !hits[..n].windows(2).any(|w| w[0].row == w[1].row) {
            hits.truncate(n);
            return hits;
        }
    }
    hits.sort_by(order);
    hits.dedup_by_key(|h| h.row);
    hits.truncate(n);
    hits
}

/// Live (and allowed) rows of the unindexed fragments.
fn unindexed_rows(
    dataset: &DatasetVersion,
    fragments: &[u64],
    live: &LiveRows,
    allowed: Option<&RoaringTreemap>,
) -> Vec<u64> {
    let _ = dataset;
    let mut rows = Vec::new();
    for &f in fragments {
        let n = live.physical_rows.get(&f).copied().unwrap_or(0);
        for offset in 0..n {
            let row = (f << 32) | offset;
            if live.contains(row) && allowed.is_none_or(|a| a.contains(row)) {
                rows.push(row);
            }
        }
    }
    rows
}

/// Exact distances of `rows` (read with a take of `column`).
async fn exact_distances(
    dataset: &DatasetVersion,
    column: &str,
    rows: &[u64],
    metric: Metric,
    query: &[f32],
    stats: &IoStats,
) -> Result<Vec<Hit>> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let batch = Box::pin(take_rows(dataset, rows, &[column.to_string()], stats)).await?;
    let vectors = vectors_of(&batch, 1)?;
    let addresses = batch
        .column(0)
        .as_primitive_opt::<arrow_array::types::UInt64Type>()
        .ok_or_else(|| Error::corrupt("take returned no row addresses"))?;
    let mut hits = Vec::with_capacity(rows.len());
    for (i, v) in vectors.iter().enumerate() {
        if let Some(v) = v {
            hits.push(Hit {
                row: addresses.value(i),
                distance: distance::exact(metric, query, v),
            });
        }
    }
    Ok(hits)
}

/// The vectors of column `c` of `batch` as f32 (`None` for null rows).
fn vectors_of(batch: &RecordBatch, c: usize) -> Result<Vec<Option<Vec<f32>>>> {
    let list = batch
        .column(c)
        .as_fixed_size_list_opt()
        .ok_or_else(|| Error::corrupt("vector column is not a fixed-size list"))?;
    let dim = list.value_length() as usize;
    let values = list.values();
    let floats: Vec<f32> = match values.data_type() {
        DataType::Float32 => values.as_primitive::<Float32Type>().values().to_vec(),
        DataType::Float16 => values
            .as_primitive::<Float16Type>()
            .values()
            .iter()
            .map(|v| v.to_f32())
            .collect(),
        DataType::Float64 => values
            .as_primitive::<Float64Type>()
            .values()
            .iter()
            .map(|&v| v as f32)
            .collect(),
        DataType::UInt8 => values
            .as_primitive::<arrow_array::types::UInt8Type>()
            .values()
            .iter()
            .map(|&v| f32::from(v))
            .collect(),
        other => return Err(Error::unsupported(format!("vectors of {other}"))),
    };
    let base = list.offset() * dim;
    Ok((0..list.len())
        .map(|i| {
            let start = base + i * dim;
            list.is_valid(i)
                .then(|| floats.get(start..start + dim).map(|s| s.to_vec()))
                .flatten()
        })
        .collect())
}
