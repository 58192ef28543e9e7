//! `lakeseek bench nearest`: nearest-neighbour queries on a dataset's vector column, as
//! `lakeseek query --nearest` answers them ([`Dataset::nearest`]).
//!
//! The query vectors come from `--queries-file q.npy` (float32/float64/float16, shape
//! `(n, d)`; the first `--warmup` rows are the warm-ups, then operation `i` runs row
//! `warmup + i`, cycling) or, without one, from random rows of the vector column (seeded,
//! read in a session of their own so they warm nothing). `--ground-truth FILE` (one line
//! per row of the queries file: the exact nearest row addresses, nearest first, separated
//! by commas or spaces) adds recall@k per operation to the report. Cold operation: fresh
//! session, open (manifest) + query; warm: one open dataset and session. Every session has
//! `--budget-bytes` (default the library's 256 MiB; the vector index cache is 6/64ths of
//! it); `--prewarm` loads the indices into the warm session before measuring.

use std::path::{Path, PathBuf};
use std::time::Instant;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, UInt64Type};
use arrow_array::{Array, FixedSizeListArray};
use arrow_schema::DataType;

use crate::bench::report::{BenchReport, BenchSettings, OperationRecord, PhaseRecord};
use crate::bench::take::{add, open_bench_dataset, open_dataset, row_addresses};
use crate::bench::{drive_operations, elapsed_ms, random_rows, BenchStore, CommonBenchArgs};
use crate::ecp::parse_npy;
use crate::{Dataset, Error, IoStats, IoStatsSnapshot, Result, Session};

/// `lakeseek bench nearest`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct NearestBenchArgs {
    /// Dataset URL or path.
    pub(crate) dataset: String,
    /// The vector column searched (it needs a vector index unless `--allow-scan`).
    #[arg(long)]
    pub(crate) column: String,
    /// Query vectors, a `.npy` file of shape (n, d); without it, random rows of the column.
    #[arg(long = "queries-file", value_name = "FILE")]
    pub(crate) queries_file: Option<PathBuf>,
    /// The exact answers of the queries file (one line per query: row addresses, nearest
    /// first): adds recall@k to the report.
    #[arg(long = "ground-truth", value_name = "FILE", requires = "queries_file")]
    pub(crate) ground_truth: Option<PathBuf>,
    /// Queries to measure.
    #[arg(long, default_value_t = 200)]
    pub(crate) queries: u64,
    /// Rows per query.
    #[arg(short = 'k', long = "k", default_value_t = 10)]
    pub(crate) k: usize,
    /// IVF partitions probed per index segment.
    #[arg(long, default_value_t = 20)]
    pub(crate) nprobes: usize,
    /// Re-rank k * R candidates with exact distances read from the data.
    #[arg(long)]
    pub(crate) refine: Option<u32>,
    /// HNSW ef.
    #[arg(long)]
    pub(crate) ef: Option<u32>,
    /// A filter applied before the search.
    #[arg(long)]
    pub(crate) filter: Option<String>,
    /// Dataset version (default: latest).
    #[arg(long)]
    pub(crate) version: Option<u64>,
    /// Search exactly (scan) when the column has no usable vector index.
    #[arg(long)]
    pub(crate) allow_scan: bool,
    /// The memory budget of each session the benchmark opens (every cache's share of it:
    /// decoded vector index partitions get 6/64ths); default the library's default session
    /// budget, 256 MiB. pylance's index cache holds up to 6 GiB by default.
    #[arg(long = "budget-bytes", value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) budget_bytes: Option<u64>,
    /// Before measuring, prewarm the dataset's indices into the shared session (a vector
    /// index: centroids, codebook and the partitions that fit its cache share; not
    /// measured, counted in the setup). Warm mode only.
    #[arg(long, requires = "warm")]
    pub(crate) prewarm: bool,
    /// Shared benchmark flags.
    #[command(flatten)]
    pub(crate) common: CommonBenchArgs,
}

/// Run the nearest benchmark and build its report (nothing printed).
pub(crate) async fn run_nearest_bench(args: &NearestBenchArgs) -> Result<BenchReport> {
    let common = &args.common;
    let setup = IoStats::new();
    let (store, mut shared) =
        open_bench_dataset(&args.dataset, args.version, common, args.queries, &setup).await?;
    if args.budget_bytes.is_some() {
        // The shared dataset again, in a session of the asked budget.
        shared = open_dataset(&store, args.version, &session_of(args), &setup).await?;
    }
    if args.prewarm {
        // Counted into `setup`, the shared dataset's stats handle.
        shared.prewarm().run().await?;
    }
    let set = QuerySet::new(&store, args, &setup).await?;
    let mut warmup_cost = IoStatsSnapshot::default();
    for j in 0..common.warmup {
        let record = nearest_once(&store, &shared, args, &set, set.warmup(j), j).await?;
        warmup_cost = add(warmup_cost, record.io());
    }
    let driven = drive_operations(args.queries, common.concurrency, common.keep_going, |i| {
        let (store, shared, set) = (&store, &shared, &set);
        async move {
            let pick = set.operation(common.warmup, i);
            nearest_once(store, shared, args, set, pick, i).await
        }
    })
    .await?;
    Ok(BenchReport::new(
        settings(args, &store, &set),
        args.queries,
        driven.records,
        driven.interrupted,
        driven.wall_seconds,
        add(setup.snapshot(), warmup_cost),
    )
    .with_errors(driven.errors, driven.error_messages))
}

fn settings(args: &NearestBenchArgs, store: &BenchStore, set: &QuerySet) -> BenchSettings {
    let common = &args.common;
    BenchSettings {
        filter_template: args.filter.clone(),
        search_column: Some(args.column.clone()),
        queries_from: Some(set.origin.clone()),
        k: Some(args.k),
        nprobes: Some(args.nprobes),
        refine: args.refine,
        ef: args.ef,
        budget_bytes: Some(args.budget_bytes.unwrap_or(crate::DEFAULT_SESSION_BUDGET)),
        prewarm: args.prewarm,
        ..common.settings("nearest", &args.dataset, store, "dataset")
    }
}

/// The query vectors (and their exact answers, if given).
#[derive(Debug)]
struct QuerySet {
    vectors: Vec<Vec<f32>>,
    truth: Option<Vec<Vec<u64>>>,
    /// Where the vectors came from, for the report.
    origin: String,
}

impl QuerySet {
    async fn new(store: &BenchStore, args: &NearestBenchArgs, setup: &IoStats) -> Result<Self> {
        let (vectors, origin) = match &args.queries_file {
            Some(path) => (read_queries(path)?, path.display().to_string()),
            None => (
                sample_vectors(store, args, setup).await?,
                format!("random rows of {} (seed {})", args.column, args.common.seed),
            ),
        };
        if (vectors.len() as u64) <= args.common.warmup && args.common.warmup > 0 {
            return Err(Error::InvalidArgument(format!(
                "{} query vectors, need more than --warmup {}",
                vectors.len(),
                args.common.warmup
            )));
        }
        let truth = match &args.ground_truth {
            Some(path) => Some(read_ground_truth(path, vectors.len())?),
            None => None,
        };
        Ok(Self {
            vectors,
            truth,
            origin,
        })
    }

    /// The vector row warm-up `j` runs.
    fn warmup(&self, j: u64) -> usize {
        (j as usize) % self.vectors.len()
    }

    /// The vector row operation `i` runs: after the warm-ups, cycling over the rest.
    fn operation(&self, warmup: u64, i: u64) -> usize {
        let skip = (warmup as usize).min(self.vectors.len() - 1);
        skip + (i as usize) % (self.vectors.len() - skip)
    }

    /// Recall@k of `found` for query row `pick` (`None` without ground truth).
    fn recall(&self, pick: usize, found: &[u64], k: usize) -> Option<f64> {
        let truth = self.truth.as_ref()?.get(pick)?;
        Some(recall_at_k(found, truth, k))
    }
}

/// |found ∩ the first k of truth| / min(k, |truth|) (1 when there is nothing to find).
pub(crate) fn recall_at_k(found: &[u64], truth: &[u64], k: usize) -> f64 {
    let wanted: std::collections::HashSet<u64> = truth.iter().take(k).copied().collect();
    if wanted.is_empty() {
        return 1.0;
    }
    let hits = found.iter().take(k).filter(|a| wanted.contains(a)).count();
    hits as f64 / wanted.len() as f64
}

/// The rows of a `.npy` queries file.
fn read_queries(path: &Path) -> Result<Vec<Vec<f32>>> {
    let bytes = std::fs::read(path)
        .map_err(|e| Error::InvalidArgument(format!("--queries-file {}: {e}", path.display())))?;
    let rows = parse_npy(&bytes)?;
    if rows.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "--queries-file {} holds no vectors",
            path.display()
        )));
    }
    Ok(rows)
}

/// Ground truth: one line per query vector, row addresses separated by commas or spaces.
pub(crate) fn parse_ground_truth(
    text: &str,
    origin: &str,
    queries: usize,
) -> Result<Vec<Vec<u64>>> {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.len() < queries {
        return Err(Error::InvalidArgument(format!(
            "--ground-truth {origin}: {} lines for {queries} query vectors",
            lines.len()
        )));
    }
    lines
        .iter()
        .enumerate()
        .map(|(n, line)| {
            line.split(|c: char| c == ',' || c.is_whitespace())
                .filter(|t| !t.is_empty())
                .map(|t| {
                    t.parse::<u64>().map_err(|_| {
                        Error::InvalidArgument(format!(
                            "--ground-truth {origin} line {}: {t:?} is not a row address",
                            n + 1
                        ))
                    })
                })
                .collect()
        })
        .collect()
}

fn read_ground_truth(path: &Path, queries: usize) -> Result<Vec<Vec<u64>>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::InvalidArgument(format!("--ground-truth {}: {e}", path.display())))?;
    parse_ground_truth(&text, &path.display().to_string(), queries)
}

/// Vectors of `warmup + queries` random rows of the column (fewer if the dataset is small).
async fn sample_vectors(
    store: &BenchStore,
    args: &NearestBenchArgs,
    setup: &IoStats,
) -> Result<Vec<Vec<f32>>> {
    // A session of its own: sampling must not warm the measured operations' caches.
    let dataset = open_dataset(store, args.version, &Session::default(), setup).await?;
    let fragments: Vec<(u64, u64)> = dataset
        .fragments()
        .iter()
        .map(|f| (f.id, f.physical_rows))
        .collect();
    let total: u64 = fragments.iter().map(|(_, n)| n).sum();
    let wanted = (args.queries + args.common.warmup).min(total);
    if wanted == 0 {
        return Err(Error::InvalidArgument(format!(
            "{} has no rows to take query vectors from",
            args.dataset
        )));
    }
    let rows = random_rows(args.common.seed, wanted, total)?;
    let addresses = row_addresses(&rows, &fragments);
    let batch = dataset.take(&addresses, &[args.column.as_str()]).await?;
    let vectors = vectors_of(batch.column(1).as_ref(), &args.column)?;
    if vectors.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "the {} sampled rows of {:?} are all null or deleted",
            rows.len(),
            args.column
        )));
    }
    Ok(vectors)
}

/// The non-null rows of a fixed-size-list float column as f32 vectors.
pub(crate) fn vectors_of(array: &dyn Array, column: &str) -> Result<Vec<Vec<f32>>> {
    let list = array
        .as_any()
        .downcast_ref::<FixedSizeListArray>()
        .ok_or_else(|| {
            Error::InvalidArgument(format!(
                "column {column:?} has type {}, not a vector (fixed-size list of floats)",
                array.data_type()
            ))
        })?;
    let values = arrow_cast::cast(list.values(), &DataType::Float32).map_err(|_| {
        Error::InvalidArgument(format!(
            "column {column:?} has type {}, not a vector of floats",
            list.data_type()
        ))
    })?;
    let values = values.as_primitive::<Float32Type>();
    let dim = list.value_length() as usize;
    Ok((0..list.len())
        .filter(|&i| list.is_valid(i))
        .map(|i| values.values()[i * dim..(i + 1) * dim].to_vec())
        .filter(|v: &Vec<f32>| v.iter().all(|x| x.is_finite()))
        .collect())
}

/// A fresh session of the benchmark's budget.
fn session_of(args: &NearestBenchArgs) -> Session {
    args.budget_bytes
        .map_or_else(Session::default, Session::with_budget)
}

/// One nearest query (cold: open included) with query vector row `pick`.
async fn nearest_once(
    store: &BenchStore,
    shared: &Dataset,
    args: &NearestBenchArgs,
    set: &QuerySet,
    pick: usize,
    index: u64,
) -> Result<OperationRecord> {
    let started = Instant::now();
    let open_stats = IoStats::new();
    let query_stats = IoStats::new();
    let mut open = None;
    let fresh;
    let dataset = if args.common.warm {
        shared
    } else {
        fresh = open_dataset(store, args.version, &session_of(args), &open_stats).await?;
        open = Some(PhaseRecord::new(elapsed_ms(started), open_stats.snapshot()));
        &fresh
    };
    let mut query = dataset
        .nearest(&args.column, &set.vectors[pick])
        .k(args.k)
        .nprobes(args.nprobes)
        .allow_scan(args.allow_scan)
        .stats(&query_stats);
    if let Some(r) = args.refine {
        query = query.refine(r);
    }
    if let Some(ef) = args.ef {
        query = query.ef(ef);
    }
    if let Some(f) = &args.filter {
        query = query.filter(f);
    }
    let batch = query.execute().await?;
    let latency_ms = elapsed_ms(started);
    let found: Vec<u64> = batch
        .column(0)
        .as_primitive::<UInt64Type>()
        .values()
        .to_vec();
    let total = add(open_stats.snapshot(), query_stats.snapshot());
    Ok(OperationRecord {
        index,
        latency_ms,
        requests: total.requests,
        bytes: total.bytes,
        round_trips: total.round_trips,
        rows: found.len() as u64,
        open,
        recall: set.recall(pick, &found, args.k),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recall_counts_the_true_neighbours_found() {
        assert_eq!(recall_at_k(&[1, 2, 3], &[3, 2, 1, 9], 3), 1.0);
        assert_eq!(recall_at_k(&[1, 5, 6, 7], &[1, 2, 3, 4], 4), 0.25);
        // Only the first k of the truth count, only the first k found count.
        assert_eq!(recall_at_k(&[4, 1], &[1, 2, 3, 4], 1), 0.0);
        assert_eq!(recall_at_k(&[9, 1], &[1], 1), 0.0);
        assert_eq!(recall_at_k(&[], &[], 10), 1.0);
    }

    #[test]
    fn ground_truth_lines_parse_or_fail_clearly() {
        let t = parse_ground_truth("1,2, 3\n\n4 5\n", "gt", 2).unwrap();
        assert_eq!(t, vec![vec![1, 2, 3], vec![4, 5]]);
        let short = parse_ground_truth("1\n", "gt", 2).unwrap_err().to_string();
        assert!(short.contains("1 lines for 2 query vectors"), "{short}");
        let bad = parse_ground_truth("1,x\n", "gt", 1)
            .unwrap_err()
            .to_string();
        assert!(bad.contains("line 1") && bad.contains("\"x\""), "{bad}");
    }

    #[test]
    fn warmups_come_first_then_operations_cycle() {
        let set = QuerySet {
            vectors: vec![vec![0.0]; 4],
            truth: None,
            origin: String::new(),
        };
        assert_eq!(set.warmup(1), 1);
        let picks: Vec<usize> = (0..5).map(|i| set.operation(2, i)).collect();
        assert_eq!(picks, [2, 3, 2, 3, 2]);
        assert_eq!(set.operation(9, 3), 3);
    }
}
