//! BTree benchmark against the peer-bench S3 setup (moto behind the counting, delaying
//! proxy of `../shared/peer-bench/`), side by side with `bench_btree.py` (pylance).
//! Ignored by default; run it with the servers up and the dataset uploaded:
//!
//! ```text
//! bash ../shared/peer-bench/servers.sh start 20
//! python ../shared/peer-bench/gen_data.py --only btree
//! python tests/fixtures/datasets/gen_bench.py --filters-only /tmp/btree_filters.json
//! LAKESEEK_BENCH_FILTERS=/tmp/btree_filters.json \
//!   cargo test --release --lib suite::btree_bench:: -- --ignored --nocapture
//! ```
//!
//! Environment: `LAKESEEK_BENCH_PROXY` (default `http://127.0.0.1:4572`),
//! `LAKESEEK_BENCH_URL` (default `s3://anchors/btree_1000000.lance`),
//! `LAKESEEK_BENCH_FILTERS` (required), `LAKESEEK_BENCH_OUT` (optional JSON output),
//! `LAKESEEK_BENCH_RUNS` (cold runs, default 5), `LAKESEEK_BENCH_WARM` (default 20),
//! `LAKESEEK_BENCH_GAP` (coalescing gap in bytes; default: the remote default, 256 KiB),
//! `LAKESEEK_BENCH_LOG` (print the proxy log of the first cold query of each kind).
//!
//! Counts come from the proxy log (ground truth, same algorithm as peer-bench's
//! `common.summarize`); latency is wall time (medians). Cold = a new store client, a new
//! session, open + query; warm = the same dataset object, a new key per query.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Instant;

use crate::io::IoStats;
use crate::lance::dataset::{DatasetSession, DatasetVersion};
use crate::suite::common::btree_query::{query_row_addresses, QueryOptions};
use serde_json::{json, Value};

fn env(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

/// GET `path` on the proxy's control endpoint (not forwarded, not counted).
fn proxy(path: &str) -> Value {
    let base = env("LAKESEEK_BENCH_PROXY", "http://127.0.0.1:4572");
    let hostport = base.trim_start_matches("http://").trim_end_matches('/');
    let mut s = TcpStream::connect(hostport).expect("proxy reachable");
    write!(s, "GET {path} HTTP/1.0\r\nHost: {hostport}\r\n\r\n").unwrap();
    let mut buf = String::new();
    s.read_to_string(&mut buf).unwrap();
    let body = buf.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
    serde_json::from_str(body).expect("proxy JSON")
}

/// requests, bytes, round trips (longest chain of requests each starting after the
/// previous one was answered) from a proxy stats snapshot.
fn summarize(stats: &Value) -> (u64, u64, u64) {
    let log = stats["log"].as_array().cloned().unwrap_or_default();
    let mut ev: Vec<(f64, f64)> = log
        .iter()
        .filter_map(|e| Some((e["start_ms"].as_f64()?, e["t_ms"].as_f64()?)))
        .collect();
    ev.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let mut depth: Vec<u64> = Vec::new();
    for (i, (s, _)) in ev.iter().enumerate() {
        let mut d = 1;
        for j in 0..i {
            if ev[j].1 <= *s {
                d = d.max(depth[j] + 1);
            }
        }
        depth.push(d);
    }
    let bytes = log
        .iter()
        .map(|e| e["resp_bytes"].as_u64().unwrap_or(0))
        .sum();
    (
        log.len() as u64,
        bytes,
        depth.into_iter().max().unwrap_or(0),
    )
}

fn storage_options() -> Vec<(String, String)> {
    let proxy = env("LAKESEEK_BENCH_PROXY", "http://127.0.0.1:4572");
    [
        ("aws_endpoint", proxy.as_str()),
        ("allow_http", "true"),
        ("aws_access_key_id", "dummy"),
        ("aws_secret_access_key", "dummy"),
        ("aws_region", "us-east-1"),
        ("aws_virtual_hosted_style_request", "false"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .chain(
        std::env::var("LAKESEEK_BENCH_GAP")
            .ok()
            .map(|g| ("coalesce_gap".to_string(), g)),
    )
    .collect()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    if v.is_empty() {
        0.0
    } else {
        v[v.len() / 2]
    }
}

fn expected_rows(kind: &str) -> u64 {
    match kind {
        "eq" => 1,
        "in10" => 10,
        _ => 20,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the peer-bench S3 servers; see the module docs"]
async fn bench_btree_against_proxy() {
    let url = env("LAKESEEK_BENCH_URL", "s3://anchors/btree_1000000.lance");
    let filters: Value = serde_json::from_str(
        &std::fs::read_to_string(env("LAKESEEK_BENCH_FILTERS", ""))
            .expect("LAKESEEK_BENCH_FILTERS"),
    )
    .unwrap();
    let runs: usize = env("LAKESEEK_BENCH_RUNS", "5").parse().unwrap();
    let warm_n: usize = env("LAKESEEK_BENCH_WARM", "20").parse().unwrap();
    let delay = proxy("/__proxy__/config")["delay_ms"].clone();
    let opts = storage_options();
    let mut results = json!({ "url": url, "delay_ms": delay, "cold": {}, "warm": {} });
    for kind in ["eq", "in10", "range20"] {
        let list: Vec<String> = filters[kind]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap().to_string())
            .collect();
        // Cold: new client + session per run, key set r.
        let mut cold = Vec::new();
        for (r, filter) in list.iter().take(runs).enumerate() {
            let session = Arc::new(DatasetSession::default());
            proxy("/__proxy__/reset");
            let t0 = Instant::now();
            let stats = IoStats::new();
            let ds = DatasetVersion::open_url(&url, &opts, None, session, &stats)
                .await
                .unwrap();
            let open_ms = t0.elapsed().as_secs_f64() * 1e3;
            let open = summarize(&proxy("/__proxy__/stats"));
            proxy("/__proxy__/reset");
            let t1 = Instant::now();
            let a = query_row_addresses(&ds, filter, QueryOptions::default(), &stats)
                .await
                .unwrap();
            let query_ms = t1.elapsed().as_secs_f64() * 1e3;
            let q_stats = proxy("/__proxy__/stats");
            if std::env::var("LAKESEEK_BENCH_LOG").is_ok() && r == 0 {
                for e in q_stats["log"].as_array().unwrap() {
                    println!(
                        "  {kind} {:>8.1}..{:>8.1} ms {:<20} {:<28} {}",
                        e["start_ms"].as_f64().unwrap_or(0.0),
                        e["t_ms"].as_f64().unwrap_or(0.0),
                        e["path"]
                            .as_str()
                            .unwrap_or("")
                            .rsplit('/')
                            .next()
                            .unwrap_or(""),
                        e["range"].as_str().unwrap_or("-"),
                        e["resp_bytes"]
                    );
                }
            }
            let q = summarize(&q_stats);
            assert_eq!(a.row_addresses.len(), expected_rows(kind), "{filter}");
            cold.push(json!({"run": r, "open": {"requests": open.0, "bytes": open.1, "round_trips": open.2, "ms": open_ms},
                             "query": {"requests": q.0, "bytes": q.1, "round_trips": q.2, "ms": query_ms},
                             "total_ms": open_ms + query_ms, "iostats": stats.snapshot()}));
        }
        results["cold"][kind] = json!(cold);
        // Warm: one dataset; first query, then warm_n new keys; then the same keys again
        // with the page cache on.
        for (label, session) in [
            ("warm", DatasetSession::default()),
            (
                "warm_page_cache",
                DatasetSession::default().with_page_cache(256 << 20),
            ),
        ] {
            let stats = IoStats::new();
            let ds = DatasetVersion::open_url(&url, &opts, None, Arc::new(session), &stats)
                .await
                .unwrap();
            query_row_addresses(&ds, &list[0], QueryOptions::default(), &stats)
                .await
                .unwrap();
            let passes = if label == "warm" { 1 } else { 2 };
            let mut per = Vec::new();
            for pass in 0..passes {
                let (mut ms, mut req, mut byt, mut rts) = (vec![], vec![], vec![], vec![]);
                for filter in list.iter().skip(1).take(warm_n) {
                    proxy("/__proxy__/reset");
                    let t = Instant::now();
                    let a =
                        query_row_addresses(&ds, filter, QueryOptions::default(), &IoStats::new())
                            .await
                            .unwrap();
                    ms.push(t.elapsed().as_secs_f64() * 1e3);
                    assert_eq!(a.row_addresses.len(), expected_rows(kind));
                    let s = summarize(&proxy("/__proxy__/stats"));
                    req.push(s.0 as f64);
                    byt.push(s.1 as f64);
                    rts.push(s.2 as f64);
                }
                let (rmin, rmax) = (
                    req.iter().cloned().fold(f64::MAX, f64::min),
                    req.iter().cloned().fold(0.0, f64::max),
                );
                per.push(json!({"pass": pass, "median_ms": median(&mut ms), "median_requests": median(&mut req.clone()),
                                "min_requests": rmin, "max_requests": rmax, "median_bytes": median(&mut byt),
                                "median_round_trips": median(&mut rts)}));
            }
            results["warm"][format!("{kind}/{label}")] = json!(per);
        }
    }
    // Human-readable summary.
    for kind in ["eq", "in10", "range20"] {
        let cold = results["cold"][kind].as_array().unwrap();
        let mut total: Vec<f64> = cold
            .iter()
            .map(|c| c["total_ms"].as_f64().unwrap())
            .collect();
        let reqs: Vec<u64> = cold
            .iter()
            .map(|c| c["query"]["requests"].as_u64().unwrap())
            .collect();
        let rts: Vec<u64> = cold
            .iter()
            .map(|c| c["query"]["round_trips"].as_u64().unwrap())
            .collect();
        let bytes: Vec<u64> = cold
            .iter()
            .map(|c| c["query"]["bytes"].as_u64().unwrap())
            .collect();
        let open = &cold[0]["open"];
        println!(
            "cold {kind}: open {}req/{}RT/{}B + query {:?}req {:?}RT {:?}B, total median {:.1} ms",
            open["requests"],
            open["round_trips"],
            open["bytes"],
            reqs,
            rts,
            bytes,
            median(&mut total)
        );
        for label in ["warm", "warm_page_cache"] {
            println!(
                "{label} {kind}: {}",
                results["warm"][format!("{kind}/{label}")]
            );
        }
    }
    if let Ok(out) = std::env::var("LAKESEEK_BENCH_OUT") {
        std::fs::write(out, serde_json::to_string_pretty(&results).unwrap()).unwrap();
    }
}
