//! Per-query I/O accounting: requests, bytes and round trips.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Counters for one query (or one benchmark operation). A cheap handle: clones share the
/// same counters (they live behind an `Arc`), so a clone given to a builder counts into the
/// caller's copy; all updates are atomic.
///
/// `round_trips` counts *sequential waves*: a request that starts while another request of
/// the same `IoStats` is still in flight belongs to the current wave; a request that starts
/// when none is in flight opens a new wave.
#[derive(Debug, Default, Clone)]
pub struct IoStats {
    counters: Arc<Counters>,
}

#[derive(Debug, Default)]
struct Counters {
    requests: AtomicU64,
    bytes: AtomicU64,
    round_trips: AtomicU64,
    in_flight: AtomicU64,
    /// The current wave has sent no request yet (its round trip is counted by its first).
    wave_uncounted: std::sync::atomic::AtomicBool,
    retries: AtomicU64,
    hedges: AtomicU64,
    disk_hits: AtomicU64,
    disk_bytes: AtomicU64,
    queued_micros: AtomicU64,
    limit: AtomicU64,
    limit_min: AtomicU64,
    limit_max: AtomicU64,
    limit_decreases: AtomicU64,
    limit_increases: AtomicU64,
}

/// A point-in-time copy of [`IoStats`], serializable as the `--stats` JSON.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IoStatsSnapshot {
    /// GET requests sent (after coalescing), including retried ones counted once.
    pub requests: u64,
    /// Body bytes received.
    pub bytes: u64,
    /// Sequential waves of requests.
    pub round_trips: u64,
    /// Reads retried after a transient failure (each retry counted once; the retried read
    /// itself is counted once in `requests`).
    #[serde(default)]
    pub retries: u64,
    /// Hedges: duplicate GETs sent for a read still outstanding past the hedging threshold
    /// (each also counted in `requests`; see the I/O layer's hedging policy).
    #[serde(default)]
    pub hedges: u64,
    /// Reads answered by the session's disk tier instead of the store (not counted in
    /// `requests`).
    #[serde(default)]
    pub disk_hits: u64,
    /// Bytes those reads took from the disk tier (not counted in `bytes`).
    #[serde(default)]
    pub disk_bytes: u64,
    /// Microseconds requests spent waiting for a slot of the store's admission control
    /// (summed over requests; not part of any request's timeout).
    #[serde(default)]
    pub queued_micros: u64,
    /// The store's limit on requests in flight when this query's last request was admitted
    /// (0: no admission control). It adapts to the store unless pinned with
    /// `--max-requests` / [`SessionBuilder::max_requests`](crate::SessionBuilder::max_requests).
    #[serde(default)]
    pub limit: u64,
    /// The lowest the store's limit has been, as of this query's requests.
    #[serde(default)]
    pub limit_min: u64,
    /// The highest the store's limit has been, as of this query's requests.
    #[serde(default)]
    pub limit_max: u64,
    /// Times the store's limit was lowered (slower answers, timeouts, throttling) since the
    /// session started, as of this query's last request.
    #[serde(default)]
    pub limit_decreases: u64,
    /// Times the store's limit was raised again since the session started, as of this
    /// query's last request.
    #[serde(default)]
    pub limit_increases: u64,
}

impl IoStats {
    /// New zeroed counters.
    pub fn new() -> Self {
        Self::default()
    }

    /// Mark the start of one request; returns a guard that marks its end when dropped.
    pub fn start_request(&self) -> RequestGuard<'_> {
        let guard = self.start_wave();
        self.counters.requests.fetch_add(1, Ordering::SeqCst);
        if self.counters.wave_uncounted.swap(false, Ordering::SeqCst) {
            self.counters.round_trips.fetch_add(1, Ordering::SeqCst);
        }
        guard
    }

    /// Mark the start of a wave of requests issued together (e.g. one
    /// `RangeFetcher::fetch`): while the guard lives, the
    /// wave is in flight, so requests started inside it belong to one round trip even when a
    /// fast backend finishes each before the next starts. Counts no request by itself, and
    /// no round trip until a request of the wave starts (a wave answered entirely from
    /// caches is not a round trip: the server sees none).
    pub fn start_wave(&self) -> RequestGuard<'_> {
        if self.counters.in_flight.fetch_add(1, Ordering::SeqCst) == 0 {
            self.counters.wave_uncounted.store(true, Ordering::SeqCst);
        }
        RequestGuard { stats: self }
    }

    /// Add received body bytes.
    pub fn add_bytes(&self, n: u64) {
        self.counters.bytes.fetch_add(n, Ordering::SeqCst);
    }

    /// Count one retry of a read after a transient failure.
    pub fn add_retry(&self) {
        self.counters.retries.fetch_add(1, Ordering::SeqCst);
    }

    /// Count one hedge (the duplicate request itself is counted by its
    /// [`start_request`](Self::start_request)).
    pub(crate) fn add_hedge(&self) {
        self.counters.hedges.fetch_add(1, Ordering::SeqCst);
    }

    /// Add time a request waited for admission (see `crate::io::admission`).
    pub(crate) fn add_queued(&self, waited: std::time::Duration) {
        let micros = u64::try_from(waited.as_micros()).unwrap_or(u64::MAX);
        self.counters
            .queued_micros
            .fetch_add(micros, Ordering::SeqCst);
    }

    /// Record the store's limit as a request of this query was admitted.
    pub(crate) fn observe_limit(&self, limit: &crate::io::adaptive_limit::LimitSnapshot) {
        let c = &self.counters;
        c.limit.store(limit.limit as u64, Ordering::SeqCst);
        let min = limit.min_seen as u64;
        let _ = c
            .limit_min
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |m| {
                (m == 0 || min < m).then_some(min)
            });
        c.limit_max
            .fetch_max(limit.max_seen as u64, Ordering::SeqCst);
        c.limit_decreases
            .fetch_max(limit.decreases, Ordering::SeqCst);
        c.limit_increases
            .fetch_max(limit.increases, Ordering::SeqCst);
    }

    /// Identity of the query these counters belong to (shared by clones): admission control
    /// queues requests per query.
    pub(crate) fn query_id(&self) -> usize {
        Arc::as_ptr(&self.counters) as usize
    }

    /// Count one read of `bytes` answered by the disk tier.
    pub(crate) fn add_disk_hit(&self, bytes: u64) {
        self.counters.disk_hits.fetch_add(1, Ordering::SeqCst);
        self.counters.disk_bytes.fetch_add(bytes, Ordering::SeqCst);
    }

    /// Count `n` more sequential round trips inside the current wave (requests that had to
    /// wait for an earlier one of the same wave: a concurrency slot, a hedge).
    pub(crate) fn add_round_trips(&self, n: u64) {
        self.counters.round_trips.fetch_add(n, Ordering::SeqCst);
    }

    /// Copy the counters.
    pub fn snapshot(&self) -> IoStatsSnapshot {
        IoStatsSnapshot {
            requests: self.counters.requests.load(Ordering::SeqCst),
            bytes: self.counters.bytes.load(Ordering::SeqCst),
            round_trips: self.counters.round_trips.load(Ordering::SeqCst),
            retries: self.counters.retries.load(Ordering::SeqCst),
            hedges: self.counters.hedges.load(Ordering::SeqCst),
            disk_hits: self.counters.disk_hits.load(Ordering::SeqCst),
            disk_bytes: self.counters.disk_bytes.load(Ordering::SeqCst),
            queued_micros: self.counters.queued_micros.load(Ordering::SeqCst),
            limit: self.counters.limit.load(Ordering::SeqCst),
            limit_min: self.counters.limit_min.load(Ordering::SeqCst),
            limit_max: self.counters.limit_max.load(Ordering::SeqCst),
            limit_decreases: self.counters.limit_decreases.load(Ordering::SeqCst),
            limit_increases: self.counters.limit_increases.load(Ordering::SeqCst),
        }
    }
}

impl IoStatsSnapshot {
    /// Counters accumulated since `earlier`.
    pub fn since(&self, earlier: &IoStatsSnapshot) -> IoStatsSnapshot {
        IoStatsSnapshot {
            requests: self.requests.saturating_sub(earlier.requests),
            bytes: self.bytes.saturating_sub(earlier.bytes),
            round_trips: self.round_trips.saturating_sub(earlier.round_trips),
            retries: self.retries.saturating_sub(earlier.retries),
            hedges: self.hedges.saturating_sub(earlier.hedges),
            disk_hits: self.disk_hits.saturating_sub(earlier.disk_hits),
            disk_bytes: self.disk_bytes.saturating_sub(earlier.disk_bytes),
            queued_micros: self.queued_micros.saturating_sub(earlier.queued_micros),
            // The limit's gauges are the later ones (they are not counts of this query).
            limit: self.limit,
            limit_min: self.limit_min,
            limit_max: self.limit_max,
            limit_decreases: self.limit_decreases,
            limit_increases: self.limit_increases,
        }
    }
}

/// Marks one request as in flight for round-trip counting; see [`IoStats::start_request`].
#[derive(Debug)]
pub struct RequestGuard<'a> {
    stats: &'a IoStats,
}

impl Drop for RequestGuard<'_> {
    fn drop(&mut self) {
        self.stats.counters.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_json_without_hedges_parses() {
        let old = r#"{"requests":3,"bytes":10,"round_trips":2,"retries":1}"#;
        let snap: IoStatsSnapshot = serde_json::from_str(old).unwrap();
        assert_eq!((snap.requests, snap.hedges), (3, 0));
        let s = IoStats::new();
        s.add_hedge();
        s.add_round_trips(2);
        assert_eq!((s.snapshot().hedges, s.snapshot().round_trips), (1, 2));
    }

    #[test]
    fn a_wave_without_requests_is_no_round_trip() {
        let s = IoStats::new();
        drop(s.start_wave());
        assert_eq!(s.snapshot().round_trips, 0);
        {
            let _wave = s.start_wave();
            let _inner = s.start_wave();
            drop(s.start_request());
        }
        assert_eq!((s.snapshot().requests, s.snapshot().round_trips), (1, 1));
    }

    #[test]
    fn overlapping_requests_are_one_round_trip() {
        let s = IoStats::new();
        {
            let _a = s.start_request();
            let _b = s.start_request();
        }
        let _c = s.start_request();
        let snap = s.snapshot();
        assert_eq!(snap.requests, 3);
        assert_eq!(snap.round_trips, 2);
    }

    #[test]
    fn requests_inside_a_wave_are_one_round_trip_even_when_sequential() {
        let s = IoStats::new();
        {
            let _wave = s.start_wave();
            drop(s.start_request());
            drop(s.start_request());
        }
        drop(s.start_request());
        let snap = s.snapshot();
        assert_eq!((snap.requests, snap.round_trips, snap.bytes), (3, 2, 0));
        let later = IoStatsSnapshot {
            requests: 5,
            bytes: 10,
            round_trips: 3,
            retries: 0,
            hedges: 1,
            disk_hits: 2,
            disk_bytes: 30,
            queued_micros: 0,
            ..IoStatsSnapshot::default()
        };
        assert_eq!(
            later.since(&snap),
            IoStatsSnapshot {
                requests: 2,
                bytes: 10,
                round_trips: 1,
                retries: 0,
                hedges: 1,
                disk_hits: 2,
                disk_bytes: 30,
                queued_micros: 0,
                ..IoStatsSnapshot::default()
            }
        );
    }
}
