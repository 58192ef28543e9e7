//! Cross-cutting I/O concerns as small wrapper types (architecture principle 6): nothing in
//! the core reader knows about latency, recording or counting; tests and benches wrap.
//!
//! * [`LatencySource`]: adds a fixed delay to every request of any [`RangeSource`].
//! * [`RecordingSource`]: records every `(path, range)` a [`RangeSource`] is asked for, for
//!   read-plan assertions ("this query did not read page 3").
//! * [`ConcurrencyLimitSource`]: at most N requests in flight across all users of a source.
//! * [`FaultSource`]: deterministic, seeded fault injection (transient 503s, timeouts, stalls,
//!   truncated bodies, objects replaced between reads, persistently failing paths), counted
//!   per kind; test and bench tooling only.
//! * [`CountingConnector`]: an object_store [`HttpConnector`] that counts HTTP requests and
//!   body bytes per method, tracks requests in flight, can add latency per request and can
//!   answer the next requests with an injected error status (to exercise retries).
//!
//! [`RangeSource`]: crate::io::RangeSource
//! [`HttpConnector`]: object_store::client::HttpConnector

#[cfg(any(test, feature = "testing"))]
#[cfg_attr(not(feature = "testing"), allow(unreachable_pub))] // public through `lakeseek::testing`
mod counting;
#[cfg(test)]
mod fault;
#[cfg(test)]
mod latency;
#[cfg(test)]
pub(crate) mod limit;
#[cfg(test)]
mod recording;

#[cfg(feature = "testing")]
pub use counting::{CountingConnector, HttpCounters, HttpCountsSnapshot, HttpRequestRecord};
#[cfg(all(test, not(feature = "testing")))]
pub(crate) use counting::{CountingConnector, HttpCountsSnapshot, HttpRequestRecord};
#[cfg(test)]
pub(crate) use fault::{FaultConfig, FaultCounts, FaultKind, FaultSource};
#[cfg(test)]
pub(crate) use latency::LatencySource;
#[cfg(test)]
pub(crate) use recording::{ReadKind, RecordingSource};
