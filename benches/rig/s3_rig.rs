//! `s3_rig`: the benchmark S3 server (dev only, never part of the library).
//!
//! s3s + s3s-fs (the S3 server the project's tests run in-process, with the same suffix-range
//! fix, SigV4 checked against one key pair) served concurrently by hyper with **TCP_NODELAY**
//! on every accepted socket, behind a shaping layer in the same process ([`shaper`]): a
//! first-byte delay per request (fixed or lognormal), a per-connection bandwidth cap, request
//! and byte counting with a per-request log, and a control endpoint under `/__proxy__/`.
//! Nothing is serialised: every connection is its own task, every request of a wave is
//! delayed concurrently.
//!
//! ```text
//! s3_rig --root DIR [--listen 127.0.0.1:4582] [--bucket anchors] [--delay-ms 20]
//!        [--dist fixed|lognormal] [--p99-ms 100] [--bw-mbps 80] [--seed 1]
//!        [--load NAME=LOCAL_DIR ...]
//! ```
//! `--load` PUTs the local directory's files to `s3://BUCKET/NAME/...` before serving
//! (unshaped, not counted; files already stored with the same size are skipped). Started and
//! stopped by `benches/rig/rig.sh`.

mod shaper;

use std::net::SocketAddr;
use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;

use clap::Parser;
use http1 as http;
use http_body_util::BodyExt;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder as ConnBuilder;
use object_store::aws::AmazonS3Builder;
use object_store::{ObjectStoreExt, PutPayload};

use shaper::{paced_body, InFlight, Shape, Shaper, PIECE};

/// Command line of the rig server.
#[derive(Parser, Debug)]
struct Args {
    /// Address to serve on (loopback).
    #[arg(long, default_value = "127.0.0.1:4582")]
    listen: SocketAddr,
    /// The server's storage root (buckets are sub-directories).
    #[arg(long)]
    root: PathBuf,
    /// The bucket to create and load into.
    #[arg(long, default_value = "anchors")]
    bucket: String,
    /// First-byte delay in ms (the median when lognormal).
    #[arg(long, default_value_t = 20.0)]
    delay_ms: f64,
    /// `fixed` or `lognormal`.
    #[arg(long, default_value = "fixed")]
    dist: String,
    /// 99th percentile of the lognormal delay, ms.
    #[arg(long, default_value_t = 100.0)]
    p99_ms: f64,
    /// Per-connection bandwidth cap, MB/s (0 = none).
    #[arg(long, default_value_t = 80.0)]
    bw_mbps: f64,
    /// Seed of the lognormal stream.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Access key every request must be signed with (secret = the same).
    #[arg(long, default_value = "dummy")]
    key: String,
    /// `NAME=LOCAL_DIR`: upload LOCAL_DIR to `s3://BUCKET/NAME/` before serving.
    #[arg(long)]
    load: Vec<String>,
    /// Serve at most this many request units at a time (0 = no limit); the others wait in
    /// arrival order after their first-byte delay, as on a store with little capacity.
    #[arg(long, default_value_t = 0)]
    capacity: u32,
    /// Units a LIST takes of `--capacity` (a GET, HEAD or PUT takes 1).
    #[arg(long, default_value_t = 1)]
    list_units: u32,
    /// Extra server time of a LIST, in ms, spent holding its units (a store whose LIST walks
    /// many keys; the issue's server: ~40 ms a LIST where a GET costs ~1.5 ms).
    #[arg(long, default_value_t = 0)]
    list_ms: u64,
}

/// The per-connection service: control requests, or shaped S3 requests.
#[derive(Clone)]
struct Front {
    s3: s3s::service::S3Service,
    shaper: Arc<Shaper>,
    /// `--capacity` units (`None`: no limit) and the units of a LIST.
    capacity: Option<(Arc<tokio::sync::Semaphore>, u32)>,
    /// `--list-ms`.
    list_time: std::time::Duration,
}

type Resp = http::Response<s3s::Body>;
type BoxFut =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Resp, s3s::HttpError>> + Send>>;

impl hyper::service::Service<http::Request<hyper::body::Incoming>> for Front {
    type Response = Resp;
    type Error = s3s::HttpError;
    type Future = BoxFut;

    fn call(&self, req: http::Request<hyper::body::Incoming>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move { this.handle(req).await })
    }
}

impl Front {
    /// Serve one request: control, or delay → s3s → paced body → log.
    async fn handle(
        self,
        req: http::Request<hyper::body::Incoming>,
    ) -> Result<Resp, s3s::HttpError> {
        let path = req.uri().path().to_string();
        let query = req.uri().query().unwrap_or("").to_string();
        if let Some(cmd) = path.strip_prefix("/__proxy__/") {
            return Ok(control_response(self.shaper.control(cmd, &query)));
        }
        let header = |name: http::header::HeaderName| {
            req.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let range = header(http::header::RANGE);
        let req_bytes = header(http::header::CONTENT_LENGTH)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let method = req.method().as_str().to_string();
        let arrival = self.shaper.arrive(&method, &path, &query, range, req_bytes);
        // Logged when complete, or as 499 if the client goes away first (future dropped).
        let mut request = InFlight::new(Arc::clone(&self.shaper), arrival);
        let delay = request.delay();
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        // Held while s3s serves the request and its body is read (not while it is paced).
        let is_list = method == "GET" && !path.trim_start_matches('/').contains('/');
        let serving = match &self.capacity {
            Some((units, list_units)) => {
                let want = if is_list { *list_units } else { 1 };
                let semaphore = Arc::clone(units);
                Some(
                    semaphore
                        .acquire_many_owned(want)
                        .await
                        .expect("never closed"),
                )
            }
            None => None,
        };
        if is_list && !self.list_time.is_zero() {
            tokio::time::sleep(self.list_time).await;
        }
        let resp = match hyper::service::Service::call(&self.s3, req).await {
            Ok(resp) => resp,
            Err(e) => {
                request.finish(500, 0);
                return Err(e);
            }
        };
        let (parts, body) = resp.into_parts();
        let length = parts
            .headers
            .get(http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok());
        let payload = match read_body(body, length).await {
            Ok(bytes) => bytes,
            Err(e) => {
                request.finish(500, 0);
                return Err(s3s::HttpError::new(e));
            }
        };
        drop(serving);
        let status = parts.status.as_u16();
        let rate = self.shaper.shape().bw_mbps * 1e6;
        if method == "HEAD" || rate <= 0.0 || payload.len() <= PIECE {
            // Logged before the reply: a client reading the stats right after its last
            // response sees it counted.
            request.finish(status, payload.len() as u64);
            return Ok(http::Response::from_parts(parts, s3s::Body::from(payload)));
        }
        let body = paced_body(request, status, payload, rate);
        Ok(http::Response::from_parts(parts, body))
    }
}

/// The response body, read up to its `Content-Length` (all of it when there is none; the
/// rest is dropped unread). s3s-fs 0.14.1's ranged GET goes on reading the object to its
/// end after the range (its `bytes_stream` yields empty chunks instead of stopping), so
/// without this a 4 KiB range of a 1 GB object cost ~4 s of server time.
async fn read_body<B>(mut body: B, length: Option<usize>) -> Result<bytes::Bytes, B::Error>
where
    B: http_body::Body<Data = bytes::Bytes> + Unpin,
{
    let mut out = bytes::BytesMut::new();
    while length.is_none_or(|n| out.len() < n) {
        let Some(frame) = body.frame().await else {
            break;
        };
        if let Ok(data) = frame?.into_data() {
            out.extend_from_slice(&data);
        }
    }
    Ok(out.freeze())
}

/// A JSON control reply, or 404 for an unknown command.
fn control_response(value: Option<serde_json::Value>) -> Resp {
    let (status, body) = match value {
        Some(v) => (200, v.to_string()),
        None => (404, "{\"error\":\"unknown control command\"}".to_string()),
    };
    http::Response::builder()
        .status(status)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(s3s::Body::from(body))
        .expect("static response")
}

/// Accept connections forever, TCP_NODELAY on each, one task per connection.
async fn serve(listener: tokio::net::TcpListener, front: Front) {
    let http = ConnBuilder::new(TokioExecutor::new());
    loop {
        let Ok((socket, _)) = listener.accept().await else {
            continue;
        };
        let _ = socket.set_nodelay(true);
        let conn = http
            .serve_connection(TokioIo::new(socket), front.clone())
            .into_owned();
        tokio::spawn(async move {
            let _ = conn.await;
        });
    }
}

/// Files under `dir`, recursively, as (absolute path, '/'-joined relative key).
fn walk(dir: &FsPath, rel: &str, out: &mut Vec<(PathBuf, String)>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let key = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        if entry.file_type()?.is_dir() {
            walk(&entry.path(), &key, out)?;
        } else {
            out.push((entry.path(), key));
        }
    }
    Ok(())
}

/// PUT every `NAME=DIR` of `--load` through the server itself (signed, so s3s-fs stores
/// each object's ETag). Files stored with the same size are skipped.
async fn load(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let store = AmazonS3Builder::new()
        .with_endpoint(format!("http://{}", args.listen))
        .with_allow_http(true)
        .with_region("us-east-1")
        .with_bucket_name(&args.bucket)
        .with_access_key_id(&args.key)
        .with_secret_access_key(&args.key)
        .build()?;
    for spec in &args.load {
        let (name, dir) = spec.split_once('=').ok_or("--load wants NAME=LOCAL_DIR")?;
        let mut files = Vec::new();
        walk(FsPath::new(dir), "", &mut files)?;
        let (mut put, mut kept) = (0, 0);
        for (file, rel) in files {
            let key = format!("{}/{rel}", name.trim_end_matches('/'));
            let stored = args.root.join(&args.bucket).join(&key);
            let size = std::fs::metadata(&file)?.len();
            if std::fs::metadata(&stored).is_ok_and(|m| m.len() == size) {
                kept += 1;
                continue;
            }
            let data = std::fs::read(&file)?;
            store
                .put(&key.as_str().into(), PutPayload::from(data))
                .await?;
            put += 1;
        }
        eprintln!("s3_rig: loaded {name}: {put} PUT, {kept} already stored");
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    std::fs::create_dir_all(args.root.join(&args.bucket))?;
    // s3s-fs reads files with tokio::fs, one blocking-pool hop per 4 KiB: with tokio's
    // default pool (up to 512 threads) 60 concurrent GETs become 60 threads thrashing two
    // cores (13 ms of server CPU per small GET, measured with perf). A pool of two threads
    // per core serves the same GETs without the context switches.
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .max_blocking_threads(2 * cores)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let fs = lakeseek_testing::FixedFileSystem::new(args.root.clone());
        let mut builder = s3s::service::S3ServiceBuilder::new(fs);
        builder.set_auth(s3s::auth::SimpleAuth::from_single(
            args.key.as_str(),
            args.key.as_str(),
        ));
        let shape = Shape {
            delay_ms: args.delay_ms,
            dist: args.dist.clone(),
            p99_ms: args.p99_ms,
            bw_mbps: args.bw_mbps,
        };
        let shaper = Shaper::new(shape.clone(), args.seed);
        let listener = tokio::net::TcpListener::bind(args.listen).await?;
        let capacity = (args.capacity > 0).then(|| {
            let units = Arc::new(tokio::sync::Semaphore::new(args.capacity as usize));
            (units, args.list_units.clamp(1, args.capacity))
        });
        let front = Front {
            s3: builder.build(),
            shaper: Arc::clone(&shaper),
            capacity,
            list_time: std::time::Duration::from_millis(args.list_ms),
        };
        tokio::spawn(serve(listener, front));
        if !args.load.is_empty() {
            shaper.set_shape(Shape {
                delay_ms: 0.0,
                bw_mbps: 0.0,
                ..shape.clone()
            });
            load(&args).await?;
            shaper.set_shape(shape.clone());
        }
        shaper.reset();
        eprintln!(
            "s3_rig: ready on http://{} (bucket {}, delay {} ms {}, p99 {} ms, {} MB/s, \
             capacity {} (0: none), LIST units {} + {} ms)",
            args.listen,
            args.bucket,
            shape.delay_ms,
            shape.dist,
            shape.p99_ms,
            shape.bw_mbps,
            args.capacity,
            args.list_units,
            args.list_ms
        );
        std::future::pending::<()>().await;
        Ok(())
    })
}
