//! Retries of transient failures of reads and listings, for
//! [`RangeFetcher`](crate::io::RangeFetcher) and [`ObjectStoreLister`](crate::io::list::ObjectStoreLister).
//!
//! lakeseek's retry loop owns the retries of every read (a range GET, a suffix GET or a
//! whole-object GET) and every LIST of the stores [`open_url`](crate::io::open_url) builds:
//! their object_store client is built with **no retries of its own** (`max_retries = 0` in
//! its `RetryConfig`), so each attempt is one HTTP request, and each attempt waits for a slot
//! of the store's admission control, tells the store's adaptive limit how it ended (a timeout
//! or a 503 / 429 / `SlowDown` lowers it) and, when it is a retry, spends a token of the
//! store's retry budget ([`with_admitted_retries`]). A timed-out request is therefore never
//! retried behind the limiter's back: a slow store gets less load, not ten times more.
//! (Writes, and the store handle [`OpenedUrl::store`](crate::io::OpenedUrl) hands to other
//! code, keep object_store's own retries.)
//!
//! What is retried: 5xx, 429, 408, timeouts and dropped connections ([`is_transient`]), a
//! body shorter than the range asked for ([`ShortBody`]), an attempt that exceeded
//! [`RetryPolicy::attempt_timeout`]. A store handed in by the caller may retry on its own
//! (lakeseek does not know its configuration, [`RetryPolicy::store_retries`]): an error that
//! comes out of object_store's HTTP retry layer of such a store has used that budget already
//! and is final here ([`already_retried`]), so the two layers do not multiply.
//!
//! ## Bounds
//! * HTTP requests per read: at most `max_retries + 1` (each attempt is one request; a
//!   hedged attempt adds at most one duplicate GET, [`crate::io::hedge`]); per listing of `k`
//!   pages at most `k + max_retries` (a retry resumes after the last object seen). The
//!   retry budget stops retries sooner while the store fails most requests. (A store handed
//!   in with `r` retries of its own: at most `(max_retries + 1) * (r + 1)`.)
//!   [`open_url`](crate::io::open_url) applies the `max_retries` / `retry_timeout_secs` /
//!   `retry_init_backoff_ms` / `retry_max_backoff_ms` storage options to this loop (and to
//!   object_store's retries of writes).
//! * Time: no new attempt starts later than `retry_timeout` after the first one (time queued
//!   for admission not counted), a backoff never sleeps past that deadline, and with
//!   `attempt_timeout` set each attempt is cut off after that long (counted as a transient
//!   timeout). Total time is therefore at most `retry_timeout + attempt_timeout` (or
//!   `retry_timeout` + one store-bounded attempt) plus the time queued.
//! * Backoff: exponential from `init_backoff`, capped at `max_backoff`, with "equal jitter"
//!   (a uniformly random point in the upper half of the step).
//!
//! ## What is retried ([`should_retry`])
//! Only [`Error::Store`] errors whose cause is transient ([`is_transient`]: a 5xx / 408 / 429
//! status, an HTTP connect / request / timeout / interrupted error, an I/O error such as a
//! reset connection or an unexpected EOF, a short body) and that the store did not retry
//! already. `NotFound`, `Corrupt` (decoders), `InvalidArgument`, other 4xx (403, 404, 412, ...)
//! and a changed object ([`ObjectChanged`](crate::io::ObjectChanged)) are never retried. When
//! the retries run out, the error is wrapped in [`RetriesExhausted`] (path and range stay on
//! the [`Error::Store`]).

use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

#[cfg(feature = "cloud")]
use object_store::client::{HttpError, HttpErrorKind};

use crate::error::{Error, Result};
use crate::io::adaptive_limit::{Outcome, RequestKind};
use crate::io::admission::{Admission, Permit};
pub(crate) use crate::io::retry_budget::RetryBudget;
use crate::io::stats::IoStats;

/// How [`RangeFetcher`](crate::io::RangeFetcher) retries transient read failures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RetryPolicy {
    /// Retries after the first attempt (0 disables lakeseek's retries).
    pub max_retries: usize,
    /// First backoff.
    pub init_backoff: Duration,
    /// Largest backoff.
    pub max_backoff: Duration,
    /// No attempt starts later than this after the first one.
    pub retry_timeout: Duration,
    /// Cut off a single attempt after this long (a transient timeout); `None` leaves it to
    /// the store's own request timeout.
    pub attempt_timeout: Option<Duration>,
    /// Whether the store's client may retry on its own before an error reaches lakeseek
    /// (true for stores handed in by the caller: their errors marked as retried by
    /// object_store are final here); false for the stores [`open_url`](crate::io::open_url)
    /// builds, whose object_store retries are off, so every transient error is retried here.
    pub store_retries: bool,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            init_backoff: Duration::from_millis(50),
            max_backoff: Duration::from_secs(2),
            retry_timeout: Duration::from_secs(30),
            attempt_timeout: None,
            store_retries: true,
        }
    }
}

impl RetryPolicy {
    /// No retries at this layer.
    #[cfg(test)]
    pub(crate) fn none() -> Self {
        Self {
            max_retries: 0,
            ..Self::default()
        }
    }

    /// Backoff before retry number `retry` (1-based): `init * 2^(retry-1)` capped at
    /// `max_backoff`, then jittered into its upper half.
    pub(crate) fn backoff(&self, retry: u32) -> Duration {
        let factor = 1u32
            .checked_shl(retry.saturating_sub(1).min(20))
            .unwrap_or(u32::MAX);
        let step = self
            .init_backoff
            .saturating_mul(factor)
            .min(self.max_backoff.max(self.init_backoff));
        let half = step / 2;
        let jitter = half.mul_f64(random_unit());
        half + jitter
    }
}

/// A uniformly distributed number in `[0, 1)` (randomly keyed hasher; no extra dependency).
fn random_unit() -> f64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u64(0x9e37_79b9_7f4a_7c15);
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// A read returned fewer bytes than it asked for (a body closed early, a truncating proxy):
/// transient, retried, never decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("short read: asked for {wanted} bytes, got {got} (body ended early)")]
pub(crate) struct ShortBody {
    /// Bytes asked for.
    pub wanted: u64,
    /// Bytes received.
    pub got: u64,
}

impl ShortBody {
    /// The [`Error::Store`] for a short body of `path` / `range`.
    pub(crate) fn error(path: &str, range: Option<Range<u64>>, wanted: u64, got: u64) -> Error {
        Error::Store {
            path: path.to_string(),
            range,
            source: std::sync::Arc::new(object_store::Error::Generic {
                store: "lakeseek",
                source: Box::new(ShortBody { wanted, got }),
            }),
        }
    }
}

/// A single attempt took longer than [`RetryPolicy::attempt_timeout`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("attempt timed out after {0:?}")]
pub(crate) struct AttemptTimedOut(pub Duration);

/// Which bytes a retried read asks for (named in errors).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReadSpan {
    /// A bounded range.
    Range(Range<u64>),
    /// A listing of the objects under a prefix.
    List,
    /// The last `n` bytes.
    Suffix(u64),
    /// The whole object.
    Whole,
}

impl std::fmt::Display for ReadSpan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadSpan::Range(r) => write!(f, "range read of bytes {}..{}", r.start, r.end),
            ReadSpan::Suffix(n) => write!(f, "suffix read of the last {n} bytes"),
            ReadSpan::Whole => write!(f, "whole-object read"),
            ReadSpan::List => write!(f, "listing"),
        }
    }
}

impl ReadSpan {
    fn range(&self) -> Option<Range<u64>> {
        match self {
            ReadSpan::Range(r) => Some(r.clone()),
            _ => None,
        }
    }
}

/// The last error of a read that was retried until its budget ran out.
#[derive(Debug, thiserror::Error)]
#[error("gave up on the {read} after {attempts} attempts in {elapsed:?}: {last}")]
pub(crate) struct RetriesExhausted {
    /// The read that failed.
    pub read: ReadSpan,
    /// Attempts made (first one included).
    pub attempts: u32,
    /// Time from the first attempt to giving up.
    pub elapsed: Duration,
    /// The last attempt's error.
    #[source]
    pub last: std::sync::Arc<object_store::Error>,
}

/// A listing failed after some objects were visited, on a store that lists in no particular
/// order: it cannot resume without showing objects again, so it is not retried.
#[derive(Debug, thiserror::Error)]
#[error("listing failed part way on a store without a listing order (not resumable): {0}")]
pub(crate) struct ListNotResumable(#[source] pub(crate) Arc<object_store::Error>);

/// object_store stores whose HTTP client retries before an error reaches lakeseek (the
/// `store` name of their `Generic` errors).
pub(crate) const SELF_RETRYING_STORES: &[&str] =
    &["S3", "GCS", "MicrosoftAzure", "HTTP", "HTTP client"];

/// Whether `err` came out of object_store's own HTTP retry layer (so its budget is spent).
pub(crate) fn already_retried(err: &Error) -> bool {
    matches!(err, Error::Store { source, .. }
        if matches!(&**source, object_store::Error::Generic { store, .. }
            if SELF_RETRYING_STORES.contains(store)))
}

/// Whether lakeseek retries `err`: transient and not already retried by object_store.
pub(crate) fn should_retry(err: &Error) -> bool {
    is_transient(err) && !already_retried(err)
}

/// [`should_retry`] under `policy`: when the store does not retry on its own
/// ([`RetryPolicy::store_retries`] false), every transient error is retried here.
pub(crate) fn should_retry_under(policy: &RetryPolicy, err: &Error) -> bool {
    if policy.store_retries {
        should_retry(err)
    } else {
        is_transient(err)
    }
}

/// Whether `err` is a transient store failure (see the module docs); it may still have been
/// retried by object_store already ([`already_retried`]).
pub(crate) fn is_transient(err: &Error) -> bool {
    match err {
        Error::Store { source, .. } => is_transient_store_error(source),
        _ => false,
    }
}

/// Whether an object_store error is transient. Only `Generic` errors can be: every other
/// variant (NotFound, Precondition, PermissionDenied, ...) is a definite answer.
pub(crate) fn is_transient_store_error(err: &object_store::Error) -> bool {
    match err {
        object_store::Error::Generic { source, .. } => chain_is_transient(source.as_ref()),
        _ => false,
    }
}

/// Walk an error's cause chain; the first cause that says something decides.
fn chain_is_transient(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = current {
        if let Some(verdict) = classify_one(e) {
            return verdict;
        }
        current = e.source();
    }
    false
}

fn classify_one(e: &(dyn std::error::Error + 'static)) -> Option<bool> {
    if e.is::<RetriesExhausted>() || e.is::<ListNotResumable>() {
        return Some(false);
    }
    if e.is::<ShortBody>() || e.is::<AttemptTimedOut>() {
        return Some(true);
    }
    #[cfg(feature = "cloud")]
    if let Some(http) = e.downcast_ref::<HttpError>() {
        return Some(matches!(
            http.kind(),
            HttpErrorKind::Connect
                | HttpErrorKind::Request
                | HttpErrorKind::Timeout
                | HttpErrorKind::Interrupted
        ));
    }
    if let Some(io) = e.downcast_ref::<std::io::Error>() {
        use std::io::ErrorKind::*;
        return Some(matches!(
            io.kind(),
            TimedOut
                | Interrupted
                | ConnectionReset
                | ConnectionAborted
                | ConnectionRefused
                | UnexpectedEof
                | BrokenPipe
                | WouldBlock
        ));
    }
    // object_store's retry error is not a public type; its status shows in its message as
    // "... status code: 503 Service Unavailable ...".
    status_in_message(&e.to_string()).map(is_transient_status)
}

/// The HTTP status an object_store error reports, if any (the first in its cause chain).
pub(crate) fn store_error_status(err: &object_store::Error) -> Option<u16> {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = current {
        if let Some(status) = status_in_message(&e.to_string()) {
            return Some(status);
        }
        current = e.source();
    }
    None
}

/// The HTTP status in an object_store status error message, if any.
fn status_in_message(message: &str) -> Option<u16> {
    const MARKER: &str = "status code: ";
    let at = message.find(MARKER)? + MARKER.len();
    let digits = message.get(at..at + 3)?;
    digits.parse().ok()
}

/// 5xx, 408 (request timeout) and 429 (too many requests) are worth retrying.
pub(crate) fn is_transient_status(status: u16) -> bool {
    (500..600).contains(&status) || status == 408 || status == 429
}

/// Run `attempt` until it succeeds, fails permanently, or the policy's budget runs out,
/// counting each retry in `stats`. `path` / `read` name the read in errors. With a
/// session's [`RetryBudget`], each retry also spends one of its tokens (none left: the
/// error is final) and a success earns some back.
#[cfg_attr(not(test), allow(dead_code))] // the tests'; reads go through `with_admitted_retries`
pub(crate) async fn with_retries<T, F, Fut>(
    policy: &RetryPolicy,
    budget: Option<&RetryBudget>,
    stats: &IoStats,
    path: &str,
    read: ReadSpan,
    attempt: F,
) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T>>,
{
    let gate = Gate {
        admission: None,
        budget,
    };
    retry_loop(policy, gate, stats, path, read, attempt).await
}

/// [`with_retries`] where every attempt first waits for a slot of `admission` (the store's
/// admission control) and frees it when it ends, reporting how it ended to the store's
/// adaptive limit: a retry goes back through the limit (behind the requests queued
/// meanwhile) and spends a token of the store's retry budget, unless the limit was lowered
/// since the failed attempt was sent (the store then gets less load, not more). Without
/// `admission` it is [`with_retries`] without a budget. Queue time is not part of the
/// attempt timeout nor of the retry deadline.
pub(crate) async fn with_admitted_retries<T, F, Fut>(
    policy: &RetryPolicy,
    admission: Option<&Arc<Admission>>,
    kind: RequestKind,
    stats: &IoStats,
    path: &str,
    read: ReadSpan,
    attempt: F,
) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T>>,
{
    let gate = Gate {
        admission: admission.map(|a| (a, kind)),
        budget: admission.map(|a| a.retry_budget()),
    };
    retry_loop(policy, gate, stats, path, read, attempt).await
}

/// What each attempt of a retry loop goes through.
struct Gate<'a> {
    admission: Option<(&'a Arc<Admission>, RequestKind)>,
    budget: Option<&'a RetryBudget>,
}

impl Gate<'_> {
    /// A slot for one attempt (none without admission control) and the time queued for it.
    async fn admit(&self, stats: &IoStats) -> (Option<Permit>, Duration) {
        let Some((admission, kind)) = self.admission else {
            return (None, Duration::ZERO);
        };
        let queued_from = tokio::time::Instant::now();
        let permit = futures::FutureExt::boxed(admission.admit_kind(stats, kind)).await;
        (Some(permit), queued_from.elapsed())
    }

    /// Whether one more retry is allowed by the budget: free when the limit was lowered
    /// since the failed attempt (of `generation`) was sent, else it spends a token.
    fn allows_retry(&self, generation: Option<u64>) -> bool {
        if let (Some((admission, _)), Some(g)) = (self.admission, generation) {
            if admission.lowered_since(g) {
                return true;
            }
        }
        self.budget.is_none_or(|b| b.try_spend())
    }
}

async fn retry_loop<T, F, Fut>(
    policy: &RetryPolicy,
    gate: Gate<'_>,
    stats: &IoStats,
    path: &str,
    read: ReadSpan,
    mut attempt: F,
) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T>>,
{
    let start = tokio::time::Instant::now();
    // Queue time moves the deadline: it never counts against the retries.
    let mut queued = Duration::ZERO;
    let mut retries: u32 = 0;
    loop {
        let (permit, waited) = gate.admit(stats).await;
        queued += waited;
        let result = match policy.attempt_timeout {
            Some(limit) => match tokio::time::timeout(limit, attempt()).await {
                Ok(r) => r,
                Err(_) => Err(timed_out(path, read.range(), limit)),
            },
            None => attempt().await,
        };
        let generation = permit.as_ref().map(Permit::generation);
        if let Some(permit) = permit {
            permit.finish(limit_outcome(&result));
        }
        let err = match result {
            Ok(v) => {
                if let Some(b) = gate.budget {
                    b.earn();
                }
                return Ok(v);
            }
            Err(e) => e,
        };
        if !should_retry_under(policy, &err) {
            return Err(err);
        }
        let now = tokio::time::Instant::now();
        let deadline = start + policy.retry_timeout + queued;
        if retries as usize >= policy.max_retries
            || now >= deadline
            || !gate.allows_retry(generation)
        {
            return Err(exhausted(err, read, retries + 1, start.elapsed()));
        }
        retries += 1;
        stats.add_retry();
        let sleep = policy.backoff(retries).min(deadline - now);
        if !sleep.is_zero() {
            tokio::time::sleep(sleep).await;
        }
    }
}

/// How a request ended, for the store's adaptive limit: a timeout (of the attempt, of the
/// HTTP client, a 408 / 504) or throttling (503, 429, `SlowDown`) say the store is loaded;
/// an answer (also 404 and other definite answers) carries its latency; anything else
/// (a short body, a 500) says nothing about load.
pub(crate) fn limit_outcome<T>(result: &Result<T>) -> Outcome {
    let err = match result {
        Ok(_) => return Outcome::Answered,
        Err(e) => e,
    };
    let Error::Store { source: store, .. } = err else {
        return Outcome::Answered;
    };
    let object_store::Error::Generic { source, .. } = &**store else {
        return Outcome::Answered;
    };
    if chain_has(source.as_ref(), |e| e.to_string().contains("SlowDown")) {
        return Outcome::Throttled;
    }
    match store_error_status(store) {
        Some(503 | 429) => return Outcome::Throttled,
        Some(408 | 504) => return Outcome::TimedOut,
        Some(_) => return Outcome::Other,
        None => {}
    }
    if chain_has(source.as_ref(), is_timeout) {
        Outcome::TimedOut
    } else {
        Outcome::Other
    }
}

/// Whether `err` or a cause of it matches `pred`.
fn chain_has(
    err: &(dyn std::error::Error + 'static),
    pred: impl Fn(&(dyn std::error::Error + 'static)) -> bool,
) -> bool {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = current {
        if pred(e) {
            return true;
        }
        current = e.source();
    }
    false
}

/// A timeout or a failure to get a request through (the HTTP client's connect / request
/// errors under load, an I/O timeout).
fn is_timeout(e: &(dyn std::error::Error + 'static)) -> bool {
    if e.is::<AttemptTimedOut>() {
        return true;
    }
    #[cfg(feature = "cloud")]
    if let Some(http) = e.downcast_ref::<HttpError>() {
        return matches!(
            http.kind(),
            HttpErrorKind::Timeout | HttpErrorKind::Connect | HttpErrorKind::Request
        );
    }
    e.downcast_ref::<std::io::Error>()
        .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut)
}

fn timed_out(path: &str, range: Option<Range<u64>>, limit: Duration) -> Error {
    Error::Store {
        path: path.to_string(),
        range,
        source: std::sync::Arc::new(object_store::Error::Generic {
            store: "lakeseek",
            source: Box::new(AttemptTimedOut(limit)),
        }),
    }
}

/// Wrap the last error of a retried read; a read that was never retried keeps its error.
fn exhausted(err: Error, read: ReadSpan, attempts: u32, elapsed: Duration) -> Error {
    match err {
        Error::Store {
            path,
            range,
            source,
        } if attempts > 1 => Error::Store {
            path,
            range,
            source: std::sync::Arc::new(object_store::Error::Generic {
                store: "lakeseek",
                source: Box::new(RetriesExhausted {
                    read,
                    attempts,
                    elapsed,
                    last: source,
                }),
            }),
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn generic(source: impl std::error::Error + Send + Sync + 'static) -> Error {
        Error::Store {
            path: "p".into(),
            range: Some(0..10),
            source: std::sync::Arc::new(object_store::Error::Generic {
                store: "test",
                source: Box::new(source),
            }),
        }
    }

    #[derive(Debug, thiserror::Error)]
    #[error("Error performing GET http://x in 1s - Server returned non-2xx status code: {0}: body")]
    struct StatusLike(String);

    #[test]
    fn classification() {
        assert!(is_transient(&ShortBody::error("p", None, 10, 5)));
        assert!(is_transient(&generic(HttpError::new(
            HttpErrorKind::Timeout,
            std::io::Error::other("t")
        ))));
        assert!(!is_transient(&generic(HttpError::new(
            HttpErrorKind::Decode,
            std::io::Error::other("d")
        ))));
        assert!(is_transient(&generic(std::io::Error::from(
            std::io::ErrorKind::ConnectionReset
        ))));
        assert!(!is_transient(&generic(std::io::Error::from(
            std::io::ErrorKind::PermissionDenied
        ))));
        for (status, transient) in [
            ("503 Service Unavailable", true),
            ("500 Internal Server Error", true),
            ("429 Too Many Requests", true),
            ("408 Request Timeout", true),
            ("400 Bad Request", false),
            ("403 Forbidden", false),
        ] {
            assert_eq!(
                is_transient(&generic(StatusLike(status.into()))),
                transient,
                "{status}"
            );
        }
        let not_found = Error::Store {
            path: "p".into(),
            range: None,
            source: std::sync::Arc::new(object_store::Error::NotFound {
                path: "p".into(),
                source: "gone".into(),
            }),
        };
        assert!(!is_transient(&not_found));
        let from_s3 = Error::Store {
            path: "p".into(),
            range: None,
            source: std::sync::Arc::new(object_store::Error::Generic {
                store: "S3",
                source: Box::new(StatusLike("503 Service Unavailable".into())),
            }),
        };
        assert!(is_transient(&from_s3) && already_retried(&from_s3));
        assert!(!should_retry(&from_s3));
        assert!(should_retry(&generic(StatusLike(
            "503 Service Unavailable".into()
        ))));
        assert!(!is_transient(&Error::corrupt("bad page")));
        assert!(!is_transient(&Error::InvalidArgument("x".into())));
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let p = RetryPolicy {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(300),
            ..RetryPolicy::default()
        };
        for _ in 0..20 {
            let b1 = p.backoff(1);
            assert!(b1 >= Duration::from_millis(50) && b1 <= Duration::from_millis(100));
            let b2 = p.backoff(2);
            assert!(b2 >= Duration::from_millis(100) && b2 <= Duration::from_millis(200));
            let b9 = p.backoff(9);
            assert!(b9 >= Duration::from_millis(150) && b9 <= Duration::from_millis(300));
            assert!(p.backoff(u32::MAX) <= Duration::from_millis(300));
        }
    }

    fn fast(max_retries: usize) -> RetryPolicy {
        RetryPolicy {
            max_retries,
            init_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(2),
            ..RetryPolicy::default()
        }
    }

    #[tokio::test]
    async fn transient_failures_are_retried_until_success() {
        let stats = IoStats::new();
        let calls = AtomicU32::new(0);
        let out = with_retries(
            &fast(3),
            None,
            &stats,
            "p",
            ReadSpan::Range(0..10),
            || async {
                match calls.fetch_add(1, Ordering::SeqCst) {
                    0 | 1 => Err(ShortBody::error("p", Some(0..10), 10, 3)),
                    _ => Ok(7),
                }
            },
        )
        .await
        .unwrap();
        assert_eq!((out, calls.load(Ordering::SeqCst)), (7, 3));
        assert_eq!(stats.snapshot().retries, 2);
    }

    #[tokio::test]
    async fn budget_is_bounded_and_the_error_names_path_and_range() {
        let stats = IoStats::new();
        let calls = AtomicU32::new(0);
        let err = with_retries(
            &fast(2),
            None,
            &stats,
            "p",
            ReadSpan::Range(5..9),
            || async {
                calls.fetch_add(1, Ordering::SeqCst);
                Err::<(), _>(ShortBody::error("a/b.lance", Some(5..9), 4, 1))
            },
        )
        .await
        .unwrap_err();
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        assert_eq!(stats.snapshot().retries, 2);
        let msg = err.to_string();
        assert!(msg.contains("a/b.lance") && msg.contains("5..9"), "{msg}");
        assert!(
            msg.contains("gave up on the range read of bytes 5..9 after 3 attempts"),
            "{msg}"
        );
        assert!(!is_transient(&err), "an exhausted error is final");
    }

    #[tokio::test]
    async fn an_empty_session_budget_makes_the_first_error_final() {
        let stats = IoStats::new();
        let budget = RetryBudget::new(0.1, 1.0);
        let calls = AtomicU32::new(0);
        let failing = || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err::<(), _>(ShortBody::error("a/b.lance", Some(5..9), 4, 1))
        };
        let span = ReadSpan::Range(5..9);
        let policy = fast(5);
        let first = with_retries(&policy, Some(&budget), &stats, "p", span.clone(), failing);
        let err = first.await.unwrap_err();
        assert_eq!(
            calls.load(Ordering::SeqCst),
            2,
            "one retry: the whole burst"
        );
        assert!(err.to_string().contains("a/b.lance"), "{err}");
        let second = with_retries(&policy, Some(&budget), &stats, "p", span, failing);
        assert!(second.await.is_err());
        assert_eq!(calls.load(Ordering::SeqCst), 3, "no budget left: no retry");
    }

    #[tokio::test]
    async fn permanent_errors_are_not_retried() {
        let stats = IoStats::new();
        let calls = AtomicU32::new(0);
        let err = with_retries(&fast(5), None, &stats, "p", ReadSpan::Whole, || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err::<(), _>(Error::corrupt("bad"))
        })
        .await
        .unwrap_err();
        assert!(matches!(err, Error::Corrupt { .. }));
        assert_eq!(
            (calls.load(Ordering::SeqCst), stats.snapshot().retries),
            (1, 0)
        );
    }

    #[tokio::test]
    async fn slow_attempts_time_out_and_are_retried() {
        let stats = IoStats::new();
        let calls = AtomicU32::new(0);
        let policy = RetryPolicy {
            attempt_timeout: Some(Duration::from_millis(20)),
            ..fast(3)
        };
        let out = with_retries(&policy, None, &stats, "p", ReadSpan::Suffix(2), || async {
            if calls.fetch_add(1, Ordering::SeqCst) == 0 {
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
            Ok(1)
        })
        .await
        .unwrap();
        assert_eq!((out, stats.snapshot().retries), (1, 1));
    }
}
