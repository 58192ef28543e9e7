//! Answering `any_element(col, 'predicate')` (and `NOT any_element(...)`) on a dataset.
//!
//! **Plan** (one wave): resolve the column and type the predicate against its element
//! fields; find the list element indices on the column (segments grouped by name),
//! decode and resolve each against the current schema (a refused index is reported and
//! skipped), plan the call on each usable one and choose the best; open the target
//! BTree segments (lookup + page-data metadata) and the data files of the fragments that
//! will be evaluated on data (not covered by the index, or all of them).
//!
//! **Answer**: search the target for the planned ranges (pages touched only, one page-init
//! wave + one chunk wave): the TRUE rows, the candidates of a superset, or for `NOT` the
//! covered rows minus every row that is not FALSE. Everything else — the fragments the index
//! does not cover, rechecking candidates, deleted rows — is the filter engine's, as for every
//! kind.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;

use prost_types::Any;
use roaring::{RoaringBitmap, RoaringTreemap};

use super::details::{check_segments_agree, decode_details, Refusal, RefusalKind};
use super::ranges::{
    plan_any_element, AnyElementPlan, CallStrategy, IndexAnswer, NullRows, PlanOptions,
};
use super::resolve::{resolve, FieldView, ResolvedListElementIndex, SchemaView};
use crate::error::Result;
use crate::index::btree_file::exec::{answer_segment, open_segment, OpenedSegment};
use crate::index::btree_file::PageSelection;
use crate::index::key::Key;
use crate::index::kind::fragment_rows;
use crate::index::list_data::{open_list_files, type_call, TypedCall};
use crate::index::predicate::{Leaf, LeafQuery, Predicate};
use crate::index::sql::call::AnyElementCall;
use crate::io::IoStats;
use crate::lance::dataset::schema::Schema;
use crate::lance::dataset::{DatasetVersion, Fragment, IndexSegment};

impl SchemaView for Schema {
    fn field_by_id(&self, id: i32) -> Option<FieldView<'_>> {
        Schema::field_by_id(self, id).map(|f| FieldView {
            id: f.id,
            parent_id: f.parent_id,
            name: &f.name,
            logical_type: &f.logical_type,
        })
    }

    fn children_of(&self, id: i32) -> Vec<FieldView<'_>> {
        self.fields
            .iter()
            .filter(|f| f.parent_id == id && f.id != id)
            .map(|f| FieldView {
                id: f.id,
                parent_id: f.parent_id,
                name: &f.name,
                logical_type: &f.logical_type,
            })
            .collect()
    }

    fn path_of(&self, id: i32) -> String {
        Schema::path_of(self, id)
    }
}

/// Options of an `any_element` query.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct AnyElementOptions {
    /// Planner limits.
    pub(crate) plan: PlanOptions,
}

/// One target segment in a plan.
#[derive(Debug, Clone)]
pub(crate) struct PlannedTarget {
    /// Its manifest entry.
    pub(crate) segment: IndexSegment,
    /// Fragments it answers for (its bitmap intersected with the current fragments).
    pub(crate) coverage: RoaringBitmap,
    /// The opened target BTree.
    pub(crate) opened: OpenedSegment,
    /// Pages the search touches.
    pub(crate) selection: PageSelection,
}

/// The index chosen for a call.
#[derive(Debug)]
pub(crate) struct ChosenIndex {
    /// Index name.
    pub(crate) name: String,
    /// The resolved keys.
    pub(crate) resolved: ResolvedListElementIndex,
    /// The plan of the call on this index.
    pub(crate) plan: AnyElementPlan,
    /// Segments to search (empty when nothing needs to be searched).
    pub(crate) targets: Vec<PlannedTarget>,
    /// Fragments covered by the segments.
    pub(crate) covered: RoaringBitmap,
}

/// What an `any_element` query will read and how it answers.
#[derive(Debug)]
pub(crate) struct AnyElementQueryPlan {
    /// The call.
    pub(crate) call: AnyElementCall,
    /// The call typed against its column.
    pub(crate) typed: TypedCall,
    /// One line per list element index on the column: refused, or how it would answer.
    pub(crate) indices: Vec<String>,
    /// The index used.
    pub(crate) chosen: Option<ChosenIndex>,
    /// How the call is answered.
    pub(crate) strategy: CallStrategy,
    /// The search in the target: the planned ranges (and null values for NOT).
    pub(crate) target_predicate: Option<Predicate>,
    /// Fragments evaluated on their data.
    pub(crate) scans: Vec<u64>,
}

fn refuse(kind: RefusalKind, reason: impl Into<String>) -> Refusal {
    Refusal::new(kind, reason)
}

/// Decode, agree and resolve the segments of one logical index.
fn prepare_index(
    segments: &[IndexSegment],
    schema: &Schema,
) -> std::result::Result<ResolvedListElementIndex, Refusal> {
    let mut all = Vec::with_capacity(segments.len());
    for s in segments {
        let any = Any {
            type_url: s.details_type_url.clone().unwrap_or_default(),
            value: s.details.clone(),
        };
        all.push(decode_details(&any)?);
        if s.fragment_bitmap.is_none() {
            return Err(refuse(
                RefusalKind::NoCoverage,
                "a segment does not record which fragments it covers",
            ));
        }
        if s.base_id.is_some() {
            return Err(refuse(
                RefusalKind::UnsupportedLocation,
                format!("segment {} lives under another base path", s.uuid_string()),
            ));
        }
    }
    check_segments_agree(&all)?;
    let mut resolved = None;
    for (s, d) in segments.iter().zip(&all) {
        let r = resolve(d, &s.fields, s.index_version, schema)?;
        if resolved.is_none() {
            resolved = Some(r);
        }
    }
    resolved.ok_or_else(|| refuse(RefusalKind::NoKeys, "the index has no segments"))
}

fn is_list_element_segment(s: &IndexSegment, column_id: i32) -> bool {
    s.fields == [column_id]
        && s.details_type_url
            .as_deref()
            .is_some_and(super::details::is_list_element_type_url)
}

/// Rank of a plan for a call (lower is better).
fn rank(plan: &AnyElementPlan, negated: bool) -> (u8, u8, usize) {
    let strategy = match plan.strategy(negated) {
        CallStrategy::IndexExact | CallStrategy::IndexComplement => 0,
        CallStrategy::IndexThenRecheck => 1,
        CallStrategy::EvaluateOnData { .. } => 2,
    };
    let answer = match plan.answer {
        IndexAnswer::Exact => 0,
        IndexAnswer::SupersetWithRecheck => 1,
        IndexAnswer::NotUsed => 2,
    };
    (strategy, answer, plan.residual.len())
}

fn range_leaf(lower: &[u8], upper: Option<&[u8]>) -> Predicate {
    Predicate::Leaf(Leaf {
        column: 0,
        query: LeafQuery::Range {
            lower: Bound::Included(Key::Bytes(lower.to_vec())),
            upper: upper.map_or(Bound::Unbounded, |u| {
                Bound::Excluded(Key::Bytes(u.to_vec()))
            }),
        },
    })
}

/// The search in the target for a strategy: the TRUE ranges, or for NOT every row to
/// exclude (TRUE ranges, UNKNOWN ranges and null lists).
fn target_predicate(plan: &AnyElementPlan, strategy: &CallStrategy) -> Option<Predicate> {
    let mut leaves: Vec<Predicate> = plan
        .true_ranges
        .iter()
        .map(|r| range_leaf(&r.lower, r.upper.as_deref()))
        .collect();
    if *strategy == CallStrategy::IndexComplement {
        if let NullRows::FromIndex { ranges } = &plan.null_rows {
            leaves.extend(
                ranges
                    .iter()
                    .map(|r| range_leaf(&r.lower, r.upper.as_deref())),
            );
        }
        leaves.push(Predicate::Leaf(Leaf {
            column: 0,
            query: LeafQuery::IsNull,
        }));
    }
    match leaves.len() {
        0 => None,
        1 => leaves.pop(),
        _ => Some(Predicate::Or(leaves)),
    }
}

/// A usable list element index on the column and the call's plan on it.
struct Candidate {
    name: String,
    segments: Vec<IndexSegment>,
    resolved: ResolvedListElementIndex,
    plan: AnyElementPlan,
}

/// Every list element index on the column (segments grouped by name): one explain line
/// each (refused, or how it would answer), and the usable ones with their plans.
fn plan_on_indices(
    schema: &Schema,
    segments: &[IndexSegment],
    typed: &TypedCall,
    options: &AnyElementOptions,
) -> Result<(Vec<String>, Vec<Candidate>)> {
    let mut by_name: BTreeMap<String, Vec<IndexSegment>> = BTreeMap::new();
    for s in segments
        .iter()
        .filter(|s| is_list_element_segment(s, typed.column_id))
    {
        by_name.entry(s.name.clone()).or_default().push(s.clone());
    }
    let mut indices = Vec::new();
    let mut candidates = Vec::new();
    for (name, segments) in by_name {
        match prepare_index(&segments, schema) {
            Ok(resolved) => {
                let plan = plan_any_element(
                    &typed.bound,
                    &resolved.keys,
                    &resolved.encoder,
                    &options.plan,
                )?;
                indices.push(format!(
                    "index {name:?}: {}",
                    plan.explain().first().cloned().unwrap_or_default()
                ));
                candidates.push(Candidate {
                    name,
                    segments,
                    resolved,
                    plan,
                });
            }
            Err(refusal) => indices.push(format!("index {name:?}: {refusal}")),
        }
    }
    Ok((indices, candidates))
}

/// How the call is answered: the best candidate's strategy, or on data with the reason.
fn choose_strategy(
    best: Option<&Candidate>,
    indices: &[String],
    call: &AnyElementCall,
) -> CallStrategy {
    match best {
        Some(c) => c.plan.strategy(call.negated),
        None if indices.is_empty() => CallStrategy::EvaluateOnData {
            reason: format!("column {:?} has no list element index", call.column),
        },
        None => CallStrategy::EvaluateOnData {
            reason: format!("no usable list element index: {}", indices.join("; ")),
        },
    }
}

/// The chosen index with the segments that cover current fragments, before they are opened.
struct PendingChoice {
    name: String,
    resolved: ResolvedListElementIndex,
    plan: AnyElementPlan,
    /// Segments covering at least one current fragment, with that coverage.
    planned: Vec<(IndexSegment, RoaringBitmap)>,
    covered: RoaringBitmap,
}

impl PendingChoice {
    /// Keep the segments of `candidate` that cover fragments in `current`.
    fn cover(candidate: Candidate, current: &RoaringBitmap) -> Self {
        let mut covered = RoaringBitmap::new();
        let mut planned = Vec::new();
        for s in candidate.segments {
            let coverage = s
                .fragment_bitmap
                .as_ref()
                .map(|b| b & current)
                .unwrap_or_default();
            if coverage.is_empty() {
                continue;
            }
            covered |= &coverage;
            planned.push((s, coverage));
        }
        PendingChoice {
            name: candidate.name,
            resolved: candidate.resolved,
            plan: candidate.plan,
            planned,
            covered,
        }
    }

    /// The chosen index, its segments opened (`opened` follows `planned`; empty when there
    /// is nothing to search).
    fn into_chosen(self, target: Option<&Predicate>, opened: Vec<OpenedSegment>) -> ChosenIndex {
        let targets = match target {
            Some(predicate) => self
                .planned
                .into_iter()
                .zip(opened)
                .map(|((segment, coverage), opened)| {
                    let selection = opened.lookup.select(predicate);
                    PlannedTarget {
                        segment,
                        coverage,
                        opened,
                        selection,
                    }
                })
                .collect(),
            None => Vec::new(),
        };
        ChosenIndex {
            name: self.name,
            resolved: self.resolved,
            plan: self.plan,
            targets,
            covered: self.covered,
        }
    }
}

/// Fragments evaluated on their data: those the chosen index does not cover (all without one).
fn scanned_fragments(fragments: &[Fragment], covered: Option<&RoaringBitmap>) -> Vec<u64> {
    fragments
        .iter()
        .map(|f| f.id)
        .filter(|id| covered.is_none_or(|c| !c.contains(*id as u32)))
        .collect()
}

/// One wave: the target segments (only when there is something to `search`) and the data
/// files of the scanned fragments.
async fn open_plan_files(
    dataset: &DatasetVersion,
    chosen: Option<&PendingChoice>,
    search: bool,
    scans: &[u64],
    typed: &TypedCall,
    stats: &IoStats,
) -> Result<Vec<OpenedSegment>> {
    let manifest = dataset.manifest();
    let opens = chosen
        .iter()
        .flat_map(|c| c.planned.iter())
        .filter(|_| search)
        .map(|(s, _)| open_segment(dataset, s, stats));
    let scan_frags: Vec<&Fragment> = scans
        .iter()
        .filter_map(|id| manifest.fragment(*id))
        .collect();
    let warm = scan_frags
        .iter()
        .map(|f| open_list_files(dataset, f, typed.column_id, &typed.wanted, stats));
    let (opened, _) = futures::try_join!(
        futures::future::try_join_all(opens),
        futures::future::try_join_all(warm)
    )?;
    Ok(opened)
}

/// Plan an `any_element` call on `dataset` (one wave of metadata reads).
pub(crate) async fn plan_any_element_query(
    dataset: &DatasetVersion,
    call: &AnyElementCall,
    options: AnyElementOptions,
    stats: &IoStats,
) -> Result<AnyElementQueryPlan> {
    let manifest = std::sync::Arc::clone(dataset.manifest());
    let typed = type_call(&manifest.schema, call)?;
    let (indices, candidates) =
        plan_on_indices(&manifest.schema, &manifest.indices, &typed, &options)?;
    let best = candidates
        .into_iter()
        .min_by_key(|c| rank(&c.plan, call.negated));
    let strategy = choose_strategy(best.as_ref(), &indices, call);
    let (chosen, target) = match best {
        Some(c) if !matches!(strategy, CallStrategy::EvaluateOnData { .. }) => {
            let target = target_predicate(&c.plan, &strategy);
            (
                Some(PendingChoice::cover(c, &manifest.fragment_ids())),
                target,
            )
        }
        _ => (None, None),
    };
    let scans = scanned_fragments(&manifest.fragments, chosen.as_ref().map(|c| &c.covered));
    let opened = open_plan_files(
        dataset,
        chosen.as_ref(),
        target.is_some(),
        &scans,
        &typed,
        stats,
    )
    .await?;
    let chosen = chosen.map(|c| c.into_chosen(target.as_ref(), opened));
    Ok(AnyElementQueryPlan {
        call: call.clone(),
        typed,
        indices,
        chosen,
        strategy,
        target_predicate: target,
        scans,
    })
}

/// What the chosen index answers for a planned call: the rows where the call (for a
/// negated plan, its `NOT`) is surely TRUE, and candidates to recheck on data. Covered
/// fragments only; deleted rows are left to the engine.
#[derive(Debug, Default)]
pub(crate) struct IndexRows {
    /// Rows surely TRUE.
    pub(crate) sure: RoaringTreemap,
    /// Candidate rows (a superset search).
    pub(crate) maybe: RoaringTreemap,
}

/// Search the targets of `plan` (pages touched only) and answer from their hits.
pub(crate) async fn answer_from_index(
    dataset: &DatasetVersion,
    plan: &AnyElementQueryPlan,
    stats: &IoStats,
) -> Result<IndexRows> {
    let Some(chosen) = &plan.chosen else {
        return Ok(IndexRows::default());
    };
    let searches = chosen.targets.iter().map(|t| {
        let predicate = plan.target_predicate.as_ref();
        async move {
            match predicate {
                Some(p) => answer_segment(dataset, &t.opened, p, stats)
                    .await
                    .map(|a| a.ids),
                None => Ok(Vec::new()),
            }
        }
    });
    let ids = futures::future::try_join_all(searches).await?;
    let hits = index_hits(&dataset.manifest().fragments, chosen, &ids);
    Ok(match plan.strategy {
        CallStrategy::IndexExact => IndexRows {
            sure: hits,
            ..IndexRows::default()
        },
        CallStrategy::IndexThenRecheck => IndexRows {
            maybe: hits,
            ..IndexRows::default()
        },
        CallStrategy::IndexComplement => {
            let mut sure = fragment_rows(dataset, &chosen.covered);
            sure -= &hits;
            IndexRows {
                sure,
                ..IndexRows::default()
            }
        }
        CallStrategy::EvaluateOnData { .. } => IndexRows::default(),
    })
}

/// The row addresses the targets returned that lie in a fragment their segment covers,
/// inside the fragment.
fn index_hits(fragments: &[Fragment], chosen: &ChosenIndex, ids: &[Vec<u64>]) -> RoaringTreemap {
    let physical: HashMap<u64, u64> = fragments.iter().map(|f| (f.id, f.physical_rows)).collect();
    let mut hits = RoaringTreemap::new();
    for (target, ids) in chosen.targets.iter().zip(ids) {
        for &id in ids {
            let (fragment, offset) = (id >> 32, id & 0xFFFF_FFFF);
            if u32::try_from(fragment).is_ok_and(|f| target.coverage.contains(f))
                && offset < physical.get(&fragment).copied().unwrap_or(0)
            {
                hits.insert(id);
            }
        }
    }
    hits
}

/// A JSON description of a plan (`--explain`).
pub(crate) fn explain_any_element(plan: &AnyElementQueryPlan) -> serde_json::Value {
    use serde_json::json;
    let strategy = match &plan.strategy {
        CallStrategy::IndexExact => "index (exact)",
        CallStrategy::IndexThenRecheck => "index superset, recheck on data",
        CallStrategy::IndexComplement => {
            "index complement (NOT from TRUE, UNKNOWN and null-list rows)"
        }
        CallStrategy::EvaluateOnData { .. } => "evaluate on data",
    };
    let reason = match &plan.strategy {
        CallStrategy::EvaluateOnData { reason } => Some(reason.clone()),
        _ => None,
    };
    let chosen = plan.chosen.as_ref().map(|c| {
        json!({
            "name": c.name,
            "keys": c.resolved.keys.iter().map(|k| json!({"field_id": k.field_id, "name": k.name, "written_name": k.written_name, "type": k.key_type.logical_type()})).collect::<Vec<_>>(),
            "plan": c.plan.explain(),
            "segments": c.targets.iter().map(|t| json!({
                "uuid": t.segment.uuid_string(),
                "fragments": t.coverage.iter().collect::<Vec<u32>>(),
                "pages": t.opened.lookup.num_pages(),
                "pages_read": t.selection.keys().collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })
    });
    json!({
        "filter": format!("{}any_element({}, '{}')", if plan.call.negated { "NOT " } else { "" }, plan.call.column, plan.call.predicate.replace('\'', "''")),
        "column": plan.call.column,
        "predicate": plan.typed.bound.describe(&plan.typed.bound.predicate),
        "indices": plan.indices,
        "strategy": strategy,
        "reason": reason,
        "index": chosen,
        "scan_fragments": plan.scans,
    })
}
