//! The leaf `ExecutionPlan` of the `nearest(..)` and `search(..)` table functions: one
//! lakeseek nearest-neighbour or full-text query, run when the plan executes (on the
//! coordinator, or on a worker that opened the dataset by URL and pinned version).

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, Float32Array, RecordBatch, UInt64Array};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::stats::Precision;
use datafusion::common::{exec_datafusion_err, DataFusionError, Result, Statistics};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, Partitioning};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use datafusion_distributed::DistributedTaskContext;
use lakeseek::{Dataset, IoStats, Nearest, Search, SearchOperator, DISTANCE_COLUMN};

use crate::exec::{to_output, ScanSource};
use crate::filter::ROW_ADDRESS_COLUMN;
use crate::worker::TaskReport;

/// Name of the BM25 score column of `search(..)`'s rows.
pub const SCORE_COLUMN: &str = "_score";

/// Which query a [`QuerySpec`] runs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum QueryKind {
    /// The rows nearest to this vector.
    Nearest(Vec<f32>),
    /// A full-text search for this text.
    Search(String),
}

/// One nearest-neighbour or full-text query: serialized by the codec for workers (never
/// credentials).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct QuerySpec {
    /// Dataset URL.
    pub(crate) url: String,
    /// Pinned manifest version.
    pub(crate) version: u64,
    /// Output schema (projected table columns, `_rowaddr`, `_distance` / `_score`).
    pub(crate) schema: SchemaRef,
    /// The vector or text column searched.
    pub(crate) column: String,
    /// The query.
    pub(crate) kind: QueryKind,
    /// Rows to return (`None`: the library's default).
    pub(crate) k: Option<u64>,
    /// Further options, `key=value` as written in SQL (validated when planned).
    pub(crate) options: Vec<(String, String)>,
}

impl QuerySpec {
    /// The function's name in SQL.
    pub(crate) fn function(&self) -> &'static str {
        match self.kind {
            QueryKind::Nearest(_) => "nearest",
            QueryKind::Search(_) => "search",
        }
    }

    /// Table columns of the output, in order (without the query's own columns).
    fn table_columns(&self) -> Vec<String> {
        self.schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .filter(|n| n != ROW_ADDRESS_COLUMN && n != DISTANCE_COLUMN && n != SCORE_COLUMN)
            .collect()
    }
}

fn option_error(function: &str, key: &str, value: &str, want: &str) -> DataFusionError {
    DataFusionError::Plan(format!(
        "{function}(..): option '{key}={value}' wants {want}"
    ))
}

fn parse<T: std::str::FromStr>(function: &str, key: &str, value: &str, want: &str) -> Result<T> {
    value
        .trim()
        .parse()
        .map_err(|_| option_error(function, key, value, want))
}

/// `n` with the `key=value` options of a `nearest(..)` call applied.
pub(crate) fn apply_nearest<'a>(
    mut n: Nearest<'a>,
    options: &[(String, String)],
) -> Result<Nearest<'a>> {
    let f = "nearest";
    let mut range: (Option<f32>, Option<f32>) = (None, None);
    for (key, value) in options {
        let count = |v: &str| parse::<usize>(f, key, v, "a whole number");
        let flag = |v: &str| parse::<bool>(f, key, v, "true or false");
        let number = |v: &str| parse::<f32>(f, key, v, "a number");
        n = match key.as_str() {
            "k" => n.k(count(value)?),
            "nprobes" => n.nprobes(count(value)?),
            "minimum_nprobes" => n.minimum_nprobes(count(value)?),
            "maximum_nprobes" => n.maximum_nprobes(count(value)?),
            "refine" | "refine_factor" => n.refine(parse(f, key, value, "a whole number")?),
            "ef" => n.ef(parse(f, key, value, "a whole number")?),
            "filter" => n.filter(value),
            "prefilter" => n.postfilter(!flag(value)?),
            "fast_search" => n.fast_search(flag(value)?),
            "use_index" => n.use_index(flag(value)?),
            "allow_scan" => n.allow_scan(flag(value)?),
            "metric" => n
                .metric(value.trim())
                .map_err(|e| option_error(f, key, value, &e.to_string()))?,
            "distance_lower" => {
                range.0 = Some(number(value)?);
                n
            }
            "distance_upper" => {
                range.1 = Some(number(value)?);
                n
            }
            _ => {
                return Err(DataFusionError::Plan(format!(
                    "nearest(..): unknown option {key:?} (known: k, nprobes, minimum_nprobes, \
                     maximum_nprobes, refine_factor, ef, filter, prefilter, fast_search, \
                     use_index, allow_scan, metric, distance_lower, distance_upper)"
                )))
            }
        };
    }
    if range != (None, None) {
        n = n.distance_range(range.0, range.1);
    }
    Ok(n)
}

/// `s` with the `key=value` options of a `search(..)` call applied.
pub(crate) fn apply_search<'a>(
    mut s: Search<'a>,
    options: &[(String, String)],
) -> Result<Search<'a>> {
    let f = "search";
    for (key, value) in options {
        let flag = |v: &str| parse::<bool>(f, key, v, "true or false");
        s = match key.as_str() {
            "k" => s.k(parse(f, key, value, "a whole number")?),
            "operator" => match value.trim().to_ascii_lowercase().as_str() {
                "or" => s.operator(SearchOperator::Or),
                "and" => s.operator(SearchOperator::And),
                _ => return Err(option_error(f, key, value, "'or' or 'and'")),
            },
            "filter" => s.filter(value),
            "index_only" => s.index_only(flag(value)?),
            "allow_scan" => s.allow_scan(flag(value)?),
            _ => {
                return Err(DataFusionError::Plan(format!(
                    "search(..): unknown option {key:?} (known: k, operator, filter, \
                     index_only, allow_scan)"
                )))
            }
        };
    }
    Ok(s)
}

/// The leaf plan of a `nearest(..)` or `search(..)` call: one partition, rows best first.
#[derive(Debug, Clone)]
pub struct LakeseekQueryExec {
    pub(crate) spec: QuerySpec,
    pub(crate) source: ScanSource,
    properties: Arc<PlanProperties>,
}

impl LakeseekQueryExec {
    pub(crate) fn new(spec: QuerySpec, source: ScanSource) -> Self {
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(Arc::clone(&spec.schema)),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Final,
            Boundedness::Bounded,
        ));
        Self {
            spec,
            source,
            properties,
        }
    }
}

impl DisplayAs for LakeseekQueryExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.spec;
        write!(
            f,
            "LakeseekQueryExec: {}, url={}, version={}, column={}",
            s.function(),
            s.url,
            s.version,
            s.column
        )?;
        match &s.kind {
            QueryKind::Nearest(v) => write!(f, ", vector=[{} dims]", v.len())?,
            QueryKind::Search(t) => write!(f, ", text={t:?}")?,
        }
        if let Some(k) = s.k {
            write!(f, ", k={k}")?;
        }
        for (key, value) in &s.options {
            write!(f, ", {key}={value:?}")?;
        }
        let columns = s.schema.fields().iter().map(|f| f.name().as_str());
        write!(f, ", columns=[{}]", columns.collect::<Vec<_>>().join(", "))
    }
}

impl ExecutionPlan for LakeseekQueryExec {
    fn name(&self) -> &str {
        "LakeseekQueryExec"
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
        let schema = Arc::clone(&self.spec.schema);
        let task = DistributedTaskContext::from_ctx(&context).task_index;
        if partition > 0 || task > 0 {
            // One query, answered by the first partition of the first task only.
            return Ok(Box::pin(RecordBatchStreamAdapter::new(
                schema,
                futures::stream::empty(),
            )));
        }
        let spec = self.spec.clone();
        let source = self.source.clone();
        let stream = futures::stream::once(async move { run(&spec, &source).await });
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)))
    }

    fn partition_statistics(&self, partition: Option<usize>) -> Result<Arc<Statistics>> {
        let mut stats = Statistics::new_unknown(&self.spec.schema);
        // At most k rows (a nearest query: 10 unless asked), so joins build on this side.
        let k = match (&self.spec.kind, self.spec.k) {
            (_, Some(k)) => Some(k),
            (QueryKind::Nearest(_), None) => Some(DEFAULT_NEAREST_K),
            (QueryKind::Search(_), None) => None,
        };
        if let Some(k) = k.and_then(|k| usize::try_from(k).ok()) {
            stats.num_rows = match partition {
                None | Some(0) => Precision::Inexact(k),
                Some(_) => Precision::Exact(0),
            };
        }
        Ok(Arc::new(stats))
    }
}

/// Rows of a nearest query that sets no `k` (the library's default).
const DEFAULT_NEAREST_K: u64 = 10;

/// Run the query: its rows as the spec's output schema.
async fn run(spec: &QuerySpec, source: &ScanSource) -> Result<RecordBatch> {
    let stats = IoStats::new();
    let (dataset, reporter) = match source {
        ScanSource::Open(d) => (Dataset::clone(d), None),
        ScanSource::Resolver(resolver, reporter) => (
            resolver
                .open(&spec.url, spec.version)
                .await?
                .with_stats(&stats),
            reporter.clone(),
        ),
    };
    let columns = spec.table_columns();
    let names: Vec<&str> = columns.iter().map(String::as_str).collect();
    let err = |e: lakeseek::Error| {
        let text = e.to_string();
        let hint = if text.contains("allow_scan") || text.contains("allow a scan") {
            " (in SQL: the option 'allow_scan=true')"
        } else {
            ""
        };
        exec_datafusion_err!("{}(..) on {}: {text}{hint}", spec.function(), spec.url)
    };
    let batch = match &spec.kind {
        QueryKind::Nearest(vector) => {
            let mut n = dataset.nearest(&spec.column, vector);
            if let Some(k) = spec.k {
                n = n.k(k as usize);
            }
            let n = apply_nearest(n, &spec.options)?.columns(&names);
            n.execute().await.map_err(err)?
        }
        QueryKind::Search(text) => {
            let mut s = dataset.search(text).column(&spec.column);
            if let Some(k) = spec.k {
                s = s.k(k as usize);
            }
            let s = apply_search(s, &spec.options)?.columns(&names);
            let found = s.execute().await.map_err(err)?;
            search_batch(found)?
        }
    };
    let out = to_output(&spec.schema, &batch)?;
    if let Some(tally) = reporter {
        let cost = stats.snapshot();
        tally.partition_ended(TaskReport {
            task: 0,
            rows: out.num_rows() as u64,
            requests: cost.requests,
            bytes: cost.bytes,
        });
    }
    Ok(out)
}

/// A search's answer as one batch: `_rowaddr`, `_score`, then the asked columns.
fn search_batch(found: lakeseek::SearchResult) -> Result<RecordBatch> {
    let mut fields = vec![
        datafusion::arrow::datatypes::Field::new(
            ROW_ADDRESS_COLUMN,
            datafusion::arrow::datatypes::DataType::UInt64,
            false,
        ),
        datafusion::arrow::datatypes::Field::new(
            SCORE_COLUMN,
            datafusion::arrow::datatypes::DataType::Float32,
            false,
        ),
    ];
    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(UInt64Array::from(found.row_addresses.clone())),
        Arc::new(Float32Array::from(found.scores.clone())),
    ];
    if let Some(batch) = &found.batch {
        if batch.num_rows() != found.row_addresses.len() {
            return Err(exec_datafusion_err!(
                "search(..): {} rows of columns for {} matches",
                batch.num_rows(),
                found.row_addresses.len()
            ));
        }
        for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
            if field.name() != ROW_ADDRESS_COLUMN {
                fields.push(field.as_ref().clone());
                columns.push(Arc::clone(column));
            }
        }
    }
    let schema = Arc::new(datafusion::arrow::datatypes::Schema::new(fields));
    Ok(RecordBatch::try_new(schema, columns)?)
}
