//! The list element index behind the [`IndexKind`] interface: `any_element(col, '...')`
//! planned by [`crate::index::list_element::query`] (choose among the column's list element
//! indices, plan the ranges) and answered from the chosen index's pages: exact rows, a
//! superset the engine rechecks, or the complement for `NOT`. The engine evaluates the
//! fragments the index does not cover (and calls no index answers) on their lists.

use async_trait::async_trait;
use roaring::RoaringBitmap;

use crate::error::{Error, Result};
use crate::index::kind::{
    Exactness, IndexKind, IndexLeaf, IndexQuery, IndexSegments, LeafAnswer, PlannedLeaf, Want,
};
use crate::index::list_element::details::is_list_element_type_url;
use crate::index::list_element::query::{
    answer_from_index, explain_any_element, plan_any_element_query, AnyElementOptions,
    AnyElementQueryPlan,
};
use crate::index::list_element::ranges::CallStrategy;
use crate::io::IoStats;
use crate::lance::dataset::{DatasetVersion, IndexSegment};

/// The list element kind.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ListElementKind;

/// An `any_element` call planned on the list element indices of its column.
#[derive(Debug)]
pub(crate) struct PlannedListElement {
    /// The call's plan (for [`Want::False`], the plan of `NOT call`).
    pub(crate) plan: AnyElementQueryPlan,
    /// Fragments answered: those the chosen index covers (the engine evaluates the others
    /// on their lists), none when no index answers the call.
    pub(crate) coverage: RoaringBitmap,
}

#[async_trait]
impl IndexKind for ListElementKind {
    fn name(&self) -> &'static str {
        "list_element"
    }

    fn reads(&self, segment: &IndexSegment) -> bool {
        segment
            .details_type_url
            .as_deref()
            .is_some_and(is_list_element_type_url)
    }

    fn plans_itself(&self, leaf: &IndexLeaf) -> bool {
        matches!(leaf.query, IndexQuery::AnyElement(_))
    }

    async fn is_cached(&self, _dataset: &DatasetVersion, _index: &IndexSegments) -> bool {
        false
    }

    fn check(
        &self,
        _dataset: &DatasetVersion,
        _index: &IndexSegments,
        leaf: &IndexLeaf,
    ) -> std::result::Result<Exactness, String> {
        match leaf.query {
            IndexQuery::AnyElement(_) => Ok(Exactness::Exact),
            _ => Err(format!(
                "a list element index does not answer {}",
                leaf.text
            )),
        }
    }

    async fn plan(
        &self,
        dataset: &DatasetVersion,
        _index: &IndexSegments,
        leaf: &IndexLeaf,
        want: Want,
        stats: &IoStats,
    ) -> Result<Box<dyn PlannedLeaf>> {
        Ok(Box::new(self.plan_call(dataset, leaf, want, stats).await?))
    }
}

impl ListElementKind {
    /// Plan an `any_element` leaf on the list element indices of its column (the call's
    /// planner chooses among them, or evaluates on data when none answers).
    async fn plan_call(
        &self,
        dataset: &DatasetVersion,
        leaf: &IndexLeaf,
        want: Want,
        stats: &IoStats,
    ) -> Result<PlannedListElement> {
        let IndexQuery::AnyElement(call) = &leaf.query else {
            return Err(Error::InvalidArgument(format!(
                "a list element index does not answer {}",
                leaf.text
            )));
        };
        let mut call = call.clone();
        call.negated = want == Want::False;
        let plan =
            plan_any_element_query(dataset, &call, AnyElementOptions::default(), stats).await?;
        let coverage = match (&plan.strategy, &plan.chosen) {
            (CallStrategy::EvaluateOnData { .. }, _) | (_, None) => RoaringBitmap::new(),
            (_, Some(chosen)) => chosen.covered.clone(),
        };
        Ok(PlannedListElement { plan, coverage })
    }
}

#[async_trait]
impl PlannedLeaf for PlannedListElement {
    fn coverage(&self) -> &RoaringBitmap {
        &self.coverage
    }

    fn exactness(&self) -> Exactness {
        match self.plan.strategy {
            CallStrategy::IndexThenRecheck => Exactness::Candidates,
            _ => Exactness::Exact,
        }
    }

    fn explain(&self) -> serde_json::Value {
        let mut e = explain_any_element(&self.plan);
        e["kind"] = "list_element".into();
        e
    }

    async fn answer(&self, dataset: &DatasetVersion, stats: &IoStats) -> Result<LeafAnswer> {
        if self.coverage.is_empty() {
            return Ok(LeafAnswer::default());
        }
        let rows = answer_from_index(dataset, &self.plan, stats).await?;
        Ok(LeafAnswer {
            sure: rows.sure,
            maybe: rows.maybe,
            read: serde_json::Value::Null,
        })
    }

    fn evaluates_every_row(&self) -> bool {
        matches!(self.plan.strategy, CallStrategy::EvaluateOnData { .. })
    }
}
