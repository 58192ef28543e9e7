//! The I/O layer over the real S3 HTTP protocol, against an in-process s3s server on
//! 127.0.0.1, with every HTTP request counted by the CountingConnector.

use crate::suite::common;

use std::ops::Range;
use std::sync::Arc;

use crate::io::{FetchOptions, IoStats, RangeFetcher, ReadRequest};
use crate::Error;
use common::{pattern, S3TestServer};
use object_store::path::Path;

const OBJECT: &str = "data/obj.bin";
const SIZE: usize = 2 * 1024 * 1024 + 123;

async fn server_with_object() -> S3TestServer {
    let s3 = S3TestServer::start().await;
    s3.put(OBJECT, pattern(SIZE)).await;
    s3
}

fn fetcher(s3: &S3TestServer, key: &str, options: FetchOptions) -> (RangeFetcher, Path) {
    let opened = s3.open(key);
    (RangeFetcher::new(opened.source, options), opened.path)
}

#[tokio::test]
async fn tail_read_is_one_get_and_reports_the_object_size() {
    let s3 = server_with_object().await;
    let (f, path) = fetcher(&s3, OBJECT, FetchOptions::default());
    let data = pattern(SIZE);
    let stats = IoStats::new();
    s3.counting().counters().reset_log_and_peak();
    let before = s3.http_counts();

    let tail = f.tail(&path, 4096, &stats).await.unwrap();
    let http = s3.http_counts().since(&before);
    assert_eq!(
        (http.requests, http.gets, http.heads),
        (1, 1, 0),
        "one GET, no HEAD"
    );
    assert_eq!(tail.version.size, SIZE as u64, "size from Content-Range");
    assert!(tail.version.etag.is_some());
    assert_eq!(tail.bytes.as_ref(), &data[SIZE - 4096..]);
    let log = s3.counting().counters().log();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].range.as_deref(), Some("bytes=-4096"));
    assert_eq!((log[0].method.as_str(), log[0].status), ("GET", 206));
    assert_eq!(http.bytes_in, 4096);
    assert_eq!(stats.snapshot().requests, 1);
    assert_eq!(stats.snapshot().bytes, 4096);

    // Asking for more than the object holds returns all of it, still in one GET.
    let before = s3.http_counts();
    let all = f.tail(&path, 10 * SIZE as u64, &stats).await.unwrap();
    assert_eq!(s3.http_counts().since(&before).requests, 1);
    assert!(all.is_whole_object());
    assert_eq!(all.bytes.as_ref(), &data[..]);
    assert_eq!(all.version, tail.version);
}

#[tokio::test]
async fn merged_requests_and_bytes_agree_with_the_http_layer() {
    let s3 = server_with_object().await;
    let data = pattern(SIZE);
    let options = FetchOptions {
        coalesce_gap: Some(64 * 1024),
        max_merged_bytes: 512 * 1024,
        max_concurrency: 8,
    };
    let (f, path) = fetcher(&s3, OBJECT, options);
    // 60 ranges: clusters of close ranges (merge) separated by far gaps (do not).
    let ranges: Vec<Range<u64>> = (0..60u64)
        .map(|i| {
            let start = (i / 6) * 200_000 + (i % 6) * 9_000;
            start..start + 1000 + i * 37
        })
        .collect();
    let requests: Vec<ReadRequest> = ranges
        .iter()
        .map(|r| ReadRequest::sized(path.clone(), r.clone(), SIZE as u64))
        .collect();
    let plan = f.plan(&requests).unwrap();
    assert!(
        plan.len() < ranges.len() && plan.len() >= 10,
        "plan has {} reads",
        plan.len()
    );

    let stats = IoStats::new();
    s3.counting().counters().reset_log_and_peak();
    let before = s3.http_counts();
    let out = f.fetch(&requests, &stats).await.unwrap();
    let http = s3.http_counts().since(&before);
    let io = stats.snapshot();

    for (r, b) in ranges.iter().zip(&out) {
        assert_eq!(b.as_ref(), &data[r.start as usize..r.end as usize]);
    }
    assert_eq!(io.requests, plan.len() as u64);
    assert_eq!(
        http.requests, io.requests,
        "every planned read is one HTTP request"
    );
    assert_eq!(http.gets, io.requests);
    let planned_bytes: u64 = plan.iter().map(|r| r.range.end - r.range.start).sum();
    assert_eq!(io.bytes, planned_bytes);
    assert_eq!(http.bytes_in, io.bytes, "body bytes agree");
    // GETs waiting for one of the 8 slots start after others were answered: the server sees
    // one round trip per 8 (issue 16), and so does IoStats.
    assert_eq!(io.round_trips, (plan.len() as u64).div_ceil(8));

    // The wire carries exactly the planned single-range headers.
    let mut sent: Vec<String> = s3
        .counting()
        .counters()
        .log()
        .into_iter()
        .filter_map(|r| r.range)
        .collect();
    let mut want: Vec<String> = plan
        .iter()
        .map(|r| format!("bytes={}-{}", r.range.start, r.range.end - 1))
        .collect();
    sent.sort();
    want.sort();
    assert_eq!(sent, want);
}

#[tokio::test]
async fn ranges_past_eof_are_rejected_before_sending_when_the_size_is_known() {
    let s3 = server_with_object().await;
    let (f, path) = fetcher(&s3, OBJECT, FetchOptions::default());
    let stats = IoStats::new();
    let before = s3.http_counts();
    let requests = [
        ReadRequest::sized(path.clone(), 0..10, SIZE as u64),
        ReadRequest::sized(
            path.clone(),
            SIZE as u64 - 10..SIZE as u64 + 100,
            SIZE as u64,
        ),
    ];
    let err = f.fetch(&requests, &stats).await.unwrap_err();
    assert!(matches!(err, Error::Corrupt { .. }), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains(OBJECT) && msg.contains(&format!("{}..{}", SIZE - 10, SIZE + 100)),
        "{msg}"
    );
    assert_eq!(s3.http_counts().since(&before).requests, 0, "nothing sent");
    assert_eq!(stats.snapshot().requests, 0);

    // Clamping instead keeps the in-bounds part.
    let clamped = ReadRequest::clamped(
        path.clone(),
        SIZE as u64 - 10..SIZE as u64 + 100,
        SIZE as u64,
    )
    .unwrap();
    let out = f.fetch(&[clamped], &stats).await.unwrap();
    assert_eq!(out[0].as_ref(), &pattern(SIZE)[SIZE - 10..]);
}

#[tokio::test]
async fn unknown_size_past_eof_is_an_error_never_a_short_decode() {
    let s3 = server_with_object().await;
    let (f, path) = fetcher(&s3, OBJECT, FetchOptions::default());
    let stats = IoStats::new();
    // Straddling the end: the server returns fewer bytes than asked.
    let straddle = SIZE as u64 - 10..SIZE as u64 + 100;
    let err = f
        .fetch(&[ReadRequest::new(path.clone(), straddle)], &stats)
        .await
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains(OBJECT) && msg.contains(&format!("{}..{}", SIZE - 10, SIZE + 100)),
        "{msg}"
    );
    // Wholly past the end: 416 from the server.
    let past = SIZE as u64 + 10..SIZE as u64 + 20;
    let err = f
        .fetch(&[ReadRequest::new(path.clone(), past)], &stats)
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::Store { ref range, .. } if range == &Some(SIZE as u64 + 10..SIZE as u64 + 20)),
        "{err}"
    );
}

#[tokio::test]
async fn concurrency_bound_is_respected_on_the_wire() {
    let s3 = server_with_object().await;
    let options = FetchOptions {
        coalesce_gap: Some(0),
        max_merged_bytes: u64::MAX,
        max_concurrency: 4,
    };
    let (f, path) = fetcher(&s3, OBJECT, options);
    // 24 separate ranges, each held 20 ms before it is sent, so requests overlap.
    s3.counting()
        .set_latency(std::time::Duration::from_millis(20));
    let requests: Vec<ReadRequest> = (0..24u64)
        .map(|i| ReadRequest::new(path.clone(), i * 50_000..i * 50_000 + 100))
        .collect();
    let stats = IoStats::new();
    s3.counting().counters().reset_log_and_peak();
    let before = s3.http_counts();
    f.fetch(&requests, &stats).await.unwrap();
    let http = s3.http_counts().since(&before);
    assert_eq!(http.requests, 24);
    assert!(
        http.max_in_flight <= 4,
        "at most 4 in flight, saw {}",
        http.max_in_flight
    );
    assert_eq!(
        http.max_in_flight, 4,
        "the bound is reached: the fetch does run requests concurrently"
    );
    // 24 GETs through 4 slots: 6 sequential rounds on the wire, counted as such.
    assert_eq!(stats.snapshot().round_trips, 6);
}

#[tokio::test]
async fn missing_objects_are_not_found() {
    let s3 = S3TestServer::start().await;
    let (f, path) = fetcher(&s3, "no/such.lance", FetchOptions::default());
    let stats = IoStats::new();
    let err = f
        .fetch(&[ReadRequest::new(path.clone(), 0..10)], &stats)
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::NotFound { ref path, .. } if path == "no/such.lance"),
        "{err}"
    );
    let err = f.tail(&path, 10, &stats).await.unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
    let err = f.whole(&path, &stats).await.unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
}

#[tokio::test]
async fn a_server_503_is_retried_by_object_store() {
    let s3 = server_with_object().await;
    let (f, path) = fetcher(&s3, OBJECT, FetchOptions::default());
    let stats = IoStats::new();
    let (before, server_before) = (s3.http_counts(), s3.server_requests());
    s3.fail_next_server_requests(1);
    let out = f
        .fetch(&[ReadRequest::new(path.clone(), 100..200)], &stats)
        .await
        .unwrap();
    assert_eq!(out[0].as_ref(), &pattern(SIZE)[100..200]);
    let http = s3.http_counts().since(&before);
    assert_eq!(http.requests, 2, "the 503 and its retry");
    assert_eq!(s3.server_requests() - server_before, 2);
    assert_eq!(
        stats.snapshot().requests,
        1,
        "IoStats counts the logical request once"
    );

    // More failures than retries (storage_options sets max_retries=2): a Store error.
    let before = s3.http_counts();
    s3.fail_next_server_requests(100);
    let err = f
        .fetch(&[ReadRequest::new(path.clone(), 100..200)], &stats)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Store { .. }), "{err}");
    assert!(err.to_string().contains(OBJECT), "{err}");
    assert_eq!(
        s3.http_counts().since(&before).requests,
        3,
        "1 try + 2 retries"
    );
    s3.fail_next_server_requests(0);

    // Client-side injected fault (CountingConnector): same retry path.
    let before = s3.http_counts();
    s3.counting()
        .fail_next_requests(1, http::StatusCode::SERVICE_UNAVAILABLE);
    let tail = f.tail(&path, 16, &stats).await.unwrap();
    assert_eq!(tail.version.size, SIZE as u64);
    let http = s3.http_counts().since(&before);
    assert_eq!((http.requests, http.injected_faults), (2, 1));
}

#[tokio::test]
async fn max_retries_zero_fails_at_once() {
    let s3 = server_with_object().await;
    let opened = s3.open_with(OBJECT, &[("max_retries", "0")]);
    let f = RangeFetcher::new(opened.source, FetchOptions::default());
    let before = s3.http_counts();
    s3.fail_next_server_requests(1);
    assert!(f.tail(&opened.path, 10, &IoStats::new()).await.is_err());
    assert_eq!(s3.http_counts().since(&before).requests, 1);
}

#[tokio::test]
async fn whole_reads_and_small_objects() {
    let s3 = S3TestServer::start().await;
    s3.put("small", b"hello".to_vec()).await;
    let (f, path) = fetcher(&s3, "small", FetchOptions::default());
    let stats = IoStats::new();
    let whole = f.whole(&path, &stats).await.unwrap();
    assert_eq!(
        (whole.bytes.as_ref(), whole.version.size),
        (&b"hello"[..], 5)
    );
    let tail = f.tail(&path, 3, &stats).await.unwrap();
    assert_eq!((tail.bytes.as_ref(), tail.start()), (&b"llo"[..], 2));
    assert_eq!(tail.slice(3..5).unwrap().as_ref(), b"lo");

    // An empty object: a whole read works; a suffix read is refused by S3 (416), which must
    // surface as an error naming the object, not a panic or an empty "tail".
    s3.put("empty", Vec::<u8>::new()).await;
    let (f, path) = fetcher(&s3, "empty", FetchOptions::default());
    let whole = f.whole(&path, &stats).await.unwrap();
    assert_eq!((whole.bytes.len(), whole.version.size), (0, 0));
    let err = f.tail(&path, 10, &stats).await.unwrap_err();
    assert!(
        matches!(err, Error::Store { ref path, .. } if path == "empty"),
        "{err}"
    );
}

#[tokio::test]
async fn upload_dir_and_plain_http_urls() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
    std::fs::write(dir.path().join("a/b/one.bin"), pattern(3000)).unwrap();
    std::fs::write(dir.path().join("two.bin"), b"second").unwrap();
    let s3 = S3TestServer::start_public().await;
    let keys = s3.upload_dir(dir.path(), "ds/").await;
    assert_eq!(
        keys,
        vec!["ds/a/b/one.bin".to_string(), "ds/two.bin".to_string()]
    );

    // An http:// URL of the object (anonymous GETs; no S3 signing).
    let url = format!("{}/{}/ds/a/b/one.bin", s3.endpoint(), common::s3::BUCKET);
    let opts = crate::io::OpenOptions::new(&[("max_retries".into(), "1".into())])
        .with_http_connector(Arc::new(s3.counting().clone()));
    let opened = crate::io::open_url_with(&url, &opts).unwrap();
    assert_eq!(opened.scheme, object_store::ObjectStoreScheme::Http);
    let f = RangeFetcher::new(opened.source, FetchOptions::default());
    let stats = IoStats::new();
    let before = s3.http_counts();
    let tail = f.tail(&opened.path, 100, &stats).await.unwrap();
    assert_eq!(tail.version.size, 3000);
    assert_eq!(tail.bytes.as_ref(), &pattern(3000)[2900..]);
    let got = f
        .fetch(
            &[ReadRequest::sized(opened.path.clone(), 10..20, 3000)],
            &stats,
        )
        .await
        .unwrap();
    assert_eq!(got[0].as_ref(), &pattern(3000)[10..20]);
    assert_eq!(s3.http_counts().since(&before).requests, 2);
}

/// A server that ignores If-Match (like this s3s one) answers a range of an object that
/// shrank with 416; with an expected version that is "the object changed", not a bad request.
#[tokio::test]
async fn a_shrunk_object_is_an_object_change_not_a_range_error() {
    let s3 = S3TestServer::start().await;
    s3.put("shrink/obj.bin", pattern(5000)).await;
    let opened = s3.open("shrink/obj.bin");
    let fetcher = RangeFetcher::new(Arc::clone(&opened.source), FetchOptions::default());
    let tail = fetcher
        .tail(&opened.path, 100, &IoStats::new())
        .await
        .unwrap();
    s3.put("shrink/obj.bin", pattern(1000)).await;
    let read = ReadRequest {
        path: opened.path.clone(),
        range: 4000..4100,
        object_size: Some(tail.version.size),
    };
    let err = fetcher.fetch(&[read], &IoStats::new()).await.unwrap_err();
    assert!(crate::io::is_object_changed(&err), "{err}");
    // Without an expected version the same 416 stays a store error.
    let err = opened
        .source
        .get_range(&opened.path, 4000..4100, None)
        .await
        .unwrap_err();
    assert!(!crate::io::is_object_changed(&err), "{err}");
}

/// The test server's LIST (scoped to the prefix's directory, see the `backend` module of
/// `lakeseek-testing`) answers as S3 does: keys under a prefix only, `/`-delimited levels,
/// resuming after a key, and more than one page (1,000 keys) through continuation tokens.
#[tokio::test]
async fn list_answers_like_s3_for_prefixes_levels_offsets_and_pages() {
    use futures::TryStreamExt;
    use object_store::ObjectStore;

    let s3 = S3TestServer::start().await;
    for key in ["a/b/1", "a/b/2", "a/c/3", "a/d", "ab/x", "top"] {
        s3.put(key, vec![1u8]).await;
    }
    let pages = 1003;
    for i in 0..pages {
        s3.put(&format!("many/{i:05}"), vec![2u8]).await;
    }
    let store = s3.open("").store;
    let keys = |prefix: Option<&str>, offset: Option<&str>| {
        let store = Arc::clone(&store);
        let prefix = prefix.map(Path::from);
        let offset = offset.map(Path::from);
        async move {
            let listed: Vec<_> = match offset {
                Some(o) => {
                    store
                        .list_with_offset(prefix.as_ref(), &o)
                        .try_collect()
                        .await
                }
                None => store.list(prefix.as_ref()).try_collect().await,
            }
            .expect("list");
            let mut keys: Vec<String> = listed.iter().map(|m| m.location.to_string()).collect();
            keys.sort();
            keys
        }
    };
    assert_eq!(keys(Some("a/b"), None).await, ["a/b/1", "a/b/2"]);
    assert_eq!(
        keys(Some("a"), None).await,
        ["a/b/1", "a/b/2", "a/c/3", "a/d"]
    );
    assert!(keys(Some("zz"), None).await.is_empty());
    assert!(keys(Some("a/zz"), None).await.is_empty());
    assert_eq!(keys(Some("a"), Some("a/b/2")).await, ["a/c/3", "a/d"]);
    assert_eq!(keys(Some("a/b"), Some("a/c")).await, Vec::<String>::new());
    assert_eq!(keys(Some("a/c"), Some("a/b")).await, ["a/c/3"]);
    let many = keys(Some("many"), None).await;
    assert_eq!(many.len(), pages);
    assert_eq!(many[1000], "many/01000");
    assert_eq!(keys(None, None).await.len(), pages + 6);

    let level = store
        .list_with_delimiter(Some(&Path::from("a")))
        .await
        .expect("list one level");
    let objects: Vec<String> = level
        .objects
        .iter()
        .map(|m| m.location.to_string())
        .collect();
    let prefixes: Vec<String> = level
        .common_prefixes
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert_eq!(objects, ["a/d"]);
    assert_eq!(prefixes, ["a/b", "a/c"]);
}
