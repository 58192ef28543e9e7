//! The same I/O checks as `io_s3.rs`, against an S3 server running outside the test process
//! (moto, LocalStack or the s3s-fs binary from `localstack/start-s3.sh`), to confirm what
//! object_store does on the wire against other implementations. Opt-in:
//!
//! ```sh
//! PID=$(S3_PORT=14566 localstack/start-s3.sh)            # moto by default
//! LAKESEEK_S3_ENDPOINT=http://127.0.0.1:14566 cargo test --lib suite::io_s3_external::
//! localstack/stop.sh s3
//! ```
//! Without `LAKESEEK_S3_ENDPOINT` the test prints SKIPPED and passes (the in-process suite in
//! `io_s3.rs` always runs).

use crate::suite::common;

use std::sync::Arc;

use crate::io::wrappers::CountingConnector;
use crate::io::{open_url_with, FetchOptions, IoStats, OpenOptions, RangeFetcher, ReadRequest};
use crate::Error;
use common::pattern;
use object_store::{ObjectStoreExt, PutPayload};

#[tokio::test]
async fn external_s3_server_behaves_as_the_io_layer_expects() {
    let Ok(endpoint) = std::env::var("LAKESEEK_S3_ENDPOINT") else {
        eprintln!(
            "SKIPPED: set LAKESEEK_S3_ENDPOINT (see localstack/start-s3.sh) to run this test"
        );
        return;
    };
    let bucket = std::env::var("LAKESEEK_S3_BUCKET").unwrap_or_else(|_| "test-bucket".into());
    let options: Vec<(String, String)> = [
        ("aws_endpoint", endpoint.as_str()),
        ("allow_http", "true"),
        ("aws_access_key_id", "test"),
        ("aws_secret_access_key", "test"),
        ("aws_region", "us-east-1"),
        ("max_retries", "1"),
        ("retry_timeout_secs", "5"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let counting = CountingConnector::new();
    let open = |key: &str| {
        let opts = OpenOptions::new(&options).with_http_connector(Arc::new(counting.clone()));
        open_url_with(&format!("s3://{bucket}/{key}"), &opts).unwrap()
    };
    const SIZE: usize = 1_000_003;
    let data = pattern(SIZE);
    let opened = open("lakeseek-io-check/obj.bin");
    opened
        .store
        .put(&opened.path, PutPayload::from(data.clone()))
        .await
        .unwrap();
    let f = RangeFetcher::new(Arc::clone(&opened.source), FetchOptions::default());
    let stats = IoStats::new();

    let before = counting.snapshot();
    let tail = f.tail(&opened.path, 1000, &stats).await.unwrap();
    let http = counting.snapshot().since(&before);
    assert_eq!((http.requests, http.gets, http.heads), (1, 1, 0));
    assert_eq!(tail.version.size, SIZE as u64);
    assert_eq!(tail.bytes.as_ref(), &data[SIZE - 1000..]);

    let before = counting.snapshot();
    let all = f.tail(&opened.path, 2 * SIZE as u64, &stats).await.unwrap();
    assert_eq!(counting.snapshot().since(&before).requests, 1);
    assert!(
        all.is_whole_object(),
        "suffix longer than the object returns all of it"
    );

    let requests: Vec<ReadRequest> = (0..20u64)
        .map(|i| {
            ReadRequest::sized(
                opened.path.clone(),
                i * 45_000..i * 45_000 + 777,
                SIZE as u64,
            )
        })
        .collect();
    let plan = f.plan(&requests).unwrap();
    let before = counting.snapshot();
    let stats = IoStats::new();
    let out = f.fetch(&requests, &stats).await.unwrap();
    let http = counting.snapshot().since(&before);
    for (r, b) in requests.iter().zip(&out) {
        assert_eq!(
            b.as_ref(),
            &data[r.range.start as usize..r.range.end as usize]
        );
    }
    assert_eq!(
        (http.requests, stats.snapshot().requests),
        (plan.len() as u64, plan.len() as u64)
    );
    assert_eq!(http.bytes_in, stats.snapshot().bytes);

    let past = ReadRequest::new(opened.path.clone(), SIZE as u64 + 5..SIZE as u64 + 9);
    assert!(matches!(
        f.fetch(&[past], &stats).await,
        Err(Error::Store { .. })
    ));
    let missing = open("lakeseek-io-check/missing.bin");
    let err = f.tail(&missing.path, 10, &stats).await.unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
    opened.store.delete(&opened.path).await.unwrap();
}
