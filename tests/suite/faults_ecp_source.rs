//! ecp search through lakeseek's I/O layer under faults: the index is opened with
//! `EcpIndex::open_source` over a `FaultSource` (or `RecordingSource`) around the store's
//! `RangeSource`, so every zarr object read goes through `RangeFetcher` (lakeseek's retries,
//! short-body checks, expected-version checks, accounting).
//!
//! * transient faults are retried by lakeseek's `RetryPolicy` (`IoStats.retries > 0`) and every
//!   page equals the fault-free page;
//! * persistent faults give an error naming the object (`<index URL>/lvl_1/...`);
//! * truncated bodies are retried or refused, never decoded;
//! * an object replaced after this index handle read it (same size, other content) gives
//!   `ObjectChanged`, never a wrong answer; injected version drift gives the fault-free answer
//!   or a clean change error;
//! * the read plan: first reads are whole-object GETs of the visited nodes only, re-reads after a
//!   cache eviction are range GETs of the same objects (pinned to the version read first).

use crate::suite::common;
use crate::suite::ecp_support;
use crate::suite::faults_support as faults;

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::ecp::{EcpIndex, OpenOptions};
use crate::io::wrappers::ReadKind;
use crate::io::{
    is_object_changed, FaultConfig, FaultCounts, FaultKind, FaultSource, ObjectStoreSource,
    RangeSource, RecordingSource, RetryPolicy,
};
use crate::{Error, Result};
use common::S3TestServer;
use ecp_support::*;
use faults::*;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

const INDEXES: [&str; 2] = ["l2_l2_f32", "l3_l2_i8"];

/// Every page (ids, score bits) of every case of the fixture.
type Answers = Vec<Vec<(Vec<u32>, Vec<u32>)>>;

fn label(name: &str) -> String {
    format!("memory:///idx/{name}")
}

async fn memory_source(name: &str) -> (Arc<dyn ObjectStore>, Arc<dyn RangeSource>) {
    let (store, _) = in_memory(name).await;
    let source = Arc::new(ObjectStoreSource::new(Arc::clone(&store), 0, "memory"));
    (store, source)
}

async fn open(source: Arc<dyn RangeSource>, name: &str) -> Result<EcpIndex> {
    EcpIndex::open_source(
        source,
        Path::from(format!("idx/{name}")),
        &label(name),
        OpenOptions {
            prefetch: 4,
            ..OpenOptions::default()
        },
    )
    .await
}

/// Run every case of `name` with a cold cache; returns the pages and the retries the
/// queries' own counters saw.
async fn run_all(index: &EcpIndex, name: &str) -> Result<(Answers, u64)> {
    let exp = expected(name);
    let (mut out, mut retries) = (Vec::new(), 0);
    for case in &exp.cases {
        index.clear_cache();
        let mut q = case.start(index, None)?;
        let mut pages = Vec::new();
        for _ in &case.pages {
            let k = case.pages[pages.len()].k;
            let got = q.next_k(k).await?;
            pages.push((got.ids, got.scores.iter().map(|s| s.to_bits()).collect()));
        }
        retries += q.stats().retries;
        out.push(pages);
    }
    Ok((out, retries))
}

/// The fault-free answers, checked against the reference ids.
async fn clean_answers(name: &str) -> Answers {
    let (_, source) = memory_source(name).await;
    let index = open(source, name).await.unwrap();
    let (answers, retries) = run_all(&index, name).await.unwrap();
    assert_eq!(retries, 0);
    for (case, pages) in expected(name).cases.iter().zip(&answers) {
        for (page, (ids, _)) in case.pages.iter().zip(pages) {
            assert_eq!(&page.ids, ids, "{name} {}", case.name);
        }
    }
    answers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transient_faults_are_retried_by_lakeseek_and_give_the_fault_free_answer() {
    for name in INDEXES {
        let clean = clean_answers(name).await;
        let (mut counts, mut index_retries, mut query_retries) = (FaultCounts::default(), 0, 0);
        for seed in SEEDS {
            let (_, source) = memory_source(name).await;
            let faulty =
                FaultSource::new(source, transient(seed)).with_retry_policy(fast_policy(3));
            let index = open(Arc::new(faulty.clone()), name).await.unwrap();
            let (got, retries) = run_all(&index, name).await.unwrap();
            assert!(
                got == clean,
                "{name} seed {seed}: wrong answer under transient faults"
            );
            let total = index.total_stats();
            assert!(retries <= total.retries, "{retries} {total:?}");
            index_retries += total.retries;
            query_retries += retries;
            counts = add(counts, faulty.counts());
        }
        assert!(counts.injected() > 0, "{name}: nothing injected {counts:?}");
        assert!(
            index_retries > 0 && query_retries > 0,
            "{name}: lakeseek retried nothing ({index_retries}, {query_retries})"
        );
        report(
            "ecp search",
            "transient 503/timeout/stall/truncate",
            "same answer",
            &counts,
            index_retries,
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persistent_faults_give_an_error_naming_the_object() {
    for name in INDEXES {
        for kind in [FaultKind::ServerError, FaultKind::Timeout] {
            let (_, source) = memory_source(name).await;
            let faulty =
                FaultSource::new(source, FaultConfig::seeded(3)).with_retry_policy(fast_policy(2));
            let index = open(Arc::new(faulty.clone()), name).await.unwrap();
            faulty.fail_path(format!("idx/{name}/lvl_1/"), kind);
            let err = run_all(&index, name).await.unwrap_err();
            let msg = err.to_string();
            assert!(matches!(err, Error::Store { .. }), "{msg}");
            assert!(msg.contains(&format!("{}/lvl_1/", label(name))), "{msg}");
            assert!(msg.contains("gave up on the whole-object read"), "{msg}");
            assert!(msg.contains("after 3 attempts"), "{msg}");
            let cause = match kind {
                FaultKind::Timeout => "timed out",
                _ => "503",
            };
            assert!(msg.contains(cause), "{msg}");
            let retries = index.total_stats().retries;
            assert!(retries >= 2, "{retries}");
            report(
                "ecp search",
                &format!("persistent {kind:?}"),
                "error naming the object",
                &faulty.counts(),
                retries,
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_bodies_are_retried_or_refused_never_decoded() {
    for name in INDEXES {
        let clean = clean_answers(name).await;
        let (mut counts, mut retries) = (FaultCounts::default(), 0);
        for seed in SEEDS {
            let (_, source) = memory_source(name).await;
            let faulty =
                FaultSource::new(source, truncating(seed)).with_retry_policy(fast_policy(2));
            let index = open(Arc::new(faulty.clone()), name).await.unwrap();
            let (got, _) = run_all(&index, name).await.unwrap();
            assert!(
                got == clean,
                "{name} seed {seed}: wrong answer with cut bodies"
            );
            assert!(index.total_stats().retries > 0);
            retries += index.total_stats().retries;
            counts = add(counts, faulty.counts());
        }
        assert!(counts.truncations > 0, "{counts:?}");
        report(
            "ecp search",
            "truncated bodies",
            "retried: same answer",
            &counts,
            retries,
        );

        // Every node body cut, with and without retries: an error naming the object, never a
        // decoded half chunk (which would be a `Corrupt` "does not decode").
        for policy in [RetryPolicy::none(), fast_policy(2)] {
            let (_, source) = memory_source(name).await;
            let faulty =
                FaultSource::new(source, FaultConfig::seeded(5)).with_retry_policy(policy.clone());
            let index = open(Arc::new(faulty.clone()), name).await.unwrap();
            faulty.fail_path(format!("idx/{name}/lvl_"), FaultKind::Truncate);
            let err = run_all(&index, name).await.unwrap_err();
            let msg = err.to_string();
            assert!(matches!(err, Error::Store { .. }), "{msg}");
            assert!(msg.contains(&format!("{}/lvl_", label(name))), "{msg}");
            assert!(msg.contains("short read"), "{msg}");
            if policy.max_retries > 0 {
                assert!(msg.contains("gave up"), "{msg}");
            }
        }
    }
}

/// `bytes` changed in place: same size, other content.
fn scrambled(bytes: &[u8]) -> Vec<u8> {
    bytes.iter().map(|b| b ^ 0x5a).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_same_size_replacement_after_a_read_is_object_changed() {
    let name = "l2_l2_f32";
    let clean = clean_answers(name).await;
    let (store, source) = memory_source(name).await;
    let index = open(Arc::clone(&source), name).await.unwrap();
    assert!(run_all(&index, name).await.unwrap().0 == clean);
    // Every leaf's embeddings chunk rewritten with the same size after it was read.
    let mut replaced = 0;
    for (rel, bytes) in files_under(&fixture_dir(name)) {
        if rel.starts_with("lvl_2/") && rel.ends_with("embeddings/c/0/0") {
            let key = Path::from(format!("idx/{name}/{rel}"));
            store
                .put(&key, PutPayload::from(scrambled(&bytes)))
                .await
                .unwrap();
            replaced += 1;
        }
    }
    assert!(replaced > 0);
    let err = run_all(&index, name).await.unwrap_err();
    assert!(is_object_changed(&err), "{err}");
    let msg = err.to_string();
    assert!(msg.contains(&format!("{}/lvl_2/", label(name))), "{msg}");
    assert_eq!(
        index.total_stats().retries,
        0,
        "a changed object is not retried"
    );
    // A new open reads the new objects (whatever they decode to), never a change error.
    let reopened = open(source, name).await.unwrap();
    if let Err(e) = run_all(&reopened, name).await {
        assert!(!is_object_changed(&e), "{e}");
    }
    report(
        "ecp search",
        "object replaced, same size (in-memory etags)",
        "ObjectChanged error; reopen reads the new version",
        &FaultCounts::default(),
        0,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_same_size_replacement_on_s3_is_object_changed() {
    let name = "l3_l2_i8";
    let s3 = S3TestServer::start().await;
    s3.upload_dir(&fixture_dir(name), &format!("idx/{name}"))
        .await;
    let opened = s3.open(&format!("idx/{name}"));
    let url = s3.url(&format!("idx/{name}"));
    let index = EcpIndex::open_source(
        Arc::clone(&opened.source),
        opened.path.clone(),
        &url,
        OpenOptions::default(),
    )
    .await
    .unwrap();
    let (before, _) = run_all(&index, name).await.unwrap();
    let mut replaced = 0;
    for (rel, bytes) in files_under(&fixture_dir(name)) {
        if rel.starts_with("lvl_") && rel.ends_with("/c/0/0") {
            s3.put(&format!("idx/{name}/{rel}"), scrambled(&bytes))
                .await;
            replaced += 1;
        }
    }
    assert!(replaced > 0);
    match run_all(&index, name).await {
        Ok((after, _)) => panic!(
            "replaced chunks were decoded (same answer: {})",
            after == before
        ),
        Err(e) => {
            assert!(is_object_changed(&e), "{e}");
            assert!(e.to_string().contains(&format!("{url}/lvl_")), "{e}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn injected_version_drift_gives_the_answer_or_a_clean_change_error() {
    let (mut errors, mut counts) = (0, FaultCounts::default());
    for name in INDEXES {
        let clean = clean_answers(name).await;
        for seed in SEEDS {
            let (_, source) = memory_source(name).await;
            let faulty =
                FaultSource::new(source, drifting(seed, 0.2)).with_retry_policy(fast_policy(2));
            // Twice: the second pass re-reads every node as a range read pinned to the first.
            for _ in 0..2 {
                let outcome = match open(Arc::new(faulty.clone()), name).await {
                    Ok(index) => {
                        let first = run_all(&index, name).await;
                        match first {
                            Ok(_) => run_all(&index, name).await,
                            err => err,
                        }
                    }
                    Err(e) => Err(e),
                };
                match outcome {
                    Ok((got, _)) => assert!(got == clean, "{name} seed {seed}: wrong answer"),
                    Err(e) => {
                        assert!(is_clean_change_error(&e), "{name} seed {seed}: {e}");
                        errors += 1;
                    }
                }
            }
            counts = add(counts, faulty.counts());
        }
    }
    assert!(
        counts.version_drifts > 0 && errors > 0,
        "no drift detected: {counts:?}"
    );
    report(
        "ecp search",
        "object replaced (injected drift)",
        &format!("{errors} change errors, rest same answer"),
        &counts,
        0,
    );
}

#[tokio::test]
async fn reads_are_whole_objects_of_visited_nodes_then_pinned_ranges() {
    let name = "l3_l2n_f16";
    let exp = expected(name);
    let case = exp
        .cases
        .iter()
        .max_by_key(|c| c.pages[0].visited.len())
        .unwrap();
    let (_, source) = memory_source(name).await;
    let recording = Arc::new(RecordingSource::new(source));
    let index = EcpIndex::open_source(
        Arc::<RecordingSource>::clone(&recording),
        Path::from(format!("idx/{name}")),
        &label(name),
        OpenOptions {
            prefetch: 1,
            ..OpenOptions::default()
        },
    )
    .await
    .unwrap();
    let open_reads = recording.take();
    assert!(open_reads.iter().all(|r| r.kind == ReadKind::Whole));
    assert_eq!(open_reads.len() as u64, index.total_stats().requests);
    let mut per_pass = Vec::new();
    let mut first_reads = Vec::new();
    for pass in 0..2 {
        index.clear_cache();
        let mut q = case.start(&index, None).unwrap();
        let got = q.next_k(case.pages[0].k).await.unwrap();
        assert_eq!(got.ids, case.pages[0].ids);
        let reads = recording.take();
        let stats = q.stats();
        assert_eq!(reads.len() as u64, stats.requests, "pass {pass}");
        let prefix = format!("idx/{name}/");
        let nodes: BTreeSet<(u32, u32)> = reads
            .iter()
            .map(|r| node_of(r.path.strip_prefix(&prefix).unwrap()).expect("only node objects"))
            .collect();
        let visited: BTreeSet<(u32, u32)> = case.pages[0].visited.iter().copied().collect();
        assert_eq!(nodes, visited, "pass {pass}: nodes read");
        // One wave per visited node (prefetch 1), at least 2 GETs per node.
        assert!(stats.round_trips >= visited.len() as u64, "{stats:?}");
        assert!(stats.requests >= 2 * visited.len() as u64, "{stats:?}");
        if pass == 0 {
            assert!(reads.iter().all(|r| r.kind == ReadKind::Whole), "{reads:?}");
            first_reads = reads;
        } else {
            // An object read before is re-read pinned: a range of the whole object as read
            // the first time; a key that was missing (gap, speculative chunk key) is asked for
            // again as a whole object.
            let mut ranged = 0;
            for r in &reads {
                let first = first_reads
                    .iter()
                    .find(|f| f.path == r.path)
                    .unwrap_or_else(|| panic!("{r:?} not read in pass 0"));
                match &first.bytes {
                    Some(bytes) => {
                        assert_eq!(r.kind, ReadKind::Range(bytes.clone()), "{r:?}");
                        ranged += 1;
                    }
                    None => assert_eq!(r.kind, ReadKind::Whole, "{r:?}"),
                }
            }
            assert!(ranged > 0);
        }
        per_pass.push((stats.requests, stats.bytes));
    }
    assert_eq!(per_pass[0], per_pass[1], "same GETs and bytes when re-read");
}
