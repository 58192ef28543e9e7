//! What a cold take of one blob costs (issue 35's single-blob goal), over the in-process S3
//! server: pylance 14.0.2's 6,000-row datasets of `tests/fixtures/blobs/many/` (2.2 blob v2
//! packed, 2.1 blob v1), whose data files are larger than the default 64 KiB suffix read
//! and whose descriptor pages do not end at the metadata — like the rig's 10,000-image
//! datasets. Counts, not times; one thread, so requests issued together always overlap
//! and count as one round trip however busy the machine.

use std::path::PathBuf;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::suite::common::S3TestServer;
use crate::{Dataset, IoStats, Session};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/blobs/many")
}

fn answers() -> Value {
    let text = std::fs::read_to_string(dir().join("answers.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Bytes a cold take of one blob may read besides the blob, once the dataset is open: the
/// data file's suffix read sized for its metadata (4 KiB for two fields), the descriptor's
/// repetition index entries (v2) or the chunk table (v1), and the guessed window holding
/// the descriptor (a few hundred bytes, v2; about one 4 KiB mini-block chunk, v1). The
/// default 64 KiB suffix read alone, or the v2 page's 24 KB repetition index, exceeds it.
const TAKE_OVERHEAD_BYTES: u64 = 10 << 10;

/// The same for the whole cold take, the open included (version hint and manifest).
const COLD_OVERHEAD_BYTES: u64 = 12 << 10;

#[tokio::test(flavor = "current_thread")]
async fn a_cold_take_of_one_blob_reads_little_besides_the_blob_over_s3() {
    let s3 = S3TestServer::start().await;
    let answers = answers();
    for name in ["v22", "v21"] {
        let key = format!("blobs-many/{name}");
        s3.upload_dir(&dir().join(name), &key).await;
        for row in answers["datasets"][name]["rows"].as_array().unwrap() {
            let address = row["address"].as_u64().unwrap();
            let size = row["size"].as_u64().unwrap();
            let (open_stats, take_stats) = (IoStats::new(), IoStats::new());
            let mut builder = Dataset::builder(&s3.url(&key))
                .session(&Session::default())
                .stats(&open_stats);
            for (k, v) in s3.storage_options() {
                builder = builder.storage_option(k, v);
            }
            let ds = builder.open().await.unwrap();
            let blobs = ds
                .with_stats(&take_stats)
                .read_blobs("img", &[address])
                .await
                .unwrap();
            let blob = blobs[0].as_ref().expect("a non-null blob");
            let digest: String = Sha256::digest(blob)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            assert_eq!(digest, row["sha256"].as_str().unwrap(), "{name} {address}");
            let (open, take) = (open_stats.snapshot(), take_stats.snapshot());
            let what = format!("{name} row {address}: open {open:?}, take {take:?}");
            assert!(take.bytes <= size + TAKE_OVERHEAD_BYTES, "{what}");
            assert!(
                open.bytes + take.bytes <= size + COLD_OVERHEAD_BYTES,
                "{what}"
            );
            // Suffix read, then the descriptor's entries (or chunk table) together with
            // where it probably is, then the blob: the guess held the descriptor.
            assert!(take.round_trips <= 3, "{what}");
        }
    }
}

/// A warm take of one blob (dataset open, file metadata cached): the descriptor's entries
/// and its guessed place in one wave, then the blob — two round trips, and no more bytes
/// than the cold take's page reads.
#[tokio::test(flavor = "current_thread")]
async fn a_warm_take_of_one_blob_is_two_round_trips_over_s3() {
    let s3 = S3TestServer::start().await;
    let answers = answers();
    for name in ["v22", "v21"] {
        let key = format!("blobs-many/{name}");
        s3.upload_dir(&dir().join(name), &key).await;
        let mut builder = Dataset::builder(&s3.url(&key)).session(&Session::default());
        for (k, v) in s3.storage_options() {
            builder = builder.storage_option(k, v);
        }
        let ds = builder.open().await.unwrap();
        let rows = answers["datasets"][name]["rows"].as_array().unwrap();
        let first = rows[0]["address"].as_u64().unwrap();
        ds.read_blobs("img", &[first]).await.unwrap();
        for row in &rows[1..] {
            let address = row["address"].as_u64().unwrap();
            let size = row["size"].as_u64().unwrap();
            let stats = IoStats::new();
            let blobs = ds
                .with_stats(&stats)
                .read_blobs("img", &[address])
                .await
                .unwrap();
            assert_eq!(blobs[0].as_ref().unwrap().len() as u64, size);
            let s = stats.snapshot();
            assert!(s.round_trips <= 2, "{name} row {address}: {s:?}");
            assert!(s.bytes <= size + (6 << 10), "{name} row {address}: {s:?}");
        }
    }
}
