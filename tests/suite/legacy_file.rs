//! Legacy v1 data files on their own (`lakeseek read` / `inspect`, `LanceFile`), truncated
//! and garbled legacy files (clear errors, no panic), and legacy datasets over the
//! in-process S3 server.

use crate::suite::common;
use crate::suite::legacy_dataset::{check_dataset, dir, oracle, LABELS, NAMES};

use std::path::PathBuf;

use crate::cli::file_commands::{run_inspect, run_read, InspectArgs, ReadArgs};
use crate::cli::StoreArgs;
use crate::{Dataset, Error, LanceFile};
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use common::S3TestServer;

/// The data file of fragment 0 (rows 0..64) of the 0.17 `flat` dataset: self-describing.
fn flat_data_file(label: &str) -> PathBuf {
    let data = dir().join(label).join("flat.lance/data");
    let mut files: Vec<PathBuf> = std::fs::read_dir(data)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    // The 64-row file (fragment 0) is the largest.
    files.sort_by_key(|f| std::cmp::Reverse(std::fs::metadata(f).unwrap().len()));
    files.remove(0)
}

/// `i64` of rows `rows` as pylance reads them (fragment 0 keeps offsets = rows).
fn oracle_i64(label: &str, rows: &[u64]) -> Vec<i64> {
    let want = oracle(label, "flat");
    let addr = want
        .column_by_name("_rowaddr")
        .unwrap()
        .as_primitive::<arrow_array::types::UInt64Type>()
        .clone();
    let values = want
        .column_by_name("i64")
        .unwrap()
        .as_primitive::<Int64Type>()
        .clone();
    rows.iter()
        .map(|r| {
            let at = addr
                .values()
                .iter()
                .position(|a| a == r)
                .expect("row in oracle");
            values.value(at)
        })
        .collect()
}

#[tokio::test]
async fn a_legacy_data_file_opens_as_a_lance_file() {
    for label in LABELS {
        let path = flat_data_file(label);
        let file = LanceFile::open(path.to_str().unwrap()).await.expect("open");
        assert_eq!(file.num_rows(), 64, "{label}");
        let rows = [63, 2, 17, 2, 40];
        let batch = file.take(&["i64", "s", "b"], &rows).await.expect("take");
        let got: Vec<i64> = batch
            .column(0)
            .as_primitive::<Int64Type>()
            .values()
            .to_vec();
        // Rows 4 and 15 are deleted in the dataset; these are not.
        assert_eq!(got, oracle_i64(label, &rows), "{label}");
        let range = file.read_range(&["ls"], 10..30).await.expect("range");
        assert_eq!(range.num_rows(), 20);
        assert_eq!(range.column(0).as_string::<i64>().value(0), "large-10");
    }
}

#[tokio::test]
async fn read_and_inspect_print_a_legacy_file() {
    let path = flat_data_file("v0_17");
    let url = path.to_str().unwrap().to_string();
    let mut out = Vec::new();
    let args = ReadArgs {
        url: url.clone(),
        columns: vec!["i64".into(), "s".into()],
        rows: "3,1".into(),
        store: StoreArgs::default(),
    };
    run_read(&args, &mut out).await.expect("read");
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].contains("\"i64\":-29"), "{text}");
    assert!(lines[1].contains("\"s\":\"s001\""), "{text}");
    let mut out = Vec::new();
    let args = InspectArgs {
        url,
        json: true,
        plans: false,
        store: StoreArgs::default(),
    };
    run_inspect(&args, &mut out).await.expect("inspect");
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(doc["version"], "0.2 (legacy v1)");
    assert_eq!(doc["num_rows"], 64);
    assert_eq!(doc["fields"].as_array().unwrap().len(), 12);
    let s = doc["columns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["field"] == "s")
        .unwrap();
    assert_eq!(
        s["pages"].as_array().unwrap().len(),
        4,
        "four 16-row batches"
    );
    assert_eq!(s["pages"][1]["layout"], "legacy var-binary");
}

async fn open_bytes(bytes: Vec<u8>) -> crate::Result<LanceFile> {
    let store = std::sync::Arc::new(object_store::memory::InMemory::new());
    let path = object_store::path::Path::from("t/x.lance");
    object_store::ObjectStoreExt::put(store.as_ref(), &path, bytes.into())
        .await
        .unwrap();
    LanceFile::builder("memory:///t/x.lance")
        .object_store(store)
        .open()
        .await
}

async fn read_all(file: &LanceFile) -> crate::Result<()> {
    let names: Vec<String> = file
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let n = file.num_rows();
    file.read_range(&names, 0..n).await?;
    Ok(())
}

#[tokio::test]
async fn truncated_and_garbled_legacy_files_are_clear_errors() {
    let bytes = std::fs::read(flat_data_file("v0_17")).unwrap();
    // Truncated: the footer is gone, or the metadata points past the end.
    for keep in [0, 10, 100, bytes.len() / 2, bytes.len() - 1] {
        let err = open_bytes(bytes[..keep].to_vec())
            .await
            .expect_err("truncated");
        assert!(matches!(err, Error::Corrupt { .. }), "{keep} bytes: {err}");
    }
    // The metadata position past the metadata.
    let mut bad = bytes.clone();
    let n = bad.len();
    bad[n - 16..n - 8].copy_from_slice(&(n as u64).to_le_bytes());
    let err = open_bytes(bad).await.expect_err("bad position");
    assert!(err.to_string().contains("metadata position"), "{err}");
    // Garbled page table: a page far outside the data region.
    let file = open_bytes(bytes.clone()).await.expect("intact file opens");
    read_all(&file).await.expect("intact file reads");
    let (table_start, meta) = {
        let m = u64::from_le_bytes(bytes[n - 16..n - 8].try_into().unwrap()) as usize;
        let len = u32::from_le_bytes(bytes[m..m + 4].try_into().unwrap()) as usize;
        let meta =
            crate::lance::legacy::format::parse_metadata(&bytes[m + 4..m + 4 + len], m as u64)
                .unwrap();
        (meta.page_table_position as usize, m)
    };
    // Field 0's first page moved to 4 bytes before the metadata: its 16 values run past.
    let mut bad = bytes.clone();
    bad[table_start..table_start + 8].copy_from_slice(&(meta as u64 - 4).to_le_bytes());
    let file = open_bytes(bad)
        .await
        .expect("a page position is checked when read");
    let err = read_all(&file).await.expect_err("page runs past the data");
    assert!(matches!(err, Error::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains("x.lance"), "names the file: {err}");
    // Garbled page length: more values than the page has bytes before the metadata.
    let mut bad = bytes.clone();
    bad[table_start + 8..table_start + 16].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let file = open_bytes(bad).await.expect("opens");
    let err = file
        .read_range(&["i64"], 0..64)
        .await
        .expect_err("garbled length");
    assert!(matches!(err, Error::Corrupt { .. }), "{err}");
}

#[tokio::test]
async fn legacy_datasets_read_the_same_over_s3() {
    let s3 = S3TestServer::start().await;
    for label in LABELS {
        for name in NAMES {
            let key = format!("legacy/{label}/{name}.lance");
            s3.upload_dir(&dir().join(label).join(format!("{name}.lance")), &key)
                .await;
            let mut builder = Dataset::builder(&s3.url(&key));
            for (k, v) in s3.storage_options() {
                builder = builder.storage_option(k, v);
            }
            let ds = builder.open().await.expect("open over s3");
            check_dataset(&ds, label, name).await;
        }
    }
}

/// A cold open of a legacy file is one suffix read, whose footer picks the legacy reader
/// (no second read by a v2 attempt); a file smaller than that read is then taken from it
/// without another request. A larger legacy file costs its suffix read and then only the
/// ranges of the rows asked.
#[tokio::test]
async fn a_cold_legacy_open_is_one_suffix_read() {
    for label in LABELS {
        let path = flat_data_file(label);
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(
            size < 64 * 1024,
            "{label}: the fixture fits one suffix read"
        );
        let stats = crate::IoStats::new();
        let file = LanceFile::builder(path.to_str().unwrap())
            .stats(&stats)
            .open()
            .await
            .expect("open");
        let batch = file.take(&["i64", "s"], &[63, 2]).await.expect("take");
        assert_eq!(batch.num_rows(), 2);
        let s = stats.snapshot();
        assert_eq!((s.requests, s.bytes), (1, size), "{label}: {s:?}");
    }
}
