//! Admission control: one bound on the requests in flight to a store, shared by every
//! dataset, file and index a [`Session`](crate::Session) opens on it, and fair across queries.
//!
//! Every GET (range, suffix, whole object) and every LIST waits here for a slot before it is
//! sent, so however many queries run at once, at most [`Admission::limit`] requests (and
//! about [`Admission::max_bytes`] of response bodies) are on the wire to one store. Requests
//! that cannot start at once wait in one queue per query (the query is the [`IoStats`]
//! handle the request is counted in); a freed slot goes to the next query in round-robin
//! order, so one query's wave of 2,000 ranges does not starve another query's point lookup.
//!
//! * Queue time is never part of a request's timeouts or retry deadline: those start when
//!   the request is admitted. It is reported as [`IoStatsSnapshot::queued_micros`](crate::IoStatsSnapshot::queued_micros).
//! * Dropping a waiting request (e.g. the future of a query a service gave up on) removes it
//!   from its queue; dropping an admitted one frees its slot at once ([`Permit`]).
//! * A request's slot is held through its retries and their backoff, so a failing store sees
//!   at most `limit` requests at a time, never more because of retries.
//! * Hedges only take a slot that is free with nobody waiting ([`Admission::try_admit`]):
//!   a busy store is never sent duplicates.
//!
//! Pure bookkeeping under a mutex (no I/O): the fetcher and the lister call it.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use tokio::sync::oneshot;

use crate::io::retry_budget::RetryBudget;
use crate::io::stats::IoStats;

/// Default bound on requests in flight per store (object stores serve thousands of
/// concurrent requests per prefix; one process rarely gains from more).
pub const DEFAULT_MAX_REQUESTS: usize = 256;

/// Default bound on response bytes in flight per store (256 MiB): a wave of large ranges
/// waits for earlier ones instead of holding them all in memory at once.
pub(crate) const DEFAULT_MAX_IN_FLIGHT_BYTES: u64 = 256 << 20;

/// The admission controller of one store. Cheap to share (`Arc`).
#[derive(Debug)]
pub(crate) struct Admission {
    limit: usize,
    max_bytes: u64,
    state: Mutex<State>,
    retry: RetryBudget,
}

#[derive(Debug, Default)]
struct State {
    in_flight: usize,
    in_flight_bytes: u64,
    /// Waiting requests per query, oldest first.
    queues: HashMap<usize, VecDeque<Waiter>>,
    /// Queries with waiting requests, in the order they are served.
    ring: VecDeque<usize>,
    queued: usize,
    next_waiter: u64,
    peak_in_flight: usize,
    admitted: u64,
}

#[derive(Debug)]
struct Waiter {
    id: u64,
    bytes: u64,
    tx: oneshot::Sender<Permit>,
}

#[cfg_attr(not(test), allow(dead_code))] // read by the tests
/// What an [`Admission`] reports about itself (for tests and `--stats`-like reports).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct AdmissionSnapshot {
    /// Requests holding a slot now.
    pub(crate) in_flight: usize,
    /// Requests waiting for a slot now.
    pub(crate) queued: usize,
    /// The most requests that ever held a slot at once.
    pub(crate) peak_in_flight: usize,
    /// Requests admitted so far.
    pub(crate) admitted: u64,
}

/// A slot of an [`Admission`]: the request may run while it lives; dropping it frees the slot
/// and hands it to the next waiting request.
#[derive(Debug)]
pub(crate) struct Permit {
    admission: Arc<Admission>,
    bytes: u64,
    armed: bool,
}

impl Drop for Permit {
    fn drop(&mut self) {
        if self.armed {
            self.admission.release(self.bytes);
        }
    }
}

#[cfg_attr(not(test), allow(dead_code))] // `limit`, `max_bytes`, `snapshot`: tests
impl Admission {
    /// At most `limit` requests (at least 1) and about `max_bytes` of bodies in flight (a
    /// single larger request still runs, alone).
    pub(crate) fn new(limit: usize, max_bytes: u64) -> Arc<Self> {
        Arc::new(Self {
            limit: limit.max(1),
            max_bytes: max_bytes.max(1),
            state: Mutex::new(State::default()),
            retry: RetryBudget::default(),
        })
    }

    /// The bound on requests in flight.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// The retry budget of this store ([`crate::io::retry_budget`]).
    pub(crate) fn retry_budget(&self) -> &RetryBudget {
        &self.retry
    }

    /// Current counters.
    pub(crate) fn snapshot(&self) -> AdmissionSnapshot {
        let s = self.lock();
        AdmissionSnapshot {
            in_flight: s.in_flight,
            queued: s.queued,
            peak_in_flight: s.peak_in_flight,
            admitted: s.admitted,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn fits(&self, s: &State, bytes: u64) -> bool {
        s.in_flight < self.limit
            && (s.in_flight == 0 || s.in_flight_bytes.saturating_add(bytes) <= self.max_bytes)
    }

    fn take(self: &Arc<Self>, s: &mut State, bytes: u64) -> Permit {
        s.in_flight += 1;
        s.in_flight_bytes = s.in_flight_bytes.saturating_add(bytes);
        s.peak_in_flight = s.peak_in_flight.max(s.in_flight);
        s.admitted += 1;
        Permit {
            admission: Arc::clone(self),
            bytes,
            armed: true,
        }
    }

    /// A slot for a request of about `bytes` counted in `stats`: at once when one is free
    /// and nobody waits, else after the requests queued before it in round-robin order of
    /// queries. The time waited is added to `stats`. Cancel-safe: dropping the future
    /// leaves the queue.
    pub(crate) async fn admit(self: &Arc<Self>, stats: &IoStats, bytes: u64) -> Permit {
        let query = stats.query_id();
        let rx = {
            let mut s = self.lock();
            if s.ring.is_empty() && self.fits(&s, bytes) {
                return self.take(&mut s, bytes);
            }
            let (tx, rx) = oneshot::channel();
            let id = s.next_waiter;
            s.next_waiter += 1;
            let queue = s.queues.entry(query).or_default();
            let first = queue.is_empty();
            queue.push_back(Waiter { id, bytes, tx });
            if first {
                s.ring.push_back(query);
            }
            s.queued += 1;
            self.dispatch(&mut s);
            Waiting {
                admission: Arc::clone(self),
                query,
                id,
                rx: Some(rx),
            }
        };
        let started = Instant::now();
        let permit = rx.wait().await;
        stats.add_queued(started.elapsed());
        permit
    }

    /// A slot only when one is free and no request waits (for hedges: a busy store is not
    /// sent duplicates).
    pub(crate) fn try_admit(self: &Arc<Self>, bytes: u64) -> Option<Permit> {
        let mut s = self.lock();
        (s.ring.is_empty() && self.fits(&s, bytes)).then(|| self.take(&mut s, bytes))
    }

    fn release(self: &Arc<Self>, bytes: u64) {
        let mut s = self.lock();
        s.in_flight = s.in_flight.saturating_sub(1);
        s.in_flight_bytes = s.in_flight_bytes.saturating_sub(bytes);
        self.dispatch(&mut s);
    }

    /// Hand free slots to waiting requests, one query after another.
    fn dispatch(self: &Arc<Self>, s: &mut State) {
        while let Some(&query) = s.ring.front() {
            let Some(queue) = s.queues.get_mut(&query) else {
                s.ring.pop_front();
                continue;
            };
            let Some(head) = queue.front() else {
                s.queues.remove(&query);
                s.ring.pop_front();
                continue;
            };
            let (closed, bytes) = (head.tx.is_closed(), head.bytes);
            if !closed && !self.fits(s, bytes) {
                return;
            }
            let queue = s.queues.get_mut(&query).expect("seen above");
            let waiter = queue.pop_front().expect("a head was seen");
            if queue.is_empty() {
                s.queues.remove(&query);
                s.ring.pop_front();
            } else {
                s.ring.rotate_left(1);
            }
            s.queued -= 1;
            if waiter.tx.is_closed() {
                continue;
            }
            let permit = self.take(s, waiter.bytes);
            if let Err(mut permit) = waiter.tx.send(permit) {
                // The waiter went away meanwhile: undo without re-entering the lock.
                permit.armed = false;
                s.in_flight -= 1;
                s.in_flight_bytes = s.in_flight_bytes.saturating_sub(waiter.bytes);
                s.admitted -= 1;
            }
        }
    }

    /// Remove waiter `id` of `query` (its future was dropped before it got a slot).
    fn forget(self: &Arc<Self>, query: usize, id: u64) {
        let mut s = self.lock();
        if let Some(queue) = s.queues.get_mut(&query) {
            if let Some(pos) = queue.iter().position(|w| w.id == id) {
                queue.remove(pos);
                s.queued -= 1;
            }
            if s.queues.get(&query).is_some_and(VecDeque::is_empty) {
                s.queues.remove(&query);
                s.ring.retain(|q| *q != query);
            }
        }
        self.dispatch(&mut s);
    }
}

/// A queued request; dropping it before its slot arrives leaves the queue.
struct Waiting {
    admission: Arc<Admission>,
    query: usize,
    id: u64,
    rx: Option<oneshot::Receiver<Permit>>,
}

impl Waiting {
    async fn wait(mut self) -> Permit {
        let rx = self.rx.as_mut().expect("waiting until received");
        match rx.await {
            Ok(permit) => {
                self.rx = None;
                permit
            }
            // Unreachable: waiters are only dropped after a send. Run unbounded rather
            // than hang.
            Err(_) => {
                self.rx = None;
                Permit {
                    admission: Arc::clone(&self.admission),
                    bytes: 0,
                    armed: false,
                }
            }
        }
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if let Some(rx) = self.rx.take() {
            // A permit already sent is dropped with the receiver (freeing its slot) before
            // the queue entry, if still there, is removed.
            drop(rx);
            self.admission.forget(self.query, self.id);
        }
    }
}

/// The admission controllers of a session, one per store (by the store's identity: scheme,
/// bucket/host and endpoint), all with the session's bounds.
#[derive(Debug)]
pub(crate) struct AdmissionRegistry {
    max_requests: usize,
    max_bytes: u64,
    stores: Mutex<HashMap<String, Arc<Admission>>>,
}

impl Default for AdmissionRegistry {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_REQUESTS, DEFAULT_MAX_IN_FLIGHT_BYTES)
    }
}

impl AdmissionRegistry {
    /// A registry whose stores each allow `max_requests` requests and `max_bytes` in flight.
    pub(crate) fn new(max_requests: usize, max_bytes: u64) -> Self {
        Self {
            max_requests: max_requests.max(1),
            max_bytes: max_bytes.max(1),
            stores: Mutex::default(),
        }
    }

    /// The bound on requests in flight per store.
    pub(crate) fn max_requests(&self) -> usize {
        self.max_requests
    }

    /// The controller of the store named `key`, created on first use.
    pub(crate) fn for_store(&self, key: &str) -> Arc<Admission> {
        let mut stores = self.stores.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(admission) = stores.get(key) {
            return Arc::clone(admission);
        }
        // Controllers of store handles nothing reads through any more are dropped (a
        // process opening stores handed in, one after another, keeps only the live ones).
        stores.retain(|k, a| !k.starts_with(HANDLE_PREFIX) || Arc::strong_count(a) > 1);
        let admission = Admission::new(self.max_requests, self.max_bytes);
        stores.insert(key.to_string(), Arc::clone(&admission));
        admission
    }

    /// The controller of an opened URL's store: by its identity, else (in-memory stores,
    /// stores handed in) by the store handle itself.
    pub(crate) fn for_opened(&self, opened: &crate::io::OpenedUrl) -> Arc<Admission> {
        match &opened.store_identity {
            Some(identity) => self.for_store(identity),
            None => self.for_handle(&opened.store),
        }
    }

    /// The controller of a store handed in by the caller (no identity): by the handle.
    pub(crate) fn for_handle(&self, store: &Arc<dyn object_store::ObjectStore>) -> Arc<Admission> {
        self.for_store(&format!(
            "{HANDLE_PREFIX}{:p}",
            Arc::as_ptr(store) as *const ()
        ))
    }

    #[cfg(test)]
    /// How many stores have a controller now (tests).
    pub(crate) fn stores(&self) -> usize {
        self.stores.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

/// Key prefix of the controllers of stores handed in (named by their handle's address).
const HANDLE_PREFIX: &str = "handle:";

/// The admission registry of everything opened without a [`Session`](crate::Session)
/// (e.g. [`EcpIndex::open_url`](crate::ecp::EcpIndex::open_url)): one per process, with
/// the default bounds, so such opens share one bound per store too.
pub(crate) fn process_default() -> Arc<AdmissionRegistry> {
    static DEFAULT: std::sync::OnceLock<Arc<AdmissionRegistry>> = std::sync::OnceLock::new();
    Arc::clone(DEFAULT.get_or_init(Arc::default))
}

/// The admission registry of a dataset session (created with the default bounds unless
/// the [`Session`](crate::Session) builder installed one).
pub(crate) fn registry_of(
    extensions: &crate::io::cache_extensions::CacheExtensions,
) -> Arc<AdmissionRegistry> {
    extensions.get_or_init(AdmissionRegistry::default)
}

#[cfg(test)]
#[path = "admission_tests.rs"]
mod tests;
