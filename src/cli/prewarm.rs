//! `lakeseek prewarm DATASET [--index NAME ...] [--all-pages] [--columns a,b] [--version N]`:
//! load a dataset's index lookups (all its indices unless `--index` names some), with
//! `--all-pages` every index page, and the page inits of `--columns`, into the session
//! caches and — the point, across processes — the disk tier (`--cache-dir`). Prints one
//! JSON object on stdout: `{"dataset", "version", "indices", "segments", "index_pages",
//! "column_pages", "vector_partitions", "requests", "bytes", "round_trips", "disk_hits", "disk_bytes",
//! "millis"}` (the dataset open included in the counters and the time).

use std::io::Write;
use std::time::Instant;

use crate::cli::StoreArgs;
use crate::{Dataset, IoStats, Result};

/// Flags of `lakeseek prewarm`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct PrewarmArgs {
    /// Dataset URL or local path.
    pub dataset: String,
    /// Index to prewarm (repeatable; default: every index).
    #[arg(long = "index", value_name = "NAME")]
    pub indices: Vec<String>,
    /// Also every index page, not only the lookups.
    #[arg(long)]
    pub all_pages: bool,
    /// Top-level columns whose page inits to load, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub columns: Vec<String>,
    /// Dataset version (default: latest).
    #[arg(long)]
    pub version: Option<u64>,
    /// Storage options and `--stats`.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Run `lakeseek prewarm`, writing the report to `out`.
pub(crate) async fn run_prewarm(args: &PrewarmArgs, out: &mut dyn Write) -> Result<()> {
    let started = Instant::now();
    let stats = IoStats::new();
    let session = crate::cli::process_session();
    let mut builder = Dataset::builder(&args.dataset)
        .storage_options(args.store.storage_options.iter().cloned())
        .session(&session)
        .stats(&stats);
    if let Some(v) = args.version {
        builder = builder.version(v);
    }
    let dataset = builder.open().await?;
    let mut prewarm = dataset.prewarm().all_index_pages(args.all_pages);
    for name in &args.indices {
        prewarm = prewarm.index(name);
    }
    for column in &args.columns {
        prewarm = prewarm.column(column);
    }
    let report = prewarm.run().await?;
    let total = stats.snapshot();
    let line = serde_json::json!({
        "dataset": args.dataset,
        "version": dataset.version(),
        "indices": report.indices,
        "segments": report.segments,
        "index_pages": report.index_pages,
        "column_pages": report.column_pages,
        "vector_partitions": report.vector_partitions,
        "requests": total.requests,
        "bytes": total.bytes,
        "round_trips": total.round_trips,
        "disk_hits": total.disk_hits,
        "disk_bytes": total.disk_bytes,
        "millis": started.elapsed().as_millis() as u64,
    });
    writeln!(out, "{line}")?;
    if args.store.stats {
        crate::cli::print_stats(&total);
    }
    Ok(())
}
