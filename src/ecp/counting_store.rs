//! An `ObjectStore` wrapper that counts the requests zarrs makes into [`IoStats`].
//!
//! zarrs talks to object_store directly (through `zarrs_object_store`), not through lakeseek's
//! [`RangeSource`](crate::io::RangeSource), so its requests are counted here: every GET (whole,
//! ranged or HEAD) opens a request on the index-wide [`IoStats`] and, when the current tokio task
//! runs inside [`with_query_stats`], on that query's [`IoStats`] as well. The body is read inside
//! the request so round trips (sequential waves) are measured up to the last byte.
//!
//! HEADs, LISTs and PUTs are also counted on their own so tests can assert the reader never
//! issues them, and an optional request log records the keys fetched.
//!
//! Candidate for `src/io/` once the I/O layer wants it.

use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult,
};

use crate::io::IoStats;

tokio::task_local! {
    static QUERY_STATS: Arc<IoStats>;
}

/// Run `fut` with `stats` as the current query's counters: requests the counting store sees
/// while `fut` runs (on this task) are added to `stats` too.
pub async fn with_query_stats<F: std::future::Future>(stats: Arc<IoStats>, fut: F) -> F::Output {
    QUERY_STATS.scope(stats, fut).await
}

/// Counters of request kinds the reader should never send.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RequestKinds {
    /// GET requests with a body (whole or ranged).
    pub gets: u64,
    /// HEAD requests (`get_opts` with `head: true`).
    pub heads: u64,
    /// LIST calls.
    pub lists: u64,
    /// PUT calls.
    pub puts: u64,
}

#[derive(Debug, Default)]
struct KindCounters {
    gets: AtomicU64,
    heads: AtomicU64,
    lists: AtomicU64,
    puts: AtomicU64,
}

/// Counts every request into [`IoStats`]; see the module docs.
pub struct CountingStore<T> {
    inner: T,
    stats: Arc<IoStats>,
    kinds: Arc<KindCounters>,
    log: Arc<Mutex<Option<Vec<String>>>>,
}

impl<T: ObjectStore> CountingStore<T> {
    /// Wrap `inner`, counting into `stats`.
    pub fn new(inner: T, stats: Arc<IoStats>) -> Self {
        Self {
            inner,
            stats,
            kinds: Arc::default(),
            log: Arc::default(),
        }
    }

    /// A handle to read the request-kind counters and the request log of this store.
    pub fn probe(&self) -> StoreProbe {
        StoreProbe {
            kinds: self.kinds.clone(),
            log: self.log.clone(),
        }
    }

    /// Log the request and return the current query's counters, if any.
    fn note(&self, location: &Path) -> Option<Arc<IoStats>> {
        if let Ok(mut log) = self.log.lock() {
            if let Some(entries) = log.as_mut() {
                entries.push(location.to_string());
            }
        }
        QUERY_STATS.try_with(|s| s.clone()).ok()
    }
}

/// Reads the request-kind counters and request log of a [`CountingStore`].
#[derive(Debug, Clone)]
pub struct StoreProbe {
    kinds: Arc<KindCounters>,
    log: Arc<Mutex<Option<Vec<String>>>>,
}

impl StoreProbe {
    /// Counts per request kind so far.
    pub fn kinds(&self) -> RequestKinds {
        RequestKinds {
            gets: self.kinds.gets.load(Ordering::SeqCst),
            heads: self.kinds.heads.load(Ordering::SeqCst),
            lists: self.kinds.lists.load(Ordering::SeqCst),
            puts: self.kinds.puts.load(Ordering::SeqCst),
        }
    }

    /// Start (or restart) recording the path of every GET/HEAD.
    pub fn start_log(&self) {
        if let Ok(mut log) = self.log.lock() {
            *log = Some(Vec::new());
        }
    }

    /// Stop recording and return the paths recorded since [`StoreProbe::start_log`].
    pub fn take_log(&self) -> Vec<String> {
        self.log
            .lock()
            .ok()
            .and_then(|mut l| l.take())
            .unwrap_or_default()
    }
}

impl<T: ObjectStore> fmt::Display for CountingStore<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Counting({})", self.inner)
    }
}

impl<T: ObjectStore> fmt::Debug for CountingStore<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CountingStore({:?})", self.inner)
    }
}

fn add_bytes(query: &Option<Arc<IoStats>>, index: &IoStats, n: u64) {
    index.add_bytes(n);
    if let Some(q) = query {
        q.add_bytes(n);
    }
}

#[async_trait]
impl<T: ObjectStore> ObjectStore for CountingStore<T> {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.kinds.puts.fetch_add(1, Ordering::SeqCst);
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.kinds.puts.fetch_add(1, Ordering::SeqCst);
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        let counter = if options.head {
            &self.kinds.heads
        } else {
            &self.kinds.gets
        };
        counter.fetch_add(1, Ordering::SeqCst);
        let query = self.note(location);
        let index_guard = self.stats.start_request();
        let query_guard = query.as_ref().map(|q| q.start_request());
        let result = self.inner.get_opts(location, options).await?;
        let GetResult {
            meta,
            range,
            attributes,
            extensions,
            payload,
        } = result;
        let whole = GetResult {
            payload,
            meta: meta.clone(),
            range: range.clone(),
            attributes: attributes.clone(),
            extensions: extensions.clone(),
        };
        let body = whole.bytes().await?;
        add_bytes(&query, &self.stats, body.len() as u64);
        drop(query_guard);
        drop(index_guard);
        let stream = futures::stream::once(async move { Ok(body) }).boxed();
        Ok(GetResult {
            payload: GetResultPayload::Stream(stream),
            meta,
            range,
            attributes,
            extensions,
        })
    }

    async fn get_ranges(
        &self,
        location: &Path,
        ranges: &[Range<u64>],
    ) -> object_store::Result<Vec<Bytes>> {
        // One logical call; the inner store may coalesce into fewer GETs. Counted as one
        // request per call (zarrs only calls this after a HEAD, which we never trigger).
        self.kinds.gets.fetch_add(1, Ordering::SeqCst);
        let query = self.note(location);
        let index_guard = self.stats.start_request();
        let query_guard = query.as_ref().map(|q| q.start_request());
        let out = self.inner.get_ranges(location, ranges).await?;
        add_bytes(
            &query,
            &self.stats,
            out.iter().map(|b| b.len() as u64).sum(),
        );
        drop(query_guard);
        drop(index_guard);
        Ok(out)
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.kinds.lists.fetch_add(1, Ordering::SeqCst);
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.kinds.lists.fetch_add(1, Ordering::SeqCst);
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}
