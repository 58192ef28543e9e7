//! Dataset takes of every column kind against pylance 14.0.2's `_take_rows`
//! (`tests/fixtures/datasets/gen_take_nested.py`): nested lists / structs / maps /
//! fixed-size lists, assorted leaf types and zoned timestamps, in 2.1, 2.2, 2.3 and 2.3
//! forced-sparse datasets of three fragments with deletions; rows across fragments,
//! unsorted, repeated, deleted. Over local files, the in-memory store and the in-process S3
//! server. Also: pylance's errors for bad addresses, warm takes of rows whose lists are all
//! empty or null (no request at all through a dataset with 2.3 sparse pages), the zoned
//! columns printed by `lakeseek take` as pylance reads them, and filters on them.

use crate::suite::common;
use crate::suite::common::{json_fixture, undelta};
use crate::suite::read_support as support;

use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;

use crate::cli::query::{run_query_to, run_take_to, QueryArgs, TakeArgs};
use crate::index::filter::{filter_row_addresses, FilterOptions};
use crate::io::list::{ObjectLister, ObjectStoreLister};
use crate::io::{IoStats, ObjectStoreSource, RangeSource};
use crate::lance::dataset::take::take_rows;
use crate::lance::dataset::{DatasetSession, DatasetStore, DatasetVersion};
use crate::Error;
use arrow_array::{Array, RecordBatch, UInt64Array};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use serde_json::Value;

const VARIANTS: [&str; 4] = ["v2_1", "v2_2", "v2_3", "v2_3_sparse"];

fn dir() -> PathBuf {
    crate::suite::common::fixture("datasets")
}

fn dataset_dir(variant: &str) -> PathBuf {
    dir().join("take").join(format!("{variant}.lance"))
}

fn answers() -> Value {
    json_fixture("datasets/take_answers.json")
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_u64().expect("u64"))
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_str().expect("str").to_string())
        .collect()
}

fn row_sets(doc: &Value) -> Vec<Vec<u64>> {
    doc["row_sets"]
        .as_array()
        .unwrap()
        .iter()
        .map(u64s)
        .collect()
}

fn columns(doc: &Value, variant: &str) -> Vec<String> {
    strings(&doc["variants"][variant]["columns"])
}

/// pylance's `_take_rows` result of every row set.
fn oracle(variant: &str) -> Vec<RecordBatch> {
    support::read_ipc(&dir().join("take").join(format!("{variant}.takes.arrow")))
}

fn deleted(id: u64) -> bool {
    id % 17 == 3
}

/// The addresses pylance keeps: the asked ones minus deleted rows (rows hold `id` = 160 *
/// fragment + offset).
fn kept(rows: &[u64]) -> Vec<u64> {
    rows.iter()
        .copied()
        .filter(|a| !deleted((a >> 32) * 160 + (a & 0xFFFF_FFFF)))
        .collect()
}

fn check(batch: &RecordBatch, want: &RecordBatch, rows: &[u64], what: &str) {
    let addresses = batch
        .column(0)
        .as_any()
        .downcast_ref::<UInt64Array>()
        .expect("_rowaddr");
    assert_eq!(addresses.values().to_vec(), kept(rows), "{what}: _rowaddr");
    assert_eq!(batch.num_columns(), want.num_columns() + 1, "{what}");
    for field in want.schema().fields() {
        let ours = batch
            .column_by_name(field.name())
            .unwrap_or_else(|| panic!("{what}: no column {}", field.name()));
        let theirs = want.column_by_name(field.name()).unwrap();
        support::assert_same(ours, theirs, &format!("{what}, column {}", field.name()));
    }
}

/// Every row set of every variant equals pylance's take, all columns at once.
async fn check_all(open: impl AsyncFn(&str) -> DatasetVersion, backend: &str) {
    let doc = answers();
    let sets = row_sets(&doc);
    for variant in VARIANTS {
        let dataset = open(variant).await;
        let cols = columns(&doc, variant);
        let want = oracle(variant);
        assert_eq!(want.len(), sets.len());
        for (k, (rows, want)) in sets.iter().zip(&want).enumerate() {
            let stats = IoStats::new();
            let batch = take_rows(&dataset, rows, &cols, &stats)
                .await
                .unwrap_or_else(|e| panic!("{backend} {variant} set {k}: {e}"));
            check(
                &batch,
                want,
                rows,
                &format!("{backend} {variant} row set {k}"),
            );
        }
        // One column at a time gives the same columns.
        let rows = &sets[0];
        for (c, name) in cols.iter().enumerate() {
            let batch = take_rows(&dataset, rows, std::slice::from_ref(name), &IoStats::new())
                .await
                .unwrap();
            support::assert_same(
                batch.column(1),
                want[0].column(c),
                &format!("{backend} {variant} column {name} alone"),
            );
        }
    }
}

async fn open_local(variant: &str) -> DatasetVersion {
    open_local_with(variant, DatasetSession::default()).await
}

async fn open_local_with(variant: &str, session: DatasetSession) -> DatasetVersion {
    DatasetVersion::open_url(
        dataset_dir(variant).to_str().unwrap(),
        &[],
        None,
        Arc::new(session),
        &IoStats::new(),
    )
    .await
    .expect("open local dataset")
}

fn files_under(root: &FsPath) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

async fn open_memory(variant: &str) -> DatasetVersion {
    let store = Arc::new(InMemory::new());
    let root = dataset_dir(variant);
    for file in files_under(&root) {
        let rel = file
            .strip_prefix(&root)
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        let bytes = std::fs::read(&file).unwrap();
        store
            .put(
                &Path::from(format!("ds/t.lance/{rel}")),
                PutPayload::from(bytes),
            )
            .await
            .unwrap();
    }
    let source: Arc<dyn RangeSource> = Arc::new(ObjectStoreSource::new(
        Arc::clone(&store) as Arc<dyn ObjectStore>,
        0,
        "memory",
    ));
    let lister: Arc<dyn ObjectLister> = Arc::new(ObjectStoreLister::new(store, false));
    DatasetVersion::open(
        DatasetStore::new(source, lister),
        Path::from("ds/t.lance"),
        None,
        Arc::new(DatasetSession::default()),
        &IoStats::new(),
    )
    .await
    .expect("open in-memory dataset")
}

#[tokio::test]
async fn takes_match_pylance_on_local_files() {
    check_all(open_local, "local").await;
}

#[tokio::test]
async fn takes_match_pylance_in_memory() {
    check_all(open_memory, "memory").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn takes_match_pylance_over_s3() {
    let s3 = common::S3TestServer::start().await;
    for variant in VARIANTS {
        s3.upload_dir(&dataset_dir(variant), &format!("ds/{variant}.lance"))
            .await;
    }
    let open = async |variant: &str| {
        let opened = s3.open(&format!("ds/{variant}.lance"));
        DatasetVersion::open_opened(
            &opened,
            None,
            Arc::new(DatasetSession::default()),
            &IoStats::new(),
        )
        .await
        .expect("open S3 dataset")
    };
    check_all(open, "s3").await;
}

#[tokio::test]
async fn bad_addresses_are_invalid_arguments_like_pylance() {
    let doc = answers();
    for variant in VARIANTS {
        let dataset = open_local(variant).await;
        let errors = doc["variants"][variant]["take_errors"].as_array().unwrap();
        assert!(!errors.is_empty());
        for e in errors {
            let rows = u64s(&e["rows"]);
            let got = take_rows(&dataset, &rows, &["id".to_string()], &IoStats::new()).await;
            let Err(Error::InvalidArgument(text)) = got else {
                panic!(
                    "{variant} {rows:?}: expected InvalidArgument (pylance: {}), got {got:?}",
                    e["pylance_error"]
                );
            };
            // Names the first bad address.
            let bad = rows
                .iter()
                .find(|a| text.contains(&format!("row address {a}")))
                .copied();
            assert!(bad.is_some(), "{variant} {rows:?}: {text}");
        }
    }
}

/// A warm take (page init and structural plans cached by the first take) of rows whose
/// `detections` lists are all empty or null — with every page buffer read from the store
/// (these files are small enough to lie wholly in one suffix read, whose bytes readers
/// otherwise serve from memory) —: through a dataset with 2.3 sparse pages it sends no
/// request at all (no value bytes, and nothing else either); with mini-block pages (2.2,
/// and 2.3 where pylance's automatic choice picked mini-block for every column of these
/// small fragments) the levels live in the value chunks: one GET per leaf column (label,
/// confidence, area: one chunk each; local reads are not coalesced) per data file, and
/// nothing else (page init cached). A warm take of rows with detections does read (so the
/// test can fail).
#[tokio::test]
async fn warm_take_of_empty_lists_reads_no_value_bytes_through_a_dataset() {
    let doc = answers();
    let sets = row_sets(&doc);
    let empty = &sets[doc["empty_detections_row_set"].as_u64().unwrap() as usize];
    let det = vec!["detections".to_string()];
    for variant in ["v2_3_sparse", "v2_3", "v2_2"] {
        let dataset =
            open_local_with(variant, DatasetSession::default().without_data_tails()).await;
        let cold = IoStats::new();
        let batch = take_rows(&dataset, empty, &det, &cold).await.unwrap();
        assert_eq!(batch.num_rows(), empty.len());
        let lists = batch.column(1);
        let lists = lists
            .as_any()
            .downcast_ref::<arrow_array::ListArray>()
            .expect("list");
        assert!((0..lists.len()).all(|i| lists.is_null(i) || lists.value_length(i) == 0));
        assert!(
            cold.snapshot().requests > 0,
            "{variant}: the cold take reads"
        );
        let warm = IoStats::new();
        take_rows(&dataset, empty, &det, &warm).await.unwrap();
        let w = warm.snapshot();
        if variant == "v2_3_sparse" {
            assert_eq!(
                (w.requests, w.bytes),
                (0, 0),
                "{variant}: warm take of empty/null lists"
            );
        } else {
            let files: std::collections::BTreeSet<u64> = empty.iter().map(|a| a >> 32).collect();
            assert_eq!(
                w.requests,
                3 * files.len() as u64,
                "{variant}: warm take, one GET per leaf column and data file"
            );
        }
        // Rows holding detections need their value chunks (cached nowhere).
        let full = take_rows(&dataset, &sets[1], &det, &IoStats::new())
            .await
            .unwrap();
        let values = full.column(1).to_data().child_data()[0].len();
        assert!(values > 0, "{variant}: set 1 holds detections");
        let warm_values = IoStats::new();
        take_rows(&dataset, &sets[2], &det, &warm_values)
            .await
            .unwrap();
        assert!(
            warm_values.snapshot().bytes > 0,
            "{variant}: a warm take of rows with detections reads value bytes"
        );
    }
}

/// A dataset opens its file readers from the session's cached metadata on every take; they
/// serve the bytes of the first open's suffix read from memory as that first reader did, so
/// a warm take through a dataset costs what a warm take through one open file does. These
/// files lie wholly inside one suffix read: after the first take, none needs a request (it
/// needed one GET per leaf column and file when the reopened readers lacked those bytes).
#[tokio::test]
async fn a_warm_dataset_take_serves_the_cached_suffix_bytes_like_an_open_file() {
    let doc = answers();
    let sets = row_sets(&doc);
    let columns: Vec<String> = ["id", "detections"].map(String::from).to_vec();
    for variant in VARIANTS {
        let dataset = open_local(variant).await;
        let cold = IoStats::new();
        take_rows(&dataset, &sets[1], &columns, &cold)
            .await
            .unwrap();
        assert!(
            cold.snapshot().requests > 0,
            "{variant}: the first take reads"
        );
        for rows in &sets[2..] {
            let warm = IoStats::new();
            let batch = take_rows(&dataset, rows, &columns, &warm).await.unwrap();
            assert!(batch.num_rows() > 0, "{variant}");
            let w = warm.snapshot();
            assert_eq!(
                (w.requests, w.bytes),
                (0, 0),
                "{variant}: warm take of {rows:?}"
            );
        }
    }
}

fn take_args(variant: &str, rows: Vec<u64>, columns: Vec<String>) -> TakeArgs {
    TakeArgs {
        dataset: dataset_dir(variant).to_str().unwrap().to_string(),
        rows,
        row_ids: vec![],
        columns,
        version: None,
        stats: false,
        storage_options: vec![],
    }
}

/// `lakeseek take` prints zoned timestamps as RFC 3339 local times with the zone's offset
/// at that instant: the same instant and offset as pylance's `datetime.isoformat()`.
#[tokio::test]
async fn take_prints_zoned_timestamps_like_pylance() {
    let doc = answers();
    let rows = row_sets(&doc)[0].clone();
    let zoned = doc["zoned_isoformat_row_set_0"].as_object().unwrap();
    for variant in VARIANTS {
        let cols: Vec<String> = zoned.keys().cloned().collect();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        run_take_to(
            &take_args(variant, rows.clone(), cols.clone()),
            &mut out,
            &mut err,
        )
        .await
        .unwrap();
        let lines: Vec<Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), kept(&rows).len());
        let mut offsets = std::collections::BTreeSet::new();
        for c in &cols {
            let want = zoned[c].as_array().unwrap();
            assert_eq!(want.len(), lines.len());
            for (line, want) in lines.iter().zip(want) {
                let got = line.get(c).cloned().unwrap_or(Value::Null);
                match (got.as_str(), want.as_str()) {
                    (None, None) => {}
                    (Some(g), Some(w)) => {
                        let g = chrono::DateTime::parse_from_rfc3339(g)
                            .unwrap_or_else(|e| panic!("{c}: {g:?} is not RFC 3339: {e}"));
                        let w = chrono::DateTime::parse_from_rfc3339(w).unwrap();
                        assert_eq!(g, w, "{variant} {c}: instant");
                        assert_eq!(g.offset(), w.offset(), "{variant} {c}: offset of {w}");
                        offsets.insert(g.offset().local_minus_utc());
                    }
                    _ => panic!("{variant} {c}: {got} vs pylance {want}"),
                }
            }
        }
        // UTC, New York's standard and daylight time, +05:30.
        for o in [0, -5 * 3600, -4 * 3600, 19_800] {
            assert!(offsets.contains(&o), "{variant}: offsets {offsets:?}");
        }
    }
}

/// `lakeseek take` and `query --columns` take nested columns (the README's examples).
#[tokio::test]
async fn cli_take_and_query_read_nested_columns() {
    let doc = answers();
    let cols = vec![
        "id".to_string(),
        "detections".to_string(),
        "m".to_string(),
        "sls".to_string(),
    ];
    let rows = vec![0, (2 << 32) | 5, 4, 0];
    let (mut out, mut err) = (Vec::new(), Vec::new());
    run_take_to(
        &take_args("v2_3_sparse", rows.clone(), cols.clone()),
        &mut out,
        &mut err,
    )
    .await
    .unwrap();
    let took: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<u64> = took.iter().map(|l| l["id"].as_u64().unwrap()).collect();
    assert_eq!(ids, vec![0, 325, 4, 0]);
    let args = QueryArgs {
        dataset: dataset_dir("v2_2").to_str().unwrap().to_string(),
        filter: "id < 6".into(),
        columns: cols,
        version: None,
        explain: false,
        allow_scan: true,
        stats: false,
        storage_options: vec![],
        ..QueryArgs::default()
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    run_query_to(&args, &mut out, &mut err).await.unwrap();
    let queried: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<u64> = queried.iter().map(|l| l["id"].as_u64().unwrap()).collect();
    assert_eq!(ids, vec![0, 1, 2, 4, 5], "id 3 is deleted");
    // The same rows taken from another variant print the same values.
    assert_eq!(queried[0], took[0]);
    assert_eq!(queried[3], took[2]);
    assert!(doc["variants"]["v2_2"]["columns"].as_array().unwrap().len() > 20);
}

fn expected(q: &Value) -> Vec<u64> {
    undelta(&q["addr_deltas"])
}

/// Filters on the zoned timestamp columns (scanned: no index) return pylance's rows; the
/// literals pylance rejects (wall-clock times New York skips or repeats) are errors.
#[tokio::test]
async fn zoned_timestamp_filters_match_pylance() {
    let doc = answers();
    let options = FilterOptions { allow_scan: true };
    for variant in ["v2_2", "v2_3_sparse"] {
        let dataset = open_local(variant).await;
        let mut failures = Vec::new();
        let filters = doc["filters"].as_array().unwrap();
        assert!(filters.len() > 50);
        for q in filters {
            let f = q["filter"].as_str().unwrap();
            match filter_row_addresses(&dataset, f, options, &IoStats::new()).await {
                Ok(got) => {
                    let got: Vec<u64> = got.iter().collect();
                    if got != expected(q) {
                        failures.push(format!(
                            "{f}: {} rows, pylance {}",
                            got.len(),
                            expected(q).len()
                        ));
                    }
                }
                Err(e) => failures.push(format!("{f}: error {e}")),
            }
        }
        for q in doc["filter_errors"].as_array().unwrap() {
            let f = q["filter"].as_str().unwrap();
            if let Ok(got) = filter_row_addresses(&dataset, f, options, &IoStats::new()).await {
                failures.push(format!(
                    "{f}: {} rows, pylance rejects it: {}",
                    got.len(),
                    q["pylance_error"]
                ));
            }
        }
        assert!(failures.is_empty(), "{variant}:\n{}", failures.join("\n"));
    }
}
