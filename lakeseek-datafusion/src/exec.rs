//! The leaf `ExecutionPlan` of a [`crate::LakeseekTable`] scan: groups of fragments with
//! the row addresses to take (or a residual lakeseek filter to evaluate on them), read with
//! lakeseek's own takes through lakeseek's own store.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::stats::Precision;
use datafusion::common::{exec_datafusion_err, Result, Statistics};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, Partitioning};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use datafusion_distributed::DistributedTaskContext;
use futures::{StreamExt, TryStreamExt};
use lakeseek::{Dataset, IoStats};

use crate::filter::ROW_ADDRESS_COLUMN;
use crate::worker::{DatasetResolver, TaskReport, TaskTally};

/// Rows per take (and per output batch) of given or filtered row addresses.
pub(crate) const BATCH_ROWS: usize = 8192;

/// Rows per take of a full scan: whole pages, in few large reads.
pub(crate) const SCAN_BATCH_ROWS: usize = 65_536;

/// Takes of one partition in flight at once: a scan's next batches are read while the
/// consumer works on the current one, so a many-batch scan costs about batches / this
/// many round trips rather than one per batch.
pub(crate) const READ_AHEAD_TAKES: usize = 16;

/// Fragments read by one partition, with the row addresses to take from them (`None`:
/// every row, or the rows the residual filter selects).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FragmentGroup {
    /// Fragment ids.
    pub(crate) fragments: Vec<u64>,
    /// Row addresses (ascending) in those fragments.
    pub(crate) rows: Option<Vec<u64>>,
    /// Rows the group yields, when known before reading.
    pub(crate) known_rows: Option<u64>,
}

impl FragmentGroup {
    /// One group holding every group of `groups`.
    pub(crate) fn merge(groups: &[FragmentGroup]) -> FragmentGroup {
        let rows = groups.iter().all(|g| g.rows.is_some()).then(|| {
            let mut all: Vec<u64> = groups
                .iter()
                .flat_map(|g| g.rows.clone().unwrap_or_default())
                .collect();
            all.sort_unstable();
            all
        });
        let known_rows = groups.iter().map(|g| g.known_rows).sum();
        FragmentGroup {
            fragments: groups.iter().flat_map(|g| g.fragments.clone()).collect(),
            rows,
            known_rows,
        }
    }
}

/// What a scan reads: serialized by the codec for workers (never credentials: workers open
/// the dataset with their own storage options and environment).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ScanSpec {
    /// Dataset URL.
    pub(crate) url: String,
    /// Pinned manifest version.
    pub(crate) version: u64,
    /// Output schema (projected dataset columns, then `_rowaddr` when projected).
    pub(crate) schema: SchemaRef,
    /// Residual lakeseek filter every group evaluates on its fragments.
    pub(crate) residual: Option<lakeseek::FilterExpr>,
    /// Rows to stop after (every filter was answered exactly).
    pub(crate) limit: Option<usize>,
    /// `tasks[t][p]`: partition `p` of distributed task `t` (one task when not distributed).
    pub(crate) tasks: Vec<Vec<FragmentGroup>>,
}

impl ScanSpec {
    /// Dataset columns of the output (and `_rowid`), in order: what the takes read.
    pub(crate) fn dataset_columns(&self) -> Vec<String> {
        self.schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .filter(|n| n != ROW_ADDRESS_COLUMN)
            .collect()
    }

    fn partitions(&self) -> usize {
        self.tasks.iter().map(Vec::len).max().unwrap_or(0).max(1)
    }
}

/// Where the scan's dataset comes from: the coordinator's open handle, or opened by a
/// worker from the URL and version.
#[derive(Clone)]
pub(crate) enum ScanSource {
    /// The dataset the table was built on.
    Open(Box<Dataset>),
    /// Opened (and cached) by the worker; each task is reported once, through the tally.
    Resolver(Arc<DatasetResolver>, Option<Arc<TaskTally>>),
}

impl fmt::Debug for ScanSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScanSource::Open(d) => write!(f, "Open({})", d.url()),
            ScanSource::Resolver(..) => write!(f, "Resolver"),
        }
    }
}

/// The leaf plan of a lakeseek table scan.
#[derive(Debug, Clone)]
pub struct LakeseekScanExec {
    pub(crate) spec: ScanSpec,
    pub(crate) source: ScanSource,
    properties: Arc<PlanProperties>,
}

impl LakeseekScanExec {
    pub(crate) fn new(spec: ScanSpec, source: ScanSource) -> Self {
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(Arc::clone(&spec.schema)),
            Partitioning::UnknownPartitioning(spec.partitions()),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        Self {
            spec,
            source,
            properties,
        }
    }

    /// Every partition's group, whatever the task split.
    pub(crate) fn all_groups(&self) -> Vec<FragmentGroup> {
        self.spec.tasks.iter().flatten().cloned().collect()
    }

    /// Rows the scan yields when known before reading.
    pub(crate) fn known_rows(&self) -> Option<u64> {
        let rows: Option<u64> = self.all_groups().iter().map(|g| g.known_rows).sum();
        match (rows, self.spec.limit) {
            (Some(r), Some(l)) => Some(r.min(l as u64)),
            (r, _) => r,
        }
    }

    /// The same scan split into `task_count` tasks of one partition each (contiguous runs
    /// of groups).
    pub(crate) fn split_into_tasks(&self, task_count: usize) -> LakeseekScanExec {
        let groups = self.all_groups();
        let task_count = task_count.clamp(1, groups.len().max(1));
        let per_task = groups.len().div_ceil(task_count).max(1);
        let tasks: Vec<Vec<FragmentGroup>> = groups
            .chunks(per_task)
            .map(|chunk| vec![FragmentGroup::merge(chunk)])
            .collect();
        let mut spec = self.spec.clone();
        spec.tasks = if tasks.is_empty() {
            vec![vec![]]
        } else {
            tasks
        };
        LakeseekScanExec::new(spec, self.source.clone())
    }
}

impl DisplayAs for LakeseekScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let groups = self.all_groups();
        let fragments: usize = groups.iter().map(|g| g.fragments.len()).sum();
        let taken: Option<usize> = groups.iter().map(|g| g.rows.as_ref().map(Vec::len)).sum();
        write!(
            f,
            "LakeseekScanExec: url={}, version={}, tasks={}, groups={}, fragments={fragments}, ",
            self.spec.url,
            self.spec.version,
            self.spec.tasks.len(),
            groups.len()
        )?;
        match (taken, &self.spec.residual) {
            (Some(n), _) => write!(f, "rows=take {n} row addresses (from the indices)")?,
            (None, Some(r)) => write!(f, "rows=residual filter {:?}", r.to_string())?,
            (None, None) => write!(f, "rows=full scan")?,
        }
        if let Some(l) = self.spec.limit {
            write!(f, ", limit={l}")?;
        }
        let columns = self.spec.schema.fields().iter().map(|f| f.name().as_str());
        write!(f, ", columns=[{}]", columns.collect::<Vec<_>>().join(", "))
    }
}

impl ExecutionPlan for LakeseekScanExec {
    fn name(&self) -> &str {
        "LakeseekScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn with_new_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let task = DistributedTaskContext::from_ctx(&context).task_index;
        let group = self
            .spec
            .tasks
            .get(task)
            .ok_or_else(|| exec_datafusion_err!("lakeseek scan: no task {task} in the plan"))?
            .get(partition)
            .cloned();
        let schema = Arc::clone(&self.spec.schema);
        let Some(group) = group else {
            return Ok(Box::pin(RecordBatchStreamAdapter::new(
                schema,
                futures::stream::empty(),
            )));
        };
        let spec = self.spec.clone();
        let source = self.source.clone();
        let stream =
            futures::stream::once(async move { read_group(spec, source, group, task).await })
                .try_flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)))
    }

    fn partition_statistics(&self, partition: Option<usize>) -> Result<Arc<Statistics>> {
        let mut stats = Statistics::new_unknown(&self.spec.schema);
        let rows = match partition {
            None => self.known_rows(),
            Some(p) if self.spec.tasks.len() == 1 => self.spec.tasks[0]
                .get(p)
                .and_then(|g| g.known_rows)
                .map(|r| self.spec.limit.map_or(r, |l| r.min(l as u64))),
            Some(_) => None,
        };
        if let Some(r) = rows.and_then(|r| usize::try_from(r).ok()) {
            stats.num_rows = Precision::Exact(r);
        }
        Ok(Arc::new(stats))
    }
}

/// The batches of one group: the row addresses (given, selected by the residual filter,
/// or every row), taken `BATCH_ROWS` (a full scan: `SCAN_BATCH_ROWS`) at a time.
async fn read_group(
    spec: ScanSpec,
    source: ScanSource,
    group: FragmentGroup,
    task: usize,
) -> Result<futures::stream::BoxStream<'static, Result<RecordBatch>>> {
    let stats = IoStats::new();
    let (dataset, reporter) = match &source {
        // The coordinator's reads count into the table's dataset handle.
        ScanSource::Open(d) => (Dataset::clone(d), None),
        ScanSource::Resolver(resolver, reporter) => (
            resolver
                .open(&spec.url, spec.version)
                .await?
                .with_stats(&stats),
            reporter.clone(),
        ),
    };
    let err = |e: lakeseek::Error| exec_datafusion_err!("lakeseek scan of {}: {e}", spec.url);
    let mut addresses = match (&group.rows, &spec.residual) {
        (Some(rows), _) => rows.clone(),
        (None, Some(filter)) => {
            let view = dataset.with_fragments(&group.fragments);
            let plan = view.plan_filter_expr(filter).await.map_err(err)?;
            let mut rows = view.execute_planned_filter(&plan).await.map_err(err)?;
            rows.retain(|a| group.fragments.contains(&(a >> 32)));
            rows
        }
        (None, None) => {
            let mut all = Vec::new();
            for f in dataset.fragments() {
                if group.fragments.contains(&f.id) {
                    all.extend((0..f.physical_rows).map(|o| (f.id << 32) | o));
                }
            }
            all
        }
    };
    if let Some(l) = spec.limit {
        addresses.truncate(l);
    }
    let columns = spec.dataset_columns();
    let schema = Arc::clone(&spec.schema);
    let full_scan = group.rows.is_none() && spec.residual.is_none();
    let batch_rows = if full_scan {
        SCAN_BATCH_ROWS
    } else {
        BATCH_ROWS
    };
    let chunks = take_chunks(&addresses, batch_rows);
    let url = spec.url.clone();
    let rows_seen = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counted = Arc::clone(&rows_seen);
    let batches = futures::stream::iter(chunks)
        .map(move |chunk| {
            let dataset = dataset.clone();
            let columns = columns.clone();
            let schema = Arc::clone(&schema);
            let url = url.clone();
            let counted = Arc::clone(&counted);
            async move {
                let names: Vec<&str> = columns.iter().map(String::as_str).collect();
                let batch = dataset
                    .take(&chunk, &names)
                    .await
                    .map_err(|e| exec_datafusion_err!("lakeseek take from {url}: {e}"))?;
                counted.fetch_add(
                    batch.num_rows() as u64,
                    std::sync::atomic::Ordering::Relaxed,
                );
                to_output(&schema, &batch)
            }
        })
        .buffered(READ_AHEAD_TAKES)
        // The partition's report, after its last batch. (A stream dropped before its end,
        // e.g. by a LIMIT satisfied upstream, sends none, and its task is not reported.)
        .chain(futures::stream::once(async move {
            if let Some(tally) = reporter {
                let cost = stats.snapshot();
                tally.partition_ended(TaskReport {
                    task,
                    rows: rows_seen.load(std::sync::atomic::Ordering::Relaxed),
                    requests: cost.requests,
                    bytes: cost.bytes,
                });
            }
            Ok(RecordBatch::new_empty(Arc::clone(&spec.schema)))
        }))
        .try_filter(|b| futures::future::ready(b.num_rows() > 0));
    Ok(batches.boxed())
}

/// `addresses` (ascending) in takes of at most `batch_rows`, never two fragments in one
/// take: takes in flight together then open different files, not the same page twice.
fn take_chunks(addresses: &[u64], batch_rows: usize) -> Vec<Vec<u64>> {
    addresses
        .chunk_by(|a, b| a >> 32 == b >> 32)
        .flat_map(|fragment| fragment.chunks(batch_rows))
        .map(<[u64]>::to_vec)
        .collect()
}

/// A take's batch (`_rowaddr` first, then the columns) as the scan's output schema.
pub(crate) fn to_output(schema: &SchemaRef, batch: &RecordBatch) -> Result<RecordBatch> {
    let columns: Vec<ArrayRef> = schema
        .fields()
        .iter()
        .map(|f| {
            batch.column_by_name(f.name()).cloned().ok_or_else(|| {
                exec_datafusion_err!("lakeseek take returned no column {:?}", f.name())
            })
        })
        .collect::<Result<_>>()?;
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(
        Arc::clone(schema),
        columns,
        &options,
    )?)
}

#[cfg(test)]
mod tests {
    use super::take_chunks;

    #[test]
    fn takes_never_span_two_fragments() {
        let f = |id: u64, o: u64| (id << 32) | o;
        let addresses = [f(0, 0), f(0, 1), f(0, 2), f(1, 0), f(1, 5), f(3, 9)];
        let chunks = take_chunks(&addresses, 2);
        assert_eq!(
            chunks,
            vec![
                vec![f(0, 0), f(0, 1)],
                vec![f(0, 2)],
                vec![f(1, 0), f(1, 5)],
                vec![f(3, 9)]
            ]
        );
        assert!(take_chunks(&[], 8).is_empty());
    }
}
