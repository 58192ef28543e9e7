//! The shaping layer of the benchmark S3 server: a first-byte delay per request (fixed or
//! lognormal), a per-connection bandwidth cap, request/byte counting with a per-request log,
//! and the control endpoint (`/__proxy__/{stats,reset,config}`) that reads and resets the
//! counters and changes the shaping while the server runs.
//!
//! The log schema is that of `../shared/peer-bench/s3proxy.py` (and its `rig/aproxy.py`):
//! `{method, kind, path, range, status, resp_bytes, req_bytes, delay_ms, start_ms, t_ms}` per
//! request, so the peer-bench helpers (`summarize`, `round_trips`) read it unchanged.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::StreamBody;
use hyper::body::Frame;
use serde::Serialize;

/// Response bodies are paced in pieces of this many bytes.
pub(crate) const PIECE: usize = 16 * 1024;

/// z of the 99th percentile of the standard normal distribution.
const Z99: f64 = 2.326_347_874;

/// Latency and bandwidth shaping, changeable at run time.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Shape {
    /// Median (lognormal) or fixed first-byte delay in ms.
    pub(crate) delay_ms: f64,
    /// `fixed` or `lognormal`.
    pub(crate) dist: String,
    /// 99th percentile of the lognormal delay in ms.
    pub(crate) p99_ms: f64,
    /// Per-connection bandwidth cap in MB/s (1e6 B/s); 0 = none.
    pub(crate) bw_mbps: f64,
}

/// One served request, as logged.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Entry {
    method: String,
    kind: &'static str,
    path: String,
    range: Option<String>,
    status: u16,
    resp_bytes: u64,
    req_bytes: u64,
    delay_ms: f64,
    /// Arrival, ms since the last reset.
    start_ms: f64,
    /// Last byte sent, ms since the last reset.
    t_ms: f64,
}

/// Counters of one kind of request.
#[derive(Debug, Clone, Default, Serialize)]
struct Counts {
    requests: u64,
    resp_bytes: u64,
    req_bytes: u64,
}

/// Everything reset together.
#[derive(Debug)]
struct Log {
    t0: Instant,
    entries: Vec<Entry>,
    by_kind: BTreeMap<&'static str, Counts>,
    max_inflight: u64,
}

/// Shared state of the shaping layer.
#[derive(Debug)]
pub(crate) struct Shaper {
    shape: Mutex<Shape>,
    rng: Mutex<u64>,
    log: Mutex<Log>,
    inflight: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// splitmix64 step: a seeded, dependency-free uniform stream.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniform draw in (0, 1).
fn unit(state: &mut u64) -> f64 {
    ((splitmix(state) >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

/// Classify a request as peer-bench does: LIST (GET of a bucket), GET, HEAD, PUT, ...
fn classify(method: &str, path: &str, query: &str) -> &'static str {
    let has_key = path
        .trim_start_matches('/')
        .split_once('/')
        .is_some_and(|(_, k)| !k.is_empty());
    match method {
        "GET" if !has_key => "LIST",
        "GET" => "GET",
        "HEAD" => "HEAD",
        "PUT" if query.contains("partNumber") => "PUT_PART",
        "PUT" => "PUT",
        "POST" => "POST",
        "DELETE" => "DELETE",
        _ => "OTHER",
    }
}

/// What a request is, captured on arrival.
#[derive(Debug, Clone)]
pub(crate) struct Arrival {
    method: String,
    path: String,
    query: String,
    range: Option<String>,
    req_bytes: u64,
    at: Instant,
    delay_ms: f64,
}

impl Shaper {
    /// A shaper with `shape` and a seeded lognormal stream.
    pub(crate) fn new(shape: Shape, seed: u64) -> Arc<Self> {
        Arc::new(Self {
            shape: Mutex::new(shape),
            rng: Mutex::new(seed),
            log: Mutex::new(Log {
                t0: Instant::now(),
                entries: Vec::new(),
                by_kind: BTreeMap::new(),
                max_inflight: 0,
            }),
            inflight: AtomicU64::new(0),
        })
    }

    /// The shaping in effect.
    pub(crate) fn shape(&self) -> Shape {
        lock(&self.shape).clone()
    }

    /// Replace the shaping.
    pub(crate) fn set_shape(&self, shape: Shape) {
        *lock(&self.shape) = shape;
    }

    /// Draw the first-byte delay of one request.
    fn sample_delay(&self) -> f64 {
        let shape = self.shape();
        if shape.delay_ms <= 0.0 {
            return 0.0;
        }
        if shape.dist == "lognormal" && shape.p99_ms > shape.delay_ms {
            let sigma = (shape.p99_ms / shape.delay_ms).ln() / Z99;
            let mut rng = lock(&self.rng);
            // Box-Muller: one standard normal draw.
            let (u1, u2) = (unit(&mut rng), unit(&mut rng));
            let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            return shape.delay_ms * (sigma * z).exp();
        }
        shape.delay_ms
    }

    /// A request arrived: count it in flight and draw its delay.
    pub(crate) fn arrive(
        &self,
        method: &str,
        path: &str,
        query: &str,
        range: Option<String>,
        req_bytes: u64,
    ) -> Arrival {
        let now = self.inflight.fetch_add(1, Ordering::SeqCst) + 1;
        {
            let mut log = lock(&self.log);
            log.max_inflight = log.max_inflight.max(now);
        }
        Arrival {
            method: method.to_string(),
            path: path.to_string(),
            query: query.to_string(),
            range,
            req_bytes,
            at: Instant::now(),
            delay_ms: self.sample_delay(),
        }
    }

    /// The request's first-byte delay.
    pub(crate) fn delay(a: &Arrival) -> Duration {
        Duration::from_secs_f64(a.delay_ms / 1000.0)
    }

    /// The request's response is fully sent: log it and take it out of flight.
    pub(crate) fn finish(&self, a: &Arrival, status: u16, resp_bytes: u64) {
        self.inflight.fetch_sub(1, Ordering::SeqCst);
        let mut log = lock(&self.log);
        let ms =
            |t: Instant| (t.saturating_duration_since(log.t0).as_secs_f64() * 1e5).round() / 100.0;
        let kind = classify(&a.method, &a.path, &a.query);
        let entry = Entry {
            method: a.method.clone(),
            kind,
            path: a.path.clone(),
            range: a.range.clone(),
            status,
            resp_bytes: if a.method == "HEAD" { 0 } else { resp_bytes },
            req_bytes: a.req_bytes,
            delay_ms: (a.delay_ms * 100.0).round() / 100.0,
            start_ms: ms(a.at),
            t_ms: ms(Instant::now()),
        };
        let c = log.by_kind.entry(kind).or_default();
        c.requests += 1;
        c.resp_bytes += entry.resp_bytes;
        c.req_bytes += entry.req_bytes;
        log.entries.push(entry);
    }

    /// Zero the counters and the log.
    pub(crate) fn reset(&self) {
        let mut log = lock(&self.log);
        log.t0 = Instant::now();
        log.entries.clear();
        log.by_kind.clear();
        log.max_inflight = self.inflight.load(Ordering::SeqCst);
    }

    /// The stats JSON (with the per-request log unless `with_log` is false).
    pub(crate) fn stats_json(&self, with_log: bool) -> serde_json::Value {
        let shape = self.shape();
        let log = lock(&self.log);
        let mut total = Counts::default();
        for c in log.by_kind.values() {
            total.requests += c.requests;
            total.resp_bytes += c.resp_bytes;
            total.req_bytes += c.req_bytes;
        }
        let mut out = serde_json::json!({
            "delay_ms": shape.delay_ms, "dist": shape.dist, "p99_ms": shape.p99_ms,
            "bw_mbps": shape.bw_mbps, "max_inflight": log.max_inflight,
            "by_kind": log.by_kind, "total": total,
        });
        if with_log {
            out["log"] = serde_json::to_value(&log.entries).unwrap_or_default();
        }
        out
    }

    /// Answer a control request (`cmd` after `/__proxy__/`); `None` for an unknown command.
    pub(crate) fn control(&self, cmd: &str, query: &str) -> Option<serde_json::Value> {
        let params: Vec<(&str, &str)> = query
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .collect();
        let param = |k: &str| params.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
        match cmd {
            "reset" => {
                self.reset();
                Some(serde_json::json!({}))
            }
            "stats" => Some(self.stats_json(param("log") != Some("0"))),
            "config" => {
                let mut shape = self.shape();
                let num = |k: &str, old: f64| param(k).and_then(|v| v.parse().ok()).unwrap_or(old);
                shape.delay_ms = num("delay_ms", shape.delay_ms);
                shape.p99_ms = num("p99_ms", shape.p99_ms);
                shape.bw_mbps = num("bw_mbps", shape.bw_mbps);
                if let Some(d) = param("dist").filter(|d| ["fixed", "lognormal"].contains(d)) {
                    shape.dist = d.to_string();
                }
                if let Some(seed) = param("seed").and_then(|v| v.parse().ok()) {
                    *lock(&self.rng) = seed;
                }
                self.set_shape(shape.clone());
                serde_json::to_value(shape).ok()
            }
            _ => None,
        }
    }
}

/// A request in flight: logged once, when its response is complete, or (status 499, as
/// for a client that closed the connection) when dropped before that: the losing copy of a
/// hedged read is cancelled by its client and still counts as a request the server saw.
pub(crate) struct InFlight {
    shaper: Arc<Shaper>,
    arrival: Option<Arrival>,
}

impl InFlight {
    /// Track `arrival`.
    pub(crate) fn new(shaper: Arc<Shaper>, arrival: Arrival) -> Self {
        Self {
            shaper,
            arrival: Some(arrival),
        }
    }

    /// The request's first-byte delay.
    pub(crate) fn delay(&self) -> Duration {
        self.arrival.as_ref().map(Shaper::delay).unwrap_or_default()
    }

    /// The response is complete: log it.
    pub(crate) fn finish(&mut self, status: u16, resp_bytes: u64) {
        if let Some(a) = self.arrival.take() {
            self.shaper.finish(&a, status, resp_bytes);
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.finish(499, 0);
    }
}

/// A body that sends `payload` at `bytes_per_sec` (after the first piece, which goes at
/// once), and logs the request when its last piece is handed to the connection.
pub(crate) fn paced_body(
    request: InFlight,
    status: u16,
    payload: Bytes,
    bytes_per_sec: f64,
) -> s3s::Body {
    let total = payload.len();
    let start = Instant::now();
    let state = (request, payload, 0usize);
    let stream = futures::stream::unfold(state, move |(mut request, payload, sent)| async move {
        if sent >= total {
            return None;
        }
        let next = (sent + PIECE).min(total);
        if sent > 0 && bytes_per_sec > 0.0 {
            let due = start + Duration::from_secs_f64(next as f64 / bytes_per_sec);
            tokio::time::sleep_until(due.into()).await;
        }
        if next == total {
            request.finish(status, total as u64);
        }
        let piece = payload.slice(sent..next);
        Some((
            Ok::<_, Infallible>(Frame::data(piece)),
            (request, payload, next),
        ))
    });
    s3s::Body::http_body_unsync(StreamBody::new(stream))
}
