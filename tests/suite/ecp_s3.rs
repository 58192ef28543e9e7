//! The fixture queries over the in-process S3 test server (tests/suite/common): same ids and scores
//! as the reference, no HEAD at the HTTP layer, and prefetch cuts round trips.

use crate::suite::common;
use crate::suite::ecp_support;

use std::time::Duration;

use crate::ecp::{EcpIndex, OpenOptions};
use common::S3TestServer;
use ecp_support::*;

async fn open_s3(s3: &S3TestServer, name: &str, prefetch: usize) -> EcpIndex {
    let opened = s3.open(&format!("idx/{name}"));
    EcpIndex::open_store(
        opened.store,
        opened.path,
        &s3.url(&format!("idx/{name}")),
        OpenOptions {
            prefetch,
            ..OpenOptions::default()
        },
    )
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_matches_reference() {
    let s3 = S3TestServer::start().await;
    for name in FIXTURES {
        s3.upload_dir(&fixture_dir(name), &format!("idx/{name}"))
            .await;
    }
    let before = s3.http_counts();
    for name in FIXTURES {
        let exp = expected(name);
        let index = open_s3(&s3, name, 1).await;
        check_info(&index, &exp).await;
        check_cases(&index, &exp, true).await;
        check_saved(&index, &exp).await;
        let index = open_s3(&s3, name, 8).await;
        check_cases(&index, &exp, false).await;
    }
    let http = s3.http_counts().since(&before);
    assert_eq!(http.heads, 0, "no HEAD requests: {http:?}");
    assert_eq!(
        http.puts + http.posts + http.deletes,
        0,
        "read-only: {http:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_url_with_storage_options_opens() {
    let s3 = S3TestServer::start().await;
    s3.upload_dir(&fixture_dir("l3_l2_i8"), "deep/prefix/l3")
        .await;
    let index = EcpIndex::open_url(
        &s3.url("deep/prefix/l3"),
        &s3.storage_options(),
        OpenOptions::default(),
    )
    .await
    .unwrap();
    let exp = expected("l3_l2_i8");
    check_info(&index, &exp).await;
    check_cases(&index, &exp, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prefetch_cuts_round_trips_not_results() {
    let s3 = S3TestServer::start().await;
    s3.upload_dir(&fixture_dir("l3_l2n_f16"), "idx").await;
    s3.counting().set_latency(Duration::from_millis(5));
    let exp = expected("l3_l2n_f16");
    let case = exp
        .cases
        .iter()
        .max_by_key(|c| c.pages[0].visited.len())
        .unwrap();
    let mut trips = Vec::new();
    for prefetch in [1, 8] {
        let opened = s3.open("idx");
        let index = EcpIndex::open_store(
            opened.store,
            opened.path,
            "s3://test-bucket/idx",
            OpenOptions {
                prefetch,
                ..OpenOptions::default()
            },
        )
        .await
        .unwrap();
        let mut q = case.start(&index, None).unwrap();
        let got = q.next_k(case.pages[0].k).await.unwrap();
        assert_eq!(got.ids, case.pages[0].ids);
        let stats = q.stats();
        let visited = q.visited().len() as u64;
        if prefetch == 1 {
            // one wave per visited node (plus extra waves for multi-chunk leaves)
            assert!(stats.round_trips >= visited, "{stats:?} visited {visited}");
        }
        trips.push(stats.round_trips);
    }
    assert!(
        trips[1] < trips[0],
        "prefetch should need fewer round trips: {trips:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_http_get_is_counted_even_with_cancelled_prefetches() {
    let s3 = S3TestServer::start().await;
    s3.counting().set_latency(Duration::from_millis(1));
    for name in ["l3_l2n_f16", "l3_l2_i8"] {
        s3.upload_dir(&fixture_dir(name), &format!("idx/{name}"))
            .await;
        for prefetch in [1, 8] {
            let before = s3.http_counts();
            let index = open_s3(&s3, name, prefetch).await;
            check_cases(&index, &expected(name), false).await;
            let http = s3.http_counts().since(&before);
            let total = index.total_stats();
            assert_eq!(http.heads, 0, "{name}: {http:?}");
            assert_eq!(index.store_probe().kinds().gets, total.requests);
            if prefetch == 1 {
                assert_eq!(total.requests, http.gets, "{name}: {total:?} {http:?}");
            } else {
                // Prefetches still in flight when a page returns are dropped: their GETs
                // are counted (one may be dropped before it reached the wire).
                assert!(total.requests >= http.gets, "{name}: {total:?} {http:?}");
            }
        }
    }
}
