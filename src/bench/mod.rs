//! `lakeseek bench`: random-take and lookup benchmarks anyone can point at their own bucket.
//!
//! * `lakeseek bench take <DATASET_OR_FILE_URL> --columns a,b --rows-per-take 100
//!   --takes 200 [--concurrency 8] [--seed 1] [--cold|--warm]` reads `--rows-per-take`
//!   random rows per operation from a Lance dataset (a directory with `_versions/`) or a
//!   single `.lance` file ([`take`]).
//! * `lakeseek bench query <DATASET_URL> --filter-template "key = '{}'" --values-from key
//!   --queries 200` answers the filter with values sampled from a column ([`query`]).
//! * `lakeseek bench blob <DATASET_URL> --column img --blobs-per-take 32 --takes 100`
//!   reads the bytes of random blobs of a blob column ([`blob`]).
//! * `lakeseek [--max-requests N] bench load '<URL with {}>' --datasets 120 --filter F
//!   --queries 3000` runs many queries at once through one session, most opening their own
//!   dataset ([`load`]; its own report).
//! * `lakeseek bench nearest <DATASET_URL> --column vec [--queries-file q.npy
//!   [--ground-truth gt.txt]] -k 10 --nprobes 20 [--refine R]` runs nearest-neighbour
//!   queries, with recall@k when the exact answers are given ([`nearest`]).
//! * `lakeseek bench search <DATASET_URL> --column body --text T | --texts FILE [-k K]
//!   [--operator and]` runs full-text searches ([`search`]).
//!
//! **Cold** operations start from nothing: fresh caches and a fresh open (dataset manifest or
//! file footer) each; the open's share is recorded apart in each operation. **Warm**
//! operations share one open target and its caches (opened once before measuring, no
//! prewarming). `--warmup N` runs N unmeasured operations first (in cold mode they only
//! leave open HTTP connections behind, which the client pool reuses). Row selections are seeded:
//! operation `i` uses seed `seed + i` (splitmix64; the same generator as
//! `benches/peer/take_file_compare.py`), warm-up operation `j` uses `seed - warmup + j`.
//!
//! Datasets and files are read through the public API, as any user of the crate reads them
//! ([`OpenedStore`], [`Dataset`](crate::Dataset), [`LanceFile`](crate::LanceFile)): a cold
//! operation opens with a fresh [`Session`], warm ones share one. Every GET and LIST goes
//! through the session's admission control for the store (one bound on requests in flight,
//! fair across the concurrent operations;
//! [`SessionBuilder::max_requests`](crate::SessionBuilder::max_requests)).
//! `--keep-going` counts failed operations in the report (`errors`) instead of stopping at
//! the first one.
//!
//! Every operation counts its own requests, bytes and round trips in its own
//! [`IoStats`]. A progress bar is drawn on stderr when it is a
//! terminal. Ctrl-C stops launching operations, waits for those in flight (a second Ctrl-C
//! abandons them) and prints the partial report. `--json` prints the [`BenchReport`] as one
//! JSON object, `--plot out.svg` (or `.png`) draws the latency CDF and histogram (with
//! `--compare old.json` runs overlaid), `--latency-ms N` adds N ms to every request
//! (printed in the report).
#![allow(clippy::future_not_send)] // benchmarks drive their operations on one task and write to `&mut dyn Write`

pub(crate) mod blob;
pub(crate) mod load;
pub(crate) mod nearest;
pub(crate) mod plot;
pub(crate) mod query;
pub(crate) mod report;
pub(crate) mod search;
pub(crate) mod take;

use std::future::Future;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::{FutureExt, StreamExt};

use crate::args::parse_key_value;
use crate::{Error, IoStats, OpenedStore, Result, Session};

#[cfg_attr(not(test), allow(unused_imports))] // used by the tests
pub(crate) use report::{BenchReport, OperationRecord};

/// `lakeseek bench` subcommands.
#[derive(Debug, Clone, clap::Subcommand)]
pub(crate) enum BenchCommand {
    /// Random take: `--rows-per-take` random rows per operation from a dataset or a file.
    Take(take::TakeBenchArgs),
    /// Point lookups: a filter template filled with values sampled from a column.
    Query(query::QueryBenchArgs),
    /// Many concurrent filter queries through one session over many datasets, most opening
    /// their own (the load scenario of issue 36): errors, throughput, latency, the limit.
    Load(load::LoadBenchArgs),
    /// Random blob takes: `--blobs-per-take` random blobs of a blob column per operation.
    Blob(blob::BlobBenchArgs),
    /// Nearest-neighbour queries on a vector column (query vectors from a `.npy` file or
    /// random rows), with recall@k against `--ground-truth`.
    Nearest(nearest::NearestBenchArgs),
    /// Full-text searches on a column with an INVERTED index (`--text` or `--texts FILE`).
    Search(search::SearchBenchArgs),
}

/// Flags shared by `bench take` and `bench query`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct CommonBenchArgs {
    /// Operations in flight at once.
    #[arg(long, default_value_t = 1)]
    pub(crate) concurrency: usize,
    /// Seed of operation 0 (operation i uses seed + i).
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Fresh caches and a fresh open per operation (the default).
    #[arg(long, conflicts_with = "warm")]
    pub(crate) cold: bool,
    /// One open target and shared caches for all operations.
    #[arg(long)]
    pub(crate) warm: bool,
    /// Unmeasured operations run before the measured ones (warm: they fill the shared
    /// caches; cold: they only open the HTTP connections the measured ones reuse).
    #[arg(long, default_value_t = 0)]
    pub(crate) warmup: u64,
    /// Add this many milliseconds to every request (LatencySource), e.g. to mimic S3's
    /// first-byte latency on local disk. Printed in the report.
    #[arg(long = "latency-ms", default_value_t = 0)]
    pub(crate) latency_ms: u64,
    /// Print the report as one JSON object on stdout instead of the table.
    #[arg(long)]
    pub(crate) json: bool,
    /// Draw the latency distribution (CDF and histogram) to this `.svg` or `.png` file.
    #[arg(long)]
    pub(crate) plot: Option<String>,
    /// Overlay a previous run's `--json` report on the plot (repeatable).
    #[arg(long)]
    pub(crate) compare: Vec<String>,
    /// Legend label of this run (default: command, mode and URL).
    #[arg(long)]
    pub(crate) label: Option<String>,
    /// Storage option `key=value` (repeatable), e.g. `aws_endpoint=http://127.0.0.1:4566`.
    #[arg(long = "storage-option", value_name = "KEY=VALUE", value_parser = parse_key_value)]
    pub(crate) storage_options: Vec<(String, String)>,
    /// Count failed operations (`errors` in the report, with the first few messages) and
    /// go on, instead of stopping at the first failure (load tests: errors must be 0).
    #[arg(long)]
    pub(crate) keep_going: bool,
}

impl Default for CommonBenchArgs {
    fn default() -> Self {
        Self {
            concurrency: 1,
            seed: 1,
            cold: false,
            warm: false,
            warmup: 0,
            latency_ms: 0,
            json: false,
            plot: None,
            compare: Vec::new(),
            label: None,
            storage_options: Vec::new(),
            keep_going: false,
        }
    }
}

impl CommonBenchArgs {
    /// `"warm"` or `"cold"`.
    pub(crate) fn mode(&self) -> &'static str {
        if self.warm {
            "warm"
        } else {
            "cold"
        }
    }

    /// The settings every mode reports alike: `command`, its label (`--label`, else
    /// "lakeseek COMMAND MODE URL"), the URL, store, target kind, mode, latency,
    /// concurrency, seed and warm-up; a mode adds its own fields to these.
    pub(crate) fn settings(
        &self,
        command: &str,
        url: &str,
        store: &BenchStore,
        target: &str,
    ) -> report::BenchSettings {
        report::BenchSettings {
            command: command.into(),
            label: self
                .label
                .clone()
                .unwrap_or_else(|| format!("lakeseek {command} {} {url}", self.mode())),
            url: url.into(),
            store: store.describe(),
            target: target.into(),
            mode: self.mode().into(),
            injected_latency_ms: self.latency_ms,
            concurrency: self.concurrency,
            seed: self.seed,
            warmup: self.warmup,
            ..report::BenchSettings::default()
        }
    }

    /// Check the flags that do not depend on the target.
    pub(crate) fn validate(&self) -> Result<()> {
        if self.concurrency == 0 {
            return Err(Error::InvalidArgument(
                "--concurrency must be at least 1".into(),
            ));
        }
        if let Some(p) = &self.plot {
            plot::check_plot_path(p)?;
        }
        Ok(())
    }
}

/// Run a `lakeseek bench` subcommand: print the table (or `--json`) on `out`, draw
/// `--plot`.
pub(crate) async fn run_bench(command: &BenchCommand, out: &mut dyn Write) -> Result<BenchReport> {
    let (report, common) = match command {
        BenchCommand::Take(args) => (take::run_take_bench(args).await?, &args.common),
        BenchCommand::Query(args) => (query::run_query_bench(args).await?, &args.common),
        BenchCommand::Blob(args) => (blob::run_blob_bench(args).await?, &args.common),
        BenchCommand::Load(_) => {
            return Err(Error::InvalidArgument(
                "bench load prints its own report: run it with load::run_load_bench".into(),
            ))
        }
        BenchCommand::Nearest(args) => (nearest::run_nearest_bench(args).await?, &args.common),
        BenchCommand::Search(args) => (search::run_search_bench(args).await?, &args.common),
    };
    if common.json {
        serde_json::to_writer(&mut *out, &report)
            .map_err(|e| Error::from(std::io::Error::other(e)))?;
        writeln!(out)?;
    } else {
        report.write_table(out)?;
    }
    if let Some(path) = &common.plot {
        let mut runs = vec![report.clone()];
        for other in &common.compare {
            let text = std::fs::read_to_string(other).map_err(|e| {
                Error::InvalidArgument(format!("cannot read --compare file {other}: {e}"))
            })?;
            runs.push(BenchReport::from_json(&text, other)?);
        }
        plot::write_latency_plot(path, &runs)?;
        if !common.json {
            writeln!(out, "plot: {path}")?;
        }
    }
    Ok(report)
}

/// Distinct pseudo-random rows in `0..total`, sorted: `n` of them from splitmix64 whose
/// state starts at the mixed `seed`, so neighbouring seeds give unrelated row sets (the
/// generator `benches/peer/take_file_compare.py` reproduces).
pub(crate) fn random_rows(seed: u64, n: u64, total: u64) -> Result<Vec<u64>> {
    if n > total {
        return Err(Error::InvalidArgument(format!(
            "cannot pick {n} distinct rows out of {total}"
        )));
    }
    let mut state = mix64(seed ^ 0x6A09_E667_F3BC_C909);
    let mut rows = std::collections::BTreeSet::new();
    while (rows.len() as u64) < n {
        rows.insert(splitmix64(&mut state) % total);
    }
    Ok(rows.into_iter().collect())
}

/// One splitmix64 step.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    mix64(*state)
}

/// splitmix64's output function.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Seed of measured operation `index` (`seed + index`, wrapping).
pub(crate) fn operation_seed(seed: u64, index: u64) -> u64 {
    seed.wrapping_add(index)
}

/// Seed of warm-up operation `j` of `warmup` (`seed - warmup + j`, wrapping).
pub(crate) fn warmup_seed(seed: u64, warmup: u64, j: u64) -> u64 {
    seed.wrapping_sub(warmup).wrapping_add(j)
}

/// A store opened for a benchmark, with the latency layer applied to reads and listings.
#[derive(Debug, Clone)]
pub(crate) struct BenchStore {
    /// The opened URL (every read and listing delayed by `injected_latency_ms`).
    pub(crate) store: OpenedStore,
    /// Custom endpoint from the storage options or the environment (shown in the report:
    /// `s3://bucket` served by a local emulator is not S3).
    pub(crate) endpoint: Option<String>,
}

/// Storage-option keys (lower case) that name a custom endpoint.
const ENDPOINT_OPTION_KEYS: [&str; 5] = [
    "aws_endpoint",
    "aws_endpoint_url",
    "endpoint",
    "endpoint_url",
    "google_base_url",
];

/// Environment variables object_store's builders read a custom endpoint from.
const ENDPOINT_ENV_VARS: [&str; 3] = ["AWS_ENDPOINT", "AWS_ENDPOINT_URL", "AZURE_ENDPOINT"];

/// The custom endpoint in `storage_options` (or, failing that, the environment).
fn custom_endpoint(storage_options: &[(String, String)]) -> Option<String> {
    storage_options
        .iter()
        .rev()
        .find(|(k, _)| ENDPOINT_OPTION_KEYS.contains(&k.to_ascii_lowercase().as_str()))
        .map(|(_, v)| v.clone())
        .or_else(|| {
            ENDPOINT_ENV_VARS
                .iter()
                .find_map(|var| std::env::var(var).ok().filter(|v| !v.is_empty()))
        })
}

impl BenchStore {
    /// Open `url` with storage options, adding `latency_ms` to every request.
    pub(crate) fn open(
        url: &str,
        storage_options: &[(String, String)],
        latency_ms: u64,
    ) -> Result<Self> {
        let store = OpenedStore::open(url, storage_options)?
            .with_request_latency(Duration::from_millis(latency_ms));
        let remote = store.is_remote();
        Ok(Self {
            store,
            endpoint: remote.then(|| custom_endpoint(storage_options)).flatten(),
        })
    }

    /// The store as described in the report.
    pub(crate) fn describe(&self) -> String {
        match &self.endpoint {
            Some(e) => format!("{} at endpoint {e}", self.store.describe()),
            None => self.store.describe(),
        }
    }

    /// True when `path/_versions/` holds at least one object (a Lance dataset). One LIST
    /// request, counted in `stats` and admitted by `session`; a listing error counts as
    /// "not a dataset" (opening the file then reports the real problem).
    pub(crate) async fn is_dataset(&self, session: &Session, stats: &IoStats) -> bool {
        self.store.is_dataset(session, stats).await
    }
}

/// Finished operations of a run.
#[derive(Debug, Clone)]
pub(crate) struct DrivenOperations {
    /// Records of the operations that finished.
    pub(crate) records: Vec<OperationRecord>,
    /// True when Ctrl-C stopped the run.
    pub(crate) interrupted: bool,
    /// Wall time from the first launch to the last completion.
    pub(crate) wall_seconds: f64,
    /// Operations that failed (only with `keep_going`; otherwise the first one stops the
    /// run).
    pub(crate) errors: u64,
    /// The first [`MAX_ERROR_MESSAGES`] distinct error messages.
    pub(crate) error_messages: Vec<String>,
}

/// Distinct error messages a run keeps.
pub(crate) const MAX_ERROR_MESSAGES: usize = 10;

/// Run operations `0..count`, `concurrency` at a time, with a progress bar on stderr
/// (hidden when stderr is not a terminal). The first Ctrl-C stops launching new
/// operations and waits for those in flight, a second one abandons them; an operation
/// error stops the run with that error, unless `keep_going` (then it is counted).
pub(crate) async fn drive_operations<F, Fut>(
    count: u64,
    concurrency: usize,
    keep_going: bool,
    operation: F,
) -> Result<DrivenOperations>
where
    F: Fn(u64) -> Fut,
    Fut: Future<Output = Result<OperationRecord>>,
{
    let stop = Arc::new(AtomicBool::new(false));
    let stop_launching = Arc::clone(&stop);
    let progress = progress_bar(count);
    let started = Instant::now();
    let mut in_flight = futures::stream::iter(0..count)
        .take_while(move |_| std::future::ready(!stop_launching.load(Ordering::SeqCst)))
        .map(&operation)
        .buffer_unordered(concurrency.max(1));
    let mut records = Vec::new();
    let mut failed = FailedOperations::default();
    let mut interrupts = 0u32;
    // Poll the Ctrl-C future once so the handler is installed before anything runs.
    let mut ctrl_c = Box::pin(tokio::signal::ctrl_c());
    let mut signals_work = !matches!((&mut ctrl_c).now_or_never(), Some(Err(_)));
    announce(&progress, count, concurrency);
    loop {
        tokio::select! {
            next = in_flight.next() => match next {
                Some(Ok(record)) => {
                    records.push(record);
                    progress.inc(1);
                }
                Some(Err(e)) if keep_going => {
                    failed.count(&e);
                    progress.inc(1);
                }
                Some(Err(e)) => {
                    progress.abandon_with_message("failed");
                    return Err(e);
                }
                None => break,
            },
            signal = &mut ctrl_c, if signals_work && interrupts < 2 => match signal {
                Ok(()) => {
                    interrupts += 1;
                    stop.store(true, Ordering::SeqCst);
                    progress.set_message("Ctrl-C: finishing operations in flight");
                    if interrupts >= 2 {
                        break;
                    }
                    ctrl_c = Box::pin(tokio::signal::ctrl_c());
                }
                Err(_) => signals_work = false,
            },
        }
    }
    progress.finish_and_clear();
    Ok(DrivenOperations {
        records,
        interrupted: interrupts > 0,
        wall_seconds: started.elapsed().as_secs_f64(),
        errors: failed.errors,
        error_messages: failed.messages,
    })
}

/// The progress bar of [`drive_operations`] on stderr (hidden when it is not a terminal).
fn progress_bar(count: u64) -> indicatif::ProgressBar {
    let progress = indicatif::ProgressBar::with_draw_target(
        Some(count),
        indicatif::ProgressDrawTarget::stderr(),
    );
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{bar:40} {pos}/{len} ops  {per_sec}  eta {eta}  {msg}",
    ) {
        progress.set_style(style);
    }
    progress
}

/// The run's first line, above the progress bar (or on stderr when the bar is hidden).
fn announce(progress: &indicatif::ProgressBar, count: u64, concurrency: usize) {
    progress.println(format!(
        "lakeseek bench: {count} operations, {concurrency} in flight (Ctrl-C: partial report)"
    ));
    if progress.is_hidden() {
        eprintln!(
            "lakeseek bench: {count} operations, {concurrency} in flight (Ctrl-C: partial report)"
        );
    }
}

/// The operations that failed in a `keep_going` run: how many, and the first
/// [`MAX_ERROR_MESSAGES`] distinct messages.
#[derive(Default)]
struct FailedOperations {
    errors: u64,
    messages: Vec<String>,
}

impl FailedOperations {
    fn count(&mut self, e: &Error) {
        self.errors += 1;
        let message = e.to_string();
        if self.messages.len() < MAX_ERROR_MESSAGES && !self.messages.contains(&message) {
            self.messages.push(message);
        }
    }
}

/// Milliseconds elapsed since `t`.
pub(crate) fn elapsed_ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_rows_are_distinct_sorted_in_range_and_seeded() {
        let a = random_rows(7, 50, 1000).unwrap();
        assert_eq!(a.len(), 50);
        assert!(a.windows(2).all(|w| w[0] < w[1]));
        assert!(a.iter().all(|r| *r < 1000));
        assert_eq!(a, random_rows(7, 50, 1000).unwrap());
        // Neighbouring seeds give unrelated sets (not the same sequence shifted by one).
        let b = random_rows(8, 50, 1000).unwrap();
        assert!(
            a.iter().filter(|r| b.contains(r)).count() < 15,
            "{a:?} {b:?}"
        );
        assert_eq!(random_rows(1, 10, 10).unwrap(), (0..10).collect::<Vec<_>>());
        assert!(random_rows(1, 11, 10).is_err());
        assert!(random_rows(1, 0, 0).unwrap().is_empty());
    }

    #[test]
    fn random_rows_match_the_python_generator() {
        // Values printed by take_file_compare.py's random_rows(5000, 3, 1_000_000).
        let rows = random_rows(5000, 3, 1_000_000).unwrap();
        assert_eq!(rows, vec![268642, 384611, 703821]);
    }

    #[test]
    fn endpoints_come_from_options_first() {
        let opts = vec![("AWS_ENDPOINT".to_string(), "http://a:1".to_string())];
        assert_eq!(custom_endpoint(&opts).as_deref(), Some("http://a:1"));
        let store = BenchStore::open("memory:///x", &[], 0).unwrap();
        assert_eq!(store.endpoint, None);
    }

    #[test]
    fn seeds_of_operations_and_warmups() {
        assert_eq!(operation_seed(6000, 3), 6003);
        assert_eq!(warmup_seed(6000, 1, 0), 5999);
        assert_eq!(operation_seed(u64::MAX, 1), 0);
    }

    #[tokio::test]
    async fn driver_runs_every_operation_with_bounded_concurrency() {
        let running = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let peak = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let driven = drive_operations(20, 3, false, |i| {
            let (running, peak) = (Arc::clone(&running), Arc::clone(&peak));
            async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                tokio::task::yield_now().await;
                running.fetch_sub(1, Ordering::SeqCst);
                Ok(OperationRecord {
                    index: i,
                    latency_ms: 1.0,
                    requests: 1,
                    bytes: 0,
                    round_trips: 1,
                    rows: 0,
                    open: None,
                    recall: None,
                })
            }
        })
        .await
        .unwrap();
        assert_eq!(driven.records.len(), 20);
        assert!(!driven.interrupted);
        assert!(peak.load(Ordering::SeqCst) <= 3);
        let flaky = |i: u64| async move {
            if i % 3 == 1 {
                Err(Error::InvalidArgument(format!("boom {}", i % 2)))
            } else {
                Ok(OperationRecord {
                    index: i,
                    latency_ms: 1.0,
                    requests: 0,
                    bytes: 0,
                    round_trips: 0,
                    rows: 0,
                    open: None,
                    recall: None,
                })
            }
        };
        assert!(drive_operations(5, 2, false, flaky).await.is_err());
        // Keep going: every failure counted, each distinct message kept once.
        let kept = drive_operations(9, 2, true, flaky).await.unwrap();
        assert_eq!(kept.records.len(), 6);
        assert_eq!(kept.errors, 3);
        let mut messages = kept.error_messages.clone();
        messages.sort();
        assert_eq!(
            messages,
            vec![
                "invalid argument: boom 0".to_string(),
                "invalid argument: boom 1".to_string()
            ]
        );
    }
}
