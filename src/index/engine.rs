//! The filter engine: plan a bound filter over the index kinds it is handed (seen only
//! through [`crate::index::kind::IndexKind`]), explain the plan, execute it to row
//! addresses. [`crate::index::filter`] hands it the kinds lakeseek reads.
//!
//! * `tree`: `NOT` pushed to the leaves, leaves = maximal one-column subtrees or
//!   `any_element` calls, the row-set algebra;
//! * `data`: evaluating a leaf on only the rows and the column it needs (a leaf its kind
//!   plans itself, an `any_element` call, through its planned leaf);
//! * `plan`: choosing a kind and index per leaf, planning, executing, explaining;
//! * `check`: the same choice without reading: how exactly the indices would answer.
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

mod check;
mod data;
mod plan;
pub(crate) mod tree;
mod truths;

use roaring::RoaringTreemap;

pub(crate) use check::check;
pub(crate) use plan::{execute, plan, FilterPlan};

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
