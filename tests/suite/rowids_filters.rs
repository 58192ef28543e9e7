//! Filters on datasets with stable row ids (`tests/fixtures/rowids/gen_rowids.py`), against
//! pylance 14.0.2's answers, locally and over S3: every scalar index kind (BTREE v1 and
//! v0, BITMAP, LABEL_LIST, ZONEMAP, BLOOMFILTER) after updates, deletions, a compaction and
//! an append, before and after the compaction. Row-id-domain answers are resolved through
//! the covered fragments' sequences; only live rows come back.

use std::sync::Arc;

use serde_json::Value;

use crate::index::filter::{filter_row_addresses, plan_filter, FilterOptions};
use crate::io::IoStats;
use crate::lance::dataset::{DatasetSession, DatasetVersion};
use crate::suite::common::explain_kinds as kinds;
use crate::suite::common::S3TestServer;

/// `tests/fixtures/<rel>` of this checkout.
pub(crate) fn fixture(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// `(dataset, version, filter, sorted row addresses)` of every recorded filter.
fn recorded() -> Vec<(String, u64, String, Vec<u64>)> {
    let text = std::fs::read_to_string(fixture("rowids").join("answers.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let mut out = Vec::new();
    for (name, a) in doc.as_object().unwrap() {
        for (label, version) in a["versions"].as_object().unwrap() {
            for q in a["filters"][label].as_array().unwrap() {
                let addrs = q["addresses"].as_array().unwrap();
                out.push((
                    name.clone(),
                    version.as_u64().unwrap(),
                    q["filter"].as_str().unwrap().to_string(),
                    addrs.iter().map(|a| a.as_u64().unwrap()).collect(),
                ));
            }
        }
    }
    out
}

/// Run every recorded filter on the versions `open` opens; the failures.
async fn check_all<F, Fut>(open: F) -> (usize, Vec<String>)
where
    F: Fn(String, u64) -> Fut,
    Fut: std::future::Future<Output = DatasetVersion>,
{
    let (mut checked, mut failures) = (0, Vec::new());
    for (name, version, filter, want) in recorded() {
        let dataset = open(name.clone(), version).await;
        let options = FilterOptions { allow_scan: false };
        checked += 1;
        match filter_row_addresses(&dataset, &filter, options, &IoStats::new()).await {
            Ok(got) => {
                let got: Vec<u64> = got.iter().collect();
                if got != want {
                    let extra: Vec<_> = got.iter().filter(|a| !want.contains(a)).collect();
                    let missing: Vec<_> = want.iter().filter(|a| !got.contains(a)).collect();
                    failures.push(format!(
                        "{name}@{version} {filter:?}: extra {extra:?}, missing {missing:?}"
                    ));
                }
            }
            Err(e) => failures.push(format!("{name}@{version} {filter:?}: {e}")),
        }
    }
    (checked, failures)
}

async fn open_local(name: String, version: u64, session: Arc<DatasetSession>) -> DatasetVersion {
    let path = fixture("rowids").join(format!("{name}.lance"));
    let url = path.to_str().unwrap();
    DatasetVersion::open_url(url, &[], Some(version), session, &IoStats::new())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_filter_on_stable_row_ids_matches_pylance_locally() {
    let session = Arc::new(DatasetSession::default());
    let (checked, failures) =
        check_all(|name, version| open_local(name, version, Arc::clone(&session))).await;
    assert!(checked >= 55, "{checked}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_filter_on_stable_row_ids_matches_pylance_over_s3() {
    let s3 = S3TestServer::start().await;
    for name in ["srid", "srid_btree_v0"] {
        let dir = fixture("rowids").join(format!("{name}.lance"));
        s3.upload_dir(&dir, &format!("ds/{name}.lance")).await;
    }
    let session = Arc::new(DatasetSession::default());
    let s3 = &s3;
    let (checked, failures) = check_all(|name, version| {
        let session = Arc::clone(&session);
        async move {
            let opened = s3.open(&format!("ds/{name}.lance"));
            DatasetVersion::open_opened(&opened, Some(version), session, &IoStats::new())
                .await
                .unwrap()
        }
    })
    .await;
    assert!(checked >= 55, "{checked}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(s3.http_counts().heads, 0, "no HEAD requests");
}

/// The answers above come from the indices, not from scans: each kind answers on the
/// stable-row-id dataset before the compaction (when every index still covers fragments).
#[tokio::test]
async fn every_kind_answers_on_a_stable_row_id_dataset() {
    let session = Arc::new(DatasetSession::default());
    for (name, version, filter, kind) in [
        ("srid", 9, "c = 'red'", "bitmap"),
        ("srid", 9, "array_has_any(tags, ['red'])", "label_list"),
        ("srid", 9, "k = 5", "btree"),
        ("srid", 9, "z < 40", "zonemap"),
        ("srid", 9, "f = 7", "bloomfilter"),
        ("srid", 13, "c = 'red'", "bitmap"),
        ("srid_btree_v0", 7, "k = 5", "btree"),
    ] {
        let dataset = open_local(name.into(), version, Arc::clone(&session)).await;
        let plan = plan_filter(&dataset, filter, FilterOptions::default(), &IoStats::new())
            .await
            .unwrap();
        let mut found = Vec::new();
        kinds(&plan.explain(), &mut found);
        assert!(
            found.iter().any(|k| k == kind),
            "{name}@{version} {filter}: {found:?}"
        );
    }
}
