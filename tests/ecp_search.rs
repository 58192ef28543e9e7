//! Every fixture query returns the numpy reference's ids and scores (first page, next pages,
//! exclude, saved-query resume), over local files and an in-memory store, with and without
//! prefetch; only visited nodes are fetched; no HEAD or LIST is ever sent.

mod ecp_support;

use std::collections::BTreeSet;
use std::sync::Arc;

use ecp_support::*;
use lakeseek::ecp::{EcpIndex, OpenOptions, QueryOptions, SearchParams};
use lakeseek::io::IoStats;

async fn open_local(name: &str, prefetch: usize) -> EcpIndex {
    let url = fixture_dir(name).to_string_lossy().to_string();
    EcpIndex::open(&url, &[], OpenOptions { prefetch, ..OpenOptions::default() }).await.unwrap()
}

async fn open_memory(name: &str, prefetch: usize) -> EcpIndex {
    let (store, prefix) = in_memory(name).await;
    EcpIndex::open_store(store, prefix, &format!("memory:///idx/{name}"), OpenOptions { prefetch, ..OpenOptions::default() })
        .await
        .unwrap()
}

fn node_of(path: &str) -> Option<(u32, u32)> {
    let mut parts = path.split('/');
    let lvl = parts.next()?.strip_prefix("lvl_")?.parse::<u32>().ok()?;
    let node = parts.next()?.strip_prefix("node_")?.parse::<u32>().ok()?;
    Some((lvl - 1, node))
}

async fn check_info(index: &EcpIndex, exp: &Expected) {
    let info = index.info();
    assert_eq!(info.levels, exp.levels);
    assert_eq!(format!("{:?}", info.metric), exp.metric);
    assert_eq!(info.is_normalized, exp.is_normalized);
    assert_eq!(info.dim, exp.dim);
    assert_eq!(info.node_size, exp.node_size);
    assert_eq!(info.total_items, exp.total_items);
    assert_eq!(info.next_item_id, exp.next_item_id);
    assert_eq!(info.format_version, 1);
    assert_eq!(info.format_version_present, exp.format_version_written);
    assert_eq!(format!("{:?}", info.embedding_dtype).to_lowercase(), exp.dtype);
}

async fn check_cases(index: &EcpIndex, exp: &Expected, check_requests: bool) {
    for case in &exp.cases {
        let what = format!("{} {}", exp.name, case.name);
        index.clear_cache();
        let params = SearchParams { search_exp: case.search_exp, max_increments: case.max_increments };
        let mut q = index
            .query(case.query.clone(), QueryOptions { params, exclude: case.exclude.clone(), prefetch: None })
            .unwrap();
        for (p, page) in case.pages.iter().enumerate() {
            index.store_probe().start_log();
            let got = q.next_k(page.k).await.unwrap();
            let log = index.store_probe().take_log();
            assert_eq!(got.ids, page.ids, "{what} page {p}: ids");
            assert_scores_close(&format!("{what} page {p}"), &got.scores, &page.scores);
            assert_eq!(q.visited(), page.visited.as_slice(), "{what} page {p}: visiting order");
            if check_requests {
                // No prefetch and a cold cache on page 0: exactly the visited nodes were fetched.
                let fetched: BTreeSet<(u32, u32)> = log.iter().filter_map(|l| node_of(l)).collect();
                let visited: BTreeSet<(u32, u32)> = page.visited.iter().copied().collect();
                if p == 0 {
                    assert_eq!(fetched, visited, "{what} page {p}: nodes fetched");
                } else {
                    assert!(fetched.is_subset(&visited), "{what} page {p}: fetched beyond visited");
                }
                assert!(log.iter().all(|l| l.starts_with("lvl_")), "{what}: unexpected requests {log:?}");
            }
        }
    }
    let kinds = index.store_probe().kinds();
    assert_eq!((kinds.heads, kinds.lists, kinds.puts), (0, 0, 0), "{}: no HEAD/LIST/PUT", exp.name);
}

async fn check_saved(index: &EcpIndex, exp: &Expected) {
    for saved in &exp.saved {
        let what = format!("{} saved query {}", exp.name, saved.query_id);
        let params = SearchParams { search_exp: saved.search_exp, max_increments: saved.max_increments };
        let mut q = index.load_query(saved.query_id, QueryOptions { params, ..Default::default() }).await.unwrap();
        for (p, page) in saved.pages.iter().enumerate() {
            let got = q.next_k(page.k).await.unwrap();
            assert_eq!(got.ids, page.ids, "{what} page {p}");
            assert_scores_close(&what, &got.scores, &page.scores);
        }
        // The uninterrupted search gives the same pages after the first.
        let mut fresh = index
            .query(saved.query.clone(), QueryOptions { params, exclude: saved.exclude.clone(), prefetch: None })
            .unwrap();
        let first = fresh.next_k(saved.first_page.k).await.unwrap();
        assert_eq!(first.ids, saved.first_page.ids, "{what} first page");
        for page in &saved.pages {
            assert_eq!(fresh.next_k(page.k).await.unwrap().ids, page.ids, "{what} uninterrupted");
        }
    }
}

async fn check_exhaustive(index: &EcpIndex, exp: &Expected) {
    for case in &exp.cases {
        let stats = Arc::new(IoStats::new());
        let got = index.exhaustive_search(case.query.clone(), 10, &[], 8, stats.clone()).await.unwrap();
        assert_eq!(got.ids, case.brute_force_ids, "{} {} exhaustive", exp.name, case.name);
        assert_scores_close("exhaustive", &got.scores, &case.brute_force_scores);
        assert!(stats.snapshot().requests > 0);
    }
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
    let present = index.with_stats(stats.clone(), index.node(0, 1)).await.unwrap();
    assert!(present.is_some());
    let s = stats.snapshot();
    // embeddings zarr.json + chunk 0, ids zarr.json + chunk 0 (+ more chunks in a 2nd wave)
    assert!(s.requests >= 4, "{s:?}");
    let again = index.with_stats(stats.clone(), index.node(0, 1)).await.unwrap();
    assert!(again.is_some());
    assert_eq!(stats.snapshot(), s, "cached node costs nothing");
}
