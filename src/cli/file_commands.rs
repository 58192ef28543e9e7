//! `lakeseek inspect` and `lakeseek read`: Lance files.

use std::io::Write;
use std::sync::Arc;

use arrow_array::{RecordBatch, UInt32Array};
use object_store::path::Path;

use crate::cli::{parse_rows, print_stats, write_json_lines, StoreArgs};
use crate::error::{Error, Result};
use crate::io::store::{open_url_with, OpenOptions};
use crate::io::{FetchOptions, IoStats, RangeFetcher};
use crate::lance::data_file::DataFileReader;
use crate::lance::inspect::PlanInspection;
use crate::lance::page::{PageInit, PageLayout};
use crate::lance::reader::{FileInspection, LanceFileReader, ReaderCaches};

/// `lakeseek inspect <URL> [--json]`.
#[derive(Debug, Clone, clap::Args)]
pub struct InspectArgs {
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
pub struct ReadArgs {
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

/// A fetcher over the store of `url` whose requests wait for slots of the admission
/// control of the process's session (`--max-requests`), and the object's path.
fn admitted_fetcher(url: &str, store: &StoreArgs) -> Result<(RangeFetcher, Path)> {
    let opened = open_url_with(url, &OpenOptions::new(&store.storage_options))?;
    let admission = crate::cli::process_session()
        .admission()
        .for_opened(&opened);
    let fetcher = RangeFetcher::new(Arc::clone(&opened.source), FetchOptions::default())
        .with_admission(Some(admission));
    Ok((fetcher, opened.path))
}

/// Open a Lance file reader on `url` with fresh caches.
pub async fn open_file(url: &str, store: &StoreArgs, stats: &IoStats) -> Result<LanceFileReader> {
    let (fetcher, path) = admitted_fetcher(url, store)?;
    LanceFileReader::open(
        fetcher,
        path,
        None,
        Arc::new(ReaderCaches::default()),
        stats,
    )
    .await
}

/// Open a Lance file of any version (v2, or legacy v1) on `url` with fresh caches.
async fn open_any_file(url: &str, store: &StoreArgs, stats: &IoStats) -> Result<DataFileReader> {
    let (fetcher, path) = admitted_fetcher(url, store)?;
    let caches = Arc::new(ReaderCaches::default());
    DataFileReader::open(fetcher, path, None, caches, None, stats).await
}

/// Run `inspect`: a Lance file, or (when no file is at the URL) a dataset.
pub async fn run_inspect(args: &InspectArgs, out: &mut dyn Write) -> Result<()> {
    let stats = IoStats::new();
    let file = match open_any_file(&args.url, &args.store, &stats).await {
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
    let inspection = match file {
        DataFileReader::V2(reader) => {
            let mut inspection = reader.inspect();
            if args.plans {
                add_structural_plans(&reader, &mut inspection, &stats).await?;
            }
            inspection
        }
        DataFileReader::Legacy(reader) => crate::lance::legacy::inspect::inspect(&reader),
    };
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

/// Decode every sparse page's structural plan (one wave) and attach its size report.
async fn add_structural_plans(
    reader: &LanceFileReader,
    inspection: &mut FileInspection,
    stats: &IoStats,
) -> Result<()> {
    let mut pages = Vec::new();
    for (column, info) in reader.metadata().columns.iter().enumerate() {
        for (page, p) in info.pages.iter().enumerate() {
            if matches!(p.layout, PageLayout::Sparse(_)) {
                pages.push((column, page));
            }
        }
    }
    let inits = reader.page_inits(&pages, stats).await?;
    for ((column, page), init) in pages.iter().zip(inits) {
        if let (PageInit::Sparse(sparse), Some(target)) = (
            init.as_ref(),
            inspection
                .columns
                .get_mut(*column)
                .and_then(|c| c.pages.get_mut(*page)),
        ) {
            target.structural_plan = Some(PlanInspection::of(&sparse.plan));
        }
    }
    Ok(())
}

/// Human-readable inspection.
pub fn write_inspection_text(out: &mut dyn Write, i: &FileInspection) -> Result<()> {
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
pub async fn run_read(args: &ReadArgs, out: &mut dyn Write) -> Result<()> {
    let stats = IoStats::new();
    let reader = open_any_file(&args.url, &args.store, &stats).await?;
    let requested = parse_rows(&args.rows)?;
    let columns: Vec<usize> = if args.columns.is_empty() {
        (0..reader.schema().fields.len()).collect()
    } else {
        let names: Vec<&str> = args.columns.iter().map(String::as_str).collect();
        reader.field_indices(&names)?
    };
    let (selection, order) = requested.to_selection();
    let batch = reader.read_rows(&columns, &selection, &stats).await?;
    let batch = match order {
        Some(order) => reorder(&batch, &order)?,
        None => batch,
    };
    write_json_lines(out, &batch)?;
    if args.store.stats {
        print_stats(&stats.snapshot());
    }
    Ok(())
}

/// Rows of `batch` in `order` (indices into the batch).
pub fn reorder(batch: &RecordBatch, order: &[u32]) -> Result<RecordBatch> {
    let indices = UInt32Array::from(order.to_vec());
    Ok(arrow_select::take::take_record_batch(batch, &indices)?)
}
