//! Answering `any_element(col, 'predicate')` (and `NOT any_element(...)`) on a dataset.
//!
//! **Plan** (one wave): resolve the column and type the predicate against its element
//! fields; find the list element indices on the column (segments grouped by name),
//! decode and resolve each against the current schema (a refused index is reported and
//! skipped), plan the call on each usable one and choose the best; open the target
//! BTree segments (lookup + page-data metadata) and the data files of the fragments that
//! will be evaluated on data (not covered by the index, or all of them).
//!
//! **Execute**: search the target for the planned ranges (pages touched only, one
//! page-init wave + one chunk wave), read deletion files and scanned fragments at the
//! same time; then, for a superset, read just the candidate rows' lists and recheck
//! them. Row addresses of deleted rows and of fragments the index does not cover are
//! never taken from the index.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Bound;

use prost_types::Any;
use roaring::{RoaringBitmap, RoaringTreemap};

use super::details::{check_segments_agree, decode_details, Refusal, RefusalKind};
use super::ranges::{
    plan_any_element, AnyElementPlan, CallStrategy, IndexAnswer, NullRows, PlanOptions,
};
use super::resolve::{resolve, ElementField, FieldView, ResolvedListElementIndex, SchemaView};
use super::stitch::{stitch_list_parts, ListPart, WantedField};
use super::three_valued::evaluate_any_element;
use crate::error::{Error, Result};
use crate::index::btree_file::exec::{answer_segment, open_segment, OpenedSegment};
use crate::index::btree_file::PageSelection;
use crate::index::key::Key;
use crate::index::predicate::{Leaf, LeafQuery, Predicate};
use crate::index::sql::bind::BoundPredicate as BoundElementPredicate;
use crate::index::sql::call::AnyElementCall;
use crate::io::IoStats;
use crate::lance::dataset::schema::Schema;
use crate::lance::dataset::{Dataset, Fragment, IndexSegment};
use crate::lance::reader::RowSelection;

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
    /// Field id of the list column.
    pub(crate) column_id: i32,
    /// The typed predicate.
    pub(crate) bound: BoundElementPredicate,
    /// Element fields the predicate reads, for data reads.
    pub(crate) wanted: Vec<WantedField>,
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

/// The answer of an `any_element` query.
#[derive(Debug, Clone, Default)]
pub(crate) struct AnyElementAnswer {
    /// Row addresses where the call (or its NOT) is TRUE.
    pub(crate) row_addresses: RoaringTreemap,
    /// Rows the index returned for a recheck.
    pub(crate) rechecked_rows: u64,
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

/// The list column a call reads and the call's predicate typed against its element fields.
struct TypedCall {
    column_id: i32,
    bound: BoundElementPredicate,
    wanted: Vec<WantedField>,
}

/// Resolve the call's column (a list of struct) and type its predicate against the
/// element fields.
fn type_call(schema: &Schema, call: &AnyElementCall) -> Result<TypedCall> {
    let column = schema.field_by_path(&call.column).ok_or_else(|| {
        Error::InvalidArgument(format!("any_element: no column named {:?}", call.column))
    })?;
    let item = match (
        column.logical_type.as_str(),
        SchemaView::children_of(schema, column.id).as_slice(),
    ) {
        ("list" | "list.struct" | "large_list" | "large_list.struct", [item])
            if item.logical_type == "struct" =>
        {
            item.id
        }
        (t, _) => {
            return Err(Error::InvalidArgument(format!(
                "any_element: column {:?} has type {t}, not a list of struct",
                call.column
            )))
        }
    };
    let element_fields: Vec<ElementField> = SchemaView::children_of(schema, item)
        .iter()
        .map(|f| ElementField::new(f.id, f.name, f.logical_type))
        .collect();
    let bound = BoundElementPredicate::parse(&call.predicate, &element_fields)?;
    let wanted: Vec<WantedField> = bound
        .fields
        .iter()
        .map(|f| WantedField {
            id: f.id,
            name: f.name.clone(),
            data_type: f.data_type.clone(),
        })
        .collect();
    Ok(TypedCall {
        column_id: column.id,
        bound,
        wanted,
    })
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
    dataset: &Dataset,
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
    dataset: &Dataset,
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
        column_id: typed.column_id,
        bound: typed.bound,
        wanted: typed.wanted,
        indices,
        chosen,
        strategy,
        target_predicate: target,
        scans,
    })
}

/// One data file holding (part of) the list column.
pub(crate) struct ListFile {
    /// The open data file.
    pub(crate) reader: crate::lance::data_file::DataFileReader,
    /// Position of the list column among the file's top-level fields.
    pub(crate) field_index: usize,
    /// Lance field ids of the element struct's children in this file.
    pub(crate) child_ids: Vec<i32>,
}

/// Open the data files of `fragment` needed to read the `wanted` element fields of the
/// list column (at least one holding the list structure), in one wave.
pub(crate) async fn open_list_files(
    dataset: &Dataset,
    fragment: &Fragment,
    column_id: i32,
    wanted: &[WantedField],
    stats: &IoStats,
) -> Result<Vec<ListFile>> {
    let schema = &dataset.manifest().schema;
    let subtree = subtree_ids(schema, column_id);
    let holding: Vec<&crate::lance::dataset::DataFile> = fragment
        .files
        .iter()
        .filter(|d| d.fields.iter().any(|f| subtree.contains(f)))
        .collect();
    let mut chosen: Vec<&crate::lance::dataset::DataFile> = Vec::new();
    for w in wanted {
        if let Some(d) = holding.iter().find(|d| d.fields.contains(&w.id)) {
            if !chosen.iter().any(|c| c.path == d.path) {
                chosen.push(d);
            }
        }
    }
    if chosen.is_empty() {
        chosen.extend(holding.first());
    }
    let opens = chosen.iter().map(|d| async move {
        let (reader, field_index) = dataset
            .open_data_field(fragment, d, column_id, stats)
            .await?;
        let field = &reader.schema().fields[field_index];
        let child_ids = match field.children.as_slice() {
            [item] => item.children.iter().map(|c| c.id).collect(),
            _ => {
                return Err(Error::corrupt(format!(
                    "field {column_id} is not a list of struct in this file"
                ))
                .at(reader.path().as_ref(), None))
            }
        };
        Ok(ListFile {
            reader,
            field_index,
            child_ids,
        })
    });
    futures::future::try_join_all(opens).await
}

fn subtree_ids(schema: &Schema, root: i32) -> BTreeSet<i32> {
    let mut out = BTreeSet::from([root]);
    // Pre-order: a parent precedes its children.
    for f in &schema.fields {
        if out.contains(&f.parent_id) {
            out.insert(f.id);
        }
    }
    out
}

/// The wanted element fields of `offsets` (sorted) of a fragment, as one list array.
async fn read_lists(
    dataset: &Dataset,
    fragment: &Fragment,
    column_id: i32,
    wanted: &[WantedField],
    offsets: Option<Vec<u64>>,
    stats: &IoStats,
) -> Result<arrow_array::ArrayRef> {
    let files = open_list_files(dataset, fragment, column_id, wanted, stats).await?;
    let (selection, rows) = match offsets {
        Some(o) => {
            let n = o.len();
            (RowSelection::Rows(o), n)
        }
        None => (
            RowSelection::Range(0..fragment.physical_rows),
            fragment.physical_rows as usize,
        ),
    };
    if rows == 0 {
        return stitch_list_parts(&[], wanted, 0);
    }
    let reads = files.iter().map(|f| {
        let selection = selection.clone();
        async move {
            let batch = f
                .reader
                .read_rows(&[f.field_index], &selection, stats)
                .await?;
            Ok::<_, Error>(ListPart {
                array: std::sync::Arc::clone(batch.column(0)),
                child_ids: f.child_ids.clone(),
            })
        }
    });
    let parts = futures::future::try_join_all(reads).await?;
    stitch_list_parts(&parts, wanted, rows)
}

/// Evaluate the call on rows of a fragment: offsets whose result is `want`.
async fn evaluate_fragment(
    dataset: &Dataset,
    plan: &AnyElementQueryPlan,
    fragment: &Fragment,
    offsets: Option<Vec<u64>>,
    want: Option<bool>,
    stats: &IoStats,
) -> Result<(u64, RoaringBitmap)> {
    let rows: Vec<u64> = match &offsets {
        Some(o) => o.clone(),
        None => (0..fragment.physical_rows).collect(),
    };
    let lists = read_lists(
        dataset,
        fragment,
        plan.column_id,
        &plan.wanted,
        offsets,
        stats,
    )
    .await?;
    let result = evaluate_any_element(lists.as_ref(), &plan.bound)?;
    let mut out = RoaringBitmap::new();
    for (offset, r) in rows.iter().zip(result.iter()) {
        if r == want {
            out.insert(
                u32::try_from(*offset).map_err(|_| Error::corrupt("row offset beyond u32"))?,
            );
        }
    }
    Ok((fragment.id, out))
}

/// The truth of the call (not of its `NOT`) on `offsets` (sorted, unique) of `fragment`,
/// reading only those rows' lists (the filter engine's data evaluation).
pub(crate) async fn evaluate_call_rows(
    dataset: &Dataset,
    plan: &AnyElementQueryPlan,
    fragment: &Fragment,
    offsets: Vec<u64>,
    stats: &IoStats,
) -> Result<Vec<Option<bool>>> {
    let n = offsets.len();
    let selection = (n as u64 != fragment.physical_rows).then_some(offsets);
    let lists = read_lists(
        dataset,
        fragment,
        plan.column_id,
        &plan.wanted,
        selection,
        stats,
    )
    .await?;
    let result = evaluate_any_element(lists.as_ref(), &plan.bound)?;
    if result.len() != n {
        return Err(Error::corrupt("list read returned fewer rows than asked"));
    }
    Ok(result.iter().collect())
}

/// Deletion vectors by fragment id.
type Deletions = HashMap<u64, std::sync::Arc<crate::lance::dataset::DeletionVector>>;

/// Remove the deleted rows of `fragment` from `offsets`.
fn drop_deleted(deletions: &Deletions, fragment: u64, offsets: &mut RoaringBitmap) {
    if let Some(d) = deletions.get(&fragment) {
        *offsets -= &d.0;
    }
}

/// What the first wave of an execution read: target ids per segment, scanned fragments'
/// matching offsets, and deletion vectors.
struct FirstWave {
    ids: Vec<Vec<u64>>,
    scanned: Vec<(u64, RoaringBitmap)>,
    deletions: Deletions,
}

/// Search the targets, evaluate the scanned fragments and read deletion files at once.
async fn first_wave(
    dataset: &Dataset,
    plan: &AnyElementQueryPlan,
    stats: &IoStats,
) -> Result<FirstWave> {
    let manifest = dataset.manifest();
    // On data, positive calls keep TRUE rows; NOT keeps FALSE rows.
    let want = Some(!plan.call.negated);
    let with_deletions: Vec<&Fragment> = manifest
        .fragments
        .iter()
        .filter(|f| f.deletion.is_some())
        .collect();
    let searches = plan.chosen.iter().flat_map(|c| c.targets.iter()).map(|t| {
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
    let scans = plan
        .scans
        .iter()
        .filter_map(|id| manifest.fragment(*id))
        .map(|f| evaluate_fragment(dataset, plan, f, None, want, stats));
    let (ids, scanned, deletions) = futures::try_join!(
        futures::future::try_join_all(searches),
        futures::future::try_join_all(scans),
        dataset.deletion_vectors(&with_deletions, stats)
    )?;
    Ok(FirstWave {
        ids,
        scanned,
        deletions,
    })
}

/// Index hits per fragment: covered by their segment, inside the fragment, not deleted.
fn index_hits(
    fragments: &[Fragment],
    chosen: Option<&ChosenIndex>,
    wave: &FirstWave,
) -> BTreeMap<u64, RoaringBitmap> {
    let physical: HashMap<u64, u64> = fragments.iter().map(|f| (f.id, f.physical_rows)).collect();
    let mut hits: BTreeMap<u64, RoaringBitmap> = BTreeMap::new();
    if let Some(chosen) = chosen {
        for (target, ids) in chosen.targets.iter().zip(&wave.ids) {
            for &id in ids {
                let (fragment, offset) = (id >> 32, (id & 0xFFFF_FFFF) as u32);
                if target.coverage.contains(fragment as u32)
                    && u64::from(offset) < physical.get(&fragment).copied().unwrap_or(0)
                {
                    hits.entry(fragment).or_default().insert(offset);
                }
            }
        }
    }
    for (fragment, offsets) in hits.iter_mut() {
        drop_deleted(&wave.deletions, *fragment, offsets);
    }
    hits
}

/// NOT from the index: every live row of a covered fragment that is not a hit.
fn add_complement(
    fragments: &[Fragment],
    covered: &RoaringBitmap,
    deletions: &Deletions,
    hits: &BTreeMap<u64, RoaringBitmap>,
    result: &mut BTreeMap<u64, RoaringBitmap>,
) -> Result<()> {
    for f in fragments.iter().filter(|f| covered.contains(f.id as u32)) {
        let mut all = RoaringBitmap::new();
        all.insert_range(
            0..u32::try_from(f.physical_rows).map_err(|_| Error::corrupt("fragment too large"))?,
        );
        drop_deleted(deletions, f.id, &mut all);
        if let Some(h) = hits.get(&f.id) {
            all -= h;
        }
        *result.entry(f.id).or_default() |= all;
    }
    Ok(())
}

/// Recheck the index hits on their lists; add the TRUE rows to `result`. Returns the
/// number of rows rechecked.
async fn add_rechecked(
    dataset: &Dataset,
    plan: &AnyElementQueryPlan,
    hits: &BTreeMap<u64, RoaringBitmap>,
    result: &mut BTreeMap<u64, RoaringBitmap>,
    stats: &IoStats,
) -> Result<u64> {
    let manifest = dataset.manifest();
    let mut rechecked_rows = 0;
    let rechecks = hits
        .iter()
        .filter(|(_, o)| !o.is_empty())
        .filter_map(|(fragment, offsets)| {
            rechecked_rows += offsets.len();
            let f = manifest.fragment(*fragment)?;
            let offsets: Vec<u64> = offsets.iter().map(u64::from).collect();
            Some(evaluate_fragment(
                dataset,
                plan,
                f,
                Some(offsets),
                Some(true),
                stats,
            ))
        });
    for (fragment, offsets) in futures::future::try_join_all(rechecks).await? {
        *result.entry(fragment).or_default() |= offsets;
    }
    Ok(rechecked_rows)
}

/// Execute a plan.
pub(crate) async fn execute_any_element_query(
    dataset: &Dataset,
    plan: &AnyElementQueryPlan,
    stats: &IoStats,
) -> Result<AnyElementAnswer> {
    let manifest = std::sync::Arc::clone(dataset.manifest());
    let wave = first_wave(dataset, plan, stats).await?;
    let hits = index_hits(&manifest.fragments, plan.chosen.as_ref(), &wave);
    let mut result: BTreeMap<u64, RoaringBitmap> = BTreeMap::new();
    for (fragment, mut offsets) in wave.scanned {
        drop_deleted(&wave.deletions, fragment, &mut offsets);
        *result.entry(fragment).or_default() |= offsets;
    }
    let mut rechecked_rows = 0;
    match &plan.strategy {
        CallStrategy::IndexExact => {
            for (fragment, offsets) in hits {
                *result.entry(fragment).or_default() |= offsets;
            }
        }
        CallStrategy::IndexComplement => {
            let covered = plan
                .chosen
                .as_ref()
                .map(|c| c.covered.clone())
                .unwrap_or_default();
            add_complement(
                &manifest.fragments,
                &covered,
                &wave.deletions,
                &hits,
                &mut result,
            )?;
        }
        CallStrategy::IndexThenRecheck => {
            rechecked_rows = add_rechecked(dataset, plan, &hits, &mut result, stats).await?;
        }
        CallStrategy::EvaluateOnData { .. } => {}
    }
    let mut row_addresses = RoaringTreemap::new();
    for (fragment, offsets) in result {
        row_addresses.extend(offsets.iter().map(|o| (fragment << 32) | u64::from(o)));
    }
    Ok(AnyElementAnswer {
        row_addresses,
        rechecked_rows,
    })
}

/// Plan and execute (the suite's stress tests).
#[cfg(test)]
pub(crate) async fn query_any_element(
    dataset: &Dataset,
    call: &AnyElementCall,
    options: AnyElementOptions,
    stats: &IoStats,
) -> Result<AnyElementAnswer> {
    let plan = plan_any_element_query(dataset, call, options, stats).await?;
    execute_any_element_query(dataset, &plan, stats).await
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
        "predicate": plan.bound.describe(&plan.bound.predicate),
        "indices": plan.indices,
        "strategy": strategy,
        "reason": reason,
        "index": chosen,
        "scan_fragments": plan.scans,
    })
}
