//! Retries at the real HTTP layer (in-process S3 server, `CountingConnector` fault
//! injection): object_store's retry loop and lakeseek's do not multiply. With the test
//! server's `max_retries = 2` (applied to both layers), a read whose GETs keep failing costs
//! exactly 3 HTTP requests (object_store's 1 + 2; lakeseek does not retry an error that
//! object_store already retried), and the error names the object and the byte range. The
//! documented bound of one read is `(max_retries + 1) * (object_store retries + 1)` requests,
//! reached only by failures object_store cannot see (short bodies, attempt timeouts).

use crate::suite::common;

use crate::io::{should_retry, FetchOptions, IoStats, RangeFetcher, ReadRequest, RetryPolicy};
use common::{pattern, S3TestServer};

const OBJECT: &str = "data/object.bin";
const SIZE: usize = 200_000;

async fn server() -> S3TestServer {
    let s3 = S3TestServer::start().await;
    s3.put(OBJECT, pattern(SIZE)).await;
    s3
}

fn fetcher(s3: &S3TestServer, extra: &[(&str, &str)]) -> (RangeFetcher, object_store::path::Path) {
    let opened = s3.open_with(OBJECT, extra);
    (
        RangeFetcher::new(opened.source, FetchOptions::default()),
        opened.path,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_storage_options_set_both_retry_layers() {
    let s3 = server().await;
    let (f, _) = fetcher(&s3, &[]);
    assert_eq!(f.retry_policy().max_retries, 2);
    assert_eq!(f.retry_policy().retry_timeout.as_secs(), 5);
    let (f, _) = fetcher(&s3, &[("max_retries", "0")]);
    assert_eq!(f.retry_policy().max_retries, 0);
    let plain = crate::io::open_url("memory:///x", &[]).unwrap();
    let f = RangeFetcher::new(plain.source, FetchOptions::default());
    assert_eq!(f.retry_policy(), &RetryPolicy::default());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persistent_503s_cost_object_stores_budget_only() {
    let s3 = server().await;
    let (f, path) = fetcher(&s3, &[]);
    let stats = IoStats::new();
    let before = s3.http_counts();
    s3.counting()
        .fail_next_requests(1_000, http::StatusCode::SERVICE_UNAVAILABLE);
    let err = f
        .fetch(
            &[ReadRequest::sized(path.clone(), 1000..2000, SIZE as u64)],
            &stats,
        )
        .await
        .unwrap_err();
    s3.counting()
        .fail_next_requests(0, http::StatusCode::SERVICE_UNAVAILABLE);
    let http = s3.http_counts().since(&before);
    assert_eq!(
        http.requests, 3,
        "1 try + 2 object_store retries, no lakeseek retry: {http:?}"
    );
    assert_eq!(stats.snapshot().retries, 0);
    assert!(!should_retry(&err));
    let msg = err.to_string();
    assert!(
        msg.contains(OBJECT) && msg.contains("[bytes 1000..2000]") && msg.contains("503"),
        "{msg}"
    );

    // The same for the suffix read that opens a file.
    let before = s3.http_counts();
    s3.counting()
        .fail_next_requests(1_000, http::StatusCode::INTERNAL_SERVER_ERROR);
    let err = f.tail(&path, 4096, &stats).await.unwrap_err();
    s3.counting()
        .fail_next_requests(0, http::StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(s3.http_counts().since(&before).requests, 3);
    assert!(err.to_string().contains(OBJECT), "{err}");

    // Transient: two failures, then the bytes (object_store's third attempt).
    let before = s3.http_counts();
    s3.counting()
        .fail_next_requests(2, http::StatusCode::SERVICE_UNAVAILABLE);
    let out = f
        .fetch(
            &[ReadRequest::sized(path.clone(), 1000..2000, SIZE as u64)],
            &stats,
        )
        .await
        .unwrap();
    assert_eq!(out[0].as_ref(), &pattern(SIZE)[1000..2000]);
    assert_eq!(s3.http_counts().since(&before).requests, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_cut_mid_stream_are_resumed_within_the_same_budget() {
    let s3 = server().await;
    let (f, path) = fetcher(&s3, &[]);
    let stats = IoStats::new();
    let want = &pattern(SIZE)[10_000..150_000];

    // Two cuts: object_store resumes the rest of the body twice (pinned by etag).
    let before = s3.http_counts();
    s3.counting().truncate_next_responses(2);
    let out = f
        .fetch(
            &[ReadRequest::sized(
                path.clone(),
                10_000..150_000,
                SIZE as u64,
            )],
            &stats,
        )
        .await
        .unwrap();
    s3.counting().truncate_next_responses(0);
    assert_eq!(out[0].as_ref(), want);
    let http = s3.http_counts().since(&before);
    assert_eq!((http.requests, http.truncated_bodies), (3, 2), "{http:?}");

    // Every body cut: an error after object_store's budget, not a short buffer.
    let before = s3.http_counts();
    s3.counting().truncate_next_responses(1_000);
    let err = f
        .fetch(
            &[ReadRequest::sized(
                path.clone(),
                10_000..150_000,
                SIZE as u64,
            )],
            &stats,
        )
        .await
        .unwrap_err();
    s3.counting().truncate_next_responses(0);
    let http = s3.http_counts().since(&before);
    // object_store's resumption budget is spent (3 requests); the error it returns is final
    // for lakeseek too (no multiplication).
    assert_eq!(http.requests, 3, "{http:?}");
    assert_eq!(stats.snapshot().retries, 0);
    let msg = err.to_string();
    assert!(
        msg.contains(OBJECT) && msg.contains("10000..150000"),
        "{msg}"
    );

    // No retries anywhere: the first cut is an error.
    let (f, path) = fetcher(&s3, &[("max_retries", "0")]);
    let before = s3.http_counts();
    s3.counting().truncate_next_responses(1);
    let err = f
        .fetch(
            &[ReadRequest::sized(
                path.clone(),
                10_000..150_000,
                SIZE as u64,
            )],
            &stats,
        )
        .await
        .unwrap_err();
    s3.counting().truncate_next_responses(0);
    assert_eq!(s3.http_counts().since(&before).requests, 1);
    assert!(err.to_string().contains(OBJECT), "{err}");
}
