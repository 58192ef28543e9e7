//! Load: many concurrent mixed queries over ONE set of shared caches against the in-process
//! S3 server, every answer compared with the answer of the same query computed alone first.
//!
//! Mix (see `tests/suite/stress_support`): random-row reads of Lance files (flat, nested, 2.3
//! sparse), BTree queries (answers.json of the dataset fixtures), `any_element` queries
//! and their NOT, ecp k-NN searches with several "next k" pages.
//!
//! The default run (1,200 operations, all in flight at once, caches small enough to evict)
//! is sized for CI: a debug build on 2 cores. Longer runs:
//!
//! ```sh
//! LAKESEEK_STRESS_OPS=20000 LAKESEEK_STRESS_IN_FLIGHT=1000 LAKESEEK_STRESS_SEED=7 \
//!   cargo test --release --lib suite::stress_mixed:: -- --nocapture
//! ```
//!
//! `LAKESEEK_STRESS_CACHE_BYTES` sets each cache's capacity (default 2 MiB, so entries are
//! evicted and reloaded while other queries use them). Any answer that differs fails the
//! test; errors under load (e.g. request timeouts when thousands of requests queue at the
//! debug-build server) are counted apart from wrong data in the message. Peak memory under
//! the same workload: `cargo run --example stress_rss` (see that file for recorded numbers).

use crate::suite::common;
use crate::suite::stress_support;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::S3TestServer;
use stress_support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_mixed_queries_over_shared_caches_match_single_threaded_answers() {
    let total = env_number("LAKESEEK_STRESS_OPS", 1200);
    let in_flight = env_number("LAKESEEK_STRESS_IN_FLIGHT", total);
    let seed = env_number("LAKESEEK_STRESS_SEED", 1) as u64;
    let cache_bytes = env_number("LAKESEEK_STRESS_CACHE_BYTES", 2 << 20) as u64;

    let s3 = S3TestServer::start().await;
    let workload = Workload::upload(&s3).await;
    let mut rng = Rng::new(seed);
    // Distinct operations; the schedule repeats them so concurrent queries share cache
    // entries (and their loads), and every op's answer is known from the baseline.
    let distinct = (total / 8).clamp(1, 400);
    let ops = Arc::new(workload.draw(&mut rng, distinct));

    // 1. Single-threaded answers, fresh client and caches, one query at a time.
    let started = std::time::Instant::now();
    let alone = Handles::open(&s3, 256 << 20).await;
    let expected = baseline(&alone, &ops).await;
    let baseline_time = started.elapsed();
    let errors: Vec<String> = ops
        .iter()
        .zip(&expected)
        .filter_map(|(op, a)| match (op, a) {
            // Fixture answers that are errors on purpose would be listed here; none are
            // expected among these pools except list-element refusals on purpose.
            (_, Answer::Error(e)) if !e.contains("unsupported") => Some(format!("{op:?}: {e}")),
            _ => None,
        })
        .collect();
    assert!(errors.is_empty(), "baseline errors:\n{}", errors.join("\n"));

    // 2. The same operations, `total` of them, concurrently over shared (small) caches.
    let schedule: Vec<usize> = (0..total).map(|_| rng.below(ops.len())).collect();
    let shared = Handles::open(&s3, cache_bytes).await;
    let before = s3.http_counts();
    let started = std::time::Instant::now();
    let answers = run_concurrent(&shared, &ops, &schedule, in_flight).await;
    let concurrent_time = started.elapsed();
    let http = s3.http_counts().since(&before);

    assert_eq!(answers.len(), total);
    let mut per_kind: BTreeMap<&str, usize> = BTreeMap::new();
    // Wrong data (both answered, differently) and failures (an error under load where the
    // query alone answered) are both failures of this test; they are counted apart.
    let mut wrong = Vec::new();
    let mut failed = 0;
    for (pos, answer) in &answers {
        let op = schedule[*pos];
        *per_kind.entry(ops[op].kind()).or_default() += 1;
        if *answer != expected[op] {
            if matches!(answer, Answer::Error(_)) && !matches!(expected[op], Answer::Error(_)) {
                failed += 1;
            }
            wrong.push(format!(
                "{:?}\n  alone: {:?}\n  concurrent: {:?}",
                ops[op],
                short(&expected[op]),
                short(answer)
            ));
        }
    }
    eprintln!(
        "stress: {total} ops ({} distinct), {in_flight} in flight, per kind {per_kind:?}, \
         {} HTTP requests, {} differ ({failed} of them errors under load) (baseline {baseline_time:?}, concurrent {concurrent_time:?}; \
         informational, not asserted)",
        ops.len(),
        http.requests,
        wrong.len()
    );
    assert!(
        wrong.is_empty(),
        "{} of {total} answers differ:\n{}",
        wrong.len(),
        wrong.iter().take(5).cloned().collect::<Vec<_>>().join("\n")
    );
    for kind in ["file", "btree", "list_element", "ecp"] {
        assert!(
            per_kind.get(kind).copied().unwrap_or(0) > 0,
            "no {kind} ops"
        );
    }
    assert_eq!(http.heads, 0, "no HEAD requests under load");
}

fn short(a: &Answer) -> String {
    let s = format!("{a:?}");
    s.chars().take(300).collect()
}
