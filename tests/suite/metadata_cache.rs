//! The file metadata cache: one entry per path + size serves opens with and without a size
//! hint, and the etag it remembers keeps a same-size replacement from mixing versions.

use std::sync::Arc;

use crate::io::{is_object_changed, FetchOptions, IoStats, RangeFetcher};
use crate::lance::reader::{LanceFileReader, ReaderCaches, RowSelection};

use crate::suite::common::S3TestServer;
use crate::suite::read_support::fixtures_dir;

const FILE: &str = "v2_1/multipage.lance";

async fn open(
    s3: &S3TestServer,
    key: &str,
    size_hint: Option<u64>,
    caches: &Arc<ReaderCaches>,
    stats: &IoStats,
) -> crate::Result<LanceFileReader> {
    let opened = s3.open(key);
    let fetcher = RangeFetcher::new(opened.source, FetchOptions::default());
    LanceFileReader::open(fetcher, opened.path, size_hint, Arc::clone(caches), stats).await
}

async fn read_all(reader: &LanceFileReader, stats: &IoStats) -> crate::Result<()> {
    let fields: Vec<usize> = (0..reader.schema().fields.len()).collect();
    let rows = RowSelection::Range(0..reader.num_rows());
    reader.read_rows(&fields, &rows, stats).await.map(|_| ())
}

#[tokio::test]
async fn hinted_and_unhinted_opens_share_one_entry_and_its_etag() {
    let s3 = S3TestServer::start().await;
    let bytes = std::fs::read(fixtures_dir().join(FILE)).unwrap();
    let size = bytes.len() as u64;
    s3.put("m/a.lance", bytes.clone()).await;
    let caches = Arc::new(ReaderCaches::default());

    // An open without a hint reads the suffix (it must learn the version) and fills the cache.
    let stats = IoStats::new();
    let first = open(&s3, "m/a.lance", None, &caches, &stats).await.unwrap();
    assert!(stats.snapshot().requests >= 1);
    let etag = first.version().etag.clone();
    assert!(etag.is_some(), "the S3 server reports etags");

    // An open with the manifest's size hint is served by that entry: no request, the same
    // decoded metadata and the etag it was decoded from.
    let stats = IoStats::new();
    let hinted = open(&s3, "m/a.lance", Some(size), &caches, &stats)
        .await
        .unwrap();
    assert_eq!(stats.snapshot().requests, 0);
    assert!(Arc::ptr_eq(first.metadata(), hinted.metadata()));
    assert_eq!(hinted.version(), first.version());

    // The other order: a cold hinted open fills the entry an unhinted open then uses (its
    // suffix read is needed for the version, nothing more is decoded).
    let other = Arc::new(ReaderCaches::default());
    let cold = open(&s3, "m/a.lance", Some(size), &other, &IoStats::new())
        .await
        .unwrap();
    assert_eq!(cold.version().etag, etag);
    let stats = IoStats::new();
    let unhinted = open(&s3, "m/a.lance", None, &other, &stats).await.unwrap();
    assert!(Arc::ptr_eq(cold.metadata(), unhinted.metadata()));
    assert_eq!(stats.snapshot().requests, 1);
}

#[tokio::test]
async fn a_same_size_replacement_is_caught_by_the_remembered_etag() {
    let s3 = S3TestServer::start().await;
    let bytes = std::fs::read(fixtures_dir().join(FILE)).unwrap();
    let size = bytes.len() as u64;
    s3.put("m/b.lance", bytes.clone()).await;
    // Every read goes to the store here: this small file lies wholly in its suffix read,
    // whose bytes readers otherwise serve from the cache (they are the remembered version's
    // own bytes, consistent with its cached metadata); reads that reach the store are
    // conditional on the etag, which is what this test checks.
    let caches = Arc::new(ReaderCaches::default().without_data_tails());
    let first = open(&s3, "m/b.lance", None, &caches, &IoStats::new())
        .await
        .unwrap();
    read_all(&first, &IoStats::new()).await.unwrap();

    // Same size, one data byte different: only the etag tells the versions apart.
    let mut replaced = bytes.clone();
    replaced[0] ^= 0x01;
    s3.put("m/b.lance", replaced).await;

    // A hinted open is served from the cache without a request, but its reads are
    // conditional on the remembered etag: the replacement is an ObjectChanged error...
    let stats = IoStats::new();
    let stale = open(&s3, "m/b.lance", Some(size), &caches, &stats)
        .await
        .unwrap();
    assert_eq!(stats.snapshot().requests, 0);
    let err = read_all(&stale, &IoStats::new()).await.unwrap_err();
    assert!(is_object_changed(&err), "{err}");
    // ...which also drops the entry, so the next hinted open decodes the new version.
    let stats = IoStats::new();
    let fresh = open(&s3, "m/b.lance", Some(size), &caches, &stats)
        .await
        .unwrap();
    assert!(stats.snapshot().requests >= 1);
    assert_ne!(fresh.version().etag, first.version().etag);
    assert!(!Arc::ptr_eq(fresh.metadata(), first.metadata()));
    let after = read_all(&fresh, &IoStats::new()).await;
    assert!(
        after
            .as_ref()
            .map_or_else(|e| !is_object_changed(e), |_| true),
        "{after:?}"
    );

    // An unhinted open compares the suffix read's etag with the entry's and reloads.
    s3.put("m/b.lance", bytes).await;
    let reopened = open(&s3, "m/b.lance", None, &caches, &IoStats::new())
        .await
        .unwrap();
    assert_eq!(reopened.version().etag, first.version().etag);
    assert!(!Arc::ptr_eq(reopened.metadata(), fresh.metadata()));
    read_all(&reopened, &IoStats::new()).await.unwrap();
}
