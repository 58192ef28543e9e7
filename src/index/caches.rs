//! The index layer's caches, kept in the dataset session's
//! [`extensions`](crate::lance::dataset::DatasetSession::extensions): decoded page lookups
//! and (when the session enables it) decoded index pages.

use std::sync::Arc;

use crate::index::btree::exec::BTreePageData;
use crate::index::btree::BTreePageLookup;
use crate::io::cache::SizedCache;
use crate::lance::dataset::DatasetSession;

/// Caches of decoded index structures shared by the datasets of one session.
#[derive(Debug)]
pub(crate) struct IndexCaches {
    /// Decoded BTree page lookups, by `page_lookup.lance` path + size.
    pub btree_lookups: SizedCache<(), BTreePageLookup>,
    /// Decoded BTree pages (values + ids) by page-data path + size + page number; `None`
    /// only in test sessions built without a page cache.
    pub btree_pages: Option<SizedCache<u32, BTreePageData>>,
}

impl IndexCaches {
    /// The index caches of `session` (created with the session's budgets on first use).
    pub(crate) fn of(session: &DatasetSession) -> Arc<IndexCaches> {
        session.extensions.get_or_init(|| IndexCaches {
            btree_lookups: SizedCache::new(session.cache_bytes),
            btree_pages: session.index_page_cache_bytes.map(SizedCache::new),
        })
    }
}
