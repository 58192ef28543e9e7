//! The one filter entry point: plan a SQL filter over a dataset's indices, explain the plan,
//! execute it to row addresses. The CLI, `bench query` and the library's
//! `Dataset::filter` / query builder call these and nothing else decides between index
//! kinds.
//!
//! Today a filter is answered either as a BTree filter on one column
//! ([`crate::index::query`]) or, when it holds `any_element(...)` calls, as `AND`ed
//! conjuncts each answered by the list element index or the BTree
//! ([`crate::index::list_element::filter`]).

use roaring::RoaringTreemap;

use crate::error::Result;
use crate::index::list_element;
use crate::index::list_element::filter::PlannedPart;
use crate::index::query::{execute_plan, explain, plan_query, QueryOptions, QueryPlan};
use crate::io::IoStats;
use crate::lance::dataset::Dataset;

/// How a filter may be answered.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FilterOptions {
    /// Scan the data of fragments (or the whole dataset) no index answers for.
    pub allow_scan: bool,
}

/// A planned filter: what it will read, before the index pages are fetched.
#[derive(Debug)]
pub(crate) struct FilterPlan {
    kind: PlanKind,
}

#[derive(Debug)]
enum PlanKind {
    /// A filter on one BTree-indexed (or scanned) column.
    Single(Box<QueryPlan>),
    /// `AND`ed conjuncts, at least one an `any_element` call.
    Conjuncts(Vec<PlannedPart>),
}

impl FilterPlan {
    /// A JSON description of the plan (`--explain`).
    pub(crate) fn explain(&self) -> serde_json::Value {
        match &self.kind {
            PlanKind::Single(plan) => explain(plan),
            PlanKind::Conjuncts(parts) => list_element::filter::explain_parts(parts),
        }
    }

    /// Why the whole dataset will be scanned, and how many fragments that is, when no index
    /// answers the filter and scanning was allowed.
    pub(crate) fn full_scan_notice(&self) -> Option<String> {
        match &self.kind {
            PlanKind::Single(plan) => plan.full_scan_reason.as_ref().map(|reason| {
                format!("{reason}; scanning all {} fragments", plan.scans.len())
            }),
            PlanKind::Conjuncts(_) => None,
        }
    }
}

/// Plan `filter` on `dataset` (one wave: index lookups and metadata).
pub(crate) async fn plan_filter(
    dataset: &Dataset,
    filter: &str,
    options: FilterOptions,
    stats: &IoStats,
) -> Result<FilterPlan> {
    if let Some(parts) = list_element::filter::split_any_element_filter(filter)? {
        let element_options = list_element::query::AnyElementOptions::default();
        let planned = list_element::filter::plan_parts(
            dataset,
            &parts,
            options.allow_scan,
            element_options,
            stats,
        )
        .await?;
        return Ok(FilterPlan {
            kind: PlanKind::Conjuncts(planned),
        });
    }
    let query_options = QueryOptions {
        allow_scan: options.allow_scan,
    };
    let plan = plan_query(dataset, filter, query_options, stats).await?;
    Ok(FilterPlan {
        kind: PlanKind::Single(Box::new(plan)),
    })
}

/// Execute a plan: the row addresses where the filter is TRUE (deleted rows removed).
pub(crate) async fn execute_filter(
    dataset: &Dataset,
    plan: &FilterPlan,
    stats: &IoStats,
) -> Result<RoaringTreemap> {
    match &plan.kind {
        PlanKind::Single(plan) => Ok(execute_plan(dataset, plan, stats).await?.row_addresses),
        PlanKind::Conjuncts(parts) => {
            list_element::filter::execute_parts(dataset, parts, stats).await
        }
    }
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
