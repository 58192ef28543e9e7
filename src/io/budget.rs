//! [`CacheBudget`]: the one table that sizes every memory cache of a session as a share of its
//! one byte budget, and the registry of the caches made from it (so a test can weigh them all).
//!
//! Every cache takes its capacity from [`CacheBudget::bytes`]; the shares add up to at most
//! the budget, so the caches of one session together hold at most about its budget.

use std::sync::{Arc, Mutex};

use crate::io::cache::{DeepSize, SizedCache};

/// One cache of a session, and its share of the budget in [`TOTAL_PARTS`]ths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum CacheShare {
    /// Decoded manifests.
    Manifests,
    /// Decoded deletion vectors.
    Deletions,
    /// Lance file metadata (footer, column and page metadata).
    FileMetadata,
    /// Page inits: chunk tables, dictionaries, 2.3 structural plans.
    PageInits,
    /// Decoded BTree page lookups.
    BTreeLookups,
    /// Decoded BTree pages (values and row ids).
    BTreePages,
    /// Keys of bitmap lookups read so far.
    BitmapKeys,
    /// Decoded bitmap row sets (bitmap and NGRAM posting lists), and the filter engine's
    /// memo of the truth values scalar predicates had on rows read from data.
    BitmapRowSets,
    /// Decoded zone maps.
    ZoneMaps,
    /// Decoded bloom-filter indices.
    Blooms,
    /// Decoded ecpfs nodes of every index opened with the session.
    EcpNodes,
    /// Lance vector indices: opened segments (centroids, codebooks) and decoded partitions.
    VectorIndices,
    /// Full-text (INVERTED) indices: opened segments with their token dictionaries, posting
    /// lists, scored documents' lengths.
    FullText,
}

/// The shares are parts of this many.
pub(crate) const TOTAL_PARTS: u64 = 64;

impl CacheShare {
    /// Every cache of a session.
    #[cfg(test)]
    pub(crate) const ALL: [CacheShare; 13] = [
        CacheShare::Manifests,
        CacheShare::Deletions,
        CacheShare::FileMetadata,
        CacheShare::PageInits,
        CacheShare::BTreeLookups,
        CacheShare::BTreePages,
        CacheShare::BitmapKeys,
        CacheShare::BitmapRowSets,
        CacheShare::ZoneMaps,
        CacheShare::Blooms,
        CacheShare::EcpNodes,
        CacheShare::VectorIndices,
        CacheShare::FullText,
    ];

    /// This cache's parts of [`TOTAL_PARTS`]. Page inits (read by every take) get the most;
    /// BTree pages keep the eighth the BTree benchmark measured (32 MiB of the default budget).
    const fn parts(self) -> u64 {
        match self {
            CacheShare::Manifests | CacheShare::Deletions => 2,
            CacheShare::FileMetadata | CacheShare::BTreeLookups => 6,
            CacheShare::PageInits => 14,
            CacheShare::FullText => 4,
            CacheShare::VectorIndices => 6,
            CacheShare::BTreePages | CacheShare::EcpNodes => 8,
            CacheShare::BitmapKeys => 2,
            CacheShare::BitmapRowSets => 4,
            CacheShare::ZoneMaps | CacheShare::Blooms => 1,
        }
    }
}

/// How a session sizes its caches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CacheBudget {
    /// Every cache takes its share of one budget of this many bytes.
    Shared(u64),
    /// Every cache holds this many bytes (test sessions that size caches one by one).
    #[cfg(test)]
    Each(u64),
}

impl CacheBudget {
    /// The capacity of `share`'s cache.
    pub(crate) fn bytes(self, share: CacheShare) -> u64 {
        match self {
            CacheBudget::Shared(total) => {
                (u128::from(total) * u128::from(share.parts()) / u128::from(TOTAL_PARTS)) as u64
            }
            #[cfg(test)]
            CacheBudget::Each(bytes) => bytes,
        }
    }
}

/// A cache the registry can weigh.
#[cfg_attr(not(test), allow(dead_code))] // weighed by the tests
trait Weighed: Send + Sync {
    fn weighted_size(&self) -> u64;
    fn run_pending_tasks(&self) -> futures::future::BoxFuture<'_, ()>;
}

impl<K, V> Weighed for SizedCache<K, V>
where
    K: std::hash::Hash + Eq + Clone + Send + Sync + 'static,
    V: DeepSize + Send + Sync + 'static,
{
    fn weighted_size(&self) -> u64 {
        SizedCache::weighted_size(self)
    }

    fn run_pending_tasks(&self) -> futures::future::BoxFuture<'_, ()> {
        Box::pin(SizedCache::run_pending_tasks(self))
    }
}

/// A registered cache and its share.
type RegisteredCache = (CacheShare, Arc<dyn Weighed>);

/// The caches of one session: their budget, and every cache made from it.
#[derive(Clone)]
pub(crate) struct CacheRegistry {
    budget: CacheBudget,
    caches: Arc<Mutex<Vec<RegisteredCache>>>,
}

impl std::fmt::Debug for CacheRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CacheRegistry")
            .field("budget", &self.budget)
            .finish()
    }
}

impl CacheRegistry {
    /// A registry sizing caches by `budget`.
    pub(crate) fn new(budget: CacheBudget) -> Self {
        Self {
            budget,
            caches: Arc::default(),
        }
    }

    /// The capacity of `share`'s cache.
    pub(crate) fn bytes(&self, share: CacheShare) -> u64 {
        self.budget.bytes(share)
    }

    /// A new cache of `share`'s capacity, registered.
    pub(crate) fn cache<K, V>(&self, share: CacheShare) -> SizedCache<K, V>
    where
        K: std::hash::Hash + Eq + Clone + Send + Sync + 'static,
        V: DeepSize + Send + Sync + 'static,
    {
        let cache = SizedCache::new(self.bytes(share));
        self.register(share, &cache);
        cache
    }

    /// Weigh `cache` (made elsewhere with `share`'s capacity) with the others.
    pub(crate) fn register<K, V>(&self, share: CacheShare, cache: &SizedCache<K, V>)
    where
        K: std::hash::Hash + Eq + Clone + Send + Sync + 'static,
        V: DeepSize + Send + Sync + 'static,
    {
        let mut caches = self.caches.lock().unwrap_or_else(|p| p.into_inner());
        caches.push((share, Arc::new(cache.clone())));
    }

    /// The weights of every registered cache, by share, after their pending maintenance.
    #[cfg(test)]
    pub(crate) async fn weighed(&self) -> Vec<(CacheShare, u64)> {
        let caches: Vec<_> = {
            let caches = self.caches.lock().unwrap_or_else(|p| p.into_inner());
            caches.clone()
        };
        let mut out = Vec::new();
        for (share, cache) in caches {
            cache.run_pending_tasks().await;
            out.push((share, cache.weighted_size()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_to_the_budget() {
        let parts: u64 = CacheShare::ALL.iter().map(|s| s.parts()).sum();
        assert_eq!(parts, TOTAL_PARTS);
        for total in [0, 1, 63, 64, 1000, 256 << 20, u64::MAX] {
            let budget = CacheBudget::Shared(total);
            let sum: u128 = CacheShare::ALL
                .iter()
                .map(|s| u128::from(budget.bytes(*s)))
                .sum();
            assert!(sum <= u128::from(total), "{sum} > {total}");
        }
        // The default budget: BTree pages keep their 32 MiB.
        let budget = CacheBudget::Shared(256 << 20);
        assert_eq!(budget.bytes(CacheShare::BTreePages), 32 << 20);
    }
}
