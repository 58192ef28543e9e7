//! `lakeseek.Dataset`: filters from the indices, takes by row address, queries, plans.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::arrow_out::{RowAddresses, Schema, Table};
use crate::blob::BlobFiles;
use crate::input::{as_strs, extract_columns, extract_f32s, extract_u64s};
use crate::open::{Json, OpenArgs};
use crate::queries::{parse_operator, NearestSpec, SearchSpec};
use crate::runtime::{block_on, spawn_awaitable};
use crate::session::{IoStats, Session};

/// A Lance dataset at one version. See the package docs and `lakeseek.pyi`.
#[pyclass(module = "lakeseek", frozen, skip_from_py_object)]
#[derive(Clone)]
pub(crate) struct Dataset {
    inner: lakeseek::Dataset,
    session: Session,
    stats: IoStats,
}

/// What to read of the matching rows, whether scanning is allowed.
struct QuerySpec {
    filter: String,
    columns: Vec<String>,
    allow_scan: bool,
}

impl QuerySpec {
    async fn execute(self, dataset: lakeseek::Dataset) -> lakeseek::Result<Table> {
        let columns = as_strs(&self.columns);
        let query = dataset.query().filter(&self.filter).columns(&columns);
        let result = query.allow_scan(self.allow_scan).execute().await?;
        Ok(match result.batch {
            Some(batch) => Table::from_batch(batch),
            None => Table::row_addresses(result.row_addresses),
        })
    }

    async fn explain(self, dataset: lakeseek::Dataset) -> lakeseek::Result<Json> {
        let query = dataset
            .query()
            .filter(&self.filter)
            .allow_scan(self.allow_scan);
        Ok(Json(query.explain().await?.to_string()))
    }
}

/// What to prewarm.
struct PrewarmSpec {
    indices: Option<Vec<String>>,
    columns: Option<Vec<String>>,
    all_index_pages: bool,
}

impl PrewarmSpec {
    /// Run it; the report (`indices`, `segments`, `index_pages`, `column_pages`, `stats`,
    /// `millis`) as JSON.
    async fn run(self, dataset: lakeseek::Dataset) -> lakeseek::Result<Json> {
        let mut prewarm = dataset.prewarm().all_index_pages(self.all_index_pages);
        for name in self.indices.iter().flatten() {
            prewarm = prewarm.index(name);
        }
        for name in self.columns.iter().flatten() {
            prewarm = prewarm.column(name);
        }
        let report = prewarm.run().await?;
        let json = serde_json::to_string(&report).map_err(std::io::Error::other)?;
        Ok(Json(json))
    }
}

impl Dataset {
    async fn open(args: OpenArgs, version: Option<u64>) -> lakeseek::Result<Dataset> {
        let mut builder = lakeseek::Dataset::builder(&args.url)
            .storage_options(args.storage_options.clone())
            .session(&args.session.0)
            .stats(&args.stats.0);
        if let Some(store) = &args.object_store {
            builder = builder.object_store(std::sync::Arc::clone(&store.store));
        }
        if let Some(version) = version {
            builder = builder.version(version);
        }
        Ok(Dataset {
            inner: builder.open().await?,
            session: args.session,
            stats: args.stats,
        })
    }

    fn query_spec(
        filter: String,
        columns: Option<&Bound<'_, PyAny>>,
        allow_scan: bool,
    ) -> PyResult<QuerySpec> {
        Ok(QuerySpec {
            filter,
            columns: extract_columns(columns)?,
            allow_scan,
        })
    }

    /// The typed arguments of `nearest` / `nearest_async`.
    #[allow(clippy::too_many_arguments)]
    fn nearest_spec(
        column: String,
        q: &Bound<'_, PyAny>,
        k: usize,
        nprobes: Option<usize>,
        minimum_nprobes: Option<usize>,
        maximum_nprobes: Option<usize>,
        refine_factor: Option<u32>,
        filter: Option<String>,
        prefilter: bool,
        columns: Option<&Bound<'_, PyAny>>,
        ef: Option<u32>,
        fast_search: bool,
        use_index: bool,
        allow_scan: bool,
        distance_range: Option<Vec<Option<f32>>>,
        metric: Option<String>,
    ) -> PyResult<NearestSpec> {
        Ok(NearestSpec {
            column,
            query: extract_f32s(q, "q")?,
            k,
            nprobes,
            minimum_nprobes,
            maximum_nprobes,
            refine_factor,
            filter,
            prefilter,
            columns: extract_columns(columns)?,
            ef,
            fast_search,
            use_index,
            allow_scan,
            distance_range: bounds(distance_range)?,
            metric,
        })
    }

    /// The typed arguments of `search` / `search_async`.
    #[allow(clippy::too_many_arguments)]
    fn search_spec(
        text: String,
        column: Option<String>,
        k: Option<usize>,
        operator: &str,
        filter: Option<String>,
        columns: Option<&Bound<'_, PyAny>>,
        allow_scan: bool,
        index_only: bool,
    ) -> PyResult<SearchSpec> {
        Ok(SearchSpec {
            text,
            column,
            k,
            operator: parse_operator(operator)?,
            filter,
            columns: extract_columns(columns)?,
            allow_scan,
            index_only,
        })
    }
}

/// `distance_range`: `(lower, upper)` (a tuple or list of two, either `None`).
fn bounds(range: Option<Vec<Option<f32>>>) -> PyResult<(Option<f32>, Option<f32>)> {
    match range.as_deref() {
        None => Ok((None, None)),
        Some([lower, upper]) => Ok((*lower, *upper)),
        Some(other) => Err(crate::errors::InvalidArgument::new_err(format!(
            "invalid argument: distance_range must be (lower, upper), not {} values",
            other.len()
        ))),
    }
}

#[pymethods]
impl Dataset {
    /// Open the dataset at `url` (latest version unless `version`); blocks until open.
    #[new]
    #[pyo3(signature = (url, storage_options=None, version=None, session=None, stats=None, object_store=None))]
    fn new(
        py: Python<'_>,
        url: String,
        storage_options: Option<&Bound<'_, PyDict>>,
        version: Option<u64>,
        session: Option<Session>,
        stats: Option<IoStats>,
        object_store: Option<crate::session::ObjectStore>,
    ) -> PyResult<Self> {
        let args = OpenArgs::new(url, storage_options, session, stats, object_store)?;
        block_on(py, Self::open(args, version))
    }

    /// `await Dataset.open_async(url, ...)`: open without blocking the event loop.
    #[staticmethod]
    #[pyo3(signature = (url, storage_options=None, version=None, session=None, stats=None, object_store=None))]
    fn open_async<'py>(
        py: Python<'py>,
        url: String,
        storage_options: Option<&Bound<'py, PyDict>>,
        version: Option<u64>,
        session: Option<Session>,
        stats: Option<IoStats>,
        object_store: Option<crate::session::ObjectStore>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let args = OpenArgs::new(url, storage_options, session, stats, object_store)?;
        spawn_awaitable(py, Self::open(args, version))
    }

    /// The version opened.
    #[getter]
    fn version(&self) -> u64 {
        self.inner.version()
    }

    /// The URL the dataset was opened from.
    #[getter]
    fn url(&self) -> String {
        self.inner.url().to_string()
    }

    /// The Arrow schema of the top-level columns.
    #[getter]
    fn schema(&self) -> PyResult<Schema> {
        let schema = self
            .inner
            .arrow_schema()
            .map_err(crate::errors::to_py_err)?;
        Ok(Schema(schema))
    }

    /// Names of the top-level columns.
    #[getter]
    fn column_names(&self) -> Vec<String> {
        self.inner.column_names()
    }

    /// The session whose caches the dataset uses.
    #[getter]
    fn session(&self) -> Session {
        self.session.clone()
    }

    /// The counters this handle's reads (and its open) are counted into.
    #[getter]
    fn stats(&self) -> IoStats {
        self.stats.clone()
    }

    /// Names of the indices of this version.
    fn index_names(&self) -> Vec<String> {
        self.inner.index_names()
    }

    /// Fragments: `[{"id", "physical_rows", "deleted_rows"}]`.
    fn fragments<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let fragments = self.inner.fragments();
        fragments
            .iter()
            .map(|f| {
                let dict = PyDict::new(py);
                dict.set_item("id", f.id)?;
                dict.set_item("physical_rows", f.physical_rows)?;
                dict.set_item("deleted_rows", f.deleted_rows)?;
                Ok(dict)
            })
            .collect()
    }

    /// The same dataset whose reads count into `stats`.
    fn with_stats(&self, stats: IoStats) -> Dataset {
        Dataset {
            inner: self.inner.with_stats(&stats.0),
            session: self.session.clone(),
            stats,
        }
    }

    /// Row addresses (ascending) where the SQL `filter` is TRUE, from the indices.
    fn filter(&self, py: Python<'_>, filter: String) -> PyResult<RowAddresses> {
        let rows = block_on(py, self.inner.filter(&filter))?;
        Ok(RowAddresses::new(rows))
    }

    /// `await ds.filter_async(filter)`.
    fn filter_async<'py>(&self, py: Python<'py>, filter: String) -> PyResult<Bound<'py, PyAny>> {
        let dataset = self.inner.clone();
        spawn_awaitable(py, async move {
            Ok(RowAddresses::new(dataset.filter(&filter).await?))
        })
    }

    /// The `columns` of the rows at `addresses`, in the order given (`_rowaddr` first).
    fn take(
        &self,
        py: Python<'_>,
        addresses: &Bound<'_, PyAny>,
        columns: &Bound<'_, PyAny>,
    ) -> PyResult<Table> {
        let addresses = extract_u64s(addresses, "addresses")?;
        let columns = extract_columns(Some(columns))?;
        let batch = block_on(py, self.inner.take(&addresses, &as_strs(&columns)))?;
        Ok(Table::from_batch(batch))
    }

    /// `await ds.take_async(addresses, columns)`.
    fn take_async<'py>(
        &self,
        py: Python<'py>,
        addresses: &Bound<'py, PyAny>,
        columns: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let addresses = extract_u64s(addresses, "addresses")?;
        let columns = extract_columns(Some(columns))?;
        let dataset = self.inner.clone();
        spawn_awaitable(py, async move {
            let batch = dataset.take(&addresses, &as_strs(&columns)).await?;
            Ok(Table::from_batch(batch))
        })
    }

    /// Filter, then read `columns` of the matching rows (`_rowaddr` first; only `_rowaddr`
    /// without columns). `allow_scan` scans where no index answers.
    #[pyo3(signature = (filter, columns=None, allow_scan=false))]
    fn query(
        &self,
        py: Python<'_>,
        filter: String,
        columns: Option<&Bound<'_, PyAny>>,
        allow_scan: bool,
    ) -> PyResult<Table> {
        let spec = Self::query_spec(filter, columns, allow_scan)?;
        block_on(py, spec.execute(self.inner.clone()))
    }

    /// `await ds.query_async(filter, columns=..., allow_scan=...)`.
    #[pyo3(signature = (filter, columns=None, allow_scan=false))]
    fn query_async<'py>(
        &self,
        py: Python<'py>,
        filter: String,
        columns: Option<&Bound<'py, PyAny>>,
        allow_scan: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let spec = Self::query_spec(filter, columns, allow_scan)?;
        spawn_awaitable(py, spec.execute(self.inner.clone()))
    }

    /// The plan of `filter` as a dict (indices, pages, byte ranges), reading no page.
    #[pyo3(signature = (filter, allow_scan=false))]
    fn explain(&self, py: Python<'_>, filter: String, allow_scan: bool) -> PyResult<Json> {
        let spec = Self::query_spec(filter, None, allow_scan)?;
        block_on(py, spec.explain(self.inner.clone()))
    }

    /// `await ds.explain_async(filter)`.
    #[pyo3(signature = (filter, allow_scan=false))]
    fn explain_async<'py>(
        &self,
        py: Python<'py>,
        filter: String,
        allow_scan: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let spec = Self::query_spec(filter, None, allow_scan)?;
        spawn_awaitable(py, spec.explain(self.inner.clone()))
    }

    /// Load index lookups (every index unless `indices`), optionally every index page and
    /// the page inits of `columns`, into the session's caches. Returns what it loaded and
    /// what it cost.
    #[pyo3(signature = (indices=None, columns=None, all_index_pages=false))]
    fn prewarm(
        &self,
        py: Python<'_>,
        indices: Option<Vec<String>>,
        columns: Option<Vec<String>>,
        all_index_pages: bool,
    ) -> PyResult<Json> {
        let plan = PrewarmSpec {
            indices,
            columns,
            all_index_pages,
        };
        block_on(py, plan.run(self.inner.clone()))
    }

    /// `await ds.prewarm_async(...)`.
    #[pyo3(signature = (indices=None, columns=None, all_index_pages=false))]
    fn prewarm_async<'py>(
        &self,
        py: Python<'py>,
        indices: Option<Vec<String>>,
        columns: Option<Vec<String>>,
        all_index_pages: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let plan = PrewarmSpec {
            indices,
            columns,
            all_index_pages,
        };
        spawn_awaitable(py, plan.run(self.inner.clone()))
    }

    /// The `k` rows of vector column `column` nearest to `q` (pylance's `nearest={...}`):
    /// `_rowaddr`, `_distance`, then `columns`, nearest first.
    #[pyo3(signature = (column, q, k=10, nprobes=None, minimum_nprobes=None, maximum_nprobes=None,
        refine_factor=None, filter=None, prefilter=true, columns=None, ef=None, fast_search=false,
        use_index=true, allow_scan=false, distance_range=None, metric=None))]
    #[allow(clippy::too_many_arguments)]
    fn nearest(
        &self,
        py: Python<'_>,
        column: String,
        q: &Bound<'_, PyAny>,
        k: usize,
        nprobes: Option<usize>,
        minimum_nprobes: Option<usize>,
        maximum_nprobes: Option<usize>,
        refine_factor: Option<u32>,
        filter: Option<String>,
        prefilter: bool,
        columns: Option<&Bound<'_, PyAny>>,
        ef: Option<u32>,
        fast_search: bool,
        use_index: bool,
        allow_scan: bool,
        distance_range: Option<Vec<Option<f32>>>,
        metric: Option<String>,
    ) -> PyResult<Table> {
        let spec = Self::nearest_spec(
            column,
            q,
            k,
            nprobes,
            minimum_nprobes,
            maximum_nprobes,
            refine_factor,
            filter,
            prefilter,
            columns,
            ef,
            fast_search,
            use_index,
            allow_scan,
            distance_range,
            metric,
        )?;
        block_on(py, spec.execute(self.inner.clone()))
    }

    /// `await ds.nearest_async(column, q, ...)`.
    #[pyo3(signature = (column, q, k=10, nprobes=None, minimum_nprobes=None, maximum_nprobes=None,
        refine_factor=None, filter=None, prefilter=true, columns=None, ef=None, fast_search=false,
        use_index=true, allow_scan=false, distance_range=None, metric=None))]
    #[allow(clippy::too_many_arguments)]
    fn nearest_async<'py>(
        &self,
        py: Python<'py>,
        column: String,
        q: &Bound<'py, PyAny>,
        k: usize,
        nprobes: Option<usize>,
        minimum_nprobes: Option<usize>,
        maximum_nprobes: Option<usize>,
        refine_factor: Option<u32>,
        filter: Option<String>,
        prefilter: bool,
        columns: Option<&Bound<'py, PyAny>>,
        ef: Option<u32>,
        fast_search: bool,
        use_index: bool,
        allow_scan: bool,
        distance_range: Option<Vec<Option<f32>>>,
        metric: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let spec = Self::nearest_spec(
            column,
            q,
            k,
            nprobes,
            minimum_nprobes,
            maximum_nprobes,
            refine_factor,
            filter,
            prefilter,
            columns,
            ef,
            fast_search,
            use_index,
            allow_scan,
            distance_range,
            metric,
        )?;
        spawn_awaitable(py, spec.execute(self.inner.clone()))
    }

    /// Run a nearest query (the arguments of `nearest`) and report how it ran, as a dict.
    #[pyo3(signature = (column, q, k=10, nprobes=None, minimum_nprobes=None, maximum_nprobes=None,
        refine_factor=None, filter=None, prefilter=true, columns=None, ef=None, fast_search=false,
        use_index=true, allow_scan=false, distance_range=None, metric=None))]
    #[allow(clippy::too_many_arguments)]
    fn explain_nearest(
        &self,
        py: Python<'_>,
        column: String,
        q: &Bound<'_, PyAny>,
        k: usize,
        nprobes: Option<usize>,
        minimum_nprobes: Option<usize>,
        maximum_nprobes: Option<usize>,
        refine_factor: Option<u32>,
        filter: Option<String>,
        prefilter: bool,
        columns: Option<&Bound<'_, PyAny>>,
        ef: Option<u32>,
        fast_search: bool,
        use_index: bool,
        allow_scan: bool,
        distance_range: Option<Vec<Option<f32>>>,
        metric: Option<String>,
    ) -> PyResult<Json> {
        let spec = Self::nearest_spec(
            column,
            q,
            k,
            nprobes,
            minimum_nprobes,
            maximum_nprobes,
            refine_factor,
            filter,
            prefilter,
            columns,
            ef,
            fast_search,
            use_index,
            allow_scan,
            distance_range,
            metric,
        )?;
        block_on(py, spec.explain(self.inner.clone()))
    }

    /// Full-text search of `column` (INVERTED index) for `text`, BM25 as pylance scores it:
    /// `_rowaddr`, `_score`, then `columns`, best first.
    #[pyo3(signature = (text, column=None, k=None, operator="or", filter=None, columns=None,
        allow_scan=false, index_only=false))]
    #[allow(clippy::too_many_arguments)]
    fn search(
        &self,
        py: Python<'_>,
        text: String,
        column: Option<String>,
        k: Option<usize>,
        operator: &str,
        filter: Option<String>,
        columns: Option<&Bound<'_, PyAny>>,
        allow_scan: bool,
        index_only: bool,
    ) -> PyResult<Table> {
        let spec = Self::search_spec(
            text, column, k, operator, filter, columns, allow_scan, index_only,
        )?;
        block_on(py, spec.execute(self.inner.clone()))
    }

    /// `await ds.search_async(text, column=..., ...)`.
    #[pyo3(signature = (text, column=None, k=None, operator="or", filter=None, columns=None,
        allow_scan=false, index_only=false))]
    #[allow(clippy::too_many_arguments)]
    fn search_async<'py>(
        &self,
        py: Python<'py>,
        text: String,
        column: Option<String>,
        k: Option<usize>,
        operator: &str,
        filter: Option<String>,
        columns: Option<&Bound<'py, PyAny>>,
        allow_scan: bool,
        index_only: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let spec = Self::search_spec(
            text, column, k, operator, filter, columns, allow_scan, index_only,
        )?;
        spawn_awaitable(py, spec.execute(self.inner.clone()))
    }

    /// The blobs of blob column `column` at `addresses`, in order: `None` for a null blob,
    /// else a `lakeseek.BlobFile` reading its bytes on demand.
    fn take_blobs(
        &self,
        py: Python<'_>,
        column: String,
        addresses: &Bound<'_, PyAny>,
    ) -> PyResult<BlobFiles> {
        let addresses = extract_u64s(addresses, "addresses")?;
        let blobs = block_on(py, self.inner.take_blobs(&column, &addresses))?;
        Ok(BlobFiles(blobs))
    }

    /// `await ds.take_blobs_async(column, addresses)`.
    fn take_blobs_async<'py>(
        &self,
        py: Python<'py>,
        column: String,
        addresses: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let addresses = extract_u64s(addresses, "addresses")?;
        let dataset = self.inner.clone();
        spawn_awaitable(py, async move {
            Ok(BlobFiles(dataset.take_blobs(&column, &addresses).await?))
        })
    }

    /// The `columns` of the rows whose stable row id is in `ids`, in the order asked
    /// (pylance's `_take_rows`; `_rowaddr` first, ask for `_rowid` to get the ids).
    fn take_row_ids(
        &self,
        py: Python<'_>,
        ids: &Bound<'_, PyAny>,
        columns: &Bound<'_, PyAny>,
    ) -> PyResult<Table> {
        let ids = extract_u64s(ids, "ids")?;
        let columns = extract_columns(Some(columns))?;
        let batch = block_on(py, self.inner.take_row_ids(&ids, &as_strs(&columns)))?;
        Ok(Table::from_batch(batch))
    }

    /// `await ds.take_row_ids_async(ids, columns)`.
    fn take_row_ids_async<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        columns: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let ids = extract_u64s(ids, "ids")?;
        let columns = extract_columns(Some(columns))?;
        let dataset = self.inner.clone();
        spawn_awaitable(py, async move {
            let batch = dataset.take_row_ids(&ids, &as_strs(&columns)).await?;
            Ok(Table::from_batch(batch))
        })
    }

    /// Whether the dataset has stable row ids.
    #[getter]
    fn has_stable_row_ids(&self) -> bool {
        self.inner.has_stable_row_ids()
    }

    fn __repr__(&self) -> String {
        format!(
            "lakeseek.Dataset({:?}, version={})",
            self.inner.url(),
            self.inner.version()
        )
    }
}
