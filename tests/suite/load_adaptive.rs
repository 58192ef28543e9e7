//! The adaptive limit against in-process stores of set capacity, on tokio's paused clock (so
//! time is simulated and the runs are deterministic on a busy machine; nothing asserts a
//! duration). Each store serves `capacity` requests at a time, the rest wait in its queue;
//! a LIST holds a server slot ten times as long as a GET. Ten times more queries than the
//! capacity run at once, every attempt with a short timeout.
//!
//! * a store of capacity 8: 0 errors, the limit settles near the capacity (and the same
//!   run with the limit pinned at 256, as before, fails: the test can fail);
//! * a store answering 503 to the requests beyond its capacity: 0 errors, the limit comes
//!   down to about the capacity;
//! * a store that becomes 5× slower mid-run and fast again: 0 errors, the limit goes down
//!   while it is slow and back up after.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use object_store::path::Path;
use tokio::sync::Semaphore;
use tokio::time::Instant;

use crate::error::{Error, Result};
use crate::io::adaptive_limit::LimitConfig;
use crate::io::admission::Admission;
use crate::io::list::{ListControl, ListedObject, ObjectLister};
use crate::io::source::{ObjectVersion, RangeSource};
use crate::io::{FetchOptions, IoStats, RangeFetcher, ReadRequest, RetryPolicy};

/// Service time of one GET at the store.
const GET_TIME: Duration = Duration::from_millis(10);
/// A LIST holds its server slot this much longer than a GET.
const LIST_COST: u32 = 10;
/// Every attempt's timeout.
const TIMEOUT: Duration = Duration::from_millis(300);

/// How the store behaves when full.
#[derive(Debug, Clone, Copy, PartialEq)]
enum WhenFull {
    /// Requests wait in the store's queue.
    Queue,
    /// Requests beyond the capacity are answered 503 at once.
    Throttle,
}

/// A store serving `capacity` requests at a time.
#[derive(Debug)]
struct CapacityStore {
    slots: Semaphore,
    when_full: WhenFull,
    /// Service time multiplier over time: (from, factor), sorted.
    phases: Vec<(Duration, u32)>,
    start: Instant,
    throttled: AtomicUsize,
}

impl CapacityStore {
    fn new(capacity: usize, when_full: WhenFull, phases: Vec<(Duration, u32)>) -> Arc<Self> {
        Arc::new(Self {
            slots: Semaphore::new(capacity),
            when_full,
            phases,
            start: Instant::now(),
            throttled: AtomicUsize::new(0),
        })
    }

    fn factor(&self) -> u32 {
        let now = self.start.elapsed();
        self.phases
            .iter()
            .rev()
            .find(|(from, _)| now >= *from)
            .map_or(1, |p| p.1)
    }

    /// Hold a server slot for `cost` GETs' time.
    async fn serve(&self, path: &str, cost: u32) -> Result<()> {
        let permit = match self.when_full {
            WhenFull::Queue => self.slots.acquire().await.ok(),
            WhenFull::Throttle => match self.slots.try_acquire() {
                Ok(p) => Some(p),
                Err(_) => {
                    self.throttled.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    return Err(slow_down(path));
                }
            },
        };
        tokio::time::sleep(GET_TIME * cost * self.factor()).await;
        drop(permit);
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
#[error("Server returned non-2xx status code: 503 Service Unavailable: SlowDown")]
struct SlowDown;

fn slow_down(path: &str) -> Error {
    Error::Store {
        path: path.to_string(),
        range: None,
        source: Arc::new(object_store::Error::Generic {
            store: "capacity-store",
            source: Box::new(SlowDown),
        }),
    }
}

fn pattern(range: Range<u64>) -> Bytes {
    range.map(|i| (i % 251) as u8).collect()
}

#[async_trait]
impl RangeSource for CapacityStore {
    async fn get_range(
        &self,
        path: &Path,
        range: Range<u64>,
        _expected: Option<&ObjectVersion>,
    ) -> Result<Bytes> {
        self.serve(path.as_ref(), 1).await?;
        Ok(pattern(range))
    }
    async fn get_suffix(&self, _path: &Path, _n: u64) -> Result<(Bytes, ObjectVersion)> {
        Err(Error::unsupported("ranged reads only"))
    }
    async fn get_all(&self, _path: &Path) -> Result<(Bytes, ObjectVersion)> {
        Err(Error::unsupported("ranged reads only"))
    }
    fn coalesce_gap(&self) -> u64 {
        0
    }
    fn describe(&self) -> String {
        "capacity store".into()
    }
    fn retry_policy(&self) -> Option<RetryPolicy> {
        Some(RetryPolicy {
            max_retries: 10,
            init_backoff: Duration::from_millis(20),
            max_backoff: Duration::from_millis(500),
            retry_timeout: Duration::from_secs(120),
            attempt_timeout: Some(TIMEOUT),
            store_retries: false,
        })
    }
}

/// LISTs of the store, through the admission control like the store's own lister.
#[derive(Debug)]
struct CapacityLister {
    store: Arc<CapacityStore>,
    admission: Arc<Admission>,
}

#[async_trait]
impl ObjectLister for CapacityLister {
    async fn list(
        &self,
        prefix: &Path,
        stats: &IoStats,
        visit: &mut (dyn FnMut(ListedObject) -> ListControl + Send),
    ) -> Result<()> {
        let policy = self.store.retry_policy().unwrap_or_default();
        let read = crate::io::retry::ReadSpan::Whole;
        let kind = crate::io::adaptive_limit::RequestKind::List;
        let _guard = stats.start_request();
        crate::io::retry::with_admitted_retries(
            &policy,
            Some(&self.admission),
            kind,
            stats,
            prefix.as_ref(),
            read,
            || self.store.serve(prefix.as_ref(), LIST_COST),
        )
        .await?;
        visit(ListedObject {
            path: prefix.clone().join("x"),
            size: 1,
            etag: None,
        });
        Ok(())
    }
    fn lexically_ordered(&self) -> bool {
        true
    }
}

/// What a run saw.
#[derive(Debug)]
struct Run {
    errors: usize,
    /// The limit sampled every 100 ms (simulated).
    limits: Vec<usize>,
    decreases: u64,
}

/// `queries` queries at once, each: one LIST, then `waves` waves of 4 GETs.
async fn run_queries(store: Arc<CapacityStore>, admission: Arc<Admission>, queries: usize) -> Run {
    let waves = 20u64;
    let fetcher = RangeFetcher::new(Arc::<CapacityStore>::clone(&store), FetchOptions::default())
        .with_admission(Some(Arc::clone(&admission)));
    let lister = Arc::new(CapacityLister {
        store: Arc::clone(&store),
        admission: Arc::clone(&admission),
    });
    let done = Arc::new(AtomicUsize::new(0));
    let limits = Arc::new(Mutex::new(Vec::new()));
    let sampler = {
        let (admission, done, limits) = (
            Arc::clone(&admission),
            Arc::clone(&done),
            Arc::clone(&limits),
        );
        tokio::spawn(async move {
            while done.load(Ordering::SeqCst) < queries {
                limits.lock().unwrap().push(admission.limit());
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    };
    let tasks: Vec<_> = (0..queries as u64)
        .map(|q| {
            let (fetcher, lister, done) = (fetcher.clone(), Arc::clone(&lister), Arc::clone(&done));
            tokio::spawn(async move {
                let stats = IoStats::new();
                let result = async {
                    lister
                        .list(&Path::from(format!("q{q}")), &stats, &mut |_| {
                            ListControl::Stop
                        })
                        .await?;
                    for w in 0..waves {
                        let reqs: Vec<_> = (0..4u64)
                            .map(|i| {
                                let at = (q * 1000 + w * 10 + i) * 100;
                                ReadRequest::new(Path::from(format!("o{i}")), at..at + 10)
                            })
                            .collect();
                        let got = fetcher.fetch(&reqs, &stats).await?;
                        for (r, b) in reqs.iter().zip(got) {
                            assert_eq!(b, pattern(r.range.clone()), "query {q}: wrong bytes");
                        }
                    }
                    Ok::<_, Error>(())
                }
                .await;
                done.fetch_add(1, Ordering::SeqCst);
                result
            })
        })
        .collect();
    let mut errors = 0;
    for task in tasks {
        if task.await.expect("query task").is_err() {
            errors += 1;
        }
    }
    sampler.await.expect("sampler");
    let limits = limits.lock().unwrap().clone();
    let snap = admission.snapshot();
    assert_eq!((snap.in_flight, snap.queued), (0, 0), "{snap:?}");
    Run {
        errors,
        limits,
        decreases: snap.limit.decreases,
    }
}

fn adaptive() -> Arc<Admission> {
    Admission::with_limit(LimitConfig::adaptive(256), u64::MAX)
}

/// The limits of the last quarter of a run.
fn settled(limits: &[usize]) -> (usize, usize) {
    let tail = &limits[limits.len() * 3 / 4..];
    (*tail.iter().min().unwrap(), *tail.iter().max().unwrap())
}

#[tokio::test(start_paused = true)]
async fn ten_times_the_capacity_in_queries_all_answer_and_the_limit_settles_near_it() {
    let capacity = 8;
    let store = CapacityStore::new(capacity, WhenFull::Queue, vec![]);
    let run = run_queries(store, adaptive(), 10 * capacity).await;
    assert_eq!(run.errors, 0, "{run:?}");
    assert!(run.decreases > 0, "{run:?}");
    let (lo, hi) = settled(&run.limits);
    eprintln!("capacity {capacity}, queue: the limit settled in {lo}..={hi}");
    assert!(
        lo >= capacity / 2 && hi <= 4 * capacity,
        "settled in {lo}..={hi}: {run:?}"
    );

    // The same load with the limit pinned at the old bound: attempts queue at the store past
    // their timeout, retries pile on, queries fail.
    let store = CapacityStore::new(capacity, WhenFull::Queue, vec![]);
    let pinned = Admission::with_limit(LimitConfig::pinned(256), u64::MAX);
    let run = run_queries(store, pinned, 10 * capacity).await;
    assert!(
        run.errors > 0,
        "the pinned bound was expected to fail: {run:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_store_throttling_past_its_capacity_gets_about_its_capacity() {
    let capacity = 8;
    let store = CapacityStore::new(capacity, WhenFull::Throttle, vec![]);
    let run = run_queries(Arc::clone(&store), adaptive(), 10 * capacity).await;
    assert_eq!(run.errors, 0, "{run:?}");
    assert!(
        store.throttled.load(Ordering::SeqCst) > 0,
        "the store throttled"
    );
    let (lo, hi) = settled(&run.limits);
    eprintln!("capacity {capacity}, 503 past it: the limit settled in {lo}..={hi}");
    assert!(
        lo >= 2 && hi <= 4 * capacity,
        "settled in {lo}..={hi}: {run:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_store_slow_mid_run_gets_less_then_more_again() {
    let capacity = 8;
    // 10 ms per GET, 50 ms from 2 s to 5 s, 10 ms again after.
    let phases = vec![(Duration::from_secs(2), 5), (Duration::from_secs(5), 1)];
    let store = CapacityStore::new(capacity, WhenFull::Queue, phases);
    let run = run_queries(store, adaptive(), 10 * capacity).await;
    assert_eq!(run.errors, 0, "{run:?}");
    let at = |secs: f64| run.limits[((secs * 10.0) as usize).min(run.limits.len() - 1)];
    let before = at(1.9);
    let slow = *run.limits[25..50].iter().min().unwrap();
    let after = *run.limits[55..].iter().max().unwrap();
    eprintln!("slow mid-run: limit {before} before, down to {slow}, back up to {after}");
    assert!(
        slow < before && after > slow,
        "before {before}, slow {slow}, after {after}: {run:?}"
    );
}
