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
use crate::worker_errors::NamingChannelResolver;

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

/// Adds up the partitions of each task of one decoded scan and reports a task once, when
/// its last partition has ended.
pub(crate) struct TaskTally {
    reporter: TaskReporter,
    /// Partitions (fragment groups) of each task.
    partitions: Vec<usize>,
    /// Per task: partitions ended so far and their sum.
    ended: Mutex<HashMap<usize, (usize, TaskReport)>>,
}

impl TaskTally {
    /// A tally for tasks with these partition counts.
    pub(crate) fn new(reporter: TaskReporter, partitions: Vec<usize>) -> Self {
        Self {
            reporter,
            partitions,
            ended: Mutex::new(HashMap::new()),
        }
    }

    /// A partition of `part.task` ended having read `part`: report the task if it was the
    /// last.
    pub(crate) fn partition_ended(&self, part: TaskReport) {
        if let Some(whole) = self.add(part) {
            (self.reporter)(whole);
        }
    }

    /// Pure bookkeeping of [`Self::partition_ended`]: the task's sum once all are in.
    fn add(&self, part: TaskReport) -> Option<TaskReport> {
        let expected = self.partitions.get(part.task).copied().unwrap_or(1).max(1);
        let mut ended = self.ended.lock().expect("task tally lock");
        let entry = ended.entry(part.task).or_insert((
            0,
            TaskReport {
                task: part.task,
                rows: 0,
                requests: 0,
                bytes: 0,
            },
        ));
        entry.0 += 1;
        entry.1.rows += part.rows;
        entry.1.requests += part.requests;
        entry.1.bytes += part.bytes;
        if entry.0 < expected {
            return None;
        }
        ended.remove(&part.task).map(|(_, sum)| sum)
    }
}

impl std::fmt::Debug for TaskTally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TaskTally({:?})", self.partitions)
    }
}

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

    /// Open datasets in `session` (its caches and disk tier) instead of a default one.
    pub fn with_session(mut self, session: &Session) -> Self {
        self.session = session.clone();
        self
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
    channels: &NamingChannelResolver,
) -> SessionState {
    let codec = LakeseekCodec::new(Arc::clone(resolver)).with_reporter(reporter.clone());
    let builder = ctx.builder.with_distributed_user_codec(codec);
    // Reads from other workers (shuffles) name the worker in their errors too.
    let builder = builder.with_distributed_channel_resolver(channels.clone());
    let mut state = builder.build();
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
    let resolver = DatasetResolver::new(storage_options);
    serve_worker_with(listener, Arc::new(resolver), reporter).await
}

/// [`serve_worker`] with datasets opened by `resolver` (its storage options and session,
/// e.g. one with a disk tier: [`DatasetResolver::with_session`]).
pub async fn serve_worker_with(
    listener: tokio::net::TcpListener,
    resolver: Arc<DatasetResolver>,
    reporter: Option<TaskReporter>,
) -> Result<()> {
    let channels = NamingChannelResolver::default();
    let worker = Worker::from_session_builder(move |ctx: WorkerQueryContext| {
        let resolver = Arc::clone(&resolver);
        let reporter = reporter.clone();
        let channels = channels.clone();
        async move { Ok(worker_session(ctx, &resolver, &reporter, &channels)) }
    });
    let local: Option<SocketAddr> = listener.local_addr().ok();
    tonic::transport::Server::builder()
        .add_service(worker.into_worker_server())
        .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener))
        .await
        .map_err(|e| exec_datafusion_err!("lakeseek worker on {local:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(task: usize, rows: u64) -> TaskReport {
        TaskReport {
            task,
            rows,
            requests: rows / 10,
            bytes: rows * 8,
        }
    }

    #[test]
    fn a_task_is_reported_once_when_its_last_partition_ends() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let reporter: TaskReporter = Arc::new(move |r| sink.lock().unwrap().push(r));
        let tally = TaskTally::new(reporter, vec![3, 1]);
        tally.partition_ended(part(0, 100));
        tally.partition_ended(part(1, 50));
        tally.partition_ended(part(0, 200));
        assert_eq!(*seen.lock().unwrap(), vec![part(1, 50)]);
        tally.partition_ended(part(0, 300));
        let sum = TaskReport {
            task: 0,
            rows: 600,
            requests: 60,
            bytes: 4800,
        };
        assert_eq!(*seen.lock().unwrap(), vec![part(1, 50), sum]);
        // The same task run again (another query of the same plan) starts a new sum.
        for _ in 0..3 {
            tally.partition_ended(part(0, 1));
        }
        assert_eq!(seen.lock().unwrap().last().unwrap().rows, 3);
    }
}
