//! Random-take benchmark of one Lance file: cold (fresh caches, open + take) and warm
//! (shared caches) reads of `--rows-per-take` random rows of one column, reporting
//! requests, bytes, round trips (from `IoStats`) and median latency as JSON.
//!
//! ```sh
//! AWS_ENDPOINT=http://127.0.0.1:4572 AWS_ALLOW_HTTP=true AWS_ACCESS_KEY_ID=dummy \
//! AWS_SECRET_ACCESS_KEY=dummy AWS_REGION=us-east-1 \
//! cargo run --release --example take_bench -- s3://anchors/btree_1000000.lance/data/X.lance id
//! ```
//! Optional args after the column: rows per take (100), cold runs (5), warm takes (20).
//! Row sets are seeded (cold run r uses seed 5000+r, warm take i uses 6000+i) so the same
//! rows can be given to another reader.

use std::sync::Arc;
use std::time::Instant;

use lakeseek::io::store::{open_url_with, OpenOptions};
use lakeseek::io::{FetchOptions, IoStats, IoStatsSnapshot, RangeFetcher};
use lakeseek::lance::reader::{LanceFileReader, ReaderCaches, RowSelection};

/// splitmix64's output function.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Deterministic distinct random rows (splitmix64 with the seed mixed first, so that
/// neighbouring seeds give unrelated row sets), sorted.
fn random_rows(seed: u64, n: usize, total: u64) -> Vec<u64> {
    let mut state = mix(seed ^ 0x6A09_E667_F3BC_C909);
    let mut rows = std::collections::BTreeSet::new();
    while rows.len() < n.min(total as usize) {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        rows.insert(mix(state) % total);
    }
    rows.into_iter().collect()
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    if xs.is_empty() {
        return 0.0;
    }
    xs[xs.len() / 2]
}

#[tokio::main]
async fn main() -> lakeseek::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let url = args
        .first()
        .expect("usage: take_bench URL COLUMN [ROWS_PER_TAKE] [COLD_RUNS] [WARM_TAKES]");
    let column = args.get(1).expect("usage: take_bench URL COLUMN ...");
    let per_take: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100);
    let cold_runs: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(5);
    let warm_takes: u64 = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(20);
    // Extra storage options, e.g. LAKESEEK_BENCH_OPTIONS="coalesce_gap=32768,max_retries=2".
    let extra: Vec<(String, String)> = std::env::var("LAKESEEK_BENCH_OPTIONS")
        .unwrap_or_default()
        .split(',')
        .filter_map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
        })
        .collect();
    let opened = open_url_with(url, &OpenOptions::new(&extra))?;
    let fetcher = RangeFetcher::new(opened.source.clone(), FetchOptions::default());

    let mut cold = Vec::new();
    for run in 0..cold_runs {
        let caches = Arc::new(ReaderCaches::default());
        let open_stats = IoStats::new();
        let t0 = Instant::now();
        let reader = LanceFileReader::open(
            fetcher.clone(),
            opened.path.clone(),
            None,
            caches,
            &open_stats,
        )
        .await?;
        let open_ms = t0.elapsed().as_secs_f64() * 1e3;
        let col = reader.field_indices(&[column.as_str()])?;
        let rows = random_rows(5000 + run, per_take, reader.num_rows());
        let take_stats = IoStats::new();
        let t1 = Instant::now();
        let batch = reader
            .read_rows(&col, &RowSelection::Rows(rows), &take_stats)
            .await?;
        let take_ms = t1.elapsed().as_secs_f64() * 1e3;
        assert_eq!(batch.num_rows(), per_take);
        cold.push((
            open_stats.snapshot(),
            open_ms,
            take_stats.snapshot(),
            take_ms,
        ));
    }

    let caches = Arc::new(ReaderCaches::default());
    let reader = LanceFileReader::open(
        fetcher.clone(),
        opened.path.clone(),
        None,
        caches,
        &IoStats::new(),
    )
    .await?;
    let col = reader.field_indices(&[column.as_str()])?;
    // First take warms the page init cache; then measure new row sets.
    reader
        .read_rows(
            &col,
            &RowSelection::Rows(random_rows(5999, per_take, reader.num_rows())),
            &IoStats::new(),
        )
        .await?;
    let mut warm = Vec::new();
    for i in 0..warm_takes {
        let rows = random_rows(6000 + i, per_take, reader.num_rows());
        let stats = IoStats::new();
        let t = Instant::now();
        reader
            .read_rows(&col, &RowSelection::Rows(rows), &stats)
            .await?;
        warm.push((stats.snapshot(), t.elapsed().as_secs_f64() * 1e3));
    }

    let sum = |xs: &[IoStatsSnapshot]| -> (Vec<u64>, Vec<u64>, Vec<u64>) {
        (
            xs.iter().map(|s| s.requests).collect(),
            xs.iter().map(|s| s.bytes).collect(),
            xs.iter().map(|s| s.round_trips).collect(),
        )
    };
    let (or, ob, ort) = sum(&cold.iter().map(|c| c.0).collect::<Vec<_>>());
    let (tr, tb, trt) = sum(&cold.iter().map(|c| c.2).collect::<Vec<_>>());
    let (wr, wb, wrt) = sum(&warm.iter().map(|w| w.0).collect::<Vec<_>>());
    let report = serde_json::json!({
        "url": url, "column": column, "rows_per_take": per_take,
        "cold": {
            "open": {"requests": or, "bytes": ob, "round_trips": ort,
                     "median_ms": median(cold.iter().map(|c| c.1).collect())},
            "take": {"requests": tr, "bytes": tb, "round_trips": trt,
                     "median_ms": median(cold.iter().map(|c| c.3).collect())},
            "total_median_ms": median(cold.iter().map(|c| c.1 + c.3).collect()),
        },
        "warm": {"requests": wr, "bytes": wb, "round_trips": wrt,
                 "median_ms": median(warm.iter().map(|w| w.1).collect())},
    });
    println!(
        "{}",
        serde_json::to_string_pretty(&report).unwrap_or_default()
    );
    Ok(())
}
