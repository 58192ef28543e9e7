//! `lakeseek bench take`: random take of `--rows-per-take` rows per operation from a Lance
//! dataset (rows are picked over all fragments' physical rows, then read by row address;
//! deleted rows are dropped as lance's take does) or from one `.lance` file.
//!
//! Cold operation on a file: fresh session, open (footer read) + [`LanceFile::take`]. On a
//! dataset: fresh session, open (find + read the manifest) + [`Dataset::take`] (data file
//! footers, page init, chunks). Warm operations reuse the target opened before measuring
//! and its session.

use std::time::Instant;

use crate::bench::report::{BenchReport, BenchSettings, OperationRecord, PhaseRecord};
use crate::bench::{
    drive_operations, elapsed_ms, operation_seed, random_rows, warmup_seed, BenchStore,
    CommonBenchArgs,
};
use crate::{Dataset, Error, IoStats, IoStatsSnapshot, LanceFile, Result, Session};

/// `lakeseek bench take`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct TakeBenchArgs {
    /// A Lance dataset (directory with `_versions/`) or a single `.lance` file: URL or path.
    pub(crate) url: String,
    /// Columns to read, comma-separated (default: every top-level column).
    #[arg(long, value_delimiter = ',')]
    pub(crate) columns: Vec<String>,
    /// Random rows per take.
    #[arg(long = "rows-per-take", default_value_t = 100)]
    pub(crate) rows_per_take: u64,
    /// Takes to measure.
    #[arg(long, default_value_t = 200)]
    pub(crate) takes: u64,
    /// Dataset version (default: latest; datasets only).
    #[arg(long)]
    pub(crate) version: Option<u64>,
    /// Shared benchmark flags.
    #[command(flatten)]
    pub(crate) common: CommonBenchArgs,
}

/// A single Lance file opened for the benchmark.
struct FileTarget {
    store: BenchStore,
    file: LanceFile,
    columns: Vec<String>,
}

/// A dataset opened for the benchmark.
struct DatasetTarget {
    store: BenchStore,
    dataset: Dataset,
    columns: Vec<String>,
    /// `(fragment id, physical rows)` in manifest order.
    fragments: Vec<(u64, u64)>,
}

enum TakeTarget {
    File(Box<FileTarget>),
    Dataset(Box<DatasetTarget>),
}

impl TakeTarget {
    fn total_rows(&self) -> u64 {
        match self {
            TakeTarget::File(f) => f.file.num_rows(),
            TakeTarget::Dataset(d) => d.fragments.iter().map(|(_, n)| n).sum(),
        }
    }
}

/// Run the take benchmark and build its report (nothing printed).
pub(crate) async fn run_take_bench(args: &TakeBenchArgs) -> Result<BenchReport> {
    let common = &args.common;
    common.validate()?;
    if args.takes == 0 {
        return Err(Error::InvalidArgument("--takes must be at least 1".into()));
    }
    if args.rows_per_take == 0 {
        return Err(Error::InvalidArgument(
            "--rows-per-take must be at least 1".into(),
        ));
    }
    let store = BenchStore::open(&args.url, &common.storage_options, common.latency_ms)?;
    let setup = IoStats::new();
    let target = open_target(store, args, &setup).await?;
    let total = target.total_rows();
    if total == 0 {
        return Err(Error::InvalidArgument(format!("{} has no rows", args.url)));
    }
    if args.rows_per_take > total {
        return Err(Error::InvalidArgument(format!(
            "--rows-per-take {} is larger than the {total} rows of {}",
            args.rows_per_take, args.url
        )));
    }
    let mut warmup_cost = IoStatsSnapshot::default();
    for j in 0..common.warmup {
        let seed = warmup_seed(common.seed, common.warmup, j);
        let record = take_once(&target, args, seed, j).await?;
        warmup_cost = add(warmup_cost, record.io());
    }
    let driven = drive_operations(args.takes, common.concurrency, common.keep_going, |i| {
        let target = &target;
        async move {
            let seed = operation_seed(common.seed, i);
            take_once(target, args, seed, i).await
        }
    })
    .await?;
    let settings = settings(args, &target);
    Ok(BenchReport::new(
        settings,
        args.takes,
        driven.records,
        driven.interrupted,
        driven.wall_seconds,
        add(setup.snapshot(), warmup_cost),
    )
    .with_errors(driven.errors, driven.error_messages))
}

fn settings(args: &TakeBenchArgs, target: &TakeTarget) -> BenchSettings {
    let common = &args.common;
    let (kind, store, columns) = match target {
        TakeTarget::File(f) => ("file", &f.store, f.columns.clone()),
        TakeTarget::Dataset(d) => ("dataset", &d.store, d.columns.clone()),
    };
    BenchSettings {
        columns,
        rows_per_take: Some(args.rows_per_take),
        filter_template: None,
        values_from: None,
        ..common.settings("take", &args.url, store, kind)
    }
}

/// Probe whether the URL is a dataset, open it once (the warm target; in cold mode only
/// used to validate the columns and count rows), resolve the columns.
async fn open_target(
    store: BenchStore,
    args: &TakeBenchArgs,
    setup: &IoStats,
) -> Result<TakeTarget> {
    let session = Session::default();
    if store.is_dataset(&session, setup).await {
        let dataset = open_dataset(&store, args.version, &session, setup).await?;
        let columns = dataset_columns(&dataset, &args.columns)?;
        let fragments = dataset
            .fragments()
            .iter()
            .map(|f| (f.id, f.physical_rows))
            .collect();
        return Ok(TakeTarget::Dataset(Box::new(DatasetTarget {
            store,
            dataset,
            columns,
            fragments,
        })));
    }
    if args.version.is_some() {
        return Err(Error::InvalidArgument(format!(
            "--version applies to datasets, but {} has no _versions/ directory",
            args.url
        )));
    }
    let file = open_file(&store, &session, setup).await?;
    let columns = file_columns(&file, &store, &args.columns)?;
    Ok(TakeTarget::File(Box::new(FileTarget {
        store,
        file,
        columns,
    })))
}

/// What the dataset benchmarks (`query`, `nearest`, `search`) do before measuring: check
/// the shared flags and the query count, open the store, make sure it holds a dataset and
/// open that once (its cost lands in `setup`).
pub(crate) async fn open_bench_dataset(
    url: &str,
    version: Option<u64>,
    common: &CommonBenchArgs,
    queries: u64,
    setup: &IoStats,
) -> Result<(BenchStore, Dataset)> {
    common.validate()?;
    if queries == 0 {
        return Err(Error::InvalidArgument(
            "--queries must be at least 1".into(),
        ));
    }
    let store = BenchStore::open(url, &common.storage_options, common.latency_ms)?;
    if !store.is_dataset(&Session::default(), setup).await {
        return Err(Error::InvalidArgument(format!(
            "{url} is not a Lance dataset (no objects under _versions/)"
        )));
    }
    let shared = open_dataset(&store, version, &Session::default(), setup).await?;
    Ok((store, shared))
}

/// Open the dataset with `session`, counting the open into `stats`.
pub(crate) async fn open_dataset(
    store: &BenchStore,
    version: Option<u64>,
    session: &Session,
    stats: &IoStats,
) -> Result<Dataset> {
    let builder = store.store.dataset().session(session).stats(stats);
    match version {
        Some(v) => builder.version(v).open().await,
        None => builder.open().await,
    }
}

/// Open the file with `session`, counting the open into `stats`.
async fn open_file(store: &BenchStore, session: &Session, stats: &IoStats) -> Result<LanceFile> {
    store
        .store
        .file()
        .session(session)
        .stats(stats)
        .open()
        .await
}

/// Top-level columns of a dataset by name (all when `requested` is empty), checked readable.
fn dataset_columns(dataset: &Dataset, requested: &[String]) -> Result<Vec<String>> {
    let names: Vec<String> = if requested.is_empty() {
        dataset.column_names()
    } else {
        requested.to_vec()
    };
    for name in &names {
        let column = dataset.column_info(name).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "no column named {name:?} in the dataset (columns: {})",
                dataset.column_names().join(", ")
            ))
        })?;
        dataset.column_arrow_type(name).map_err(|e| {
            Error::InvalidArgument(format!(
                "column {name:?} has type {}, which lakeseek cannot read: {e}",
                column.logical_type
            ))
        })?;
    }
    Ok(names)
}

/// Names of a file's top-level columns (all when `requested` is empty), checked present.
fn file_columns(file: &LanceFile, store: &BenchStore, requested: &[String]) -> Result<Vec<String>> {
    let schema = file.schema();
    let known: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    if requested.is_empty() {
        return Ok(known.iter().map(|n| n.to_string()).collect());
    }
    let unknown: Vec<&str> = requested
        .iter()
        .map(String::as_str)
        .filter(|n| !known.contains(n))
        .collect();
    if unknown.is_empty() {
        return Ok(requested.to_vec());
    }
    Err(Error::InvalidArgument(format!(
        "no column named {} in {} (columns: {})",
        unknown.join(", "),
        store.store.path(),
        known.join(", ")
    )))
}

/// Row addresses (`fragment << 32 | offset`) of dataset-wide row numbers (ascending), with
/// rows numbered over `fragments` in order. Rows past the end are dropped.
pub(crate) fn row_addresses(rows: &[u64], fragments: &[(u64, u64)]) -> Vec<u64> {
    let mut out = Vec::with_capacity(rows.len());
    let mut base = 0u64;
    let mut next = rows.iter().peekable();
    for &(id, n) in fragments {
        while let Some(&&r) = next.peek() {
            if r >= base + n {
                break;
            }
            if r >= base {
                out.push((id << 32) | (r - base));
            }
            next.next();
        }
        base += n;
    }
    out
}

/// One take (cold: open included) with the rows of `seed`.
async fn take_once(
    target: &TakeTarget,
    args: &TakeBenchArgs,
    seed: u64,
    index: u64,
) -> Result<OperationRecord> {
    let rows = random_rows(seed, args.rows_per_take, target.total_rows())?;
    let cold = !args.common.warm;
    let started = Instant::now();
    let open_stats = IoStats::new();
    let take_stats = IoStats::new();
    let mut open = None;
    let returned = match target {
        TakeTarget::File(f) => {
            let fresh;
            let file = if cold {
                fresh = open_file(&f.store, &Session::default(), &open_stats).await?;
                open = Some(PhaseRecord::new(elapsed_ms(started), open_stats.snapshot()));
                &fresh
            } else {
                &f.file
            };
            let columns: Vec<&str> = f.columns.iter().map(String::as_str).collect();
            let batch = file.with_stats(&take_stats).take(&columns, &rows).await?;
            batch.num_rows()
        }
        TakeTarget::Dataset(d) => {
            let fresh;
            let dataset = if cold {
                let session = Session::default();
                fresh = open_dataset(&d.store, args.version, &session, &open_stats).await?;
                open = Some(PhaseRecord::new(elapsed_ms(started), open_stats.snapshot()));
                &fresh
            } else {
                &d.dataset
            };
            let addresses = row_addresses(&rows, &d.fragments);
            let columns: Vec<&str> = d.columns.iter().map(String::as_str).collect();
            let counted = dataset.with_stats(&take_stats);
            counted.take(&addresses, &columns).await?.num_rows()
        }
    };
    let latency_ms = elapsed_ms(started);
    let total = add(open_stats.snapshot(), take_stats.snapshot());
    Ok(OperationRecord {
        index,
        latency_ms,
        requests: total.requests,
        bytes: total.bytes,
        round_trips: total.round_trips,
        rows: returned as u64,
        open,
        recall: None,
    })
}

/// Sum of two counter snapshots.
pub(crate) fn add(a: IoStatsSnapshot, b: IoStatsSnapshot) -> IoStatsSnapshot {
    IoStatsSnapshot {
        requests: a.requests + b.requests,
        bytes: a.bytes + b.bytes,
        round_trips: a.round_trips + b.round_trips,
        retries: a.retries + b.retries,
        hedges: a.hedges + b.hedges,
        disk_hits: a.disk_hits + b.disk_hits,
        disk_bytes: a.disk_bytes + b.disk_bytes,
        queued_micros: a.queued_micros + b.queued_micros,
        // Gauges of the store's limit: the later snapshot's, the extremes of both.
        limit: b.limit,
        limit_min: match (a.limit_min, b.limit_min) {
            (0, m) | (m, 0) => m,
            (x, y) => x.min(y),
        },
        limit_max: a.limit_max.max(b.limit_max),
        limit_decreases: a.limit_decreases.max(b.limit_decreases),
        limit_increases: a.limit_increases.max(b.limit_increases),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_map_to_fragment_addresses() {
        let fragments = [(0, 10), (3, 5), (7, 0), (9, 20)];
        let rows = [0, 9, 10, 14, 15, 34, 35, 99];
        assert_eq!(
            row_addresses(&rows, &fragments),
            vec![0, 9, 3 << 32, (3 << 32) | 4, 9 << 32, (9 << 32) | 19]
        );
        assert!(row_addresses(&[], &fragments).is_empty());
        assert!(row_addresses(&[1], &[]).is_empty());
    }
}
