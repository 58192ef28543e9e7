//! `lakeseek demo [--latency-ms N] [--json]`: the main job on bundled sample data — no
//! credentials, no network.
//!
//! The bundled sample data ([`crate::sample`], the files of `assets/demo/` written by
//! `assets/demo/gen_demo.py` with pylance 14.0.2: a 40,000-row Lance 2.3 dataset in 4
//! fragments with a BTree index on `key`, a list element index on the 2.3 sparse `detections`
//! column, and a small ecpfs vector index) is put into an in-memory object store and opened
//! through the public API ([`crate::Dataset`], [`crate::ecp::EcpIndex`]) with S3's
//! coalescing gap (64 KiB), every request counted. `--latency-ms N` wraps the store in
//! object_store's [`ThrottledStore`], which sleeps N ms before every GET and LIST, as S3's
//! first byte would. The demo then runs
//!
//! * a) a BTree lookup `key = '...'`,
//! * b) `any_element(detections, 'label = ''car'' AND confidence > 0.9')` from the list
//!   element index,
//! * c) a take of 20 random rows of `detections` by row address (cold, then 20 other rows
//!   warm),
//! * d) a k-NN search on the ecpfs index,
//!
//! and prints, per step, its answer, requests, bytes, round trips and time, beside what reading
//! the whole column (sum of its page sizes, from the file metadata) or index would cost. The
//! answers are compared with pylance's (and, for the vector search, the numpy reference
//! search's), stored by the generator in `assets/demo/answers.json`. `--json` prints one JSON
//! object instead of the table.
//!
//! [`ThrottledStore`]: object_store::throttle::ThrottledStore

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use object_store::throttle::{ThrottleConfig, ThrottledStore};
use object_store::ObjectStore;
use serde::Serialize;
use serde_json::Value;

use crate::ecp::{EcpIndex, OpenOptions as EcpOpenOptions, QueryOptions};
use crate::sample;
use crate::{Dataset, Error, IoStats, IoStatsSnapshot, LanceFile, Result, Session};

/// The demo's queries and pylance's answers to them (`assets/demo/answers.json`).
const ANSWERS: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/assets/demo/answers.json"
));

/// The dataset's directory in the bundle.
const DATASET_ROOT: &str = "frames.lance";
/// The ecpfs index's directory in the bundle.
const ECP_ROOT: &str = "ecp_index";
/// S3's coalescing gap (lakeseek's remote default), so requests are counted as on S3.
const S3_COALESCE_GAP: &str = "65536";
/// The sparse list column the take and `any_element` steps read.
const DETECTIONS: &str = "detections";
/// The BTree-indexed column.
const KEY: &str = "key";

/// `lakeseek demo`.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct DemoArgs {
    /// Wait this many milliseconds before every request (and listing), like S3's first byte.
    #[arg(long = "latency-ms", default_value_t = 0)]
    pub(crate) latency_ms: u64,
    /// Print one JSON object (every step, its answer and I/O) instead of the table.
    #[arg(long)]
    pub(crate) json: bool,
}

/// What one step cost and answered.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct DemoStep {
    /// Short name: `open`, `btree`, `any_element`, `take_cold`, `take_warm`, `ecp_open`,
    /// `ecp_search`.
    pub(crate) step: &'static str,
    /// What ran (the filter, the rows, the query).
    pub(crate) what: String,
    /// The answer in a few words.
    pub(crate) answer: String,
    /// Row addresses (filters, takes) or item ids (vector search) answered.
    pub(crate) result: Vec<u64>,
    /// The values read (takes: the `detections` list of each row, in the order asked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) values: Option<Value>,
    /// Requests, bytes and round trips of this step (`round_trips` as [`IoStats`] counts
    /// them: overlapping requests are one wave).
    pub(crate) io: IoStatsSnapshot,
    /// Round trips as the depth of the step's request graph: the step's time on a paused
    /// clock where every request (and listing) takes 1 ms and computing takes none.
    pub(crate) depth: u64,
    /// Wall time in milliseconds.
    pub(crate) millis: f64,
    /// What reading the whole column or index instead would cost.
    pub(crate) whole: Option<WholeCost>,
    /// True when the answer equals pylance's (or the reference search's); `None` when there
    /// is nothing to compare (opens).
    pub(crate) matches_reference: Option<bool>,
}

/// What reading a whole column (all its pages) or index (all its objects) costs.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct WholeCost {
    /// What would be read, e.g. `detections column`.
    pub(crate) what: String,
    /// Bytes: sum of the page sizes (columns) or object sizes (indices).
    pub(crate) bytes: u64,
    /// Pages or objects that holds.
    pub(crate) parts: u64,
    /// `pages` or `objects`.
    pub(crate) unit: &'static str,
}

/// The demo's report (`--json`).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct DemoReport {
    /// Injected delay per request, ms.
    pub(crate) latency_ms: u64,
    /// Bytes of bundled sample data.
    pub(crate) bundled_bytes: u64,
    /// Every step in order.
    pub(crate) steps: Vec<DemoStep>,
    /// True when every answer matched its reference.
    pub(crate) all_match: bool,
}

/// Run the demo, writing the table (or `--json`) to `out`.
#[allow(
    clippy::future_not_send,
    reason = "`out` is the CLI's stdout lock (not Send); the CLI awaits this on its own thread"
)]
pub(crate) async fn run_demo(args: &DemoArgs, out: &mut dyn Write) -> Result<()> {
    let report = demo_report(args).await?;
    if args.json {
        let line = serde_json::to_string(&report)
            .map_err(|e| Error::InvalidArgument(format!("JSON output: {e}")))?;
        writeln!(out, "{line}")?;
        return Ok(());
    }
    write_table(&report, out)
}

/// Load the bundle, run every step, compare the answers.
pub(crate) async fn demo_report(args: &DemoArgs) -> Result<DemoReport> {
    let depths = measure_depths().await?;
    let mut report = run_steps(args.latency_ms).await?;
    for (step, depth) in report.steps.iter_mut().zip(depths) {
        step.depth = depth;
    }
    Ok(report)
}

/// Every step's round trips as the depth of its request graph: the steps run once more on a
/// current-thread runtime with a paused clock, each request taking 1 ms of virtual time;
/// the clock only moves while every task waits for a request, so a step's virtual time in
/// ms is the longest chain of requests that had to wait for each other.
async fn measure_depths() -> Result<Vec<u64>> {
    let measure = || -> Result<Vec<u64>> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()?;
        let report = runtime.block_on(run_steps(1))?;
        Ok(report
            .steps
            .iter()
            .map(|s| s.millis.round() as u64)
            .collect())
    };
    tokio::task::spawn_blocking(measure)
        .await
        .map_err(|e| Error::InvalidArgument(format!("demo depth measurement: {e}")))?
}

/// Load the bundle into a store that waits `latency_ms` per request, run every step,
/// compare the answers.
async fn run_steps(latency_ms: u64) -> Result<DemoReport> {
    let answers: Value = serde_json::from_str(ANSWERS)
        .map_err(|e| Error::corrupt(format!("bundled answers.json: {e}")).with_source(e))?;
    let store = sample::store().await?;
    let store: Arc<dyn ObjectStore> = if latency_ms == 0 {
        store
    } else {
        let delay = Duration::from_millis(latency_ms);
        let config = ThrottleConfig {
            wait_get_per_call: delay,
            wait_list_per_call: delay,
            ..ThrottleConfig::default()
        };
        Arc::new(ThrottledStore::new(store, config))
    };
    let session = Session::default();
    let mut steps = Vec::new();
    dataset_steps(&answers, &store, &session, &mut steps).await?;
    ecp_steps(&answers, &store, &session, &mut steps).await?;
    let all_match = steps.iter().all(|s| s.matches_reference != Some(false));
    Ok(DemoReport {
        latency_ms,
        bundled_bytes: sample::FILES.iter().map(|(_, b)| b.len() as u64).sum(),
        steps,
        all_match,
    })
}

/// Time `fut`, counting its I/O into a fresh [`IoStats`].
async fn measured<T, F>(fut: impl FnOnce(IoStats) -> F) -> Result<(T, IoStatsSnapshot, f64)>
where
    F: std::future::Future<Output = Result<T>>,
{
    let stats = IoStats::new();
    let start = Instant::now();
    let value = fut(stats.clone()).await?;
    Ok((value, stats.snapshot(), start.elapsed().as_secs_f64() * 1e3))
}

/// Open, BTree lookup, `any_element`, cold and warm take.
async fn dataset_steps(
    answers: &Value,
    store: &Arc<dyn ObjectStore>,
    session: &Session,
    steps: &mut Vec<DemoStep>,
) -> Result<()> {
    let dataset = open_step(store, session, steps).await?;
    let whole = ColumnSizes::of(&dataset, store).await?;
    filter_steps(answers, &dataset, &whole, steps).await?;
    take_steps(answers, &dataset, &whole, steps).await
}

/// The `open` step: the bundled dataset opened over `store`.
async fn open_step(
    store: &Arc<dyn ObjectStore>,
    session: &Session,
    steps: &mut Vec<DemoStep>,
) -> Result<Dataset> {
    let (dataset, io, millis) = measured(|stats| {
        Dataset::builder(sample::DATASET_URL)
            .object_store(Arc::clone(store))
            .storage_option("coalesce_gap", S3_COALESCE_GAP)
            .session(session)
            .stats(&stats)
            .open()
    })
    .await?;
    let fragments = dataset.fragments().len();
    steps.push(DemoStep {
        step: "open",
        what: "open dataset (latest version)".into(),
        answer: format!("v{}, {fragments} fragments", dataset.version()),
        result: Vec::new(),
        values: None,
        io,
        depth: 0,
        millis,
        whole: None,
        matches_reference: None,
    });
    Ok(dataset)
}

/// The `btree` and `any_element` steps: the bundled answers' filters, checked against their
/// row addresses.
async fn filter_steps(
    answers: &Value,
    dataset: &Dataset,
    whole: &ColumnSizes,
    steps: &mut Vec<DemoStep>,
) -> Result<()> {
    for (step, key, whole) in [
        ("btree", "btree", whole.cost(KEY)),
        ("any_element", "any_element", whole.cost(DETECTIONS)),
    ] {
        let filter = text(answers, &[key, "filter"])?;
        let expected = u64_list(answers, &[key, "row_addresses"])?;
        let (rows, io, millis) = measured(|stats| {
            let (dataset, filter) = (dataset.with_stats(&stats), filter.clone());
            async move { dataset.filter(&filter).await }
        })
        .await?;
        steps.push(DemoStep {
            step,
            what: filter,
            answer: plural(rows.len(), "row"),
            matches_reference: Some(rows == expected),
            result: rows,
            values: None,
            io,
            depth: 0,
            millis,
            whole: Some(whole),
        });
    }
    Ok(())
}

/// The `take_cold` and `take_warm` steps: the bundled answers' rows taken, checked against
/// their `detections`.
async fn take_steps(
    answers: &Value,
    dataset: &Dataset,
    whole: &ColumnSizes,
    steps: &mut Vec<DemoStep>,
) -> Result<()> {
    for (step, key) in [("take_cold", "take_cold"), ("take_warm", "take_warm")] {
        let addresses = u64_list(answers, &[key, "row_addresses"])?;
        let expected = answers
            .pointer(&format!("/{key}/detections"))
            .cloned()
            .ok_or_else(|| Error::corrupt(format!("bundled answers.json: no {key}.detections")))?;
        let (lists, io, millis) = measured(|stats| {
            let (dataset, addresses) = (dataset.with_stats(&stats), addresses.clone());
            async move { take_detections(&dataset, &addresses).await }
        })
        .await?;
        let non_empty = lists.as_array().map_or(0, |a| {
            a.iter()
                .filter(|v| v.as_array().is_some_and(|l| !l.is_empty()))
                .count()
        });
        steps.push(DemoStep {
            step,
            what: if step == "take_warm" {
                format!("take {} other rows, warm", addresses.len())
            } else {
                format!("take {} rows of {DETECTIONS}, cold", addresses.len())
            },
            answer: format!("{}, {non_empty} non-empty", plural(addresses.len(), "row")),
            matches_reference: Some(json_equal(&lists, &expected)),
            result: addresses,
            values: Some(lists),
            io,
            depth: 0,
            millis,
            whole: Some(whole.cost(DETECTIONS)),
        });
    }
    Ok(())
}

/// The `detections` lists of the rows at `addresses`, in that order, as JSON values.
async fn take_detections(dataset: &Dataset, addresses: &[u64]) -> Result<Value> {
    let batch = dataset
        .take(addresses, &[DETECTIONS])
        .await?
        .project(&[1])?;
    let mut writer = arrow_json::ArrayWriter::new(Vec::new());
    writer.write(&batch)?;
    writer.finish()?;
    let rows: Value = serde_json::from_slice(&writer.into_inner())
        .map_err(|e| Error::InvalidArgument(format!("JSON of the take: {e}")))?;
    Ok(Value::Array(
        rows.as_array()
            .map(|rows| {
                rows.iter()
                    .map(|r| r.get(DETECTIONS).cloned().unwrap_or(Value::Null))
                    .collect()
            })
            .unwrap_or_default(),
    ))
}

/// Page bytes per top-level column, summed over every data file of the dataset (read from
/// the file metadata with caches and counters of its own, so no step is warmed by it).
struct ColumnSizes {
    /// (column name, bytes, pages).
    columns: Vec<(String, u64, u64)>,
}

impl ColumnSizes {
    async fn of(dataset: &Dataset, store: &Arc<dyn ObjectStore>) -> Result<Self> {
        let description = dataset.describe().await?;
        let files: Vec<_> = description
            .fragments
            .iter()
            .flat_map(|f| f.files.iter())
            .collect();
        // A session of their own: the steps' caches stay cold.
        let (session, stats) = (Session::default(), IoStats::new());
        let opens = files.iter().map(|d| {
            let url = format!("{}/data/{}", dataset.url(), d.path);
            let mut builder = LanceFile::builder(&url)
                .object_store(Arc::clone(store))
                .session(&session)
                .stats(&stats);
            if let Some(size) = d.size_bytes {
                builder = builder.size(size);
            }
            builder.open()
        });
        let mut columns: Vec<(String, u64, u64)> = Vec::new();
        for file in futures::future::try_join_all(opens).await? {
            let inspection = file.inspect(false).await?;
            for field in inspection.fields.iter().filter(|f| f.parent_id == -1) {
                let physical = inspection.columns.get(field.columns.clone()).unwrap_or(&[]);
                let bytes: u64 = physical.iter().map(|c| c.bytes).sum();
                let pages = physical.iter().map(|c| c.pages.len() as u64).sum::<u64>();
                match columns.iter_mut().find(|(n, _, _)| *n == field.path) {
                    Some(entry) => {
                        entry.1 += bytes;
                        entry.2 += pages;
                    }
                    None => columns.push((field.path.clone(), bytes, pages)),
                }
            }
        }
        Ok(Self { columns })
    }

    fn cost(&self, column: &str) -> WholeCost {
        let (bytes, parts) = self
            .columns
            .iter()
            .find(|(n, _, _)| n == column)
            .map_or((0, 0), |(_, b, p)| (*b, *p));
        WholeCost {
            what: format!("{column} column"),
            bytes,
            parts,
            unit: "pages",
        }
    }
}

/// Open the ecpfs index, then search it.
async fn ecp_steps(
    answers: &Value,
    store: &Arc<dyn ObjectStore>,
    session: &Session,
    steps: &mut Vec<DemoStep>,
) -> Result<()> {
    let start = Instant::now();
    // Read through S3's coalescing gap (an index `prefix` of a store uses lakeseek's remote
    // default).
    let prefix = object_store::path::Path::from(format!("sample/{ECP_ROOT}"));
    let options = EcpOpenOptions {
        node_cache_bytes: EcpOpenOptions::default()
            .node_cache_bytes
            .min(session.budget_bytes()),
        ..EcpOpenOptions::default()
    };
    let index = EcpIndex::builder(sample::ECP_INDEX_URL)
        .object_store(Arc::clone(store))
        .prefix(prefix)
        .options(options)
        .open()
        .await?;
    let info = index.info().clone();
    steps.push(DemoStep {
        step: "ecp_open",
        what: "open ecpfs index".into(),
        answer: format!("{} vectors, {}-d", info.total_items, info.dim),
        result: Vec::new(),
        values: None,
        io: index.total_stats(),
        depth: 0,
        millis: start.elapsed().as_secs_f64() * 1e3,
        whole: None,
        matches_reference: None,
    });
    let query: Vec<f32> = answers
        .pointer("/ecp/query")
        .and_then(Value::as_array)
        .map(|q| {
            q.iter()
                .filter_map(Value::as_f64)
                .map(|v| v as f32)
                .collect()
        })
        .unwrap_or_default();
    let k = answers
        .pointer("/ecp/k")
        .and_then(Value::as_u64)
        .unwrap_or(10) as usize;
    let expected = u64_list(answers, &["ecp", "expected", "pages", "0", "ids"])?;
    let start = Instant::now();
    let (page, q) = index.search(query, k, QueryOptions::default()).await?;
    let millis = start.elapsed().as_secs_f64() * 1e3;
    let ids: Vec<u64> = page.ids.iter().map(|&i| u64::from(i)).collect();
    let shown: Vec<String> = ids.iter().take(4).map(u64::to_string).collect();
    steps.push(DemoStep {
        step: "ecp_search",
        what: format!("vector search, k = {k}"),
        answer: format!("ids {}, …", shown.join(", ")),
        matches_reference: Some(ids == expected),
        result: ids,
        values: None,
        io: q.stats(),
        depth: 0,
        millis,
        whole: Some(bundled_sizes(ECP_ROOT)),
    });
    Ok(())
}

/// Bytes and number of the bundled objects under `dir` (a brute-force read of an index).
fn bundled_sizes(dir: &str) -> WholeCost {
    let prefix = format!("{dir}/");
    let files = sample::FILES.iter().filter(|(p, _)| p.starts_with(&prefix));
    let (bytes, parts) = files.fold((0, 0), |(b, n), (_, f)| (b + f.len() as u64, n + 1));
    WholeCost {
        what: "whole index".into(),
        bytes,
        parts,
        unit: "objects",
    }
}

/// The string at `path` of the bundled answers.
fn text(answers: &Value, path: &[&str]) -> Result<String> {
    let pointer = format!("/{}", path.join("/"));
    answers
        .pointer(&pointer)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| Error::corrupt(format!("bundled answers.json: no string at {pointer}")))
}

/// The list of unsigned integers at `path` of the bundled answers.
fn u64_list(answers: &Value, path: &[&str]) -> Result<Vec<u64>> {
    let pointer = format!("/{}", path.join("/"));
    answers
        .pointer(&pointer)
        .and_then(Value::as_array)
        .and_then(|a| a.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>())
        .ok_or_else(|| Error::corrupt(format!("bundled answers.json: no list at {pointer}")))
}

/// JSON equality where numbers compare as float32 (pylance wrote float32 values as the
/// float64 they widen to; arrow-json writes the shortest float32 text).
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64().map(|v| v as f32) == y.as_f64().map(|v| v as f32),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_equal(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

/// "1 row", "275 rows".
fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Bytes as B / KiB / MiB.
fn human_bytes(n: u64) -> String {
    match n {
        0..=1023 => format!("{n} B"),
        1024..=1_048_575 => format!("{:.1} KiB", n as f64 / 1024.0),
        _ => format!("{:.2} MiB", n as f64 / 1_048_576.0),
    }
}

/// The human-readable report: a header, one line per step, the check, why.
fn write_table(report: &DemoReport, out: &mut dyn Write) -> Result<()> {
    let latency = if report.latency_ms > 0 {
        format!("+{} ms per request, like S3", report.latency_ms)
    } else {
        "no added latency: try --latency-ms 20".into()
    };
    writeln!(
        out,
        "lakeseek demo: {} of bundled sample data in an in-memory store, read as from S3 \
         (64 KiB coalescing; {latency})",
        human_bytes(report.bundled_bytes)
    )?;
    writeln!(
        out,
        "  {DATASET_ROOT}: 40,000 rows in 4 fragments, Lance 2.3, BTree on `{KEY}`, list \
         element index on the sparse `{DETECTIONS}`; {ECP_ROOT}: ecpfs vectors\n"
    )?;
    let header = ["step", "answer", "requests", "round trips", "bytes", "ms"];
    writeln!(
        out,
        "{:<37} {:<24} {:>8} {:>11} {:>10} {:>7}   reading all of it instead",
        header[0], header[1], header[2], header[3], header[4], header[5]
    )?;
    for step in &report.steps {
        let whole = step.whole.as_ref().map_or(String::new(), |w| {
            let size = human_bytes(w.bytes);
            format!("{}: {size} in {} {}", w.what, w.parts, w.unit)
        });
        writeln!(
            out,
            "{:<37} {:<24} {:>8} {:>11} {:>10} {:>7.1}   {whole}",
            step_label(step),
            step.answer,
            step.io.requests,
            step.depth,
            human_bytes(step.io.bytes),
            step.millis
        )?;
    }
    for step in report.steps.iter().filter(|s| s.step == "any_element") {
        writeln!(out, "\nb) is {}", step.what)?;
    }
    let checked = if report.all_match {
        "Every answer matches pylance 14.0.2's (the vector search: the numpy reference search's)."
    } else {
        "MISMATCH: some answer differs from pylance's (see --json)."
    };
    writeln!(out, "{checked}")?;
    writeln!(
        out,
        "Round trips: the longest chain of requests that waited for each other (what S3's \
         latency multiplies)."
    )?;
    writeln!(
        out,
        "\nWhy lakeseek: each step fetched only the index pages and column chunks it needed, \
         straight from object storage (no scan, no server), so its cost follows the rows \
         asked for, not the size of the table."
    )?;
    Ok(())
}

/// The table's first column for a step.
fn step_label(step: &DemoStep) -> String {
    match step.step {
        "btree" => format!("a) BTree: {}", step.what),
        "any_element" => "b) any_element (list element index)".into(),
        "take_cold" => format!("c) {}", step.what),
        "take_warm" => format!("   {}", step.what),
        "ecp_search" => format!("d) {}", step.what),
        _ => step.what.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_numbers_compare_as_float32() {
        let pylance: Value = serde_json::json!([{"c": 0.9229999780654907_f64, "l": "car"}]);
        let ours: Value = serde_json::json!([{"c": 0.923_f64, "l": "car"}]);
        assert!(json_equal(&pylance, &ours));
        let other: Value = serde_json::json!([{"c": 0.924_f64, "l": "car"}]);
        assert!(!json_equal(&pylance, &other));
        assert!(!json_equal(
            &serde_json::json!([]),
            &serde_json::json!([[]])
        ));
    }

    #[test]
    fn bundle_holds_the_dataset_and_the_index() {
        let files = sample::FILES;
        assert!(files
            .iter()
            .any(|(p, _)| p.starts_with("frames.lance/_versions/")));
        let index = bundled_sizes(ECP_ROOT);
        assert!(index.parts > 100 && index.bytes > 100_000, "{index:?}");
        let bytes: usize = files.iter().map(|(_, b)| b.len()).sum();
        assert!(bytes < 2 << 20, "bundled demo data is {bytes} bytes");
    }
}
