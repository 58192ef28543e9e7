//! Nearest queries over the real S3 protocol (in-process s3s server, every HTTP request
//! counted): pylance's answers on the main index kinds (IVF_RQ, hamming and legacy v1 IVF_PQ
//! included), and the cost of a cold query
//! (dataset open included: at most 5 round trips, no HEAD) and of warm ones (no index
//! bytes for cached partitions, one wave for new ones).

use crate::suite::common::S3TestServer;
use crate::suite::vector_catalog::{check_catalog, vector_fixture};
use crate::{Dataset, IoStats, Session};

const NAMES: [&str; 15] = [
    "ivf_pq_l2",
    "ivf_rq_l2",
    "ivf_flat_hamming",
    "ivf_pq_l2_legacy",
    "ivf_pq_l2_legacy_delta_p0_18_2",
    "ivf_flat_l2",
    "ivf_sq_l2",
    "ivf_pq4_l2",
    "ivf_pq_l2_delta",
    "ivf_pq_l2_deleted",
    "ivf_pq_l2_unindexed",
    "ivf_hnsw_flat_l2",
    "ivf_hnsw_sq_l2",
    "ivf_hnsw_pq_l2",
    "ivf_hnsw_sq_l2_mixed",
];

async fn server() -> S3TestServer {
    let s3 = S3TestServer::start().await;
    for name in NAMES {
        s3.upload_dir(
            &vector_fixture(&format!("datasets/{name}")),
            &format!("v/{name}"),
        )
        .await;
    }
    s3
}

async fn open(s3: &S3TestServer, name: &str, session: &Session, stats: &IoStats) -> Dataset {
    let key = format!("v/{name}");
    Dataset::builder(&s3.url(&key))
        .object_store(s3.open(&key).store)
        .session(session)
        .stats(stats)
        .open()
        .await
        .unwrap()
}

/// The first query vector of `name`.
fn query_of(name: &str) -> Vec<f32> {
    let catalog = crate::suite::vector_catalog::catalog();
    catalog["datasets"][name]["query_vectors"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() as f32)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recorded_nearest_queries_match_pylance_over_s3() {
    let s3 = server().await;
    let session = Session::default();
    let (checked, failures, _) = check_catalog(&NAMES, |name| {
        let (s3, session) = (&s3, session.clone());
        async move { open(s3, &name, &session, &IoStats::new()).await }
    })
    .await;
    assert!(
        failures.is_empty(),
        "{checked} checked:\n{}",
        failures.join("\n")
    );
    assert!(checked > 100, "{checked}");
    assert_eq!(s3.http_counts().heads, 0, "{:?}", s3.http_counts());
}

// One thread: requests the query issues together are all in flight before any answer is
// seen, whatever else the machine runs (on two workers a busy machine could finish one of
// them before the next started and count two round trips where the design has one).
#[tokio::test(flavor = "current_thread")]
async fn a_cold_nearest_query_takes_at_most_five_round_trips_and_no_head() {
    let s3 = server().await;
    // (dataset, partitions probed cold, then warm with more): 4 partitions for the flat
    // sub-index, 2 for HNSW.
    for (name, first, then) in [
        ("ivf_pq_l2", 2, 4),
        ("ivf_flat_l2", 2, 4),
        ("ivf_sq_l2", 2, 4),
        ("ivf_rq_l2", 2, 4),
        ("ivf_pq_l2_legacy", 2, 4),
        ("ivf_hnsw_sq_l2", 1, 2),
        ("ivf_hnsw_pq_l2", 1, 2),
        ("ivf_hnsw_flat_l2", 1, 2),
    ] {
        let session = Session::default();
        let stats = IoStats::new();
        let before = s3.http_counts();
        let dataset = open(&s3, name, &session, &stats).await;
        let batch = dataset
            .nearest("vec", &query_of(name))
            .k(10)
            .nprobes(first)
            .execute()
            .await
            .unwrap();
        assert_eq!(batch.num_rows(), 10);
        let cold = stats.snapshot();
        let http = s3.http_counts().since(&before);
        assert!(cold.round_trips <= 5, "{name}: cold {cold:?}");
        assert_eq!(http.heads, 0, "{name}: {http:?}");
        // Warm, same partitions: no request at all (segment and partitions cached).
        let warm = IoStats::new();
        dataset
            .nearest("vec", &query_of(name))
            .k(10)
            .nprobes(first)
            .stats(&warm)
            .execute()
            .await
            .unwrap();
        assert_eq!(
            warm.snapshot().requests,
            0,
            "{name}: warm {:?}",
            warm.snapshot()
        );
        // Warm, more partitions: one wave for the new ones.
        let more = IoStats::new();
        dataset
            .nearest("vec", &query_of(name))
            .k(10)
            .nprobes(then)
            .stats(&more)
            .execute()
            .await
            .unwrap();
        let m = more.snapshot();
        assert!(m.round_trips <= 1, "{name}: new partitions {m:?}");
        eprintln!("{name}: cold {cold:?} http {http:?}; warm new partitions {m:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cold_query_on_an_old_legacy_delta_index_needs_no_sizes_and_no_head() {
    // pylance 0.18.2: no index details and no file sizes in the manifest, two legacy
    // segments: the footers tell the version (suffix reads, no HEAD).
    let name = "ivf_pq_l2_legacy_delta_p0_18_2";
    let s3 = server().await;
    let (session, open_stats) = (Session::default(), IoStats::new());
    let dataset = open(&s3, name, &session, &open_stats).await;
    let before = s3.http_counts();
    let stats = IoStats::new();
    let batch = dataset
        .nearest("vec", &query_of(name))
        .k(10)
        .nprobes(2)
        .stats(&stats)
        .execute()
        .await
        .unwrap();
    assert_eq!(batch.num_rows(), 10);
    let query = stats.snapshot();
    let http = s3.http_counts().since(&before);
    assert_eq!(http.heads, 0, "{http:?}");
    // The two segments' tails, then their partitions (2 in the tests).
    assert!(query.round_trips <= 3, "{query:?}");
    eprintln!("{name}: open {:?}; query {query:?}", open_stats.snapshot());
}
