//! `lakeseek inspect` and `lakeseek read`: Lance files.

use std::io::Write;

use crate::args::RequestedRows;
use crate::cli::{parse_rows, print_stats, write_json_lines, StoreArgs};
use crate::{Error, FileInspection, IoStats, LanceFile, Result};

/// `lakeseek inspect <URL> [--json]`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct InspectArgs {
    /// Lance file URL or local path.
    pub url: String,
    /// Print the inspection as one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also decode the structural plan of every 2.3 sparse page (reads the structural
    /// buffers) and report its size next to the equivalent dense rep/def levels.
    #[arg(long)]
    pub plans: bool,
    /// Store flags.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// `lakeseek read <URL> --column C --rows 0..100 | --rows 3,17,42`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ReadArgs {
    /// Lance file URL or local path.
    pub url: String,
    /// Column to read (repeatable, or comma-separated); all columns when omitted.
    /// `--columns` is the same flag (as `take` and `query` spell it).
    #[arg(long = "column", visible_alias = "columns", value_delimiter = ',')]
    pub columns: Vec<String>,
    /// Rows: a half-open range `a..b` or a list `3,17,42` (printed in the order given).
    #[arg(long)]
    pub rows: String,
    /// Store flags.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Open the Lance file (of any version: v2, or legacy v1) at `url` with the process's
/// session (its caches, and its admission control bounding the requests: `--max-requests`),
/// counting every request into `stats`.
pub(crate) async fn open_file(url: &str, store: &StoreArgs, stats: &IoStats) -> Result<LanceFile> {
    LanceFile::builder(url)
        .storage_options(store.storage_options.iter().cloned())
        .session(&crate::cli::process_session())
        .stats(stats)
        .open()
        .await
}

/// Run `inspect`: a Lance file, or (when no file is at the URL) a dataset.
pub(crate) async fn run_inspect(args: &InspectArgs, out: &mut dyn Write) -> Result<()> {
    let stats = IoStats::new();
    let file = match open_file(&args.url, &args.store, &stats).await {
        Err(Error::NotFound { .. }) if !args.plans => {
            return crate::cli::inspect_dataset::run_inspect_dataset(
                &args.url,
                &args.store,
                args.json,
                out,
            )
            .await;
        }
        opened => opened?,
    };
    let inspection = file.inspect(args.plans).await?;
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &inspection)
            .map_err(|e| Error::from(std::io::Error::other(e)))?;
        writeln!(out)?;
    } else {
        write_inspection_text(out, &inspection)?;
    }
    if args.store.stats {
        print_stats(&stats.snapshot());
    }
    Ok(())
}

/// Human-readable inspection.
pub(crate) fn write_inspection_text(out: &mut dyn Write, i: &FileInspection) -> Result<()> {
    writeln!(
        out,
        "{}  Lance {}  {} rows  {} bytes ({} metadata)",
        i.path, i.version, i.num_rows, i.object_size, i.metadata_bytes
    )?;
    writeln!(out, "schema:")?;
    for f in &i.fields {
        let depth = f.path.matches('.').count();
        writeln!(
            out,
            "  {:indent$}{}: {} (lance {:?}, id {}, {}nullable, columns {:?})",
            "",
            f.path.rsplit('.').next().unwrap_or(&f.path),
            f.arrow_type,
            f.logical_type,
            f.id,
            if f.nullable { "" } else { "not " },
            f.columns,
            indent = depth * 2
        )?;
    }
    for c in &i.columns {
        writeln!(
            out,
            "column {} ({}): {} rows, {} bytes, {} pages",
            c.index,
            c.field,
            c.rows,
            c.bytes,
            c.pages.len()
        )?;
        for (n, p) in c.pages.iter().enumerate() {
            writeln!(
                out,
                "  page {n}: rows {}..{}  {}  {} bytes  {}",
                p.rows.start, p.rows.end, p.layout, p.bytes, p.compression
            )?;
            if let Some(plan) = &p.structural_plan {
                let layers: Vec<String> = plan
                    .layers
                    .iter()
                    .map(|l| match l.kind {
                        "list" => format!(
                            "list(domain {}, {} non-empty, {} validity positions)",
                            l.domain, l.non_empty, l.validity_positions
                        ),
                        kind => format!(
                            "{kind}(domain {}, {} validity positions)",
                            l.domain, l.validity_positions
                        ),
                    })
                    .collect();
                writeln!(
                    out,
                    "    structural plan: {} bytes, {} leaf slots [{}]; dense rep/def: {} levels = {} bytes",
                    plan.plan_bytes,
                    plan.leaf_slots,
                    layers.join(", "),
                    plan.dense_level_entries,
                    plan.dense_level_bytes
                )?;
            }
        }
    }
    Ok(())
}

/// Run `read`.
pub(crate) async fn run_read(args: &ReadArgs, out: &mut dyn Write) -> Result<()> {
    let stats = IoStats::new();
    let file = open_file(&args.url, &args.store, &stats).await?;
    let requested = parse_rows(&args.rows)?;
    let columns: Vec<String> = if args.columns.is_empty() {
        let schema = file.schema();
        schema.fields().iter().map(|f| f.name().clone()).collect()
    } else {
        args.columns.clone()
    };
    let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
    let batch = match requested {
        RequestedRows::Range(rows) => file.read_range(&columns, rows).await?,
        RequestedRows::List(rows) => file.take(&columns, &rows).await?,
    };
    write_json_lines(out, &batch)?;
    if args.store.stats {
        print_stats(&stats.snapshot());
    }
    Ok(())
}
