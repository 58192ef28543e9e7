//! The index-kind interface: how one kind of scalar index (BTree, list element, and the
//! BITMAP / LABEL_LIST / ZONEMAP / BLOOMFILTER readers as they are added) plugs into the
//! filter engine.
//!
//! The engine ([`crate::index::filter`]) parses and binds a filter once, pushes `NOT` down to the
//! leaves (three-valued De Morgan), and hands each leaf it wants answered from an index to
//! a kind as an [`IndexLeaf`] with the truth value it needs ([`Want`]): `NOT (cat = 'a')`
//! asks for the rows where `cat = 'a'` is FALSE (nulls excluded, as in SQL). A kind:
//!
//! 1. says, without I/O, whether it can answer the leaf with the segments of one index
//!    ([`IndexKind::check`]);
//! 2. opens what it needs (lookups, file metadata: one wave, through the session caches)
//!    and chooses what it will read ([`IndexKind::plan`]), returning a [`PlannedLeaf`];
//! 3. reads and answers ([`PlannedLeaf::answer`]) with a [`LeafAnswer`]: the row addresses
//!    (of covered fragments only) that surely have the wanted value, and candidate rows
//!    (zones) that may have it and are rechecked on data by the engine.
//!
//! The engine handles fragments an index does not cover (it evaluates the leaf on their
//! data), deleted rows and deleted fragments; kinds need not remove them (but may).

pub(crate) mod row_ids;
pub(crate) mod segments;

use std::fmt::Debug;

use arrow_schema::DataType;
use async_trait::async_trait;
use roaring::{RoaringBitmap, RoaringTreemap};

use crate::error::Result;
use crate::index::key::Key;
use crate::index::predicate::Predicate;
use crate::index::sql::call::AnyElementCall;
use crate::io::IoStats;
use crate::lance::dataset::{DatasetVersion, IndexSegment};

/// The truth value of a leaf the engine needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Want {
    /// Rows where the leaf is TRUE.
    True,
    /// Rows where the leaf is FALSE (not NULL): the leaf sits under an odd number of `NOT`s.
    False,
}

/// The column a leaf tests.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LeafColumn {
    /// Dotted path as written.
    pub(crate) name: String,
    /// Lance field id.
    pub(crate) field_id: i32,
    /// Arrow type (`None` for list-of-struct columns, which have no scalar type).
    pub(crate) data_type: Option<DataType>,
}

pub(crate) use crate::index::sql::bind::ListHasMode;

/// What a leaf tests, in the form indices answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum IndexQuery {
    /// A sargable test on one scalar column (lance's SargableQuery): `=`, `IN`, ranges,
    /// `IS NULL`, and `AND` / `OR` / `NOT` of those, every leaf on column 0.
    Scalar(Predicate),
    /// `any_element(list_col, 'predicate')` (never negated: the engine asks for
    /// [`Want::False`] instead).
    AnyElement(AnyElementCall),
    /// `array_has_any(col, [..])`, `array_has_all(col, [..])`, `array_contains(col, v)` /
    /// `array_has(col, v)` (= `Any` with one value) on a list column.
    ListHas {
        /// Any or all.
        mode: ListHasMode,
        /// Non-null values typed as the list's items, sorted and deduplicated.
        values: Vec<Key>,
        /// Whether the value list held a NULL.
        has_null: bool,
    },
    /// `contains(col, 'x')`, `col [I]LIKE 'p'`, `starts_with(col, 'x')` on a string column
    /// (never negated: the engine asks for [`Want::False`] instead).
    StringMatch(crate::index::sql::string_match::StringMatcher),
}

/// One leaf of a filter, handed to an index kind.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct IndexLeaf {
    /// The column tested.
    pub(crate) column: LeafColumn,
    /// The test.
    pub(crate) query: IndexQuery,
    /// SQL text of the leaf (for explain and errors).
    pub(crate) text: String,
}

/// The segments of one logical index (one name) on the leaf's column.
#[derive(Debug, Clone)]
pub(crate) struct IndexSegments {
    /// Index name.
    pub(crate) name: String,
    /// Its segments, as the manifest lists them.
    pub(crate) segments: Vec<IndexSegment>,
}

/// How exact a planned leaf's answer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Exactness {
    /// [`LeafAnswer::maybe`] is always empty.
    Exact,
    /// Candidate rows (zones, n-gram postings) that the engine rechecks on data.
    Candidates,
}

/// What a planned leaf returns.
#[derive(Debug, Clone, Default)]
pub(crate) struct LeafAnswer {
    /// Row addresses (in covered fragments) where the leaf surely has the wanted value.
    pub(crate) sure: RoaringTreemap,
    /// Row addresses (in covered fragments) that may have it: rechecked on data.
    pub(crate) maybe: RoaringTreemap,
    /// What the answer read (explain after execution; free-form JSON).
    pub(crate) read: serde_json::Value,
}

/// A kind of scalar index.
#[async_trait]
pub(crate) trait IndexKind: Send + Sync + Debug {
    /// Short name shown by explain (`"btree"`, `"bitmap"`, ...).
    fn name(&self) -> &'static str;

    /// Whether this kind reads `segment` (by its details type URL).
    fn reads(&self, segment: &IndexSegment) -> bool;

    /// Whether this kind plans `leaf` itself, whatever indices the column has (it chooses
    /// among them, and answers nothing when none can): the list element kind and
    /// `any_element` calls. The engine then calls [`IndexKind::plan`] with no segments.
    fn plans_itself(&self, _leaf: &IndexLeaf) -> bool {
        false
    }

    /// Whether planning `index` needs no request (its lookups and file metadata are in the
    /// session caches); the engine declares a round trip only when some leaf is cold.
    async fn is_cached(&self, dataset: &DatasetVersion, index: &IndexSegments) -> bool;

    /// Pure: whether this kind can answer `leaf` from `index` on `dataset`; `Err(reason)`
    /// when not (the reason is shown by explain and in errors).
    fn check(
        &self,
        dataset: &DatasetVersion,
        index: &IndexSegments,
        leaf: &IndexLeaf,
    ) -> std::result::Result<Exactness, String>;

    /// Open what the answer needs (one wave of metadata reads through the session caches)
    /// and choose what will be read; reads no index page yet.
    async fn plan(
        &self,
        dataset: &DatasetVersion,
        index: &IndexSegments,
        leaf: &IndexLeaf,
        want: Want,
        stats: &IoStats,
    ) -> Result<Box<dyn PlannedLeaf>>;

    /// Load what later queries will need from `segment` (one this kind
    /// [`reads`](IndexKind::reads)) into the session caches (`lakeseek prewarm`); with
    /// `all_pages`, also its pages. By default: the metadata of every `.lance` file the
    /// segment lists.
    async fn prewarm(
        &self,
        dataset: &DatasetVersion,
        segment: &IndexSegment,
        _all_pages: bool,
        stats: &IoStats,
    ) -> Result<PrewarmCounts> {
        segments::open_lance_files(dataset, segment, stats).await?;
        Ok(PrewarmCounts::default())
    }
}

/// A leaf planned on one index.
#[async_trait]
pub(crate) trait PlannedLeaf: Send + Sync + Debug {
    /// Current fragments the answer covers (the segments' fragment bitmaps intersected
    /// with the manifest's fragments). The engine evaluates the leaf on the data of the
    /// others.
    fn coverage(&self) -> &RoaringBitmap;

    /// Whether the answer is exact or candidates.
    fn exactness(&self) -> Exactness;

    /// JSON description of the plan (`--explain`): index, segments, pages or zones chosen.
    fn explain(&self) -> serde_json::Value;

    /// Read and answer (one page-init wave + one chunk wave at most, all leaves together).
    async fn answer(&self, dataset: &DatasetVersion, stats: &IoStats) -> Result<LeafAnswer>;

    /// Whether execution rechecks some rows of the answer on data (the answer stays exact,
    /// but the index alone does not decide it).
    fn rechecks(&self) -> bool {
        self.exactness() == Exactness::Candidates
    }

    /// Whether execution will almost surely recheck rows of the covered fragments on data
    /// (candidates that rarely prove a row, e.g. n-gram matches): the engine then opens
    /// their data files alongside the index reads rather than after them.
    fn recheck_likely(&self) -> bool {
        false
    }

    /// Whether execution evaluates the leaf on the data of every row of a fragment.
    fn evaluates_every_row(&self) -> bool {
        false
    }
}

/// The rows of covered fragments where a leaf has the wanted value, from its exact TRUE
/// and NULL rows (a helper for kinds that know both, e.g. bitmaps): `Want::True` -> `truth`; `Want::False` -> every
/// row of the covered fragments minus `truth` and `null`.
#[allow(dead_code)] // for the bitmap and label list kinds (being added)
pub(crate) fn rows_with_value(
    dataset: &DatasetVersion,
    coverage: &RoaringBitmap,
    want: Want,
    truth: RoaringTreemap,
    null: &RoaringTreemap,
) -> RoaringTreemap {
    match want {
        Want::True => truth,
        Want::False => {
            let mut all = fragment_rows(dataset, coverage);
            all -= &truth;
            all -= null;
            all
        }
    }
}

/// Every row address (deleted rows included) of the `fragments` that exist in `dataset`.
pub(crate) fn fragment_rows(dataset: &DatasetVersion, fragments: &RoaringBitmap) -> RoaringTreemap {
    let mut out = RoaringTreemap::new();
    for f in &dataset.manifest().fragments {
        if u32::try_from(f.id).is_ok_and(|id| fragments.contains(id)) {
            let base = f.id << 32;
            let rows = f.physical_rows.min(u64::from(u32::MAX) + 1);
            out.insert_range(base..base + rows);
        }
    }
    out
}

/// What prewarming one segment loaded ([`IndexKind::prewarm`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PrewarmCounts {
    /// BTree pages now in the page cache.
    pub(crate) index_pages: usize,
}
