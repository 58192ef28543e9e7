//! The read of a 2.0 file as a pure walk over the bytes fetched so far.
//!
//! A 2.0 read has data-dependent steps (binary offsets before their bytes, list offsets
//! before the child column's rows). Rather than a hand-written state machine per encoding,
//! the decoders are written as if every byte were at hand: each asks the [`Walk`] for the
//! ranges it needs; a range not fetched yet is recorded as a need and the decoder returns
//! `Ok(None)` ("not yet"), after asking for every other range it can name without it. The
//! driver fetches all needs of one walk in one wave and walks again, so the number of
//! waves is the depth of the dependency chain (1 for fixed-width values, 2 for binary, 3 for
//! a list of strings), and every wave holds every range the read can name at that point.

use std::collections::HashMap;
use std::ops::Range;

use arrow_array::ArrayRef;
use bytes::Bytes;

/// Bytes fetched by earlier waves of one read, by exact range.
#[derive(Debug, Default)]
pub(crate) struct ByteStore {
    ranges: HashMap<(u64, u64), Bytes>,
}

impl ByteStore {
    /// Remember the bytes of `range`.
    pub(crate) fn insert(&mut self, range: Range<u64>, bytes: Bytes) {
        self.ranges.insert((range.start, range.end), bytes);
    }

    fn get(&self, range: &Range<u64>) -> Option<Bytes> {
        self.ranges.get(&(range.start, range.end)).cloned()
    }
}

/// One walk over the read: the bytes known, the needs found, the page dictionaries.
pub(crate) struct Walk<'a> {
    store: &'a ByteStore,
    needs: Vec<Range<u64>>,
    /// Decoded dictionaries by (column, page): from the page-init cache or decoded by an
    /// earlier walk of this read.
    pub(crate) dictionaries: &'a mut HashMap<(usize, usize), ArrayRef>,
    /// Dictionaries decoded during this read (to be cached).
    pub(crate) fresh: &'a mut Vec<(usize, usize)>,
    /// The (column, page) being decoded, for dictionary bookkeeping.
    pub(crate) page: (usize, usize),
}

impl<'a> Walk<'a> {
    /// A walk over `store`.
    pub(crate) fn new(
        store: &'a ByteStore,
        dictionaries: &'a mut HashMap<(usize, usize), ArrayRef>,
        fresh: &'a mut Vec<(usize, usize)>,
    ) -> Self {
        Self {
            store,
            needs: Vec::new(),
            dictionaries,
            fresh,
            page: (0, 0),
        }
    }

    /// The bytes of `range`, or `None` (and the range recorded as a need).
    pub(crate) fn get(&mut self, range: Range<u64>) -> Option<Bytes> {
        if range.start >= range.end {
            return Some(Bytes::new());
        }
        match self.store.get(&range) {
            Some(bytes) => Some(bytes),
            None => {
                self.needs.push(range);
                None
            }
        }
    }

    /// The ranges this walk could not find, sorted and deduplicated.
    pub(crate) fn into_needs(self) -> Vec<Range<u64>> {
        let mut needs = self.needs;
        needs.sort_by_key(|r| (r.start, r.end));
        needs.dedup();
        needs
    }
}

/// `Some` of all values when every one is `Some`; `None` otherwise (evaluating them all, so
/// that every need is recorded).
pub(crate) fn all<T>(items: Vec<Option<T>>) -> Option<Vec<T>> {
    items.into_iter().collect()
}
