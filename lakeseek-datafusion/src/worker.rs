//! The worker side of distributed execution: datasets opened by URL and pinned version with
//! the worker's own storage options, a report line per task, and the gRPC server.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use datafusion::common::{exec_datafusion_err, Result};
use datafusion::execution::{FunctionRegistry, SessionState};
use datafusion_distributed::{DistributedExt, Worker, WorkerQueryContext};
use lakeseek::{Dataset, Session};

use crate::codec::LakeseekCodec;

/// What one task read, reported by a worker when the task's scan ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct TaskReport {
    /// Index of the task in its stage.
    pub task: usize,
    /// Rows the task's scan produced.
    pub rows: u64,
    /// Requests it sent.
    pub requests: u64,
    /// Bytes it received.
    pub bytes: u64,
}

/// Called with each finished task's report.
pub type TaskReporter = Arc<dyn Fn(TaskReport) + Send + Sync>;

/// Opens (once per URL and version) the datasets plans refer to, with the storage options
/// of the process it runs in; every dataset shares one [`Session`].
#[derive(Debug, Default)]
pub struct DatasetResolver {
    storage_options: Vec<(String, String)>,
    session: Session,
    opened: Mutex<HashMap<(String, u64), Dataset>>,
}

impl DatasetResolver {
    /// A resolver opening datasets with these storage options (credentials stay in this
    /// process: plans carry only the URL and version).
    pub fn new(storage_options: Vec<(String, String)>) -> Self {
        Self {
            storage_options,
            ..Self::default()
        }
    }

    /// The dataset at `url`, version `version`.
    pub(crate) async fn open(&self, url: &str, version: u64) -> Result<Dataset> {
        let key = (url.to_string(), version);
        if let Some(d) = self.opened.lock().expect("resolver lock").get(&key) {
            return Ok(d.clone());
        }
        let dataset = Dataset::builder(url)
            .storage_options(self.storage_options.clone())
            .session(&self.session)
            .version(version)
            .open()
            .await
            .map_err(|e| {
                exec_datafusion_err!("lakeseek worker: cannot open {url} at version {version}: {e}")
            })?;
        let mut opened = self.opened.lock().expect("resolver lock");
        opened.insert(key, dataset.clone());
        Ok(dataset)
    }
}

/// The session a worker runs each task in: lakeseek's codec (datasets opened by `resolver`,
/// task reports to `reporter`) and the `any_element` UDF.
fn worker_session(
    ctx: WorkerQueryContext,
    resolver: &Arc<DatasetResolver>,
    reporter: &Option<TaskReporter>,
) -> SessionState {
    let codec = LakeseekCodec::new(Arc::clone(resolver)).with_reporter(reporter.clone());
    let mut state = ctx.builder.with_distributed_user_codec(codec).build();
    let _ = state.register_udf(Arc::new(crate::any_element_udf()));
    state
}

/// Serve distributed tasks on `listener` until the future is dropped: datasets are opened
/// with `storage_options` (and the environment), and every task's [`TaskReport`] is passed
/// to `reporter`.
pub async fn serve_worker(
    listener: tokio::net::TcpListener,
    storage_options: Vec<(String, String)>,
    reporter: Option<TaskReporter>,
) -> Result<()> {
    let resolver = Arc::new(DatasetResolver::new(storage_options));
    let worker = Worker::from_session_builder(move |ctx: WorkerQueryContext| {
        let resolver = Arc::clone(&resolver);
        let reporter = reporter.clone();
        async move { Ok(worker_session(ctx, &resolver, &reporter)) }
    });
    let local: Option<SocketAddr> = listener.local_addr().ok();
    tonic::transport::Server::builder()
        .add_service(worker.into_worker_server())
        .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener))
        .await
        .map_err(|e| exec_datafusion_err!("lakeseek worker on {local:?}: {e}"))
}
