//! [`FetcherStorage`]: a zarrs storage over lakeseek's I/O layer, so zarr readers (the ecpfs
//! index) go through the same [`RangeFetcher`] as every other reader: its retries
//! ([`RetryPolicy`](crate::io::RetryPolicy)), expected-version checks
//! ([`ObjectChanged`]), short-body checks and accounting, and any
//! [`RangeSource`](crate::io::RangeSource) wrapper (faults, latency, recording) underneath.
//!
//! What each zarrs call does (keys are relative to the storage's prefix):
//!
//! * `get(key)`: the first read of a key is one whole-object GET
//!   ([`RangeFetcher::whole`]); a missing object is `None`. The version it returned (size, etag)
//!   is *pinned*: a later read of the same key is a range GET of `0..size` that expects that
//!   version (`If-Match` with the etag when the store has etags, size check otherwise), so an
//!   object replaced after this storage first read it, even by one of the same size, fails
//!   with `ObjectChanged` instead of mixing two versions. Keys under
//!   [`with_unpinned_prefix`](FetcherStorage::with_unpinned_prefix) (mutable state such as
//!   saved queries) are never pinned.
//! * `get_partial_many(key, ranges)`: bounded ranges of an object of unknown size are one
//!   [`RangeFetcher::fetch`] wave (coalesced); when a range is a suffix or open-ended and the
//!   size is not known yet, one suffix GET ([`RangeFetcher::tail`]) learns it (its bytes serve
//!   the ranges they cover), then the rest is one sized wave.
//! * `size_key(key)`: the pinned size, else one 1-byte suffix GET (never a HEAD).
//! * `set` / `erase` / `set_partial_many` / `erase_prefix`: delegated to a writer (zarrs'
//!   object_store storage over the same store and prefix) when one was given
//!   ([`with_object_store_writes`](FetcherStorage::with_object_store_writes)), else
//!   [`StorageError::ReadOnly`]. A write forgets the key's pinned version.
//!
//! Every request is counted on the storage's index-wide [`IoStats`] and, when the current
//! task runs inside [`with_query_stats`], on that query's [`IoStats`] too (each fetcher call is
//! one wave on both). Readers that want lakeseek's typed [`Error`] (path, range,
//! `ObjectChanged`, `RetriesExhausted` as the source) call [`FetcherStorage::get_object`]
//! directly; the zarrs trait methods can only return a [`StorageError`], whose message then
//! names the object, the range and the cause.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use bytes::Bytes;
use futures::StreamExt;
use object_store::path::Path;
use object_store::prefix::PrefixStore;
use object_store::ObjectStore;
use zarrs::storage::byte_range::{ByteRange, ByteRangeIterator};
use zarrs::storage::{
    AsyncMaybeBytesIterator, AsyncWritableStorageTraits, MaybeBytes, OffsetBytesIterator,
    StorageError, StoreKey, StorePrefix,
};
use zarrs_object_store::AsyncObjectStore;

use crate::error::{Error, Result};
use crate::io::fetch::{RangeFetcher, ReadRequest, Tail};
use crate::io::source::{ObjectChanged, ObjectVersion};
use crate::io::stats::{IoStats, IoStatsSnapshot, RequestGuard};

/// At most this many object versions are pinned per storage; later first reads are not
/// pinned (a replacement of those objects is then not detected).
pub(crate) const MAX_PINNED_VERSIONS: usize = 1 << 18;

tokio::task_local! {
    static QUERY_STATS: Arc<IoStats>;
}

/// Run `fut` with `stats` as the current query's counters: requests a [`FetcherStorage`]
/// sends while `fut` runs (on this task) are added to `stats` as well as to the storage's
/// index-wide counters.
pub(crate) async fn with_query_stats<F: std::future::Future>(
    stats: Arc<IoStats>,
    fut: F,
) -> F::Output {
    QUERY_STATS.scope(stats, fut).await
}

fn current_query_stats() -> Option<Arc<IoStats>> {
    QUERY_STATS.try_with(Arc::clone).ok()
}

/// Counts of what a [`FetcherStorage`] did (see [`StorageProbe`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RequestKinds {
    /// Read requests sent through the fetcher (whole, range or suffix GETs; retries of one
    /// read count once, as in [`IoStats`]).
    pub gets: u64,
    /// Writes and erasures passed to the writer.
    pub writes: u64,
}

#[derive(Debug, Default)]
struct ProbeState {
    gets: AtomicU64,
    writes: AtomicU64,
    log: Mutex<Option<Vec<String>>>,
}

/// Reads the request counters and the request log of a [`FetcherStorage`].
#[derive(Debug, Clone, Default)]
pub struct StorageProbe {
    state: Arc<ProbeState>,
}

impl StorageProbe {
    /// Counts so far.
    pub fn kinds(&self) -> RequestKinds {
        RequestKinds {
            gets: self.state.gets.load(Ordering::SeqCst),
            writes: self.state.writes.load(Ordering::SeqCst),
        }
    }

    fn log(&self) -> MutexGuard<'_, Option<Vec<String>>> {
        self.state.log.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Start (or restart) recording the key of every read call.
    pub fn start_log(&self) {
        *self.log() = Some(Vec::new());
    }

    /// Stop recording and return the keys read since [`StorageProbe::start_log`], one per
    /// read call (in the order the calls started).
    pub fn take_log(&self) -> Vec<String> {
        self.log().take().unwrap_or_default()
    }

    fn note(&self, key: &str) {
        if let Some(entries) = self.log().as_mut() {
            entries.push(key.to_string());
        }
    }
}

/// Add a fetcher call's counts to `target`, inside a wave `target` already has open (so the
/// requests join that wave instead of opening new round trips).
fn add_counts(target: &IoStats, counts: &IoStatsSnapshot) {
    for _ in 0..counts.requests {
        drop(target.start_request());
    }
    target.add_bytes(counts.bytes);
    for _ in 0..counts.retries {
        target.add_retry();
    }
}

/// Adds one fetcher call's counts to the index-wide and query counters when dropped (after
/// the call finished or was cancelled), then closes the waves it opened on them.
struct CountOnDrop<'a> {
    index: &'a IoStats,
    query: Option<&'a IoStats>,
    call: &'a IoStats,
    probe: &'a StorageProbe,
    _index_wave: RequestGuard<'a>,
    _query_wave: Option<RequestGuard<'a>>,
}

impl Drop for CountOnDrop<'_> {
    fn drop(&mut self) {
        let counts = self.call.snapshot();
        self.probe
            .state
            .gets
            .fetch_add(counts.requests, Ordering::SeqCst);
        add_counts(self.index, &counts);
        if let Some(q) = self.query {
            add_counts(q, &counts);
        }
    }
}

/// A zarrs storage reading through a [`RangeFetcher`]; see the module docs.
pub(crate) struct FetcherStorage {
    fetcher: RangeFetcher,
    prefix: Path,
    label: String,
    stats: Arc<IoStats>,
    pinned: Mutex<HashMap<String, ObjectVersion>>,
    unpinned_prefixes: Vec<String>,
    writer: Option<Arc<dyn AsyncWritableStorageTraits>>,
    probe: StorageProbe,
}

impl std::fmt::Debug for FetcherStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FetcherStorage")
            .field("label", &self.label)
            .field("prefix", &self.prefix)
            .field("source", &self.fetcher.source().describe())
            .field("writable", &self.writer.is_some())
            .finish()
    }
}

impl FetcherStorage {
    /// A read-only storage over the objects under `prefix`, read by `fetcher` and counted into
    /// `stats`. `label` names the prefix in errors (e.g. the index URL).
    pub(crate) fn new(
        fetcher: RangeFetcher,
        prefix: Path,
        label: impl Into<String>,
        stats: Arc<IoStats>,
    ) -> Self {
        Self {
            fetcher,
            prefix,
            label: label.into().trim_end_matches('/').to_string(),
            stats,
            pinned: Mutex::default(),
            unpinned_prefixes: Vec::new(),
            writer: None,
            probe: StorageProbe::default(),
        }
    }

    /// Send writes to `store` (under the same prefix) through zarrs' object_store storage.
    pub(crate) fn with_object_store_writes(mut self, store: Arc<dyn ObjectStore>) -> Self {
        let prefixed = PrefixStore::new(store, self.prefix.clone());
        self.writer = Some(Arc::new(AsyncObjectStore::new(prefixed)));
        self
    }

    /// Never pin the versions of keys starting with `key_prefix` (objects that are expected
    /// to be rewritten while the storage is open).
    pub(crate) fn with_unpinned_prefix(mut self, key_prefix: impl Into<String>) -> Self {
        self.unpinned_prefixes.push(key_prefix.into());
        self
    }

    /// The index-wide counters.
    #[cfg(test)]
    pub(crate) fn stats(&self) -> &Arc<IoStats> {
        &self.stats
    }

    /// A handle on the request counters and log.
    pub(crate) fn probe(&self) -> &StorageProbe {
        &self.probe
    }

    /// The name of `key` in errors: `<label>/<key>`.
    pub(crate) fn label_of(&self, key: &str) -> String {
        format!("{}/{}", self.label, key)
    }

    fn path_of(&self, key: &str) -> Path {
        let key = key.trim_start_matches('/');
        if self.prefix.as_ref().is_empty() {
            Path::from(key)
        } else {
            Path::from(format!("{}/{}", self.prefix, key))
        }
    }

    fn pins(&self) -> MutexGuard<'_, HashMap<String, ObjectVersion>> {
        self.pinned.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn is_pinnable(&self, key: &str) -> bool {
        !self.unpinned_prefixes.iter().any(|p| key.starts_with(p))
    }

    fn pinned_version(&self, key: &str) -> Option<ObjectVersion> {
        self.pins().get(key).cloned()
    }

    fn pin(&self, key: &str, version: &ObjectVersion) {
        if !self.is_pinnable(key) {
            return;
        }
        let mut pins = self.pins();
        if pins.len() < MAX_PINNED_VERSIONS || pins.contains_key(key) {
            pins.insert(key.to_string(), version.clone());
        }
    }

    fn forget(&self, key: &str) {
        self.pins().remove(key);
    }

    /// Run one fetcher call (one wave) counted on the index-wide and the current query's
    /// counters; errors are renamed to `<label>/<key>` (their kind and source are kept). The
    /// counts are added even when the call is cancelled (e.g. a dropped prefetch).
    async fn counted<T, F, Fut>(&self, key: &str, call: F) -> Result<T>
    where
        F: FnOnce(Arc<IoStats>) -> Fut,
        Fut: std::future::Future<Output = Result<T>>,
    {
        self.probe.note(key);
        let query = current_query_stats();
        let call_stats = Arc::new(IoStats::new());
        let _count = CountOnDrop {
            index: &self.stats,
            query: query.as_deref(),
            call: &call_stats,
            probe: &self.probe,
            _index_wave: self.stats.start_wave(),
            _query_wave: query.as_ref().map(|q| q.start_wave()),
        };
        let out = call(Arc::clone(&call_stats)).await;
        out.map_err(|e| self.rename(key, e))
    }

    /// Put `<label>/<key>` in place of the store path in `err`.
    fn rename(&self, key: &str, err: Error) -> Error {
        let name = self.label_of(key);
        match err {
            Error::Store { range, source, .. } => Error::Store {
                path: name,
                range,
                source,
            },
            Error::ObjectChanged { range, what, .. } => Error::ObjectChanged {
                path: name,
                range,
                what,
            },
            Error::NotFound { what, .. } => Error::NotFound { path: name, what },
            Error::Corrupt {
                range,
                what,
                source,
                ..
            } => Error::Corrupt {
                path: name,
                range,
                what,
                source,
            },
            other => other,
        }
    }

    fn changed(&self, key: &str, expected: ObjectVersion, found: Option<ObjectVersion>) -> Error {
        let err = ObjectChanged::error(&self.path_of(key), None, ObjectChanged { expected, found });
        self.rename(key, err)
    }

    /// The whole object at `key`, `None` when it does not exist (and was never read before).
    /// See the module docs for pinning; errors name `<label>/<key>`.
    pub(crate) async fn get_object(&self, key: &str) -> Result<Option<Bytes>> {
        let path = self.path_of(key);
        let pinned = if self.is_pinnable(key) {
            self.pinned_version(key)
        } else {
            None
        };
        if let Some(expected) = pinned.clone().filter(|v| v.size > 0) {
            self.fetcher.expect_version(&path, &expected);
            let size = expected.size;
            let request = [ReadRequest::sized(path.clone(), 0..size, size)];
            let fetcher = &self.fetcher;
            let out = self
                .counted(
                    key,
                    |stats| async move { fetcher.fetch(&request, &stats).await },
                )
                .await;
            return match out {
                Ok(mut parts) => Ok(parts.pop()),
                Err(Error::NotFound { .. }) => Err(self.changed(key, expected, None)),
                Err(e) => Err(e),
            };
        }
        let fetcher = &self.fetcher;
        let path_ref = &path;
        let out = self
            .counted(
                key,
                |stats| async move { fetcher.whole(path_ref, &stats).await },
            )
            .await;
        match (out, pinned) {
            (Ok(whole), None) => {
                self.pin(key, &whole.version);
                Ok(Some(whole.bytes))
            }
            (Ok(whole), Some(expected)) if whole.version == expected => Ok(Some(whole.bytes)),
            (Ok(whole), Some(expected)) => Err(self.changed(key, expected, Some(whole.version))),
            (Err(Error::NotFound { .. }), None) => Ok(None),
            (Err(Error::NotFound { .. }), Some(expected)) => Err(self.changed(key, expected, None)),
            (Err(e), _) => Err(e),
        }
    }

    /// One suffix read of `key` (`None` when it does not exist); pins the version.
    async fn tail_of(&self, key: &str, n: u64) -> Result<Option<Tail>> {
        let path = self.path_of(key);
        let fetcher = &self.fetcher;
        let path_ref = &path;
        let out = self
            .counted(key, |stats| async move {
                fetcher.tail(path_ref, n, &stats).await
            })
            .await;
        match out {
            Ok(tail) => {
                match self.pinned_version(key) {
                    Some(expected) if expected != tail.version => {
                        return Err(self.changed(key, expected, Some(tail.version)))
                    }
                    Some(_) => {}
                    None => self.pin(key, &tail.version),
                }
                Ok(Some(tail))
            }
            Err(Error::NotFound { .. }) => match self.pinned_version(key) {
                Some(expected) => Err(self.changed(key, expected, None)),
                None => Ok(None),
            },
            Err(e) => Err(e),
        }
    }

    /// Byte ranges of `key` (see the module docs); `None` when the object does not exist.
    pub(crate) async fn get_ranges(
        &self,
        key: &str,
        ranges: &[ByteRange],
    ) -> Result<Option<Vec<Bytes>>> {
        if ranges.is_empty() {
            return Ok(Some(Vec::new()));
        }
        let path = self.path_of(key);
        let Some((size, tail)) = self.size_and_tail(key, ranges).await? else {
            return Ok(None);
        };
        let absolute: Vec<Range<u64>> = ranges
            .iter()
            .map(|r| absolute_range(r, size).ok_or_else(|| self.bad_range(key, r, size)))
            .collect::<Result<_>>()?;
        let (mut out, wanted) = plan_range_reads(&path, &absolute, size, tail.as_ref());
        if !wanted.is_empty() {
            let Some(fetched) = self.fetch_wanted(key, &path, &wanted).await? else {
                return Ok(None);
            };
            let mut fetched = fetched.into_iter();
            for slot in out.iter_mut().filter(|s| s.is_none()) {
                *slot = fetched.next();
            }
        }
        out.into_iter()
            .map(|b| {
                b.ok_or_else(|| Error::Corrupt {
                    path: self.label_of(key),
                    range: None,
                    what: "internal: a requested range was not fetched".into(),
                    source: None,
                })
            })
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }

    /// What [`get_ranges`](Self::get_ranges) knows of `key`'s size before reading: the
    /// pinned size; none when every range is bounded from the start; else the size from one
    /// tail read (long enough for the longest suffix), kept to answer ranges from.
    /// `None` when the object does not exist.
    async fn size_and_tail(
        &self,
        key: &str,
        ranges: &[ByteRange],
    ) -> Result<Option<(Option<u64>, Option<Tail>)>> {
        if let Some(version) = self.pinned_version(key) {
            return Ok(Some((Some(version.size), None)));
        }
        let Some(n) = tail_length(ranges) else {
            return Ok(Some((None, None)));
        };
        Ok(self
            .tail_of(key, n)
            .await?
            .map(|tail| (Some(tail.version.size), Some(tail))))
    }

    /// Fetch `wanted` (ranges of `key` at `path`), checked against the pinned version.
    /// `None` when the object does not exist (and was never pinned).
    async fn fetch_wanted(
        &self,
        key: &str,
        path: &Path,
        wanted: &[ReadRequest],
    ) -> Result<Option<Vec<Bytes>>> {
        if let Some(expected) = self.pinned_version(key) {
            self.fetcher.expect_version(path, &expected);
        }
        let fetcher = &self.fetcher;
        let fetched = self
            .counted(
                key,
                |stats| async move { fetcher.fetch(wanted, &stats).await },
            )
            .await;
        match fetched {
            Ok(parts) => Ok(Some(parts)),
            Err(Error::NotFound { .. }) => match self.pinned_version(key) {
                Some(expected) => Err(self.changed(key, expected, None)),
                None => Ok(None),
            },
            Err(e) => Err(e),
        }
    }

    fn bad_range(&self, key: &str, range: &ByteRange, size: Option<u64>) -> Error {
        let size = size.map_or_else(|| "unknown".to_string(), |s| s.to_string());
        Error::InvalidArgument(format!(
            "byte range {range:?} of {} (size {size}) is outside the object",
            self.label_of(key)
        ))
    }

    fn writer(&self) -> std::result::Result<&Arc<dyn AsyncWritableStorageTraits>, StorageError> {
        self.writer.as_ref().ok_or(StorageError::ReadOnly)
    }

    fn note_write(&self) {
        self.probe.state.writes.fetch_add(1, Ordering::SeqCst);
    }
}

/// The tail to read when the size of an object is unknown: long enough for the longest
/// suffix range (at least 1 byte); `None` when every range is bounded from the start (no
/// size is needed).
fn tail_length(ranges: &[ByteRange]) -> Option<u64> {
    let all_bounded = ranges
        .iter()
        .all(|r| matches!(r, ByteRange::FromStart(_, Some(_))));
    if all_bounded {
        return None;
    }
    let n = ranges
        .iter()
        .map(|r| match r {
            ByteRange::Suffix(n) => *n,
            ByteRange::FromStart(..) => 1,
        })
        .max()
        .unwrap_or(1)
        .max(1);
    Some(n)
}

/// One slot per range of `absolute`, filled where no read is needed (empty ranges, ranges
/// inside `tail`), and the reads of the others, in slot order.
fn plan_range_reads(
    path: &Path,
    absolute: &[Range<u64>],
    size: Option<u64>,
    tail: Option<&Tail>,
) -> (Vec<Option<Bytes>>, Vec<ReadRequest>) {
    let mut out: Vec<Option<Bytes>> = vec![None; absolute.len()];
    let mut wanted = Vec::new();
    for (slot, range) in out.iter_mut().zip(absolute) {
        if range.start == range.end {
            *slot = Some(Bytes::new());
        } else if let Some(bytes) = tail.and_then(|t| t.slice(range.clone())) {
            *slot = Some(bytes);
        } else {
            wanted.push(match size {
                Some(s) => ReadRequest::sized(path.clone(), range.clone(), s),
                None => ReadRequest::new(path.clone(), range.clone()),
            });
        }
    }
    (out, wanted)
}

/// `range` as absolute offsets in an object of `size` bytes (when known); `None` when it is
/// inverted, overflows or ends past the end.
fn absolute_range(range: &ByteRange, size: Option<u64>) -> Option<Range<u64>> {
    let r = match (*range, size) {
        (ByteRange::FromStart(start, Some(len)), _) => start..start.checked_add(len)?,
        (ByteRange::FromStart(start, None), Some(size)) => start..size,
        (ByteRange::Suffix(n), Some(size)) => size.saturating_sub(n)..size,
        (_, None) => return None,
    };
    let in_bounds = size.is_none_or(|s| r.end <= s);
    (r.start <= r.end && in_bounds).then_some(r)
}

fn to_storage_error(e: Error) -> StorageError {
    StorageError::Other(e.to_string())
}

#[async_trait]
impl zarrs::storage::AsyncReadableStorageTraits for FetcherStorage {
    async fn get(&self, key: &StoreKey) -> std::result::Result<MaybeBytes, StorageError> {
        self.get_object(key.as_str())
            .await
            .map_err(to_storage_error)
    }

    async fn get_partial_many<'a>(
        &'a self,
        key: &StoreKey,
        byte_ranges: ByteRangeIterator<'a>,
    ) -> std::result::Result<AsyncMaybeBytesIterator<'a>, StorageError> {
        let ranges: Vec<ByteRange> = byte_ranges.collect();
        let parts = self
            .get_ranges(key.as_str(), &ranges)
            .await
            .map_err(to_storage_error)?;
        Ok(parts.map(|parts| futures::stream::iter(parts.into_iter().map(Ok)).boxed()))
    }

    async fn size_key(&self, key: &StoreKey) -> std::result::Result<Option<u64>, StorageError> {
        if let Some(v) = self.pinned_version(key.as_str()) {
            return Ok(Some(v.size));
        }
        let tail = self
            .tail_of(key.as_str(), 1)
            .await
            .map_err(to_storage_error)?;
        Ok(tail.map(|t| t.version.size))
    }

    fn supports_get_partial(&self) -> bool {
        true
    }
}

#[async_trait]
impl AsyncWritableStorageTraits for FetcherStorage {
    async fn set(&self, key: &StoreKey, value: Bytes) -> std::result::Result<(), StorageError> {
        let writer = self.writer()?;
        self.note_write();
        self.forget(key.as_str());
        writer.set(key, value).await
    }

    async fn set_partial_many<'a>(
        &'a self,
        key: &StoreKey,
        offset_values: OffsetBytesIterator<'a>,
    ) -> std::result::Result<(), StorageError> {
        let writer = self.writer()?;
        self.note_write();
        self.forget(key.as_str());
        writer.set_partial_many(key, offset_values).await
    }

    async fn erase(&self, key: &StoreKey) -> std::result::Result<(), StorageError> {
        let writer = self.writer()?;
        self.note_write();
        self.forget(key.as_str());
        writer.erase(key).await
    }

    async fn erase_prefix(&self, prefix: &StorePrefix) -> std::result::Result<(), StorageError> {
        let writer = self.writer()?;
        self.note_write();
        self.pins().retain(|k, _| !k.starts_with(prefix.as_str()));
        writer.erase_prefix(prefix).await
    }

    fn supports_set_partial(&self) -> bool {
        self.writer
            .as_ref()
            .is_some_and(|w| w.supports_set_partial())
    }
}

#[cfg(test)]
#[path = "zarr_storage_tests.rs"]
mod tests;
