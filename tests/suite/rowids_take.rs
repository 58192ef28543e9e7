//! Take by stable row id (`Dataset::take_row_ids`, `lakeseek take --row-ids`) and the
//! `_rowid` column, against pylance 14.0.2's `_take_rows` and `with_row_id` answers
//! (`tests/fixtures/rowids/gen_rowids.py`), locally and over S3.

use std::sync::Arc;

use arrow_array::{Array, Int64Array, RecordBatch, UInt64Array};
use serde_json::Value;

use crate::error::Error;
use crate::io::IoStats;
use crate::lance::dataset::take_row_ids::{take_row_ids, take_with_row_ids};
use crate::lance::dataset::{DatasetSession, DatasetVersion};
use crate::suite::common::S3TestServer;
use crate::suite::rowids_filters::fixture;

fn answers() -> Value {
    let text = std::fs::read_to_string(fixture("rowids").join("answers.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// `(dataset, version label, version)` of every recorded version.
fn versions(doc: &Value) -> Vec<(String, String, u64)> {
    let mut out = Vec::new();
    for (name, a) in doc.as_object().unwrap() {
        for (label, v) in a["versions"].as_object().unwrap() {
            out.push((name.clone(), label.clone(), v.as_u64().unwrap()));
        }
    }
    out
}

async fn open_local(name: &str, version: u64) -> DatasetVersion {
    let path = fixture("rowids").join(format!("{name}.lance"));
    let session = Arc::new(DatasetSession::default());
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

fn u64s(batch: &RecordBatch, name: &str) -> Vec<u64> {
    let c = batch.column_by_name(name).unwrap();
    c.as_any()
        .downcast_ref::<UInt64Array>()
        .unwrap()
        .values()
        .to_vec()
}

/// `[id, k]` of each row, as pylance's JSON has them.
fn id_k(batch: &RecordBatch) -> Vec<Value> {
    let col = |n: &str| {
        batch
            .column_by_name(n)
            .unwrap()
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap()
            .clone()
    };
    let (id, k) = (col("id"), col("k"));
    (0..batch.num_rows())
        .map(|i| {
            let kv = if k.is_null(i) {
                Value::Null
            } else {
                k.value(i).into()
            };
            Value::Array(vec![id.value(i).into(), kv])
        })
        .collect()
}

/// Every recorded `_take_rows` list on `dataset`: the same rows in the same order; an id
/// never assigned is refused (pylance returns nothing for it).
async fn check_takes(dataset: &DatasetVersion, takes: &Value, what: &str) {
    let columns = ["id".to_string(), "k".to_string(), "_rowid".to_string()];
    for t in takes.as_array().unwrap() {
        let ids: Vec<u64> = t["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        let got = take_row_ids(dataset, &ids, &columns, &IoStats::new()).await;
        if ids.iter().any(|id| *id >= dataset.manifest().next_row_id) {
            let err = got.unwrap_err();
            assert!(
                matches!(err, Error::InvalidArgument(_)),
                "{what} {ids:?}: {err:?}"
            );
            assert!(err.to_string().contains("never assigned"), "{err}");
            assert_eq!(t["rows"], Value::Array(vec![]), "pylance returned nothing");
            continue;
        }
        let got = got.unwrap();
        let want = t["rows"].as_array().unwrap();
        assert_eq!(&id_k(&got), want, "{what} {ids:?}");
        let kept: Vec<u64> = u64s(&got, "_rowid");
        let asked_live: Vec<u64> = ids.iter().copied().filter(|i| kept.contains(i)).collect();
        assert_eq!(
            kept, asked_live,
            "{what} {ids:?}: _rowid in the order asked"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn take_by_row_id_matches_pylance_locally() {
    let doc = answers();
    for (name, label, version) in versions(&doc) {
        let dataset = open_local(&name, version).await;
        check_takes(
            &dataset,
            &doc[&name]["takes"][&label],
            &format!("{name}@{version}"),
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn take_by_row_id_matches_pylance_over_s3() {
    let doc = answers();
    let s3 = S3TestServer::start().await;
    for name in ["srid", "srid_btree_v0"] {
        let dir = fixture("rowids").join(format!("{name}.lance"));
        s3.upload_dir(&dir, &format!("ds/{name}.lance")).await;
    }
    for (name, label, version) in versions(&doc) {
        let opened = s3.open(&format!("ds/{name}.lance"));
        let session = Arc::new(DatasetSession::default());
        let dataset = DatasetVersion::open_opened(&opened, Some(version), session, &IoStats::new())
            .await
            .unwrap();
        check_takes(
            &dataset,
            &doc[&name]["takes"][&label],
            &format!("s3 {name}@{version}"),
        )
        .await;
    }
    assert_eq!(s3.http_counts().heads, 0, "no HEAD requests");
}

/// `_rowid` of a take by address is pylance's `_rowid` of that `_rowaddr`, for every live row
/// of every version (the same id sits at a deleted address too: not asked here).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rowid_column_of_a_take_matches_pylance() {
    let doc = answers();
    for (name, label, version) in versions(&doc) {
        let dataset = open_local(&name, version).await;
        let rows = doc[&name]["rows"][&label].as_array().unwrap();
        let addrs: Vec<u64> = rows.iter().map(|r| r[0].as_u64().unwrap()).collect();
        let want: Vec<u64> = rows.iter().map(|r| r[1].as_u64().unwrap()).collect();
        let columns = ["_rowid".to_string(), "id".to_string()];
        let got = take_with_row_ids(&dataset, &addrs, &columns, &IoStats::new())
            .await
            .unwrap();
        assert_eq!(got.schema().field(1).name(), "_rowid");
        assert_eq!(u64s(&got, "_rowaddr"), addrs, "{name}@{version}");
        assert_eq!(u64s(&got, "_rowid"), want, "{name}@{version}");
    }
}

/// A take by row id costs what the take of the rows' addresses costs (requests and bytes):
/// the ids are found in the manifest's sequences, with no request of their own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn take_by_row_id_needs_no_extra_round_trip() {
    let ids: Vec<u64> = vec![46, 5, 599, 1, 67, 2];
    let columns = ["id".to_string()];
    let by_id = IoStats::new();
    let dataset = open_local("srid", 9).await;
    let got = take_row_ids(&dataset, &ids, &columns, &by_id)
        .await
        .unwrap();
    let addrs = u64s(&got, "_rowaddr");
    let by_addr = IoStats::new();
    let dataset = open_local("srid", 9).await;
    take_with_row_ids(&dataset, &addrs, &columns, &by_addr)
        .await
        .unwrap();
    let (a, b) = (by_id.snapshot(), by_addr.snapshot());
    assert_eq!(
        (a.requests, a.bytes),
        (b.requests, b.bytes),
        "by id {a:?}, by address {b:?}"
    );
}

/// `lakeseek take --row-ids` prints the rows in the order of the ids.
#[tokio::test]
async fn cli_take_row_ids_prints_rows_in_id_order() {
    use crate::cli::query::{run_take_to, TakeArgs};
    let args = TakeArgs {
        dataset: fixture("rowids/srid.lance").display().to_string(),
        rows: vec![],
        row_ids: vec![46, 5, 46, 679],
        columns: vec!["_rowid".into(), "id".into(), "k".into()],
        version: None,
        stats: false,
        storage_options: vec![],
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    run_take_to(&args, &mut out, &mut err).await.unwrap();
    let lines: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<u64> = lines
        .iter()
        .map(|l| l["_rowid"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [46, 5, 46, 679]);
    assert_eq!(lines[0]["k"], 5);
    assert_eq!(lines[3]["id"], 679);
}
