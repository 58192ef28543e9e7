//! ecpfs search benchmark: per-query requests, bytes, round trips and latency (cold and warm)
//! on the in-process S3 test server with injected per-request latency, recall@10 against brute
//! force, the exhaustive scan as the floor, and warm local-store latency (criterion).
//!
//! Full run (1,000,000 × 128 float32, 3 levels, ~100 items per leaf; generated, not committed):
//! ```sh
//! /work/.venv-zarr/bin/python tests/fixtures/ecp/gen_bench_index.py --out /tmp/ecp_bench
//! ECP_BENCH_DIR=/tmp/ecp_bench cargo test --release --lib suite::ecp_search_bench -- --ignored --nocapture
//! ```
//! (An ignored test of the suite, not a `benches/` target: it needs the suite's in-process S3
//! server and crate-internal search entry points.)
//! Knobs: `ECP_BENCH_NQ` (queries per configuration, default 20), `ECP_BENCH_LATENCY_MS`
//! (default 20), `ECP_BENCH_SCAN_NQ` (exhaustive-scan queries, default 1), `ECP_BENCH_PREFETCH`
//! (prefetch width, default 8). Without `ECP_BENCH_DIR` the small `l3_l2n_f16` fixture is used.
//! The numpy baseline for the local speed comparison:
//! `python tests/fixtures/ecp/reference_search.py /tmp/ecp_bench/index --queries /tmp/ecp_bench/queries.npy -k 10 --search-exp 4`.

use crate::suite::common;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::ecp::npy::parse_npy;
use crate::ecp::{EcpIndex, OpenOptions, QueryOptions, SearchParams};
use crate::io::{IoStats, IoStatsSnapshot};
use criterion::Criterion;

struct Workload {
    index_dir: PathBuf,
    queries: Vec<Vec<f32>>,
    truth: Vec<Vec<u32>>,
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn load_workload() -> Workload {
    let nq = env_usize("ECP_BENCH_NQ", 20);
    if let Ok(dir) = std::env::var("ECP_BENCH_DIR") {
        let dir = PathBuf::from(dir);
        let queries =
            parse_npy(&std::fs::read(dir.join("queries.npy")).expect("queries.npy")).expect("npy");
        let truth: Vec<Vec<u32>> =
            serde_json::from_slice(&std::fs::read(dir.join("truth.json")).expect("truth.json"))
                .expect("json");
        let n = nq.min(queries.len());
        return Workload {
            index_dir: dir.join("index"),
            queries: queries[..n].to_vec(),
            truth: truth[..n].to_vec(),
        };
    }
    let root = crate::suite::common::fixture("ecp");
    let exp: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("expected/l3_l2n_f16.json")).unwrap())
            .unwrap();
    let cases = exp["cases"].as_array().unwrap();
    let queries = cases
        .iter()
        .map(|c| serde_json::from_value(c["query"].clone()).unwrap())
        .collect();
    let truth = cases
        .iter()
        .map(|c| serde_json::from_value(c["brute_force_ids"].clone()).unwrap())
        .collect();
    Workload {
        index_dir: root.join("l3_l2n_f16"),
        queries,
        truth,
    }
}

#[derive(Default)]
struct Row {
    requests: f64,
    bytes: f64,
    round_trips: f64,
    visited: f64,
    latency_ms: f64,
    recall: f64,
}

fn recall(got: &[u32], truth: &[u32]) -> f64 {
    let hits = got.iter().filter(|id| truth.contains(id)).count();
    hits as f64 / truth.len().max(1) as f64
}

async fn run_queries(
    index: &EcpIndex,
    w: &Workload,
    search_exp: u32,
    prefetch: usize,
    cold: bool,
) -> Row {
    let mut row = Row::default();
    let n = w.queries.len() as f64;
    for (q, truth) in w.queries.iter().zip(&w.truth) {
        if cold {
            index.clear_cache();
        }
        let params = SearchParams {
            search_exp,
            max_increments: -1,
        };
        let opts = QueryOptions {
            params,
            exclude: vec![],
            prefetch: Some(prefetch),
        };
        let start = Instant::now();
        let mut query = index.query(q.clone(), opts).unwrap();
        let got = query.next_k(10).await.unwrap();
        row.latency_ms += start.elapsed().as_secs_f64() * 1e3 / n;
        let s = query.stats();
        row.requests += s.requests as f64 / n;
        row.bytes += s.bytes as f64 / n;
        row.round_trips += s.round_trips as f64 / n;
        row.visited += query.visited().len() as f64 / n;
        row.recall += recall(&got.ids, truth) / n;
    }
    row
}

fn print_row(label: &str, r: &Row) {
    println!(
        "| {label} | {:.1} | {:.1} | {:.1} | {:.0} | {:.1} | {:.3} |",
        r.visited,
        r.requests,
        r.round_trips,
        r.bytes / 1024.0,
        r.latency_ms,
        r.recall
    );
}

async fn s3_report(w: &Workload) {
    let latency = env_usize("ECP_BENCH_LATENCY_MS", 20) as u64;
    let wide = env_usize("ECP_BENCH_PREFETCH", 8);
    let s3 = common::S3TestServer::start().await;
    let t = Instant::now();
    let keys = s3.upload_dir(&w.index_dir, "bench/index").await;
    eprintln!(
        "uploaded {} objects in {:.1}s",
        keys.len(),
        t.elapsed().as_secs_f64()
    );
    s3.counting().set_latency(Duration::from_millis(latency));
    let opened = s3.open("bench/index");
    let t = Instant::now();
    let index = EcpIndex::open_source(
        opened.source,
        opened.path,
        "s3://test-bucket/bench/index",
        OpenOptions::default(),
    )
    .await
    .unwrap();
    let open = index.total_stats();
    let info = index.info();
    println!(
        "\nS3 test server, {latency} ms per request; index: {} items, dim {}, {} levels, root {} rows; {} queries, k=10",
        info.total_items,
        info.dim,
        info.levels,
        info.node_size,
        w.queries.len()
    );
    println!(
        "open: {} requests, {} round trips, {:.0} KiB, {:.1} ms\n",
        open.requests,
        open.round_trips,
        open.bytes as f64 / 1024.0,
        t.elapsed().as_secs_f64() * 1e3
    );
    println!(
        "| configuration | visited nodes | requests | round trips | KiB | latency ms | recall@10 |"
    );
    println!("|---|---|---|---|---|---|---|");
    for search_exp in [4u32, 16] {
        for prefetch in [1usize, wide] {
            let cold = run_queries(&index, w, search_exp, prefetch, true).await;
            print_row(&format!("cold exp={search_exp} prefetch={prefetch}"), &cold);
            // warm: every node of these queries is cached now (one untimed pass first)
            run_queries(&index, w, search_exp, prefetch, false).await;
            let warm = run_queries(&index, w, search_exp, prefetch, false).await;
            print_row(&format!("warm exp={search_exp} prefetch={prefetch}"), &warm);
        }
    }
    let scan_nq = env_usize("ECP_BENCH_SCAN_NQ", 1).min(w.queries.len());
    let mut scan = Row::default();
    for (q, truth) in w.queries.iter().zip(&w.truth).take(scan_nq) {
        let stats = Arc::new(IoStats::new());
        let start = Instant::now();
        let got = index
            .exhaustive_search(q.clone(), 10, &[], 64, Arc::clone(&stats))
            .await
            .unwrap();
        let n = scan_nq as f64;
        scan.latency_ms += start.elapsed().as_secs_f64() * 1e3 / n;
        let s: IoStatsSnapshot = stats.snapshot();
        scan.requests += s.requests as f64 / n;
        scan.bytes += s.bytes as f64 / n;
        scan.round_trips += s.round_trips as f64 / n;
        scan.recall += recall(&got.ids, truth) / n;
    }
    print_row(
        &format!("exhaustive scan, 64 concurrent ({scan_nq} q)"),
        &scan,
    );
    let http = s3.http_counts();
    println!(
        "\nHTTP layer over the whole run: {} GET, {} HEAD",
        http.gets, http.heads
    );
}

async fn local_report(w: &Workload) -> EcpIndex {
    let index = EcpIndex::open_url(&w.index_dir.to_string_lossy(), &[], OpenOptions::default())
        .await
        .unwrap();
    println!("\nlocal files (warm = all visited nodes cached)\n");
    println!(
        "| configuration | visited nodes | requests | round trips | KiB | latency ms | recall@10 |"
    );
    println!("|---|---|---|---|---|---|---|");
    for search_exp in [4u32, 16] {
        let cold = run_queries(&index, w, search_exp, 8, true).await;
        print_row(&format!("local cold exp={search_exp}"), &cold);
        run_queries(&index, w, search_exp, 8, false).await;
        let warm = run_queries(&index, w, search_exp, 8, false).await;
        print_row(&format!("local warm exp={search_exp}"), &warm);
    }
    index
}

#[test]
#[ignore = "a benchmark: run it with --release --ignored --nocapture, see the module docs"]
fn ecp_search_benchmark() {
    let w = load_workload();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let skip_s3 = std::env::var("ECP_BENCH_SKIP_S3").is_ok();
    if !skip_s3 {
        rt.block_on(s3_report(&w));
    }
    let index = rt.block_on(local_report(&w));
    // criterion: warm local search latency, k=10, search_exp 4 and 16
    let mut c = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1));
    for search_exp in [4u32, 16] {
        let mut i = 0usize;
        c.bench_function(
            &format!("ecp warm local k=10 search_exp={search_exp}"),
            |b| {
                b.to_async(&rt).iter(|| {
                    i = (i + 1) % w.queries.len();
                    let q = w.queries[i].clone();
                    let index = index.clone();
                    async move {
                        let params = SearchParams {
                            search_exp,
                            max_increments: -1,
                        };
                        let mut query = index
                            .query(
                                q,
                                QueryOptions {
                                    params,
                                    ..Default::default()
                                },
                            )
                            .unwrap();
                        query.next_k(10).await.unwrap()
                    }
                })
            },
        );
    }
    c.final_summary();
}
