//! Answer a filter on a dataset with lance's exact row-address set:
//!
//! 1. **plan** (one wave): choose the BTree segments of the filtered column, intersect
//!    their fragment bitmaps with the current fragments, load each segment's page lookup
//!    and page-data metadata, choose pages; open the data files of fragments no segment
//!    covers (appended after indexing) — those are answered by scanning, as lance does.
//! 2. **execute** (two waves: page init, then chunks; deletion files ride along): read the
//!    selected pages, filter exactly, keep ids of covered, existing fragments, scan the
//!    uncovered fragments, and remove deleted rows.
//!
//! A column without a usable BTree is scanned only with `allow_scan`.

use std::collections::{BTreeSet, HashMap};
use std::ops::Range;
use std::sync::Arc;

use roaring::{RoaringBitmap, RoaringTreemap};

use crate::error::{Error, Result};
use crate::index::btree::exec::{answer_segment, open_segment, segment_is_cached, OpenedSegment};
use crate::index::btree::{PageMatch, PageSelection};
use crate::index::key::KeyColumn;
use crate::index::predicate::{BoundFilter, ColumnRef};
use crate::io::IoStats;
use crate::lance::dataset::{Dataset, Fragment, IndexSegment};
use crate::lance::reader::{LanceFileReader, RowSelection};

/// Type names (after the last '/') of BTree index details lance accepts.
pub(crate) const BTREE_DETAILS_TYPES: [&str; 2] = [
    "lance.table.BTreeIndexDetails",
    "lance.index.pb.BTreeIndexDetails",
];
/// Highest BTree index version lance 14 (and lakeseek) reads.
pub(crate) const MAX_BTREE_VERSION: i32 = 1;

/// Options of a query.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct QueryOptions {
    /// Scan every fragment when the column has no usable BTree index.
    pub allow_scan: bool,
}

/// One BTree segment in a plan.
#[derive(Debug, Clone)]
pub(crate) struct PlannedSegment {
    /// Its manifest entry.
    pub segment: IndexSegment,
    /// Fragments it answers for (its bitmap intersected with the current fragments).
    pub coverage: RoaringBitmap,
    /// Lookup and page-data files.
    pub opened: OpenedSegment,
    /// Pages chosen.
    pub selection: PageSelection,
}

/// A fragment answered by scanning its data.
#[derive(Debug, Clone)]
pub(crate) struct ScanTarget {
    /// Fragment id.
    pub fragment: u64,
    /// The open data file holding the column and the column's field index in it, or
    /// `None` when no data file has the column (all values null).
    pub file: Option<(LanceFileReader, usize)>,
}

/// What a query will read.
#[derive(Debug, Clone)]
pub(crate) struct QueryPlan {
    /// The typed filter.
    pub filter: BoundFilter,
    /// The filtered column.
    pub column: ColumnRef,
    /// Name of the BTree index used, if any.
    pub index_name: Option<String>,
    /// Segments with coverage.
    pub segments: Vec<PlannedSegment>,
    /// Fragments answered by scanning.
    pub scans: Vec<ScanTarget>,
    /// Why the whole dataset is scanned (no usable index and `allow_scan`).
    pub full_scan_reason: Option<String>,
    /// Deletion files that will be read.
    pub deletion_files: Vec<String>,
}

/// The answer.
#[derive(Debug, Clone)]
pub(crate) struct QueryAnswer {
    /// Row addresses where the filter is TRUE.
    pub row_addresses: RoaringTreemap,
    /// Pages served from the page cache.
    #[cfg_attr(not(test), allow(dead_code))] // read by the tests
    pub cached_pages: usize,
}

/// Segments of a BTree on `field_id` usable on this dataset, or why there are none.
fn usable_segments(
    dataset: &Dataset,
    field_id: i32,
) -> std::result::Result<(String, Vec<IndexSegment>), String> {
    let manifest = dataset.manifest();
    let on_column: Vec<&IndexSegment> = manifest
        .indices
        .iter()
        .filter(|s| s.fields == [field_id])
        .collect();
    if on_column.is_empty() {
        return Err("the column has no index".into());
    }
    let mut reasons = Vec::new();
    let mut chosen: Option<String> = None;
    let mut segments = Vec::new();
    for s in on_column {
        let type_name = s.type_name().unwrap_or("<no index_details>");
        if !BTREE_DETAILS_TYPES
            .iter()
            .any(|t| t.eq_ignore_ascii_case(type_name))
        {
            reasons.push(format!(
                "index {:?} has type {type_name}, which lakeseek does not read",
                s.name
            ));
            continue;
        }
        if s.index_version > MAX_BTREE_VERSION {
            reasons.push(format!(
                "index {:?} has BTree version {} (newest known: {MAX_BTREE_VERSION})",
                s.name, s.index_version
            ));
            continue;
        }
        if s.index_version == 0 && manifest.uses_stable_row_ids() {
            reasons.push(format!(
                "index {:?} (version 0) holds stable row ids, not row addresses",
                s.name
            ));
            continue;
        }
        if s.fragment_bitmap.is_none() {
            reasons.push(format!(
                "index {:?} does not record which fragments it covers",
                s.name
            ));
            continue;
        }
        match &chosen {
            None => chosen = Some(s.name.clone()),
            Some(name) if name != &s.name => continue,
            Some(_) => {}
        }
        segments.push(s.clone());
    }
    match chosen {
        Some(name) => Ok((name, segments)),
        None => Err(reasons.join("; ")),
    }
}

/// Plan `filter` on `dataset` (reads lookups, page-data and scan-file metadata: one wave).
pub(crate) async fn plan_query(
    dataset: &Dataset,
    filter: &str,
    options: QueryOptions,
    stats: &IoStats,
) -> Result<QueryPlan> {
    let manifest = Arc::clone(dataset.manifest());
    let bound = BoundFilter::parse(filter, &manifest.schema)?;
    let column = bound.single_column().cloned().ok_or_else(|| {
        Error::InvalidArgument(format!("filter {filter:?} must test exactly one column"))
    })?;
    let current = manifest.fragment_ids();
    let (index_name, segments, full_scan_reason) = match usable_segments(dataset, column.field_id) {
        Ok((name, segs)) => {
            let segs: Vec<(IndexSegment, RoaringBitmap)> = segs
                .into_iter()
                .map(|s| {
                    let coverage = s
                        .fragment_bitmap
                        .as_ref()
                        .map(|b| b & &current)
                        .unwrap_or_default();
                    (s, coverage)
                })
                .filter(|(_, c)| !c.is_empty())
                .collect();
            (Some(name), segs, None)
        }
        Err(reason) => {
            let unsupported_type = reason.contains("does not read");
            let msg = format!(
                "no usable BTree index on column {:?}: {reason}",
                column.name
            );
            if !options.allow_scan {
                return Err(if unsupported_type {
                    Error::unsupported(format!("{msg}; pass --allow-scan to scan instead"))
                        .at(dataset.root().as_ref(), None)
                } else {
                    Error::InvalidArgument(format!("{msg}; pass --allow-scan to scan instead"))
                });
            }
            (None, Vec::new(), Some(msg))
        }
    };
    let mut covered = RoaringBitmap::new();
    for (_, c) in &segments {
        covered |= c;
    }
    let scan_fragments: Vec<&Fragment> = manifest
        .fragments
        .iter()
        .filter(|f| !covered.contains(f.id as u32))
        .collect();
    let opens = segments
        .iter()
        .map(|(s, _)| open_segment(dataset, s, stats));
    let scans = scan_fragments
        .iter()
        .map(|f| open_scan(dataset, f, column.field_id, stats));
    // Lookups, page-data metadata and scanned files' metadata are independent: one wave
    // (declared only when something will be read: a wave without requests is no round trip).
    let mut cold = !scan_fragments.is_empty();
    for (s, _) in &segments {
        cold |= !segment_is_cached(dataset, s).await;
    }
    let wave = cold.then(|| stats.start_wave());
    let (opened, scans) = futures::try_join!(
        futures::future::try_join_all(opens),
        futures::future::try_join_all(scans)
    )?;
    drop(wave);
    let planned = segments
        .into_iter()
        .zip(opened)
        .map(|((segment, coverage), opened)| {
            let selection = opened.lookup.select(&bound.predicate);
            PlannedSegment {
                segment,
                coverage,
                opened,
                selection,
            }
        })
        .collect();
    let deletion_files = manifest
        .fragments
        .iter()
        .filter_map(|f| f.deletion.as_ref().map(|d| d.relative_path(f.id)))
        .collect();
    Ok(QueryPlan {
        filter: bound,
        column,
        index_name,
        segments: planned,
        scans,
        full_scan_reason,
        deletion_files,
    })
}

async fn open_scan(
    dataset: &Dataset,
    fragment: &Fragment,
    field_id: i32,
    stats: &IoStats,
) -> Result<ScanTarget> {
    let Some(file) = fragment.files.iter().find(|f| f.fields.contains(&field_id)) else {
        return Ok(ScanTarget {
            fragment: fragment.id,
            file: None,
        });
    };
    let path = dataset.data_file_path(file);
    let caches = Arc::clone(&dataset.session().reader_caches);
    let reader = LanceFileReader::open(
        dataset.store().fetcher.clone(),
        path.clone(),
        file.size_bytes,
        caches,
        stats,
    )
    .await?;
    let index = reader
        .schema()
        .fields
        .iter()
        .position(|f| f.id == field_id)
        .ok_or_else(|| {
            Error::corrupt(format!(
                "data file does not hold field {field_id} although the manifest says so"
            ))
            .at(path.as_ref(), None)
        })?;
    if reader.num_rows() != fragment.physical_rows {
        return Err(Error::corrupt(format!(
            "data file has {} rows, fragment {} has {}",
            reader.num_rows(),
            fragment.id,
            fragment.physical_rows
        ))
        .at(path.as_ref(), None));
    }
    Ok(ScanTarget {
        fragment: fragment.id,
        file: Some((reader, index)),
    })
}

/// Execute a plan: read selected pages and scanned columns, drop deleted rows and rows of
/// fragments that no longer exist.
pub(crate) async fn execute_plan(
    dataset: &Dataset,
    plan: &QueryPlan,
    stats: &IoStats,
) -> Result<QueryAnswer> {
    let manifest = Arc::clone(dataset.manifest());
    let with_deletions: Vec<&Fragment> = manifest
        .fragments
        .iter()
        .filter(|f| f.deletion.is_some())
        .collect();
    // Few deletion files: read them all alongside the pages (no extra round trip). Many:
    // read only those of fragments that have results, afterwards (one more round trip,
    // not a request per fragment for a point query).
    let eager = with_deletions.len() <= dataset.session().eager_deletion_files;
    let eager_files: &[&Fragment] = if eager { &with_deletions } else { &[] };
    let answers = plan
        .segments
        .iter()
        .map(|s| answer_segment(dataset, &s.opened, &plan.filter.predicate, stats));
    let scans = plan
        .scans
        .iter()
        .map(|t| scan_fragment(dataset, t, plan, stats));
    let (answers, scans, mut deletions) = futures::try_join!(
        futures::future::try_join_all(answers),
        futures::future::try_join_all(scans),
        dataset.deletion_vectors(eager_files, stats)
    )?;
    let rows: HashMap<u64, u64> = manifest
        .fragments
        .iter()
        .map(|f| (f.id, f.physical_rows))
        .collect();
    let mut per_fragment: HashMap<u32, RoaringBitmap> = HashMap::new();
    let mut cached_pages = 0;
    for (planned, answer) in plan.segments.iter().zip(answers) {
        cached_pages += answer.cached_pages;
        for id in answer.ids {
            let (fragment, offset) = ((id >> 32) as u32, id as u32);
            if planned.coverage.contains(fragment)
                && (offset as u64) < rows.get(&(fragment as u64)).copied().unwrap_or(0)
            {
                per_fragment.entry(fragment).or_default().insert(offset);
            }
        }
    }
    for (fragment, offsets) in scans {
        per_fragment
            .entry(fragment as u32)
            .or_default()
            .extend(offsets);
    }
    if !eager {
        let touched: Vec<&Fragment> = with_deletions
            .iter()
            .copied()
            .filter(|f| {
                per_fragment
                    .get(&(f.id as u32))
                    .is_some_and(|o| !o.is_empty())
            })
            .collect();
        deletions = dataset.deletion_vectors(&touched, stats).await?;
    }
    let mut row_addresses = RoaringTreemap::new();
    for (fragment, mut offsets) in per_fragment {
        if let Some(deleted) = deletions.get(&(fragment as u64)) {
            offsets -= &deleted.0;
        }
        let base = (fragment as u64) << 32;
        row_addresses.extend(offsets.iter().map(|o| base | o as u64));
    }
    Ok(QueryAnswer {
        row_addresses,
        cached_pages,
    })
}

async fn scan_fragment(
    dataset: &Dataset,
    target: &ScanTarget,
    plan: &QueryPlan,
    stats: &IoStats,
) -> Result<(u64, RoaringBitmap)> {
    let predicate = &plan.filter.predicate;
    let Some((reader, index)) = &target.file else {
        let physical = dataset
            .manifest()
            .fragment(target.fragment)
            .map_or(0, |f| f.physical_rows);
        let all_null_true = predicate.eval(&|_c| None) == Some(true);
        let mut out = RoaringBitmap::new();
        if all_null_true && physical > 0 {
            out.insert_range(0..physical.min(u32::MAX as u64 + 1) as u32);
        }
        return Ok((target.fragment, out));
    };
    let batch = reader
        .read_rows(&[*index], &RowSelection::Range(0..reader.num_rows()), stats)
        .await?;
    let keys = KeyColumn::new(batch.column(0)).map_err(|e| e.at(reader.path().as_ref(), None))?;
    let mut out = RoaringBitmap::new();
    for row in 0..keys.len() {
        let v = keys.get(row);
        if predicate.eval(&|_c| v) == Some(true) {
            out.insert(row as u32);
        }
    }
    Ok((target.fragment, out))
}

/// Plan and execute in one call.
#[cfg(test)]
pub(crate) async fn query_row_addresses(
    dataset: &Dataset,
    filter: &str,
    options: QueryOptions,
    stats: &IoStats,
) -> Result<QueryAnswer> {
    let plan = plan_query(dataset, filter, options, stats).await?;
    execute_plan(dataset, &plan, stats).await
}

/// A JSON description of a plan (`--explain`): segments, coverage, chosen pages with their
/// page-data rows and the disk byte ranges that hold them, scanned fragments and deletion
/// files.
pub(crate) fn explain(plan: &QueryPlan) -> serde_json::Value {
    use serde_json::json;
    let segments: Vec<serde_json::Value> = plan
        .segments
        .iter()
        .map(|s| {
            let file_rows: Vec<u64> = s.opened.page_data.iter().map(|r| r.num_rows()).collect();
            let pages: Vec<serde_json::Value> = s
                .selection
                .iter()
                .map(|(page, kind)| {
                    let (file, rows) = s.opened.lookup.page_rows(*page, &file_rows).unwrap_or((0, 0..0));
                    let disk = s.opened.page_data.get(file).map(|r| disk_ranges(r, &rows, *kind)).unwrap_or_default();
                    json!({
                        "page": page,
                        "match": if *kind == PageMatch::All { "all" } else { "some" },
                        "file": s.opened.page_data.get(file).map(|r| r.path().to_string()),
                        "rows": [rows.start, rows.end],
                        "disk_page_ranges": disk,
                    })
                })
                .collect();
            json!({
                "uuid": s.segment.uuid_string(),
                "index_version": s.segment.index_version,
                "fragments": s.coverage.iter().collect::<Vec<u32>>(),
                "page_lookup": {"path": s.opened.lookup_path.to_string(), "pages": s.opened.lookup.num_pages(), "batch_size": s.opened.lookup.batch_size},
                "page_data": s.opened.page_data.iter().map(|r| json!({"path": r.path().to_string(), "rows": r.num_rows(), "bytes": r.version().size})).collect::<Vec<_>>(),
                "pages": pages,
            })
        })
        .collect();
    json!({
        "filter": plan.filter.text,
        "column": plan.column.name,
        "index": plan.index_name,
        "full_scan": plan.full_scan_reason,
        "segments": segments,
        "scan_fragments": plan.scans.iter().map(|t| t.fragment).collect::<Vec<_>>(),
        "deletion_files": plan.deletion_files,
    })
}

/// Byte ranges of the disk pages (both `values` and `ids` columns, or `ids` alone for
/// "all" pages) overlapping `rows`; the reader fetches chunk metadata and only the chunks
/// inside these.
fn disk_ranges(reader: &LanceFileReader, rows: &Range<u64>, kind: PageMatch) -> Vec<[u64; 2]> {
    let names: &[&str] = if kind == PageMatch::All {
        &["ids"]
    } else {
        &["values", "ids"]
    };
    let Ok(fields) = reader.field_indices(names) else {
        return Vec::new();
    };
    let mut out = BTreeSet::new();
    for f in fields {
        let Some(field) = reader.schema().fields.get(f) else {
            continue;
        };
        let Some(column) = reader.metadata().columns.get(field.first_column) else {
            continue;
        };
        for page in column.pages_for(rows.clone()) {
            if let Some(p) = column.pages.get(page) {
                for b in &p.buffers {
                    if b.start < b.end {
                        out.insert([b.start, b.end]);
                    }
                }
            }
        }
    }
    out.into_iter().collect()
}
