//! Issue 32: bitmap and label-list lookups written by pylance <= 0.39 keep their keys in
//! hash order, the null key anywhere. Every catalog filter on `cat` (BITMAP) and `tags`
//! (LABEL_LIST) of the old-lake datasets, each asked of a **freshly opened** dataset (no
//! keys cached by an earlier filter: the first search of a lookup must find the null key
//! by itself), gives pylance 14.0.2's rows — locally and over the in-process S3 server.
//! Before the fix, `cat IS NULL` on a fresh open of `p0_18_2_legacy`, `p0_25_2_v2_0` and
//! `p0_25_2_v2_0_then_p14_0_2_v2_2` returned only the unindexed fragment's NULL rows (the
//! probe search read rows 0 and N-1 of the lookup, found them in order, and took the null
//! key to be absent) and `--explain` called the answer exact.

use std::future::Future;

use serde_json::Value;

use super::common::{undelta, S3TestServer};
use super::old_datasets::{catalog, READABLE};
use crate::{Dataset, Result};

/// A path under this crate's `tests/fixtures/` (this checkout's, not the one
/// `lakeseek-testing` was built from).
fn fixture(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

fn old_dir() -> std::path::PathBuf {
    fixture("datasets/old")
}

/// The catalog filters of `entry` on the BITMAP / LABEL_LIST columns only.
fn lookup_filters(entry: &Value) -> Vec<&Value> {
    entry["queries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| {
            let cols = q["columns"].as_array().unwrap();
            !cols.is_empty() && cols.iter().all(|c| c == "cat" || c == "tags")
        })
        .collect()
}

/// Ask every lookup filter of `entry` of a fresh dataset from `open`: index only where
/// pylance used its index (then the answer must come from the lookups), else with a scan
/// allowed. Returns (filters asked, mismatches).
async fn fresh_mismatches<F, Fut>(entry: &Value, open: F) -> (usize, Vec<String>)
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<Dataset>>,
{
    let name = entry["name"].as_str().unwrap();
    let mut bad = Vec::new();
    let filters = lookup_filters(entry);
    for q in &filters {
        let filter = q["filter"].as_str().unwrap();
        let want = undelta(&q["addr_deltas"]);
        let dataset = match open().await {
            Ok(d) => d,
            Err(e) => {
                bad.push(format!("{name}: open: {e}"));
                continue;
            }
        };
        let got = if q["uses_index"] == true {
            dataset.filter(filter).await
        } else {
            dataset
                .query()
                .filter(filter)
                .allow_scan(true)
                .execute()
                .await
                .map(|r| r.row_addresses)
        };
        match got {
            Ok(rows) if rows == want => {}
            Ok(rows) => bad.push(format!(
                "{name}: {filter} (fresh open): {} rows, pylance {}",
                rows.len(),
                want.len()
            )),
            Err(e) => bad.push(format!("{name}: {filter} (fresh open): {e}")),
        }
    }
    (filters.len(), bad)
}

fn with_lookups(catalog: &Value) -> Vec<Value> {
    catalog["datasets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| READABLE.contains(&d["name"].as_str().unwrap()))
        .filter(|d| {
            d["indices"]
                .as_array()
                .unwrap()
                .iter()
                .any(|i| i["name"] == "cat_idx")
        })
        .cloned()
        .collect()
}

#[tokio::test]
async fn null_keys_of_old_lookups_on_a_fresh_open() {
    let catalog = catalog();
    let (mut asked, mut bad, mut null_filters) = (0, Vec::new(), 0);
    let datasets = with_lookups(&catalog);
    for entry in &datasets {
        let path = old_dir().join(entry["path"].as_str().unwrap());
        let url = path.to_str().unwrap().to_string();
        let (n, b) = fresh_mismatches(entry, || Dataset::open(&url)).await;
        asked += n;
        bad.extend(b);
        null_filters += lookup_filters(entry)
            .iter()
            .filter(|q| q["filter"] == "cat IS NULL")
            .count();
    }
    assert!(datasets.len() >= 17, "only {} datasets", datasets.len());
    assert_eq!(
        null_filters,
        datasets.len(),
        "every dataset asks `cat IS NULL`"
    );
    assert!(asked >= 17 * 10, "only {asked} filters");
    assert!(
        bad.is_empty(),
        "{} mismatches:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn null_keys_of_old_lookups_on_a_fresh_open_over_s3() {
    let catalog = catalog();
    let s3 = S3TestServer::start().await;
    let (mut asked, mut bad) = (0, Vec::new());
    let datasets = with_lookups(&catalog);
    for entry in &datasets {
        let path = entry["path"].as_str().unwrap();
        let key = format!("old-null/{path}");
        s3.upload_dir(&old_dir().join(path), &key).await;
        let url = s3.url(&key);
        let options = s3.storage_options();
        let open = || {
            Dataset::builder(&url)
                .storage_options(options.clone())
                .open()
        };
        let (n, b) = fresh_mismatches(entry, open).await;
        asked += n;
        bad.extend(b);
    }
    assert!(asked >= 17 * 10, "only {asked} filters");
    assert!(
        bad.is_empty(),
        "{} mismatches over S3:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
