//! Lance BTree indices: the decoded page lookup, page selection exactly as lance 14 does it
//! (pure functions), and where a page's rows live in `page_data.lance`.
//!
//! `page_lookup.lance` has one row per BTree page: `min`, `max` (the page's first and last
//! value; values are sorted ascending with nulls first), `null_count` and `page_idx`, plus
//! schema metadata `batch_size` (rows per page, default 4096). Page `n` is the row range
//! `[n * batch_size, min((n + 1) * batch_size, rows))` of `page_data.lance` (columns
//! `values`, `ids`). See `docs/lance-index-format.md` sections 1-2.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};
use std::ops::{Bound, Range};

use arrow_array::cast::AsArray;
use arrow_array::types::UInt32Type;
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;

use crate::error::{Error, Result};
use crate::index::key::{Key, KeyColumn, KeyRef};
use crate::index::predicate::{LeafQuery, Predicate};

pub(crate) mod exec;
pub(crate) mod layout;

/// Type names (after the last '/') of BTree index details lance accepts.
pub(crate) const BTREE_DETAILS_TYPES: [&str; 2] = [
    "lance.table.BTreeIndexDetails",
    "lance.index.pb.BTreeIndexDetails",
];
/// Highest BTree index version lance 14 (and lakeseek) reads.
pub(crate) const MAX_BTREE_VERSION: i32 = 1;

/// Rows per BTree page when the lookup does not say.
pub(crate) const DEFAULT_BATCH_SIZE: u64 = 4096;

/// How much of a selected page matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum PageMatch {
    /// Some rows may match: read values and ids, filter.
    Some,
    /// Every row matches: only the ids are needed.
    All,
}

/// Pages chosen for a query: page_idx -> match kind, ascending.
pub(crate) type PageSelection = BTreeMap<u32, PageMatch>;

/// The decoded `page_lookup.lance` of one BTree segment.
#[derive(Debug, Clone)]
pub(crate) struct BTreePageLookup {
    min: KeyColumn,
    max: KeyColumn,
    null_count: Vec<u32>,
    page_idx: Vec<u32>,
    /// Rows per page.
    pub batch_size: u64,
    /// Range-partitioned page data: (partition id, page count) in partition order.
    pub partitions: Option<Vec<(u64, u32)>>,
    /// Arrow type of the indexed values.
    pub value_type: DataType,
    search_start: usize,
    approx_bytes: usize,
}

fn cmp_opt(a: Option<KeyRef<'_>>, b: Option<KeyRef<'_>>) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(a), Some(b)) => a.cmp(&b),
    }
}

impl BTreePageLookup {
    /// Build from the lookup file's columns and schema metadata, validating what page
    /// selection relies on (equal lengths, no null counts/page numbers, min ascending with
    /// nulls first, page numbers unique).
    pub(crate) fn new(
        min: &ArrayRef,
        max: &ArrayRef,
        null_count: &ArrayRef,
        page_idx: &ArrayRef,
        metadata: &HashMap<String, String>,
    ) -> Result<Self> {
        let n = min.len();
        if max.len() != n || null_count.len() != n || page_idx.len() != n {
            return Err(Error::corrupt("page lookup columns have different lengths"));
        }
        if min.data_type() != max.data_type() {
            return Err(Error::corrupt(format!(
                "page lookup min is {} but max is {}",
                min.data_type(),
                max.data_type()
            )));
        }
        let u32s = |a: &ArrayRef, name: &str| -> Result<Vec<u32>> {
            if a.data_type() != &DataType::UInt32 || a.null_count() > 0 {
                return Err(Error::corrupt(format!(
                    "page lookup {name} must be non-null UInt32, is {}",
                    a.data_type()
                )));
            }
            Ok(a.as_primitive::<UInt32Type>().values().to_vec())
        };
        let null_count = u32s(null_count, "null_count")?;
        let page_idx = u32s(page_idx, "page_idx")?;
        let batch_size = match metadata.get("batch_size") {
            None => DEFAULT_BATCH_SIZE,
            Some(s) => s.trim().parse::<u64>().unwrap_or(DEFAULT_BATCH_SIZE),
        };
        if batch_size == 0 {
            return Err(Error::corrupt("page lookup batch_size is 0"));
        }
        let partitions = match metadata.get("range_partitioned").map(|s| s.trim()) {
            Some("true") => Some(parse_partitions(
                metadata.get("page_num_per_range_partition"),
            )?),
            _ => None,
        };
        let min_col = KeyColumn::new(min)?;
        let max_col = KeyColumn::new(max)?;
        for i in 1..n {
            if cmp_opt(min_col.get(i - 1), min_col.get(i)) == Ordering::Greater {
                return Err(Error::corrupt(format!(
                    "page lookup min is not ascending at row {i}"
                )));
            }
        }
        let mut seen = page_idx.clone();
        seen.sort_unstable();
        if seen.windows(2).any(|w| w[0] == w[1]) {
            return Err(Error::corrupt("page lookup repeats a page_idx"));
        }
        if let Some(parts) = &partitions {
            let total: u64 = parts.iter().map(|(_, c)| *c as u64).sum();
            if page_idx.iter().any(|p| *p as u64 >= total) {
                return Err(Error::corrupt(
                    "page_idx beyond the pages of the range partitions",
                ));
            }
        }
        let search_start = (0..n).find(|&i| max_col.get(i).is_some()).unwrap_or(n);
        let approx_bytes = 256 + min.get_array_memory_size() + max.get_array_memory_size() + 8 * n;
        Ok(Self {
            value_type: min.data_type().clone(),
            min: min_col,
            max: max_col,
            null_count,
            page_idx,
            batch_size,
            partitions,
            search_start,
            approx_bytes,
        })
    }

    /// Number of pages.
    pub(crate) fn num_pages(&self) -> usize {
        self.page_idx.len()
    }

    /// Page numbers of all lookup rows.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn page_numbers(&self) -> &[u32] {
        &self.page_idx
    }

    /// (min, max, null_count, page_idx) of lookup row `i` (for `--explain`).
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn row(&self, i: usize) -> Option<(Option<Key>, Option<Key>, u32, u32)> {
        (i < self.num_pages()).then(|| {
            (
                self.min.get(i).map(|k| k.to_key()),
                self.max.get(i).map(|k| k.to_key()),
                self.null_count[i],
                self.page_idx[i],
            )
        })
    }

    /// Rows whose min is < v (ascending min, nulls first).
    fn rows_with_min_below(&self, v: Option<KeyRef<'_>>) -> usize {
        partition_point(self.num_pages(), |i| {
            cmp_opt(self.min.get(i), v) == Ordering::Less
        })
    }

    /// Rows whose min is <= v.
    fn rows_with_min_at_most(&self, v: KeyRef<'_>) -> usize {
        partition_point(self.num_pages(), |i| {
            cmp_opt(self.min.get(i), Some(v)) != Ordering::Greater
        })
    }

    /// First row that can hold values >= v: backs up over the run of rows that share the
    /// largest min below v (lance's search start). Also returns that count of rows below v.
    fn search_start_for(&self, v: KeyRef<'_>) -> (usize, usize) {
        let below = self.rows_with_min_below(Some(v));
        let start = if below == 0 {
            self.search_start
        } else {
            let m = self.min.get(below - 1);
            self.rows_with_min_below(m).max(self.search_start)
        };
        (start, below)
    }

    /// Pages that can hold `v` (lance: equality never yields "All" pages).
    pub(crate) fn pages_equal(&self, v: KeyRef<'_>, out: &mut PageSelection) {
        let (start, below) = self.search_start_for(v);
        let end = self.rows_with_min_at_most(v);
        for i in start..end {
            let keep = if i < below {
                matches!(self.max.get(i), Some(max) if max >= v)
            } else {
                true
            };
            if keep {
                out.entry(self.page_idx[i]).or_insert(PageMatch::Some);
            }
        }
    }

    /// Pages a range can touch, with the ones entirely inside it marked `All`.
    pub(crate) fn pages_in_range(
        &self,
        lower: &Bound<Key>,
        upper: &Bound<Key>,
        out: &mut PageSelection,
    ) {
        let start = match lower {
            Bound::Unbounded => self.search_start,
            Bound::Included(k) | Bound::Excluded(k) => self.search_start_for(k.as_key_ref()).0,
        };
        let end = match upper {
            Bound::Unbounded => self.num_pages(),
            Bound::Included(k) | Bound::Excluded(k) => self.rows_with_min_at_most(k.as_key_ref()),
        };
        for i in start..end.max(start) {
            let Some(max) = self.max.get(i) else { continue };
            let reaches_lower = match lower {
                Bound::Unbounded => true,
                Bound::Included(k) => max >= k.as_key_ref(),
                Bound::Excluded(k) => max > k.as_key_ref(),
            };
            if !reaches_lower {
                continue;
            }
            let kind = match self.min.get(i) {
                None => PageMatch::Some,
                Some(min) => {
                    let above = match lower {
                        Bound::Unbounded => true,
                        Bound::Included(k) => min >= k.as_key_ref(),
                        Bound::Excluded(k) => min > k.as_key_ref(),
                    };
                    let below = match upper {
                        Bound::Unbounded => true,
                        Bound::Included(k) => max <= k.as_key_ref(),
                        Bound::Excluded(k) => max < k.as_key_ref(),
                    };
                    // A page holding nulls is never all TRUE: lance 14 sorts nulls first
                    // (its null pages have no min), but BTrees of pylance <= 0.18 keep
                    // min/max of the non-null values only, nulls anywhere in the page.
                    if above && below && self.null_count[i] == 0 {
                        PageMatch::All
                    } else {
                        PageMatch::Some
                    }
                }
            };
            merge_or(out, self.page_idx[i], kind);
        }
    }

    /// Pages holding nulls: the straddle page(s) as `Some`, all-null pages as `All`.
    pub(crate) fn pages_null(&self, out: &mut PageSelection) {
        for i in 0..self.num_pages() {
            if self.max.get(i).is_none() {
                merge_or(out, self.page_idx[i], PageMatch::All);
            } else if self.null_count[i] > 0 {
                merge_or(out, self.page_idx[i], PageMatch::Some);
            }
        }
    }

    /// Pages a single leaf query can make TRUE.
    pub(crate) fn select_leaf(&self, query: &LeafQuery) -> PageSelection {
        let mut out = PageSelection::new();
        match query {
            LeafQuery::Equals(k) => self.pages_equal(k.as_key_ref(), &mut out),
            LeafQuery::In { values, .. } => {
                for k in values {
                    self.pages_equal(k.as_key_ref(), &mut out);
                }
            }
            LeafQuery::Range { lower, upper } => self.pages_in_range(lower, upper, &mut out),
            LeafQuery::IsNull => self.pages_null(&mut out),
            LeafQuery::AlwaysNull => {}
        }
        out
    }

    /// Pages on which `predicate` (all of whose leaves are on this index's column) can be
    /// TRUE, and which of them are TRUE on every row. Conservative: a row can only be TRUE
    /// on a selected page; `All` pages are exact.
    pub(crate) fn select(&self, predicate: &Predicate) -> PageSelection {
        match predicate {
            Predicate::Leaf(l) => self.select_leaf(&l.query),
            Predicate::IsTrue(p) => self.select(p),
            Predicate::Not(_) => self
                .page_idx
                .iter()
                .map(|p| (*p, PageMatch::Some))
                .collect(),
            Predicate::Or(ps) => {
                let mut out = PageSelection::new();
                for p in ps {
                    for (page, kind) in self.select(p) {
                        merge_or(&mut out, page, kind);
                    }
                }
                out
            }
            Predicate::And(ps) => {
                let mut parts = ps.iter().map(|p| self.select(p));
                let Some(mut out) = parts.next() else {
                    return self.page_idx.iter().map(|p| (*p, PageMatch::All)).collect();
                };
                for part in parts {
                    out = out
                        .into_iter()
                        .filter_map(|(page, kind)| part.get(&page).map(|k2| (page, kind.min(*k2))))
                        .collect();
                }
                out
            }
        }
    }

    /// Where page `page` lives: (page-data file index, row range in that file), given the
    /// row count of each page-data file (one file unless range-partitioned).
    pub(crate) fn page_rows(&self, page: u32, file_rows: &[u64]) -> Result<(usize, Range<u64>)> {
        let (file, local) = match &self.partitions {
            None => (0usize, page as u64),
            Some(parts) => {
                let mut first = 0u64;
                let mut found = None;
                for (i, (_, count)) in parts.iter().enumerate() {
                    if (page as u64) < first + *count as u64 {
                        found = Some((i, page as u64 - first));
                        break;
                    }
                    first += *count as u64;
                }
                found.ok_or_else(|| {
                    Error::corrupt(format!("page {page} is beyond the range partitions"))
                })?
            }
        };
        let rows = *file_rows
            .get(file)
            .ok_or_else(|| Error::corrupt(format!("no page data file {file} for page {page}")))?;
        let start = local
            .checked_mul(self.batch_size)
            .filter(|s| *s < rows)
            .ok_or_else(|| {
                Error::corrupt(format!(
                    "page {page} starts beyond the {rows} rows of its page data"
                ))
            })?;
        Ok((file, start..(start + self.batch_size).min(rows)))
    }
}

fn merge_or(out: &mut PageSelection, page: u32, kind: PageMatch) {
    let e = out.entry(page).or_insert(kind);
    *e = (*e).max(kind);
}

/// First index in `0..n` where `pred` is false (`pred` true on a prefix).
fn partition_point(n: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0usize, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

fn parse_partitions(json: Option<&String>) -> Result<Vec<(u64, u32)>> {
    let json = json.ok_or_else(|| {
        Error::corrupt("range-partitioned lookup without page_num_per_range_partition")
    })?;
    let parsed: Vec<(u64, u32)> = serde_json::from_str(json).map_err(|e| {
        Error::corrupt(format!("page_num_per_range_partition {json:?}: {e}")).with_source(e)
    })?;
    Ok(parsed)
}

#[cfg(test)]
mod tests;
