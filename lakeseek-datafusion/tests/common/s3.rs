//! An in-process S3 server (s3s + s3s-fs, SigV4 checked) on 127.0.0.1 over a temporary
//! directory, for this crate's tests: fixtures are copied into its bucket directory.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder as ConnBuilder;

// The root crate's s3s-fs wrapper (suffix ranges longer than the object, as S3 answers them).
#[path = "../../../tests/suite/common/s3_backend.rs"]
#[allow(dead_code, unreachable_pub)]
mod s3_backend;

pub const BUCKET: &str = "test-bucket";
const KEY: &str = "test";
const REGION: &str = "us-east-1";

/// Holds the GETs of data files (keys with `/data/`) while closed, so a test can act while
/// a query is surely in flight.
/// It also counts the requests being served, and the most ever served at once.
pub struct Gate {
    open: tokio::sync::watch::Sender<bool>,
    held: AtomicUsize,
    serving: AtomicUsize,
    serving_peak: AtomicUsize,
}

impl Gate {
    fn new() -> Self {
        Self {
            open: tokio::sync::watch::channel(true).0,
            held: AtomicUsize::new(0),
            serving: AtomicUsize::new(0),
            serving_peak: AtomicUsize::new(0),
        }
    }

    /// The most requests (of any kind) served at once since the last
    /// [`reset_peak`](Self::reset_peak).
    pub fn peak(&self) -> usize {
        self.serving_peak.load(Ordering::SeqCst)
    }

    /// Count [`peak`](Self::peak) again from the requests served now.
    pub fn reset_peak(&self) {
        let now = self.serving.load(Ordering::SeqCst);
        self.serving_peak.store(now, Ordering::SeqCst);
    }

    /// Hold data-file GETs from now on.
    pub fn close(&self) {
        self.open.send_replace(false);
    }

    /// Release the held GETs and let the next ones through.
    pub fn open(&self) {
        self.open.send_replace(true);
    }

    /// Data-file GETs that have waited at the closed gate so far.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::SeqCst)
    }

    async fn pass(&self, req: &hyper::Request<hyper::body::Incoming>) {
        let data_get = req.method() == hyper::Method::GET && req.uri().path().contains("/data/");
        if !data_get || *self.open.borrow() {
            return;
        }
        let mut open = self.open.subscribe();
        self.held.fetch_add(1, Ordering::SeqCst);
        let _ = open.wait_for(|o| *o).await;
    }
}

/// Counts one request as served while alive (also when the client goes away).
struct Serving<'a>(&'a Gate);

impl<'a> Serving<'a> {
    fn new(gate: &'a Gate) -> Self {
        let now = gate.serving.fetch_add(1, Ordering::SeqCst) + 1;
        gate.serving_peak.fetch_max(now, Ordering::SeqCst);
        Self(gate)
    }
}

impl Drop for Serving<'_> {
    fn drop(&mut self) {
        self.0.serving.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The s3s service behind a [`Gate`].
#[derive(Clone)]
struct GatedService {
    inner: s3s::service::S3Service,
    gate: Arc<Gate>,
}

type BoxedResponse = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<s3s::HttpResponse, s3s::HttpError>> + Send>,
>;

impl hyper::service::Service<hyper::Request<hyper::body::Incoming>> for GatedService {
    type Response = s3s::HttpResponse;
    type Error = s3s::HttpError;
    type Future = BoxedResponse;

    fn call(&self, req: hyper::Request<hyper::body::Incoming>) -> Self::Future {
        let (inner, gate) = (self.inner.clone(), Arc::clone(&self.gate));
        Box::pin(async move {
            let _serving = Serving::new(&gate);
            gate.pass(&req).await;
            hyper::service::Service::call(&inner, req).await
        })
    }
}

/// A running server; dropping it stops the server and deletes its data.
pub struct S3Server {
    endpoint: String,
    gate: Arc<Gate>,
    root: tempfile::TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl S3Server {
    pub fn start() -> Self {
        let root = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir(root.path().join(BUCKET)).expect("bucket dir");
        let fs = s3_backend::FixedFileSystem::new(root.path().to_path_buf());
        let mut builder = s3s::service::S3ServiceBuilder::new(fs);
        builder.set_auth(s3s::auth::SimpleAuth::from_single(KEY, KEY));
        let gate = Arc::new(Gate::new());
        let service = GatedService {
            inner: builder.build(),
            gate: Arc::clone(&gate),
        };
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let endpoint = format!("http://{}", listener.local_addr().expect("addr"));
        let (tx, mut rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("server runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                let http = ConnBuilder::new(TokioExecutor::new());
                loop {
                    let socket = tokio::select! {
                        a = listener.accept() => match a { Ok((s, _)) => s, Err(_) => continue },
                        _ = &mut rx => break,
                    };
                    let conn = http
                        .serve_connection(TokioIo::new(socket), service.clone())
                        .into_owned();
                    tokio::spawn(async move {
                        let _ = conn.await;
                    });
                }
            });
            rt.shutdown_background();
        });
        Self {
            endpoint,
            gate,
            root,
            stop: Some(tx),
            thread: Some(thread),
        }
    }

    /// Storage options reaching this server.
    pub fn storage_options(&self) -> Vec<(String, String)> {
        [
            ("aws_endpoint", self.endpoint.as_str()),
            ("allow_http", "true"),
            ("aws_access_key_id", KEY),
            ("aws_secret_access_key", KEY),
            ("aws_region", REGION),
            ("max_retries", "1"),
            ("retry_timeout_secs", "5"),
            ("retry_init_backoff_ms", "10"),
            ("hedge_fraction", "0"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }

    /// Copy the directory `local` into the bucket as `name`; returns its `s3://` URL.
    pub fn copy_in(&self, local: &Path, name: &str) -> String {
        copy_dir(local, &self.bucket_dir().join(name));
        format!("s3://{BUCKET}/{name}")
    }

    /// The gate in front of data-file GETs (open unless a test closes it).
    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    /// The bucket's directory on disk.
    pub fn bucket_dir(&self) -> PathBuf {
        self.root.path().join(BUCKET)
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
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
