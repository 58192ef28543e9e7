//! [`RowSelection`]: which rows of a file a read takes — the one selection type of every
//! per-version reader (the v2 reader, [`crate::lance::reader`]; the legacy v1 reader,
//! [`crate::lance::legacy`]) and of the reader that picks between them
//! ([`crate::lance::data_file`]).

use std::ops::Range;

/// Which rows to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RowSelection {
    /// Rows `start..end`.
    Range(Range<u64>),
    /// These rows, sorted ascending (duplicates allowed and repeated in the output).
    Rows(Vec<u64>),
}

impl RowSelection {
    /// The sorted, unique selection that reads `rows` (any order, repeats allowed), and the
    /// output order: `order[i]` is the index of `rows[i]` in the sorted read.
    pub(crate) fn sorted_with_order(rows: &[u64]) -> (RowSelection, Vec<u32>) {
        let mut sorted = rows.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let position = |r: &u64| sorted.binary_search(r).unwrap_or_default() as u32;
        let order = rows.iter().map(position).collect();
        (RowSelection::Rows(sorted), order)
    }
}
