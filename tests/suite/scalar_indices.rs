//! BITMAP, LABEL_LIST, ZONEMAP and BLOOMFILTER indices through the one filter entry point,
//! against pylance's answers (`tests/fixtures/datasets/gen_scalar_indices.py`): every
//! recorded filter (each kind over string, int, float, date and timestamp columns, label
//! lists over list<string>, list<int64>, large_list<string>, cross-column AND/OR/NOT,
//! indexed + unindexed mixes) locally and over S3; explain names the kind; a warm repeat
//! is one round trip for exact kinds (two with a zone recheck).

use std::path::PathBuf;
use std::sync::Arc;

use crate::index::filter::{filter_row_addresses, plan_filter, FilterOptions};
use crate::io::IoStats;
use crate::lance::dataset::{DatasetSession, DatasetVersion};
use crate::suite::common::explain_kinds as kinds;
use crate::suite::common::{undelta, S3TestServer};
use serde_json::Value;

fn fixtures() -> PathBuf {
    crate::suite::common::fixture("datasets")
}

/// `(dataset, filter, sorted row addresses)` of every recorded query.
fn queries() -> Vec<(String, String, Vec<u64>)> {
    let text = std::fs::read_to_string(fixtures().join("scalar_answers.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let mut out = Vec::new();
    for (name, ds) in doc["datasets"].as_object().unwrap() {
        for q in ds["queries"].as_array().unwrap() {
            let addrs = undelta(&q["addr_deltas"]);
            out.push((
                name.clone(),
                q["filter"].as_str().unwrap().to_string(),
                addrs,
            ));
        }
    }
    out
}

async fn open_local(name: &str, session: Arc<DatasetSession>) -> DatasetVersion {
    let path = fixtures().join(format!("{name}.lance"));
    DatasetVersion::open_url(path.to_str().unwrap(), &[], None, session, &IoStats::new())
        .await
        .unwrap()
}

/// Check every query on datasets opened by `open`; returns the failures.
async fn check_all<F, Fut>(open: F) -> (usize, Vec<String>)
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = DatasetVersion>,
{
    let mut failures = Vec::new();
    let mut checked = 0;
    for (name, filter, want) in queries() {
        let dataset = open(name.clone()).await;
        let stats = IoStats::new();
        let options = FilterOptions { allow_scan: false };
        checked += 1;
        match filter_row_addresses(&dataset, &filter, options, &stats).await {
            Ok(got) => {
                let got: Vec<u64> = got.iter().collect();
                if got != want {
                    failures.push(format!(
                        "{name} {filter:?}: got {} rows, want {}",
                        got.len(),
                        want.len()
                    ));
                }
            }
            Err(e) => failures.push(format!("{name} {filter:?}: {e}")),
        }
    }
    (checked, failures)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scalar_index_filter_matches_pylance_locally() {
    let session = Arc::new(DatasetSession::default());
    let (checked, failures) = check_all(|name| open_local_owned(name, Arc::clone(&session))).await;
    assert!(checked >= 140, "{checked}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

async fn open_local_owned(name: String, session: Arc<DatasetSession>) -> DatasetVersion {
    open_local(&name, session).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scalar_index_filter_matches_pylance_over_s3() {
    let s3 = S3TestServer::start().await;
    for name in ["scalar_indices", "scalar_wide"] {
        s3.upload_dir(
            &fixtures().join(format!("{name}.lance")),
            &format!("ds/{name}.lance"),
        )
        .await;
    }
    let session = Arc::new(DatasetSession::default());
    let s3 = &s3;
    let (checked, failures) = check_all(|name| {
        let session = Arc::clone(&session);
        async move {
            let opened = s3.open(&format!("ds/{name}.lance"));
            DatasetVersion::open_opened(&opened, None, session, &IoStats::new())
                .await
                .unwrap()
        }
    })
    .await;
    assert!(checked >= 140, "{checked}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(s3.http_counts().heads, 0, "no HEAD requests");
}

#[tokio::test]
async fn explain_names_the_kind_that_answered() {
    let dataset = open_local("scalar_indices", Arc::new(DatasetSession::default())).await;
    for (filter, kind) in [
        ("b_s = 'v00003'", "bitmap"),
        ("array_has_any(tags, ['red', 'blue'])", "label_list"),
        ("z_i < 1500", "zonemap"),
        ("f_s = 'v00361'", "bloomfilter"),
    ] {
        let plan = plan_filter(&dataset, filter, FilterOptions::default(), &IoStats::new())
            .await
            .unwrap();
        let mut found = Vec::new();
        kinds(&plan.explain(), &mut found);
        assert!(found.iter().any(|k| k == kind), "{filter}: {found:?}");
    }
}

/// A warm repeat reads no index file again: exact kinds read only the data of the
/// appended unindexed fragment (one wave); with candidate kinds the zones' chunks are
/// rechecked too (data reads are not cached), so only the request count must drop.
#[tokio::test]
async fn warm_repeats_cost_one_round_trip_at_most() {
    let session = Arc::new(DatasetSession::default());
    for (filter, exact) in [
        ("b_s = 'v00003'", true),
        ("b_i IN (3, 7)", true),
        ("array_has_any(tags, ['red', 'blue'])", true),
        ("NOT (b_d = DATE '2020-01-04')", true),
        ("z_ts >= TIMESTAMP '2024-01-02 01:00:00'", false),
        ("f_i = 367", false),
        ("b_s = 'v00003' AND z_i < 1500 AND f_s IS NOT NULL", false),
    ] {
        let dataset = open_local("scalar_indices", Arc::clone(&session)).await;
        let cold = IoStats::new();
        let a = filter_row_addresses(&dataset, filter, FilterOptions::default(), &cold)
            .await
            .unwrap();
        let warm = IoStats::new();
        let b = filter_row_addresses(&dataset, filter, FilterOptions::default(), &warm)
            .await
            .unwrap();
        assert_eq!(a, b, "{filter}");
        let (c, w) = (cold.snapshot(), warm.snapshot());
        if exact {
            assert!(
                w.round_trips <= 1 && w.requests <= 1,
                "{filter}: cold {c:?}, warm {w:?}"
            );
        } else {
            assert!(w.requests < c.requests, "{filter}: cold {c:?}, warm {w:?}");
        }
    }
}
