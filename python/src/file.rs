//! `lakeseek.LanceFile`: one Lance file read by row range or row list.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::arrow_out::{Schema, Table};
use crate::input::{as_strs, extract_columns, extract_u64s};
use crate::open::OpenArgs;
use crate::runtime::{block_on, spawn_awaitable};
use crate::session::{IoStats, ObjectStore, Session};

/// An open Lance file (2.1, 2.2, 2.3).
#[pyclass(module = "lakeseek", frozen)]
pub(crate) struct LanceFile {
    inner: lakeseek::LanceFile,
    stats: IoStats,
}

impl LanceFile {
    async fn open(args: OpenArgs, size: Option<u64>) -> lakeseek::Result<LanceFile> {
        let mut builder = lakeseek::LanceFile::builder(&args.url)
            .session(&args.session.0)
            .stats(&args.stats.0);
        for (key, value) in args.storage_options {
            builder = builder.storage_option(key, value);
        }
        if let Some(store) = &args.object_store {
            builder = builder.object_store(std::sync::Arc::clone(&store.store));
        }
        if let Some(size) = size {
            builder = builder.size(size);
        }
        Ok(LanceFile {
            inner: builder.open().await?,
            stats: args.stats,
        })
    }
}

#[pymethods]
impl LanceFile {
    /// Open the Lance file at `url` (one suffix read); blocks until open.
    #[new]
    #[pyo3(signature = (url, storage_options=None, session=None, stats=None, object_store=None, size=None))]
    fn new(
        py: Python<'_>,
        url: String,
        storage_options: Option<&Bound<'_, PyDict>>,
        session: Option<Session>,
        stats: Option<IoStats>,
        object_store: Option<ObjectStore>,
        size: Option<u64>,
    ) -> PyResult<Self> {
        let args = OpenArgs::new(url, storage_options, session, stats, object_store)?;
        block_on(py, Self::open(args, size))
    }

    /// `await LanceFile.open_async(url, ...)`.
    #[staticmethod]
    #[pyo3(signature = (url, storage_options=None, session=None, stats=None, object_store=None, size=None))]
    fn open_async<'py>(
        py: Python<'py>,
        url: String,
        storage_options: Option<&Bound<'py, PyDict>>,
        session: Option<Session>,
        stats: Option<IoStats>,
        object_store: Option<ObjectStore>,
        size: Option<u64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let args = OpenArgs::new(url, storage_options, session, stats, object_store)?;
        spawn_awaitable(py, Self::open(args, size))
    }

    /// Number of rows.
    #[getter]
    fn num_rows(&self) -> u64 {
        self.inner.num_rows()
    }

    /// The file's Arrow schema.
    #[getter]
    fn schema(&self) -> Schema {
        Schema(self.inner.schema())
    }

    /// The counters this file's reads are counted into.
    #[getter]
    fn stats(&self) -> IoStats {
        self.stats.clone()
    }

    /// Rows `start..stop` (half-open) of the named top-level `columns`.
    fn read_range(
        &self,
        py: Python<'_>,
        columns: &Bound<'_, PyAny>,
        start: u64,
        stop: u64,
    ) -> PyResult<Table> {
        let columns = extract_columns(Some(columns))?;
        let batch = block_on(py, self.inner.read_range(&as_strs(&columns), start..stop))?;
        Ok(Table::from_batch(batch))
    }

    /// `await f.read_range_async(columns, start, stop)`.
    fn read_range_async<'py>(
        &self,
        py: Python<'py>,
        columns: &Bound<'py, PyAny>,
        start: u64,
        stop: u64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let columns = extract_columns(Some(columns))?;
        let file = self.inner.clone();
        spawn_awaitable(py, async move {
            let batch = file.read_range(&as_strs(&columns), start..stop).await?;
            Ok(Table::from_batch(batch))
        })
    }

    /// The rows `rows` of the named `columns`, in the order given, repeats kept.
    fn take(
        &self,
        py: Python<'_>,
        columns: &Bound<'_, PyAny>,
        rows: &Bound<'_, PyAny>,
    ) -> PyResult<Table> {
        let columns = extract_columns(Some(columns))?;
        let rows = extract_u64s(rows, "rows")?;
        let batch = block_on(py, self.inner.take(&as_strs(&columns), &rows))?;
        Ok(Table::from_batch(batch))
    }

    /// `await f.take_async(columns, rows)`.
    fn take_async<'py>(
        &self,
        py: Python<'py>,
        columns: &Bound<'py, PyAny>,
        rows: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let columns = extract_columns(Some(columns))?;
        let rows = extract_u64s(rows, "rows")?;
        let file = self.inner.clone();
        spawn_awaitable(py, async move {
            let batch = file.take(&as_strs(&columns), &rows).await?;
            Ok(Table::from_batch(batch))
        })
    }

    fn __repr__(&self) -> String {
        format!("lakeseek.LanceFile({} rows)", self.inner.num_rows())
    }
}
