//! `lakeseek-sql`: the `sql` and `worker` commands of `lakeseek` (the `lakeseek` binary
//! runs this companion for them, so the core crate stays free of DataFusion).

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use datafusion::arrow::array::RecordBatch;
use datafusion::common::{DataFusionError, Result};
use datafusion::physical_plan::displayable;
use futures::StreamExt;
use lakeseek::args::{parse_key_value, CacheArgs};
use lakeseek::{Dataset, IoStats, Session};
use lakeseek_datafusion::{
    serve_worker_with, session_context, DatasetResolver, LakeseekTable, TaskReport,
};
use url::Url;

#[derive(Debug, Parser)]
#[command(
    name = "lakeseek",
    about = "SQL over Lance datasets on DataFusion, and its workers"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run SQL over Lance datasets: one JSON object per result row on stdout.
    Sql(SqlArgs),
    /// Serve distributed tasks until stopped; one JSON line per task on stderr.
    Worker(WorkerArgs),
}

#[derive(Debug, clap::Args)]
struct SqlArgs {
    /// A table: NAME=URL of a Lance dataset (repeatable). Tables have a `_rowaddr` column
    /// (and `_rowid` on datasets with stable row ids); blob columns are their descriptors.
    /// `nearest('NAME', 'col', [..], k)` and `search('NAME', 'col', 'text', k)` are table
    /// functions over them (rows with `_rowaddr`, `_distance` / `_score`).
    #[arg(long = "table", value_name = "NAME=URL", required = true)]
    tables: Vec<String>,
    /// Storage option key=value (repeatable; object_store builder keys, lakeseek I/O options).
    #[arg(long = "storage-option", value_name = "KEY=VALUE", value_parser = parse_key_value)]
    storage_options: Vec<(String, String)>,
    /// Worker URLs (http://host:port,...): run the plan distributed over them.
    #[arg(long, value_delimiter = ',', value_name = "URL,URL,...")]
    workers: Vec<String>,
    /// Print the physical plan instead of running the query.
    #[arg(long)]
    explain: bool,
    /// Print {"requests":..,"bytes":..,"round_trips":..} of this process on stderr.
    #[arg(long)]
    stats: bool,
    #[command(flatten)]
    cache: CacheArgs,
    /// The SQL query.
    sql: String,
}

/// The session the disk tier flags (and `LAKESEEK_CACHE_DIR`) ask for.
fn session(cache: &CacheArgs) -> Result<Session> {
    cache
        .session()
        .map_err(|e| DataFusionError::External(Box::new(e)))
}

#[derive(Debug, clap::Args)]
struct WorkerArgs {
    /// Address to listen on (HOST:PORT; port 0 picks a free one, printed on stderr).
    #[arg(long, value_name = "HOST:PORT")]
    listen: String,
    /// Storage option key=value for the datasets tasks read (repeatable).
    #[arg(long = "storage-option", value_name = "KEY=VALUE", value_parser = parse_key_value)]
    storage_options: Vec<(String, String)>,
    #[command(flatten)]
    cache: CacheArgs,
}

fn key_value(s: &str, what: &str) -> Result<(String, String)> {
    parse_key_value(s).map_err(|e| DataFusionError::Plan(format!("{what}: {e}")))
}

async fn run_sql(args: &SqlArgs) -> Result<()> {
    let options = args.storage_options.clone();
    let workers: Vec<Url> = args
        .workers
        .iter()
        .filter(|w| !w.is_empty())
        .map(|w| Url::parse(w).map_err(|e| DataFusionError::Plan(format!("worker URL {w:?}: {e}"))))
        .collect::<Result<_>>()?;
    let ctx = session_context(&workers)?;
    let session = session(&args.cache)?;
    let stats = IoStats::new();
    for table in &args.tables {
        let (name, url) = key_value(table, "--table")?;
        // Workers resolve the URL themselves: a relative local path is made absolute.
        let url = if url.contains("://") {
            url
        } else {
            std::path::absolute(&url)
                .map_err(|e| DataFusionError::Plan(format!("table {name}: path {url:?}: {e}")))?
                .to_string_lossy()
                .into_owned()
        };
        let dataset = Dataset::builder(&url)
            .storage_options(options.clone())
            .session(&session)
            .stats(&stats)
            .open()
            .await
            .map_err(|e| DataFusionError::Plan(format!("table {name}: {e}")))?;
        let stable_row_ids = dataset.has_stable_row_ids();
        let mut provider = LakeseekTable::new(dataset)?.with_row_address()?;
        if stable_row_ids {
            provider = provider.with_row_id()?;
        }
        ctx.register_table(name.as_str(), Arc::new(provider))?;
    }
    let frame = ctx.sql(&args.sql).await?;
    let plan = frame.create_physical_plan().await?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if args.explain {
        let text = if workers.is_empty() {
            displayable(plan.as_ref()).indent(true).to_string()
        } else {
            datafusion_distributed::display_plan_ascii(plan.as_ref(), false)
        };
        writeln!(out, "{text}").map_err(DataFusionError::IoError)?;
    } else {
        let task_ctx = ctx.task_ctx();
        let mut stream = datafusion::physical_plan::execute_stream(plan, task_ctx)?;
        let mut writer = arrow_json::LineDelimitedWriter::new(&mut out);
        while let Some(batch) = stream.next().await {
            let batch: RecordBatch = batch?;
            writer.write(&batch)?;
        }
        writer.finish()?;
    }
    out.flush().map_err(DataFusionError::IoError)?;
    if args.stats {
        let s = stats.snapshot();
        eprintln!(
            "{}",
            serde_json::json!({"requests": s.requests, "bytes": s.bytes, "round_trips": s.round_trips})
        );
    }
    Ok(())
}

async fn run_worker(args: &WorkerArgs) -> Result<()> {
    let options = args.storage_options.clone();
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .map_err(|e| DataFusionError::Plan(format!("cannot listen on {}: {e}", args.listen)))?;
    let local = listener.local_addr().map_err(DataFusionError::IoError)?;
    eprintln!("{}", serde_json::json!({"listening": local.to_string()}));
    let reporter = Arc::new(|report: TaskReport| match serde_json::to_string(&report) {
        Ok(line) => eprintln!("{line}"),
        Err(e) => eprintln!("{{\"error\":\"cannot serialize a task report: {e}\"}}"),
    });
    let resolver = DatasetResolver::new(options).with_session(&session(&args.cache)?);
    tokio::select! {
        served = serve_worker_with(listener, Arc::new(resolver), Some(reporter)) => served,
        _ = tokio::signal::ctrl_c() => Ok(()),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match &cli.command {
            Command::Sql(args) => run_sql(args).await,
            Command::Worker(args) => run_worker(args).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
