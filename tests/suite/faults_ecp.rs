//! ecp search under faults at the HTTP layer of the S3 client (`CountingConnector`: injected
//! 5xx / 408 / 429 answers, bodies cut mid-stream), below object_store. The ecp reader goes
//! through lakeseek's I/O layer (`EcpIndex::open_source` over the URL's `RangeSource`, read by
//! `RangeFetcher` through `src/io/zarr_storage.rs`), so what is exercised here is object_store's
//! own HTTP retries (and its resumption of interrupted bodies, pinned by etag) with lakeseek's
//! retry layer on top (the storage options' `max_retries` applies to both). Faults injected
//! at the `RangeSource` level, and same-size replacements, are in `faults_ecp_source.rs`.
//!
//! * transient faults: every page of every fixture case equals the fault-free page;
//! * persistent faults: a clear error naming the index object;
//! * truncated bodies: resumed by object_store (same answer), or with retries disabled an
//!   error naming the object, never a decoded partial body;
//! * replaced objects: a node chunk replaced by a different-size object after the index read
//!   it gives a clean error, never a wrong answer.

use crate::suite::common;
use crate::suite::ecp_support;

use crate::ecp::{EcpIndex, OpenOptions};
use crate::Result;
use common::S3TestServer;
use ecp_support::*;

const INDEXES: [&str; 2] = ["l2_l2_f32", "l3_l2_i8"];

/// Every page (ids, score bits) of every case of the fixture.
type Answers = Vec<Vec<(Vec<u32>, Vec<u32>)>>;

async fn server() -> S3TestServer {
    let s3 = S3TestServer::start().await;
    for name in INDEXES {
        s3.upload_dir(&fixture_dir(name), &format!("idx/{name}"))
            .await;
    }
    s3
}

async fn open(s3: &S3TestServer, name: &str, extra: &[(&str, &str)]) -> EcpIndex {
    let opened = s3.open_with(&format!("idx/{name}"), extra);
    // The URL's source carries the storage options' retry policy (both layers).
    EcpIndex::open_source(
        opened.source,
        opened.path,
        &s3.url(&format!("idx/{name}")),
        OpenOptions::default(),
    )
    .await
    .unwrap()
}

/// Run every case of `name` with a cold cache; `before_page(i)` runs before the i-th page.
async fn run_all(index: &EcpIndex, name: &str, before_page: &dyn Fn(usize)) -> Result<Answers> {
    let exp = expected(name);
    let mut out = Vec::new();
    let mut page_no = 0;
    for case in &exp.cases {
        index.clear_cache();
        let mut q = case.start(index, None)?;
        let mut pages = Vec::new();
        for page in &case.pages {
            before_page(page_no);
            page_no += 1;
            let got = q.next_k(page.k).await?;
            pages.push((got.ids, got.scores.iter().map(|s| s.to_bits()).collect()));
        }
        out.push(pages);
    }
    Ok(out)
}

fn report(kind: &str, outcome: &str, injected: u64, retries: &str) {
    eprintln!(
        "FAULT-REPORT | ecp search | {kind} | {outcome} | injected {injected} at the HTTP layer | {retries} | wrong answers 0"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transient_http_faults_give_the_fault_free_answer() {
    let s3 = server().await;
    let statuses = [
        http::StatusCode::SERVICE_UNAVAILABLE,
        http::StatusCode::INTERNAL_SERVER_ERROR,
        http::StatusCode::TOO_MANY_REQUESTS,
        http::StatusCode::REQUEST_TIMEOUT,
    ];
    let (mut injected, mut extra_requests) = (0, 0);
    for name in INDEXES {
        let index = open(&s3, name, &[]).await;
        let before = s3.http_counts();
        let clean = run_all(&index, name, &|_| {}).await.unwrap();
        let clean_requests = s3.http_counts().since(&before).requests;
        let before = s3.http_counts();
        // Two faults before every page: object_store (max_retries = 2) always gets through.
        let got = run_all(&index, name, &|i| {
            s3.counting()
                .fail_next_requests(2, statuses[i % statuses.len()])
        })
        .await
        .unwrap();
        s3.counting().fail_next_requests(0, statuses[0]);
        assert!(got == clean, "{name}: wrong answer under transient faults");
        let http = s3.http_counts().since(&before);
        assert!(http.injected_faults > 0, "{name}: {http:?}");
        // The injected answers were retried (the request count of a search varies a little
        // from run to run with its concurrent prefetches, so it is not compared exactly).
        assert!(http.requests > http.injected_faults, "{name}: {http:?}");
        injected += http.injected_faults;
        extra_requests += http.requests.saturating_sub(clean_requests);
    }
    report(
        "5xx/408/429 answers",
        "same answer",
        injected,
        &format!("object_store retries >= {injected} ({extra_requests} extra HTTP requests)"),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persistent_http_faults_name_the_object() {
    let s3 = server().await;
    // Every request counted must be answered (with the fault): no network latency during
    // which a dropped concurrent GET would be counted without an answer.
    s3.counting().set_latency(std::time::Duration::ZERO);
    for name in INDEXES {
        let index = open(&s3, name, &[]).await;
        let before = s3.http_counts();
        s3.counting()
            .fail_next_requests(1_000, http::StatusCode::SERVICE_UNAVAILABLE);
        let err = run_all(&index, name, &|_| {}).await.unwrap_err();
        s3.counting()
            .fail_next_requests(0, http::StatusCode::SERVICE_UNAVAILABLE);
        let msg = err.to_string();
        assert!(
            msg.contains(&format!("s3://test-bucket/idx/{name}/lvl_")),
            "{msg}"
        );
        assert!(msg.contains("503"), "{msg}");
        let http = s3.http_counts().since(&before);
        // At least one GET spent object_store's whole budget (3 attempts); concurrent GETs of
        // the failing wave are dropped when the first error surfaces.
        assert!(
            http.requests >= 3 && http.requests == http.injected_faults,
            "{http:?}"
        );
        report(
            "persistent 503",
            "error naming the object",
            http.injected_faults,
            &format!("{} HTTP attempts before giving up", http.requests),
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_bodies_are_resumed_or_refused_never_decoded() {
    let s3 = server().await;
    let (mut cut, mut resumed_requests, mut refused) = (0, 0, 0);
    for name in INDEXES {
        let index = open(&s3, name, &[]).await;
        let clean = run_all(&index, name, &|_| {}).await.unwrap();
        let before = s3.http_counts();
        let got = run_all(&index, name, &|_| s3.counting().truncate_next_responses(2))
            .await
            .unwrap();
        s3.counting().truncate_next_responses(0);
        assert!(got == clean, "{name}: wrong answer with truncated bodies");
        let http = s3.http_counts().since(&before);
        assert!(http.truncated_bodies > 0, "{http:?}");
        cut += http.truncated_bodies;
        resumed_requests += http.truncated_bodies;

        // Without retries object_store cannot resume: with every body cut, the search fails
        // with an error naming the object, never decodes a partial body.
        let index = open(&s3, name, &[("max_retries", "0")]).await;
        s3.counting().truncate_next_responses(1_000);
        let outcome = run_all(&index, name, &|_| {}).await;
        s3.counting().truncate_next_responses(0);
        let err = outcome.expect_err("cut bodies without retries must fail");
        let msg = err.to_string();
        assert!(
            msg.contains(&format!("s3://test-bucket/idx/{name}/")),
            "{msg}"
        );
        refused += 1;
    }
    assert_eq!(refused, INDEXES.len());
    report(
        "bodies cut mid-stream",
        "resumed by object_store: same answer; no retries: error",
        cut,
        &format!("object_store resumptions {resumed_requests}"),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replaced_node_object_gives_a_clean_error() {
    let s3 = server().await;
    let name = "l2_l2_f32";
    let index = open(&s3, name, &[]).await;
    let clean = run_all(&index, name, &|_| {}).await.unwrap();
    // Every leaf node's embeddings chunk replaced by a shorter object after the open.
    let dir = fixture_dir(name);
    let mut replaced = 0;
    for (rel, bytes) in files_under(&dir) {
        if rel.starts_with("lvl_1/") && rel.ends_with("embeddings/c/0/0") {
            s3.put(
                &format!("idx/{name}/{rel}"),
                bytes[..bytes.len() / 2].to_vec(),
            )
            .await;
            replaced += 1;
        }
    }
    assert!(replaced > 0);
    match run_all(&index, name, &|_| {}).await {
        Ok(got) => panic!(
            "replaced chunks decoded into an answer (clean: {})",
            got == clean
        ),
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.contains(&format!("idx/{name}/lvl_1/")), "{msg}");
        }
    }
    report(
        "node objects replaced (other size)",
        "error naming the object",
        replaced,
        "retries 0",
    );
}
