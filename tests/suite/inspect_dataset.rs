//! `lakeseek inspect DATASET`: the dataset's fragments and indices as pylance 14.0.2's
//! `describe_indices()` and fragments report them (recorded in `scalar_answers.json`), and
//! `inspect FILE` unchanged.

use serde_json::Value;

use crate::cli::file_commands::{run_inspect, InspectArgs};
use crate::cli::StoreArgs;
use crate::suite::common::fixture;

async fn inspect_json(url: &str) -> Value {
    let args = InspectArgs {
        url: url.to_string(),
        json: true,
        plans: false,
        store: StoreArgs {
            storage_options: vec![],
            stats: false,
        },
    };
    let mut out = Vec::new();
    run_inspect(&args, &mut out).await.unwrap();
    serde_json::from_slice(&out).unwrap()
}

/// pylance's index type names as lakeseek's kinds.
fn kind_of(pylance_type: &str) -> &'static str {
    match pylance_type {
        "BTree" => "BTREE",
        "Bitmap" => "BITMAP",
        "LabelList" => "LABEL_LIST",
        "ZoneMap" => "ZONEMAP",
        "BloomFilter" => "BLOOMFILTER",
        other => panic!("unexpected pylance index type {other}"),
    }
}

#[tokio::test]
async fn inspect_of_a_dataset_matches_pylances_description() {
    let got = inspect_json(fixture("datasets/scalar_indices.lance").to_str().unwrap()).await;
    let answers: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("datasets/scalar_answers.json")).unwrap(),
    )
    .unwrap();
    let want = &answers["datasets"]["scalar_indices"]["describe"];

    let fragments: Vec<(u64, u64)> = got["fragments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["id"].as_u64().unwrap(),
                f["physical_rows"].as_u64().unwrap(),
            )
        })
        .collect();
    let want_fragments: Vec<(u64, u64)> = want["fragments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["id"].as_u64().unwrap(),
                f["physical_rows"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(fragments, want_fragments);
    for f in got["fragments"].as_array().unwrap() {
        for file in f["files"].as_array().unwrap() {
            assert_eq!(file["file_version"], got["storage_version"], "{file}");
        }
    }

    let mut indices: Vec<(String, String, Vec<String>, Vec<u64>)> = got["indices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["name"].as_str().unwrap().to_string(),
                i["kind"].as_str().unwrap().to_string(),
                serde_json::from_value(i["columns"].clone()).unwrap(),
                serde_json::from_value(i["fragments"].clone()).unwrap(),
            )
        })
        .collect();
    let mut want_indices: Vec<(String, String, Vec<String>, Vec<u64>)> = want["indices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["name"].as_str().unwrap().to_string(),
                kind_of(i["type"].as_str().unwrap()).to_string(),
                serde_json::from_value(i["fields"].clone()).unwrap(),
                serde_json::from_value(i["fragment_ids"].clone()).unwrap(),
            )
        })
        .collect();
    indices.sort();
    want_indices.sort();
    assert_eq!(indices, want_indices);
    assert!(got["indices"]
        .as_array()
        .unwrap()
        .iter()
        .all(|i| i["kind_inferred"] == false));
    // Every top-level column with its field id.
    let schema = got["schema"].as_array().unwrap();
    assert!(schema
        .iter()
        .any(|f| f["path"] == "tags" && f["id"].is_i64()));
}

#[tokio::test]
async fn inspect_of_a_file_is_still_the_file_inspection() {
    let dir = fixture("datasets/scalar_indices.lance/data");
    let file = std::fs::read_dir(dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let got = inspect_json(file.to_str().unwrap()).await;
    assert!(got["columns"].is_array(), "{got}");
    assert!(got.get("fragments").is_none(), "{got}");
}
