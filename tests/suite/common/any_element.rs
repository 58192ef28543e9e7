//! `any_element` calls answered the way every filter is: through the one filter engine
//! (the list element kind plans the call, the engine reads deletions, evaluates uncovered
//! fragments and rechecks candidates). The suite plans a call with the kind's own planner
//! (to check its strategy) and answers it here.

use roaring::RoaringTreemap;

use crate::index::filter::{execute_filter_answer, plan_filter, FilterOptions};
use crate::index::list_element::query::{
    plan_any_element_query, AnyElementOptions, AnyElementQueryPlan,
};
use crate::index::sql::call::AnyElementCall;
use crate::io::IoStats;
use crate::lance::dataset::DatasetVersion;
use crate::Result;

/// The answer of a call.
#[derive(Debug, Clone, Default)]
pub(crate) struct AnyElementAnswer {
    /// Row addresses where the call (or its NOT) is TRUE.
    pub(crate) row_addresses: RoaringTreemap,
    /// Rows evaluated on data (candidates, fragments the index does not cover).
    #[allow(dead_code)]
    pub(crate) rechecked_rows: u64,
}

/// The filter text of a call (`NOT` when negated).
pub(crate) fn call_filter(call: &AnyElementCall) -> String {
    format!(
        "{}any_element({}, '{}')",
        if call.negated { "NOT " } else { "" },
        call.column,
        call.predicate.replace('\'', "''")
    )
}

/// Answer the call `plan` was made for through the filter engine.
pub(crate) async fn execute_any_element_query(
    dataset: &DatasetVersion,
    plan: &AnyElementQueryPlan,
    stats: &IoStats,
) -> Result<AnyElementAnswer> {
    let filter = call_filter(&plan.call);
    let planned = plan_filter(dataset, &filter, FilterOptions::default(), stats).await?;
    let answer = execute_filter_answer(dataset, &planned, stats).await?;
    Ok(AnyElementAnswer {
        row_addresses: answer.row_addresses,
        rechecked_rows: answer.rechecked_rows,
    })
}

/// Plan and answer a call.
pub(crate) async fn query_any_element(
    dataset: &DatasetVersion,
    call: &AnyElementCall,
    options: AnyElementOptions,
    stats: &IoStats,
) -> Result<AnyElementAnswer> {
    let plan = plan_any_element_query(dataset, call, options, stats).await?;
    execute_any_element_query(dataset, &plan, stats).await
}
