//! The fault wrappers of [`S3Server`](crate::S3Server): server-side faults injected in
//! front of the s3s service, each driven by counters (never by time alone):
//!
//! * `503 SlowDown` for the next `n` requests ([`ServerFaults::fail_next`]);
//! * slow answers: every `n`-th request waits `delay` before it is served
//!   ([`ServerFaults::slow_every`]; `n = 1` makes every answer slow);
//! * stalls mid-body: the next `n` GETs send their headers and half the body, then nothing
//!   ([`ServerFaults::stall_next`]; the client's read timeout must cut them off);
//! * connection resets: the next `n` requests get no answer, the connection is dropped
//!   ([`ServerFaults::reset_next`]);
//! * a gate: while closed, requests wait inside the server ([`ServerFaults::close_gate`]),
//!   so a test can see how many requests a client has in flight
//!   ([`ServerFaults::waiting_at_gate`]) and that cancelled ones go away; closed to data-file
//!   GETs only ([`ServerFaults::close_gate_for_data_gets`]), it holds a scan surely in flight
//!   while its metadata reads pass.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;

/// Counters and switches of the injected faults, shared by the server and the test.
#[derive(Debug, Default)]
pub struct ServerFaults {
    requests: AtomicU64,
    fail_left: AtomicU64,
    slow_every: AtomicU64,
    slow_delay_ms: AtomicU64,
    stall_left: AtomicU64,
    reset_left: AtomicU64,
    gate_closed: AtomicBool,
    gate_data_gets_only: AtomicBool,
    gate_held: AtomicU64,
    gate: tokio::sync::Notify,
    at_gate: AtomicU64,
    gate_max: AtomicU64,
    active: AtomicU64,
    active_max: AtomicU64,
}

impl ServerFaults {
    /// Requests received (faults included).
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }

    /// Answer the next `n` requests with `503 SlowDown`.
    pub fn fail_next(&self, n: u64) {
        self.fail_left.store(n, Ordering::SeqCst);
    }

    /// Delay every `n`-th request by `delay` (`n = 0` turns it off).
    pub fn slow_every(&self, n: u64, delay: Duration) {
        self.slow_delay_ms
            .store(delay.as_millis() as u64, Ordering::SeqCst);
        self.slow_every.store(n, Ordering::SeqCst);
    }

    /// Stall the body of the next `n` successful GETs halfway.
    pub fn stall_next(&self, n: u64) {
        self.stall_left.store(n, Ordering::SeqCst);
    }

    /// Drop the connection of the next `n` requests without an answer.
    pub fn reset_next(&self, n: u64) {
        self.reset_left.store(n, Ordering::SeqCst);
    }

    /// Hold every request at the gate until [`open_gate`](Self::open_gate).
    pub fn close_gate(&self) {
        self.gate_data_gets_only.store(false, Ordering::SeqCst);
        self.gate_closed.store(true, Ordering::SeqCst);
    }

    /// Hold only the GETs of data files (keys with `/data/`) at the gate until
    /// [`open_gate`](Self::open_gate); every other request passes.
    pub fn close_gate_for_data_gets(&self) {
        self.gate_data_gets_only.store(true, Ordering::SeqCst);
        self.gate_closed.store(true, Ordering::SeqCst);
    }

    /// Let the held requests (and later ones) through.
    pub fn open_gate(&self) {
        self.gate_closed.store(false, Ordering::SeqCst);
        self.gate.notify_waiters();
    }

    /// Requests waiting at the closed gate now (a cancelled client request leaves when the
    /// server notices its connection closed).
    pub fn waiting_at_gate(&self) -> u64 {
        self.at_gate.load(Ordering::SeqCst)
    }

    /// Requests that have waited at the closed gate so far (those let through included).
    pub fn gate_held(&self) -> u64 {
        self.gate_held.load(Ordering::SeqCst)
    }

    /// The most requests that ever waited at the gate at once.
    pub fn gate_peak(&self) -> u64 {
        self.gate_max.load(Ordering::SeqCst)
    }

    /// Requests being served now.
    pub fn active(&self) -> u64 {
        self.active.load(Ordering::SeqCst)
    }

    /// The most requests ever served at once (gate included).
    pub fn active_peak(&self) -> u64 {
        self.active_max.load(Ordering::SeqCst)
    }

    /// Start counting [`active_peak`](Self::active_peak) again from the requests served now.
    pub fn reset_active_peak(&self) {
        self.active_max.store(self.active(), Ordering::SeqCst);
    }

    fn take(counter: &AtomicU64) -> bool {
        counter
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
    }

    /// Wait while the gate is closed to this request (`data_get`: a GET of a data file).
    async fn pass_gate(&self, data_get: bool) {
        if !self.gate_closed.load(Ordering::SeqCst) {
            return;
        }
        if !data_get && self.gate_data_gets_only.load(Ordering::SeqCst) {
            return;
        }
        self.gate_held.fetch_add(1, Ordering::SeqCst);
        let _waiting = Counted::new(&self.at_gate, Some(&self.gate_max));
        loop {
            let notified = self.gate.notified();
            if !self.gate_closed.load(Ordering::SeqCst) {
                return;
            }
            notified.await;
        }
    }

    fn slow_delay(&self, nth: u64) -> Option<Duration> {
        let every = self.slow_every.load(Ordering::SeqCst);
        (every > 0 && nth.is_multiple_of(every))
            .then(|| Duration::from_millis(self.slow_delay_ms.load(Ordering::SeqCst)))
    }
}

/// Increments a counter while alive (and tracks its peak).
struct Counted<'a>(&'a AtomicU64);

impl<'a> Counted<'a> {
    fn new(counter: &'a AtomicU64, peak: Option<&AtomicU64>) -> Self {
        let now = counter.fetch_add(1, Ordering::SeqCst) + 1;
        if let Some(peak) = peak {
            peak.fetch_max(now, Ordering::SeqCst);
        }
        Self(counter)
    }
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The s3s service behind the fault wrappers.
#[derive(Clone)]
pub(crate) struct FaultyService {
    pub(crate) inner: s3s::service::S3Service,
    pub(crate) faults: Arc<ServerFaults>,
}

type BoxedResponse =
    Pin<Box<dyn std::future::Future<Output = Result<s3s::HttpResponse, s3s::HttpError>> + Send>>;

fn slow_down() -> s3s::HttpResponse {
    let body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\
        <Error><Code>SlowDown</Code><Message>injected by the test server</Message></Error>";
    http::Response::builder()
        .status(http::StatusCode::SERVICE_UNAVAILABLE)
        .header(http::header::CONTENT_TYPE, "application/xml")
        .body(s3s::Body::from(body.to_string()))
        .expect("static response")
}

impl hyper::service::Service<http::Request<hyper::body::Incoming>> for FaultyService {
    type Response = s3s::HttpResponse;
    type Error = s3s::HttpError;
    type Future = BoxedResponse;

    fn call(&self, req: http::Request<hyper::body::Incoming>) -> Self::Future {
        let nth = self.faults.requests.fetch_add(1, Ordering::SeqCst) + 1;
        let faults = Arc::clone(&self.faults);
        let inner = self.inner.clone();
        let data_get = req.method() == http::Method::GET && req.uri().path().contains("/data/");
        Box::pin(async move {
            let _active = Counted::new(&faults.active, Some(&faults.active_max));
            faults.pass_gate(data_get).await;
            if ServerFaults::take(&faults.fail_left) {
                return Ok(slow_down());
            }
            if ServerFaults::take(&faults.reset_left) {
                return Err(s3s::HttpError::new(Box::new(std::io::Error::from(
                    std::io::ErrorKind::ConnectionReset,
                ))));
            }
            if let Some(delay) = faults.slow_delay(nth) {
                tokio::time::sleep(delay).await;
            }
            let is_get = req.method() == http::Method::GET;
            let resp = hyper::service::Service::call(&inner, req).await?;
            if is_get && resp.status().is_success() && ServerFaults::take(&faults.stall_left) {
                return Ok(stall_halfway(resp).await);
            }
            Ok(resp)
        })
    }
}

/// `resp` with its headers (and `Content-Length`) intact but only half of its body sent.
async fn stall_halfway(resp: s3s::HttpResponse) -> s3s::HttpResponse {
    let (parts, body) = resp.into_parts();
    let full = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let half = full.slice(..full.len() / 2);
    let body = s3s::Body::http_body(StalledBody { first: Some(half) });
    http::Response::from_parts(parts, body)
}

/// Sends one chunk, then never anything again.
struct StalledBody {
    first: Option<Bytes>,
}

impl http_body::Body for StalledBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Infallible>>> {
        match self.first.take() {
            Some(chunk) => Poll::Ready(Some(Ok(http_body::Frame::data(chunk)))),
            None => Poll::Pending,
        }
    }
}
