//! The one tokio runtime every call runs on, shared by blocking calls (any Python thread,
//! the GIL released while waiting) and coroutines (any asyncio event loop, any thread).

use std::future::Future;

use pyo3::prelude::*;

use crate::errors::to_py_err;

/// The shared runtime (pyo3-async-runtimes' global one: built on first use, so `import
/// lakeseek` starts no thread).
pub(crate) fn runtime() -> &'static tokio::runtime::Runtime {
    pyo3_async_runtimes::tokio::get_runtime()
}

/// Configure the shared runtime's threads before its first use (module import).
pub(crate) fn configure() {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all().thread_name("lakeseek");
    pyo3_async_runtimes::tokio::init(builder);
}

/// Run `future` to completion with the GIL released; errors become Python exceptions.
pub(crate) fn block_on<F, T>(py: Python<'_>, future: F) -> PyResult<T>
where
    F: Future<Output = lakeseek::Result<T>> + Send,
    T: Send,
{
    py.detach(|| runtime().block_on(future)).map_err(to_py_err)
}

/// Run `future` on the shared runtime and return an asyncio awaitable of its output
/// (resolved on the calling event loop, from whatever thread finishes the work).
pub(crate) fn spawn_awaitable<'py, F, T>(py: Python<'py>, future: F) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = lakeseek::Result<T>> + Send + 'static,
    T: for<'a> IntoPyObject<'a> + Send + 'static,
{
    pyo3_async_runtimes::tokio::future_into_py(py, async move { future.await.map_err(to_py_err) })
}
