//! Lance's own compatibility datasets (`tests/fixtures/datasets/lance_test_data/`, copied
//! from lance's `test_data/`) against what pylance 14.0.2 reads (`oracle.json`, by
//! `gen_oracle.py` there), locally and over the in-process S3 server.
//!
//! `v0.8.0_migrated_from_v0.7.5`: lance 0.8.0 recorded fragment 0's live row count (90) as
//! its `physical_rows` (the file holds 100 rows, 10 deleted) and wrote no
//! `writer_version`; lance then reads the count from the data file. Before issue 32
//! lakeseek took the manifest's 90: 80 live rows in fragment 0, and a take of its row 90
//! failed ("offset 90 is beyond the 90 rows of fragment 0").

use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, UInt64Type};
use serde_json::Value;

use super::common::S3TestServer;
use crate::Dataset;

/// A path under this crate's `tests/fixtures/` (this checkout's, not the one
/// `lakeseek-testing` was built from).
fn fixture(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

const MIGRATED: &str = "v0.8.0_migrated_from_v0.7.5.lance";

fn oracle() -> Value {
    let path = fixture("datasets/lance_test_data/oracle.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

fn i64s(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

/// Everything of `want` (one dataset's oracle) that `dataset` reads differently.
async fn mismatches(dataset: &Dataset, want: &Value) -> Vec<String> {
    let mut bad = Vec::new();
    let fragments = dataset.fragments();
    for (f, w) in fragments.iter().zip(want["fragments"].as_array().unwrap()) {
        let live = f.physical_rows - f.deleted_rows.unwrap_or(0);
        let got = (f.id, f.physical_rows, live);
        let expect = (
            w["id"].as_u64().unwrap(),
            w["physical_rows"].as_u64().unwrap(),
            w["count_rows"].as_u64().unwrap(),
        );
        if got != expect {
            bad.push(format!(
                "fragment (id, physical, live) {got:?}, pylance {expect:?}"
            ));
        }
    }
    match dataset.describe().await {
        Ok(d) if d.num_rows == want["count_rows"].as_u64().unwrap() => {}
        Ok(d) => bad.push(format!(
            "{} rows, pylance {}",
            d.num_rows, want["count_rows"]
        )),
        Err(e) => bad.push(format!("describe: {e}")),
    }
    let all = u64s(&want["row_addresses"]);
    let mut takes: Vec<(Vec<u64>, Vec<i64>)> = vec![(all.clone(), i64s(&want["x"]))];
    for t in want["takes"].as_array().unwrap() {
        takes.push((u64s(&t["row_addresses"]), i64s(&t["x"])));
    }
    for (addresses, x) in takes {
        match dataset.take(&addresses, &["x"]).await {
            Ok(batch) => {
                let got: Vec<i64> = batch
                    .column_by_name("x")
                    .unwrap()
                    .as_primitive::<Int64Type>()
                    .values()
                    .to_vec();
                if got != x {
                    bad.push(format!("take {addresses:?}: {got:?}, pylance {x:?}"));
                }
            }
            Err(e) => bad.push(format!("take {addresses:?}: {e}")),
        }
    }
    for f in want["filters"].as_array().unwrap() {
        let filter = f["filter"].as_str().unwrap();
        let expect = u64s(&f["row_addresses"]);
        match dataset
            .query()
            .filter(filter)
            .allow_scan(true)
            .execute()
            .await
        {
            Ok(r) if r.row_addresses == expect => {}
            Ok(r) => bad.push(format!(
                "{filter}: {:?}, pylance {expect:?}",
                r.row_addresses
            )),
            Err(e) => bad.push(format!("{filter}: {e}")),
        }
    }
    // Every row by a full take of fragment 0's physical rows: the deleted ones dropped.
    let rows: Vec<u64> = (0..100).collect();
    match dataset.take(&rows, &[]).await {
        Ok(batch) => {
            let got = batch
                .column(0)
                .as_primitive::<UInt64Type>()
                .values()
                .to_vec();
            let expect: Vec<u64> = all.iter().copied().filter(|a| *a < 100).collect();
            if got != expect {
                bad.push(format!("fragment 0 rows {got:?}, pylance {expect:?}"));
            }
        }
        Err(e) => bad.push(format!("take of fragment 0's 100 rows: {e}")),
    }
    bad
}

#[tokio::test]
async fn migrated_v0_8_0_dataset_reads_as_pylance() {
    let oracle = oracle();
    let want = &oracle["datasets"][MIGRATED];
    assert_eq!(want["count_rows"], 92);
    let path = fixture(&format!("datasets/lance_test_data/{MIGRATED}"));
    let dataset = Dataset::open(path.to_str().unwrap()).await.unwrap();
    let bad = mismatches(&dataset, want).await;
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrated_v0_8_0_dataset_reads_as_pylance_over_s3() {
    let oracle = oracle();
    let want = &oracle["datasets"][MIGRATED];
    let s3 = S3TestServer::start().await;
    let key = format!("lance_test_data/{MIGRATED}");
    s3.upload_dir(
        &fixture(&format!("datasets/lance_test_data/{MIGRATED}")),
        &key,
    )
    .await;
    let dataset = Dataset::builder(&s3.url(&key))
        .storage_options(s3.storage_options())
        .open()
        .await
        .unwrap();
    let bad = mismatches(&dataset, want).await;
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
