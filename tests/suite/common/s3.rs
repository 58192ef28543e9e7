//! [`S3TestServer`]: a real S3 HTTP server (s3s + s3s-fs, SigV4 checked) on 127.0.0.1, run
//! in-process on its own thread, so `cargo test` alone is the test command.

use std::net::SocketAddr;
use std::path::Path as FsPath;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::s3_faults::{FaultyService, ServerFaults};
use crate::io::wrappers::{CountingConnector, HttpCountsSnapshot};
use crate::io::{open_url_with, OpenOptions, OpenedUrl};
use bytes::Bytes;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder as ConnBuilder;
use object_store::aws::AmazonS3Builder;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

/// Access key the server accepts (the secret is the same).
pub(crate) const ACCESS_KEY: &str = "test";
/// Secret key the server accepts.
pub(crate) const SECRET_KEY: &str = "test";
/// Region used for signing.
pub(crate) const REGION: &str = "us-east-1";
/// The bucket every server starts with.
pub(crate) const BUCKET: &str = "test-bucket";

/// An S3 server for one test. Dropping it stops the server and deletes its data.
///
/// ```ignore
/// mod common;
/// let s3 = common::S3TestServer::start().await;
/// s3.put("dir/a.bin", vec![1, 2, 3]).await;
/// let opened = s3.open("dir/a.bin");          // counted through s3.counting()
/// let before = s3.http_counts();
/// // ... read through opened.source / a RangeFetcher ...
/// assert_eq!(s3.http_counts().since(&before).gets, 1);
/// ```
pub(crate) struct S3TestServer {
    endpoint: String,
    counting: CountingConnector,
    faults: Arc<ServerFaults>,
    seed: Arc<dyn ObjectStore>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    _root: tempfile::TempDir,
}

impl S3TestServer {
    /// Start a server on 127.0.0.1 (random port) with bucket [`BUCKET`] created.
    /// Panics when it cannot (test support).
    pub(crate) async fn start() -> Self {
        Self::start_with_auth(true).await
    }

    /// Like [`start`](Self::start) but accepting unsigned requests too (anonymous reads),
    /// e.g. for plain `http://` URL reads of `ENDPOINT/test-bucket/key`.
    pub(crate) async fn start_public() -> Self {
        Self::start_with_auth(false).await
    }

    async fn start_with_auth(auth: bool) -> Self {
        let root = tempfile::tempdir().expect("temp dir for s3s-fs");
        std::fs::create_dir(root.path().join(BUCKET)).expect("create bucket dir");
        let fs = super::s3_backend::FixedFileSystem::new(root.path().to_path_buf());
        let mut builder = s3s::service::S3ServiceBuilder::new(fs);
        if auth {
            builder.set_auth(s3s::auth::SimpleAuth::from_single(ACCESS_KEY, SECRET_KEY));
        }
        let service = FaultyService {
            inner: builder.build(),
            faults: Arc::default(),
        };
        let faults = Arc::clone(&service.faults);

        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("nonblocking listener");
        let addr: SocketAddr = listener.local_addr().expect("local addr");
        let (tx, rx) = tokio::sync::oneshot::channel();
        let thread = std::thread::Builder::new()
            .name(format!("s3-test-server-{}", addr.port()))
            .spawn(move || serve(listener, service, rx))
            .expect("spawn server thread");

        let endpoint = format!("http://{addr}");
        let seed = AmazonS3Builder::new()
            .with_skip_signature(!auth)
            .with_endpoint(&endpoint)
            .with_allow_http(true)
            .with_region(REGION)
            .with_bucket_name(BUCKET)
            .with_access_key_id(ACCESS_KEY)
            .with_secret_access_key(SECRET_KEY)
            .build()
            .expect("seed client");
        Self {
            endpoint,
            counting: CountingConnector::new(),
            faults,
            seed: Arc::new(seed),
            shutdown: Some(tx),
            thread: Some(thread),
            _root: root,
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub(crate) fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// `s3://test-bucket/<key>`.
    pub(crate) fn url(&self, key: &str) -> String {
        format!("s3://{BUCKET}/{}", key.trim_start_matches('/'))
    }

    /// Storage options for `crate::io::open_url` (or `--storage-option`): endpoint, keys,
    /// region, plain HTTP, and fast-failing retries (2 retries, 5 s, 10 ms first backoff).
    pub(crate) fn storage_options(&self) -> Vec<(String, String)> {
        [
            ("aws_endpoint", self.endpoint.as_str()),
            ("allow_http", "true"),
            ("aws_access_key_id", ACCESS_KEY),
            ("aws_secret_access_key", SECRET_KEY),
            ("aws_region", REGION),
            ("max_retries", "2"),
            ("retry_timeout_secs", "5"),
            ("retry_init_backoff_ms", "10"),
            // Hedged reads depend on timing; the tests count exact requests and faults.
            ("hedge_fraction", "0"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }

    /// Open `s3://test-bucket/<key>` through the counting connector.
    pub(crate) fn open(&self, key: &str) -> OpenedUrl {
        self.open_with(key, &[])
    }

    /// Like [`open`](Self::open) with extra storage options appended (later keys win).
    pub(crate) fn open_with(&self, key: &str, extra: &[(&str, &str)]) -> OpenedUrl {
        let mut options = self.storage_options();
        options.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let opts = OpenOptions::new(&options).with_http_connector(Arc::new(self.counting.clone()));
        open_url_with(&self.url(key), &opts).expect("open test S3 URL")
    }

    /// The HTTP-layer counter shared by every store [`open`](Self::open) made (not by
    /// seeding): set latency or inject client-side faults here.
    pub(crate) fn counting(&self) -> &CountingConnector {
        &self.counting
    }

    /// Shortcut for `counting().snapshot()`.
    pub(crate) fn http_counts(&self) -> HttpCountsSnapshot {
        self.counting.snapshot()
    }

    /// Requests the server received (seeding included), faults included.
    pub(crate) fn server_requests(&self) -> u64 {
        self.faults.requests()
    }

    /// The server-side fault wrappers (slow answers, stalls, resets, 503s, the gate).
    pub(crate) fn faults(&self) -> &ServerFaults {
        &self.faults
    }

    /// Make the server answer its next `n` requests with `503 SlowDown`.
    pub(crate) fn fail_next_server_requests(&self, n: u64) {
        self.faults.fail_next(n);
    }

    /// Upload `data` as `key` (through S3 PUT, not counted by [`counting`](Self::counting)).
    pub(crate) async fn put(&self, key: &str, data: impl Into<Bytes>) {
        let bytes: Bytes = data.into();
        self.seed
            .put(&Path::from(key), PutPayload::from(bytes))
            .await
            .unwrap_or_else(|e| panic!("PUT {key}: {e}"));
    }

    /// Upload every file under `local_dir` as `<prefix>/<relative path>`; returns the keys.
    pub(crate) async fn upload_dir(&self, local_dir: &FsPath, prefix: &str) -> Vec<String> {
        let mut keys = Vec::new();
        let mut stack = vec![local_dir.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let entries =
                std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display()));
            for entry in entries {
                let path = entry.expect("dir entry").path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                let rel = path.strip_prefix(local_dir).expect("under local_dir");
                let rel = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
                let key = if prefix.is_empty() {
                    rel
                } else {
                    format!("{}/{rel}", prefix.trim_end_matches('/'))
                };
                let data =
                    std::fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
                self.put(&key, data).await;
                keys.push(key);
            }
        }
        keys.sort();
        keys
    }
}

impl Drop for S3TestServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Accept connections until `stop` fires, on a small runtime of the server's own thread.
fn serve(
    listener: std::net::TcpListener,
    service: FaultyService,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("server runtime");
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
        let http = ConnBuilder::new(TokioExecutor::new());
        loop {
            let socket = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((socket, _)) => socket,
                    Err(_) => continue,
                },
                _ = &mut stop => break,
            };
            let conn = http
                .serve_connection(TokioIo::new(socket), service.clone())
                .into_owned();
            tokio::spawn(async move {
                let _ = conn.await;
            });
        }
    });
    runtime.shutdown_background();
}
