//! `lakeseek query` and `lakeseek take`: argument structs and runners (wired as
//! subcommands by `src/bin/lakeseek.rs`).
//!
//! * `lakeseek query <DATASET_URL> --filter "<predicate>" [--columns a,b] [--version N]
//!   [--explain] [--allow-scan] [--stats] [--storage-option k=v]` prints
//!   `{"row_addresses":[...]}` (ascending) or, with `--columns`, one JSON object per row
//!   (`_rowaddr` first). `--explain` prints the plan (segments, pages, byte ranges) as JSON
//!   on stderr before the pages are fetched.
//! * `lakeseek take <DATASET_URL> --rows a,b,c --columns x,y` prints one JSON object per
//!   row, in the order given (deleted rows are skipped, as lance does).
//!
//! A filter holding `any_element(list_col, '...')` calls (alone, under `NOT`, or combined
//! with other predicates by `AND`) is answered by the list element index;
//! `--explain` then shows, per conjunct, whether the list element index answered exactly,
//! as a superset with recheck, as a complement (NOT), or not at all, and the encoded
//! ranges searched.
//!
//! * `lakeseek query <DATASET_URL> --search TEXT --search-column COL [--operator and]
//!   [--phrase [--slop N]] [-k K] [--filter F] [--columns a,b] [--index-only]` ranks rows by BM25 as pylance does and prints
//!   `{"row_addresses":[...],"scores":[...]}` best first (or, with `--columns`, one JSON
//!   object per row, best first, `_score` last).
//!
//! `--stats` prints `{"requests":..,"bytes":..,"round_trips":..}` on stderr.

use std::io::Write;

use std::sync::Arc;

use arrow_array::{Float32Array, RecordBatch};
use arrow_schema::{DataType, Field};

use crate::cli::parse_key_value;
use crate::{Dataset, Error, IoStats, Result, SearchOperator};

/// `lakeseek query`.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct QueryArgs {
    /// Dataset URL (s3://, gs://, az://, http(s)://, file:// or a local path).
    pub dataset: String,
    /// Filter in Lance/DataFusion SQL, e.g. `key = 'abc'`, `ts >= TIMESTAMP '2024-01-01 00:00:00'`,
    /// `contains(name, 'ali')` or `name LIKE 'tr_nt%'` (an NGRAM index answers `contains`,
    /// `LIKE` and `starts_with`; `ILIKE` and `NOT LIKE` need `--allow-scan`). Required unless
    /// `--nearest` or `--search` is given; with them, only rows passing it are returned.
    #[arg(long, default_value = "")]
    pub filter: String,
    /// Full-text search: rank rows of `--search-column` (which needs an INVERTED index) by
    /// BM25 for this text, as pylance does; prints `{"row_addresses":[...],"scores":[...]}`
    /// best first.
    #[arg(long, requires = "search_column")]
    pub search: Option<String>,
    /// The column `--search` searches.
    #[arg(long)]
    pub search_column: Option<String>,
    /// How `--search`'s tokens combine: `or` (default) or `and`.
    #[arg(long, value_parser = ["or", "and"], default_value = "or")]
    pub operator: String,
    /// `--search`: skip fragments the index does not cover (default: tokenize them).
    #[arg(long)]
    pub index_only: bool,
    /// `--search` the text as a phrase: its tokens in order (the INVERTED index must have
    /// been built with positions, `with_position=True`).
    #[arg(long, requires = "search")]
    pub phrase: bool,
    /// `--phrase`: positions allowed between the phrase's tokens (default 0: adjacent).
    #[arg(long, requires = "phrase")]
    pub slop: Option<u32>,
    /// Print these columns of the matching rows (JSON lines) instead of row addresses.
    #[arg(long, value_delimiter = ',')]
    pub columns: Vec<String>,
    /// Dataset version (default: latest).
    #[arg(long)]
    pub version: Option<u64>,
    /// Print the plan (segments, pages, byte ranges) on stderr before fetching pages.
    #[arg(long)]
    pub explain: bool,
    /// Scan the data when the column has no usable index.
    #[arg(long)]
    pub allow_scan: bool,
    /// Print `{"requests":..,"bytes":..,"round_trips":..}` on stderr.
    #[arg(long)]
    pub stats: bool,
    /// Object store option `key=value` (repeatable), e.g. `aws_endpoint=http://127.0.0.1:4566`.
    #[arg(long = "storage-option", value_parser = parse_key_value)]
    pub storage_options: Vec<(String, String)>,
    /// Nearest-neighbour search (`--nearest COL --vector ...`).
    #[command(flatten)]
    pub nearest: crate::cli::nearest::NearestArgs,
}

/// `lakeseek take`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct TakeArgs {
    /// Dataset URL.
    pub dataset: String,
    /// Row addresses (fragment << 32 | offset), comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        required_unless_present = "row_ids",
        conflicts_with = "row_ids"
    )]
    pub rows: Vec<u64>,
    /// Stable row ids (`_rowid`), comma-separated, instead of `--rows`: the rows with these
    /// ids in the order given (an id whose rows are deleted is left out).
    #[arg(long = "row-ids", value_delimiter = ',')]
    pub row_ids: Vec<u64>,
    /// Columns to read, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    pub columns: Vec<String>,
    /// Dataset version (default: latest).
    #[arg(long)]
    pub version: Option<u64>,
    /// Print `{"requests":..,"bytes":..,"round_trips":..}` on stderr.
    #[arg(long)]
    pub stats: bool,
    /// Object store option `key=value` (repeatable).
    #[arg(long = "storage-option", value_parser = parse_key_value)]
    pub storage_options: Vec<(String, String)>,
}

/// Run `lakeseek query`, writing to `out` and `err`.
pub(crate) async fn run_query_to(
    args: &QueryArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<()> {
    let stats = IoStats::new();
    let result = query_inner(args, &stats, out, err).await;
    print_stats(args.stats, &stats, err)?;
    result
}

async fn query_inner(
    args: &QueryArgs,
    stats: &IoStats,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<()> {
    let dataset = open_dataset(&args.dataset, &args.storage_options, args.version, stats).await?;
    if let Some(column) = &args.nearest.nearest {
        let filter = Some(args.filter.as_str()).filter(|f| !f.is_empty());
        return crate::cli::nearest::run_nearest(
            &dataset,
            &args.nearest,
            column,
            filter,
            &args.columns,
            args.explain,
            args.allow_scan,
            out,
            err,
        )
        .await;
    }
    if let Some(text) = &args.search {
        return run_search(args, &dataset, text, out, err).await;
    }
    if args.filter.is_empty() {
        return Err(Error::InvalidArgument(
            "lakeseek query needs --filter (or --nearest COLUMN --vector ..., or --search TEXT)"
                .into(),
        ));
    }
    let filter = args.filter.as_str();
    let query = dataset.query().filter(filter).allow_scan(args.allow_scan);
    let plan = query.plan().await.map_err(name_the_scan_flag)?;
    if let Some(notice) = plan.full_scan_notice() {
        writeln!(err, "lakeseek: {notice} (--allow-scan)")?;
    }
    if args.explain {
        let text = serde_json::to_string_pretty(&plan.explain()).map_err(json_error)?;
        writeln!(err, "{text}")?;
    }
    let addresses = dataset.execute_planned_filter(&plan).await?;
    write_answer(args, &dataset, addresses, out).await
}

/// A filter refused for want of a scan: the library names its permission
/// (`Query::allow_scan`), the command line its flag.
fn name_the_scan_flag(e: crate::Error) -> crate::Error {
    match e {
        crate::Error::InvalidArgument(m) if m.contains("Query::allow_scan") => {
            crate::Error::InvalidArgument(format!("{m}; pass --allow-scan"))
        }
        other => other,
    }
}

/// Open `url` (at `version`, default latest) with the process's session (its caches and
/// `--max-requests`), counting every request into `stats`.
async fn open_dataset(
    url: &str,
    storage_options: &[(String, String)],
    version: Option<u64>,
    stats: &IoStats,
) -> Result<Dataset> {
    let session = crate::cli::process_session();
    let mut builder = Dataset::builder(url)
        .storage_options(storage_options.iter().cloned())
        .session(&session)
        .stats(stats);
    if let Some(version) = version {
        builder = builder.version(version);
    }
    builder.open().await
}

/// Print row addresses, or the requested columns of those rows.
async fn write_answer(
    args: &QueryArgs,
    dataset: &Dataset,
    addresses: Vec<u64>,
    out: &mut dyn Write,
) -> Result<()> {
    if args.columns.is_empty() {
        let line = serde_json::json!({ "row_addresses": addresses });
        writeln!(out, "{line}")?;
    } else {
        let columns: Vec<&str> = args.columns.iter().map(String::as_str).collect();
        let batch = dataset.take(&addresses, &columns).await?;
        write_json_lines(&batch, out)?;
    }
    Ok(())
}

/// Run `lakeseek take`, writing to `out` and `err`.
pub(crate) async fn run_take_to(
    args: &TakeArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<()> {
    let stats = IoStats::new();
    let result = async {
        let dataset =
            open_dataset(&args.dataset, &args.storage_options, args.version, &stats).await?;
        let columns: Vec<&str> = args.columns.iter().map(String::as_str).collect();
        let batch = if args.row_ids.is_empty() {
            dataset.take(&args.rows, &columns).await?
        } else {
            dataset.take_row_ids(&args.row_ids, &columns).await?
        };
        write_json_lines(&batch, out)
    }
    .await;
    print_stats(args.stats, &stats, err)?;
    result
}

fn write_json_lines(batch: &RecordBatch, out: &mut dyn Write) -> Result<()> {
    let mut writer = arrow_json::LineDelimitedWriter::new(out);
    writer.write_batches(&[batch])?;
    writer.finish()?;
    Ok(())
}

fn print_stats(enabled: bool, stats: &IoStats, err: &mut dyn Write) -> Result<()> {
    if enabled {
        let line = serde_json::to_string(&stats.snapshot()).map_err(json_error)?;
        writeln!(err, "{line}")?;
    }
    Ok(())
}

fn json_error(e: serde_json::Error) -> Error {
    Error::InvalidArgument(format!("JSON output: {e}"))
}

/// Run the search `args` asks for on `dataset`.
async fn run_search(
    args: &QueryArgs,
    dataset: &Dataset,
    text: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<()> {
    let column = args.search_column.as_deref().unwrap_or_default();
    let mut search = dataset
        .search(text)
        .column(column)
        .index_only(args.index_only)
        .allow_scan(args.allow_scan)
        .phrase(args.phrase)
        .operator(if args.operator == "and" {
            SearchOperator::And
        } else {
            SearchOperator::Or
        });
    if let Some(slop) = args.slop {
        search = search.slop(slop);
    }
    if let Some(k) = args.nearest.k {
        search = search.k(k);
    }
    if !args.filter.is_empty() {
        search = search.filter(&args.filter);
    }
    let columns: Vec<&str> = args.columns.iter().map(String::as_str).collect();
    if !columns.is_empty() {
        search = search.columns(&columns);
    }
    let found = search.execute().await.map_err(name_the_scan_flag)?;
    if args.explain {
        let text = serde_json::to_string_pretty(&found.explain).map_err(json_error)?;
        writeln!(err, "{text}")?;
    }
    match &found.batch {
        None => {
            let line = serde_json::json!({
                "row_addresses": found.row_addresses,
                "scores": found.scores,
            });
            writeln!(out, "{line}")?;
        }
        Some(batch) => write_json_lines(&with_scores(batch, &found.scores)?, out)?,
    }
    Ok(())
}

/// `batch` with a `_score` column appended.
fn with_scores(batch: &RecordBatch, scores: &[f32]) -> Result<RecordBatch> {
    let mut fields: Vec<Field> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    fields.push(Field::new("_score", DataType::Float32, false));
    let mut columns = batch.columns().to_vec();
    columns.push(Arc::new(Float32Array::from(scores.to_vec())));
    RecordBatch::try_new(Arc::new(arrow_schema::Schema::new(fields)), columns).map_err(Error::from)
}
