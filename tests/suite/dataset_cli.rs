//! `lakeseek query` / `lakeseek take` runners: output formats, --explain, --allow-scan,
//! --stats, and take results equal to pylance's `_take_rows`.

use crate::cli::query::{run_query_to, run_take_to, QueryArgs, TakeArgs};
use crate::suite::common::{dataset_fixture, json_fixture, undelta};
use serde_json::Value;

fn answers() -> Value {
    json_fixture("datasets/answers.json")
}

fn query_args(dataset: &str, filter: &str) -> QueryArgs {
    QueryArgs {
        dataset: dataset_fixture(dataset).display().to_string(),
        filter: filter.into(),
        columns: vec![],
        version: None,
        explain: false,
        allow_scan: false,
        stats: false,
        storage_options: vec![],
        ..QueryArgs::default()
    }
}

async fn run(args: &QueryArgs) -> (String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    run_query_to(args, &mut out, &mut err).await.unwrap();
    (
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

fn recorded(dataset: &str, filter: &str) -> Vec<u64> {
    let doc = answers();
    let q = doc["datasets"][dataset]["queries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["filter"] == filter && q["version"].is_null())
        .unwrap()
        .clone();
    undelta(&q["addr_deltas"])
}

#[tokio::test]
async fn query_prints_ascending_row_addresses_and_stats() {
    let mut args = query_args("types", "s = 'ab'");
    args.stats = true;
    let (out, err) = run(&args).await;
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    let got: Vec<u64> = v["row_addresses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_eq!(got, recorded("types", "s = 'ab'"));
    assert!(got.windows(2).all(|w| w[0] < w[1]));
    let stats: Value = serde_json::from_str(err.lines().last().unwrap()).unwrap();
    assert!(stats["requests"].as_u64().unwrap() > 0);
    assert!(stats["round_trips"].as_u64().unwrap() >= 3);
    assert!(stats["bytes"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn query_with_columns_prints_rows() {
    let mut args = query_args("types", "i = 8");
    args.columns = vec!["id".into(), "i".into()];
    let (out, _) = run(&args).await;
    let rows: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let want = recorded("types", "i = 8");
    assert_eq!(rows.len(), want.len());
    for (row, addr) in rows.iter().zip(&want) {
        assert_eq!(row["_rowaddr"].as_u64(), Some(*addr));
        assert_eq!(row["i"].as_i64(), Some(8));
    }
}

#[tokio::test]
async fn explain_lists_pages_and_byte_ranges_and_allow_scan_says_so() {
    let mut args = query_args("wide", "key = 74");
    args.explain = true;
    let (_, err) = run(&args).await;
    let plan: Value = serde_json::from_str(&err).unwrap();
    let pages = plan["segments"][0]["pages"].as_array().unwrap();
    assert_eq!(pages.len(), 1);
    assert_eq!(pages[0]["page"], 0);
    assert_eq!(pages[0]["rows"], serde_json::json!([0, 4096]));
    assert!(!pages[0]["disk_page_ranges"].as_array().unwrap().is_empty());

    let mut args = query_args("types", "id < 10");
    args.allow_scan = true;
    let (out, err) = run(&args).await;
    assert!(err.contains("no usable index on column \"id\""), "{err}");
    assert!(err.contains("--allow-scan"), "{err}");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    let got: Vec<u64> = v["row_addresses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_eq!(got, recorded("types", "id < 10"));

    // Without --allow-scan: an error, nothing on stdout.
    let args = query_args("types", "id < 10");
    let (mut out, mut err) = (Vec::new(), Vec::new());
    assert!(run_query_to(&args, &mut out, &mut err).await.is_err());
    assert!(out.is_empty());
}

#[tokio::test]
async fn pinned_version_answers_like_pylance() {
    let doc = answers();
    let indexed = doc["datasets"]["types"]["versions"]["indexed"]
        .as_u64()
        .unwrap();
    let q = doc["datasets"]["types"]["queries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["version"].as_u64() == Some(indexed) && q["filter"] == "i = 7")
        .unwrap()
        .clone();
    let mut args = query_args("types", "i = 7");
    args.version = Some(indexed);
    let (out, _) = run(&args).await;
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        v["row_addresses"].as_array().unwrap().len() as u64,
        q["count"].as_u64().unwrap()
    );
}

#[tokio::test]
async fn take_matches_pylance_take_rows() {
    let doc = answers();
    for t in doc["datasets"]["types"]["takes"].as_array().unwrap() {
        let args = TakeArgs {
            dataset: dataset_fixture("types").display().to_string(),
            rows: t["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap())
                .collect(),
            row_ids: vec![],
            columns: t["columns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_str().unwrap().to_string())
                .collect(),
            version: None,
            stats: false,
            storage_options: vec![],
        };
        let (mut out, mut err) = (Vec::new(), Vec::new());
        run_take_to(&args, &mut out, &mut err).await.unwrap();
        let rows: Vec<Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let want = t["result"].as_array().unwrap();
        assert_eq!(rows.len(), want.len(), "{t}");
        for (got, want) in rows.iter().zip(want) {
            for c in ["id", "i", "s"] {
                // arrow-json omits nulls; pylance lists them as null.
                let g = got.get(c).cloned().unwrap_or(Value::Null);
                assert_eq!(g, want[c], "column {c} of {got} vs {want}");
            }
        }
    }
    // A missing fragment is an error, as in lance.
    let args = TakeArgs {
        dataset: dataset_fixture("types").display().to_string(),
        rows: vec![1 << 32],
        row_ids: vec![],
        columns: vec!["id".into()],
        version: None,
        stats: false,
        storage_options: vec![],
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let e = run_take_to(&args, &mut out, &mut err).await.unwrap_err();
    assert!(e.to_string().contains("fragment 1 does not exist"), "{e}");
}
