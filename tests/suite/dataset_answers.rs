//! Every recorded predicate on every dataset fixture returns pylance 14.0.2's exact
//! row-address set (tests/fixtures/datasets/answers.json, made by gen_datasets.py).

use std::path::PathBuf;
use std::sync::Arc;

use crate::io::IoStats;
use crate::lance::dataset::{DatasetSession, DatasetVersion};
use crate::suite::common::btree_query::{query_row_addresses, QueryOptions};
use crate::suite::common::{json_fixture, undelta};
use crate::Error;
use serde_json::Value;

fn fixtures() -> PathBuf {
    crate::suite::common::fixture("datasets")
}

fn answers() -> Value {
    json_fixture("datasets/answers.json")
}

fn expected(q: &Value) -> Vec<u64> {
    undelta(&q["addr_deltas"])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_recorded_predicate_matches_pylance_locally() {
    let doc = answers();
    let mut failures = Vec::new();
    let mut checked = 0;
    for (name, ds) in doc["datasets"].as_object().unwrap() {
        let url = fixtures().join(format!("{name}.lance"));
        let url = url.to_str().unwrap();
        let unindexed: Vec<&str> = ds["unindexed_filters"]
            .as_array()
            .map(|v| v.iter().map(|x| x.as_str().unwrap()).collect())
            .unwrap_or_default();
        let session = Arc::new(DatasetSession::default());
        // Deletion files read lazily (after the pages, only for fragments with results).
        let lazy_session = Arc::new(DatasetSession::default().with_eager_deletion_files(0));
        for q in ds["queries"].as_array().unwrap() {
            let filter = q["filter"].as_str().unwrap();
            let version = q["version"].as_u64();
            let stats = IoStats::new();
            let dataset = DatasetVersion::open_url(url, &[], version, Arc::clone(&session), &stats)
                .await
                .unwrap();
            let allow_scan = unindexed.contains(&filter);
            let got =
                query_row_addresses(&dataset, filter, QueryOptions { allow_scan }, &stats).await;
            let lazy =
                DatasetVersion::open_url(url, &[], version, Arc::clone(&lazy_session), &stats)
                    .await
                    .unwrap();
            let got_lazy =
                query_row_addresses(&lazy, filter, QueryOptions { allow_scan }, &stats).await;
            if let (Ok(a), Ok(b)) = (&got, &got_lazy) {
                if a.row_addresses != b.row_addresses {
                    failures.push(format!("{name} {filter:?}: lazy deletion loading differs"));
                }
            }
            checked += 1;
            match got {
                Ok(a) => {
                    let got: Vec<u64> = a.row_addresses.iter().collect();
                    let want = expected(q);
                    if got != want {
                        let extra: Vec<_> =
                            got.iter().filter(|x| !want.contains(x)).take(5).collect();
                        let missing: Vec<_> =
                            want.iter().filter(|x| !got.contains(x)).take(5).collect();
                        failures.push(format!("{name} v{version:?} {filter:?}: got {} want {} (extra {extra:?}, missing {missing:?})", got.len(), want.len()));
                    }
                }
                Err(e) => failures.push(format!("{name} v{version:?} {filter:?}: error {e}")),
            }
        }
        for e in ds["errors"].as_array().unwrap() {
            let filter = e["filter"].as_str().unwrap();
            let stats = IoStats::new();
            let dataset = DatasetVersion::open_url(url, &[], None, Arc::clone(&session), &stats)
                .await
                .unwrap();
            match query_row_addresses(&dataset, filter, QueryOptions::default(), &stats).await {
                Err(Error::InvalidArgument(_)) => {}
                other => failures.push(format!(
                    "{name} {filter:?}: pylance rejects it, we returned {other:?}"
                )),
            }
        }
    }
    assert!(checked >= 240, "only {checked} queries checked");
    assert!(
        failures.is_empty(),
        "{} of {checked} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
