//! [`S3Server`]: the server, its thread and the ways a test seeds and reaches it.

use std::net::SocketAddr;
use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder as ConnBuilder;
use object_store::aws::AmazonS3Builder;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

use crate::backend::FixedFileSystem;
use crate::faults::{FaultyService, ServerFaults};
use crate::{ACCESS_KEY, BUCKET, REGION, SECRET_KEY};

/// An S3 server for one test. Dropping it stops the server and deletes its data.
/// Panics when it cannot start or seed (test support).
pub struct S3Server {
    endpoint: String,
    faults: Arc<ServerFaults>,
    seed: Arc<dyn ObjectStore>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    root: tempfile::TempDir,
}

impl S3Server {
    /// Start a server on 127.0.0.1 (random port) with bucket [`BUCKET`] created, accepting
    /// requests signed with [`ACCESS_KEY`] / [`SECRET_KEY`].
    pub fn start() -> Self {
        Self::start_with_auth(true)
    }

    /// Like [`start`](Self::start) but accepting unsigned requests too (anonymous reads),
    /// e.g. for plain `http://` URL reads of `ENDPOINT/test-bucket/key`.
    pub fn start_public() -> Self {
        Self::start_with_auth(false)
    }

    fn start_with_auth(auth: bool) -> Self {
        let root = tempfile::tempdir().expect("temp dir for s3s-fs");
        std::fs::create_dir(root.path().join(BUCKET)).expect("create bucket dir");
        let fs = FixedFileSystem::new(root.path().to_path_buf());
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
            faults,
            seed: Arc::new(seed),
            shutdown: Some(tx),
            thread: Some(thread),
            root,
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// `s3://test-bucket/<key>`.
    pub fn url(&self, key: &str) -> String {
        format!("s3://{BUCKET}/{}", key.trim_start_matches('/'))
    }

    /// Storage options reaching this server (lakeseek's `open_url`, `--storage-option`):
    /// endpoint, keys, region, plain HTTP, and fast-failing retries (2 retries, 5 s, 10 ms
    /// first backoff).
    pub fn storage_options(&self) -> Vec<(String, String)> {
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

    /// [`storage_options`](Self::storage_options) with `changes` applied: a key already
    /// there takes the new value in place, a new key is appended.
    pub fn storage_options_with(&self, changes: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut options = self.storage_options();
        for (key, value) in changes {
            match options.iter_mut().find(|(k, _)| k == key) {
                Some(option) => option.1 = value.to_string(),
                None => options.push((key.to_string(), value.to_string())),
            }
        }
        options
    }

    /// Requests the server received (seeding included), faults included.
    pub fn server_requests(&self) -> u64 {
        self.faults.requests()
    }

    /// The server-side fault wrappers (slow answers, stalls, resets, 503s, the gate).
    pub fn faults(&self) -> &ServerFaults {
        &self.faults
    }

    /// Make the server answer its next `n` requests with `503 SlowDown`.
    pub fn fail_next_server_requests(&self, n: u64) {
        self.faults.fail_next(n);
    }

    /// Upload `data` as `key` (through S3 PUT).
    pub async fn put(&self, key: &str, data: impl Into<Bytes>) {
        let bytes: Bytes = data.into();
        self.seed
            .put(&Path::from(key), PutPayload::from(bytes))
            .await
            .unwrap_or_else(|e| panic!("PUT {key}: {e}"));
    }

    /// Upload every file under `local_dir` as `<prefix>/<relative path>`; returns the keys.
    pub async fn upload_dir(&self, local_dir: &FsPath, prefix: &str) -> Vec<String> {
        let mut keys = Vec::new();
        for path in files_under(local_dir) {
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
        keys.sort();
        keys
    }

    /// Copy the directory `local` into the bucket as `name` (files, no requests); returns
    /// its `s3://` URL.
    pub fn copy_in(&self, local: &FsPath, name: &str) -> String {
        copy_dir(local, &self.bucket_dir().join(name));
        self.url(name)
    }

    /// The bucket's directory on disk.
    pub fn bucket_dir(&self) -> PathBuf {
        self.root.path().join(BUCKET)
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Every file under `dir` (depth first, directories not listed).
fn files_under(dir: &FsPath) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries =
            std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files
}

/// Copy the directory tree `from` to `to`.
fn copy_dir(from: &FsPath, to: &FsPath) {
    std::fs::create_dir_all(to).expect("create dir");
    for entry in std::fs::read_dir(from).expect("read fixture dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy fixture file");
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
