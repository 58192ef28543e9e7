//! Planning and executing a filter (see the module docs of [`super`]).

use roaring::{RoaringBitmap, RoaringTreemap};
use serde_json::{json, Value};

use super::data::{
    column_is_cached, open_column, prepare_column, rows_with_value, top_level_column, DataLeaf,
    ScalarLeaf,
};
use super::tree::{bounded, combine, index_query, key_of, shape, Node, Rows, Shape};
use super::{FilterAnswer, FilterOptions};
use crate::error::{Error, Result};
use crate::index::kind::{
    fragment_rows, IndexKind, IndexLeaf, IndexQuery, IndexSegments, LeafAnswer, LeafColumn,
    ListHasMode, PlannedLeaf, Want,
};
use crate::index::list_data::type_call;
use crate::index::sql::bind::{describe, BoundPredicate, SchemaScope, SqlPredicate};
use crate::index::sql::parsed::ParsedFilter;
use crate::io::IoStats;
use crate::lance::dataset::{DatasetVersion, DeletionVector, Fragment};

/// Who answers a leaf from an index.
#[derive(Debug)]
enum Answerer {
    /// No index: evaluated on data.
    None,
    /// The chosen index cannot be read (replanned without it; never executed).
    Unreadable(String, String),
    /// A scalar index kind.
    Index(Box<dyn PlannedLeaf>),
    /// A kind that plans the leaf itself ([`IndexKind::plans_itself`]: the list element
    /// kind) and evaluates it on data itself ([`PlannedLeaf::evaluate_rows`]).
    Itself(Box<dyn PlannedLeaf>),
}

impl Answerer {
    fn planned(&self) -> Option<&dyn PlannedLeaf> {
        match self {
            Answerer::None | Answerer::Unreadable(..) => None,
            Answerer::Index(p) => Some(p.as_ref()),
            Answerer::Itself(p) => Some(p.as_ref()),
        }
    }
}

/// One planned leaf.
#[derive(Debug)]
struct FilterLeaf {
    /// SQL-like text of the leaf.
    text: String,
    /// The column.
    column: String,
    /// Truth value wanted.
    want: Want,
    /// The leaf predicate.
    predicate: SqlPredicate,
    /// Its field's index in the bound fields.
    slot: usize,
    /// Who answers it.
    answerer: Answerer,
    /// Name of the index kind that answers it.
    kind: Option<&'static str>,
    /// Why no (other) index answers it.
    not_used: Vec<String>,
}

/// A planned filter: what it will read, before the index pages are fetched.
#[derive(Debug)]
pub(crate) struct FilterPlan {
    text: String,
    bound: BoundPredicate,
    shape: Shape,
    leaves: Vec<FilterLeaf>,
    full_scan_reason: Option<String>,
    deletion_files: Vec<String>,
    /// The dataset's current fragments.
    fragments: RoaringBitmap,
}

/// The indices on one column, grouped by name in manifest order.
fn indices_on(dataset: &DatasetVersion, field_id: i32) -> Vec<IndexSegments> {
    let mut out: Vec<IndexSegments> = Vec::new();
    for s in dataset
        .manifest()
        .indices
        .iter()
        .filter(|s| s.fields == [field_id])
    {
        match out.iter_mut().find(|i| i.name == s.name) {
            Some(i) => i.segments.push(s.clone()),
            None => out.push(IndexSegments {
                name: s.name.clone(),
                segments: vec![s.clone()],
            }),
        }
    }
    out
}

/// The index leaf for a shape leaf, when its form is one indices answer.
fn index_leaf(bound: &BoundPredicate, predicate: &SqlPredicate, slot: usize) -> Option<IndexLeaf> {
    let field = &bound.fields[slot];
    let query = match predicate {
        SqlPredicate::AnyElement { call, .. } => IndexQuery::AnyElement(call.clone()),
        SqlPredicate::ListHas {
            mode,
            values,
            has_null,
            ..
        } => {
            let mut keys: Vec<_> = values.iter().map(key_of).collect();
            keys.sort();
            keys.dedup();
            IndexQuery::ListHas {
                mode: *mode,
                values: keys,
                has_null: *has_null,
            }
        }
        SqlPredicate::StringMatch { matcher, .. } => IndexQuery::StringMatch(matcher.clone()),
        other => IndexQuery::Scalar(index_query(other)?),
    };
    Some(IndexLeaf {
        column: LeafColumn {
            name: field.name.clone(),
            field_id: field.id,
            data_type: (field.data_type != arrow_schema::DataType::Null)
                .then(|| field.data_type.clone()),
        },
        query,
        text: describe(predicate, &bound.fields),
    })
}

/// Who plans a leaf.
#[derive(Debug, Clone)]
pub(super) enum Chosen {
    /// Kind `k` answers it from this index.
    Index(usize, IndexSegments),
    /// Kind `k` plans it itself, whatever indices the column has.
    Itself(usize),
}

/// The first index kind and index that can answer `leaf`, or every reason none can.
fn choose(
    dataset: &DatasetVersion,
    kinds: &[Box<dyn IndexKind>],
    leaf: &IndexLeaf,
    unreadable: &[(String, String)],
) -> std::result::Result<Chosen, Vec<String>> {
    if let Some(k) = kinds.iter().position(|k| k.plans_itself(leaf)) {
        return Ok(Chosen::Itself(k));
    }
    let indices = indices_on(dataset, leaf.column.field_id);
    if indices.is_empty() {
        return Err(vec!["the column has no index".into()]);
    }
    let mut reasons = Vec::new();
    for index in &indices {
        if let Some((_, why)) = unreadable.iter().find(|(name, _)| *name == index.name) {
            reasons.push(format!("index {:?} cannot be read: {why}", index.name));
            continue;
        }
        let readers: Vec<usize> = (0..kinds.len())
            .filter(|k| index.segments.iter().any(|s| kinds[*k].reads(s)))
            .collect();
        if readers.is_empty() {
            let type_name = index.segments[0]
                .type_name()
                .unwrap_or("<no index_details>");
            reasons.push(format!(
                "index {:?} has type {type_name}, which lakeseek does not read",
                index.name
            ));
        }
        for k in readers {
            match kinds[k].check(dataset, index, leaf) {
                Ok(_) => return Ok(Chosen::Index(k, index.clone())),
                Err(reason) => reasons.push(reason),
            }
        }
    }
    Err(reasons)
}

/// How a refused filter says it could be answered anyway (the command line adds its flag).
const SCAN_INSTEAD: &str = "allow a scan (Query::allow_scan) to read the data instead";

fn no_index_error(dataset: &DatasetVersion, column: &str, reason: &str) -> Error {
    let msg = format!("no usable index on column {column:?}: {reason}; {SCAN_INSTEAD}");
    if reason.contains("does not read") || reason.contains("cannot be read") {
        Error::unsupported(msg).at(dataset.root().as_ref(), None)
    } else {
        Error::InvalidArgument(msg)
    }
}

/// Plan `filter` on `dataset` over `kinds` (see [`crate::index::filter::plan_filter`]). An index whose files turn out
/// to be of a kind lakeseek cannot read (`Unsupported` while planning, e.g. an old release's
/// legacy-v1 BTree files) is set aside and the filter planned again without it: its leaves
/// are then evaluated on data where scans are allowed, and refused with that reason where not.
pub(crate) async fn plan(
    dataset: &DatasetVersion,
    filter: &ParsedFilter,
    options: FilterOptions,
    kinds: &[Box<dyn IndexKind>],
    stats: &IoStats,
) -> Result<FilterPlan> {
    let mut unreadable: Vec<(String, String)> = Vec::new();
    loop {
        match plan_once(dataset, filter, options, kinds, stats, &unreadable).await? {
            Planned::Done(plan) => return Ok(*plan),
            Planned::Unreadable(name, why) => {
                if unreadable.iter().any(|(n, _)| *n == name) {
                    return Err(Error::unsupported(why));
                }
                unreadable.push((name, why));
            }
        }
    }
}

/// One planning pass: a plan, or the index that turned out unreadable.
enum Planned {
    Done(Box<FilterPlan>),
    Unreadable(String, String),
}

async fn plan_once(
    dataset: &DatasetVersion,
    filter: &ParsedFilter,
    options: FilterOptions,
    kinds: &[Box<dyn IndexKind>],
    stats: &IoStats,
    unreadable: &[(String, String)],
) -> Result<Planned> {
    let manifest = std::sync::Arc::clone(dataset.manifest());
    let bound =
        BoundPredicate::bind_in(&filter.text, &filter.expr, &SchemaScope(&manifest.schema))?;
    let shape = shape(&bound.predicate);
    // Choose (pure), then open every chosen index in one wave.
    let choices = choose_leaves(dataset, kinds, &bound, &shape, unreadable);
    let full_scan_reason = full_scan_reason(dataset, &bound, &shape, &choices, options)?;
    let warm = warm_targets(
        dataset,
        &shape,
        &choices,
        full_scan_reason.is_some(),
        &bound,
    );
    let cold = is_cold(dataset, kinds, &choices, &warm).await;
    let wave = cold.then(|| stats.start_wave());
    let answerers = plan_leaves(dataset, kinds, &shape, &choices, &warm, stats).await?;
    drop(wave);
    if let Some((name, why)) = answerers.iter().find_map(|a| match a {
        Answerer::Unreadable(name, why) => Some((name.clone(), why.clone())),
        _ => None,
    }) {
        return Ok(Planned::Unreadable(name, why));
    }
    let leaves = filter_leaves(kinds, &bound, &shape, choices, answerers);
    let deletion_files = manifest
        .fragments
        .iter()
        .filter_map(|f| f.deletion.as_ref().map(|d| d.relative_path(f.id)))
        .collect();
    Ok(Planned::Done(Box::new(FilterPlan {
        text: filter.text.clone(),
        bound,
        shape,
        leaves,
        full_scan_reason,
        deletion_files,
        fragments: manifest.fragment_ids(),
    })))
}

/// For each leaf: its index form (if it has one) and who answers it, or why no index does.
pub(super) fn choose_leaves(
    dataset: &DatasetVersion,
    kinds: &[Box<dyn IndexKind>],
    bound: &BoundPredicate,
    shape: &Shape,
    unreadable: &[(String, String)],
) -> Vec<(Option<IndexLeaf>, Choice)> {
    let mut choices = Vec::with_capacity(shape.leaves.len());
    for leaf in &shape.leaves {
        let index_leaf = index_leaf(bound, &leaf.predicate, leaf.field);
        let choice = match &index_leaf {
            Some(l) => choose(dataset, kinds, l, unreadable),
            None => Err(vec![format!(
                "no index answers {}",
                describe(&leaf.predicate, &bound.fields)
            )]),
        };
        choices.push((index_leaf, choice));
    }
    choices
}

/// Why every row is read (`None` when the answered leaves bound the filter); an error
/// instead when scans are not allowed.
pub(super) fn full_scan_reason(
    dataset: &DatasetVersion,
    bound: &BoundPredicate,
    shape: &Shape,
    choices: &[(Option<IndexLeaf>, Choice)],
    options: FilterOptions,
) -> Result<Option<String>> {
    let answered = |i: usize| {
        choices[i].1.is_ok() || matches!(shape.leaves[i].predicate, SqlPredicate::AnyElement { .. })
    };
    if bounded(&shape.root, &answered) {
        return Ok(None);
    }
    // A leaf whose column is read on every row: report the first.
    let (i, reasons) = choices
        .iter()
        .enumerate()
        .find_map(|(i, (_, c))| c.as_ref().err().map(|r| (i, r)))
        .expect("an unbounded filter has an unanswered leaf");
    let column = &bound.fields[shape.leaves[i].field].name;
    let reason = reasons.join("; ");
    if !options.allow_scan {
        return Err(no_index_error(dataset, column, &reason));
    }
    Ok(Some(format!(
        "no usable index on column {column:?}: {reason}"
    )))
}

/// Whether planning reads anything not yet cached (then it counts as one wave).
async fn is_cold(
    dataset: &DatasetVersion,
    kinds: &[Box<dyn IndexKind>],
    choices: &[(Option<IndexLeaf>, Choice)],
    warm: &[(&Fragment, i32)],
) -> bool {
    let mut cold = false;
    for (_, choice) in choices {
        match choice {
            Ok(Chosen::Index(k, index)) => cold |= !kinds[*k].is_cached(dataset, index).await,
            Ok(Chosen::Itself(_)) => cold = true,
            Err(_) => {}
        }
    }
    for (fragment, field) in warm {
        cold |= !column_is_cached(dataset, fragment, *field).await;
    }
    cold
}

/// Plan every chosen leaf on its kind and open the `warm` data files, all at once.
async fn plan_leaves(
    dataset: &DatasetVersion,
    kinds: &[Box<dyn IndexKind>],
    shape: &Shape,
    choices: &[(Option<IndexLeaf>, Choice)],
    warm: &[(&Fragment, i32)],
    stats: &IoStats,
) -> Result<Vec<Answerer>> {
    let plans = shape
        .leaves
        .iter()
        .zip(choices)
        .map(|(leaf, (index_leaf, choice))| async move {
            Ok::<_, Error>(match (index_leaf, choice) {
                (Some(l), Ok(Chosen::Itself(k))) => {
                    let none = IndexSegments {
                        name: String::new(),
                        segments: Vec::new(),
                    };
                    Answerer::Itself(kinds[*k].plan(dataset, &none, l, leaf.want, stats).await?)
                }
                (Some(l), Ok(Chosen::Index(k, index))) => {
                    match kinds[*k].plan(dataset, index, l, leaf.want, stats).await {
                        Ok(planned) => Answerer::Index(planned),
                        Err(e @ Error::Unsupported { .. }) => {
                            Answerer::Unreadable(index.name.clone(), e.to_string())
                        }
                        Err(e) => return Err(e),
                    }
                }
                _ => Answerer::None,
            })
        });
    let opens = warm.iter().map(|(fragment, field)| async move {
        open_column(dataset, fragment, *field, stats)
            .await
            .map(|_| ())
    });
    let (answerers, _) = futures::try_join!(
        futures::future::try_join_all(plans),
        futures::future::try_join_all(opens)
    )?;
    Ok(answerers)
}

/// The planned leaves: each leaf with its choice and answerer.
fn filter_leaves(
    kinds: &[Box<dyn IndexKind>],
    bound: &BoundPredicate,
    shape: &Shape,
    choices: Vec<(Option<IndexLeaf>, Choice)>,
    answerers: Vec<Answerer>,
) -> Vec<FilterLeaf> {
    shape
        .leaves
        .iter()
        .zip(choices)
        .zip(answerers)
        .map(|((leaf, (_, choice)), answerer)| FilterLeaf {
            text: describe(&leaf.predicate, &bound.fields),
            column: bound.fields[leaf.field].name.clone(),
            want: leaf.want,
            predicate: leaf.predicate.clone(),
            slot: leaf.field,
            kind: match (&answerer, &choice) {
                (Answerer::Itself(_), Ok(Chosen::Itself(k)))
                | (Answerer::Index(_), Ok(Chosen::Index(k, _))) => Some(kinds[*k].name()),
                _ => None,
            },
            answerer,
            not_used: choice.err().unwrap_or_default(),
        })
        .collect()
}

pub(super) type Choice = std::result::Result<Chosen, Vec<String>>;

/// Data files to open while planning (their metadata is then cached for execution): the
/// fragments a chosen index does not cover, and every fragment of a scanned leaf.
fn warm_targets<'a>(
    dataset: &'a DatasetVersion,
    shape: &Shape,
    choices: &[(Option<IndexLeaf>, Choice)],
    full_scan: bool,
    bound: &BoundPredicate,
) -> Vec<(&'a Fragment, i32)> {
    let manifest = dataset.manifest();
    let current = manifest.fragment_ids();
    let mut out = Vec::new();
    for (leaf, (_, choice)) in shape.leaves.iter().zip(choices) {
        if matches!(leaf.predicate, SqlPredicate::AnyElement { .. }) {
            continue;
        }
        // A struct child is read through its top-level column.
        let Ok(field_id) = top_level_column(&manifest.schema, bound.fields[leaf.field].id) else {
            continue;
        };
        let uncovered: RoaringBitmap = match choice {
            Ok(Chosen::Index(_, index)) => {
                let mut covered = RoaringBitmap::new();
                for s in &index.segments {
                    if let Some(b) = &s.fragment_bitmap {
                        covered |= b;
                    }
                }
                &current - &covered
            }
            Ok(Chosen::Itself(_)) => RoaringBitmap::new(),
            Err(_) if full_scan => current.clone(),
            Err(_) => RoaringBitmap::new(),
        };
        for f in &manifest.fragments {
            if u32::try_from(f.id).is_ok_and(|id| uncovered.contains(id))
                && !out
                    .iter()
                    .any(|(g, id): &(&Fragment, i32)| g.id == f.id && *id == field_id)
            {
                out.push((f, field_id));
            }
        }
    }
    out
}

/// Execute a plan (see [`crate::index::filter::execute_filter`]): answer every leaf from its
/// index (and scan what the index does not cover) in one wave with the eager deletion files,
/// combine the leaves, read the deletion files the answer touches when they were not read
/// eagerly, recheck the rows still in doubt on data, and drop deleted rows.
pub(crate) async fn execute(
    dataset: &DatasetVersion,
    plan: &FilterPlan,
    stats: &IoStats,
) -> Result<FilterAnswer> {
    let manifest = std::sync::Arc::clone(dataset.manifest());
    let with_deletions: Vec<&Fragment> = manifest
        .fragments
        .iter()
        .filter(|f| f.deletion.is_some())
        .collect();
    // Few deletion files: read them all with the index pages (no extra round trip). Many:
    // read only those of fragments the answer touches, afterwards.
    let eager = with_deletions.len() <= dataset.session().eager_deletion_files;
    let eager_files: &[&Fragment] = if eager { &with_deletions } else { &[] };
    let universe = fragment_rows(dataset, &manifest.fragment_ids());
    let covered = covered_rows(dataset, plan);
    let (answers, mut deletions, ()) = futures::try_join!(
        answer_leaves(dataset, plan, &universe, &covered, stats),
        dataset.deletion_vectors(eager_files, stats),
        async {
            prepare_rechecks(dataset, plan, stats).await;
            Ok(())
        },
    )?;
    let (mut rows, tally) = leaf_rows(&universe, &covered, answers);
    let mut root = combine(&plan.shape.root, &rows, &universe);
    if !eager {
        let touched = touched_fragments(&with_deletions, &root);
        deletions = dataset.deletion_vectors(&touched, stats).await?;
    }
    let deleted = deleted_rows(&deletions);
    let mut todo = root.maybe.clone();
    todo -= &deleted;
    let mut rechecked_rows = tally.rechecked_rows;
    if !todo.is_empty() {
        rechecked_rows += recheck(dataset, plan, &mut rows, &todo, stats).await?;
        root = combine(&plan.shape.root, &rows, &universe);
    }
    let mut row_addresses = root.sure;
    row_addresses -= &deleted;
    Ok(FilterAnswer {
        row_addresses,
        cached_pages: tally.cached_pages,
        rechecked_rows,
    })
}

/// For leaves whose candidates will almost surely be rechecked, over at most
/// [`EAGER_RECHECK_FILES`] fragments: open their column's data files (and read its page
/// init) with the index reads, so the recheck reads values only.
async fn prepare_rechecks(dataset: &DatasetVersion, plan: &FilterPlan, stats: &IoStats) {
    let manifest = dataset.manifest();
    let prepares = plan.leaves.iter().filter_map(|leaf| {
        let planned = leaf.answerer.planned()?;
        if !planned.recheck_likely() || planned.coverage().len() > EAGER_RECHECK_FILES {
            return None;
        }
        let Ok(DataLeaf::Scalar(scalar)) = data_leaf(dataset, plan, leaf) else {
            return None;
        };
        let column = top_level_column(&manifest.schema, scalar.field.id).ok()?;
        let fragments: Vec<&Fragment> = manifest
            .fragments
            .iter()
            .filter(|f| u32::try_from(f.id).is_ok_and(|id| planned.coverage().contains(id)))
            .collect();
        Some(async move { prepare_column(dataset, &fragments, column, stats).await })
    });
    futures::future::join_all(prepares).await;
}

/// Most fragments whose data files [`prepare_rechecks`] opens for one leaf.
const EAGER_RECHECK_FILES: u64 = 4;

/// The rows of the fragments each leaf's index covers (none for leaves without an index).
fn covered_rows(dataset: &DatasetVersion, plan: &FilterPlan) -> Vec<RoaringTreemap> {
    plan.leaves
        .iter()
        .map(|l| {
            let coverage = l
                .answerer
                .planned()
                .map(|p| p.coverage().clone())
                .unwrap_or_default();
            fragment_rows(dataset, &coverage)
        })
        .collect()
}

/// One leaf's index answer, and the rows its index does not cover that were evaluated on
/// data with what was found there.
type AnsweredLeaf = (Option<LeafAnswer>, Option<(RoaringTreemap, RoaringTreemap)>);

/// Answer every leaf from its index; an indexed leaf is evaluated on the fragments its index
/// does not cover in the same wave as the index reads (as lance scans them), so a warm repeat
/// stays one wave.
async fn answer_leaves(
    dataset: &DatasetVersion,
    plan: &FilterPlan,
    universe: &RoaringTreemap,
    covered: &[RoaringTreemap],
    stats: &IoStats,
) -> Result<Vec<AnsweredLeaf>> {
    let answers = plan
        .leaves
        .iter()
        .zip(covered)
        .map(|(l, covered)| async move {
            let Some(p) = l.answerer.planned() else {
                return Ok::<_, Error>((None, None));
            };
            let mut uncovered = universe.clone();
            uncovered -= covered;
            let scan = async {
                if uncovered.is_empty() || !scans_uncovered(&l.answerer, covered) {
                    return Ok(None);
                }
                let data_leaf = data_leaf(dataset, plan, l)?;
                rows_with_value(dataset, &data_leaf, l.want, &uncovered, stats)
                    .await
                    .map(|found| Some((uncovered.clone(), found)))
            };
            let (answer, scanned) = futures::try_join!(p.answer(dataset, stats), scan)?;
            Ok((Some(answer), scanned))
        });
    futures::future::try_join_all(answers).await
}

/// Whether a leaf's uncovered fragments are evaluated in the same wave as its index reads:
/// always for a scalar kind; for a kind that plans its leaf itself, when an index answers
/// it (a call no index answers is evaluated after combining, on the undecided rows only).
fn scans_uncovered(answerer: &Answerer, covered: &RoaringTreemap) -> bool {
    match answerer {
        Answerer::Index(_) => true,
        Answerer::Itself(_) => !covered.is_empty(),
        Answerer::None | Answerer::Unreadable(..) => false,
    }
}

/// What reading the leaves cost, for the answer's report.
struct Tally {
    cached_pages: usize,
    rechecked_rows: u64,
}

/// Each leaf's sure and maybe rows from its index answer and its scan: rows its index does
/// not cover and that were not scanned stay maybe.
fn leaf_rows(
    universe: &RoaringTreemap,
    covered: &[RoaringTreemap],
    answers: Vec<AnsweredLeaf>,
) -> (Vec<Rows>, Tally) {
    let mut tally = Tally {
        cached_pages: 0,
        rechecked_rows: 0,
    };
    let mut rows: Vec<Rows> = Vec::with_capacity(answers.len());
    for (covered, (answer, scanned)) in covered.iter().zip(answers) {
        let mut r = Rows::default();
        if let Some(a) = answer {
            tally.cached_pages += a.read["cached_pages"].as_u64().unwrap_or(0) as usize;
            r.sure = a.sure & covered;
            r.maybe = a.maybe & covered;
            r.maybe -= &r.sure;
        }
        let mut uncovered = universe.clone();
        uncovered -= covered;
        if let Some((evaluated, found)) = scanned {
            tally.rechecked_rows += evaluated.len();
            uncovered -= &evaluated;
            r.sure |= found;
        }
        r.maybe |= uncovered;
        rows.push(r);
    }
    (rows, tally)
}

/// The fragments with deletion files that hold a sure or maybe row of `root`.
fn touched_fragments<'a>(with_deletions: &[&'a Fragment], root: &Rows) -> Vec<&'a Fragment> {
    with_deletions
        .iter()
        .copied()
        .filter(|f| {
            let range = (f.id << 32)..((f.id + 1) << 32);
            root.sure.range_cardinality(range.clone()) > 0
                || root.maybe.range_cardinality(range) > 0
        })
        .collect()
}

/// The row addresses `deletions` delete.
fn deleted_rows(
    deletions: &std::collections::HashMap<u64, std::sync::Arc<DeletionVector>>,
) -> RoaringTreemap {
    let mut deleted = RoaringTreemap::new();
    for (fragment, d) in deletions {
        let base = fragment << 32;
        deleted.extend(d.0.iter().map(|o| base | u64::from(o)));
    }
    deleted
}

/// Evaluate each leaf on data for its maybe rows among `todo` (concurrently), moving them
/// to sure or out; returns how many rows were rechecked.
async fn recheck(
    dataset: &DatasetVersion,
    plan: &FilterPlan,
    rows: &mut [Rows],
    todo: &RoaringTreemap,
    stats: &IoStats,
) -> Result<u64> {
    let checks = plan.leaves.iter().enumerate().filter_map(|(i, leaf)| {
        let m = &rows[i].maybe & todo;
        (!m.is_empty()).then(|| {
            let data_leaf = data_leaf(dataset, plan, leaf);
            async move {
                let found = rows_with_value(dataset, &data_leaf?, leaf.want, &m, stats).await?;
                Ok::<_, Error>((i, m, found))
            }
        })
    });
    let mut rechecked_rows = 0;
    for (i, m, found) in futures::future::try_join_all(checks).await? {
        rechecked_rows += m.len();
        rows[i].maybe -= &m;
        rows[i].sure |= found;
    }
    Ok(rechecked_rows)
}

/// How `leaf` is evaluated on data.
fn data_leaf<'a>(
    dataset: &DatasetVersion,
    plan: &'a FilterPlan,
    leaf: &'a FilterLeaf,
) -> Result<DataLeaf<'a>> {
    match (&leaf.predicate, &leaf.answerer) {
        (SqlPredicate::AnyElement { call, .. }, _) => Ok(DataLeaf::AnyElement(type_call(
            &dataset.manifest().schema,
            call,
        )?)),
        (
            SqlPredicate::ListHas {
                mode,
                values,
                has_null: false,
                field,
            },
            _,
        ) => {
            let mut keys: Vec<_> = values.iter().map(key_of).collect();
            keys.sort();
            keys.dedup();
            Ok(DataLeaf::ListHas {
                test: match mode {
                    ListHasMode::Any => crate::index::sql::list_has::ListTest::Any,
                    ListHasMode::All => crate::index::sql::list_has::ListTest::All,
                },
                values: keys,
                field: &plan.bound.fields[*field],
            })
        }
        (SqlPredicate::ListHas { .. }, _) => Err(Error::unsupported(format!(
            "filter {:?}: {} with NULL in the value list is not evaluated on list data",
            plan.text, leaf.text
        ))),
        (p, _) => Ok(DataLeaf::Scalar(ScalarLeaf::new(
            p,
            &plan.bound.fields[leaf.slot],
            leaf.slot,
            plan.bound.fields.len(),
        ))),
    }
}

fn want_name(w: Want) -> &'static str {
    match w {
        Want::True => "true",
        Want::False => "false",
    }
}

fn describe_node(node: &Node) -> String {
    match node {
        Node::Leaf(i) => format!("leaf {i}"),
        Node::Const(b) => b.to_string(),
        Node::Complement(inner) => format!("NOT TRUE({})", describe_node(inner)),
        Node::And(v) | Node::Or(v) => {
            let op = if matches!(node, Node::And(_)) {
                " AND "
            } else {
                " OR "
            };
            format!(
                "({})",
                v.iter().map(describe_node).collect::<Vec<_>>().join(op)
            )
        }
    }
}

impl FilterPlan {
    /// A JSON description of the plan (`--explain`): per leaf, the truth value it must
    /// have, the index that answers it (exact or candidates) with what it will read, why
    /// other indices are not used, and what is evaluated on data. A filter of one leaf
    /// also carries that leaf's description at the top level (the shape `--explain` had
    /// for one BTree column or one `any_element` call).
    pub(crate) fn explain(&self) -> Value {
        let current = fragment_ids(self);
        let leaves: Vec<Value> = self
            .leaves
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let planned = l.answerer.planned();
                let coverage = planned.map(|p| p.coverage().clone()).unwrap_or_default();
                let uncovered: Vec<u32> = (&current - &coverage).iter().collect();
                json!({
                    "leaf": i,
                    "predicate": l.text,
                    "column": l.column,
                    "want": want_name(l.want),
                    "index_kind": l.kind,
                    "answered_by": planned.map(|p| p.explain()),
                    "exactness": planned.map(|p| format!("{:?}", p.exactness()).to_lowercase()),
                    "not_used": l.not_used,
                    "evaluated_on_data": if uncovered.is_empty() && planned.is_some() {
                        Value::Null
                    } else {
                        json!({
                            "column": l.column,
                            "rows": "only rows the rest of the filter leaves undecided",
                            "fragments": uncovered,
                        })
                    },
                })
            })
            .collect();
        let mut out = json!({
            "filter": self.text,
            "tree": describe_node(&self.shape.root),
            "leaves": leaves,
            "full_scan": self.full_scan_reason,
            "deletion_files": self.deletion_files,
        });
        if let [only] = self.leaves.as_slice() {
            self.merge_single_leaf(only, &current, &mut out);
        }
        out
    }

    /// The one-leaf top-level keys: `column`, `index`, `segments`, `scan_fragments` (a
    /// BTree leaf), or the list element call's description.
    fn merge_single_leaf(&self, leaf: &FilterLeaf, current: &RoaringBitmap, out: &mut Value) {
        let planned = leaf.answerer.planned();
        let coverage = planned.map(|p| p.coverage().clone()).unwrap_or_default();
        let described = planned.map(|p| p.explain()).unwrap_or(Value::Null);
        if let Some(obj) = described.as_object() {
            if obj.get("kind") == Some(&Value::from("list_element")) {
                for (k, v) in obj {
                    if k != "filter" {
                        out[k] = v.clone();
                    }
                }
                return;
            }
        }
        out["column"] = leaf.column.clone().into();
        out["index"] = described.get("index").cloned().unwrap_or(Value::Null);
        out["segments"] = described.get("segments").cloned().unwrap_or(json!([]));
        out["scan_fragments"] = (current - &coverage).iter().collect::<Vec<u32>>().into();
    }

    /// Why the whole dataset will be scanned, and how many fragments that is, when no index
    /// answers the filter and scanning was allowed.
    pub(crate) fn full_scan_notice(&self) -> Option<String> {
        self.full_scan_reason.as_ref().map(|reason| {
            format!(
                "{reason}; scanning all {} fragments",
                fragment_ids(self).len()
            )
        })
    }
}

impl FilterPlan {
    /// Whether some leaf is answered by candidates that execution rechecks on data (zone
    /// maps, bloom filters, a superset list element search): the answer stays exact, but
    /// the indices alone do not decide it.
    pub(crate) fn has_candidate_leaves(&self) -> bool {
        self.leaves.iter().any(|l| match &l.answerer {
            Answerer::Index(p) | Answerer::Itself(p) => p.rechecks(),
            Answerer::None | Answerer::Unreadable(..) => false,
        })
    }

    /// Whether execution evaluates some leaf on the data of every row of a fragment (an
    /// `any_element` call no index answers, or a full scan).
    pub(crate) fn evaluates_every_row(&self) -> bool {
        self.full_scan_reason.is_some()
            || self.leaves.iter().any(|l| match &l.answerer {
                Answerer::Itself(p) => p.evaluates_every_row(),
                _ => false,
            })
    }
}

fn fragment_ids(plan: &FilterPlan) -> RoaringBitmap {
    plan.fragments.clone()
}
