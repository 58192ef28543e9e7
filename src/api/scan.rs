//! Building blocks for query engines built on lakeseek (the DataFusion table provider in
//! `lakeseek-datafusion` uses them): a dataset's fragments and Arrow schema, a filter planned
//! once and executed later (with what the plan says about its exactness), a view of a
//! dataset restricted to some fragments (one task of a distributed scan), and
//! `any_element` evaluated on Arrow list arrays.

use std::sync::Arc;

use arrow_array::{Array, BooleanArray};
use arrow_schema::{Field, Schema, SchemaRef};
use roaring::RoaringBitmap;

use super::dataset::Dataset;
use crate::error::{Error, Result};
use crate::index::filter::{execute_filter, plan_filter, FilterOptions, FilterPlan};
use crate::index::key_type::KeyType;
use crate::index::sql::bind::BoundPredicate;
use crate::index::sql::bind::ElementField;

/// One fragment of a dataset version: its id (the high 32 bits of its row addresses) and
/// row counts.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FragmentInfo {
    /// Fragment id.
    pub id: u64,
    /// Rows ever written to the fragment (deleted rows keep their offsets): its row
    /// addresses are `id << 32 | offset` for `offset < physical_rows`.
    pub physical_rows: u64,
    /// Deleted rows when the manifest records the count (`Some(0)` without deletions,
    /// `None` when a deletion file exists but its count is not recorded).
    pub deleted_rows: Option<u64>,
}

impl FragmentInfo {
    /// Rows not deleted, when known.
    pub fn live_rows(&self) -> Option<u64> {
        self.deleted_rows
            .map(|d| self.physical_rows.saturating_sub(d))
    }
}

/// How exactly the indices answer a [`PlannedFilter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FilterExactness {
    /// Every part of the filter is decided by an exact index (or evaluated by lakeseek on
    /// the rows no index covers).
    Exact,
    /// Some part is answered by candidates (zone maps, bloom filters, a superset list
    /// element search) that lakeseek rechecks on their data: the rows returned are still
    /// exactly the matching ones, but the indices alone did not decide them.
    Candidates,
}

/// A SQL filter planned on one dataset version (index lookups and metadata read, no index
/// page yet), to execute later with [`Dataset::execute_planned_filter`]. Cheap to clone.
#[derive(Debug, Clone)]
pub struct PlannedFilter {
    plan: Arc<FilterPlan>,
    version: u64,
}

impl PlannedFilter {
    /// How exactly the indices answer the filter.
    pub fn exactness(&self) -> FilterExactness {
        if self.plan.has_candidate_leaves() {
            FilterExactness::Candidates
        } else {
            FilterExactness::Exact
        }
    }

    /// Whether executing the plan evaluates some part of the filter on every row of some
    /// fragment (an `any_element` call no list element index answers).
    pub fn evaluates_every_row(&self) -> bool {
        self.plan.evaluates_every_row()
    }

    /// The plan as JSON (the shape [`Query::explain`](crate::Query::explain) prints).
    pub fn explain(&self) -> serde_json::Value {
        self.plan.explain()
    }

    /// When no index answers the filter and the plan scans every fragment (a query with
    /// [`Query::allow_scan`](crate::Query::allow_scan)): why, and how many fragments that is
    /// (`"<why>; scanning all 4 fragments"`). `None` when indices bound the answer.
    pub fn full_scan_notice(&self) -> Option<String> {
        self.plan.full_scan_notice()
    }

    /// A planned filter of dataset version `version`.
    pub(crate) fn new(plan: FilterPlan, version: u64) -> Self {
        Self {
            plan: Arc::new(plan),
            version,
        }
    }
}

impl Dataset {
    /// The URL the dataset was opened from (as given to [`Dataset::builder`]; storage
    /// options are not part of it).
    pub fn url(&self) -> &str {
        &self.open_params().url
    }

    /// The fragments of this version, in manifest order.
    pub fn fragments(&self) -> Vec<FragmentInfo> {
        let manifest = self.version_handle().manifest();
        manifest
            .fragments
            .iter()
            .map(|f| FragmentInfo {
                id: f.id,
                physical_rows: f.physical_rows,
                deleted_rows: match &f.deletion {
                    None => Some(0),
                    Some(d) if d.num_deleted_rows > 0 => Some(d.num_deleted_rows),
                    Some(_) => None,
                },
            })
            .collect()
    }

    /// The Arrow schema of the top-level columns, in schema order (the fields
    /// [`Dataset::take`] returns for them).
    pub fn arrow_schema(&self) -> Result<SchemaRef> {
        let schema = &self.version_handle().manifest().schema;
        let fields: Vec<Field> = schema
            .fields
            .iter()
            .filter(|f| f.parent_id == -1)
            .map(|f| schema.arrow_field(f.id))
            .collect::<Result<_>>()?;
        Ok(Arc::new(Schema::new(fields)))
    }

    /// Plan the SQL `filter` from the indices (one wave of lookups and metadata, through
    /// the session caches). A filter whose matching rows no index bounds is refused, as
    /// [`Dataset::filter`] refuses it.
    pub async fn plan_filter(&self, filter: &str) -> Result<PlannedFilter> {
        let options = FilterOptions::default();
        let plan = plan_filter(self.version_handle(), filter, options, self.stats_handle()).await?;
        Ok(PlannedFilter::new(plan, self.version()))
    }

    /// Execute a plan made by [`Dataset::plan_filter`] on this version (or a
    /// [`Dataset::with_fragments`] view of it): the row addresses (ascending) where the
    /// filter is TRUE, deleted rows removed.
    pub async fn execute_planned_filter(&self, plan: &PlannedFilter) -> Result<Vec<u64>> {
        if plan.version != self.version() {
            return Err(Error::InvalidArgument(format!(
                "the filter was planned on version {} but the dataset is at version {}",
                plan.version,
                self.version()
            )));
        }
        let rows = execute_filter(self.version_handle(), &plan.plan, self.stats_handle()).await?;
        Ok(rows.iter().collect())
    }

    /// The same version seen through only the fragments `ids` (ids not in the version are
    /// ignored): filters and takes on the view touch only those fragments. One task of a
    /// scan split by fragment works on such a view.
    pub fn with_fragments(&self, ids: &[u64]) -> Dataset {
        let keep: RoaringBitmap = ids
            .iter()
            .filter_map(|&id| u32::try_from(id).ok())
            .collect();
        self.with_version_handle(self.version_handle().with_fragments(&keep))
    }
}

/// `any_element(list, predicate)` on every row of an Arrow `List` or `LargeList` of
/// `Struct`: TRUE when `predicate` (SQL over the element struct's fields) is TRUE on some
/// element, NULL when the list is null or no element makes it TRUE but some makes it
/// UNKNOWN, FALSE otherwise — the same three-valued evaluator the filters use.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{builder::{ListBuilder, StringBuilder, StructBuilder}, Array};
/// use arrow_schema::{DataType, Field};
///
/// let fields = vec![Field::new("label", DataType::Utf8, true)];
/// let mut lists = ListBuilder::new(StructBuilder::from_fields(fields, 2));
/// for label in ["car", "bus"] {
///     let s = lists.values();
///     s.field_builder::<StringBuilder>(0).unwrap().append_value(label);
///     s.append(true);
///     lists.append(true);
/// }
/// let truth = lakeseek::evaluate_any_element(&lists.finish(), "label = 'car'").unwrap();
/// assert_eq!((truth.value(0), truth.value(1)), (true, false));
/// assert!(lakeseek::evaluate_any_element(&lists.finish(), "label = ").is_err());
/// ```
pub fn evaluate_any_element(list: &dyn Array, predicate: &str) -> Result<BooleanArray> {
    use arrow_schema::DataType;
    let element_type = match list.data_type() {
        DataType::List(f) | DataType::LargeList(f) => f.data_type(),
        other => {
            return Err(Error::InvalidArgument(format!(
                "any_element needs a List or LargeList of Struct, got {other}"
            )))
        }
    };
    let DataType::Struct(children) = element_type else {
        return Err(Error::InvalidArgument(format!(
            "any_element needs a list of Struct, got a list of {element_type}"
        )));
    };
    let fields: Vec<ElementField> = children
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let key = KeyType::from_arrow_type(f.data_type());
            ElementField {
                id: i32::try_from(i).unwrap_or(i32::MAX),
                name: f.name().clone(),
                logical_type: key.as_ref().map(|k| k.logical_type()).unwrap_or_default(),
                data_type: key.map(|k| k.arrow_type()),
            }
        })
        .collect();
    let bound = BoundPredicate::parse(predicate, &fields)?;
    crate::index::sql::any_element::evaluate_any_element(list, &bound)
}
