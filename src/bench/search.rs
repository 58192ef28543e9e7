//! `lakeseek bench search`: full-text queries on a column with an INVERTED index, as
//! `lakeseek query --search` answers them ([`Dataset::search`]).
//!
//! The texts come from `--text` (every operation the same query) or `--texts FILE` (one per
//! line; the first `--warmup` lines are the warm-ups, then operation `i` runs line
//! `warmup + i`, cycling). Cold operation: fresh session, open (manifest) + search; warm:
//! one open dataset and session.

use std::path::PathBuf;
use std::time::Instant;

use crate::bench::report::{BenchReport, BenchSettings, OperationRecord, PhaseRecord};
use crate::bench::take::{add, open_bench_dataset, open_dataset};
use crate::bench::{drive_operations, elapsed_ms, BenchStore, CommonBenchArgs};
use crate::{Dataset, Error, IoStats, IoStatsSnapshot, Result, SearchOperator, Session};

/// `lakeseek bench search`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct SearchBenchArgs {
    /// Dataset URL or path.
    pub(crate) dataset: String,
    /// The text column searched (it needs an INVERTED index).
    #[arg(long)]
    pub(crate) column: String,
    /// The query text of every operation.
    #[arg(long, required_unless_present = "texts", conflicts_with = "texts")]
    pub(crate) text: Option<String>,
    /// A file of query texts, one per line (warm-ups first, then cycling).
    #[arg(long, value_name = "FILE")]
    pub(crate) texts: Option<PathBuf>,
    /// Queries to measure.
    #[arg(long, default_value_t = 200)]
    pub(crate) queries: u64,
    /// Rows per query, best first (default: every match).
    #[arg(short = 'k', long = "k")]
    pub(crate) k: Option<usize>,
    /// How the tokens combine: `or` (default) or `and`.
    #[arg(long, default_value = "or", value_parser = ["or", "and"])]
    pub(crate) operator: String,
    /// A filter the rows must pass.
    #[arg(long)]
    pub(crate) filter: Option<String>,
    /// Skip fragments the index does not cover (default: tokenize them).
    #[arg(long)]
    pub(crate) index_only: bool,
    /// Search the text as a phrase (the index needs positions).
    #[arg(long)]
    pub(crate) phrase: bool,
    /// Most other tokens between a phrase's tokens (with `--phrase`).
    #[arg(long, requires = "phrase")]
    pub(crate) slop: Option<u32>,
    /// Dataset version (default: latest).
    #[arg(long)]
    pub(crate) version: Option<u64>,
    /// Scan the data when the filter's column has no usable index.
    #[arg(long)]
    pub(crate) allow_scan: bool,
    /// Shared benchmark flags.
    #[command(flatten)]
    pub(crate) common: CommonBenchArgs,
}

/// Run the search benchmark and build its report (nothing printed).
pub(crate) async fn run_search_bench(args: &SearchBenchArgs) -> Result<BenchReport> {
    let common = &args.common;
    let texts = query_texts(args)?;
    let setup = IoStats::new();
    let (store, shared) =
        open_bench_dataset(&args.dataset, args.version, common, args.queries, &setup).await?;
    let mut warmup_cost = IoStatsSnapshot::default();
    for j in 0..common.warmup {
        let text = &texts[(j as usize) % texts.len()];
        let record = search_once(&store, &shared, args, text, j).await?;
        warmup_cost = add(warmup_cost, record.io());
    }
    let skip = (common.warmup as usize).min(texts.len() - 1);
    let measured = &texts[skip..];
    let driven = drive_operations(args.queries, common.concurrency, common.keep_going, |i| {
        let (store, shared) = (&store, &shared);
        let text = &measured[(i as usize) % measured.len()];
        async move { search_once(store, shared, args, text, i).await }
    })
    .await?;
    Ok(BenchReport::new(
        settings(args, &store),
        args.queries,
        driven.records,
        driven.interrupted,
        driven.wall_seconds,
        add(setup.snapshot(), warmup_cost),
    )
    .with_errors(driven.errors, driven.error_messages))
}

fn settings(args: &SearchBenchArgs, store: &BenchStore) -> BenchSettings {
    let common = &args.common;
    BenchSettings {
        filter_template: args.filter.clone(),
        search_column: Some(args.column.clone()),
        queries_from: Some(match (&args.texts, &args.text) {
            (Some(file), _) => file.display().to_string(),
            (None, t) => format!("{:?}", t.as_deref().unwrap_or_default()),
        }),
        k: args.k,
        operator: Some(args.operator.clone()),
        ..common.settings("search", &args.dataset, store, "dataset")
    }
}

/// The query texts: `--text`, or the non-empty lines of `--texts` (more than `--warmup`).
fn query_texts(args: &SearchBenchArgs) -> Result<Vec<String>> {
    let Some(file) = &args.texts else {
        return Ok(vec![args.text.clone().unwrap_or_default()]);
    };
    let text = std::fs::read_to_string(file)
        .map_err(|e| Error::InvalidArgument(format!("--texts {}: {e}", file.display())))?;
    let lines: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    if lines.is_empty() || (lines.len() as u64) <= args.common.warmup {
        return Err(Error::InvalidArgument(format!(
            "--texts {}: {} query texts, need more than --warmup {}",
            file.display(),
            lines.len(),
            args.common.warmup
        )));
    }
    Ok(lines)
}

/// One search (cold: open included).
async fn search_once(
    store: &BenchStore,
    shared: &Dataset,
    args: &SearchBenchArgs,
    text: &str,
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
        fresh = open_dataset(store, args.version, &Session::default(), &open_stats).await?;
        open = Some(PhaseRecord::new(elapsed_ms(started), open_stats.snapshot()));
        &fresh
    };
    let operator = if args.operator == "and" {
        SearchOperator::And
    } else {
        SearchOperator::Or
    };
    let mut search = dataset
        .search(text)
        .column(&args.column)
        .operator(operator)
        .index_only(args.index_only)
        .allow_scan(args.allow_scan)
        .stats(&query_stats);
    if let Some(k) = args.k {
        search = search.k(k);
    }
    if args.phrase {
        search = search.phrase(true).slop(args.slop.unwrap_or(0));
    }
    if let Some(f) = &args.filter {
        search = search.filter(f);
    }
    let found = search.execute().await?;
    let latency_ms = elapsed_ms(started);
    let total = add(open_stats.snapshot(), query_stats.snapshot());
    Ok(OperationRecord {
        index,
        latency_ms,
        requests: total.requests,
        bytes: total.bytes,
        round_trips: total.round_trips,
        rows: found.row_addresses.len() as u64,
        open,
        recall: None,
    })
}
