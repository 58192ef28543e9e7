//! The index layer's session caches: each index kind keeps what it decodes (lookups, pages,
//! keys, row sets, zone maps, blooms) in a cache of the session, of its share of the session's
//! one budget ([`CacheShare`]), created on first use and weighed with the others.

use crate::io::budget::CacheShare;
use crate::io::cache::{DeepSize, SizedCache};
use crate::lance::dataset::DatasetSession;

/// The session's cache of decoded `V`s (one per key and value type), of `share`'s capacity.
pub(crate) fn session_cache<K, V>(session: &DatasetSession, share: CacheShare) -> SizedCache<K, V>
where
    K: std::hash::Hash + Eq + Clone + Send + Sync + 'static,
    V: DeepSize + Send + Sync + 'static,
{
    sized_session_cache(session, share, session.caches.bytes(share))
}

/// [`session_cache`] of `bytes` (test sessions choose a page cache's size).
pub(crate) fn sized_session_cache<K, V>(
    session: &DatasetSession,
    share: CacheShare,
    bytes: u64,
) -> SizedCache<K, V>
where
    K: std::hash::Hash + Eq + Clone + Send + Sync + 'static,
    V: DeepSize + Send + Sync + 'static,
{
    let slot = session.extensions.get_or_init(|| {
        let cache = SizedCache::new(bytes);
        session.caches.register(share, &cache);
        KindCache(cache)
    });
    slot.0.clone()
}

/// The extension slot holding one kind's cache (its type names the key and value types).
struct KindCache<K, V>(SizedCache<K, V>);
