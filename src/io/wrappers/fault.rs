//! [`FaultSource`]: deterministic fault injection around any [`RangeSource`] (test and bench
//! tooling; never used by the reader itself).
//!
//! Each *attempt* of a read (a range, suffix or whole-object read of one path) draws its fate
//! from a hash of the seed, the read (kind, path, range) and how many times that same read was
//! attempted before. The outcome therefore does not depend on the order in which concurrent
//! requests happen to arrive: the same seed gives the same faults on every run.
//!
//! Fault kinds ([`FaultKind`]):
//! * `ServerError`: a transient store error shaped like object_store's own for an HTTP 503
//!   (`... status code: 503 Service Unavailable ...`).
//! * `Timeout`: waits [`FaultConfig::timeout_delay`], then fails with an object_store
//!   `HttpError` of kind `Timeout`.
//! * `Stall`: waits [`FaultConfig::stall_delay`], then answers normally.
//! * `Truncate`: the body ends early: the bytes are cut to half their length (the version is
//!   unchanged), as when a connection closes mid-body.
//! * `VersionDrift`: the object was replaced between the metadata read and the data read.
//!   A suffix / whole read reports a different etag than the store has (so later range reads
//!   expecting it find another version); a range read asks the inner source for a version of
//!   another size and etag than the caller expected (so the inner source sees the mismatch).
//!   Only the inner source decides what happens; the wrapper never fabricates the detection.
//!
//! Transient kinds hit at most [`FaultConfig::max_faults_per_read`] attempts of the same read,
//! so a reader that retries at least that often always gets the real bytes in the end.
//! [`FaultConfig::persistent`] paths fail on every attempt. [`FaultSource::counts`] reports
//! what was injected, per kind.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use object_store::client::{HttpError, HttpErrorKind};
use object_store::path::Path;

use crate::error::{Error, Result};
use crate::io::retry::RetryPolicy;
use crate::io::source::{ObjectVersion, RangeSource};

/// What a [`FaultSource`] can do to one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum FaultKind {
    /// A transient 503-like store error.
    ServerError,
    /// A timeout error after [`FaultConfig::timeout_delay`].
    Timeout,
    /// A delay of [`FaultConfig::stall_delay`], then the real answer.
    Stall,
    /// The real answer cut to half its bytes (body closed early).
    Truncate,
    /// The object appears replaced between metadata and data reads.
    VersionDrift,
}

/// Which faults a [`FaultSource`] injects, and how often.
#[derive(Debug, Clone)]
pub(crate) struct FaultConfig {
    /// Seed of every decision.
    pub seed: u64,
    /// Probability (0..=1) of each kind per attempt, checked in this order; the first that
    /// fires wins. Kinds not listed never fire.
    pub probabilities: Vec<(FaultKind, f64)>,
    /// Transient faults hit at most this many attempts of the same read.
    pub max_faults_per_read: u32,
    /// How long a `Timeout` waits before failing.
    pub timeout_delay: Duration,
    /// How long a `Stall` waits before answering.
    pub stall_delay: Duration,
    /// Every attempt on a path containing one of these substrings fails with the given kind
    /// (`ServerError` or `Timeout`; other kinds are applied as they are, every time).
    pub persistent: Vec<(String, FaultKind)>,
}

impl Default for FaultConfig {
    fn default() -> Self {
        Self {
            seed: 0,
            probabilities: Vec::new(),
            max_faults_per_read: 2,
            timeout_delay: Duration::from_millis(5),
            stall_delay: Duration::from_millis(5),
            persistent: Vec::new(),
        }
    }
}

impl FaultConfig {
    /// No faults, decisions seeded by `seed`.
    pub(crate) fn seeded(seed: u64) -> Self {
        Self {
            seed,
            ..Self::default()
        }
    }

    /// Also inject `kind` with probability `p` per attempt.
    pub(crate) fn with(mut self, kind: FaultKind, p: f64) -> Self {
        self.probabilities.push((kind, p));
        self
    }

    /// Fail every attempt on paths containing `path_part` with `kind`.
    pub(crate) fn failing_path(mut self, path_part: impl Into<String>, kind: FaultKind) -> Self {
        self.persistent.push((path_part.into(), kind));
        self
    }
}

/// What a [`FaultSource`] saw and injected so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct FaultCounts {
    /// Attempts seen (all reads, faulty or not).
    pub attempts: u64,
    /// Transient 503-like errors injected.
    pub server_errors: u64,
    /// Timeouts injected.
    pub timeouts: u64,
    /// Stalls injected.
    pub stalls: u64,
    /// Truncated bodies injected.
    pub truncations: u64,
    /// Version drifts injected.
    pub version_drifts: u64,
    /// Attempts failed because their path fails persistently.
    pub persistent: u64,
}

impl FaultCounts {
    /// All injected faults (stalls included).
    pub(crate) fn injected(&self) -> u64 {
        self.server_errors
            + self.timeouts
            + self.stalls
            + self.truncations
            + self.version_drifts
            + self.persistent
    }

    /// Injected faults that make an attempt fail (everything but stalls).
    pub(crate) fn failing(&self) -> u64 {
        self.injected() - self.stalls
    }
}

#[derive(Debug, Default)]
struct Counters {
    attempts: AtomicU64,
    server_errors: AtomicU64,
    timeouts: AtomicU64,
    stalls: AtomicU64,
    truncations: AtomicU64,
    version_drifts: AtomicU64,
    persistent: AtomicU64,
}

/// The error a [`FaultSource`] returns, shaped like object_store's message for a status
/// error so lakeseek classifies it exactly as it would a real one.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub(crate) struct InjectedFault(String);

/// Which kind of read an attempt is, for the decision hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum ReadOp {
    Range,
    Suffix,
    Whole,
}

type ReadKey = (ReadOp, String, u64, u64);

/// Deterministic fault injection around a [`RangeSource`]; see the module docs.
#[derive(Debug, Clone)]
pub(crate) struct FaultSource {
    inner: Arc<dyn RangeSource>,
    config: Arc<FaultConfig>,
    counters: Arc<Counters>,
    attempts_per_read: Arc<Mutex<HashMap<ReadKey, u32>>>,
    persistent: Arc<Mutex<Vec<(String, FaultKind)>>>,
    retry: Option<RetryPolicy>,
}

impl FaultSource {
    /// Wrap `inner` with the faults of `config`.
    pub(crate) fn new(inner: Arc<dyn RangeSource>, config: FaultConfig) -> Self {
        let persistent = Arc::new(Mutex::new(config.persistent.clone()));
        Self {
            inner,
            config: Arc::new(config),
            counters: Arc::default(),
            attempts_per_read: Arc::default(),
            persistent,
            retry: None,
        }
    }

    /// From now on, fail every attempt on paths containing `path_part` with `kind` (shared by
    /// clones, so a reader opened over this source sees it too).
    pub(crate) fn fail_path(&self, path_part: impl Into<String>, kind: FaultKind) {
        self.persistent
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((path_part.into(), kind));
    }

    /// Advertise `policy` as the [`RangeSource::retry_policy`] instead of the inner source's
    /// (tests use small budgets this way).
    pub(crate) fn with_retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.retry = Some(policy);
        self
    }

    /// What was injected so far.
    pub(crate) fn counts(&self) -> FaultCounts {
        let c = &self.counters;
        let load = |a: &AtomicU64| a.load(Ordering::SeqCst);
        FaultCounts {
            attempts: load(&c.attempts),
            server_errors: load(&c.server_errors),
            timeouts: load(&c.timeouts),
            stalls: load(&c.stalls),
            truncations: load(&c.truncations),
            version_drifts: load(&c.version_drifts),
            persistent: load(&c.persistent),
        }
    }

    /// Decide the fate of this attempt and count it.
    fn decide(&self, op: ReadOp, path: &Path, range: &Range<u64>) -> Option<(FaultKind, bool)> {
        self.counters.attempts.fetch_add(1, Ordering::SeqCst);
        let path_str = path.as_ref();
        let persistent_kind = self
            .persistent
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .find(|(part, _)| path_str.contains(part.as_str()))
            .map(|(_, kind)| *kind);
        if let Some(kind) = persistent_kind {
            self.counters.persistent.fetch_add(1, Ordering::SeqCst);
            return Some((kind, true));
        }
        let attempt = {
            let mut map = self
                .attempts_per_read
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let n = map
                .entry((op, path_str.to_string(), range.start, range.end))
                .or_insert(0);
            *n += 1;
            *n - 1
        };
        if attempt >= self.config.max_faults_per_read {
            return None;
        }
        let mut h = Fnv::new(self.config.seed);
        h.write(&[op as u8]);
        h.write(path_str.as_bytes());
        h.write(&range.start.to_le_bytes());
        h.write(&range.end.to_le_bytes());
        h.write(&attempt.to_le_bytes());
        let mut state = h.finish();
        for (kind, p) in &self.config.probabilities {
            state = splitmix64(state);
            let draw = (state >> 11) as f64 / (1u64 << 53) as f64;
            if draw < *p {
                self.count(*kind);
                return Some((*kind, false));
            }
        }
        None
    }

    fn counter(&self, kind: FaultKind) -> &AtomicU64 {
        let c = &self.counters;
        match kind {
            FaultKind::ServerError => &c.server_errors,
            FaultKind::Timeout => &c.timeouts,
            FaultKind::Stall => &c.stalls,
            FaultKind::Truncate => &c.truncations,
            FaultKind::VersionDrift => &c.version_drifts,
        }
    }

    fn count(&self, kind: FaultKind) {
        self.counter(kind).fetch_add(1, Ordering::SeqCst);
    }

    /// A fault applied to the answer (truncation, drift) is only injected when the inner
    /// read answered: a missing object's 404 passes through and the fault is not counted.
    fn applied<T>(&self, kind: FaultKind, inner: Result<T>) -> Result<T> {
        if inner.is_err() && matches!(kind, FaultKind::Truncate | FaultKind::VersionDrift) {
            self.counter(kind).fetch_sub(1, Ordering::SeqCst);
        }
        inner
    }

    /// Apply a failing or delaying fault before the inner call: `Err` for injected errors,
    /// `Ok(())` to go on (after a stall).
    async fn before(
        &self,
        kind: FaultKind,
        persistent: bool,
        path: &Path,
        range: Option<Range<u64>>,
    ) -> Result<()> {
        let why = if persistent {
            "persistent"
        } else {
            "transient"
        };
        match kind {
            FaultKind::ServerError => Err(store_error(
                path,
                range,
                InjectedFault(format!(
                    "Server returned non-2xx status code: 503 Service Unavailable: {why} fault injected by FaultSource"
                )),
            )),
            FaultKind::Timeout => {
                tokio::time::sleep(self.config.timeout_delay).await;
                Err(store_error(
                    path,
                    range,
                    HttpError::new(
                        HttpErrorKind::Timeout,
                        InjectedFault(format!("request timed out ({why} fault injected by FaultSource)")),
                    ),
                ))
            }
            FaultKind::Stall => {
                tokio::time::sleep(self.config.stall_delay).await;
                Ok(())
            }
            FaultKind::Truncate | FaultKind::VersionDrift => Ok(()),
        }
    }
}

fn store_error(
    path: &Path,
    range: Option<Range<u64>>,
    source: impl std::error::Error + Send + Sync + 'static,
) -> Error {
    Error::Store {
        path: path.to_string(),
        range,
        source: std::sync::Arc::new(object_store::Error::Generic {
            store: "FaultSource",
            source: Box::new(source),
        }),
    }
}

/// The first half of `bytes` (a body that ended early).
fn truncated(bytes: Bytes) -> Bytes {
    let keep = bytes.len() / 2;
    bytes.slice(..keep)
}

/// A version of another size and etag than `v`: what a replaced object looks like.
fn drifted(v: &ObjectVersion, seed: u64) -> ObjectVersion {
    ObjectVersion {
        size: v.size.wrapping_add(1),
        etag: Some(format!("\"replaced-{seed:x}\"")),
    }
}

#[async_trait]
impl RangeSource for FaultSource {
    async fn get_range(
        &self,
        path: &Path,
        range: Range<u64>,
        expected: Option<&ObjectVersion>,
    ) -> Result<Bytes> {
        let fate = self.decide(ReadOp::Range, path, &range);
        let Some((kind, persistent)) = fate else {
            return self.inner.get_range(path, range, expected).await;
        };
        self.before(kind, persistent, path, Some(range.clone()))
            .await?;
        match kind {
            FaultKind::Truncate => {
                let inner = self.inner.get_range(path, range, expected).await;
                Ok(truncated(self.applied(kind, inner)?))
            }
            FaultKind::VersionDrift => {
                let replaced = expected.map(|v| drifted(v, self.config.seed));
                let asked = replaced.as_ref().or(expected);
                self.inner.get_range(path, range, asked).await
            }
            _ => self.inner.get_range(path, range, expected).await,
        }
    }

    async fn get_suffix(&self, path: &Path, n: u64) -> Result<(Bytes, ObjectVersion)> {
        let Some((kind, persistent)) = self.decide(ReadOp::Suffix, path, &(0..n)) else {
            return self.inner.get_suffix(path, n).await;
        };
        self.before(kind, persistent, path, None).await?;
        let inner = self.inner.get_suffix(path, n).await;
        let (bytes, version) = self.applied(kind, inner)?;
        Ok(match kind {
            FaultKind::Truncate => (truncated(bytes), version),
            FaultKind::VersionDrift => {
                let etag = Some(format!("\"replaced-{:x}\"", self.config.seed));
                (bytes, ObjectVersion { etag, ..version })
            }
            _ => (bytes, version),
        })
    }

    async fn get_all(&self, path: &Path) -> Result<(Bytes, ObjectVersion)> {
        let Some((kind, persistent)) = self.decide(ReadOp::Whole, path, &(0..0)) else {
            return self.inner.get_all(path).await;
        };
        self.before(kind, persistent, path, None).await?;
        let inner = self.inner.get_all(path).await;
        let (bytes, version) = self.applied(kind, inner)?;
        Ok(match kind {
            FaultKind::Truncate => (truncated(bytes), version),
            FaultKind::VersionDrift => {
                let etag = Some(format!("\"replaced-{:x}\"", self.config.seed));
                (bytes, ObjectVersion { etag, ..version })
            }
            _ => (bytes, version),
        })
    }

    fn coalesce_gap(&self) -> u64 {
        self.inner.coalesce_gap()
    }

    fn describe(&self) -> String {
        format!(
            "{} (faults, seed {})",
            self.inner.describe(),
            self.config.seed
        )
    }

    fn retry_policy(&self) -> Option<RetryPolicy> {
        self.retry.clone().or_else(|| self.inner.retry_policy())
    }

    fn coalesce_waste(&self) -> Option<f64> {
        self.inner.coalesce_waste()
    }

    fn hedge_config(&self) -> crate::io::hedge::HedgeConfig {
        self.inner.hedge_config()
    }
}

/// FNV-1a, seeded: a stable hash (std's hashers are randomly keyed or unspecified).
struct Fnv(u64);

impl Fnv {
    fn new(seed: u64) -> Self {
        Fnv(0xcbf2_9ce4_8422_2325 ^ splitmix64(seed))
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        splitmix64(self.0)
    }
}

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[cfg(test)]
#[path = "fault_tests.rs"]
mod tests;
