//! The I/O layer over the GCS JSON/XML protocol against fake-gcs-server (reads only; the
//! data is seeded from a directory). Needs `localstack/install.sh gcs`; without it these tests
//! print SKIPPED, or fail when LAKESEEK_REQUIRE_EMULATORS=1 (as CI sets it).

use crate::suite::common;

use crate::io::{FetchOptions, IoStats, RangeFetcher, ReadRequest};
use crate::Error;
use common::{pattern, GcsTestServer};

const BUCKET: &str = "lake-bucket";
const SIZE: usize = 700_001;

fn seed() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(BUCKET).join("ds/data")).unwrap();
    std::fs::write(
        dir.path().join(BUCKET).join("ds/data/file.lance"),
        pattern(SIZE),
    )
    .unwrap();
    std::fs::write(dir.path().join(BUCKET).join("small.bin"), b"tiny").unwrap();
    dir
}

#[tokio::test]
async fn gcs_tail_ranges_and_counts() {
    let seed = seed();
    let Some(gcs) = GcsTestServer::start(seed.path()).await else {
        return;
    };
    let data = pattern(SIZE);
    let opened = gcs.open(BUCKET, "ds/data/file.lance");
    assert_eq!(opened.path.as_ref(), "ds/data/file.lance");
    let options = FetchOptions {
        coalesce_gap: Some(10_000),
        max_merged_bytes: 1 << 20,
        max_concurrency: 4,
    };
    let f = RangeFetcher::new(opened.source, options);
    let stats = IoStats::new();

    // Tail: one GET, size from Content-Range, no HEAD.
    let before = gcs.http_counts();
    let tail = f.tail(&opened.path, 8192, &stats).await.unwrap();
    let http = gcs.http_counts().since(&before);
    assert_eq!((http.requests, http.gets, http.heads), (1, 1, 0));
    assert_eq!(tail.version.size, SIZE as u64);
    assert_eq!(tail.bytes.as_ref(), &data[SIZE - 8192..]);
    assert_eq!(http.bytes_in, 8192);

    // Many ranges: merged requests and bytes agree with the wire.
    let requests: Vec<ReadRequest> = (0..30u64)
        .map(|i| {
            let start = (i / 3) * 60_000 + (i % 3) * 4_000;
            ReadRequest::sized(opened.path.clone(), start..start + 500 + i, SIZE as u64)
        })
        .collect();
    let plan = f.plan(&requests).unwrap();
    let before = gcs.http_counts();
    let stats = IoStats::new();
    let out = f.fetch(&requests, &stats).await.unwrap();
    let http = gcs.http_counts().since(&before);
    for (r, b) in requests.iter().zip(&out) {
        assert_eq!(
            b.as_ref(),
            &data[r.range.start as usize..r.range.end as usize]
        );
    }
    assert_eq!(stats.snapshot().requests, plan.len() as u64);
    assert_eq!(http.requests, plan.len() as u64);
    assert_eq!(http.bytes_in, stats.snapshot().bytes);
    assert!(http.max_in_flight <= 4);

    // Past EOF with a known size: nothing sent.
    let before = gcs.http_counts();
    let bad = ReadRequest::sized(
        opened.path.clone(),
        SIZE as u64 - 1..SIZE as u64 + 1,
        SIZE as u64,
    );
    assert!(matches!(
        f.fetch(&[bad], &stats).await,
        Err(Error::Corrupt { .. })
    ));
    assert_eq!(gcs.http_counts().since(&before).requests, 0);
}

#[tokio::test]
async fn gcs_small_objects_missing_objects_and_retries() {
    let seed = seed();
    let Some(gcs) = GcsTestServer::start(seed.path()).await else {
        return;
    };
    let stats = IoStats::new();

    let small = gcs.open(BUCKET, "small.bin");
    let f = RangeFetcher::new(small.source, FetchOptions::default());
    let tail = f.tail(&small.path, 64 * 1024, &stats).await.unwrap();
    assert!(tail.is_whole_object());
    assert_eq!((tail.bytes.as_ref(), tail.version.size), (&b"tiny"[..], 4));

    let missing = gcs.open(BUCKET, "nope.lance");
    let f = RangeFetcher::new(missing.source, FetchOptions::default());
    let err = f.tail(&missing.path, 10, &stats).await.unwrap_err();
    assert!(
        matches!(err, Error::NotFound { ref path, .. } if path == "nope.lance"),
        "{err}"
    );

    // A 503 injected at the HTTP layer is retried.
    let opened = gcs.open(BUCKET, "ds/data/file.lance");
    let f = RangeFetcher::new(opened.source, FetchOptions::default());
    let before = gcs.http_counts();
    gcs.counting()
        .fail_next_requests(1, http::StatusCode::SERVICE_UNAVAILABLE);
    let got = f
        .fetch(&[ReadRequest::new(opened.path.clone(), 10..20)], &stats)
        .await
        .unwrap();
    assert_eq!(got[0].as_ref(), &pattern(SIZE)[10..20]);
    let http = gcs.http_counts().since(&before);
    assert_eq!((http.requests, http.injected_faults), (2, 1));
}
