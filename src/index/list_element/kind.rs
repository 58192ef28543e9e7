//! The list element index behind the [`IndexKind`] interface: `any_element(col, '...')`
//! answered by [`crate::index::list_element::query`] (index search, recheck of supersets,
//! complement for `NOT`, fragments the index does not cover evaluated on their lists).

use async_trait::async_trait;
use roaring::RoaringBitmap;

use crate::error::{Error, Result};
use crate::index::kind::{
    Exactness, IndexKind, IndexLeaf, IndexQuery, IndexSegments, LeafAnswer, PlannedLeaf, Want,
};
use crate::index::list_element::details::is_list_element_type_url;
use crate::index::list_element::query::{
    evaluate_call_rows, execute_any_element_query, explain_any_element, plan_any_element_query,
    AnyElementOptions, AnyElementQueryPlan,
};
use crate::index::list_element::ranges::CallStrategy;
use crate::io::IoStats;
use crate::lance::dataset::{Dataset, Fragment, IndexSegment};

/// The list element kind.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ListElementKind;

/// An `any_element` call planned on the list element indices of its column.
#[derive(Debug)]
pub(crate) struct PlannedListElement {
    /// The call's plan (for [`Want::False`], the plan of `NOT call`).
    pub(crate) plan: AnyElementQueryPlan,
    /// Fragments answered: every current fragment when an index is used (fragments it
    /// does not cover are evaluated on data by the call's own plan), none when the call
    /// is evaluated on data (the engine then reads only the rows it needs).
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

    async fn is_cached(&self, _dataset: &Dataset, _index: &IndexSegments) -> bool {
        false
    }

    fn check(
        &self,
        _dataset: &Dataset,
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
        dataset: &Dataset,
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
        dataset: &Dataset,
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
        let coverage = match plan.strategy {
            CallStrategy::EvaluateOnData { .. } => RoaringBitmap::new(),
            _ => dataset.manifest().fragment_ids(),
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
        Exactness::Exact
    }

    fn explain(&self) -> serde_json::Value {
        let mut e = explain_any_element(&self.plan);
        e["kind"] = "list_element".into();
        e
    }

    async fn answer(&self, dataset: &Dataset, stats: &IoStats) -> Result<LeafAnswer> {
        if self.coverage.is_empty() {
            return Ok(LeafAnswer::default());
        }
        let answer = execute_any_element_query(dataset, &self.plan, stats).await?;
        Ok(LeafAnswer {
            sure: answer.row_addresses,
            maybe: Default::default(),
            read: serde_json::json!({"rechecked_rows": answer.rechecked_rows}),
        })
    }

    fn rechecks(&self) -> bool {
        matches!(self.plan.strategy, CallStrategy::IndexThenRecheck)
    }

    fn evaluates_every_row(&self) -> bool {
        matches!(self.plan.strategy, CallStrategy::EvaluateOnData { .. })
    }

    async fn evaluate_rows(
        &self,
        dataset: &Dataset,
        fragment: &Fragment,
        offsets: Vec<u64>,
        stats: &IoStats,
    ) -> Result<Vec<Option<bool>>> {
        evaluate_call_rows(dataset, &self.plan, fragment, offsets, stats).await
    }
}
