//! [`LakeseekTable`]: a DataFusion `TableProvider` over a [`lakeseek::Dataset`].

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::stats::Precision;
use datafusion::common::{exec_datafusion_err, DataFusionError, Result, Statistics};
use datafusion::datasource::{TableProvider, TableType};
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_plan::ExecutionPlan;
use lakeseek::{Dataset, FilterExactness, FilterExpr, FragmentInfo, PlannedFilter};

use crate::exec::{FragmentGroup, LakeseekScanExec, ScanSource, ScanSpec};
use crate::filter::{row_address_filter, to_filter_expr, ROW_ADDRESS_COLUMN, ROW_ID_COLUMN};

/// Scans of at most this many row addresses are point lookups: one partition, one task on
/// the coordinator.
pub(crate) const POINT_LOOKUP_ROWS: usize = 1024;

/// A Lance dataset as a DataFusion table, answered from lakeseek's indices.
///
/// * Filters lakeseek answers exactly from its indices (BTree, bitmap, label list, list
///   element index, fragments an index does not cover evaluated inside the scan) are pushed
///   down as `Exact`; those answered from candidates (zone maps, bloom filters, a superset
///   `any_element` search) as `Inexact`; anything else is `Unsupported` and DataFusion
///   evaluates it on the scanned rows.
/// * The projection is pushed down, and the limit when every filter is exact.
/// * With [`LakeseekTable::with_row_address`] the table has a `_rowaddr` column
///   (`fragment << 32 | offset`); `_rowaddr = x` and `_rowaddr IN (..)` become takes.
/// * With [`LakeseekTable::with_row_id`] it has a `_rowid` column: each row's stable row id
///   (on a dataset with stable row ids; else its address), read with the rows; filters on it
///   are evaluated by DataFusion.
/// * A blob column is its blob descriptors (the `struct` pylance's `to_table` returns:
///   position and size, in 2.2 files also kind, blob id and URI), never the bytes: read
///   those with [`lakeseek::Dataset::take_blobs`].
/// * A scan resolves the filters to row addresses once (index reads through the dataset's
///   session caches) and reads them with lakeseek's takes; its partitions are groups of
///   fragments.
///
/// ```no_run
/// # async fn example() -> datafusion::common::Result<()> {
/// use std::sync::Arc;
/// let dataset = lakeseek::Dataset::open("s3://bucket/frames.lance").await
///     .map_err(|e| datafusion::common::DataFusionError::External(e.into()))?;
/// let ctx = lakeseek_datafusion::session_context(&[])?;
/// ctx.register_table("frames", Arc::new(lakeseek_datafusion::LakeseekTable::new(dataset)?))?;
/// let rows = ctx.sql("SELECT count(*) FROM frames WHERE key = 'a'").await?.collect().await?;
/// # Ok(()) }
/// ```
pub struct LakeseekTable {
    dataset: Dataset,
    columns: Vec<String>,
    schema: SchemaRef,
    fragments: Vec<FragmentInfo>,
    /// Whether the schema has `_rowaddr`.
    row_address: bool,
    /// Plans of pushed-down filters, by their rendering (each planned once per table).
    plans: Mutex<HashMap<String, PlanOutcome>>,
}

impl fmt::Debug for LakeseekTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LakeseekTable")
            .field("url", &self.dataset.url())
            .field("version", &self.dataset.version())
            .finish_non_exhaustive()
    }
}

/// A filter's plan, or why lakeseek cannot plan it (kept typed: it is the source of the
/// scan's error).
type PlanOutcome = std::result::Result<PlannedFilter, lakeseek::Error>;

/// How one filter is answered.
enum Pushed {
    RowAddresses(Vec<u64>),
    Lakeseek(FilterExpr, FilterExactness),
    No,
}

impl LakeseekTable {
    /// A table over the dataset's top-level columns.
    pub fn new(dataset: Dataset) -> Result<Self> {
        let schema = dataset
            .arrow_schema()
            .map_err(|e| exec_datafusion_err!("schema of {}: {e}", dataset.url()))?;
        let columns = schema.fields().iter().map(|f| f.name().clone()).collect();
        Ok(Self {
            fragments: dataset.fragments(),
            dataset,
            columns,
            schema,
            row_address: false,
            plans: Mutex::new(HashMap::new()),
        })
    }

    /// Add the `_rowaddr` column (UInt64, last): each row's address.
    pub fn with_row_address(mut self) -> Result<Self> {
        self.add_column(ROW_ADDRESS_COLUMN)?;
        self.row_address = true;
        Ok(self)
    }

    /// Add the `_rowid` column (UInt64, last): each row's stable row id, as pylance's
    /// `with_row_id` gives it (a dataset without stable row ids: the row's address). The
    /// `sql` command adds it to the tables of datasets with stable row ids.
    pub fn with_row_id(mut self) -> Result<Self> {
        self.add_column(ROW_ID_COLUMN)?;
        Ok(self)
    }

    fn add_column(&mut self, name: &str) -> Result<()> {
        if self.schema.fields().iter().any(|f| f.name() == name) {
            return Err(DataFusionError::Plan(format!(
                "{} already has a column named {name}",
                self.dataset.url()
            )));
        }
        let mut fields: Vec<Field> = self
            .schema
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        fields.push(Field::new(name, DataType::UInt64, false));
        self.schema = Arc::new(Schema::new(fields));
        Ok(())
    }

    /// The dataset the table reads.
    pub fn dataset(&self) -> &Dataset {
        &self.dataset
    }

    fn has_row_address(&self) -> bool {
        self.row_address
    }

    fn cached_plan(&self, key: &str) -> Option<PlanOutcome> {
        self.plans.lock().expect("plan cache").get(key).cloned()
    }

    fn remember_plan(&self, key: String, planned: &PlanOutcome) {
        self.plans
            .lock()
            .expect("plan cache")
            .insert(key, planned.clone());
    }

    /// The cached plan of the filter a scan pushed down (planned now if new). Scans are
    /// allowed: [`Self::classify`] pushed it because indices bound it; should an index turn
    /// out unreadable, its part is evaluated on data instead of failing the scan.
    async fn plan_async(&self, filter: &FilterExpr) -> PlanOutcome {
        let key = filter.to_string();
        if let Some(p) = self.cached_plan(&key) {
            return p;
        }
        let planned = self
            .dataset
            .query()
            .filter_expr(filter)
            .allow_scan(true)
            .plan()
            .await;
        self.remember_plan(key, &planned);
        planned
    }

    fn classify(&self, expr: &Expr) -> Pushed {
        if self.has_row_address() {
            if let Some(addresses) = row_address_filter(expr) {
                return Pushed::RowAddresses(addresses);
            }
        }
        let Some(filter) = to_filter_expr(expr, &self.columns) else {
            return Pushed::No;
        };
        // Decided from the manifest, without reading (DataFusion asks synchronously); the
        // scan plans what it pushed, once.
        match self.dataset.query().filter_expr(&filter).check() {
            Ok(exactness) => Pushed::Lakeseek(filter, exactness),
            Err(_) => Pushed::No,
        }
    }

    /// Row addresses of `addresses` that exist in this version (an address past a
    /// fragment's rows, or of another fragment, matches no row).
    fn existing(&self, addresses: Vec<u64>) -> Vec<u64> {
        addresses
            .into_iter()
            .filter(|a| {
                self.fragments
                    .iter()
                    .any(|f| f.id == a >> 32 && (a & 0xFFFF_FFFF) < f.physical_rows)
            })
            .collect()
    }

    /// Partition `addresses` (ascending) into at most `target` groups of whole fragments.
    fn group_rows(
        &self,
        addresses: Vec<u64>,
        target: usize,
        exact_counts: bool,
    ) -> Vec<FragmentGroup> {
        let mut per_fragment: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        for a in addresses {
            per_fragment.entry(a >> 32).or_default().push(a);
        }
        let total: usize = per_fragment.values().map(Vec::len).sum();
        let target = if total <= POINT_LOOKUP_ROWS {
            1
        } else {
            target.max(1)
        };
        let fragments: Vec<(u64, Vec<u64>)> = per_fragment.into_iter().collect();
        let per_group = fragments.len().div_ceil(target).max(1);
        let groups: Vec<FragmentGroup> = fragments
            .chunks(per_group)
            .map(|chunk| {
                let rows: Vec<u64> = chunk.iter().flat_map(|(_, r)| r.clone()).collect();
                let without_deletions = chunk.iter().all(|(id, _)| {
                    self.fragments
                        .iter()
                        .any(|f| f.id == *id && f.deleted_rows == Some(0))
                });
                FragmentGroup {
                    fragments: chunk.iter().map(|(id, _)| *id).collect(),
                    known_rows: (exact_counts || without_deletions).then_some(rows.len() as u64),
                    rows: Some(rows),
                }
            })
            .collect();
        if groups.is_empty() {
            vec![FragmentGroup {
                fragments: vec![],
                rows: Some(vec![]),
                known_rows: Some(0),
            }]
        } else {
            groups
        }
    }

    /// Every fragment, in at most `target` groups, rows to be read whole (or selected by a
    /// residual filter).
    fn group_fragments(&self, target: usize, residual: bool) -> Vec<FragmentGroup> {
        let per_group = self.fragments.len().div_ceil(target.max(1)).max(1);
        self.fragments
            .chunks(per_group)
            .map(|chunk| FragmentGroup {
                fragments: chunk.iter().map(|f| f.id).collect(),
                rows: None,
                known_rows: if residual {
                    None
                } else {
                    chunk.iter().map(FragmentInfo::live_rows).sum()
                },
            })
            .collect()
    }
}

#[async_trait]
impl TableProvider for LakeseekTable {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| match self.classify(f) {
                Pushed::RowAddresses(_) => TableProviderFilterPushDown::Exact,
                Pushed::Lakeseek(_, FilterExactness::Exact) => TableProviderFilterPushDown::Exact,
                Pushed::Lakeseek(..) => TableProviderFilterPushDown::Inexact,
                Pushed::No => TableProviderFilterPushDown::Unsupported,
            })
            .collect())
    }

    fn statistics(&self) -> Option<Statistics> {
        let rows: Option<u64> = self.fragments.iter().map(FragmentInfo::live_rows).sum();
        let mut stats = Statistics::new_unknown(&self.schema);
        stats.num_rows = Precision::Exact(usize::try_from(rows?).ok()?);
        Some(stats)
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let schema = match projection {
            Some(p) => Arc::new(self.schema.project(p)?),
            None => Arc::clone(&self.schema),
        };
        let mut addresses: Option<Vec<u64>> = None;
        let mut pushed: Vec<FilterExpr> = Vec::new();
        let mut all_exact = true;
        for f in filters {
            match self.classify(f) {
                Pushed::RowAddresses(a) => {
                    addresses = Some(match addresses {
                        None => a,
                        Some(prev) => prev
                            .into_iter()
                            .filter(|x| a.binary_search(x).is_ok())
                            .collect(),
                    });
                }
                Pushed::Lakeseek(filter, exactness) => {
                    all_exact &= exactness == FilterExactness::Exact;
                    pushed.push(filter);
                }
                Pushed::No => {
                    return Err(DataFusionError::Plan(format!(
                        "lakeseek table {}: filter {f} was not pushed down",
                        self.dataset.url()
                    )))
                }
            }
        }
        let target = state.config().target_partitions();
        let mut residual = None;
        let groups = if pushed.is_empty() && addresses.is_none() {
            self.group_fragments(target, false)
        } else {
            let combined = match pushed.len() {
                0 => None,
                1 => pushed.pop(),
                _ => Some(FilterExpr::all(pushed)),
            };
            let plan = match &combined {
                Some(filter) => Some(self.plan_async(filter).await.map_err(|e| {
                    DataFusionError::External(Box::new(e))
                        .context(format!("lakeseek filter {:?}", filter.to_string()))
                })?),
                None => None,
            };
            match (plan, addresses) {
                (Some(plan), None) if plan.evaluates_every_row() => {
                    residual = combined;
                    self.group_fragments(target, true)
                }
                (plan, addresses) => {
                    let mut rows = match &plan {
                        Some(plan) => {
                            self.dataset
                                .execute_planned_filter(plan)
                                .await
                                .map_err(|e| {
                                    exec_datafusion_err!(
                                        "lakeseek filter on {}: {e}",
                                        self.dataset.url()
                                    )
                                })?
                        }
                        None => Vec::new(),
                    };
                    let exact_counts = addresses.is_none();
                    if let Some(a) = addresses {
                        let a = self.existing(a);
                        rows = if plan.is_some() {
                            a.into_iter()
                                .filter(|x| rows.binary_search(x).is_ok())
                                .collect()
                        } else {
                            a
                        };
                    }
                    self.group_rows(rows, target, exact_counts)
                }
            }
        };
        let spec = ScanSpec {
            url: self.dataset.url().to_string(),
            version: self.dataset.version(),
            schema,
            residual,
            limit: if all_exact { limit } else { None },
            tasks: vec![groups],
        };
        Ok(Arc::new(LakeseekScanExec::new(
            spec,
            ScanSource::Open(Box::new(self.dataset.clone())),
        )))
    }
}
