//! The session cache of full-text indices, in the session's [`CacheShare::FullText`] share:
//! opened segments (params, partition statistics, token dictionaries), decoded posting lists
//! (per token, with or without positions) and scored documents' row ids and lengths, so a
//! warm query reads none of the index bytes an earlier one read.

use std::sync::Arc;

use super::files::{FtsSegment, PartitionKind};
use super::read::TermPostings;
use super::tokens::TokenSet;
use crate::index::caches::session_cache;
use crate::io::budget::CacheShare;
use crate::io::cache::{CacheKey, DeepSize, SizedCache};
use crate::io::ObjectVersion;
use crate::lance::dataset::DatasetVersion;

/// What inside an index file an entry is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum FtsItem {
    /// The opened segment (keyed by its `metadata.lance` path).
    Segment,
    /// A token's posting list (keyed by the invert file).
    Postings {
        /// Token id.
        token: u32,
        /// Whether positions were decoded.
        positions: bool,
    },
    /// A document's row id and length (keyed by the docs file).
    Doc(u64),
    /// A document's length alone (keyed by the docs file).
    Length(u64),
}

/// What the cache holds.
#[derive(Debug, Clone)]
pub(crate) enum FtsEntry {
    /// An opened segment.
    Segment(Arc<FtsSegment>),
    /// A decoded posting list.
    Postings(Arc<TermPostings>),
    /// Row id and length of one document.
    Doc(u64, u32),
    /// Length of one document.
    Length(u32),
}

impl DeepSize for FtsEntry {
    fn deep_size(&self) -> usize {
        const KEY: usize = 96;
        KEY + match self {
            Self::Segment(s) => segment_size(s),
            Self::Postings(p) => {
                let positions = p
                    .positions
                    .as_ref()
                    .map_or(0, |all| all.iter().map(|d| 24 + d.len() * 4).sum::<usize>());
                p.docs.len() * 12 + p.block_max.len() * 4 + positions
            }
            Self::Doc(..) | Self::Length(_) => 16,
        }
    }
}

fn segment_size(s: &FtsSegment) -> usize {
    let mut total = 1024;
    for p in &s.partitions {
        total += 512
            + match p.tokens.as_ref() {
                TokenSet::Fst(map) => map.as_fst().as_bytes().len(),
                TokenSet::Arrow(map) => map.keys().map(|k| k.len() + 40).sum(),
            };
        if let PartitionKind::Legacy { offsets, lengths } = &p.kind {
            total += offsets.len() * 8 + lengths.len() * 24;
        }
    }
    total
}

/// The session's full-text cache.
pub(crate) type FtsCache = SizedCache<FtsItem, FtsEntry>;

/// The full-text cache of `dataset`'s session.
pub(crate) fn fts_cache(dataset: &DatasetVersion) -> FtsCache {
    session_cache(dataset.session(), CacheShare::FullText)
}

/// The key of `item` of the (immutable) index file at `path`.
pub(crate) fn key(path: &str, item: FtsItem) -> CacheKey<FtsItem> {
    CacheKey {
        path: path.to_string(),
        version: ObjectVersion {
            size: 0,
            etag: None,
        },
        item,
    }
}
