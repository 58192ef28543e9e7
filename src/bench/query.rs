//! `lakeseek bench query`: point lookups on a dataset. Before measuring, random rows of the
//! `--values-from` column are read (seeded, in a session of their own so they warm nothing)
//! and each query's filter is the `--filter-template` with `{}` replaced by one of those
//! values (string values have `'` doubled, so `key = '{}'` stays a valid literal).
//!
//! A filter is answered as `lakeseek query` answers it, by a [`Query`](crate::Query): from
//! the BTree index (or, for `any_element(...)` calls, the list element index;
//! `--allow-scan` permits scans). Cold operation: fresh session, open (manifest) + query.
//! Warm: one open dataset and session.

use std::time::Instant;

use arrow_array::Array;
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::DataType;

use crate::bench::report::{BenchReport, BenchSettings, OperationRecord, PhaseRecord};
use crate::bench::take::{add, open_bench_dataset, open_dataset, row_addresses};
use crate::bench::{
    drive_operations, elapsed_ms, operation_seed, random_rows, splitmix64, warmup_seed, BenchStore,
    CommonBenchArgs,
};
use crate::{Dataset, Error, IoStats, IoStatsSnapshot, Result, Session};

/// Placeholder replaced by a value in `--filter-template`.
pub(crate) const TEMPLATE_PLACEHOLDER: &str = "{}";

/// `lakeseek bench query`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct QueryBenchArgs {
    /// Dataset URL or path.
    pub(crate) dataset: String,
    /// Filter with `{}` where a value goes, e.g. `key = '{}'` or `id = {}`.
    #[arg(
        long = "filter-template",
        required_unless_present = "filters",
        requires = "values_from"
    )]
    pub(crate) filter_template: Option<String>,
    /// Column whose values (of random rows) fill the template.
    #[arg(long = "values-from")]
    pub(crate) values_from: Option<String>,
    /// Instead of a template: a file of filters, one per line; the first `--warmup` lines
    /// are the warm-ups, then operation `i` runs line `warmup + i` (cycling), e.g. the same
    /// `IN` lists or ranges another reader is measured with.
    #[arg(long, value_name = "FILE", conflicts_with = "filter_template")]
    pub(crate) filters: Option<std::path::PathBuf>,
    /// Queries to measure.
    #[arg(long, default_value_t = 200)]
    pub(crate) queries: u64,
    /// Dataset version (default: latest).
    #[arg(long)]
    pub(crate) version: Option<u64>,
    /// Scan the data when the filtered column has no usable index.
    #[arg(long)]
    pub(crate) allow_scan: bool,
    /// Shared benchmark flags.
    #[command(flatten)]
    pub(crate) common: CommonBenchArgs,
}

/// Run the query benchmark and build its report (nothing printed).
pub(crate) async fn run_query_bench(args: &QueryBenchArgs) -> Result<BenchReport> {
    let common = &args.common;
    let setup = IoStats::new();
    let (store, shared) =
        open_bench_dataset(&args.dataset, args.version, common, args.queries, &setup).await?;
    let filters = QueryFilters::new(&store, args, &setup).await?;
    let mut warmup_cost = IoStatsSnapshot::default();
    for j in 0..common.warmup {
        let filter = filters.warmup(args, j);
        let record = query_once(&store, &shared, args, &filter, j).await?;
        warmup_cost = add(warmup_cost, record.io());
    }
    let driven = drive_operations(args.queries, common.concurrency, common.keep_going, |i| {
        let filter = filters.operation(args, i);
        let (store, shared) = (&store, &shared);
        async move { query_once(store, shared, args, &filter, i).await }
    })
    .await?;
    let settings = BenchSettings {
        columns: Vec::new(),
        rows_per_take: None,
        filter_template: args.filter_template.clone().or_else(|| {
            let file = args.filters.as_ref()?;
            Some(format!("(filters from {})", file.display()))
        }),
        values_from: args.values_from.clone(),
        ..common.settings("query", &args.dataset, &store, "dataset")
    };
    Ok(BenchReport::new(
        settings,
        args.queries,
        driven.records,
        driven.interrupted,
        driven.wall_seconds,
        add(setup.snapshot(), warmup_cost),
    )
    .with_errors(driven.errors, driven.error_messages))
}

/// Where the measured filters come from.
enum QueryFilters {
    /// `--filter-template` filled with these values (`--values-from`).
    Template(String, Vec<String>),
    /// `--filters`: the lines of the file.
    Listed(Vec<String>),
}

impl QueryFilters {
    async fn new(store: &BenchStore, args: &QueryBenchArgs, setup: &IoStats) -> Result<Self> {
        match (&args.filters, &args.filter_template, &args.values_from) {
            (Some(file), _, _) => Ok(Self::Listed(read_filters(file, args.common.warmup)?)),
            (None, Some(template), Some(column)) => {
                if !template.contains(TEMPLATE_PLACEHOLDER) {
                    return Err(Error::InvalidArgument(format!(
                        "--filter-template {template:?} has no {TEMPLATE_PLACEHOLDER} for the value"
                    )));
                }
                let values = sample_values(store, args, column, setup).await?;
                Ok(Self::Template(template.clone(), values))
            }
            _ => Err(Error::InvalidArgument(
                "give --filter-template with --values-from, or --filters FILE".into(),
            )),
        }
    }

    /// The filter of warm-up `j`.
    fn warmup(&self, args: &QueryBenchArgs, j: u64) -> String {
        let common = &args.common;
        match self {
            Self::Template(t, values) => {
                filled(t, values, warmup_seed(common.seed, common.warmup, j))
            }
            Self::Listed(lines) => lines[(j as usize) % lines.len()].clone(),
        }
    }

    /// The filter of operation `i`.
    fn operation(&self, args: &QueryBenchArgs, i: u64) -> String {
        match self {
            Self::Template(t, values) => filled(t, values, operation_seed(args.common.seed, i)),
            Self::Listed(lines) => {
                let skip = (args.common.warmup as usize).min(lines.len() - 1);
                let measured = &lines[skip..];
                measured[(i as usize) % measured.len()].clone()
            }
        }
    }
}

/// `template` filled with the value the operation with `seed` picks.
fn filled(template: &str, values: &[String], seed: u64) -> String {
    let mut state = seed;
    let pick = (splitmix64(&mut state) % values.len().max(1) as u64) as usize;
    let value = values.get(pick).map(String::as_str).unwrap_or_default();
    fill_template(template, value)
}

/// The non-empty lines of a `--filters` file: at least `warmup + 1` of them.
fn read_filters(file: &std::path::Path, warmup: u64) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| Error::InvalidArgument(format!("--filters {}: {e}", file.display())))?;
    let lines: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    if (lines.len() as u64) <= warmup {
        return Err(Error::InvalidArgument(format!(
            "--filters {}: {} filters, need more than --warmup {warmup}",
            file.display(),
            lines.len()
        )));
    }
    Ok(lines)
}

/// Replace every `{}` in `template` with `value`.
pub(crate) fn fill_template(template: &str, value: &str) -> String {
    template.replace(TEMPLATE_PLACEHOLDER, value)
}

/// Non-null values of up to `--queries` random rows of `--values-from`, as SQL text.
async fn sample_values(
    store: &BenchStore,
    args: &QueryBenchArgs,
    column: &str,
    setup: &IoStats,
) -> Result<Vec<String>> {
    // A session of its own: sampling must not warm the measured operations' caches.
    let dataset = open_dataset(store, args.version, &Session::default(), setup).await?;
    let field = dataset.column_info(column).ok_or_else(|| {
        Error::InvalidArgument(format!(
            "--values-from: no column named {column:?} in {}",
            args.dataset
        ))
    })?;
    let mapped = dataset.column_arrow_type(column);
    mapped.ok().filter(|_| !field.has_children).ok_or_else(|| {
        Error::InvalidArgument(format!(
            "--values-from: column {column:?} has type {}, which cannot fill a template",
            field.logical_type
        ))
    })?;
    let fragments: Vec<(u64, u64)> = dataset
        .fragments()
        .iter()
        .map(|f| (f.id, f.physical_rows))
        .collect();
    let total: u64 = fragments.iter().map(|(_, n)| n).sum();
    if total == 0 {
        return Err(Error::InvalidArgument(format!(
            "{} has no rows to take query values from",
            args.dataset
        )));
    }
    let rows = random_rows(args.common.seed, args.queries.min(total), total)?;
    let addresses = row_addresses(&rows, &fragments);
    let batch = dataset.take(&addresses, &[column]).await?;
    let array = batch.column(1);
    let values = format_values(array.as_ref())?;
    if values.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "--values-from: the {} sampled rows of {column:?} are all null or deleted",
            rows.len()
        )));
    }
    Ok(values)
}

/// Non-null values of `array` as SQL literal text (quotes in strings doubled).
pub(crate) fn format_values(array: &dyn Array) -> Result<Vec<String>> {
    let formatter = ArrayFormatter::try_new(array, &FormatOptions::default())?;
    let is_string = matches!(
        array.data_type(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
    );
    Ok((0..array.len())
        .filter(|i| array.is_valid(*i))
        .map(|i| {
            let text = formatter.value(i).to_string();
            if is_string {
                text.replace('\'', "''")
            } else {
                text
            }
        })
        .collect())
}

async fn query_once(
    store: &BenchStore,
    shared: &Dataset,
    args: &QueryBenchArgs,
    filter: &str,
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
    let rows = answer(dataset, filter, args.allow_scan, &query_stats).await?;
    let total = add(open_stats.snapshot(), query_stats.snapshot());
    Ok(OperationRecord {
        index,
        latency_ms: elapsed_ms(started),
        requests: total.requests,
        bytes: total.bytes,
        round_trips: total.round_trips,
        rows,
        open,
        recall: None,
    })
}

/// Number of rows matching `filter`, answered as `lakeseek query` does.
async fn answer(dataset: &Dataset, filter: &str, allow_scan: bool, stats: &IoStats) -> Result<u64> {
    let query = dataset.query().filter(filter).allow_scan(allow_scan);
    let result = query.stats(stats).execute().await?;
    Ok(result.row_addresses.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringArray};

    #[test]
    fn values_are_sql_text_without_nulls() {
        let s = StringArray::from(vec![Some("a'b"), None, Some("c")]);
        assert_eq!(format_values(&s).unwrap(), vec!["a''b", "c"]);
        let i = Int64Array::from(vec![Some(-5), Some(7)]);
        assert_eq!(format_values(&i).unwrap(), vec!["-5", "7"]);
        assert_eq!(
            fill_template("k = '{}' OR j = '{}'", "x"),
            "k = 'x' OR j = 'x'"
        );
    }
}
