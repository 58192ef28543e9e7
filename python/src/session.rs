//! [`Session`] (shared caches within a byte budget, optional disk tier), [`IoStats`]
//! (requests, bytes, round trips) and [`ObjectStore`] (a ready-made store handle, e.g. the
//! bundled sample data).

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::to_py_err;

/// Caches shared by every dataset, file and index opened with the session, within one
/// byte budget; optionally a disk tier (`cache_dir`) shared by processes.
#[pyclass(module = "lakeseek", frozen, from_py_object)]
#[derive(Clone)]
pub(crate) struct Session(pub(crate) lakeseek::Session);

#[pymethods]
impl Session {
    #[new]
    #[pyo3(signature = (budget_bytes=None, cache_dir=None, cache_bytes=None))]
    fn new(
        budget_bytes: Option<u64>,
        cache_dir: Option<PathBuf>,
        cache_bytes: Option<u64>,
    ) -> PyResult<Self> {
        let mut builder = lakeseek::Session::builder();
        if let Some(bytes) = budget_bytes {
            builder = builder.budget_bytes(bytes);
        }
        let builder = builder
            .disk_cache_from(cache_dir, cache_bytes)
            .map_err(to_py_err)?;
        Ok(Session(builder.build().map_err(to_py_err)?))
    }

    /// The memory budget in bytes.
    #[getter]
    fn budget_bytes(&self) -> u64 {
        self.0.budget_bytes()
    }

    /// The disk tier's directory, or None.
    #[getter]
    fn cache_dir(&self) -> Option<PathBuf> {
        self.0.disk_cache_dir().map(PathBuf::from)
    }

    fn __repr__(&self) -> String {
        let dir = match self.0.disk_cache_dir() {
            Some(dir) => format!("{:?}", dir.display().to_string()),
            None => "None".into(),
        };
        format!(
            "lakeseek.Session(budget_bytes={}, cache_dir={dir})",
            self.0.budget_bytes()
        )
    }
}

/// Counters of what reads cost: requests, bytes, round trips (sequential waves of
/// requests), retries, hedged requests, disk-tier hits. Shared by every handle given it.
#[pyclass(module = "lakeseek", frozen, from_py_object)]
#[derive(Clone, Default)]
pub(crate) struct IoStats(pub(crate) lakeseek::IoStats);

#[pymethods]
impl IoStats {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    /// Requests sent to the object store.
    #[getter]
    fn requests(&self) -> u64 {
        self.0.snapshot().requests
    }

    /// Bytes received.
    #[getter]
    fn bytes(&self) -> u64 {
        self.0.snapshot().bytes
    }

    /// Sequential waves of requests.
    #[getter]
    fn round_trips(&self) -> u64 {
        self.0.snapshot().round_trips
    }

    /// All counters as a dict (`requests`, `bytes`, `round_trips`, `retries`, `hedges`,
    /// `disk_hits`, `disk_bytes`).
    fn snapshot<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        snapshot_dict(py, &self.0.snapshot())
    }

    fn __repr__(&self) -> String {
        let s = self.0.snapshot();
        format!(
            "lakeseek.IoStats(requests={}, bytes={}, round_trips={})",
            s.requests, s.bytes, s.round_trips
        )
    }
}

/// An `IoStatsSnapshot` as a dict.
pub(crate) fn snapshot_dict<'py>(
    py: Python<'py>,
    s: &lakeseek::IoStatsSnapshot,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("requests", s.requests)?;
    dict.set_item("bytes", s.bytes)?;
    dict.set_item("round_trips", s.round_trips)?;
    dict.set_item("retries", s.retries)?;
    dict.set_item("hedges", s.hedges)?;
    dict.set_item("disk_hits", s.disk_hits)?;
    dict.set_item("disk_bytes", s.disk_bytes)?;
    Ok(dict)
}

/// A ready-made object store to read through instead of one built from the URL (the URL
/// then names only the scheme and the path). `lakeseek.sample.store()` returns one.
#[pyclass(module = "lakeseek", frozen, from_py_object)]
#[derive(Clone)]
pub(crate) struct ObjectStore {
    pub(crate) store: Arc<dyn object_store::ObjectStore>,
    pub(crate) label: String,
}

#[pymethods]
impl ObjectStore {
    fn __repr__(&self) -> String {
        format!("lakeseek.ObjectStore({})", self.label)
    }
}

static SAMPLE_STORE: std::sync::OnceLock<Arc<dyn object_store::ObjectStore>> =
    std::sync::OnceLock::new();

/// The in-memory store holding the bundled sample data (one per process).
#[pyfunction]
pub(crate) fn sample_store(py: Python<'_>) -> PyResult<ObjectStore> {
    let store = match SAMPLE_STORE.get() {
        Some(store) => Arc::clone(store),
        None => {
            let made = crate::runtime::block_on(py, lakeseek::sample::store())?;
            Arc::clone(SAMPLE_STORE.get_or_init(|| made))
        }
    };
    Ok(ObjectStore {
        store,
        label: "sample data in memory".into(),
    })
}

/// URL of one data file (a Lance 2.3 file) of the sample dataset.
#[pyfunction]
pub(crate) fn sample_data_file_url() -> String {
    lakeseek::sample::data_file_url()
}
