//! `lakeseek.EcpIndex`: k-NN search on an ecpfs index, first page and next pages.

use std::sync::Arc;

use arrow_array::{ArrayRef, Float32Array, RecordBatch, UInt32Array};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict};
use tokio::sync::Mutex;

use lakeseek::ecp::{EcpQuery, OpenOptions, QueryOptions, SearchParams};

use crate::arrow_out::Table;
use crate::input::{extract_f32s, extract_u64s};
use crate::open::{Json, OpenArgs};
use crate::runtime::{block_on, spawn_awaitable};
use crate::session::{ObjectStore, Session};

/// An open ecpfs vector index.
#[pyclass(module = "lakeseek", frozen)]
pub(crate) struct EcpIndex {
    inner: lakeseek::ecp::EcpIndex,
}

/// One page of results: item ids and scores (lower is better), best first. Also Arrow data
/// (`id` uint32, `score` float32) through `__arrow_c_stream__`.
#[pyclass(module = "lakeseek", frozen)]
pub(crate) struct SearchResult {
    /// Item ids, best first.
    #[pyo3(get)]
    ids: Vec<u32>,
    /// Item scores, lower is better (L2 distance, or -dot for IP).
    #[pyo3(get)]
    scores: Vec<f32>,
}

/// An open search: each `next(k)` returns the next `k` items, continuing where the last
/// page stopped.
#[pyclass(module = "lakeseek", frozen)]
pub(crate) struct EcpSearch {
    query: Arc<Mutex<EcpQuery>>,
}

impl EcpIndex {
    async fn open(args: OpenArgs, options: OpenOptions) -> lakeseek::Result<EcpIndex> {
        let mut builder = lakeseek::ecp::EcpIndex::builder(&args.url)
            .storage_options(args.storage_options)
            .options(options)
            .session(&args.session.0);
        if let Some(object_store) = args.object_store {
            builder = builder.object_store(object_store.store);
        }
        let inner = builder.open().await?;
        Ok(EcpIndex { inner })
    }

    fn start(
        &self,
        vector: &Bound<'_, PyAny>,
        exclude: Option<&Bound<'_, PyAny>>,
        search_exp: Option<u32>,
        max_increments: Option<i64>,
    ) -> PyResult<EcpQuery> {
        let vector = extract_f32s(vector, "vector")?;
        let exclude = match exclude {
            Some(ids) => extract_u64s(ids, "exclude")?,
            None => Vec::new(),
        };
        let exclude = exclude
            .into_iter()
            .map(|id| u32::try_from(id).unwrap_or(u32::MAX))
            .collect();
        let defaults = SearchParams::default();
        let params = SearchParams {
            search_exp: search_exp.unwrap_or(defaults.search_exp),
            max_increments: max_increments.unwrap_or(defaults.max_increments),
        };
        let options = QueryOptions {
            params,
            exclude,
            prefetch: None,
        };
        self.inner
            .query(vector, options)
            .map_err(crate::errors::to_py_err)
    }
}

fn open_options(node_cache_bytes: Option<u64>, prefetch: Option<usize>) -> OpenOptions {
    let defaults = OpenOptions::default();
    OpenOptions {
        writable: false,
        node_cache_bytes: node_cache_bytes.unwrap_or(defaults.node_cache_bytes),
        prefetch: prefetch.unwrap_or(defaults.prefetch),
    }
}

async fn next_page(query: Arc<Mutex<EcpQuery>>, k: usize) -> lakeseek::Result<SearchResult> {
    let page = query.lock().await.next_k(k).await?;
    Ok(SearchResult {
        ids: page.ids,
        scores: page.scores,
    })
}

#[pymethods]
impl EcpIndex {
    /// Open the ecpfs index at `url` (one wave of GETs); blocks until open.
    #[new]
    #[pyo3(signature = (url, storage_options=None, session=None, object_store=None, node_cache_bytes=None, prefetch=None))]
    fn new(
        py: Python<'_>,
        url: String,
        storage_options: Option<&Bound<'_, PyDict>>,
        session: Option<Session>,
        object_store: Option<ObjectStore>,
        node_cache_bytes: Option<u64>,
        prefetch: Option<usize>,
    ) -> PyResult<Self> {
        let args = OpenArgs::new(url, storage_options, session, None, object_store)?;
        block_on(
            py,
            Self::open(args, open_options(node_cache_bytes, prefetch)),
        )
    }

    /// `await EcpIndex.open_async(url, ...)`.
    #[staticmethod]
    #[pyo3(signature = (url, storage_options=None, session=None, object_store=None, node_cache_bytes=None, prefetch=None))]
    fn open_async<'py>(
        py: Python<'py>,
        url: String,
        storage_options: Option<&Bound<'py, PyDict>>,
        session: Option<Session>,
        object_store: Option<ObjectStore>,
        node_cache_bytes: Option<u64>,
        prefetch: Option<usize>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let args = OpenArgs::new(url, storage_options, session, None, object_store)?;
        spawn_awaitable(
            py,
            Self::open(args, open_options(node_cache_bytes, prefetch)),
        )
    }

    /// The index's settings (`dim`, `metric`, `levels`, `total_items`, ...).
    #[getter]
    fn info(&self) -> PyResult<Json> {
        let json = serde_json::to_string(self.inner.info());
        Ok(Json(json.map_err(|e| {
            crate::errors::LakeseekError::new_err(e.to_string())
        })?))
    }

    /// Requests, bytes and round trips of everything read through this index so far.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        crate::session::snapshot_dict(py, &self.inner.total_stats())
    }

    /// The `k` nearest items to `vector` (a first page; use `query` for further pages).
    #[pyo3(signature = (vector, k, exclude=None, search_exp=None, max_increments=None))]
    fn search(
        &self,
        py: Python<'_>,
        vector: &Bound<'_, PyAny>,
        k: usize,
        exclude: Option<&Bound<'_, PyAny>>,
        search_exp: Option<u32>,
        max_increments: Option<i64>,
    ) -> PyResult<SearchResult> {
        let query = self.start(vector, exclude, search_exp, max_increments)?;
        block_on(py, next_page(Arc::new(Mutex::new(query)), k))
    }

    /// `await index.search_async(vector, k)`.
    #[pyo3(signature = (vector, k, exclude=None, search_exp=None, max_increments=None))]
    fn search_async<'py>(
        &self,
        py: Python<'py>,
        vector: &Bound<'py, PyAny>,
        k: usize,
        exclude: Option<&Bound<'py, PyAny>>,
        search_exp: Option<u32>,
        max_increments: Option<i64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let query = self.start(vector, exclude, search_exp, max_increments)?;
        spawn_awaitable(py, next_page(Arc::new(Mutex::new(query)), k))
    }

    /// A search whose pages come from `next(k)` (no I/O until then).
    #[pyo3(signature = (vector, exclude=None, search_exp=None, max_increments=None))]
    fn query(
        &self,
        vector: &Bound<'_, PyAny>,
        exclude: Option<&Bound<'_, PyAny>>,
        search_exp: Option<u32>,
        max_increments: Option<i64>,
    ) -> PyResult<EcpSearch> {
        let query = self.start(vector, exclude, search_exp, max_increments)?;
        Ok(EcpSearch {
            query: Arc::new(Mutex::new(query)),
        })
    }
}

#[pymethods]
impl EcpSearch {
    /// The next `k` items.
    fn next(&self, py: Python<'_>, k: usize) -> PyResult<SearchResult> {
        block_on(py, next_page(Arc::clone(&self.query), k))
    }

    /// `await search.next_async(k)`.
    fn next_async<'py>(&self, py: Python<'py>, k: usize) -> PyResult<Bound<'py, PyAny>> {
        spawn_awaitable(py, next_page(Arc::clone(&self.query), k))
    }
}

impl SearchResult {
    fn table(&self) -> PyResult<Table> {
        let ids: ArrayRef = Arc::new(UInt32Array::from(self.ids.clone()));
        let scores: ArrayRef = Arc::new(Float32Array::from(self.scores.clone()));
        let batch = RecordBatch::try_from_iter([("id", ids), ("score", scores)])
            .map_err(|e| crate::errors::LakeseekError::new_err(e.to_string()))?;
        Ok(Table::from_batch(batch))
    }
}

#[pymethods]
impl SearchResult {
    fn __len__(&self) -> usize {
        self.ids.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "lakeseek.SearchResult(ids={:?}, scores={:?})",
            self.ids, self.scores
        )
    }

    /// The page as a Table (`id` uint32, `score` float32).
    fn to_table(&self) -> PyResult<Table> {
        self.table()
    }

    /// An Arrow C stream of the page (PyCapsule interface).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyCapsule>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        self.table()?.stream(py, requested_schema)
    }
}
