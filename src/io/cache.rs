//! Typed, size-weighted moka caches of decoded things (file metadata, page lookups,
//! structural plans), keyed by object path + version so a replaced object never mixes with
//! what was decoded from its predecessor.

use std::hash::Hash;
use std::sync::Arc;

use moka::future::Cache;

use crate::error::{Error, Result};
use crate::io::source::ObjectVersion;

/// Things that can report their approximate heap size for cache weighing.
pub(crate) trait DeepSize {
    /// Approximate bytes held by this value.
    fn deep_size(&self) -> usize;
}

/// Key of a cached decoded object: path + version + an item discriminator
/// (e.g. column and page numbers; `()` for whole-file metadata).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct CacheKey<K> {
    /// Object path.
    pub path: String,
    /// Object size/etag.
    pub version: ObjectVersion,
    /// What inside the object.
    pub item: K,
}

/// A size-weighted async cache whose concurrent misses for one key collapse into one load.
/// Clones share the entries (whatever the key and value types).
pub(crate) struct SizedCache<K, V> {
    inner: Cache<CacheKey<K>, Arc<V>>,
}

impl<K, V> Clone for SizedCache<K, V> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<K, V> std::fmt::Debug for SizedCache<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SizedCache")
            .field("entries", &self.inner.entry_count())
            .finish()
    }
}

impl<K, V> SizedCache<K, V>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: DeepSize + Send + Sync + 'static,
{
    /// A cache holding at most about `capacity_bytes` of decoded values.
    pub(crate) fn new(capacity_bytes: u64) -> Self {
        let inner = Cache::builder()
            .max_capacity(capacity_bytes)
            .weigher(|_k: &CacheKey<K>, v: &Arc<V>| v.deep_size().min(u32::MAX as usize) as u32)
            .build();
        Self { inner }
    }

    /// Cached value, if present.
    pub(crate) async fn get(&self, key: &CacheKey<K>) -> Option<Arc<V>> {
        self.inner.get(key).await
    }

    /// Cached value or the result of `load` (run once for concurrent misses).
    pub(crate) async fn get_or_try_load<F>(&self, key: CacheKey<K>, load: F) -> Result<Arc<V>>
    where
        F: std::future::Future<Output = Result<V>>,
    {
        self.inner
            .try_get_with(key, async move { load.await.map(Arc::new) })
            .await
            .map_err(|e: Arc<Error>| clone_error(&e))
    }

    /// Insert a value.
    pub(crate) async fn insert(&self, key: CacheKey<K>, value: Arc<V>) {
        self.inner.insert(key, value).await;
    }

    /// Drop the entry of `key`, if any.
    pub(crate) async fn invalidate(&self, key: &CacheKey<K>) {
        self.inner.invalidate(key).await;
    }

    /// Drop everything.
    pub(crate) fn clear(&self) {
        self.inner.invalidate_all();
    }

    /// Number of entries (approximate until pending maintenance has run).
    #[cfg(test)]
    pub(crate) fn entry_count(&self) -> u64 {
        self.inner.entry_count()
    }

    /// Sum of the weights (deep sizes) of the entries (approximate, like `entry_count`).
    pub(crate) fn weighted_size(&self) -> u64 {
        self.inner.weighted_size()
    }

    /// Run moka's pending maintenance (evictions, counters) now; useful in tests.
    pub(crate) async fn run_pending_tasks(&self) {
        self.inner.run_pending_tasks().await;
    }
}

/// moka hands errors back behind an `Arc`; every caller gets its own copy of the same typed
/// error (sources are shared, see [`Error`]).
fn clone_error(e: &Error) -> Error {
    e.clone()
}

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;
