//! BTree queries and list-element (`any_element`) queries over datasets on the in-process S3
//! server, with every ranged read going through a `FaultSource`: transient faults give the
//! fault-free answer (with retries), persistent faults an error naming the object (and its
//! byte range for range reads), truncated bodies are never decoded, and objects that appear
//! replaced between reads give a clean error or the right answer, never a wrong one.

use crate::suite::common;
use crate::suite::faults_support as faults;

use std::path::PathBuf;
use std::sync::Arc;

use crate::index::list_element::parse_any_element_filter;
use crate::index::list_element::query::{plan_any_element_query, AnyElementOptions};
use crate::io::list::{ObjectLister, ObjectStoreLister};
use crate::io::{FaultConfig, FaultCounts, FaultKind, FaultSource, IoStats, RetryPolicy};
use crate::lance::dataset::{DatasetSession, DatasetStore, DatasetVersion};
use crate::suite::common::any_element::execute_any_element_query;
use crate::suite::common::btree_query::{query_row_addresses, QueryOptions};
use crate::Result;
use common::S3TestServer;
use faults::*;

/// (capability, dataset directory under tests/fixtures, dataset, filters).
const CASES: &[(&str, &str, &str, &[&str])] = &[
    (
        "btree query",
        "datasets",
        "segments",
        &["k = 5", "k IN (0, 199, 100)", "k < 10", "k >= 190"],
    ),
    (
        "btree query",
        "datasets",
        "bitmap_del",
        &["k = 7", "k IN (1, 500, 999)", "k < 5"],
    ),
    (
        "list-element query",
        "list_element/datasets",
        "detections",
        &[
            "any_element(det, 'label = ''car''')",
            "any_element(det, 'label = ''car'' AND confidence > 0.9')",
        ],
    ),
    (
        "list-element query",
        "list_element/datasets",
        "renamed",
        &[
            "any_element(det, 'kind = ''car''')",
            "any_element(det, 'label = ''t1''')",
        ],
    ),
];

fn fixtures(dir: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(dir)
}

async fn server() -> S3TestServer {
    let s3 = S3TestServer::start().await;
    for (_, dir, name, _) in CASES {
        s3.upload_dir(
            &fixtures(dir).join(format!("{name}.lance")),
            &format!("ds/{name}.lance"),
        )
        .await;
    }
    s3
}

/// A dataset store whose reads go through `faulty` (listing stays fault-free).
fn store(
    s3: &S3TestServer,
    name: &str,
    faulty: &FaultSource,
) -> (DatasetStore, object_store::path::Path) {
    let opened = s3.open(&format!("ds/{name}.lance"));
    let lister: Arc<dyn ObjectLister> = Arc::new(ObjectStoreLister::for_scheme(
        Arc::clone(&opened.store),
        &opened.scheme,
    ));
    (
        DatasetStore::new(Arc::new(faulty.clone()), lister),
        opened.path,
    )
}

async fn run_query(
    dataset: &DatasetVersion,
    capability: &str,
    filter: &str,
    stats: &IoStats,
) -> Result<Vec<u64>> {
    if capability == "btree query" {
        let answer =
            query_row_addresses(dataset, filter, QueryOptions { allow_scan: false }, stats).await?;
        return Ok(answer.row_addresses.iter().collect());
    }
    let call = parse_any_element_filter(filter)?;
    let plan = plan_any_element_query(dataset, &call, AnyElementOptions::default(), stats).await?;
    let answer = execute_any_element_query(dataset, &plan, stats).await?;
    Ok(answer.row_addresses.iter().collect())
}

/// Open the dataset (fresh session: cold caches) and run every filter of the case.
async fn run_case(
    s3: &S3TestServer,
    case: usize,
    faulty: &FaultSource,
    stats: &IoStats,
) -> Result<Vec<Vec<u64>>> {
    let (capability, _, name, filters) = CASES[case];
    let (store, root) = store(s3, name, faulty);
    let session = Arc::new(DatasetSession::default());
    let dataset = DatasetVersion::open(store, root, None, session, stats).await?;
    let mut out = Vec::new();
    for filter in filters {
        out.push(run_query(&dataset, capability, filter, stats).await?);
    }
    Ok(out)
}

fn no_faults(s3: &S3TestServer, name: &str) -> FaultSource {
    let opened = s3.open(&format!("ds/{name}.lance"));
    FaultSource::new(opened.source, FaultConfig::seeded(0)).with_retry_policy(fast_policy(2))
}

async fn clean_answers(s3: &S3TestServer) -> Vec<Vec<Vec<u64>>> {
    let mut out = Vec::new();
    for (i, (_, _, name, _)) in CASES.iter().enumerate() {
        let clean = no_faults(s3, name);
        out.push(run_case(s3, i, &clean, &IoStats::new()).await.unwrap());
        assert_eq!(clean.counts().injected(), 0);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transient_faults_give_the_fault_free_answer() {
    let s3 = server().await;
    let clean = clean_answers(&s3).await;
    for capability in ["btree query", "list-element query"] {
        for (config_name, make) in [
            ("transient mix", transient as fn(u64) -> FaultConfig),
            ("truncated bodies", truncating),
        ] {
            let (mut counts, mut retries) = (FaultCounts::default(), 0);
            for (i, (cap, _, name, _)) in CASES.iter().enumerate() {
                if *cap != capability {
                    continue;
                }
                for seed in SEEDS {
                    let opened = s3.open(&format!("ds/{name}.lance"));
                    let faulty = FaultSource::new(opened.source, make(seed))
                        .with_retry_policy(fast_policy(2));
                    let stats = IoStats::new();
                    let got = run_case(&s3, i, &faulty, &stats)
                        .await
                        .unwrap_or_else(|e| panic!("{name} seed {seed}: {e}"));
                    assert!(
                        got == clean[i],
                        "{name} seed {seed}: wrong answer under faults"
                    );
                    let c = faulty.counts();
                    assert_eq!(
                        stats.snapshot().retries,
                        c.failing(),
                        "{name} seed {seed}: {c:?}"
                    );
                    counts = add(counts, c);
                    retries += stats.snapshot().retries;
                }
            }
            assert!(
                counts.failing() > 0 && retries > 0,
                "{capability}: {counts:?}"
            );
            report(capability, config_name, "same answer", &counts, retries);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persistent_faults_name_the_object() {
    let s3 = server().await;
    for (case, (capability, _, name, filters)) in CASES.iter().enumerate() {
        for kind in [FaultKind::ServerError, FaultKind::Timeout] {
            // The whole dataset fails: opening it gives up on the manifest, naming it.
            let faulty = no_faults(&s3, name);
            faulty.fail_path(format!("ds/{name}.lance/"), kind);
            let err = run_case(&s3, case, &faulty, &IoStats::new())
                .await
                .unwrap_err();
            let msg = err.to_string();
            assert!(
                msg.contains(&format!("ds/{name}.lance/_versions/")),
                "{msg}"
            );
            assert!(
                msg.contains("gave up on the") && msg.contains("after 3 attempts"),
                "{msg}"
            );

            // Only index and data files fail, after the first query warmed the caches: the
            // next queries' reads give up, naming the file (and the byte range of range
            // reads).
            let faulty = no_faults(&s3, name);
            let (store, root) = store(&s3, name, &faulty);
            let stats = IoStats::new();
            let dataset = DatasetVersion::open(
                store,
                root,
                None,
                Arc::new(DatasetSession::default().without_data_tails()),
                &stats,
            )
            .await
            .unwrap();
            run_query(&dataset, capability, filters[0], &stats)
                .await
                .unwrap();
            faulty.fail_path("/_indices/", kind);
            faulty.fail_path("/data/", kind);
            let mut failed = 0;
            for filter in &filters[1..] {
                if let Err(err) = run_query(&dataset, capability, filter, &stats).await {
                    let msg = err.to_string();
                    let root = format!("ds/{name}.lance/");
                    assert!(
                        msg.contains(&format!("{root}_indices/"))
                            || msg.contains(&format!("{root}data/")),
                        "{msg}"
                    );
                    assert!(msg.contains("after 3 attempts"), "{msg}");
                    // Range reads name their bytes; suffix reads (footers) their length.
                    let names_range =
                        msg.contains("[bytes ") && msg.contains("range read of bytes");
                    let names_suffix = msg.contains("suffix read of the last");
                    assert!(names_range || names_suffix, "{msg}");
                    failed += 1;
                }
            }
            assert!(
                faulty.counts().persistent > 0,
                "{name}: nothing read after warm-up"
            );
            assert!(failed > 0, "{name}: no query failed");
            report(
                capability,
                &format!("persistent {kind:?}"),
                "error naming path + range/suffix",
                &faulty.counts(),
                stats.snapshot().retries,
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_bodies_without_retries_are_errors_never_data() {
    let s3 = server().await;
    let clean = clean_answers(&s3).await;
    for (i, (capability, _, name, _)) in CASES.iter().enumerate() {
        let (mut counts, mut errors) = (FaultCounts::default(), 0);
        for seed in SEEDS {
            let opened = s3.open(&format!("ds/{name}.lance"));
            let faulty = FaultSource::new(opened.source, truncating(seed))
                .with_retry_policy(RetryPolicy::none());
            match run_case(&s3, i, &faulty, &IoStats::new()).await {
                Ok(got) => assert!(got == clean[i], "{name} seed {seed}: wrong answer"),
                Err(e) => {
                    assert!(e.to_string().contains("short read"), "{name}: {e}");
                    errors += 1;
                }
            }
            counts = add(counts, faulty.counts());
        }
        assert!(errors > 0, "{name}: no truncation hit");
        report(
            capability,
            "truncated, no retries",
            "short-read error",
            &counts,
            0,
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replaced_objects_give_a_clean_error_or_the_right_answer() {
    let s3 = server().await;
    let clean = clean_answers(&s3).await;
    for (i, (capability, _, name, _)) in CASES.iter().enumerate() {
        let (mut counts, mut errors) = (FaultCounts::default(), 0);
        for seed in SEEDS {
            let opened = s3.open(&format!("ds/{name}.lance"));
            let faulty = FaultSource::new(opened.source, drifting(seed, 0.3))
                .with_retry_policy(fast_policy(2));
            match run_case(&s3, i, &faulty, &IoStats::new()).await {
                Ok(got) => assert!(got == clean[i], "{name} seed {seed}: wrong answer"),
                Err(e) => {
                    assert!(is_clean_change_error(&e), "{name} seed {seed}: {e}");
                    errors += 1;
                }
            }
            counts = add(counts, faulty.counts());
        }
        assert!(counts.version_drifts > 0, "{name}: {counts:?}");
        report(
            capability,
            "object replaced (injected drift)",
            &format!("{errors} clean errors, rest same answer"),
            &counts,
            0,
        );
    }
}
