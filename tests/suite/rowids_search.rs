//! NGRAM filters, full-text search (INVERTED) and nearest queries (IVF_FLAT) on a dataset
//! with stable row ids (`tests/fixtures/rowids/gen_rowids.py`, `srid_search`), against
//! pylance 14.0.2's answers, before and after a compaction, locally and over S3. The three
//! indices hold stable row ids; after updates (one touching the FTS and vector columns),
//! deletions, a compaction and an append, their answers are resolved per covered fragment
//! through its sequence and deletion vector to the row addresses of live rows.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, UInt64Type};
use serde_json::Value;

use crate::index::filter::{filter_row_addresses, plan_filter, FilterOptions};
use crate::index::fts::search::{search, Operator, SearchRequest};
use crate::io::IoStats;
use crate::lance::dataset::{DatasetSession, DatasetVersion};
use crate::suite::common::explain_kinds as kinds;
use crate::suite::common::S3TestServer;
use crate::suite::fts_answers::{mismatch, Case};
use crate::suite::rowids_filters::fixture;
use crate::suite::vector_catalog::compare;
use crate::{Dataset, Session};

/// pylance's answers on `srid_search`.
fn answers() -> Value {
    let text = std::fs::read_to_string(fixture("rowids/search_answers.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// `(label, version)` of the recorded versions.
fn versions(doc: &Value) -> Vec<(String, u64)> {
    doc["versions"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(l, v)| (l.clone(), v.as_u64().unwrap()))
        .collect()
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

/// Where the dataset is opened from.
#[derive(Clone, Copy)]
enum Place<'a> {
    Local,
    S3(&'a S3TestServer),
}

const KEY: &str = "ds/srid_search.lance";

async fn open_version(place: Place<'_>, version: u64) -> DatasetVersion {
    let session = Arc::new(DatasetSession::default());
    match place {
        Place::Local => {
            let path = fixture("rowids/srid_search.lance");
            DatasetVersion::open_url(
                path.to_str().unwrap(),
                &[],
                Some(version),
                session,
                &IoStats::new(),
            )
            .await
            .unwrap()
        }
        Place::S3(s3) => {
            DatasetVersion::open_opened(&s3.open(KEY), Some(version), session, &IoStats::new())
                .await
                .unwrap()
        }
    }
}

async fn open_dataset(place: Place<'_>, version: u64) -> Dataset {
    let session = Session::default();
    match place {
        Place::Local => {
            let path = fixture("rowids/srid_search.lance");
            Dataset::builder(path.to_str().unwrap())
                .version(version)
                .session(&session)
                .open()
                .await
                .unwrap()
        }
        Place::S3(s3) => Dataset::builder(&s3.url(KEY))
            .object_store(s3.open(KEY).store)
            .version(version)
            .session(&session)
            .open()
            .await
            .unwrap(),
    }
}

/// Every recorded NGRAM filter (index only, no scan), full-text query and nearest query;
/// `(checked, failures)`.
async fn check_all(place: Place<'_>) -> (usize, Vec<String>) {
    let doc = answers();
    let (mut checked, mut failures) = (0, Vec::new());
    for (label, version) in versions(&doc) {
        let dataset = open_version(place, version).await;
        for q in doc["filters"][&label].as_array().unwrap() {
            let filter = q["filter"].as_str().unwrap();
            let want = u64s(&q["addresses"]);
            let options = FilterOptions { allow_scan: false };
            checked += 1;
            match filter_row_addresses(&dataset, filter, options, &IoStats::new()).await {
                Ok(got) if got.iter().eq(want.iter().copied()) => {}
                Ok(got) => failures.push(format!(
                    "@{version} {filter:?}: {} rows, pylance {}",
                    got.len(),
                    want.len()
                )),
                Err(e) => failures.push(format!("@{version} {filter:?}: {e}")),
            }
        }
        for q in doc["fts"][&label].as_array().unwrap() {
            let text = q["text"].as_str().unwrap();
            let case = Case {
                dataset: "srid_search".into(),
                label: text.into(),
                request: SearchRequest::matching(text, "body", Operator::Or, None),
                addresses: u64s(&q["row_addresses"]),
                scores: q["scores"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s.as_f64().unwrap() as f32)
                    .collect(),
                error: None,
            };
            checked += 1;
            match search(&dataset, &case.request, &IoStats::new()).await {
                Ok(out) => {
                    let got: Vec<(u64, f32)> =
                        out.hits.iter().map(|h| (h.row_address, h.score)).collect();
                    if let Some(why) = mismatch(&case, &got) {
                        failures.push(format!("@{version} search {text:?}: {why}"));
                    }
                }
                Err(e) => failures.push(format!("@{version} search {text:?}: {e}")),
            }
        }
        let api = open_dataset(place, version).await;
        for q in doc["nearest"][&label].as_array().unwrap() {
            let vector: Vec<f32> = doc["query_vectors"][q["q"].as_u64().unwrap() as usize]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap() as f32)
                .collect();
            let k = q["k"].as_u64().unwrap() as usize;
            checked += 1;
            let got = api.nearest("vec", &vector).k(k).nprobes(4).execute().await;
            match got {
                Ok(batch) => {
                    let rows = batch.column(0).as_primitive::<UInt64Type>().values();
                    let d = batch.column(1).as_primitive::<Float32Type>().values();
                    if let Some(why) = compare(rows, d, q) {
                        failures.push(format!("@{version} nearest q{} k{k}: {why}", q["q"]));
                    }
                }
                Err(e) => failures.push(format!("@{version} nearest q{} k{k}: {e}", q["q"])),
            }
        }
    }
    (checked, failures)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ngram_fts_and_nearest_on_stable_row_ids_match_pylance_locally() {
    let (checked, failures) = check_all(Place::Local).await;
    assert_eq!(checked, 2 * (7 + 5 + 12), "every recorded query checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ngram_fts_and_nearest_on_stable_row_ids_match_pylance_over_s3() {
    let s3 = S3TestServer::start().await;
    s3.upload_dir(&fixture("rowids/srid_search.lance"), KEY)
        .await;
    let (checked, failures) = check_all(Place::S3(&s3)).await;
    assert_eq!(checked, 2 * (7 + 5 + 12), "every recorded query checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(s3.http_counts().heads, 0, "no HEAD requests");
}

/// The NGRAM answers above come from the index (the filters ran with scans forbidden, and
/// the plan names the kind), and the search paths read their indices: the nearest query
/// probes the IVF_FLAT partitions, the full-text search reads the INVERTED segment.
#[tokio::test]
async fn the_indices_answer_on_the_stable_row_id_dataset() {
    let doc = answers();
    for (_, version) in versions(&doc) {
        let dataset = open_version(Place::Local, version).await;
        let plan = plan_filter(
            &dataset,
            "contains(title, 'river')",
            FilterOptions::default(),
            &IoStats::new(),
        )
        .await
        .unwrap();
        let mut found = Vec::new();
        kinds(&plan.explain(), &mut found);
        assert!(found.iter().any(|k| k == "ngram"), "@{version}: {found:?}");
        let request = SearchRequest {
            index_only: true,
            ..SearchRequest::matching("river", "body", Operator::Or, None)
        };
        let out = search(&dataset, &request, &IoStats::new()).await.unwrap();
        assert!(!out.hits.is_empty(), "@{version}: the index alone answers");
        let api = open_dataset(Place::Local, version).await;
        let explain = api
            .nearest("vec", &[0.0; 8])
            .k(5)
            .nprobes(4)
            .fast_search(true)
            .explain()
            .await
            .unwrap();
        let text = explain.to_string();
        assert!(text.contains("vec_idx"), "@{version}: {text}");
        let rows = api
            .nearest("vec", &[0.0; 8])
            .k(5)
            .nprobes(4)
            .fast_search(true)
            .execute()
            .await
            .unwrap();
        assert_eq!(rows.num_rows(), 5, "@{version}: the index alone answers");
    }
}

/// `tests/fixtures/vector`'s `ivf_pq_l2_stable` (IVF_PQ on a stable-row-id dataset whose
/// deletions were compacted away): every recorded query is answered. The index still holds
/// the ids of the compacted-away rows; pylance ranks them and then drops them (so it returns
/// fewer than `k` rows, e.g. none for `k = 1`), lakeseek ranks live rows only. So pylance's
/// rows are the nearest of lakeseek's, in the same order, with the same distances; with a
/// refine factor pylance re-ranks fewer live candidates: lakeseek's i-th distance is at
/// most pylance's, and the rows both return have the same distances.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_vector_catalogs_stable_row_id_dataset_answers() {
    use crate::suite::vector_catalog::{build, catalog, vector_fixture};
    let catalog = catalog();
    let ds = &catalog["datasets"]["ivf_pq_l2_stable"];
    let path = vector_fixture("datasets/ivf_pq_l2_stable");
    let dataset = Dataset::open(path.to_str().unwrap()).await.unwrap();
    let (mut checked, mut shorter, mut refined, mut failures) = (0, 0, 0, Vec::new());
    for q in ds["queries"].as_array().unwrap() {
        let fixed = q.get("nprobes").is_some() || q.get("maximum_nprobes").is_some();
        let scanned = q["use_index"] == false;
        let modulo = q["filter"].as_str().is_some_and(|f| f.contains('%'));
        if !(fixed || scanned) || modulo {
            continue;
        }
        let batch = build(&dataset, ds, q).execute().await.unwrap();
        let rows = batch
            .column(0)
            .as_primitive::<UInt64Type>()
            .values()
            .to_vec();
        let d = batch
            .column(1)
            .as_primitive::<Float32Type>()
            .values()
            .to_vec();
        let k = q["k"].as_u64().unwrap() as usize;
        let want_rows = u64s(&q["row_addresses"]);
        let want_d: Vec<f32> = q["distances"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap() as f32)
            .collect();
        checked += 1;
        assert!(
            rows.len() <= k && rows.len() >= want_rows.len(),
            "{q}: {rows:?}"
        );
        let why = if q.get("refine_factor").is_some() {
            refined += 1;
            let worse = (0..want_d.len()).find(|&i| d[i] > want_d[i] * (1.0 + 1e-4));
            let differs = want_rows.iter().zip(&want_d).find(|(r, wd)| {
                rows.iter()
                    .position(|x| x == *r)
                    .is_some_and(|i| (d[i] - **wd).abs() > 1e-4 * wd.abs().max(1e-2))
            });
            match (worse, differs) {
                (Some(i), _) => Some(format!("distance {i}: {} worse than {}", d[i], want_d[i])),
                (_, Some((r, wd))) => Some(format!("row {r}: distance differs from {wd}")),
                _ => None,
            }
        } else if want_rows.len() < k {
            shorter += 1;
            let n = want_rows.len().min(rows.len());
            compare(&rows[..n], &d[..n], q)
        } else {
            compare(&rows, &d, q)
        };
        if let Some(why) = why {
            failures.push(format!("q{} k{k}: {why}", q["q"]));
        }
    }
    assert!(checked >= 20, "{checked}");
    assert!(
        shorter >= 3,
        "{shorter}: pylance's short answers are covered"
    );
    assert!(refined >= 2, "{refined}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
