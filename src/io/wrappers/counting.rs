//! [`CountingConnector`]: counting, latency and fault injection at the HTTP layer.
//!
//! It wraps object_store's HTTP client, so it sees every request really sent: each merged
//! range GET, every retry, HEADs, list pages and multipart parts. Counting at the
//! `ObjectStore` layer would see calls, not requests.

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use http1 as http;
use http_body::{Body, Frame, SizeHint};
use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpRequest, HttpResponse, HttpResponseBody, HttpService,
    ReqwestConnector,
};
use object_store::ClientOptions;

/// At most this many requests are kept in [`HttpCounters::log`].
const MAX_LOGGED_REQUESTS: usize = 100_000;

/// Live counters of a [`CountingConnector`]; shared by every client it creates.
#[derive(Debug, Default)]
pub struct HttpCounters {
    requests: AtomicU64,
    gets: AtomicU64,
    heads: AtomicU64,
    puts: AtomicU64,
    posts: AtomicU64,
    deletes: AtomicU64,
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
    in_flight: AtomicU64,
    max_in_flight: AtomicU64,
    injected_faults: AtomicU64,
    truncated_bodies: AtomicU64,
    log: Mutex<Vec<HttpRequestRecord>>,
}

/// A copy of [`HttpCounters`] at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HttpCountsSnapshot {
    /// All requests (any method), including retries and injected faults.
    pub requests: u64,
    /// GET requests.
    pub gets: u64,
    /// HEAD requests.
    pub heads: u64,
    /// PUT requests.
    pub puts: u64,
    /// POST requests.
    pub posts: u64,
    /// DELETE requests.
    pub deletes: u64,
    /// Response body bytes the client read.
    pub bytes_in: u64,
    /// Request body bytes sent.
    pub bytes_out: u64,
    /// Most requests in flight at once (from sending until the response body is dropped).
    /// Not a difference in [`since`](Self::since): it keeps the later value.
    pub max_in_flight: u64,
    /// Requests answered by fault injection instead of the server.
    pub injected_faults: u64,
    /// Response bodies cut short by fault injection (connection closed mid-body).
    pub truncated_bodies: u64,
}

impl HttpCountsSnapshot {
    /// Counts accumulated since `earlier` (`max_in_flight` is the later snapshot's).
    pub fn since(&self, earlier: &HttpCountsSnapshot) -> HttpCountsSnapshot {
        HttpCountsSnapshot {
            requests: self.requests.saturating_sub(earlier.requests),
            gets: self.gets.saturating_sub(earlier.gets),
            heads: self.heads.saturating_sub(earlier.heads),
            puts: self.puts.saturating_sub(earlier.puts),
            posts: self.posts.saturating_sub(earlier.posts),
            deletes: self.deletes.saturating_sub(earlier.deletes),
            bytes_in: self.bytes_in.saturating_sub(earlier.bytes_in),
            bytes_out: self.bytes_out.saturating_sub(earlier.bytes_out),
            max_in_flight: self.max_in_flight,
            injected_faults: self.injected_faults.saturating_sub(earlier.injected_faults),
            truncated_bodies: self
                .truncated_bodies
                .saturating_sub(earlier.truncated_bodies),
        }
    }
}

/// One request as seen on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpRequestRecord {
    /// HTTP method, e.g. `GET`.
    pub method: String,
    /// Request path (no query string), percent-encoded as sent.
    pub path: String,
    /// The `Range` header, when sent (e.g. `bytes=-65536`).
    pub range: Option<String>,
    /// Response status; 0 when no response arrived (connection error).
    pub status: u16,
}

impl HttpCounters {
    /// Copy the counters.
    pub fn snapshot(&self) -> HttpCountsSnapshot {
        let load = |a: &AtomicU64| a.load(Ordering::SeqCst);
        HttpCountsSnapshot {
            requests: load(&self.requests),
            gets: load(&self.gets),
            heads: load(&self.heads),
            puts: load(&self.puts),
            posts: load(&self.posts),
            deletes: load(&self.deletes),
            bytes_in: load(&self.bytes_in),
            bytes_out: load(&self.bytes_out),
            max_in_flight: load(&self.max_in_flight),
            injected_faults: load(&self.injected_faults),
            truncated_bodies: load(&self.truncated_bodies),
        }
    }

    /// Requests seen so far (the first 100 000), in the order they were sent.
    pub fn log(&self) -> Vec<HttpRequestRecord> {
        self.log.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Forget the request log and restart `max_in_flight` from the current in-flight count.
    pub fn reset_log_and_peak(&self) {
        self.log.lock().unwrap_or_else(|p| p.into_inner()).clear();
        self.max_in_flight
            .store(self.in_flight.load(Ordering::SeqCst), Ordering::SeqCst);
    }

    fn count_request(&self, req: &HttpRequest) {
        self.requests.fetch_add(1, Ordering::SeqCst);
        let per_method = match *req.method() {
            http::Method::GET => Some(&self.gets),
            http::Method::HEAD => Some(&self.heads),
            http::Method::PUT => Some(&self.puts),
            http::Method::POST => Some(&self.posts),
            http::Method::DELETE => Some(&self.deletes),
            _ => None,
        };
        if let Some(counter) = per_method {
            counter.fetch_add(1, Ordering::SeqCst);
        }
        self.bytes_out
            .fetch_add(req.body().content_length() as u64, Ordering::SeqCst);
    }

    fn push_record(&self, record: HttpRequestRecord) {
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        if log.len() < MAX_LOGGED_REQUESTS {
            log.push(record);
        }
    }
}

impl HttpRequestRecord {
    /// Method, path and Range header of `req`; status 0 until the response is known.
    fn of(req: &HttpRequest) -> Self {
        HttpRequestRecord {
            method: req.method().to_string(),
            path: req.uri().path().to_string(),
            range: req
                .headers()
                .get(http::header::RANGE)
                .and_then(|v| v.to_str().ok())
                .map(String::from),
            status: 0,
        }
    }
}

/// Keeps one request counted as in flight until dropped (with the response body).
#[derive(Debug)]
struct InFlight(Arc<HttpCounters>);

impl InFlight {
    fn start(counters: &Arc<HttpCounters>) -> Self {
        let now = counters.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        counters.max_in_flight.fetch_max(now, Ordering::SeqCst);
        Self(Arc::clone(counters))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Settings shared between a connector and the clients it made, changeable at run time.
#[derive(Debug, Default)]
struct Knobs {
    latency_micros: AtomicU64,
    faults_left: AtomicU64,
    fault_status: AtomicU64,
    truncations_left: AtomicU64,
}

/// An [`HttpConnector`] that counts requests and bytes per method, can sleep a fixed time per
/// request (latency injection) and can answer the next requests with an error status without
/// sending them (fault injection: object_store then retries as it would against a real
/// failing server). Pass it with
/// [`OpenOptions::with_http_connector`](crate::io::store::OpenOptions::with_http_connector)
/// or any object_store builder's `with_http_connector`.
#[derive(Debug, Clone)]
pub struct CountingConnector {
    counters: Arc<HttpCounters>,
    knobs: Arc<Knobs>,
}

impl Default for CountingConnector {
    fn default() -> Self {
        Self::new()
    }
}

impl CountingConnector {
    /// A connector over object_store's reqwest client, no latency, no faults.
    pub fn new() -> Self {
        Self {
            counters: Arc::new(HttpCounters::default()),
            knobs: Arc::new(Knobs::default()),
        }
    }

    /// Change the per-request latency (applies to clients already made too).
    pub fn set_latency(&self, latency: Duration) {
        let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        self.knobs.latency_micros.store(micros, Ordering::SeqCst);
    }

    /// Answer the next `count` requests with HTTP `status` (e.g. 503) instead of sending them.
    pub fn fail_next_requests(&self, count: u64, status: http::StatusCode) {
        self.knobs
            .fault_status
            .store(u64::from(status.as_u16()), Ordering::SeqCst);
        self.knobs.faults_left.store(count, Ordering::SeqCst);
    }

    /// Cut the bodies of the next `count` successful responses with a body of at least 2
    /// bytes after half of their `Content-Length`, ending them with an `Interrupted` HTTP
    /// error, as when a connection closes mid-body.
    pub fn truncate_next_responses(&self, count: u64) {
        self.knobs.truncations_left.store(count, Ordering::SeqCst);
    }

    /// The live counters (shared; snapshot and diff them).
    pub fn counters(&self) -> &Arc<HttpCounters> {
        &self.counters
    }

    /// Shortcut for `counters().snapshot()`.
    pub fn snapshot(&self) -> HttpCountsSnapshot {
        self.counters.snapshot()
    }
}

impl HttpConnector for CountingConnector {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        let inner = ReqwestConnector::default().connect(options)?;
        Ok(HttpClient::new(CountingService {
            inner,
            counters: Arc::clone(&self.counters),
            knobs: Arc::clone(&self.knobs),
        }))
    }
}

#[derive(Debug)]
struct CountingService {
    inner: HttpClient,
    counters: Arc<HttpCounters>,
    knobs: Arc<Knobs>,
}

impl CountingService {
    /// Take one pending body truncation for this response, if it qualifies: the byte count
    /// after which its body is cut.
    fn take_truncation(&self, parts: &http::response::Parts) -> Option<u64> {
        if !parts.status.is_success() {
            return None;
        }
        let length: u64 = parts
            .headers
            .get(http::header::CONTENT_LENGTH)?
            .to_str()
            .ok()?
            .parse()
            .ok()?;
        if length < 2 {
            return None;
        }
        self.knobs
            .truncations_left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .ok()?;
        self.counters
            .truncated_bodies
            .fetch_add(1, Ordering::SeqCst);
        Some(length / 2)
    }

    /// Take one injected fault, if any are left.
    fn take_fault(&self) -> Option<http::StatusCode> {
        let taken = self
            .knobs
            .faults_left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        taken.ok()?;
        let code = u16::try_from(self.knobs.fault_status.load(Ordering::SeqCst)).ok()?;
        http::StatusCode::from_u16(code).ok()
    }
}

#[async_trait]
impl HttpService for CountingService {
    async fn call(&self, req: HttpRequest) -> Result<HttpResponse, HttpError> {
        self.counters.count_request(&req);
        let in_flight = InFlight::start(&self.counters);
        let latency = self.knobs.latency_micros.load(Ordering::SeqCst);
        if latency > 0 {
            tokio::time::sleep(Duration::from_micros(latency)).await;
        }
        let mut record = HttpRequestRecord::of(&req);
        if let Some(status) = self.take_fault() {
            self.counters.injected_faults.fetch_add(1, Ordering::SeqCst);
            record.status = status.as_u16();
            self.counters.push_record(record);
            let mut resp =
                HttpResponse::new(HttpResponseBody::from(format!("injected fault {status}")));
            *resp.status_mut() = status;
            return Ok(resp);
        }
        let result = self.inner.execute(req).await;
        record.status = result.as_ref().map(|r| r.status().as_u16()).unwrap_or(0);
        self.counters.push_record(record);
        let (parts, body) = result?.into_parts();
        let cut_after = self.take_truncation(&parts);
        let body = CountingBody {
            inner: body,
            counters: Arc::clone(&self.counters),
            _in_flight: in_flight,
            cut_after,
            seen: 0,
            cut: CutState::Whole,
        };
        Ok(HttpResponse::from_parts(parts, HttpResponseBody::new(body)))
    }
}

/// A response body that adds each data frame's length to `bytes_in` as the client reads it,
/// and optionally ends with an error after `cut_after` bytes (injected truncation).
struct CountingBody {
    inner: HttpResponseBody,
    counters: Arc<HttpCounters>,
    _in_flight: InFlight,
    cut_after: Option<u64>,
    seen: u64,
    cut: CutState,
}

/// Where an injected truncation stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CutState {
    /// Not cut (yet).
    Whole,
    /// The allowed bytes were delivered; the next poll fails.
    ErrorNext,
    /// The error was delivered; the body is over.
    Done,
}

fn closed_early() -> HttpError {
    HttpError::new(
        object_store::client::HttpErrorKind::Interrupted,
        std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "connection closed mid-body (injected by CountingConnector)",
        ),
    )
}

impl Body for CountingBody {
    type Data = Bytes;
    type Error = HttpError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, HttpError>>> {
        match self.cut {
            CutState::Done => return Poll::Ready(None),
            CutState::ErrorNext => {
                self.cut = CutState::Done;
                return Poll::Ready(Some(Err(closed_early())));
            }
            CutState::Whole => {}
        }
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        let Poll::Ready(Some(Ok(frame))) = polled else {
            return polled;
        };
        let Some(data) = frame.data_ref().cloned() else {
            return Poll::Ready(Some(Ok(frame)));
        };
        let room = self.cut_after.map(|limit| limit.saturating_sub(self.seen));
        let data = match room {
            Some(room) if data.len() as u64 >= room => {
                self.cut = CutState::ErrorNext;
                data.slice(..room as usize)
            }
            _ => data,
        };
        self.seen += data.len() as u64;
        self.counters
            .bytes_in
            .fetch_add(data.len() as u64, Ordering::SeqCst);
        if data.is_empty() && self.cut == CutState::ErrorNext {
            self.cut = CutState::Done;
            return Poll::Ready(Some(Err(closed_early())));
        }
        Poll::Ready(Some(Ok(Frame::data(data))))
    }

    fn is_end_stream(&self) -> bool {
        match self.cut {
            CutState::Whole => self.inner.is_end_stream(),
            CutState::ErrorNext => false,
            CutState::Done => true,
        }
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
