//! [`Query`]: a filter, the columns to read of the matching rows, scan permission, and the
//! plan it will run.

use arrow_array::RecordBatch;

use super::dataset::Dataset;
use super::filter_expr::FilterExpr;
use super::scan::{FilterExactness, PlannedFilter};
use crate::error::{Error, Result};
use crate::index::filter::{
    check_parsed_filter, execute_filter, plan_parsed_filter, FilterOptions, FilterPlan,
};
use crate::index::kind::Exactness;
use crate::index::sql::parsed::ParsedFilter;
use crate::io::IoStats;
use crate::lance::dataset::take_row_ids::take_with_row_ids;

/// A query on a [`Dataset`], built with [`Dataset::query`].
///
/// ```
/// # #[tokio::main] async fn main() -> lakeseek::Result<()> {
/// use lakeseek::{Dataset, IoStats};
///
/// let store = lakeseek::sample::store().await?;
/// let dataset = Dataset::builder(lakeseek::sample::DATASET_URL).object_store(store).open().await?;
///
/// let stats = IoStats::new();
/// let result = dataset
///     .query()
///     .filter("key = 'cam06-029417'")
///     .columns(&["key", "camera"])
///     .stats(&stats)
///     .execute()
///     .await?;
/// assert_eq!(result.row_addresses, vec![(2 << 32) | 9417]);
/// let batch = result.batch.expect("columns were asked for");
/// assert_eq!(batch.num_rows(), 1);
/// let cost = stats.snapshot();
/// assert!(cost.requests > 0 && cost.bytes > 0); // index pages and the two columns' chunks
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Query<'a> {
    dataset: &'a Dataset,
    filter: Option<QueryFilter>,
    columns: Vec<String>,
    allow_scan: bool,
    stats: Option<IoStats>,
}

/// A query's filter: SQL text, or built in code.
#[derive(Debug, Clone)]
enum QueryFilter {
    Sql(String),
    Built(FilterExpr),
}

/// What a [`Query`] returned.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct QueryResult {
    /// Row addresses (`fragment << 32 | offset`, ascending) where the filter is TRUE.
    pub row_addresses: Vec<u64>,
    /// The requested columns of those rows (`_rowaddr` first), when columns were asked for.
    pub batch: Option<RecordBatch>,
}

impl Dataset {
    /// A query: a filter, optional columns to read of the matching rows, scan permission,
    /// a plan to print.
    pub fn query(&self) -> Query<'_> {
        Query::new(self)
    }
}

impl<'a> Query<'a> {
    pub(crate) fn new(dataset: &'a Dataset) -> Self {
        Self {
            dataset,
            filter: None,
            columns: Vec::new(),
            allow_scan: false,
            stats: None,
        }
    }

    /// The SQL filter (`key = 'abc'`, `ts >= TIMESTAMP '2024-01-01 00:00:00'`,
    /// `any_element(detections, 'label = ''car''')`, …).
    pub fn filter(mut self, sql: &str) -> Self {
        self.filter = Some(QueryFilter::Sql(sql.to_string()));
        self
    }

    /// The filter built in code (instead of [`Query::filter`]'s SQL text; same answers).
    pub fn filter_expr(mut self, filter: &FilterExpr) -> Self {
        self.filter = Some(QueryFilter::Built(filter.clone()));
        self
    }

    /// Read these top-level columns of the matching rows.
    pub fn columns(mut self, columns: &[&str]) -> Self {
        self.columns = columns.iter().map(|c| c.to_string()).collect();
        self
    }

    /// Scan the data where no index answers the filter (refused by default).
    pub fn allow_scan(mut self, allow: bool) -> Self {
        self.allow_scan = allow;
        self
    }

    /// Count this query's requests into `stats` (instead of the dataset handle's stats).
    pub fn stats(mut self, stats: &IoStats) -> Self {
        self.stats = Some(stats.clone());
        self
    }

    /// The plan as JSON — which index answers each part of the filter, the pages and byte
    /// ranges it will read, what is scanned or rechecked — without reading the pages.
    pub async fn explain(&self) -> Result<serde_json::Value> {
        let plan = self
            .filter_plan()
            .await
            .map_err(|e| self.dataset.named(e))?;
        Ok(plan.explain())
    }

    /// Plan the query's filter (index lookups and metadata, no index page yet), honouring
    /// [`Query::allow_scan`]; print it with [`PlannedFilter::explain`], run it with
    /// [`Dataset::execute_planned_filter`]. [`Query::execute`] is plan, then execute.
    ///
    /// ```
    /// # #[tokio::main] async fn main() -> lakeseek::Result<()> {
    /// # use lakeseek::Dataset;
    /// # let dataset = Dataset::builder(lakeseek::sample::DATASET_URL)
    /// #     .object_store(lakeseek::sample::store().await?).open().await?;
    /// let plan = dataset.query().filter("camera = 3").allow_scan(true).plan().await?;
    /// assert!(plan.full_scan_notice().is_some()); // no index on `camera`
    /// let rows = dataset.execute_planned_filter(&plan).await?;
    /// assert!(!rows.is_empty());
    /// # Ok(()) }
    /// ```
    pub async fn plan(&self) -> Result<PlannedFilter> {
        let plan = self
            .filter_plan()
            .await
            .map_err(|e| self.dataset.named(e))?;
        Ok(PlannedFilter::new(plan, self.dataset.version()))
    }

    /// How the indices would answer the query's filter, decided from the manifest alone —
    /// no request, no await: the choice [`Query::plan`] makes before it opens an index.
    /// Errors as [`Query::plan`] does for a filter no index bounds (unless
    /// [`Query::allow_scan`]) or that names no column of the dataset. An index whose files
    /// turn out unreadable is found only by planning, which then evaluates its part on data
    /// where scans are allowed. For engines that decide synchronously what to push down.
    ///
    /// ```
    /// # #[tokio::main] async fn main() -> lakeseek::Result<()> {
    /// # use lakeseek::Dataset;
    /// # let dataset = Dataset::builder(lakeseek::sample::DATASET_URL)
    /// #     .object_store(lakeseek::sample::store().await?).open().await?;
    /// use lakeseek::FilterExactness;
    /// let query = dataset.query().filter("key = 'cam06-029417'");
    /// assert_eq!(query.check()?, FilterExactness::Exact); // the BTree on `key`
    /// assert!(dataset.query().filter("camera = 3").check().is_err()); // no index, no scan
    /// # Ok(()) }
    /// ```
    pub fn check(&self) -> Result<FilterExactness> {
        let parsed = self.parsed_filter()?;
        let exactness =
            check_parsed_filter(self.dataset.version_handle(), &parsed, self.options())?;
        Ok(match exactness {
            Exactness::Exact => FilterExactness::Exact,
            Exactness::Candidates => FilterExactness::Candidates,
        })
    }

    /// Run the query.
    pub async fn execute(&self) -> Result<QueryResult> {
        self.plan_and_execute()
            .await
            .map_err(|e| self.dataset.named(e))
    }

    async fn plan_and_execute(&self) -> Result<QueryResult> {
        let plan = self.filter_plan().await?;
        let version = self.dataset.version_handle();
        let rows = execute_filter(version, &plan, self.cost_stats()).await?;
        let row_addresses: Vec<u64> = rows.iter().collect();
        let batch = if self.columns.is_empty() {
            None
        } else {
            Some(
                take_with_row_ids(version, &row_addresses, &self.columns, self.cost_stats())
                    .await?,
            )
        };
        Ok(QueryResult {
            row_addresses,
            batch,
        })
    }

    async fn filter_plan(&self) -> Result<FilterPlan> {
        let parsed = self.parsed_filter()?;
        let version = self.dataset.version_handle();
        plan_parsed_filter(version, &parsed, self.options(), self.cost_stats()).await
    }

    fn parsed_filter(&self) -> Result<ParsedFilter> {
        match &self.filter {
            Some(QueryFilter::Sql(sql)) => ParsedFilter::parse(sql),
            Some(QueryFilter::Built(filter)) => filter.parsed(),
            None => Err(Error::InvalidArgument(
                "a query needs a filter (Query::filter)".into(),
            )),
        }
    }

    fn options(&self) -> FilterOptions {
        FilterOptions {
            allow_scan: self.allow_scan,
        }
    }

    fn cost_stats(&self) -> &IoStats {
        self.stats
            .as_ref()
            .unwrap_or_else(|| self.dataset.stats_handle())
    }
}
