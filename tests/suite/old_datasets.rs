//! Datasets written by old pylance releases (`tests/fixtures/datasets/old/`, see its
//! README): every filter of the catalog gives the row addresses pylance 14.0.2 returned, and
//! the filters on indexed columns are answered from the indices alone (no scan).

use std::path::PathBuf;

use crate::suite::common::undelta;
use serde_json::Value;

use crate::Dataset;

/// Datasets whose every file lakeseek reads (data files and index files). Grows as the
/// readers of older file versions land.
pub(super) const READABLE: &[&str] = &[
    "p0_39_0_legacy",
    "p0_39_0_v2_0",
    "p0_39_0_v2_1",
    "p6_1_0_legacy",
    "p6_1_0_v2_0",
    "p6_1_0_v2_1",
    "p14_0_2_legacy",
    "p14_0_2_v2_0",
    "p0_8_21_legacy",
    "p0_13_0_legacy",
    "p0_13_0_v2_0_noappend",
    "p0_16_1_legacy",
    "p0_17_0_legacy",
    "p0_17_0_legacy_then_p14_0_2",
    "p0_17_0_v2_0_nodcat",
    "p0_18_2_legacy",
    "p0_18_2_v2_0",
    "p0_18_2_v2_0_then_p14_0_2_v2_1",
    "p0_25_2_legacy",
    "p0_25_2_v2_0",
    "p0_25_2_v2_0_then_p14_0_2_v2_2",
    "p0_6_5_legacy",
];

pub(super) fn old_dir() -> PathBuf {
    crate::suite::common::fixture("datasets/old")
}

pub(super) fn catalog() -> Value {
    let text = std::fs::read_to_string(old_dir().join("catalog.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

pub(super) fn entry<'a>(catalog: &'a Value, name: &str) -> &'a Value {
    catalog["datasets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == name)
        .unwrap_or_else(|| panic!("{name} is not in the catalog"))
}

/// Columns some index of the dataset covers.
fn indexed_columns(entry: &Value) -> Vec<String> {
    entry["indices"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|i| i["fields"].as_array().unwrap().iter())
        .map(|f| f.as_str().unwrap().to_string())
        .collect()
}

/// Run every catalog filter of `name`; the mismatches, as text.
async fn filter_mismatches(catalog: &Value, name: &str) -> Vec<String> {
    let entry = entry(catalog, name);
    let path = old_dir().join(entry["path"].as_str().unwrap());
    match Dataset::open(path.to_str().unwrap()).await {
        Ok(dataset) => dataset_filter_mismatches(&dataset, entry).await,
        Err(e) => vec![format!("{name}: open: {e}")],
    }
}

/// Run every catalog filter of the dataset of `entry`, opened as `dataset` (local or on
/// S3); the mismatches, as text.
pub(super) async fn dataset_filter_mismatches(dataset: &Dataset, entry: &Value) -> Vec<String> {
    let name = entry["name"].as_str().unwrap();
    let indexed = indexed_columns(entry);
    let mut bad = Vec::new();
    for q in entry["queries"].as_array().unwrap() {
        let filter = q["filter"].as_str().unwrap();
        let mut want = undelta(&q["addr_deltas"]);
        // Under NOT, a label list lookup of pylance <= 0.39 (no null-list rows) cannot tell
        // a NULL list from a FALSE one: pylance 14.0.2 returns the null lists (and warns),
        // lakeseek rechecks those rows on data and gives the SQL answer, pylance's scan.
        if filter.starts_with("NOT array_has") && !q["scan_addr_deltas"].is_null() {
            want = undelta(&q["scan_addr_deltas"]);
        }
        let scanned = dataset
            .query()
            .filter(filter)
            .allow_scan(true)
            .execute()
            .await;
        // With a scan allowed the answer is the index's where an index answers (pylance's
        // `addr_deltas`; where 14.0.2's own scan disagrees, `scan_addr_deltas` is its scan).
        match scanned {
            Ok(r) if r.row_addresses == want => {}
            Ok(r) => bad.push(format!(
                "{name}: {filter}: {} rows, pylance {} (first {:?} vs {:?})",
                r.row_addresses.len(),
                want.len(),
                r.row_addresses.iter().take(5).collect::<Vec<_>>(),
                want.iter().take(5).collect::<Vec<_>>()
            )),
            Err(e) => bad.push(format!("{name}: {filter}: {e}")),
        }
        let all_indexed = q["columns"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| indexed.iter().any(|i| c == i));
        if q["uses_index"] == true && all_indexed {
            match dataset.filter(filter).await {
                Ok(rows) if rows == want => {}
                Ok(rows) => bad.push(format!(
                    "{name}: {filter} (index only): {} rows, pylance {}",
                    rows.len(),
                    want.len()
                )),
                Err(e) => bad.push(format!("{name}: {filter} (index only): {e}")),
            }
        }
    }
    bad
}

#[tokio::test]
async fn filters_on_old_datasets_match_pylance() {
    let catalog = catalog();
    let mut bad = Vec::new();
    for name in READABLE {
        bad.extend(filter_mismatches(&catalog, name).await);
    }
    assert!(
        bad.is_empty(),
        "{} mismatches:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// Every dataset of the catalog that pylance 14.0.2 reads, with how many of its filters
/// lakeseek answers as pylance does (printed: `--nocapture` shows it): a wrong answer or
/// an error is counted, a panic fails; [`READABLE`] lists the datasets that must answer
/// every filter.
#[tokio::test]
async fn old_dataset_filter_coverage() {
    let catalog = catalog();
    for entry in catalog["datasets"].as_array().unwrap() {
        if !entry["refused_by_pylance_14"].is_null() {
            continue;
        }
        let name = entry["name"].as_str().unwrap();
        let total = entry["queries"].as_array().map_or(0, |q| q.len());
        let bad = filter_mismatches(&catalog, name).await;
        println!(
            "{name}: {} of {total} filters as pylance",
            total.saturating_sub(bad.len())
        );
        for b in bad.iter().take(3) {
            println!("    {b}");
        }
    }
}
