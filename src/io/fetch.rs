//! [`RangeFetcher`]: many byte ranges in, few coalesced concurrent GETs out, zero-copy slices
//! back.
//!
//! A fetch is planned first ([`plan_fetch`], pure): every request is validated (non-empty,
//! inside the object when its size is known), ranges of one object are merged with
//! [`merge_ranges`], and only then are single-range GETs issued through the
//! [`RangeSource`], at most [`FetchOptions::max_concurrency`] at a time. object_store's own
//! `get_ranges` is never used (its coalescing has no size cap and it panics on a past-EOF
//! range merged with an in-bounds one).
//!
//! Which ranges share a GET is decided by a [`CoalescePolicy`] (the gap, bounded by the
//! bytes a merged GET would waste; [`crate::io::coalesce`]). A wave issues its GETs
//! together; when it has more than [`FetchOptions::max_concurrency`], the ones waiting for
//! a slot are counted as the extra round trips the server sees. GETs still outstanding past
//! the store's adaptive latency threshold are hedged ([`crate::io::hedge`]): a duplicate is
//! sent, the first answer wins and the other copy is cancelled (dropped).
//!
//! Every read is retried on transient failures ([`RetryPolicy`], see [`crate::io::retry`] for
//! what is retried and the bounds) and checked before its bytes are handed on: a body shorter
//! than asked is a transient [`ShortBody`] (retried, never decoded), and a range read carries
//! the object version the caller's metadata came from (its size from the request, and the etag
//! learned by this fetcher's own tail/whole reads of the same size), so a replaced object
//! fails with [`ObjectChanged`](crate::io::ObjectChanged) instead of mixing versions.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::stream::{self, StreamExt, TryStreamExt};
use object_store::path::Path;

use crate::error::{Error, Result};
use crate::io::adaptive_limit::RequestKind;
use crate::io::admission::{Admission, Permit};
use crate::io::coalesce::{coalesce, CoalescePolicy};
use crate::io::disk::{DiskCache, Wanted};
use crate::io::hedge::{wave_cap, LatencyTracker};
use crate::io::retry::{with_admitted_retries, ReadSpan, RetryPolicy, ShortBody};
use crate::io::source::{ObjectVersion, RangeSource};
use crate::io::stats::IoStats;

/// At most this many object versions are remembered per fetcher (then the memory restarts).
const MAX_KNOWN_VERSIONS: usize = 4096;

/// One range to read in a wave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReadRequest {
    /// Object path.
    pub path: Path,
    /// Byte range wanted (non-empty).
    pub range: Range<u64>,
    /// Object size when known (from a manifest or an earlier read): ranges are validated
    /// against it before any request is sent.
    pub object_size: Option<u64>,
}

impl ReadRequest {
    /// A request for `range` of an object of unknown size.
    pub(crate) fn new(path: Path, range: Range<u64>) -> Self {
        Self {
            path,
            range,
            object_size: None,
        }
    }

    /// A request for `range` of an object known to be `object_size` bytes long.
    pub(crate) fn sized(path: Path, range: Range<u64>, object_size: u64) -> Self {
        Self {
            path,
            range,
            object_size: Some(object_size),
        }
    }

    /// A request for `range` cut to the end of an `object_size`-byte object (for speculative
    /// reads such as "the next 64 KiB"). Fails when nothing of the range is inside the object.
    #[cfg(test)]
    pub(crate) fn clamped(path: Path, range: Range<u64>, object_size: u64) -> Result<Self> {
        let clamped = clamp_range(&range, object_size).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "range {}..{} of {path} has no bytes inside the {object_size}-byte object",
                range.start, range.end
            ))
        })?;
        Ok(Self::sized(path, clamped, object_size))
    }

    /// Check the request before anything is sent: the range must be non-empty and, when the
    /// object size is known, end inside the object.
    pub(crate) fn validate(&self) -> Result<()> {
        check_range(&self.path, &self.range, self.object_size)
    }
}

/// `range` cut to `0..object_size`; `None` when the result would be empty.
#[cfg(test)]
pub(crate) fn clamp_range(range: &Range<u64>, object_size: u64) -> Option<Range<u64>> {
    let end = range.end.min(object_size);
    (range.start < end).then_some(range.start..end)
}

/// Validate a range read of `path`: non-empty, and inside the object when its size is known.
/// Empty or inverted ranges are `InvalidArgument`; a range past the end of an object of known
/// size is `Corrupt` (the size and the range came from the same metadata, or the caller's
/// metadata is wrong).
pub(crate) fn check_range(path: &Path, range: &Range<u64>, object_size: Option<u64>) -> Result<()> {
    if range.start >= range.end {
        return Err(Error::InvalidArgument(format!(
            "empty or inverted range {}..{} of {path}",
            range.start, range.end
        )));
    }
    if let Some(size) = object_size {
        if range.end > size {
            return Err(Error::Corrupt {
                path: path.to_string(),
                range: Some(range.clone()),
                what: format!("range ends past the end of the {size}-byte object"),
                source: None,
            });
        }
    }
    Ok(())
}

/// The result of a suffix ("tail") read.
#[derive(Debug, Clone)]
pub(crate) struct Tail {
    /// The last bytes of the object (the whole object if it is smaller than asked).
    pub bytes: Bytes,
    /// Size and version of the object, from the same response.
    pub version: ObjectVersion,
}

impl Tail {
    /// Absolute offset of `bytes[0]` in the object.
    pub(crate) fn start(&self) -> u64 {
        self.version.size.saturating_sub(self.bytes.len() as u64)
    }

    /// Whether the tail holds the whole object.
    #[cfg(test)]
    pub(crate) fn is_whole_object(&self) -> bool {
        self.bytes.len() as u64 == self.version.size
    }

    /// Slice the tail by an absolute byte range of the object (zero-copy), if the tail
    /// covers it. An empty range inside the tail gives empty bytes.
    pub(crate) fn slice(&self, range: Range<u64>) -> Option<Bytes> {
        let start = self.start();
        if range.start < start || range.end > self.version.size || range.start > range.end {
            return None;
        }
        let lo = usize::try_from(range.start - start).ok()?;
        let hi = usize::try_from(range.end - start).ok()?;
        (hi <= self.bytes.len()).then(|| self.bytes.slice(lo..hi))
    }
}

/// Tuning of a [`RangeFetcher`].
#[derive(Debug, Clone)]
pub(crate) struct FetchOptions {
    /// Merge two ranges when the gap between them is at most this many bytes.
    /// `None` uses the source's per-backend gap.
    pub coalesce_gap: Option<u64>,
    /// Never merge ranges into a request larger than this (unless one range alone is larger).
    pub max_merged_bytes: u64,
    /// At most this many requests in flight per wave.
    pub max_concurrency: usize,
}

impl Default for FetchOptions {
    fn default() -> Self {
        Self {
            coalesce_gap: None,
            max_merged_bytes: 16 << 20,
            max_concurrency: 64,
        }
    }
}

/// Merge sorted-or-not ranges: ranges that overlap or whose gap is at most `gap` are merged,
/// as long as the merged range stays within `max_merged` bytes (overlapping ranges are always
/// merged, and a single range larger than `max_merged` stays whole). Empty ranges are
/// ignored. Returns disjoint merged ranges sorted by start. Pure.
#[cfg_attr(not(test), allow(dead_code))] // the tests' reference merge
pub(crate) fn merge_ranges(ranges: &[Range<u64>], gap: u64, max_merged: u64) -> Vec<Range<u64>> {
    coalesce(ranges, &CoalescePolicy::gap(gap, max_merged))
}

/// One GET of a planned fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlannedRead {
    /// Object path.
    pub path: Path,
    /// Merged byte range to GET.
    pub range: Range<u64>,
}

/// Validate `requests` and merge them per object into the GETs a fetch will send, grouped by
/// path (sorted) and sorted by start within a path. Pure: the read plan of a wave.
#[cfg_attr(not(test), allow(dead_code))] // the tests' reference plan
pub(crate) fn plan_fetch(
    requests: &[ReadRequest],
    gap: u64,
    max_merged: u64,
) -> Result<Vec<PlannedRead>> {
    plan_fetch_with(requests, &CoalescePolicy::gap(gap, max_merged))
}

/// [`plan_fetch`] under any [`CoalescePolicy`]. Pure.
pub(crate) fn plan_fetch_with(
    requests: &[ReadRequest],
    policy: &CoalescePolicy,
) -> Result<Vec<PlannedRead>> {
    for r in requests {
        r.validate()?;
    }
    let mut by_path: Vec<(&Path, Range<u64>)> = requests
        .iter()
        .map(|r| (&r.path, r.range.clone()))
        .collect();
    by_path.sort_by(|a, b| a.0.cmp(b.0));
    let mut plan = Vec::new();
    for group in by_path.chunk_by(|a, b| a.0 == b.0) {
        let ranges: Vec<Range<u64>> = group.iter().map(|(_, r)| r.clone()).collect();
        let path = group[0].0;
        plan.extend(
            coalesce(&ranges, policy)
                .into_iter()
                .map(|range| PlannedRead {
                    path: path.clone(),
                    range,
                }),
        );
    }
    Ok(plan)
}

/// The disk tier a fetcher reads through: the cache, the identity of the store (scheme,
/// bucket/host, endpoint) and which of its paths name immutable objects.
#[derive(Clone)]
pub(crate) struct DiskTier {
    /// The cache directory.
    pub cache: DiskCache,
    /// Identity of the store the paths belong to.
    pub store: String,
    /// Whether an object's name is never reused for other content (only those are cached).
    pub immutable: fn(&Path) -> bool,
}

impl std::fmt::Debug for DiskTier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiskTier")
            .field("cache", &self.cache)
            .field("store", &self.store)
            .finish()
    }
}

impl DiskTier {
    /// The disk key of `path`, when it may be cached.
    fn key(&self, path: &Path) -> Option<String> {
        (self.immutable)(path).then(|| format!("{}\n{path}", self.store))
    }
}

/// Executes waves of range reads through a [`RangeSource`].
#[derive(Debug, Clone)]
pub(crate) struct RangeFetcher {
    source: Arc<dyn RangeSource>,
    options: FetchOptions,
    retry: RetryPolicy,
    /// Versions (with etags) seen by this fetcher's tail and whole reads, per path.
    known_versions: Arc<Mutex<HashMap<Path, ObjectVersion>>>,
    /// The store's recent latencies and the hedge budget (shared by clones).
    latency: Arc<Mutex<LatencyTracker>>,
    /// Byte ranges of immutable objects on local disk, when the session has a disk tier.
    disk: Option<DiskTier>,
    /// The store's admission control, shared by every reader of the session
    /// ([`crate::io::admission`]); `None`: requests are only bounded per wave.
    admission: Option<Arc<Admission>>,
}

/// Hedges and hedge round trips of one wave.
struct WaveHedges {
    cap: usize,
    used: AtomicUsize,
    counted_round_trip: AtomicBool,
}

impl WaveHedges {
    /// Take one of the wave's hedges; false when all are used.
    fn try_take(&self) -> bool {
        self.used
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < self.cap).then_some(n + 1)
            })
            .is_ok()
    }

    /// A hedge starts after other GETs of the wave were answered: the wave is one round
    /// trip deeper (counted once per wave).
    fn count_round_trip(&self, stats: &IoStats) {
        if !self.counted_round_trip.swap(true, Ordering::SeqCst) {
            stats.add_round_trips(1);
        }
    }
}

impl RangeFetcher {
    /// A fetcher over `source`. Transient failures are retried with the source's
    /// [`retry_policy`](RangeSource::retry_policy) (set from the store's options by
    /// [`open_url`](crate::io::open_url)), else [`RetryPolicy::default`].
    pub(crate) fn new(source: Arc<dyn RangeSource>, options: FetchOptions) -> Self {
        let retry = source.retry_policy().unwrap_or_default();
        let latency = Arc::new(Mutex::new(LatencyTracker::new(source.hedge_config())));
        Self {
            source,
            options,
            retry,
            known_versions: Arc::default(),
            latency,
            disk: None,
            admission: None,
        }
    }

    /// Send every request through `admission` (one bound on requests in flight to the
    /// store, fair across queries; see [`crate::io::admission`]).
    pub(crate) fn with_admission(mut self, admission: Option<Arc<Admission>>) -> Self {
        self.admission = admission;
        self
    }

    /// The admission control requests go through, when any.
    #[cfg_attr(not(test), allow(dead_code))] // read by the tests
    pub(crate) fn admission(&self) -> Option<&Arc<Admission>> {
        self.admission.as_ref()
    }

    /// Reserve the bytes a wave will receive until the grant is dropped (nothing without
    /// admission control): the store's waves together hold at most its bytes bound.
    async fn reserve(&self, stats: &IoStats, bytes: u64) -> Option<Permit> {
        match &self.admission {
            Some(a) => Some(a.reserve(stats, bytes).await),
            None => None,
        }
    }

    /// Run one read's attempts, each through a slot of the store's admission control,
    /// retried within the policy and the store's retry budget ([`with_admitted_retries`]).
    async fn retried<T, F, Fut>(
        &self,
        stats: &IoStats,
        path: &Path,
        span: ReadSpan,
        attempt: F,
    ) -> Result<T>
    where
        F: FnMut() -> Fut + Send,
        Fut: std::future::Future<Output = Result<T>> + Send,
        T: Send,
    {
        let admission = self.admission.as_ref();
        let kind = RequestKind::Get;
        // Boxed: a read's attempts (hedges, retries, queueing) are a deep future; callers
        // hold many of them at once on small stacks.
        futures::FutureExt::boxed(with_admitted_retries(
            &self.retry,
            admission,
            kind,
            stats,
            path.as_ref(),
            span,
            attempt,
        ))
        .await
    }

    /// Read immutable objects through `disk` (ranges found there cost no request; ranges
    /// fetched are written there).
    pub(crate) fn with_disk(mut self, disk: Option<DiskTier>) -> Self {
        self.disk = disk;
        self
    }

    /// Whether the disk tier holds any bytes of `path` (no request, nothing counted).
    pub(crate) async fn on_disk(&self, path: &Path) -> bool {
        let Some(disk) = self.disk.as_ref() else {
            return false;
        };
        let Some(key) = disk.key(path) else {
            return false;
        };
        disk.cache.has_entries(key).await
    }

    /// A disk hit for `wanted` of `path`, counted into `stats`.
    async fn disk_lookup(
        &self,
        path: &Path,
        wanted: Wanted,
        known: Option<&ObjectVersion>,
        stats: &IoStats,
    ) -> Option<crate::io::disk::DiskHit> {
        let disk = self.disk.as_ref()?;
        let key = disk.key(path)?;
        let hit = disk.cache.lookup(key, wanted, known.cloned()).await?;
        stats.add_disk_hit(hit.bytes.len() as u64);
        Some(hit)
    }

    /// Write bytes read at `start` of `path` (version `version`) to the disk tier.
    async fn disk_store(&self, path: &Path, version: &ObjectVersion, start: u64, bytes: &Bytes) {
        let Some(disk) = self.disk.as_ref() else {
            return;
        };
        let Some(key) = disk.key(path) else { return };
        disk.cache
            .store(key, version.clone(), start, bytes.clone())
            .await;
    }

    /// The retry policy in effect.
    #[cfg(test)]
    pub(crate) fn retry_policy(&self) -> &RetryPolicy {
        &self.retry
    }

    /// Make later range reads of `path` conditional on `version`'s etag (when it has one), as
    /// if this fetcher had read it: for callers whose metadata came from a cache, not from a
    /// read of this fetcher.
    pub(crate) fn expect_version(&self, path: &Path, version: &ObjectVersion) {
        self.remember(path, version);
    }

    fn remember(&self, path: &Path, version: &ObjectVersion) {
        if version.etag.is_none() {
            return;
        }
        let mut known = self
            .known_versions
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if known.len() >= MAX_KNOWN_VERSIONS && !known.contains_key(path) {
            known.clear();
        }
        known.insert(path.clone(), version.clone());
    }

    /// The version a range read of `path` must find: the caller's size, plus the etag this
    /// fetcher saw for an object of that size at that path.
    fn expected_version(&self, path: &Path, size: Option<u64>) -> Option<ObjectVersion> {
        let size = size?;
        let known = self
            .known_versions
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let etag = known
            .get(path)
            .filter(|v| v.size == size)
            .and_then(|v| v.etag.clone());
        Some(ObjectVersion { size, etag })
    }

    /// The underlying source.
    pub(crate) fn source(&self) -> &Arc<dyn RangeSource> {
        &self.source
    }

    /// The coalescing gap in effect (the options' or the source's).
    pub(crate) fn coalesce_gap(&self) -> u64 {
        self.options
            .coalesce_gap
            .unwrap_or_else(|| self.source.coalesce_gap())
    }

    /// The coalescing policy in effect: the gap, bounded by the source's waste ratio unless
    /// the options set the gap explicitly.
    pub(crate) fn coalesce_policy(&self) -> CoalescePolicy {
        let gap = self.coalesce_gap();
        let max = self.options.max_merged_bytes;
        match (self.options.coalesce_gap, self.source.coalesce_waste()) {
            (None, Some(ratio)) => CoalescePolicy::with_waste(gap, max, ratio),
            _ => CoalescePolicy::gap(gap, max),
        }
    }

    fn tracker(&self) -> std::sync::MutexGuard<'_, LatencyTracker> {
        self.latency.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Record one answered request of `bytes` that took `elapsed`, and earn hedge budget.
    fn record_latency(&self, elapsed: std::time::Duration, bytes: usize) {
        let mut t = self.tracker();
        t.record(elapsed, bytes as u64);
        t.earn();
    }

    /// One GET of a planned read, timed into the latency tracker.
    async fn timed_range(
        &self,
        read: &PlannedRead,
        expected: Option<&ObjectVersion>,
    ) -> Result<Bytes> {
        let start = tokio::time::Instant::now();
        let bytes = self
            .source
            .get_range(&read.path, read.range.clone(), expected)
            .await?;
        self.record_latency(start.elapsed(), bytes.len());
        Ok(bytes)
    }

    /// One attempt at a planned read, hedged: past the store's latency threshold (and within
    /// the wave's and the budget's hedges) a duplicate GET is sent; the first answer wins and
    /// the other copy is dropped, which cancels it. A failed copy leaves the other to finish.
    async fn hedged_range(
        &self,
        read: &PlannedRead,
        expected: Option<&ObjectVersion>,
        stats: &IoStats,
        wave: &WaveHedges,
    ) -> Result<Bytes> {
        let primary = self.timed_range(read, expected);
        let threshold = self.tracker().threshold(read.range.end - read.range.start);
        let Some(wait) = threshold else {
            return primary.await;
        };
        tokio::pin!(primary);
        tokio::select! {
            biased;
            r = &mut primary => return r,
            _ = tokio::time::sleep(wait) => {}
        }
        // A hedge only takes a slot nobody waits for: a busy store gets no duplicates.
        let slot = match &self.admission {
            Some(a) => match a.try_admit(read.range.end - read.range.start) {
                Some(permit) => Some(permit),
                None => return primary.await,
            },
            None => None,
        };
        if !wave.try_take() || !self.tracker().try_spend() {
            drop(slot);
            return primary.await;
        }
        stats.add_hedge();
        wave.count_round_trip(stats);
        let _guard = stats.start_request();
        let backup = self.timed_range(read, expected);
        tokio::pin!(backup);
        tokio::select! {
            r = &mut primary => match r {
                Ok(bytes) => Ok(bytes),
                Err(e) => backup.await.or(Err(e)),
            },
            r = &mut backup => match r {
                Ok(bytes) => Ok(bytes),
                Err(_) => primary.await,
            },
        }
    }

    /// Suffix read of the last `n` bytes (one request, no HEAD); the object's size comes from
    /// the same response.
    pub(crate) async fn tail(&self, path: &Path, n: u64, stats: &IoStats) -> Result<Tail> {
        self.tail_of(path, n, None, stats).await
    }

    /// [`tail`](Self::tail) of an object whose version the caller may know (from a manifest
    /// or a listing): the disk tier then only answers with bytes of that version.
    pub(crate) async fn tail_of(
        &self,
        path: &Path,
        n: u64,
        known: Option<&ObjectVersion>,
        stats: &IoStats,
    ) -> Result<Tail> {
        // Concurrent reads that look the disk up first still overlap as one wave (a wave
        // answered from disk is no round trip).
        let wave = self.disk.is_some().then(|| stats.start_wave());
        if n > 0 {
            if let Some(hit) = self
                .disk_lookup(path, Wanted::Suffix(n), known, stats)
                .await
            {
                self.remember(path, &hit.version);
                return Ok(Tail {
                    bytes: hit.bytes,
                    version: hit.version,
                });
            }
        }
        let tail = self.tail_from_store(path, n, stats).await?;
        drop(wave);
        self.disk_store(path, &tail.version, tail.start(), &tail.bytes)
            .await;
        Ok(tail)
    }

    /// [`tail`](Self::tail) from the store even when the disk tier holds bytes of `path`
    /// (a name that may have been reused); the answer is still written to the disk tier.
    pub(crate) async fn tail_fresh(&self, path: &Path, n: u64, stats: &IoStats) -> Result<Tail> {
        let wave = self.disk.is_some().then(|| stats.start_wave());
        let tail = self.tail_from_store(path, n, stats).await?;
        drop(wave);
        self.disk_store(path, &tail.version, tail.start(), &tail.bytes)
            .await;
        Ok(tail)
    }

    async fn tail_from_store(&self, path: &Path, n: u64, stats: &IoStats) -> Result<Tail> {
        if n == 0 {
            return Err(Error::InvalidArgument(format!(
                "empty suffix read of {path}"
            )));
        }
        let _held = self.reserve(stats, n).await;
        let _guard = stats.start_request();
        let span = ReadSpan::Suffix(n);
        let (bytes, version) = self
            .retried(stats, path, span, || async {
                let start = tokio::time::Instant::now();
                let (bytes, version) = self.source.get_suffix(path, n).await?;
                self.record_latency(start.elapsed(), bytes.len());
                let wanted = n.min(version.size);
                if bytes.len() as u64 != wanted {
                    let start = version.size.saturating_sub(wanted);
                    return Err(ShortBody::error(
                        path.as_ref(),
                        Some(start..version.size),
                        wanted,
                        bytes.len() as u64,
                    ));
                }
                Ok((bytes, version))
            })
            .await?;
        stats.add_bytes(bytes.len() as u64);
        self.remember(path, &version);
        Ok(Tail { bytes, version })
    }

    /// Read a whole object (one request).
    pub(crate) async fn whole(&self, path: &Path, stats: &IoStats) -> Result<Tail> {
        self.whole_of(path, None, stats).await
    }

    /// [`whole`](Self::whole) of an object whose version the caller may know.
    pub(crate) async fn whole_of(
        &self,
        path: &Path,
        known: Option<&ObjectVersion>,
        stats: &IoStats,
    ) -> Result<Tail> {
        let wave = self.disk.is_some().then(|| stats.start_wave());
        if let Some(hit) = self.disk_lookup(path, Wanted::Whole, known, stats).await {
            self.remember(path, &hit.version);
            return Ok(Tail {
                bytes: hit.bytes,
                version: hit.version,
            });
        }
        let whole = self.whole_from_store(path, stats).await?;
        drop(wave);
        self.disk_store(path, &whole.version, 0, &whole.bytes).await;
        Ok(whole)
    }

    async fn whole_from_store(&self, path: &Path, stats: &IoStats) -> Result<Tail> {
        // The size of a whole object is only known from its response: a slot, no bytes.
        let _guard = stats.start_request();
        let span = ReadSpan::Whole;
        let (bytes, version) = self
            .retried(stats, path, span, || async {
                let start = tokio::time::Instant::now();
                let (bytes, version) = self.source.get_all(path).await?;
                self.record_latency(start.elapsed(), bytes.len());
                if bytes.len() as u64 != version.size {
                    return Err(ShortBody::error(
                        path.as_ref(),
                        Some(0..version.size),
                        version.size,
                        bytes.len() as u64,
                    ));
                }
                Ok((bytes, version))
            })
            .await?;
        stats.add_bytes(bytes.len() as u64);
        self.remember(path, &version);
        Ok(Tail { bytes, version })
    }

    /// The GETs [`fetch`](Self::fetch) would send for `requests` (validated, merged).
    pub(crate) fn plan(&self, requests: &[ReadRequest]) -> Result<Vec<PlannedRead>> {
        plan_fetch_with(requests, &self.coalesce_policy())
    }

    /// Read all `requests` as one wave: requests are validated before anything is sent,
    /// ranges of the same object are merged, the merged GETs run concurrently (at most
    /// `max_concurrency` in flight; the slot waits are counted as round trips), slow GETs
    /// are hedged, and each request's bytes come back in request order as a zero-copy slice
    /// of its merged buffer. Fails on the first failed GET.
    ///
    /// With a disk tier, every request of an immutable object of known size is looked up
    /// there first (a hit costs no request); the rest are fetched as above and the merged
    /// GETs written to disk.
    pub(crate) async fn fetch(
        &self,
        requests: &[ReadRequest],
        stats: &IoStats,
    ) -> Result<Vec<Bytes>> {
        if self.disk.is_none() {
            return self.fetch_from_store(requests, stats).await.map(|(b, _)| b);
        }
        for r in requests {
            r.validate()?;
        }
        let sizes = object_sizes(requests)?;
        let wave = stats.start_wave();
        let mut out: Vec<Option<Bytes>> = vec![None; requests.len()];
        let mut missing: Vec<usize> = Vec::new();
        for (i, r) in requests.iter().enumerate() {
            let known = sizes
                .get(&r.path)
                .and_then(|&size| self.expected_version(&r.path, Some(size)));
            let hit = match known {
                Some(v) => {
                    let wanted = Wanted::Range(r.range.clone());
                    self.disk_lookup(&r.path, wanted, Some(&v), stats).await
                }
                None => None,
            };
            match hit {
                Some(hit) => out[i] = Some(hit.bytes),
                None => missing.push(i),
            }
        }
        if !missing.is_empty() {
            let asked: Vec<ReadRequest> = missing.iter().map(|&i| requests[i].clone()).collect();
            let (got, fetched) = self.fetch_from_store(&asked, stats).await?;
            drop(wave);
            let writes = fetched.iter().filter_map(|(read, bytes)| {
                let size = sizes.get(&read.path).copied();
                let version = self.expected_version(&read.path, size)?;
                Some(async move {
                    self.disk_store(&read.path, &version, read.range.start, bytes)
                        .await
                })
            });
            futures::future::join_all(writes).await;
            for (i, bytes) in missing.into_iter().zip(got) {
                out[i] = Some(bytes);
            }
        }
        Ok(out.into_iter().map(Option::unwrap_or_default).collect())
    }

    /// [`fetch`](Self::fetch) from the store alone; also returns the merged GETs as sent.
    async fn fetch_from_store(
        &self,
        requests: &[ReadRequest],
        stats: &IoStats,
    ) -> Result<(Vec<Bytes>, Vec<(PlannedRead, Bytes)>)> {
        let plan = self.plan(requests)?;
        if plan.is_empty() {
            return Ok((Vec::new(), Vec::new()));
        }
        let sizes = object_sizes(requests)?;
        let _wave = stats.start_wave();
        let slots = self.options.max_concurrency.max(1);
        let waits = plan.len().div_ceil(slots) - 1;
        if waits > 0 {
            stats.add_round_trips(waits as u64);
        }
        let wave = WaveHedges {
            cap: wave_cap(plan.len(), self.tracker().config().fraction),
            used: AtomicUsize::new(0),
            counted_round_trip: AtomicBool::new(false),
        };
        let wave = &wave;
        // The wave's bytes are reserved as a whole and held until its last GET is in.
        let wave_bytes = plan.iter().fold(0u64, |sum, r| {
            sum.saturating_add(r.range.end - r.range.start)
        });
        let _held = self.reserve(stats, wave_bytes).await;
        let fetched: Vec<(PlannedRead, Bytes)> = stream::iter(plan.into_iter().map(|read| {
            let expected = self.expected_version(&read.path, sizes.get(&read.path).copied());
            async move {
                let _guard = stats.start_request();
                let span = ReadSpan::Range(read.range.clone());
                let bytes = self
                    .retried(stats, &read.path, span, || async {
                        let bytes = self
                            .hedged_range(&read, expected.as_ref(), stats, wave)
                            .await?;
                        check_length(&read, &bytes)?;
                        Ok(bytes)
                    })
                    .await?;
                stats.add_bytes(bytes.len() as u64);
                Ok::<_, Error>((read, bytes))
            }
        }))
        .buffer_unordered(slots)
        .try_collect()
        .await?;
        let sliced = slice_results(requests, fetched.clone())?;
        Ok((sliced, fetched))
    }
}

/// A [`RangeSource`] must return exactly the bytes asked for; anything else is never decoded
/// (a transient [`ShortBody`], retried).
fn check_length(read: &PlannedRead, bytes: &Bytes) -> Result<()> {
    let wanted = read.range.end - read.range.start;
    if bytes.len() as u64 != wanted {
        return Err(ShortBody::error(
            read.path.as_ref(),
            Some(read.range.clone()),
            wanted,
            bytes.len() as u64,
        ));
    }
    Ok(())
}

/// The object size each path's requests were planned against; requests of one path that
/// disagree on it come from two versions of the metadata and are refused.
fn object_sizes(requests: &[ReadRequest]) -> Result<HashMap<Path, u64>> {
    let mut sizes: HashMap<Path, u64> = HashMap::new();
    for r in requests {
        if let Some(size) = r.object_size {
            let known = *sizes.entry(r.path.clone()).or_insert(size);
            if known != size {
                return Err(Error::InvalidArgument(format!(
                    "reads of {} disagree on its size ({known} and {size} bytes)",
                    r.path
                )));
            }
        }
    }
    Ok(sizes)
}

/// Hand each request its slice of the merged buffer that covers it.
fn slice_results(
    requests: &[ReadRequest],
    mut fetched: Vec<(PlannedRead, Bytes)>,
) -> Result<Vec<Bytes>> {
    fetched.sort_by(|a, b| (&a.0.path, a.0.range.start).cmp(&(&b.0.path, b.0.range.start)));
    requests
        .iter()
        .map(|r| {
            // The last merged read of this path starting at or before r.range.start covers it.
            let idx = fetched
                .partition_point(|(m, _)| (&m.path, m.range.start) <= (&r.path, r.range.start));
            let (merged, bytes) = idx
                .checked_sub(1)
                .and_then(|i| fetched.get(i))
                .filter(|(m, _)| m.path == r.path && r.range.end <= m.range.end)
                .ok_or_else(|| Error::Corrupt {
                    path: r.path.to_string(),
                    range: Some(r.range.clone()),
                    what: "internal: no fetched range covers this request".into(),
                    source: None,
                })?;
            let lo = (r.range.start - merged.range.start) as usize;
            let hi = (r.range.end - merged.range.start) as usize;
            Ok(bytes.slice(lo..hi))
        })
        .collect()
}

#[cfg(test)]
#[path = "fetch_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "held_bytes_tests.rs"]
mod held_bytes_tests;

#[path = "fetch_notes.rs"]
mod notes;
