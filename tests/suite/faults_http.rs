//! Retries at the real HTTP layer (in-process S3 server, `CountingConnector` fault
//! injection): lakeseek's retry loop owns the retries of reads (the read store's
//! object_store client does not retry, so every attempt goes back through admission
//! control and the retry budget). With the test server's `max_retries = 2`, a read whose
//! GETs keep failing costs exactly 3 HTTP requests (1 + lakeseek's 2 retries), the documented
//! bound `max_retries + 1`, and the error names the object and the byte range.

use std::sync::Arc;

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
        "1 try + 2 lakeseek retries, none inside object_store: {http:?}"
    );
    assert_eq!(stats.snapshot().retries, 2);
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

    // Transient: two failures, then the bytes (lakeseek's third attempt).
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

    // Two cuts: lakeseek reads the range again twice (object_store does not resume).
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
    // lakeseek's budget is spent (3 requests), nothing multiplies it.
    assert_eq!(http.requests, 3, "{http:?}");
    assert_eq!(
        stats.snapshot().retries,
        4,
        "2 for the two cuts above, 2 here"
    );
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_throttled_list_is_retried_by_lakeseek_through_admission() {
    use crate::io::adaptive_limit::LimitConfig;
    use crate::io::admission::Admission;
    use crate::io::list::{ListControl, ObjectLister, ObjectStoreLister};

    let s3 = server().await;
    let opened = s3.open_with("data", &[]);
    let admission = Admission::with_limit(LimitConfig::on_loss(256), u64::MAX);
    let lister = ObjectStoreLister::for_scheme(Arc::clone(&opened.read_store), &opened.scheme)
        .with_admission(Some(Arc::clone(&admission)))
        .with_retry_policy(opened.source.retry_policy());
    let stats = IoStats::new();
    let before = s3.http_counts();
    s3.counting()
        .fail_next_requests(1, http::StatusCode::SERVICE_UNAVAILABLE);
    let mut names = Vec::new();
    lister
        .list(&opened.path, &stats, &mut |o| {
            names.push(o.path.to_string());
            ListControl::Continue
        })
        .await
        .unwrap();
    assert_eq!(names, vec![OBJECT.to_string()]);
    let http = s3.http_counts().since(&before);
    assert_eq!(http.requests, 2, "the 503 and lakeseek's retry: {http:?}");
    assert_eq!(stats.snapshot().retries, 1);
    let snap = admission.snapshot();
    assert_eq!(
        snap.admitted, 2,
        "the retry went through admission: {snap:?}"
    );
    assert_eq!(snap.limit.decreases, 1, "the limit saw the 503: {snap:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dataset_opened_through_an_opened_store_is_retried_by_lakeseek() {
    let s3 = S3TestServer::start().await;
    let fixture = format!(
        "{}/tests/fixtures/datasets/types.lance",
        env!("CARGO_MANIFEST_DIR")
    );
    s3.upload_dir(std::path::Path::new(&fixture), "ds/types.lance")
        .await;
    let store = crate::OpenedStore::open(&s3.url("ds/types.lance"), &s3.storage_options()).unwrap();
    let stats = IoStats::new();
    let before = s3.server_requests();
    // The hint's GET answers 503 SlowDown twice: lakeseek retries it (the read store's
    // client does not), each retry counted.
    s3.fail_next_server_requests(2);
    let dataset = store.dataset().stats(&stats).open().await.unwrap();
    assert!(dataset.version() > 0);
    let sent = s3.server_requests() - before;
    assert_eq!(stats.snapshot().retries, 2, "{:?}", stats.snapshot());
    let snap = stats.snapshot();
    assert_eq!(
        sent,
        snap.requests + snap.retries,
        "every request the server saw is lakeseek's (answered ones, and its retries): {snap:?}"
    );
}
