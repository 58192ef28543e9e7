//! Scalar indices of old datasets whose BTree files are legacy Lance v1 files (pylance
//! <= 0.18.2 wrote them so, on 2.0 datasets too), and the `values`/`row_ids` page-data
//! layout of pylance 0.25: filters are answered from the index (explain shows the legacy
//! page-data file and its page ranges), and truncated or garbled legacy index files are
//! clear errors naming the file.

use crate::suite::common::copy_dir;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::Dataset;

fn old_dir() -> PathBuf {
    crate::suite::common::fixture("datasets/old")
}

/// Every object under `v` with key `key` (depth first).
fn find_all<'a>(v: &'a Value, key: &str, out: &mut Vec<&'a Value>) {
    match v {
        Value::Object(m) => {
            if let Some(x) = m.get(key) {
                out.push(x);
            }
            m.values().for_each(|x| find_all(x, key, out));
        }
        Value::Array(a) => a.iter().for_each(|x| find_all(x, key, out)),
        _ => {}
    }
}

async fn explain(dataset: &str, filter: &str) -> Value {
    let path = old_dir().join(format!("{dataset}.lance"));
    let ds = Dataset::open(path.to_str().unwrap()).await.expect("open");
    ds.query().filter(filter).explain().await.expect("explain")
}

#[tokio::test]
async fn legacy_btree_files_answer_from_the_index() {
    for (dataset, legacy) in [
        ("p0_8_21_legacy", true),
        ("p0_17_0_legacy", true),
        ("p0_18_2_v2_0", true),
        ("p0_25_2_v2_0", false),
    ] {
        let plan = explain(dataset, "id = 17").await;
        let mut flags = Vec::new();
        find_all(&plan, "legacy_v1", &mut flags);
        assert!(!flags.is_empty(), "{dataset}: no BTree page data in {plan}");
        assert!(
            flags.iter().all(|f| f.as_bool() == Some(legacy)),
            "{dataset}: legacy_v1 {flags:?}"
        );
        let mut ranges = Vec::new();
        find_all(&plan, "disk_page_ranges", &mut ranges);
        assert!(
            ranges
                .iter()
                .any(|r| r.as_array().is_some_and(|a| !a.is_empty())),
            "{dataset}: no page ranges in {plan}"
        );
        let ds = Dataset::open(old_dir().join(format!("{dataset}.lance")).to_str().unwrap())
            .await
            .unwrap();
        let rows = ds.filter("id = 17").await.expect("index-only filter");
        assert_eq!(rows.len(), 1, "{dataset}: id = 17");
    }
}

/// The `page_data.lance` files of a dataset copy.
fn page_data_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in std::fs::read_dir(root.join("_indices")).unwrap() {
        let file = dir.unwrap().path().join("page_data.lance");
        if file.is_file() {
            out.push(file);
        }
    }
    out
}

/// A change to a file's bytes.
type Damage = dyn Fn(&[u8]) -> Vec<u8>;

/// A copy of `p0_17_0_legacy` whose BTree page-data files hold `damage(original bytes)`;
/// the error of `id = 17` on it.
async fn damaged_filter_error(damage: &Damage) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("d.lance");
    copy_dir(&old_dir().join("p0_17_0_legacy.lance"), &root);
    let files = page_data_files(&root);
    assert!(!files.is_empty());
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        assert_eq!(&bytes[bytes.len() - 4..], b"LANC");
        std::fs::write(f, damage(&bytes)).unwrap();
    }
    let ds = Dataset::open(root.to_str().unwrap()).await.expect("open");
    let err = ds.filter("id = 17").await.expect_err("damaged index");
    err.to_string()
}

#[tokio::test]
async fn truncated_and_garbled_legacy_index_files_are_clear_errors() {
    let cuts: [&Damage; 4] = [
        &|b| b[..b.len() / 2].to_vec(),
        &|b| b[..10].to_vec(),
        &|b| b[b.len() / 2..].to_vec(),
        // The metadata position (footer bytes 0..8) past the end of the file.
        &|b| {
            let mut v = b.to_vec();
            let n = v.len();
            v[n - 16..n - 8].copy_from_slice(&(u64::MAX / 2).to_le_bytes());
            v
        },
    ];
    for (i, damage) in cuts.iter().enumerate() {
        let err = damaged_filter_error(damage).await;
        assert!(err.contains("corrupt"), "case {i}: {err}");
        assert!(
            err.contains("page_data.lance"),
            "case {i}: names the file: {err}"
        );
    }
}

#[tokio::test]
async fn a_garbled_legacy_page_table_is_a_clear_error() {
    // Every page-table entry of the page-data files pointed far past the data region.
    let err = damaged_filter_error(&|b| {
        let mut v = b.to_vec();
        let n = v.len();
        let meta = u64::from_le_bytes(v[n - 16..n - 8].try_into().unwrap()) as usize;
        let len = u32::from_le_bytes(v[meta..meta + 4].try_into().unwrap()) as usize;
        let m =
            crate::lance::legacy::format::parse_metadata(&v[meta + 4..meta + 4 + len], meta as u64)
                .unwrap();
        let table = m.page_table_position as usize;
        // Two fields (values, ids) x one batch.
        for e in 0..2 {
            let at = table + e * 16;
            v[at..at + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
        }
        v
    })
    .await;
    assert!(err.contains("corrupt"), "{err}");
    assert!(err.contains("page_data.lance"), "names the file: {err}");
}

/// `tests/fixtures/files/legacy/v0_17/pages.lance` (gen_btree_pages.py): 9000 rows, a BTree
/// on `k` whose legacy page-data file holds three pages (4096 values each; batches = pages).
fn pages_dataset() -> PathBuf {
    crate::suite::common::fixture("files/legacy/v0_17")
}

#[tokio::test]
async fn a_multi_page_legacy_btree_reads_only_the_pages_a_query_touches() {
    let dir = pages_dataset();
    let ds = Dataset::open(dir.join("pages.lance").to_str().unwrap())
        .await
        .expect("open");
    let text = std::fs::read_to_string(dir.join("pages.filters.json")).unwrap();
    let oracle: Value = serde_json::from_str(&text).unwrap();
    for q in oracle.as_array().unwrap() {
        let filter = q["filter"].as_str().unwrap();
        let want: Vec<u64> = q["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_u64().unwrap())
            .collect();
        let got = ds.filter(filter).await.expect(filter);
        assert_eq!(got, want, "{filter}");
    }
    // A fresh handle: the first query opens the files (page 2, in the open's suffix read);
    // the second reads page 0 alone (values + ids of 4096 rows), not the file.
    let ds = Dataset::open(dir.join("pages.lance").to_str().unwrap())
        .await
        .expect("open");
    ds.filter("k = 8999").await.expect("k = 8999");
    let plan = ds.query().filter("k = 0").explain().await.expect("explain");
    // The first segment listing (explain shows it under the leaf and again at the top).
    let mut pages = Vec::new();
    find_all(&plan, "pages", &mut pages);
    let selected = pages
        .iter()
        .find_map(|p| p.as_array())
        .expect("selected pages");
    assert_eq!(selected.len(), 1, "one page selected: {plan}");
    assert_eq!(selected[0]["page"], 0, "{plan}");
    let planned: u64 = selected[0]["disk_page_ranges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[1].as_u64().unwrap() - r[0].as_u64().unwrap())
        .sum();
    assert_eq!(planned, 4096 * (4 + 8), "page 0's values and ids: {plan}");
    let stats = crate::io::IoStats::new();
    let result = ds.query().filter("k = 0").stats(&stats).execute().await;
    assert_eq!(result.expect("k = 0").row_addresses, vec![0]);
    // Known gap: index metadata of this era lists no file sizes, so a warm re-open of a
    // legacy index file still pays the v2 reader's 64 KiB suffix probe before the cached
    // legacy decode is found (180 KiB read here, not the 48 KiB page); not asserted yet.
    assert!(stats.snapshot().bytes > 0);
}
