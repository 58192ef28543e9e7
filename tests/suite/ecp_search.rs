//! Every fixture query returns the numpy reference's ids and scores (first page, next pages,
//! exclude, saved-query resume), over local files and an in-memory store, with and without
//! prefetch; only visited nodes are fetched; no HEAD or LIST is ever sent.

use crate::suite::ecp_support;

use std::sync::Arc;

use crate::ecp::{EcpIndex, OpenOptions};
use crate::io::IoStats;
use ecp_support::*;

async fn open_local(name: &str, prefetch: usize) -> EcpIndex {
    let url = fixture_dir(name).to_string_lossy().to_string();
    EcpIndex::open_url(
        &url,
        &[],
        OpenOptions {
            prefetch,
            ..OpenOptions::default()
        },
    )
    .await
    .unwrap()
}

async fn open_memory(name: &str, prefetch: usize) -> EcpIndex {
    let (store, prefix) = in_memory(name).await;
    EcpIndex::open_store(
        store,
        prefix,
        &format!("memory:///idx/{name}"),
        OpenOptions {
            prefetch,
            ..OpenOptions::default()
        },
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn local_files_match_reference_without_prefetch() {
    for name in FIXTURES {
        let exp = expected(name);
        let index = open_local(name, 1).await;
        check_info(&index, &exp).await;
        check_cases(&index, &exp, true).await;
        check_saved(&index, &exp).await;
    }
}

#[tokio::test]
async fn local_files_match_reference_with_prefetch() {
    for name in FIXTURES {
        let exp = expected(name);
        let index = open_local(name, 8).await;
        check_cases(&index, &exp, false).await;
        check_saved(&index, &exp).await;
    }
}

#[tokio::test]
async fn in_memory_store_matches_reference() {
    for name in FIXTURES {
        let exp = expected(name);
        let index = open_memory(name, 4).await;
        check_info(&index, &exp).await;
        check_cases(&index, &exp, false).await;
        check_saved(&index, &exp).await;
        check_exhaustive(&index, &exp).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gaps_are_skipped_and_cost_one_wave() {
    // l2_l2_f32 has root row 0 -> lvl_1/node_0 missing and lvl_2/node_0 missing.
    let exp = expected("l2_l2_f32");
    assert!(exp.gaps_visited.contains(&(0, 0)) && exp.gaps_visited.contains(&(1, 0)));
    let index = open_local("l2_l2_f32", 1).await;
    let gap = index.node(0, 0).await.unwrap();
    assert!(gap.is_none());
    let stats = Arc::new(IoStats::new());
    let present = index
        .with_stats(Arc::clone(&stats), index.node(0, 1))
        .await
        .unwrap();
    assert!(present.is_some());
    let s = stats.snapshot();
    // embeddings zarr.json + chunk 0, ids zarr.json + chunk 0 (+ more chunks in a 2nd wave)
    assert!(s.requests >= 4, "{s:?}");
    let again = index
        .with_stats(Arc::clone(&stats), index.node(0, 1))
        .await
        .unwrap();
    assert!(again.is_some());
    assert_eq!(stats.snapshot(), s, "cached node costs nothing");
}

#[tokio::test]
async fn warm_search_sends_no_requests_even_with_prefetch() {
    let exp = expected("l3_l2n_f16");
    let index = open_local("l3_l2n_f16", 8).await;
    for case in &exp.cases {
        index.clear_cache();
        let run = |index: EcpIndex| async move {
            let mut q = index
                .query(case.query.clone(), crate::ecp::QueryOptions::default())
                .unwrap();
            let got = q.next_k(10).await.unwrap();
            (got, q.stats())
        };
        let (cold, cold_stats) = run(index.clone()).await;
        let (warm, warm_stats) = run(index.clone()).await;
        assert_eq!(cold, warm);
        assert!(cold_stats.requests > 0);
        assert_eq!(
            warm_stats.requests, 0,
            "{}: warm search fetched {warm_stats:?}",
            case.name
        );
    }
}
