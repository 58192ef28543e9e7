//! The one filter entry point: plan a SQL filter over a dataset's indices, explain the
//! plan, execute it to row addresses. The CLI, `bench query` and the library's
//! `DatasetVersion::filter` / query builder call these, and nothing else decides between index
//! kinds.
//!
//! This module sits above the index kinds: `registry` lists them, and the engine
//! ([`crate::index::engine`], which sees the kinds only through
//! [`crate::index::kind::IndexKind`]) plans over that list. The SQL text is parsed, bound
//! and evaluated by the one SQL stack ([`crate::index::sql`]).

mod registry;

use roaring::RoaringTreemap;

use crate::error::Result;
use crate::index::engine;
pub(crate) use crate::index::engine::{FilterAnswer, FilterOptions, FilterPlan};
use crate::index::sql::parsed::ParsedFilter;
use crate::io::IoStats;
use crate::lance::dataset::DatasetVersion;
pub(crate) use registry::kind_reading;

/// Plan SQL `filter` on `dataset` (one wave: index lookups and metadata).
pub(crate) async fn plan_filter(
    dataset: &DatasetVersion,
    filter: &str,
    options: FilterOptions,
    stats: &IoStats,
) -> Result<FilterPlan> {
    plan_parsed_filter(dataset, &ParsedFilter::parse(filter)?, options, stats).await
}

/// Plan a filter already parsed (or built in code) on `dataset`.
pub(crate) async fn plan_parsed_filter(
    dataset: &DatasetVersion,
    filter: &ParsedFilter,
    options: FilterOptions,
    stats: &IoStats,
) -> Result<FilterPlan> {
    engine::plan(dataset, filter, options, &registry::index_kinds(), stats).await
}

/// Execute a plan: the row addresses where the filter is TRUE (deleted rows removed).
pub(crate) async fn execute_filter(
    dataset: &DatasetVersion,
    plan: &FilterPlan,
    stats: &IoStats,
) -> Result<RoaringTreemap> {
    Ok(engine::execute(dataset, plan, stats).await?.row_addresses)
}

/// How the indices would answer `filter`, from the manifest alone (no request).
pub(crate) fn check_parsed_filter(
    dataset: &DatasetVersion,
    filter: &ParsedFilter,
    options: FilterOptions,
) -> Result<crate::index::kind::Exactness> {
    engine::check(dataset, filter, options, &registry::index_kinds())
}

/// Execute a plan, with what it cost beyond the row addresses.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) async fn execute_filter_answer(
    dataset: &DatasetVersion,
    plan: &FilterPlan,
    stats: &IoStats,
) -> Result<FilterAnswer> {
    engine::execute(dataset, plan, stats).await
}

/// Plan and execute in one call.
pub(crate) async fn filter_row_addresses(
    dataset: &DatasetVersion,
    filter: &str,
    options: FilterOptions,
    stats: &IoStats,
) -> Result<RoaringTreemap> {
    let plan = plan_filter(dataset, filter, options, stats).await?;
    execute_filter(dataset, &plan, stats).await
}
