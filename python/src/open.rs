//! What every `open` takes from Python (URL, storage options, session, stats, a ready-made
//! store), and JSON values handed to Python as dicts.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict};

use crate::session::{IoStats, ObjectStore, Session};

/// Open arguments, owned (they move into the future that opens).
pub(crate) struct OpenArgs {
    pub(crate) url: String,
    pub(crate) storage_options: Vec<(String, String)>,
    pub(crate) session: Session,
    pub(crate) stats: IoStats,
    pub(crate) object_store: Option<ObjectStore>,
}

impl OpenArgs {
    pub(crate) fn new(
        url: String,
        storage_options: Option<&Bound<'_, PyDict>>,
        session: Option<Session>,
        stats: Option<IoStats>,
        object_store: Option<ObjectStore>,
    ) -> PyResult<Self> {
        Ok(Self {
            url,
            storage_options: storage_options
                .map(option_pairs)
                .transpose()?
                .unwrap_or_default(),
            session: session.unwrap_or_else(|| Session(lakeseek::Session::default())),
            stats: stats.unwrap_or_default(),
            object_store,
        })
    }
}

/// `{key: value}` as string pairs: str values as they are, bools as `true`/`false`, other
/// values by `str()` (so `{"allow_http": True, "coalesce_gap": 8192}` works).
fn option_pairs(options: &Bound<'_, PyDict>) -> PyResult<Vec<(String, String)>> {
    options
        .iter()
        .map(|(key, value)| {
            let key: String = key.extract()?;
            let value = if value.is_instance_of::<PyBool>() {
                if value.is_truthy()? { "true" } else { "false" }.to_string()
            } else {
                value.str()?.to_string()
            };
            Ok((key, value))
        })
        .collect()
}

/// A JSON document handed to Python as dicts and lists (`json.loads`).
pub(crate) struct Json(pub(crate) String);

impl<'py> IntoPyObject<'py> for Json {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("json")?.call_method1("loads", (self.0,))
    }
}
