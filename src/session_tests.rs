//! Every cache of a session stays inside the session's one budget: the caches are filled
//! through real reads (a BTree, the bitmap-family, zone-map and bloom-filter indices, data
//! page inits, manifests, an ecpfs index, vector and full-text indices) and their weighed total is compared to the budget.

use std::path::PathBuf;

use crate::ecp::{EcpIndex, EcpStore, OpenOptions, QueryOptions};
use crate::io::budget::CacheShare;
use crate::{Dataset, Session};

fn fixture(path: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(path)
        .to_string_lossy()
        .into_owned()
}

/// Every recorded filter of `scalar_indices.lance` (each kind over each column type).
fn scalar_filters() -> Vec<String> {
    let text = std::fs::read_to_string(fixture("tests/fixtures/datasets/scalar_answers.json"))
        .expect("scalar answers");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("json");
    doc["datasets"]["scalar_indices"]["queries"]
        .as_array()
        .expect("queries")
        .iter()
        .map(|q| q["filter"].as_str().expect("filter").to_string())
        .collect()
}

/// Load every cache of `session` through real reads.
async fn fill(session: &Session) {
    let sample = Dataset::builder(crate::sample::DATASET_URL)
        .object_store(crate::sample::store().await.expect("sample store"))
        .session(session)
        .open()
        .await
        .expect("sample dataset");
    let mut prewarm = sample.prewarm().all_index_pages(true);
    for name in sample.index_names() {
        prewarm = prewarm.index(&name);
    }
    for name in sample.column_names() {
        prewarm = prewarm.column(&name);
    }
    prewarm.run().await.expect("prewarm sample");
    let scalar = Dataset::builder(&fixture("tests/fixtures/datasets/scalar_indices.lance"))
        .session(session)
        .open()
        .await
        .expect("scalar dataset");
    for filter in scalar_filters() {
        scalar.filter(&filter).await.expect(&filter);
    }
    // Full-text: a phrase search (segment, postings with positions, document lengths).
    let fts = Dataset::builder(&fixture("tests/fixtures/fts/datasets/positions"))
        .session(session)
        .open()
        .await
        .expect("fts dataset");
    let search = fts.search("lazy dog").column("body").phrase(true).k(5);
    search.execute().await.expect("fts search");
    // Vector indices: nearest queries on the vector fixtures (segments and partitions).
    for name in ["ivf_pq_l2", "ivf_flat_l2", "ivf_sq_l2"] {
        let url = fixture(&format!("tests/fixtures/vector/datasets/{name}"));
        let dataset = Dataset::builder(&url)
            .session(session)
            .open()
            .await
            .expect(name);
        let query = vec![0.5_f32; 16];
        let nearest = dataset.nearest("vec", &query).k(10).nprobes(4);
        nearest.execute().await.expect(name);
    }
    for name in ["l1_ip_f32", "l2_l2_f32", "l3_l2_i8"] {
        let url = fixture(&format!("tests/fixtures/ecp/{name}"));
        let index = EcpIndex::open(&url, EcpStore::default(), OpenOptions::default(), session)
            .await
            .expect("ecp index");
        let query = vec![0.25_f32; index.info().dim];
        let mut search = index.query(query, QueryOptions::default()).expect("query");
        search.next_k(50).await.expect("search");
    }
}

#[tokio::test]
async fn every_cache_weighs_within_the_session_budget() {
    let mut totals = Vec::new();
    for budget in [2 << 20, 8 << 20, crate::DEFAULT_SESSION_BUDGET] {
        let session = Session::with_budget(budget);
        fill(&session).await;
        let weighed = session.datasets.caches.weighed().await;
        let total: u64 = weighed.iter().map(|(_, w)| w).sum();
        assert!(total <= budget, "{total} > {budget}: {weighed:?}");
        for share in CacheShare::ALL {
            assert!(
                weighed.iter().any(|(s, w)| *s == share && *w > 0),
                "budget {budget}: nothing cached in {share:?}: {weighed:?}"
            );
        }
        eprintln!("budget {budget}: {total} weighed: {weighed:?}");
        totals.push(total);
    }
    // The same reads held more under the default budget: the small budgets did evict.
    assert!(totals[0] < totals[2], "{totals:?}");
}
