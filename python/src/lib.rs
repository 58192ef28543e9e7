//! `lakeseek._lakeseek`: the native module of the `lakeseek` Python package (pyo3), a thin
//! layer over the public API of the `lakeseek` crate. Results leave as Arrow through the
//! Arrow PyCapsule interface; every call runs on one shared tokio runtime, blocking calls
//! with the GIL released, `*_async` calls as asyncio awaitables.

mod arrow_out;
mod blob;
mod dataset;
mod ecp;
mod errors;
mod file;
mod input;
mod open;
mod queries;
mod runtime;
mod session;

use pyo3::prelude::*;

/// The native module.
#[pymodule]
fn _lakeseek(module: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(module)?;
    module.add_class::<session::Session>()?;
    module.add_class::<session::IoStats>()?;
    module.add_class::<session::ObjectStore>()?;
    module.add_class::<dataset::Dataset>()?;
    module.add_class::<blob::BlobHandle>()?;
    module.add_class::<file::LanceFile>()?;
    module.add_class::<ecp::EcpIndex>()?;
    module.add_class::<ecp::EcpSearch>()?;
    module.add_class::<ecp::SearchResult>()?;
    module.add_class::<arrow_out::Table>()?;
    module.add_class::<arrow_out::RowAddresses>()?;
    module.add_class::<arrow_out::Schema>()?;
    module.add_function(wrap_pyfunction!(runtime::wait_for_tasks, module)?)?;
    module.add_function(wrap_pyfunction!(session::sample_store, module)?)?;
    module.add_function(wrap_pyfunction!(session::sample_data_file_url, module)?)?;
    module.add("SAMPLE_DATASET_URL", lakeseek::sample::DATASET_URL)?;
    module.add("SAMPLE_ECP_INDEX_URL", lakeseek::sample::ECP_INDEX_URL)?;
    module.add("DEFAULT_SESSION_BUDGET", lakeseek::DEFAULT_SESSION_BUDGET)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
