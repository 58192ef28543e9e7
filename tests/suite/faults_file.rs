//! File reads (`LanceFileReader::read_rows`) and the 2.3 sparse nested take, over the
//! in-process S3 server wrapped in a `FaultSource`: transient faults give exactly the
//! fault-free answer (with retries), persistent faults an error naming path and range,
//! truncated bodies are never decoded, and a replaced object is detected, never mixed.

use crate::suite::common;
use crate::suite::faults_support as faults;

use std::sync::Arc;

use crate::io::{
    is_object_changed, FaultCounts, FaultKind, FaultSource, FetchOptions, IoStats, RangeFetcher,
    RangeSource, RetryPolicy,
};
use crate::lance::reader::{LanceFileReader, ReaderCaches, RowSelection};
use crate::Result;
use arrow_array::RecordBatch;
use common::S3TestServer;
use faults::*;
use object_store::path::Path;

/// (capability, fixture file): flat files of each version, and the sparse nested file.
const FILES: &[(&str, &str)] = &[
    ("file read", "v2_1/multipage.lance"),
    ("file read", "v2_2/strings.lance"),
    ("file read", "v2_3/multipage.lance"),
    ("file read", "v2_3/nulls_constants.lance"),
    ("sparse take", "nested/v2_3_sparse/detections.lance"),
    ("sparse take", "nested/v2_3_sparse/nested.lance"),
];

async fn server() -> S3TestServer {
    let s3 = S3TestServer::start().await;
    for (_, file) in FILES {
        s3.put(&format!("files/{file}"), common::file_fixture(file))
            .await;
    }
    s3
}

async fn open(
    source: Arc<dyn RangeSource>,
    path: &Path,
    stats: &IoStats,
) -> Result<LanceFileReader> {
    let fetcher = RangeFetcher::new(source, FetchOptions::default());
    LanceFileReader::open(
        fetcher,
        path.clone(),
        None,
        Arc::new(ReaderCaches::default()),
        stats,
    )
    .await
}

/// Every 3rd row (a take) and all rows (a scan) of all fields, each a separate read.
fn selections(rows: u64) -> Vec<RowSelection> {
    vec![
        RowSelection::Rows((0..rows).step_by(3).collect()),
        RowSelection::Range(0..rows),
    ]
}

async fn read_with(
    source: Arc<dyn RangeSource>,
    path: &Path,
    stats: &IoStats,
) -> Result<Vec<RecordBatch>> {
    let reader = open(source, path, stats).await?;
    let fields: Vec<usize> = (0..reader.schema().fields.len()).collect();
    let mut out = Vec::new();
    for selection in selections(reader.num_rows()) {
        out.push(reader.read_rows(&fields, &selection, stats).await?);
    }
    Ok(out)
}

/// The fault-free answers, one per file.
async fn clean_answers(s3: &S3TestServer) -> Vec<Vec<RecordBatch>> {
    let mut out = Vec::new();
    for (_, file) in FILES {
        let opened = s3.open(&format!("files/{file}"));
        out.push(
            read_with(opened.source, &opened.path, &IoStats::new())
                .await
                .unwrap(),
        );
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transient_faults_give_the_fault_free_answer() {
    let s3 = server().await;
    let clean = clean_answers(&s3).await;
    for capability in ["file read", "sparse take"] {
        for (config_name, make) in [
            ("transient mix", transient as fn(u64) -> _),
            ("truncated bodies", truncating),
        ] {
            let (mut counts, mut retries) = (FaultCounts::default(), 0);
            for (i, (cap, file)) in FILES.iter().enumerate() {
                if *cap != capability {
                    continue;
                }
                for seed in SEEDS {
                    let opened = s3.open(&format!("files/{file}"));
                    let faulty = FaultSource::new(opened.source, make(seed))
                        .with_retry_policy(fast_policy(2));
                    let stats = IoStats::new();
                    let got = read_with(Arc::new(faulty.clone()), &opened.path, &stats)
                        .await
                        .unwrap_or_else(|e| panic!("{file} seed {seed}: {e}"));
                    assert!(
                        got == clean[i],
                        "{file} seed {seed}: wrong answer under faults"
                    );
                    // Every failing attempt was retried exactly once (the budget suffices).
                    let c = faulty.counts();
                    assert_eq!(
                        stats.snapshot().retries,
                        c.failing(),
                        "{file} seed {seed}: {c:?}"
                    );
                    counts = add(counts, c);
                    retries += stats.snapshot().retries;
                }
            }
            assert!(
                counts.failing() > 0 && retries > 0,
                "{capability}: {counts:?}"
            );
            if config_name == "truncated bodies" {
                assert!(counts.truncations > 0);
            }
            report(capability, config_name, "same answer", &counts, retries);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persistent_faults_name_path_and_range() {
    let s3 = server().await;
    for (capability, file) in [FILES[1], FILES[5]] {
        let key = format!("files/{file}");
        for kind in [FaultKind::ServerError, FaultKind::Timeout] {
            // Failing from the start: the open's suffix read gives up.
            let opened = s3.open(&key);
            let faulty = FaultSource::new(Arc::clone(&opened.source), Default::default())
                .with_retry_policy(fast_policy(2));
            faulty.fail_path(file.to_string(), kind);
            let err = read_with(Arc::new(faulty.clone()), &opened.path, &IoStats::new())
                .await
                .unwrap_err();
            let msg = err.to_string();
            assert!(msg.contains(&key), "{msg}");
            assert!(
                msg.contains("gave up on the suffix read of the last"),
                "{msg}"
            );
            assert!(msg.contains("after 3 attempts"), "{msg}");

            // Failing after the open: the data read names its byte range.
            let faulty = FaultSource::new(Arc::clone(&opened.source), Default::default())
                .with_retry_policy(fast_policy(2));
            let stats = IoStats::new();
            let reader = open(Arc::new(faulty.clone()), &opened.path, &stats)
                .await
                .unwrap();
            faulty.fail_path(file.to_string(), kind);
            let fields: Vec<usize> = (0..reader.schema().fields.len()).collect();
            let err = reader
                .read_rows(&fields, &RowSelection::Range(0..reader.num_rows()), &stats)
                .await
                .unwrap_err();
            let msg = err.to_string();
            assert!(msg.contains(&key) && msg.contains("[bytes "), "{msg}");
            assert!(msg.contains("gave up on the range read of bytes"), "{msg}");
            assert!(msg.contains("after 3 attempts"), "{msg}");
            let expected_cause = match kind {
                FaultKind::Timeout => "timed out",
                _ => "503",
            };
            assert!(msg.contains(expected_cause), "{msg}");
            report(
                capability,
                &format!("persistent {kind:?}"),
                "error naming path+range",
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
    for (i, (capability, file)) in FILES.iter().enumerate() {
        let mut errors = 0;
        let mut counts = FaultCounts::default();
        for seed in SEEDS {
            let opened = s3.open(&format!("files/{file}"));
            let faulty = FaultSource::new(opened.source, truncating(seed))
                .with_retry_policy(RetryPolicy::none());
            match read_with(Arc::new(faulty.clone()), &opened.path, &IoStats::new()).await {
                Ok(got) => assert!(got == clean[i], "{file} seed {seed}: wrong answer"),
                Err(e) => {
                    assert!(e.to_string().contains("short read"), "{file}: {e}");
                    errors += 1;
                }
            }
            counts = add(counts, faulty.counts());
        }
        assert!(errors > 0, "{file}: no truncation hit");
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
async fn a_replaced_object_is_detected_and_a_reopen_reads_the_new_one() {
    let s3 = server().await;
    let clean = clean_answers(&s3).await;
    // Replace file 1 (2.2 strings, larger than one tail read) by file 5 (sparse nested)
    // after the reader opened.
    let key = format!("files/{}", FILES[1].1);
    let opened = s3.open(&key);
    let stats = IoStats::new();
    let reader = open(Arc::clone(&opened.source), &opened.path, &stats)
        .await
        .unwrap();
    s3.put(&key, common::file_fixture(FILES[5].1)).await;
    let fields: Vec<usize> = (0..reader.schema().fields.len()).collect();
    let err = reader
        .read_rows(&fields, &RowSelection::Range(0..reader.num_rows()), &stats)
        .await
        .unwrap_err();
    assert!(is_object_changed(&err), "{err}");
    let msg = err.to_string();
    assert!(msg.contains(&key) && msg.contains("[bytes "), "{msg}");
    assert_eq!(
        stats.snapshot().retries,
        0,
        "a changed object is not retried"
    );
    // Restarting the query (a new open) reads the new object consistently.
    let again = read_with(Arc::clone(&opened.source), &opened.path, &IoStats::new())
        .await
        .unwrap();
    assert!(again == clean[5], "reopened file answers as the new object");
    report(
        "file read",
        "object replaced (real)",
        "ObjectChanged error; reopen ok",
        &FaultCounts::default(),
        0,
    );

    // Injected drift (suffix reads report another etag, range reads ask for another size):
    // every outcome is the fault-free answer or a clean change error.
    let (mut all_errors, mut all_drifts) = (0, 0);
    for (i, (capability, file)) in FILES.iter().enumerate() {
        // File 1 was replaced by file 5's bytes above.
        let want = if i == 1 { &clean[5] } else { &clean[i] };
        let (mut counts, mut errors) = (FaultCounts::default(), 0);
        for seed in SEEDS {
            let opened = s3.open(&format!("files/{file}"));
            let faulty = FaultSource::new(opened.source, drifting(seed, 0.3))
                .with_retry_policy(fast_policy(2));
            match read_with(Arc::new(faulty.clone()), &opened.path, &IoStats::new()).await {
                Ok(got) => assert!(&got == want, "{file} seed {seed}: wrong answer"),
                Err(e) => {
                    assert!(is_object_changed(&e), "{file} seed {seed}: {e}");
                    errors += 1;
                }
            }
            counts = add(counts, faulty.counts());
        }
        // A file that fits in one tail read needs no range read after its drifted suffix
        // read: it answers from bytes of one response (correctly); larger files hit the check.
        all_errors += errors;
        all_drifts += counts.version_drifts;
        report(
            capability,
            "object replaced (injected drift)",
            &format!("{errors} ObjectChanged errors, rest same answer"),
            &counts,
            0,
        );
    }
    assert!(all_drifts > 0 && all_errors > 0, "no drift was detected");
}
