//! Prewarm: load what later queries of a dataset will need into the session's caches (and
//! its disk tier) ahead of time. This module drives; each index kind prewarms its own
//! segments ([`IndexKind::prewarm`](crate::index::kind::IndexKind::prewarm)).
//!
//! * Index lookups (always): a BTree segment's page lookup and page-data metadata, a
//!   bitmap lookup's metadata and page inits, the metadata of every other index file the
//!   manifest lists.
//! * All index pages (when asked): every BTree page into the page cache, every key and row
//!   set of a bitmap lookup into the bitmap caches; with a disk tier,
//!   every listed index file whole first (one entry each, which then answers any range of
//!   it in later processes).
//! * Vector indices: each segment's header (centroids, partition ranges, codebook) into the
//!   session's vector cache, then its partitions in id order, one wave, while their decoded
//!   size fits the segment's part of the vector share of the session budget.
//! * Columns (when named): the page inits (chunk tables, dictionaries, structural plans of
//!   2.3 sparse pages) of every page of those top-level columns in every data file.

use std::collections::BTreeSet;

use crate::error::{Error, Result};
use crate::index::filter::kind_reading;
use crate::index::kind::segments::open_lance_files;
use crate::index::kind::PrewarmCounts;
use crate::index::vector::caches::vector_cache;
use crate::index::vector::format::Quantizer;
use crate::index::vector::search::{cached_open, is_vector_segment, load_partitions};
use crate::io::budget::CacheShare;
use crate::io::{IoStats, ObjectVersion};
use crate::lance::dataset::{DatasetVersion, IndexSegment};

/// What to prewarm.
#[derive(Debug, Clone, Default)]
pub(crate) struct PrewarmPlan {
    /// Index names; empty: every index of the version.
    pub(crate) indices: Vec<String>,
    /// Top-level columns whose page inits to load.
    pub(crate) columns: Vec<String>,
    /// Also every index page (BTree pages; whole index files into the disk tier).
    pub(crate) all_index_pages: bool,
}

/// What was prewarmed.
#[derive(Debug, Clone, Default)]
pub(crate) struct PrewarmDone {
    /// Index names loaded.
    pub(crate) indices: Vec<String>,
    /// Index segments loaded.
    pub(crate) segments: usize,
    /// BTree pages now in the page cache.
    pub(crate) index_pages: usize,
    /// Page inits of the named columns now cached.
    pub(crate) column_pages: usize,
    /// Decoded vector index partitions now cached.
    pub(crate) vector_partitions: usize,
}

/// Prewarm `dataset` as `plan` says, counting into `stats`.
pub(crate) async fn prewarm(
    dataset: &DatasetVersion,
    plan: &PrewarmPlan,
    stats: &IoStats,
) -> Result<PrewarmDone> {
    let names = index_names(dataset, &plan.indices)?;
    let segments: Vec<&IndexSegment> = dataset
        .manifest()
        .indices
        .iter()
        .filter(|s| names.contains(&s.name))
        .collect();
    let columns = column_ids(dataset, &plan.columns)?;
    let vector_segments = segments.iter().filter(|s| is_vector_segment(s)).count();
    let vector_room =
        dataset.session().caches.bytes(CacheShare::VectorIndices) / (vector_segments.max(1) as u64);
    let index_work = async {
        let loads = segments.iter().map(|s| async move {
            if is_vector_segment(s) {
                let parts = prewarm_vector_segment(dataset, s, vector_room, stats).await?;
                Ok::<_, Error>((0, parts))
            } else {
                let pages = prewarm_segment(dataset, s, plan.all_index_pages, stats).await?;
                Ok((pages, 0))
            }
        });
        let counts: Vec<(usize, usize)> = futures::future::try_join_all(loads).await?;
        Ok::<_, Error>(
            counts
                .into_iter()
                .fold((0, 0), |(a, b), (p, v)| (a + p, b + v)),
        )
    };
    let column_work = prewarm_columns(dataset, &columns, stats);
    let ((index_pages, vector_partitions), column_pages) =
        futures::try_join!(index_work, column_work)?;
    Ok(PrewarmDone {
        indices: names.into_iter().collect(),
        segments: segments.len(),
        index_pages,
        column_pages,
        vector_partitions,
    })
}

/// The index names asked for (all when none), each checked against the manifest.
fn index_names(dataset: &DatasetVersion, asked: &[String]) -> Result<BTreeSet<String>> {
    let present: BTreeSet<String> = dataset
        .manifest()
        .indices
        .iter()
        .map(|s| s.name.clone())
        .collect();
    if asked.is_empty() {
        return Ok(present);
    }
    for name in asked {
        if !present.contains(name) {
            return Err(Error::InvalidArgument(format!(
                "version {} has no index named {name:?} (it has {})",
                dataset.version(),
                if present.is_empty() {
                    "none".to_string()
                } else {
                    present.iter().cloned().collect::<Vec<_>>().join(", ")
                }
            )));
        }
    }
    Ok(asked.iter().cloned().collect())
}

/// Field ids of the named top-level columns.
fn column_ids(dataset: &DatasetVersion, names: &[String]) -> Result<Vec<i32>> {
    let schema = &dataset.manifest().schema;
    names
        .iter()
        .map(|name| {
            schema
                .fields
                .iter()
                .find(|f| f.parent_id == -1 && &f.name == name)
                .map(|f| f.id)
                .ok_or_else(|| {
                    Error::InvalidArgument(format!("the dataset has no top-level column {name:?}"))
                })
        })
        .collect()
}

/// Load one segment through the kind that reads it (the metadata of its `.lance` files when
/// no kind does); returns the BTree pages cached.
async fn prewarm_segment(
    dataset: &DatasetVersion,
    segment: &IndexSegment,
    all_pages: bool,
    stats: &IoStats,
) -> Result<usize> {
    if all_pages && dataset.session().disk.is_some() {
        whole_index_files(dataset, segment, stats).await?;
    }
    let counts = match kind_reading(segment) {
        Some(kind) => kind.prewarm(dataset, segment, all_pages, stats).await?,
        None => {
            open_lance_files(dataset, segment, stats).await?;
            PrewarmCounts::default()
        }
    };
    Ok(counts.index_pages)
}

/// Open a vector index segment into the session's vector cache (centroids, partition
/// ranges, codebook), then read its partitions in id order, in one wave, while their
/// decoded size fits in `room` bytes (less the header); returns the partitions loaded.
async fn prewarm_vector_segment(
    dataset: &DatasetVersion,
    segment: &IndexSegment,
    room: u64,
    stats: &IoStats,
) -> Result<usize> {
    let caches = vector_cache(dataset);
    let open = cached_open(dataset, segment, &caches, stats).await?;
    let room = room.saturating_sub(open.size_bytes() as u64);
    let graphs = graph_bytes(&open);
    let ids = partitions_within(&open.partitions, row_bytes(&open.quantizer), &graphs, room);
    if !ids.is_empty() {
        load_partitions(&open, &ids, &caches, stats).await?;
    }
    Ok(ids.len())
}

/// Decoded bytes per row of a partition: its row id and codes.
fn row_bytes(quantizer: &Quantizer) -> u64 {
    8 + match quantizer {
        Quantizer::Flat { dim } => 4 * *dim as u64,
        Quantizer::Pq(pq) => pq.code_bytes() as u64,
        Quantizer::Sq { dim, .. } => *dim as u64,
        // Binary and extended codes, and five f32 factors.
        Quantizer::Rq(rq) => (rq.code_bytes() + rq.ex_code_bytes() + 20) as u64,
    }
}

/// Decoded bytes of each partition's HNSW graph (none without one), estimated from its graph
/// rows at the average bytes per graph row of `index.idx`.
fn graph_bytes(open: &crate::index::vector::segment::OpenSegment) -> Vec<u64> {
    let Some(graph) = &open.graph else {
        return Vec::new();
    };
    let rows = |r: &std::ops::Range<u64>| r.end.saturating_sub(r.start);
    let total: u64 = graph.rows.iter().map(rows).sum();
    let per_row = graph.file.version().size / total.max(1);
    graph
        .rows
        .iter()
        .map(|r| rows(r).saturating_mul(per_row))
        .collect()
}

/// The partitions (ids, in order) whose rows at `row_bytes` each, plus their `extra` bytes
/// (an HNSW partition's graph), fit in `room` bytes.
fn partitions_within(
    partitions: &[std::ops::Range<u64>],
    row_bytes: u64,
    extra: &[u64],
    room: u64,
) -> Vec<usize> {
    let mut used = 0u64;
    let mut ids = Vec::new();
    for (id, rows) in partitions.iter().enumerate() {
        let bytes = (rows.end.saturating_sub(rows.start))
            .saturating_mul(row_bytes)
            .saturating_add(extra.get(id).copied().unwrap_or(0));
        if used.saturating_add(bytes) > room {
            break;
        }
        used += bytes;
        ids.push(id);
    }
    ids
}

/// Read every file the segment lists whole (into the disk tier), in one wave.
async fn whole_index_files(
    dataset: &DatasetVersion,
    segment: &IndexSegment,
    stats: &IoStats,
) -> Result<()> {
    let reads = segment.files.iter().map(|f| async move {
        let path = dataset.index_file_path(segment, &f.path)?;
        let known = ObjectVersion {
            size: f.size_bytes,
            etag: None,
        };
        let whole = dataset
            .store()
            .fetcher
            .whole_of(&path, Some(&known), stats)
            .await?;
        if whole.version.size != f.size_bytes {
            return Err(Error::Corrupt {
                path: path.to_string(),
                range: None,
                what: format!(
                    "file is {} bytes, the manifest says {}",
                    whole.version.size, f.size_bytes
                ),
                source: None,
            });
        }
        Ok(())
    });
    futures::future::try_join_all(reads).await?;
    Ok(())
}

/// Page inits of every page of the fields `columns` in every data file holding them;
/// returns how many pages.
async fn prewarm_columns(
    dataset: &DatasetVersion,
    columns: &[i32],
    stats: &IoStats,
) -> Result<usize> {
    if columns.is_empty() {
        return Ok(0);
    }
    let mut files = Vec::new();
    for fragment in &dataset.manifest().fragments {
        for file in &fragment.files {
            if file.fields.iter().any(|f| columns.contains(f)) {
                files.push(file);
            }
        }
    }
    let loads = files.into_iter().map(|file| async move {
        // Legacy v1 files have no page inits: their page tables come with the metadata.
        let crate::lance::data_file::DataFileReader::V2(reader) =
            dataset.open_data_file(file, stats).await?
        else {
            return Ok::<_, Error>(0);
        };
        let mut pages = Vec::new();
        for field in reader
            .schema()
            .fields
            .iter()
            .filter(|f| columns.contains(&f.id))
        {
            for column in field.first_column..field.first_column + field.num_columns {
                let count = reader
                    .metadata()
                    .columns
                    .get(column)
                    .map_or(0, |c| c.pages.len());
                pages.extend((0..count).map(|p| (column, p)));
            }
        }
        reader.page_inits(&pages, stats).await?;
        Ok::<_, Error>(pages.len())
    });
    let counts = futures::future::try_join_all(loads).await?;
    Ok(counts.into_iter().sum())
}

#[cfg(test)]
mod vector_tests {
    use super::*;

    #[test]
    fn vector_partitions_load_in_order_while_they_fit() {
        let parts = [0..10, 10..30, 30..30, 30..40];
        // 10 rows of 10 bytes = 100, then 200, then 0, then 100.
        assert_eq!(partitions_within(&parts, 10, &[], 1000), vec![0, 1, 2, 3]);
        assert_eq!(partitions_within(&parts, 10, &[], 300), vec![0, 1, 2]);
        assert_eq!(partitions_within(&parts, 10, &[], 99), Vec::<usize>::new());
        // HNSW graphs count too: 100 + 50, then 200 + 50 passes 300; then 0 and 100.
        assert_eq!(partitions_within(&parts, 10, &[50, 50], 300), vec![0]);
        assert_eq!(partitions_within(&parts, 10, &[50, 50], 400), vec![0, 1, 2]);
        assert_eq!(
            partitions_within(&parts, 10, &[50, 50], 500),
            vec![0, 1, 2, 3]
        );
        let pq = Quantizer::Sq {
            dim: 16,
            bounds: 0.0..1.0,
        };
        assert_eq!(row_bytes(&pq), 24);
        assert_eq!(row_bytes(&Quantizer::Flat { dim: 4 }), 24);
    }
}
