//! `lakeseek index create` / `create_list_element_index`: indices built by lakeseek on the
//! list element fixture datasets (copies) answer every recorded `any_element` filter and
//! its NOT exactly like the brute force of the independent Python implementation (and so
//! like the generator-built index), locally and on the in-process S3 server; their entries
//! equal the generator's on the rows both cover; commits are conditional (concurrent
//! creates: one commit per version, the loser rebases or fails clearly); bad input is
//! refused with nothing committed.

use crate::suite::common::copy_dir;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use crate::cli::index_create::{run_index_create, IndexCreateArgs};
use crate::cli::StoreArgs;
use crate::index::list_element::build::{
    build_list_element_index, commit_list_element_index, create_list_element_index,
    ListElementIndexOptions,
};
use crate::index::list_element::parse_any_element_filter;
use crate::index::list_element::query::{plan_any_element_query, AnyElementOptions};
use crate::io::{open_url, IoStats};
use crate::lance::dataset::{DatasetSession, DatasetVersion};
use crate::lance::reader::{LanceFileReader, ReaderCaches, RowSelection};
use crate::suite::common::any_element::execute_any_element_query;
use crate::Error;
use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use arrow_array::{Array, RecordBatch};
use serde_json::Value;

use crate::suite::common::{json_fixture, u64_set as set, S3TestServer};

fn dir() -> PathBuf {
    crate::suite::common::fixture("list_element")
}

fn answers() -> Value {
    json_fixture("list_element/answers.json")
}

/// A private copy of fixture dataset `name`.
fn copy_of(name: &str) -> (tempfile::TempDir, String) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join(format!("{name}.lance"));
    copy_dir(&dir().join("datasets").join(format!("{name}.lance")), &path);
    let url = path.to_str().unwrap().to_string();
    (tmp, url)
}

/// The generator's indices of dataset `d` as build options ("a_" + name, so lakeseek's
/// index sorts first and wins ties), with the keys' current names; `None` for an index
/// whose key fields no longer exist.
fn rebuild_options(d: &Value) -> Vec<ListElementIndexOptions> {
    let schema = d["schema"].as_array().unwrap();
    let name_of = |id: i64| {
        schema
            .iter()
            .find(|f| f["id"].as_i64() == Some(id))
            .map(|f| f["name"].as_str().unwrap().to_string())
    };
    d["indices"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|ix| {
            let keys: Option<Vec<String>> = ix["key_field_ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|id| name_of(id.as_i64().unwrap()))
                .collect();
            let keys = keys?;
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            let mut o = ListElementIndexOptions::new(
                ix["column"].as_str().unwrap(),
                &keys,
                &format!("a_{}", ix["name"].as_str().unwrap()),
            );
            o.page_rows = ix["batch_size"].as_u64().unwrap() as u32;
            Some(o)
        })
        .collect()
}

async fn open(url: &str, options: &[(String, String)]) -> DatasetVersion {
    DatasetVersion::open_url(
        url,
        options,
        None,
        Arc::new(DatasetSession::default()),
        &IoStats::new(),
    )
    .await
    .unwrap()
}

/// Every query of dataset `d` and its NOT on `url`: answers equal the brute force; where
/// an index answers, it is one lakeseek built. Returns the number of calls checked.
async fn check_queries(
    url: &str,
    options: &[(String, String)],
    d: &Value,
    failures: &mut Vec<String>,
) -> usize {
    let stats = IoStats::new();
    let dataset = open(url, options).await;
    let mut checked = 0;
    for q in d["queries"].as_array().unwrap() {
        let filter = q["filter"].as_str().unwrap();
        for negated in [false, true] {
            let mut call = parse_any_element_filter(filter).unwrap();
            call.negated = negated;
            let label = format!("{url}: {}{filter}", if negated { "NOT " } else { "" });
            let plan =
                match plan_any_element_query(&dataset, &call, AnyElementOptions::default(), &stats)
                    .await
                {
                    Ok(p) => p,
                    Err(e) => {
                        failures.push(format!("{label}: plan error {e}"));
                        continue;
                    }
                };
            if let Some(c) = &plan.chosen {
                if !c.name.starts_with("a_") {
                    failures.push(format!("{label}: used {:?}, not lakeseek's index", c.name));
                }
            }
            // Where the generator's index was usable, lakeseek's is used the same way.
            let generator_used = matches!(q["index"].as_str(), Some("exact" | "superset"));
            if generator_used && plan.chosen.is_none() && !negated {
                failures.push(format!(
                    "{label}: lakeseek's index not used: {:?}",
                    plan.strategy
                ));
            }
            let got = execute_any_element_query(&dataset, &plan, &stats).await;
            checked += 1;
            match (got, q["error"].as_str()) {
                (Err(Error::Unsupported { .. }), Some("unsupported")) => {}
                (Ok(a), None) => {
                    let got: BTreeSet<u64> = a.row_addresses.iter().collect();
                    let want = set(&q[if negated { "false" } else { "true" }]);
                    if got != want {
                        let extra: Vec<_> = got.difference(&want).take(5).collect();
                        let missing: Vec<_> = want.difference(&got).take(5).collect();
                        failures.push(format!("{label}: extra {extra:?} missing {missing:?}"));
                    }
                }
                (other, e) => failures.push(format!("{label}: {other:?}, expected error {e:?}")),
            }
        }
    }
    checked
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn built_indices_answer_every_fixture_filter_like_the_brute_force() {
    let doc = answers();
    let mut failures = Vec::new();
    let mut checked = 0;
    for (name, d) in doc["datasets"].as_object().unwrap() {
        let options = rebuild_options(d);
        if options.is_empty() {
            continue; // dropped_key / cast_key: the key field is gone
        }
        let (_tmp, url) = copy_of(name);
        for o in &options {
            let created = create_list_element_index(&url, &[], o, &IoStats::new())
                .await
                .unwrap_or_else(|e| panic!("{name} {}: {e}", o.name));
            assert_eq!(created.commit_attempts, 1);
            assert_eq!(created.version, created.read_version + 1);
        }
        checked += check_queries(&url, &[], d, &mut failures).await;
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked >= 200, "{checked}");
}

/// Read a whole index file of the latest version of `url`.
async fn read_index_file(
    url: &str,
    index: &str,
    file: &str,
) -> (RecordBatch, std::collections::HashMap<String, String>) {
    let dataset = open(url, &[]).await;
    let segment = dataset
        .manifest()
        .indices
        .iter()
        .find(|s| s.name == index)
        .unwrap()
        .clone();
    let path = dataset.index_file_path(&segment, file).unwrap();
    let stats = IoStats::new();
    let reader = LanceFileReader::open(
        dataset.store().fetcher.clone(),
        path,
        segment.file_size(file),
        Arc::new(ReaderCaches::default()),
        &stats,
    )
    .await
    .unwrap();
    let columns: Vec<usize> = (0..reader.schema().fields.len()).collect();
    let batch = reader
        .read_rows(&columns, &RowSelection::Range(0..reader.num_rows()), &stats)
        .await
        .unwrap();
    (batch, reader.schema().metadata.clone())
}

fn read_ipc(name: &str) -> RecordBatch {
    let file = std::fs::File::open(dir().join("datasets").join(name)).unwrap();
    let reader = arrow_ipc::reader::FileReader::try_new(file, None).unwrap();
    let schema = reader.schema();
    let batches: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();
    arrow_select::concat::concat_batches(&schema, &batches).unwrap()
}

fn entries(batch: &RecordBatch) -> Vec<(Option<Vec<u8>>, u64)> {
    let values = batch.column_by_name("values").unwrap().as_binary::<i32>();
    let ids = batch
        .column_by_name("ids")
        .unwrap()
        .as_primitive::<UInt64Type>();
    (0..batch.num_rows())
        .map(|i| {
            (
                values.is_valid(i).then(|| values.value(i).to_vec()),
                ids.value(i),
            )
        })
        .collect()
}

#[tokio::test]
async fn built_entries_and_lookup_match_the_generator_on_the_rows_both_cover() {
    let (_tmp, url) = copy_of("detections");
    let mut o = ListElementIndexOptions::new("det", &["label", "confidence"], "a_det");
    o.page_rows = 16;
    create_list_element_index(&url, &[], &o, &IoStats::new())
        .await
        .unwrap();
    let (data, _) = read_index_file(&url, "a_det", "page_data.lance").await;
    let mine = entries(&data);
    // Sorted: nulls first, then bytes (ties by address).
    assert!(mine.windows(2).all(|w| w[0] <= w[1]));
    // The generator indexed fragments 0..2 before rows were deleted; lakeseek indexes the
    // live rows of every fragment. On live rows of fragments 0..2 they agree exactly.
    let live: BTreeSet<u64> = read_ipc("detections.rows.arrow")
        .column_by_name("_rowaddr")
        .unwrap()
        .as_primitive::<UInt64Type>()
        .values()
        .iter()
        .copied()
        .collect();
    let mut generator: Vec<_> = entries(&read_ipc("detections.det_idx.entries.arrow"))
        .into_iter()
        .filter(|(_, a)| live.contains(a))
        .collect();
    generator.sort();
    let mut ours: Vec<_> = mine.iter().filter(|(_, a)| a >> 32 < 3).cloned().collect();
    ours.sort();
    assert_eq!(ours, generator);
    assert!(
        mine.iter().any(|(_, a)| a >> 32 == 3),
        "appended fragment indexed"
    );
    assert!(
        mine.iter().all(|(_, a)| live.contains(a)),
        "deleted rows skipped"
    );
    // The lookup agrees with the pages.
    let (lookup, metadata) = read_index_file(&url, "a_det", "page_lookup.lance").await;
    assert_eq!(metadata.get("batch_size").map(String::as_str), Some("16"));
    assert_eq!(
        metadata.get("range_partitioned").map(String::as_str),
        Some("false")
    );
    let min = lookup.column(0).as_binary::<i32>();
    let max = lookup.column(1).as_binary::<i32>();
    let nulls = lookup
        .column(2)
        .as_primitive::<arrow_array::types::UInt32Type>();
    let idx = lookup
        .column(3)
        .as_primitive::<arrow_array::types::UInt32Type>();
    assert_eq!(lookup.num_rows(), mine.len().div_ceil(16));
    for p in 0..lookup.num_rows() {
        let rows = &mine[p * 16..((p + 1) * 16).min(mine.len())];
        let value = |a: &arrow_array::BinaryArray| a.is_valid(p).then(|| a.value(p).to_vec());
        assert_eq!(value(min), rows[0].0);
        assert_eq!(value(max), rows[rows.len() - 1].0);
        assert_eq!(
            nulls.value(p) as usize,
            rows.iter().filter(|r| r.0.is_none()).count()
        );
        assert_eq!(idx.value(p) as usize, p);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn built_from_an_old_version_rebases_over_deletes_and_appends() {
    let doc = answers();
    let (_tmp, url) = copy_of("detections");
    let opened = open_url(&url, &[]).unwrap();
    let stats = IoStats::new();
    // Version 1: three fragments, nothing deleted yet; versions 2..4 follow (index,
    // delete, append).
    let v1 = DatasetVersion::open_opened(
        &opened,
        Some(1),
        Arc::new(DatasetSession::default()),
        &stats,
    )
    .await
    .unwrap();
    let mut o = ListElementIndexOptions::new("det", &["label", "confidence"], "a_det");
    o.page_rows = 16;
    let built = build_list_element_index(&opened, &v1, &o, &stats)
        .await
        .unwrap();
    assert_eq!(built.fragments, vec![0, 1, 2]);
    let created = commit_list_element_index(&opened, &v1, &built, &stats)
        .await
        .unwrap();
    assert_eq!((created.read_version, created.version), (1, 5));
    assert!(created.commit_attempts >= 2);
    let mut failures = Vec::new();
    check_queries(&url, &[], &doc["datasets"]["detections"], &mut failures).await;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
async fn a_build_whose_fragments_changed_meanwhile_is_refused_and_nothing_committed() {
    // cast_key: version 1 data, 2 the generator's index, 3 a cast of `confidence` (a new
    // field id and a new data file in the fragment).
    let (tmp, url) = copy_of("cast_key");
    let opened = open_url(&url, &[]).unwrap();
    let stats = IoStats::new();
    let v1 = DatasetVersion::open_opened(
        &opened,
        Some(1),
        Arc::new(DatasetSession::default()),
        &stats,
    )
    .await
    .unwrap();
    let o = ListElementIndexOptions::new("det", &["label", "confidence"], "a_det");
    let built = build_list_element_index(&opened, &v1, &o, &stats)
        .await
        .unwrap();
    let uuid = built.uuid();
    assert!(tmp
        .path()
        .join("cast_key.lance/_indices")
        .join(&uuid)
        .exists());
    let err = commit_list_element_index(&opened, &v1, &built, &stats)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Conflict { .. }), "{err}");
    assert!(err.to_string().contains("rebuild"), "{err}");
    assert_eq!(open(&url, &[]).await.version(), 3);
    assert!(!tmp
        .path()
        .join("cast_key.lance/_indices")
        .join(&uuid)
        .join("page_data.lance")
        .exists());
}

#[tokio::test]
async fn bad_input_is_refused_with_nothing_committed() {
    let (_tmp, url) = copy_of("detections");
    let stats = IoStats::new();
    let cases: &[(&str, &[&str], &str, &str)] = &[
        ("nope", &["label"], "x", "not found"),
        ("id", &["label"], "x", "list<struct>"),
        ("det", &["nope"], "x", "not a direct child"),
        ("det", &["item.label"], "x", "not a direct child"),
        ("det", &["label", "label"], "x", "twice"),
        ("det", &["label"], "det_idx", "already exists"),
    ];
    for (column, keys, name, want) in cases {
        let o = ListElementIndexOptions::new(column, keys, name);
        let err = create_list_element_index(&url, &[], &o, &stats)
            .await
            .unwrap_err();
        assert!(err.to_string().contains(want), "{column} {keys:?}: {err}");
    }
    let mut o = ListElementIndexOptions::new("det", &["label"], "x");
    o.page_rows = 0;
    assert!(create_list_element_index(&url, &[], &o, &stats)
        .await
        .is_err());
    assert_eq!(open(&url, &[]).await.version(), 4);
}

#[tokio::test]
async fn cli_prints_the_committed_index() {
    let (_tmp, url) = copy_of("detections");
    let args = IndexCreateArgs {
        dataset: url.clone(),
        column: "det".into(),
        keys: vec!["label".into(), "confidence".into()],
        name: "a_det".into(),
        page_rows: 16,
        sort_memory_mb: 1,
        store: StoreArgs::default(),
    };
    let mut out = Vec::new();
    run_index_create(&args, &mut out).await.unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["name"], "a_det");
    assert_eq!(v["version"], 5);
    assert_eq!(v["fragments"], serde_json::json!([0, 1, 2, 3]));
    assert!(v["entries"].as_u64().unwrap() > 300);
    let err = run_index_create(&args, &mut Vec::new()).await.unwrap_err();
    assert!(err.to_string().contains("already exists"), "{err}");
}

async fn upload_fixture(s3: &S3TestServer, name: &str) -> String {
    let local = dir().join("datasets").join(format!("{name}.lance"));
    s3.upload_dir(&local, &format!("{name}.lance")).await;
    s3.url(&format!("{name}.lance"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_s3_built_indices_answer_like_the_brute_force() {
    let s3 = S3TestServer::start().await;
    let doc = answers();
    let url = upload_fixture(&s3, "detections").await;
    let options = s3.storage_options();
    let mut o = ListElementIndexOptions::new("det", &["label", "confidence"], "a_det");
    o.page_rows = 16;
    let created = create_list_element_index(&url, &options, &o, &IoStats::new())
        .await
        .unwrap();
    assert_eq!(created.version, 5);
    let mut failures = Vec::new();
    let checked = check_queries(
        &url,
        &options,
        &doc["datasets"]["detections"],
        &mut failures,
    )
    .await;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked > 40);
}

/// Names of the index segments in the manifest of `version`.
async fn index_names_at(url: &str, options: &[(String, String)], version: u64) -> BTreeSet<String> {
    DatasetVersion::open_url(
        url,
        options,
        Some(version),
        Arc::new(DatasetSession::default()),
        &IoStats::new(),
    )
    .await
    .unwrap()
    .manifest()
    .indices
    .iter()
    .map(|s| s.name.clone())
    .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_creates_on_s3_commit_once_per_version() {
    let s3 = S3TestServer::start().await;
    let url = upload_fixture(&s3, "detections").await;
    let options = s3.storage_options();
    // Two different names: both commit, on distinct versions, the later one rebased.
    let a = ListElementIndexOptions::new("det", &["label", "confidence"], "a_one");
    let b = ListElementIndexOptions::new("det", &["label"], "a_two");
    let stats = IoStats::new();
    let (ra, rb) = tokio::join!(
        create_list_element_index(&url, &options, &a, &stats),
        create_list_element_index(&url, &options, &b, &stats)
    );
    let (ra, rb) = (ra.unwrap(), rb.unwrap());
    let versions: BTreeSet<u64> = [ra.version, rb.version].into();
    assert_eq!(versions, BTreeSet::from([5, 6]));
    let (first, second) = if ra.version == 5 {
        (&ra, &rb)
    } else {
        (&rb, &ra)
    };
    // The second either lost the race for version 5 and rebased, or started after it.
    assert!(
        second.commit_attempts >= 2 || second.read_version == 5,
        "{second:?}"
    );
    let base: BTreeSet<String> = ["det_idx".to_string()].into();
    let mut at5 = base.clone();
    at5.insert(first.name.clone());
    assert_eq!(
        index_names_at(&url, &options, 5).await,
        at5,
        "version 5 is the first commit"
    );
    let mut at6 = at5.clone();
    at6.insert(second.name.clone());
    assert_eq!(index_names_at(&url, &options, 6).await, at6);
    // Same name: exactly one commit, the other a clear error.
    let c = ListElementIndexOptions::new("det", &["label"], "a_same");
    let (rc, rd) = tokio::join!(
        create_list_element_index(&url, &options, &c, &stats),
        create_list_element_index(&url, &options, &c, &stats)
    );
    let results = [rc, rd];
    let ok: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(ok.len(), 1, "{results:?}");
    assert_eq!(ok[0].version, 7);
    let err = results.iter().find_map(|r| r.as_ref().err()).unwrap();
    assert!(
        matches!(err, Error::Conflict { .. }) || err.to_string().contains("already exists"),
        "{err}"
    );
    assert_eq!(open(&url, &options).await.version(), 7);
    assert!(index_names_at(&url, &options, 7).await.contains("a_same"));
}
