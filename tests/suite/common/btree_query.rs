//! The BTree filter API of earlier releases, kept for the suite's BTree tests: plan and
//! execute any filter through the one filter engine ([`crate::index::filter`]), exactly
//! as [`crate::index::filter::filter_row_addresses`] does, with the plan and the count of
//! pages served from the page cache.

use roaring::RoaringTreemap;

use crate::error::Result;
use crate::index::filter::{execute_filter_answer, plan_filter, FilterOptions, FilterPlan};
use crate::io::IoStats;
use crate::lance::dataset::DatasetVersion;

/// Options of a query.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct QueryOptions {
    /// Scan every fragment when the column has no usable index.
    pub(crate) allow_scan: bool,
}

/// What a query will read (the filter engine's plan).
pub(crate) type QueryPlan = FilterPlan;

/// The answer.
#[derive(Debug, Clone)]
pub(crate) struct QueryAnswer {
    /// Row addresses where the filter is TRUE.
    pub(crate) row_addresses: RoaringTreemap,
    /// Pages served from the page cache.
    pub(crate) cached_pages: usize,
}

/// Plan `filter` on `dataset` (one wave: lookups, page-data and scan-file metadata).
pub(crate) async fn plan_query(
    dataset: &DatasetVersion,
    filter: &str,
    options: QueryOptions,
    stats: &IoStats,
) -> Result<QueryPlan> {
    let options = FilterOptions {
        allow_scan: options.allow_scan,
    };
    plan_filter(dataset, filter, options, stats).await
}

/// Execute a plan: read selected pages and evaluate what no index answers, drop deleted
/// rows and rows of fragments that no longer exist.
pub(crate) async fn execute_plan(
    dataset: &DatasetVersion,
    plan: &QueryPlan,
    stats: &IoStats,
) -> Result<QueryAnswer> {
    let answer = execute_filter_answer(dataset, plan, stats).await?;
    Ok(QueryAnswer {
        row_addresses: answer.row_addresses,
        cached_pages: answer.cached_pages,
    })
}

/// Plan and execute in one call.
pub(crate) async fn query_row_addresses(
    dataset: &DatasetVersion,
    filter: &str,
    options: QueryOptions,
    stats: &IoStats,
) -> Result<QueryAnswer> {
    let plan = plan_query(dataset, filter, options, stats).await?;
    execute_plan(dataset, &plan, stats).await
}
