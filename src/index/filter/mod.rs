//! The one filter engine and its entry point: plan a SQL filter over a dataset's indices,
//! explain the plan, execute it to row addresses. The CLI, `bench query` and the library's
//! `Dataset::filter` / query builder call these, and nothing else decides between index
//! kinds.
//!
//! * the SQL text is parsed, bound and evaluated by the one SQL stack
//!   ([`crate::index::sql`]);
//! * `tree`: `NOT` pushed to the leaves, leaves = maximal one-column subtrees or
//!   `any_element` calls, the row-set algebra;
//! * the kinds are seen through the index-kind interface ([`crate::index::kind`]); `registry`
//!   lists them;
//! * `data`: evaluating a leaf on only the rows and the column it needs.
//!
//! **Plan** (one wave): bind, shape, choose an index for every leaf, open the chosen
//! indices (lookups, file metadata). A filter whose TRUE rows no index bounds (a leaf
//! without index under `OR` / `NOT`, or alone) needs `allow_scan`; `any_element` calls
//! are evaluated on their lists when no index answers them, as before.
//! **Execute**: all leaves' index reads and the deletion files together; combine the
//! leaves' row sets per the tree (SQL three-valued logic: each leaf answers the truth
//! value it must have, `NOT x` asks `x` for its FALSE rows); rows still undecided
//! (candidates, fragments an index does not cover, leaves no index answers) are checked
//! by evaluating only the leaves that decide them, on only those rows; deleted rows are
//! removed.

mod data;
mod plan;
mod registry;
pub(crate) mod tree;

use roaring::RoaringTreemap;

use crate::error::Result;
use crate::io::IoStats;
use crate::lance::dataset::Dataset;

pub(crate) use plan::FilterPlan;

/// How a filter may be answered.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FilterOptions {
    /// Scan the data of fragments (or the whole dataset) no index answers for.
    pub(crate) allow_scan: bool,
}

/// What executing a plan returned.
#[derive(Debug, Clone, Default)]
pub(crate) struct FilterAnswer {
    /// Row addresses where the filter is TRUE (deleted rows removed), ascending.
    pub(crate) row_addresses: RoaringTreemap,
    /// Index pages served from the page cache.
    #[allow(dead_code)] // read by the suite; for the library's cost reports next
    pub(crate) cached_pages: usize,
    /// Rows evaluated on data (candidates, uncovered fragments, unindexed leaves).
    #[allow(dead_code)]
    pub(crate) rechecked_rows: u64,
}

/// Plan `filter` on `dataset` (one wave: index lookups and metadata).
pub(crate) async fn plan_filter(
    dataset: &Dataset,
    filter: &str,
    options: FilterOptions,
    stats: &IoStats,
) -> Result<FilterPlan> {
    plan::plan(dataset, filter, options, stats).await
}

/// Execute a plan: the row addresses where the filter is TRUE (deleted rows removed).
pub(crate) async fn execute_filter(
    dataset: &Dataset,
    plan: &FilterPlan,
    stats: &IoStats,
) -> Result<RoaringTreemap> {
    Ok(plan::execute(dataset, plan, stats).await?.row_addresses)
}

/// Execute a plan, with what it cost beyond the row addresses.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) async fn execute_filter_answer(
    dataset: &Dataset,
    plan: &FilterPlan,
    stats: &IoStats,
) -> Result<FilterAnswer> {
    plan::execute(dataset, plan, stats).await
}

/// Plan and execute in one call.
pub(crate) async fn filter_row_addresses(
    dataset: &Dataset,
    filter: &str,
    options: FilterOptions,
    stats: &IoStats,
) -> Result<RoaringTreemap> {
    let plan = plan_filter(dataset, filter, options, stats).await?;
    execute_filter(dataset, &plan, stats).await
}
