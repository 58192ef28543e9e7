//! The BTree filter API of earlier releases, now answered by the one filter engine
//! ([`crate::index::filter`]): [`query_row_addresses`], [`plan_query`] and
//! [`execute_plan`] plan and execute any filter (one column or many, `AND` / `OR` /
//! `NOT`, `any_element`), exactly as [`crate::index::filter::filter_row_addresses`] does.
//! Also the BTree constants and the `--explain` description of a BTree segment.
//!
//! A leaf on a column without a usable index is scanned only with `allow_scan` (unless
//! other leaves bound the rows by `AND`). The wrappers are kept for the suite's BTree
//! tests (`#[cfg(test)]`); the library calls [`crate::index::filter`].

use std::collections::BTreeSet;
use std::ops::Range;

#[cfg(test)]
use roaring::RoaringTreemap;

#[cfg(test)]
use crate::error::Result;
use crate::index::btree::layout::{PageDataLayout, IDS, VALUES};
use crate::index::btree::PageMatch;
#[cfg(test)]
use crate::index::filter::{execute_filter_answer, plan_filter, FilterOptions, FilterPlan};
#[cfg(test)]
use crate::io::IoStats;
#[cfg(test)]
use crate::lance::dataset::Dataset;
use crate::lance::legacy::any::DataFileReader;

/// Type names (after the last '/') of BTree index details lance accepts.
pub(crate) const BTREE_DETAILS_TYPES: [&str; 2] = [
    "lance.table.BTreeIndexDetails",
    "lance.index.pb.BTreeIndexDetails",
];
/// Highest BTree index version lance 14 (and lakeseek) reads.
pub(crate) const MAX_BTREE_VERSION: i32 = 1;

#[cfg(test)]
/// Options of a query.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct QueryOptions {
    /// Scan every fragment when the column has no usable index.
    pub(crate) allow_scan: bool,
}

#[cfg(test)]
/// What a query will read (the filter engine's plan).
pub(crate) type QueryPlan = FilterPlan;

#[cfg(test)]
/// The answer.
#[derive(Debug, Clone)]
pub(crate) struct QueryAnswer {
    /// Row addresses where the filter is TRUE.
    pub(crate) row_addresses: RoaringTreemap,
    /// Pages served from the page cache.
    pub(crate) cached_pages: usize,
}

#[cfg(test)]
/// Plan `filter` on `dataset` (one wave: lookups, page-data and scan-file metadata).
pub(crate) async fn plan_query(
    dataset: &Dataset,
    filter: &str,
    options: QueryOptions,
    stats: &IoStats,
) -> Result<QueryPlan> {
    let options = FilterOptions {
        allow_scan: options.allow_scan,
    };
    plan_filter(dataset, filter, options, stats).await
}

#[cfg(test)]
/// Execute a plan: read selected pages and evaluate what no index answers, drop deleted
/// rows and rows of fragments that no longer exist.
pub(crate) async fn execute_plan(
    dataset: &Dataset,
    plan: &QueryPlan,
    stats: &IoStats,
) -> Result<QueryAnswer> {
    let answer = execute_filter_answer(dataset, plan, stats).await?;
    Ok(QueryAnswer {
        row_addresses: answer.row_addresses,
        cached_pages: answer.cached_pages,
    })
}

#[cfg(test)]
/// Plan and execute in one call.
pub(crate) async fn query_row_addresses(
    dataset: &Dataset,
    filter: &str,
    options: QueryOptions,
    stats: &IoStats,
) -> Result<QueryAnswer> {
    let plan = plan_query(dataset, filter, options, stats).await?;
    execute_plan(dataset, &plan, stats).await
}

/// The `--explain` description of one planned BTree segment: coverage, lookup and
/// page-data files, chosen pages with their page-data rows and the disk byte ranges that
/// hold them.
pub(crate) fn explain_segment(s: &crate::index::filter::BTreeSegmentPlan) -> serde_json::Value {
    use serde_json::json;
    let file_rows: Vec<u64> = s.opened.page_data.iter().map(|r| r.num_rows()).collect();
    let pages: Vec<serde_json::Value> = s
        .selection
        .iter()
        .map(|(page, kind)| {
            let (file, rows) = s
                .opened
                .lookup
                .page_rows(*page, &file_rows)
                .unwrap_or((0, 0..0));
            let disk = s
                .opened
                .page_data
                .get(file)
                .map(|r| disk_ranges(r, &rows, *kind))
                .unwrap_or_default();
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
        "page_data": s.opened.page_data.iter().map(|r| json!({"path": r.path().to_string(), "rows": r.num_rows(), "bytes": r.version().size, "legacy_v1": r.is_legacy()})).collect::<Vec<_>>(),
        "pages": pages,
    })
}

/// Byte ranges of the disk pages (both `values` and `ids` columns, or `ids` alone for
/// "all" pages) overlapping `rows`; the reader fetches chunk metadata and only the chunks
/// inside these.
fn disk_ranges(reader: &DataFileReader, rows: &Range<u64>, kind: PageMatch) -> Vec<[u64; 2]> {
    let names: &[&str] = if kind == PageMatch::All {
        &[IDS]
    } else {
        &[VALUES, IDS]
    };
    let Ok(layout) = PageDataLayout::of(reader) else {
        return Vec::new();
    };
    let Ok(fields) = reader.field_indices(&layout.names(names)) else {
        return Vec::new();
    };
    let mut out = BTreeSet::new();
    for f in fields {
        for b in reader.page_byte_ranges(f, rows.clone()) {
            out.insert([b.start, b.end]);
        }
    }
    out.into_iter().collect()
}
