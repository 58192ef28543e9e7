//! Blob columns (issue 35): pylance 14.0.2's fixtures (`tests/fixtures/blobs/`, a 2.2 blob v2
//! dataset with inline, packed and dedicated blobs, and the same rows as blob v1 in 2.1 and
//! 2.0), read locally and over the in-process S3 server, against pylance's `take_blobs`
//! answers; the bytes a blob read costs; bad input.

use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::Array;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncSeekExt};

use crate::suite::common::S3TestServer;
use crate::{Dataset, Error, IoStats, Session};

const NAMES: [&str; 3] = ["v22", "v21", "v20"];

/// This crate's `tests/fixtures/blobs` (not `lakeseek_testing::fixture`: that path is fixed
/// when the helper crate is compiled, by whichever checkout compiled it in a shared target
/// directory).
fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/blobs")
}

fn answers(name: &str) -> Value {
    let text = std::fs::read_to_string(dir().join("answers.json")).unwrap();
    serde_json::from_str::<Value>(&text).unwrap()["datasets"][name].clone()
}

fn sha(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn live_addresses(doc: &Value) -> Vec<u64> {
    doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["address"].as_u64().unwrap())
        .collect()
}

async fn open_local(name: &str) -> Dataset {
    Dataset::builder(dir().join(name).to_str().unwrap())
        .session(&Session::default())
        .open()
        .await
        .unwrap()
}

/// Every row: `take_blobs` (size, read_all, read_range), `read_blobs`, and the descriptor
/// columns `take` returns, as pylance answered; deleted addresses refused.
async fn check_dataset(ds: &Dataset, name: &str) {
    let doc = answers(name);
    let rows = doc["rows"].as_array().unwrap();
    let addresses = live_addresses(&doc);
    let handles = ds.take_blobs("img", &addresses).await.unwrap();
    let all = ds.read_blobs("img", &addresses).await.unwrap();
    assert_eq!(handles.len(), rows.len());
    let mut non_null = 0;
    for ((row, handle), bytes) in rows.iter().zip(&handles).zip(&all) {
        let address = row["address"].as_u64().unwrap();
        let expected = &row["blob"];
        match handle {
            None => {
                assert!(
                    expected.is_null(),
                    "{name} {address}: null, pylance: {expected}"
                );
                assert!(bytes.is_none());
            }
            Some(h) => {
                non_null += 1;
                assert_eq!(
                    h.size(),
                    expected["size"].as_u64().unwrap(),
                    "{name} {address}"
                );
                let data = h.read_all().await.unwrap();
                assert_eq!(sha(&data), expected["sha256"], "{name} {address}");
                assert_eq!(
                    sha(bytes.as_ref().unwrap()),
                    expected["sha256"],
                    "{name} {address}"
                );
                let range = &expected["range"];
                let (lo, hi) = (range[0].as_u64().unwrap(), range[1].as_u64().unwrap());
                let part = h.read_range(lo..hi).await.unwrap();
                assert_eq!(sha(&part), expected["range_sha256"], "{name} {address}");
            }
        }
    }
    assert!(non_null > 10, "{name}: only {non_null} non-null blobs");
    check_descriptors(ds, name, &doc, &addresses).await;
    for deleted in doc["deleted"].as_array().unwrap() {
        let a = deleted.as_u64().unwrap();
        let err = ds.take_blobs("img", &[addresses[0], a]).await.unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
        assert!(err.to_string().contains("deleted"), "{err}");
    }
}

/// `take` of the blob column returns pylance's descriptor struct, field by field.
async fn check_descriptors(ds: &Dataset, name: &str, doc: &Value, addresses: &[u64]) {
    let batch = ds.take(addresses, &["img"]).await.unwrap();
    let column = batch.column(1).as_struct();
    for (i, row) in doc["rows"].as_array().unwrap().iter().enumerate() {
        let expected = &row["descriptor"];
        if expected.is_null() {
            assert!(column.is_null(i), "{name} row {i}: pylance says null");
            continue;
        }
        assert!(column.is_valid(i), "{name} row {i}");
        for (field, child) in column.fields().iter().zip(column.columns()) {
            let got: Value = match child.data_type() {
                arrow_schema::DataType::Utf8 => child.as_string::<i32>().value(i).into(),
                _ => {
                    let v = arrow_cast::cast(child, &arrow_schema::DataType::UInt64).unwrap();
                    v.as_primitive::<arrow_array::types::UInt64Type>()
                        .value(i)
                        .into()
                }
            };
            assert_eq!(
                got,
                expected[field.name()],
                "{name} row {i} {}",
                field.name()
            );
        }
        let names: Vec<&str> = column.fields().iter().map(|f| f.name().as_str()).collect();
        let keys: Vec<&str> = expected
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(names.len(), keys.len(), "{name}: {names:?} vs {keys:?}");
    }
}

#[tokio::test]
async fn blob_columns_match_pylance_locally() {
    for name in NAMES {
        let ds = open_local(name).await;
        check_dataset(&ds, name).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blob_columns_match_pylance_over_s3() {
    let s3 = S3TestServer::start().await;
    for name in NAMES {
        let key = format!("blobs/{name}");
        s3.upload_dir(&dir().join(name), &key).await;
        let mut builder = Dataset::builder(&s3.url(&key));
        for (k, v) in s3.storage_options() {
            builder = builder.storage_option(k, v);
        }
        let ds = builder.open().await.expect("open over s3");
        check_dataset(&ds, name).await;
    }
}

/// The 2.2 fixture holds every blob v2 kind pylance writes: inline (0), packed (1),
/// dedicated (2) — so the tests above cover each.
#[test]
fn the_v2_fixture_has_inline_packed_and_dedicated_blobs() {
    let doc = answers("v22");
    let kinds: std::collections::BTreeSet<u64> = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["descriptor"]["kind"].as_u64())
        .collect();
    assert_eq!(kinds, [0, 1, 2].into_iter().collect());
}

/// A blob read costs about the blobs' own bytes: reading the blobs of many rows costs at
/// most the descriptor take (measured alone, same cold state) plus 1.05 × the blobs' bytes.
#[tokio::test]
async fn a_blob_take_reads_about_the_blobs_bytes() {
    for name in NAMES {
        let doc = answers(name);
        let addresses = live_addresses(&doc);
        let blob_bytes: u64 = doc["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["blob"]["size"].as_u64())
            .sum();
        let descriptors = IoStats::new();
        open_local(name)
            .await
            .with_stats(&descriptors)
            .take(&addresses, &["img"])
            .await
            .unwrap();
        let total = IoStats::new();
        let blobs = open_local(name)
            .await
            .with_stats(&total)
            .read_blobs("img", &addresses)
            .await
            .unwrap();
        let read: u64 = blobs.iter().flatten().map(|b| b.len() as u64).sum();
        assert_eq!(read, blob_bytes);
        let (d, t) = (descriptors.snapshot(), total.snapshot());
        let bound = d.bytes + blob_bytes + blob_bytes / 20;
        assert!(
            t.bytes >= blob_bytes && t.bytes <= bound,
            "{name}: {} bytes read for {blob_bytes} blob bytes + {} descriptor bytes",
            t.bytes,
            d.bytes
        );
    }
}

/// Over S3, the small blobs of one take share requests (the fetcher merges close ranges):
/// fewer requests than blobs, and still about the blobs' bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_blobs_of_one_take_share_requests_over_s3() {
    let s3 = S3TestServer::start().await;
    for name in NAMES {
        let key = format!("blobs/{name}");
        s3.upload_dir(&dir().join(name), &key).await;
        let open = || async {
            let mut builder = Dataset::builder(&s3.url(&key)).session(&Session::default());
            for (k, v) in s3.storage_options() {
                builder = builder.storage_option(k, v);
            }
            builder.open().await.unwrap()
        };
        let doc = answers(name);
        let addresses = live_addresses(&doc);
        let (descriptors, total) = (IoStats::new(), IoStats::new());
        open()
            .await
            .with_stats(&descriptors)
            .take(&addresses, &["img"])
            .await
            .unwrap();
        let blobs = open()
            .await
            .with_stats(&total)
            .read_blobs("img", &addresses)
            .await
            .unwrap();
        let blob_bytes: u64 = blobs.iter().flatten().map(|b| b.len() as u64).sum();
        let blobs_read = blobs.iter().flatten().filter(|b| !b.is_empty()).count() as u64;
        let (d, t) = (descriptors.snapshot(), total.snapshot());
        assert!(
            t.requests - d.requests < blobs_read,
            "{name}: {} requests for {blobs_read} blobs",
            t.requests - d.requests
        );
        assert!(
            t.bytes <= d.bytes + blob_bytes + blob_bytes / 20,
            "{name}: {} bytes for {blob_bytes} blob bytes + {} descriptor bytes",
            t.bytes,
            d.bytes
        );
    }
}

/// The streaming reader reads a blob in bounded ranges, seeks, and matches `read_all`.
#[tokio::test]
async fn the_blob_reader_streams_and_seeks() {
    let ds = open_local("v22").await;
    let doc = answers("v22");
    let (address, size) = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| Some((r["address"].as_u64()?, r["blob"]["size"].as_u64()?)))
        .max_by_key(|(_, s)| *s)
        .unwrap();
    let handle = ds.take_blobs("img", &[address]).await.unwrap()[0]
        .clone()
        .unwrap();
    let whole = handle.read_all().await.unwrap();
    let mut reader = handle.reader_with_buffer(4096);
    let mut streamed = Vec::new();
    let mut chunk = vec![0u8; 3000];
    loop {
        let n = reader.read(&mut chunk).await.unwrap();
        assert!(reader.buffered_bytes() <= 4096);
        if n == 0 {
            break;
        }
        streamed.extend_from_slice(&chunk[..n]);
    }
    assert_eq!(streamed.len() as u64, size);
    assert_eq!(streamed, whole.as_ref());
    let at = reader
        .seek(std::io::SeekFrom::Start(size / 2))
        .await
        .unwrap();
    assert_eq!(at, size / 2);
    let mut part = vec![0u8; 100];
    reader.read_exact(&mut part).await.unwrap();
    assert_eq!(part, whole[(size / 2) as usize..(size / 2 + 100) as usize]);
    let end = reader.seek(std::io::SeekFrom::End(0)).await.unwrap();
    assert_eq!(end, size);
    assert_eq!(reader.read(&mut part).await.unwrap(), 0);
    assert!(reader
        .seek(std::io::SeekFrom::Current(-(size as i64) - 1))
        .await
        .is_err());
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A dedicated blob file shorter than its descriptor says: `Corrupt` naming the `.blob`
/// file, not a short or padded read.
#[tokio::test]
async fn a_truncated_blob_file_is_corrupt_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("v22");
    copy_dir(&dir().join("v22"), &root);
    let doc = answers("v22");
    let row = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["descriptor"]["kind"] == 2)
        .unwrap()
        .clone();
    let ds = Dataset::open(root.to_str().unwrap()).await.unwrap();
    let handle = ds
        .take_blobs("img", &[row["address"].as_u64().unwrap()])
        .await
        .unwrap()[0]
        .clone()
        .unwrap();
    assert!(
        handle.object_path().ends_with(".blob"),
        "{}",
        handle.object_path()
    );
    let file = root.join(handle.object_path().rsplit_once("v22/").unwrap().1);
    let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    f.set_len(handle.size() / 2).unwrap();
    drop(f);
    let err = handle.read_all().await.unwrap_err();
    match &err {
        Error::Corrupt { path, .. } => assert!(path.ends_with(".blob"), "{err}"),
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

/// A column that is not a blob column, or no column at all: `InvalidArgument`.
#[tokio::test]
async fn take_blobs_of_other_columns_is_refused() {
    let ds = open_local("v22").await;
    for column in ["id", "nope"] {
        let err = ds.take_blobs(column, &[0]).await.unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    }
}

/// `lakeseek blob` writes `DIR/<row address>` per non-null blob (pylance's bytes) and prints
/// one JSON line per row with its size; `take` of the column prints descriptors, not bytes.
#[cfg(feature = "cli")]
#[tokio::test]
async fn the_blob_command_writes_pylances_bytes() {
    use clap::Parser;
    #[derive(Parser)]
    struct Wrap {
        #[command(flatten)]
        args: crate::cli::blob::BlobArgs,
    }
    let doc = answers("v22");
    let addresses = live_addresses(&doc);
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("out");
    let rows: Vec<String> = addresses.iter().map(u64::to_string).collect();
    let wrap = Wrap::parse_from([
        "blob",
        dir().join("v22").to_str().unwrap(),
        "--column",
        "img",
        "--rows",
        &rows.join(","),
        "--out",
        out_dir.to_str().unwrap(),
        "--stats",
    ]);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    crate::cli::blob::run_blob_to(&wrap.args, &mut out, &mut err)
        .await
        .unwrap();
    let lines: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), addresses.len());
    for (line, row) in lines.iter().zip(doc["rows"].as_array().unwrap()) {
        let address = row["address"].as_u64().unwrap();
        assert_eq!(line["_rowaddr"], address);
        let file = out_dir.join(address.to_string());
        if row["blob"].is_null() {
            assert!(line["size"].is_null());
            assert!(!file.exists());
        } else {
            assert_eq!(line["size"], row["blob"]["size"]);
            assert_eq!(sha(&std::fs::read(&file).unwrap()), row["blob"]["sha256"]);
        }
    }
    let stats: Value = serde_json::from_slice(&err).unwrap();
    assert!(stats["bytes"].as_u64().unwrap() > 0);
}
