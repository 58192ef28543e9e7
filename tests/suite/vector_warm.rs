//! Warm HNSW queries over S3 (the in-process server): the decoded partitions — graph rows
//! of `index.idx` and storage rows of `auxiliary.idx` — stay in the session's vector cache,
//! so a later query reads nothing for the partitions an earlier one read and one wave for
//! the others; in a session whose budget cannot hold them, the same queries load them
//! again (the explain report's count of cached partitions sees the difference).

use serde_json::Value;

use crate::index::vector::caches::vector_cache;
use crate::suite::common::S3TestServer;
use crate::suite::vector_catalog::{catalog, vector_fixture};
use crate::{Dataset, IoStats, IoStatsSnapshot, Session};

const NAMES: [&str; 3] = ["ivf_hnsw_sq_l2", "ivf_hnsw_pq_l2", "ivf_hnsw_flat_l2"];

/// Query vector `i` of `name`.
fn query_of(name: &str, i: usize) -> Vec<f32> {
    catalog()["datasets"][name]["query_vectors"][i]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() as f32)
        .collect()
}

async fn open(s3: &S3TestServer, name: &str, session: &Session) -> Dataset {
    let key = format!("w/{name}");
    Dataset::builder(&s3.url(&key))
        .object_store(s3.open(&key).store)
        .session(session)
        .open()
        .await
        .unwrap()
}

/// Query vector `i` with `nprobes`: its explain report and what it read.
async fn probe(
    dataset: &Dataset,
    name: &str,
    i: usize,
    nprobes: usize,
) -> (Value, IoStatsSnapshot) {
    let stats = IoStats::new();
    let report = dataset
        .nearest("vec", &query_of(name, i))
        .k(10)
        .nprobes(nprobes)
        .stats(&stats)
        .explain()
        .await
        .unwrap();
    assert_eq!(report["rows"], 10, "{name}: {report}");
    (report, stats.snapshot())
}

// One thread: requests issued together are in flight together (one wave).
#[tokio::test(flavor = "current_thread")]
async fn a_warm_hnsw_query_reads_nothing_for_the_partitions_it_cached() {
    let s3 = S3TestServer::start().await;
    for name in NAMES {
        s3.upload_dir(
            &vector_fixture(&format!("datasets/{name}")),
            &format!("w/{name}"),
        )
        .await;
    }
    for name in NAMES {
        // Two partitions per fixture: query 0 reads the nearest one, query 1 both.
        let session = Session::default();
        let dataset = open(&s3, name, &session).await;
        let (first, cold) = probe(&dataset, name, 0, 1).await;
        assert_eq!(
            (
                first["partitions_probed"].as_u64(),
                first["partitions_cached"].as_u64()
            ),
            (Some(1), Some(0)),
            "{name}: {first}"
        );
        assert!(cold.requests > 0, "{name}: cold {cold:?}");
        // Another query vector over both partitions: the cached one is not read again
        // (its graph and storage come decoded from the cache), the other in one wave at
        // most (these files are small: the cold open's speculative reads may hold it).
        let (more, new) = probe(&dataset, name, 1, 2).await;
        assert_eq!(
            (
                more["partitions_probed"].as_u64(),
                more["partitions_cached"].as_u64()
            ),
            (Some(2), Some(1)),
            "{name}: {more}"
        );
        assert!(new.round_trips <= 1, "{name}: {new:?}");
        // Every partition cached: a third query vector reads nothing at all.
        let (all, warm) = probe(&dataset, name, 2, 2).await;
        assert_eq!(all["partitions_cached"].as_u64(), Some(2), "{name}: {all}");
        assert_eq!((warm.requests, warm.bytes), (0, 0), "{name}: {warm:?}");
        // The same queries in a session too small to keep a partition (its cache's
        // maintenance run after each query, so that what does not fit is gone): every
        // partition is loaded again, none served from the cache.
        let small = Session::with_budget(4 << 10);
        let dataset = open(&s3, name, &small).await;
        let cache = vector_cache(dataset.version_handle());
        for (i, nprobes) in [(0, 1), (1, 2)] {
            probe(&dataset, name, i, nprobes).await;
            cache.run_pending_tasks().await;
        }
        let (again, _) = probe(&dataset, name, 2, 2).await;
        assert_eq!(
            again["partitions_cached"].as_u64(),
            Some(0),
            "{name}: {again}"
        );
    }
}
