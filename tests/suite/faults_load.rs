//! Faults under load, through the S3 test server's fault wrappers: a storm of `503
//! SlowDown`, connection resets, a body that stalls halfway, a slow tenth of requests and
//! a slow majority. Every answer is right or a clear error naming the object; retries and
//! hedges stay within their budgets (counted, never timed).

use std::sync::Arc;
use std::time::Duration;

use object_store::path::Path;

use crate::io::admission::Admission;
use crate::io::{FetchOptions, IoStats, RangeFetcher, ReadRequest};
use crate::suite::common::{pattern, S3TestServer};

const SIZE: usize = 256 * 1024;

async fn server_with_object() -> (S3TestServer, Vec<u8>) {
    let s3 = S3TestServer::start().await;
    let data = pattern(SIZE);
    s3.put("obj.bin", data.clone()).await;
    (s3, data)
}

fn fetcher(s3: &S3TestServer, extra: &[(&str, &str)], limit: usize) -> RangeFetcher {
    let opened = s3.open_with("", extra);
    let options = FetchOptions {
        coalesce_gap: Some(0),
        ..FetchOptions::default()
    };
    RangeFetcher::new(Arc::clone(&opened.source), options)
        .with_admission(Some(Admission::new(limit, u64::MAX)))
}

fn request(i: u64) -> ReadRequest {
    let at = (i * 4099) % (SIZE as u64 - 2000);
    ReadRequest::sized(Path::from("obj.bin"), at..at + 1000, SIZE as u64)
}

fn check(data: &[u8], i: u64, got: &bytes::Bytes) {
    let r = request(i).range;
    assert_eq!(
        &got[..],
        &data[r.start as usize..r.end as usize],
        "read {i}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_503_storm_fails_each_read_clearly_without_multiplying_requests() {
    let (s3, data) = server_with_object().await;
    let f = fetcher(&s3, &[], 4);
    s3.fail_next_server_requests(u64::MAX / 2);
    let before = s3.server_requests();
    let reads = futures::future::join_all((0..20).map(|i| {
        let f = f.clone();
        async move { f.fetch(&[request(i)], &IoStats::new()).await }
    }))
    .await;
    for r in &reads {
        let err = r.as_ref().expect_err("every read sees 503s");
        assert!(err.to_string().contains("obj.bin"), "{err}");
    }
    // max_retries=2 in the test server's options: 3 HTTP requests per read at most, and
    // lakeseek does not retry what object_store retried already.
    let sent = s3.server_requests() - before;
    assert!(sent <= 20 * 3, "{sent} requests for 20 reads");
    // The storm ends: reads answer again.
    s3.fail_next_server_requests(0);
    let got = f.fetch(&[request(1)], &IoStats::new()).await.unwrap();
    check(&data, 1, &got[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_resets_are_retried_to_the_right_answer() {
    let (s3, data) = server_with_object().await;
    let f = fetcher(&s3, &[], 4);
    // max_retries=2 in the test server's options: two resets per read are retried away.
    for i in 0..5 {
        s3.faults().reset_next(2);
        let got = f.fetch(&[request(i)], &IoStats::new()).await;
        let got = got.unwrap_or_else(|e| panic!("read {i}: {e}"));
        check(&data, i, &got[0]);
    }
    // More resets than retries: a clear error naming the object, not garbage.
    s3.faults().reset_next(3);
    let err = f.fetch(&[request(7)], &IoStats::new()).await.unwrap_err();
    assert!(err.to_string().contains("obj.bin"), "{err}");
    s3.faults().reset_next(0);
    let got = f.fetch(&[request(8)], &IoStats::new()).await.unwrap();
    check(&data, 8, &got[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_stalls_halfway_is_cut_off_and_read_again() {
    let (s3, data) = server_with_object().await;
    // A read timeout cuts off the stalled body (the default is 30 s; shorter here so the
    // test is quick: no assertion depends on it).
    let f = fetcher(&s3, &[("read_timeout", "1s")], 4);
    s3.faults().stall_next(1);
    let stats = IoStats::new();
    match f.fetch(&[request(3)], &stats).await {
        Ok(got) => check(&data, 3, &got[0]),
        Err(e) => panic!("a stalled body must be retried: {e}"),
    }
    assert!(s3.server_requests() >= 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hedges_stay_in_budget_with_a_slow_tenth_and_a_slow_majority() {
    let (s3, data) = server_with_object().await;
    for (every, delay) in [(10, 200), (1, 20)] {
        let f = fetcher(&s3, &[("hedge_fraction", "0.1")], 64);
        s3.faults().slow_every(every, Duration::from_millis(delay));
        let stats = IoStats::new();
        for wave in 0..10u64 {
            let reqs: Vec<ReadRequest> = (0..10).map(|i| request(wave * 10 + i)).collect();
            let got = f.fetch(&reqs, &stats).await.unwrap();
            for (i, bytes) in got.iter().enumerate() {
                check(&data, wave * 10 + i as u64, bytes);
            }
        }
        let s = stats.snapshot();
        // The budget: 10% of requests plus a burst of 3 tokens.
        let bound = (s.requests - s.hedges) / 10 + 3;
        assert!(s.hedges <= bound, "every {every}: {s:?}");
        s3.faults().slow_every(0, Duration::ZERO);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_store_gets_no_hedges() {
    let (s3, data) = server_with_object().await;
    // One slot: while a read runs, a hedge would need a second one, so none is sent.
    let f = fetcher(&s3, &[("hedge_fraction", "1")], 1);
    s3.faults().slow_every(2, Duration::from_millis(30));
    let stats = IoStats::new();
    let reqs: Vec<ReadRequest> = (0..40).map(request).collect();
    let got = f.fetch(&reqs, &stats).await.unwrap();
    for (i, bytes) in got.iter().enumerate() {
        check(&data, i as u64, bytes);
    }
    assert_eq!(stats.snapshot().hedges, 0);
}
