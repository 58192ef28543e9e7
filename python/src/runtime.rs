//! The one tokio runtime every call runs on, shared by blocking calls (any Python thread,
//! the GIL released while waiting) and coroutines (any asyncio event loop, any thread).
//!
//! A coroutine is an `asyncio.Future` of the calling loop: the work runs on the runtime, and
//! its outcome is handed to the loop with `loop.call_soon_threadsafe`. Tasks are counted
//! until they have left Python, and an `atexit` hook waits for them, so no runtime thread
//! touches the interpreter while it shuts down.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use pyo3::prelude::*;

use crate::errors::to_py_err;

static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// The shared runtime, built on first use (so `import lakeseek` starts no thread).
pub(crate) fn runtime() -> &'static tokio::runtime::Runtime {
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("lakeseek")
            .build()
            .unwrap_or_else(|e| panic!("cannot start the lakeseek runtime: {e}"))
    })
}

/// Run `future` to completion with the GIL released; errors become Python exceptions.
pub(crate) fn block_on<F, T>(py: Python<'_>, future: F) -> PyResult<T>
where
    F: Future<Output = lakeseek::Result<T>> + Send,
    T: Send,
{
    py.detach(|| runtime().block_on(future)).map_err(to_py_err)
}

/// Counts a task until it is dropped (after its last touch of Python).
struct InFlight;

impl InFlight {
    fn start() -> Self {
        IN_FLIGHT.fetch_add(1, Ordering::SeqCst);
        InFlight
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Run `future` on the shared runtime; return an `asyncio.Future` of the running loop that
/// resolves to its output (or raises its error). Cancelling the asyncio future discards the
/// outcome.
pub(crate) fn spawn_awaitable<'py, F, T>(py: Python<'py>, future: F) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = lakeseek::Result<T>> + Send + 'static,
    T: for<'a> IntoPyObject<'a> + Send + 'static,
{
    let event_loop = py.import("asyncio")?.call_method0("get_running_loop")?;
    let awaitable = event_loop.call_method0("create_future")?;
    let (loop_ref, future_ref) = (event_loop.unbind(), awaitable.clone().unbind());
    let guard = InFlight::start();
    runtime().spawn(async move {
        let outcome = future.await;
        Python::attach(|py| {
            let (ok, value) = match outcome.map_err(to_py_err).and_then(|v| into_py(py, v)) {
                Ok(value) => (true, value),
                Err(err) => (false, err.into_value(py).into_any()),
            };
            let resolve = wrap_pyfunction!(resolve, py);
            // A closed loop cannot take the result: nobody awaits it any more.
            if let Ok(resolve) = resolve {
                let args = (resolve, future_ref, ok, value);
                let _ = loop_ref.bind(py).call_method1("call_soon_threadsafe", args);
            }
            drop(loop_ref);
        });
        drop(guard);
    });
    Ok(awaitable)
}

fn into_py<T: for<'a> IntoPyObject<'a>>(py: Python<'_>, value: T) -> PyResult<Py<PyAny>> {
    use pyo3::IntoPyObjectExt;
    value.into_py_any(py)
}

/// Called on the event loop: set the outcome unless the future was cancelled meanwhile.
#[pyfunction]
fn resolve(future: &Bound<'_, PyAny>, ok: bool, value: &Bound<'_, PyAny>) -> PyResult<()> {
    if future.call_method0("done")?.is_truthy()? {
        return Ok(());
    }
    let method = if ok { "set_result" } else { "set_exception" };
    future.call_method1(method, (value,))?;
    Ok(())
}

/// Wait (the GIL released) until no task is still running, at most `timeout` seconds;
/// registered with `atexit` so interpreter shutdown never races a runtime thread. Returns
/// the tasks still running.
#[pyfunction]
#[pyo3(signature = (timeout=5.0))]
pub(crate) fn wait_for_tasks(py: Python<'_>, timeout: f64) -> usize {
    let deadline = Instant::now() + Duration::from_secs_f64(timeout.max(0.0));
    py.detach(|| {
        while IN_FLIGHT.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    IN_FLIGHT.load(Ordering::SeqCst)
}
