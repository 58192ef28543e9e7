//! Admission control under load, against the in-process S3 server and an in-memory source:
//! thousands of queries queue behind one bound and all answer right; dropping queries frees
//! their queued and in-flight requests (seen by the server's gate and the admission
//! counters, never by time). The overload of the full query mix (10x more concurrent
//! queries than slots, slow server) is `stress_mixed::concurrent_mixed_queries_hold_against_a_slow_server`.

use crate::suite::common::wait_until;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use bytes::Bytes;
use object_store::path::Path;

use crate::io::admission::Admission;
use crate::io::wrappers::limit::probe::Probe;
use crate::io::{FetchOptions, IoStats, RangeFetcher, ReadRequest};
use crate::suite::common::{pattern, S3TestServer};

fn two_ranges(query: u64) -> Vec<ReadRequest> {
    let at = query * 1000;
    vec![
        ReadRequest::new(Path::from(format!("o{}", query % 7)), at..at + 10),
        ReadRequest::new(Path::from(format!("o{}", query % 7)), at + 500..at + 520),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_queued_queries_over_two_hundred_slots_all_answer_right() {
    let probe = Arc::new(Probe::default());
    let admission = Admission::new(200, u64::MAX);
    let fetcher = RangeFetcher::new(Arc::<Probe>::clone(&probe), FetchOptions::default())
        .with_admission(Some(Arc::clone(&admission)));
    let queries = 10_000u64;
    let tasks: Vec<_> = (0..queries)
        .map(|q| {
            let fetcher = fetcher.clone();
            tokio::spawn(async move {
                let stats = IoStats::new();
                let got = fetcher.fetch(&two_ranges(q), &stats).await;
                (q, got, stats.snapshot())
            })
        })
        .collect();
    let mut queued_queries = 0;
    for task in tasks {
        let (q, got, stats) = task.await.expect("query task");
        let got = got.unwrap_or_else(|e| panic!("query {q}: {e}"));
        let want: Vec<Bytes> = two_ranges(q)
            .iter()
            .map(|r| r.range.clone().map(|i| (i % 251) as u8).collect())
            .collect();
        assert_eq!(got, want, "query {q}");
        assert_eq!(stats.requests, 2);
        if stats.queued_micros > 0 {
            queued_queries += 1;
        }
    }
    let snap = admission.snapshot();
    assert!(snap.peak_in_flight <= 200, "{snap:?}");
    assert!(probe.peak.load(Ordering::SeqCst) <= 200);
    assert_eq!(snap.admitted, 2 * queries);
    assert_eq!((snap.in_flight, snap.queued), (0, 0));
    assert!(
        queued_queries > 0,
        "20,000 requests over 200 slots: some waited"
    );
}

// One thread: the 20 aborts below all land before any task runs again. On several
// threads a slot freed by the first abort can be granted to a query not yet aborted,
// which then sends its request — a race of the test, not of the admission.
#[tokio::test(flavor = "current_thread")]
async fn dropping_queries_frees_their_queued_and_in_flight_requests() {
    let s3 = S3TestServer::start().await;
    let data = pattern(64 * 1024);
    s3.put("obj.bin", data.clone()).await;
    let opened = s3.open("");
    let admission = Admission::new(4, u64::MAX);
    let options = FetchOptions {
        coalesce_gap: Some(0),
        ..FetchOptions::default()
    };
    let fetcher = RangeFetcher::new(Arc::clone(&opened.source), options)
        .with_admission(Some(Arc::clone(&admission)));
    let ranges = |q: u64| -> Vec<ReadRequest> {
        (0..8u64)
            .map(|i| {
                let at = (q * 8 + i) * 300;
                ReadRequest::sized(Path::from("obj.bin"), at..at + 100, data.len() as u64)
            })
            .collect()
    };
    let before = s3.server_requests();
    s3.faults().close_gate();
    let tasks: Vec<_> = (0..20u64)
        .map(|q| {
            let (fetcher, reqs) = (fetcher.clone(), ranges(q));
            tokio::spawn(async move { fetcher.fetch(&reqs, &IoStats::new()).await })
        })
        .collect();
    wait_until("4 requests at the gate, the other 156 queued", || {
        s3.faults().waiting_at_gate() == 4 && admission.snapshot().queued == 156
    })
    .await;
    assert_eq!(
        s3.server_requests() - before,
        4,
        "only admitted requests are sent"
    );
    for t in &tasks {
        t.abort();
    }
    for t in tasks {
        assert!(t.await.unwrap_err().is_cancelled());
    }
    let snap = admission.snapshot();
    assert_eq!((snap.in_flight, snap.queued), (0, 0), "{snap:?}");
    // Every request is admitted before it is sent, and the queue is empty: the 156 queued
    // requests of the dropped queries are gone without reaching the server.
    assert_eq!(s3.server_requests() - before, 4);
    s3.faults().open_gate();
    // The store is free again: a new query answers right.
    let stats = IoStats::new();
    let got = fetcher.fetch(&ranges(3), &stats).await.unwrap();
    for (r, bytes) in ranges(3).iter().zip(&got) {
        assert_eq!(
            &bytes[..],
            &data[r.range.start as usize..r.range.end as usize]
        );
    }
    // Its 8 requests, plus at most one retry per connection the 4 aborted requests left
    // dead in the pool (object_store's HTTP client retries those itself, unseen by the
    // stats; lakeseek's own retries are counted) — never the 156 dropped ones.
    let sent = s3.server_requests() - before - 4;
    let ours = 8 + stats.snapshot().retries;
    assert!(
        (ours..=ours + 4).contains(&sent),
        "{sent} requests for the new query: {:?}",
        stats.snapshot()
    );
}
