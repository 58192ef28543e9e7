//! Admission control: one bound on the requests in flight to a store and one on the response
//! bytes its waves hold, shared by every dataset, file and index a [`Session`](crate::Session)
//! opens on it, and fair across queries.
//!
//! Two resources, each with its own queue ([`FairQueue`]: round-robin across queries, the
//! query being the [`IoStats`] handle a read is counted in):
//!
//! * **Request slots**: every GET (range, suffix, whole object) and every LIST waits for a
//!   slot before it is sent, so however many queries run at once, at most
//!   [`Admission::limit`] requests are on the wire to one store. A freed slot goes to the next
//!   query in turn, so one query's wave of 2,000 ranges does not starve a point lookup.
//! * **Held bytes**: a wave (all the GETs of one [`RangeFetcher::fetch`](crate::io::fetch::RangeFetcher::fetch),
//!   or one suffix read) first reserves the bytes it will receive, as a whole, and keeps them
//!   until its last GET is in: bytes a wave already received count until the wave is complete
//!   and handed on. However many queries wait, the store's waves hold at most about
//!   the bytes bound ([`SessionBuilder::max_in_flight_bytes`](crate::SessionBuilder::max_in_flight_bytes); a single larger wave still runs, alone). Reserving the whole
//!   wave at once is what makes this safe: a wave that holds bytes only waits for slots, which
//!   GETs of admitted waves always free, so waves never wait on each other in a circle.
//!
//! * The bound adapts to the store ([`AdaptiveLimit`], [`crate::io::adaptive_limit`]): every
//!   admitted request reports how it ended ([`Permit::finish`]: latency from admission,
//!   answered / timed out / throttled), which lowers the limit when the store slows down or
//!   throttles and raises it again as answers come back fast. A LIST takes
//!   [`LIST_WEIGHT`](crate::io::adaptive_limit::LIST_WEIGHT) units of it, a GET one. A
//!   pinned limit ([`SessionBuilder::max_requests`](crate::SessionBuilder::max_requests),
//!   `--max-requests`) does not adapt. The limit as a query saw it is in its [`IoStats`].
//! * Queue time is never part of a request's timeouts or retry deadline: those start when
//!   the request is admitted. It is reported as [`IoStatsSnapshot::queued_micros`](crate::IoStatsSnapshot::queued_micros).
//! * Dropping a waiting request (e.g. the future of a query a service gave up on) removes it
//!   from its queue; dropping an admitted one frees its slot or bytes at once ([`Permit`]).
//! * A failed attempt frees its slot; its retry waits for a slot again (behind the requests
//!   already queued) and spends a token of the store's [`RetryBudget`] unless the limit was
//!   lowered since the attempt was sent ([`Admission::lowered_since`]): a slow or throttling
//!   store gets less load, never more because of retries.
//! * Hedges only take a slot (and bytes) that are free with nobody waiting
//!   ([`Admission::try_admit`]): a busy store is never sent duplicates.
//!
//! Pure bookkeeping under a mutex (no I/O): the fetcher and the lister call it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::time::Instant;

use tokio::sync::oneshot;

use crate::io::adaptive_limit::{
    AdaptiveLimit, Completion, LimitConfig, LimitSnapshot, Outcome, RequestKind,
};
use crate::io::fair_queue::FairQueue;
use crate::io::retry_budget::RetryBudget;
use crate::io::stats::IoStats;

/// Default bound on requests in flight per store (object stores serve thousands of
/// concurrent requests per prefix; one process rarely gains from more).
pub const DEFAULT_MAX_REQUESTS: usize = 256;

/// Default bound on the response bytes the waves of one store hold (256 MiB): waves beyond it
/// wait for earlier ones to complete instead of all holding part of their bytes at once.
pub const DEFAULT_MAX_IN_FLIGHT_BYTES: u64 = 256 << 20;

/// The admission controller of one store. Cheap to share (`Arc`).
#[derive(Debug)]
pub(crate) struct Admission {
    max_bytes: u64,
    state: Mutex<State>,
    retry: RetryBudget,
}

/// Which resource a waiter waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Resource {
    Slot,
    Bytes,
}

#[derive(Debug)]
struct State {
    limit: AdaptiveLimit,
    /// Units of the limit held by admitted requests.
    in_flight: usize,
    held_bytes: u64,
    slot_queue: FairQueue<Permit>,
    byte_queue: FairQueue<Permit>,
    peak_in_flight: usize,
    peak_held_bytes: u64,
    admitted: u64,
}

#[cfg_attr(not(test), allow(dead_code))] // read by the tests
/// What an [`Admission`] reports about itself (for tests and `--stats`-like reports).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct AdmissionSnapshot {
    /// Units of the limit held now (a GET holds 1, a LIST its weight).
    pub(crate) in_flight: usize,
    /// Requests waiting for a slot now.
    pub(crate) queued: usize,
    /// The most units ever held at once.
    pub(crate) peak_in_flight: usize,
    /// The adaptive limit.
    pub(crate) limit: LimitSnapshot,
    /// Requests admitted so far.
    pub(crate) admitted: u64,
    /// Bytes reserved by waves now.
    pub(crate) held_bytes: u64,
    /// The most bytes waves ever held at once.
    pub(crate) peak_held_bytes: u64,
    /// Waves waiting for bytes now.
    pub(crate) waves_queued: usize,
}

/// A grant of an [`Admission`]: a request slot, reserved bytes, or both. The request (or
/// wave) may run while it lives; dropping it frees what it holds and hands it to the next
/// waiter.
#[derive(Debug)]
pub(crate) struct Permit {
    admission: Arc<Admission>,
    /// Units of the limit held (0: no slot).
    units: usize,
    bytes: u64,
    kind: RequestKind,
    generation: u64,
    admitted_at: Instant,
}

impl Drop for Permit {
    fn drop(&mut self) {
        if self.units > 0 || self.bytes > 0 {
            self.admission.release(self.units, self.bytes, None);
        }
    }
}

impl Permit {
    fn new(admission: &Arc<Admission>, units: usize, bytes: u64, generation: u64) -> Self {
        Self {
            admission: Arc::clone(admission),
            units,
            bytes,
            kind: RequestKind::Get,
            generation,
            admitted_at: Instant::now(),
        }
    }

    /// Hand back nothing on drop (the grant was undone by hand).
    fn disarm(mut self) {
        self.units = 0;
        self.bytes = 0;
    }

    /// The limit's generation when this request was admitted.
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// The request ended with `outcome`: free the slot and tell the limit how long it took
    /// (from admission) and how it ended. (Dropping a permit frees it without telling.)
    pub(crate) fn finish(mut self, outcome: Outcome) {
        let done = Completion {
            kind: self.kind,
            latency: self.admitted_at.elapsed(),
            outcome,
            generation: self.generation,
        };
        let (units, bytes) = (self.units, self.bytes);
        self.units = 0;
        self.bytes = 0;
        self.admission.release(units, bytes, Some(done));
    }
}

#[cfg_attr(not(test), allow(dead_code))] // `limit`, `snapshot`: tests
impl Admission {
    /// At most `limit` requests (at least 1) in flight, pinned, and about `max_bytes` held
    /// by waves (a single larger wave still runs, alone).
    pub(crate) fn new(limit: usize, max_bytes: u64) -> Arc<Self> {
        Self::with_limit(LimitConfig::pinned(limit), max_bytes)
    }

    /// Requests in flight bounded by an [`AdaptiveLimit`] with `config`.
    pub(crate) fn with_limit(config: LimitConfig, max_bytes: u64) -> Arc<Self> {
        Arc::new(Self {
            max_bytes: max_bytes.max(1),
            state: Mutex::new(State {
                limit: AdaptiveLimit::new(config),
                in_flight: 0,
                held_bytes: 0,
                slot_queue: FairQueue::default(),
                byte_queue: FairQueue::default(),
                peak_in_flight: 0,
                peak_held_bytes: 0,
                admitted: 0,
            }),
            retry: RetryBudget::default(),
        })
    }

    /// The bound on requests in flight now.
    pub(crate) fn limit(&self) -> usize {
        self.lock().limit.limit()
    }

    /// Whether the limit was lowered after a request of `generation` was admitted (a retry
    /// of it then meets a smaller limit: it needs no retry-budget token).
    pub(crate) fn lowered_since(&self, generation: u64) -> bool {
        self.lock().limit.generation() > generation
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
            queued: s.slot_queue.len(),
            peak_in_flight: s.peak_in_flight,
            limit: s.limit.snapshot(),
            admitted: s.admitted,
            held_bytes: s.held_bytes,
            peak_held_bytes: s.peak_held_bytes,
            waves_queued: s.byte_queue.len(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether `units` more fit the limit (a request alone always runs).
    fn slot_fits(s: &State, units: u64) -> bool {
        s.in_flight == 0 || (s.in_flight as u64).saturating_add(units) <= s.limit.limit() as u64
    }

    fn bytes_fit(&self, s: &State, bytes: u64) -> bool {
        s.held_bytes == 0 || s.held_bytes.saturating_add(bytes) <= self.max_bytes
    }

    fn take(self: &Arc<Self>, s: &mut State, units: usize, bytes: u64) -> Permit {
        if units > 0 {
            s.in_flight += units;
            s.peak_in_flight = s.peak_in_flight.max(s.in_flight);
            s.admitted += 1;
        }
        s.held_bytes = s.held_bytes.saturating_add(bytes);
        s.peak_held_bytes = s.peak_held_bytes.max(s.held_bytes);
        Permit::new(self, units, bytes, s.limit.generation())
    }

    /// Undo [`take`](Self::take) of a grant nobody received (without re-entering the lock).
    fn untake(s: &mut State, permit: Permit) {
        if permit.units > 0 {
            s.in_flight = s.in_flight.saturating_sub(permit.units);
            s.admitted -= 1;
        }
        s.held_bytes = s.held_bytes.saturating_sub(permit.bytes);
        permit.disarm();
    }

    /// A request slot for a read counted in `stats`: at once when one is free and nobody
    /// waits, else after the requests queued before it in round-robin order of queries. The
    /// time waited is added to `stats`. Cancel-safe: dropping the future leaves the queue.
    pub(crate) async fn admit(self: &Arc<Self>, stats: &IoStats) -> Permit {
        self.admit_kind(stats, RequestKind::Get).await
    }

    /// [`admit`](Self::admit) a request of `kind` (a LIST takes more of the limit).
    pub(crate) async fn admit_kind(self: &Arc<Self>, stats: &IoStats, kind: RequestKind) -> Permit {
        let units = self.lock().limit.units(kind) as u64;
        let mut permit = self.wait_for(stats, Resource::Slot, units).await;
        permit.kind = kind;
        stats.observe_limit(&self.lock().limit.snapshot());
        permit
    }

    /// Reserve `bytes` for a wave counted in `stats` until the returned grant is dropped (the
    /// wave's GETs then only wait for slots): at once when they fit and no wave waits, else
    /// in round-robin order of queries. Reserving nothing never waits. Cancel-safe.
    pub(crate) async fn reserve(self: &Arc<Self>, stats: &IoStats, bytes: u64) -> Permit {
        if bytes == 0 {
            return Permit::new(self, 0, 0, 0);
        }
        self.wait_for(stats, Resource::Bytes, bytes).await
    }

    async fn wait_for(self: &Arc<Self>, stats: &IoStats, what: Resource, need: u64) -> Permit {
        let query = stats.query_id();
        let rx = {
            let mut s = self.lock();
            let free = match what {
                Resource::Slot => s.slot_queue.is_empty() && Self::slot_fits(&s, need),
                Resource::Bytes => s.byte_queue.is_empty() && self.bytes_fit(&s, need),
            };
            if free {
                return match what {
                    Resource::Slot => self.take(&mut s, need as usize, 0),
                    Resource::Bytes => self.take(&mut s, 0, need),
                };
            }
            let (tx, rx) = oneshot::channel();
            let id = match what {
                Resource::Slot => s.slot_queue.push(query, need, tx),
                Resource::Bytes => s.byte_queue.push(query, need, tx),
            };
            self.dispatch(&mut s);
            Waiting {
                admission: Arc::clone(self),
                what,
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

    /// A slot and `bytes` only when both are free and nobody waits for either (for hedges:
    /// a busy store is not sent duplicates).
    pub(crate) fn try_admit(self: &Arc<Self>, bytes: u64) -> Option<Permit> {
        let mut s = self.lock();
        let free = s.slot_queue.is_empty()
            && s.byte_queue.is_empty()
            && Self::slot_fits(&s, 1)
            && self.bytes_fit(&s, bytes);
        free.then(|| self.take(&mut s, 1, bytes))
    }

    fn release(self: &Arc<Self>, units: usize, bytes: u64, done: Option<Completion>) {
        let mut s = self.lock();
        s.in_flight = s.in_flight.saturating_sub(units);
        s.held_bytes = s.held_bytes.saturating_sub(bytes);
        if let Some(done) = done {
            let in_flight = s.in_flight;
            s.limit.on_completion(&done, in_flight);
        }
        self.dispatch(&mut s);
    }

    /// Hand free slots and bytes to waiters, one query after another.
    fn dispatch(self: &Arc<Self>, s: &mut State) {
        loop {
            let (in_flight, limit) = (s.in_flight as u64, s.limit.limit() as u64);
            let fits = |units: u64| in_flight == 0 || in_flight.saturating_add(units) <= limit;
            let Some(waiter) = s.slot_queue.pop_fitting(fits) else {
                break;
            };
            let permit = self.take(s, waiter.need as usize, 0);
            if let Err(permit) = waiter.tx.send(permit) {
                Self::untake(s, permit);
            }
        }
        loop {
            let held = s.held_bytes;
            let max = self.max_bytes;
            let fits = |need: u64| held == 0 || held.saturating_add(need) <= max;
            let Some(waiter) = s.byte_queue.pop_fitting(fits) else {
                break;
            };
            let permit = self.take(s, 0, waiter.need);
            if let Err(permit) = waiter.tx.send(permit) {
                Self::untake(s, permit);
            }
        }
    }

    /// Remove waiter `id` of `query` (its future was dropped before it was served).
    fn forget(self: &Arc<Self>, what: Resource, query: usize, id: u64) {
        let mut s = self.lock();
        match what {
            Resource::Slot => s.slot_queue.forget(query, id),
            Resource::Bytes => s.byte_queue.forget(query, id),
        }
        self.dispatch(&mut s);
    }
}

/// A queued request; dropping it before its grant arrives leaves the queue.
struct Waiting {
    admission: Arc<Admission>,
    what: Resource,
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
                Permit::new(&self.admission, 0, 0, 0)
            }
        }
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if let Some(rx) = self.rx.take() {
            // A grant already sent is dropped with the receiver (freeing it) before the
            // queue entry, if still there, is removed.
            drop(rx);
            self.admission.forget(self.what, self.query, self.id);
        }
    }
}

/// The admission controllers of a session, one per store (by the store's identity: scheme,
/// bucket/host and endpoint), all with the session's bounds.
#[derive(Debug)]
pub(crate) struct AdmissionRegistry {
    max_requests: usize,
    /// The limit does not adapt (`--max-requests`).
    pinned: bool,
    max_bytes: u64,
    stores: Mutex<HashMap<String, Arc<Admission>>>,
}

impl Default for AdmissionRegistry {
    fn default() -> Self {
        Self::adaptive(DEFAULT_MAX_REQUESTS, DEFAULT_MAX_IN_FLIGHT_BYTES)
    }
}

impl AdmissionRegistry {
    /// A registry whose stores each allow `max_requests` requests (pinned: the limit does
    /// not adapt) and `max_bytes` in flight.
    pub(crate) fn new(max_requests: usize, max_bytes: u64) -> Self {
        Self {
            max_requests: max_requests.max(1),
            pinned: true,
            max_bytes: max_bytes.max(1),
            stores: Mutex::default(),
        }
    }

    /// A registry whose stores each start at `max_requests` requests in flight and adapt
    /// ([`crate::io::adaptive_limit`]), with `max_bytes` in flight.
    pub(crate) fn adaptive(max_requests: usize, max_bytes: u64) -> Self {
        Self {
            pinned: false,
            ..Self::new(max_requests, max_bytes)
        }
    }

    /// The bound on requests in flight per store (where an adaptive limit starts).
    pub(crate) fn max_requests(&self) -> usize {
        self.max_requests
    }

    /// Whether the stores' limits are pinned (do not adapt).
    pub(crate) fn is_pinned(&self) -> bool {
        self.pinned
    }

    /// The bound on bytes held by the waves of each store.
    pub(crate) fn max_bytes(&self) -> u64 {
        self.max_bytes
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
        let config = if self.pinned {
            LimitConfig::pinned(self.max_requests)
        } else {
            LimitConfig::on_loss(self.max_requests)
        };
        let admission = Admission::with_limit(config, self.max_bytes);
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
