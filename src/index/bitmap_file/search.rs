//! The pure search of a bitmap lookup: the boundary rows of a query's keys among the
//! `keys` column, from the keys known ([`KeySamples`]: every key, read in one wave on the
//! first search; unsorted lookups through their sorted view). [`SearchPlan::next_reads`]
//! plans a probe search reading few rows per round; it is only sound over keys known to be
//! sorted, which old writers' lookups are not, so lakeseek reads lookups whole.
//!
//! A bitmap lookup file holds one row per distinct key, sorted ascending, the null key
//! (when the column has nulls) first. A query becomes a set of *targets*, boundary
//! positions such as "the first row whose key is >= 'abc'". Each round reads, for every
//! unresolved target, either a few evenly spaced probe rows inside its bracket or — once
//! the bracket is small — the whole bracket. Everything read is kept in [`KeySamples`]
//! (cached in the session), so a warm repeat resolves every target without a read.

use std::collections::BTreeMap;
use std::ops::{Bound, Range};

use crate::error::{Error, Result};
use crate::index::key::Key;
use crate::index::predicate::LeafQuery;

/// Keys known so far: row -> key (`None` = the null key).
#[derive(Debug, Clone, Default)]
pub(crate) struct KeySamples {
    /// Known rows.
    pub(crate) keys: BTreeMap<u64, Option<Key>>,
    /// Approximate bytes held.
    pub(crate) bytes: usize,
    /// Every key of a lookup whose keys are NOT sorted (pylance 6.1.0's label lists), sorted
    /// with their rows: built once from a read of the whole column, then searched instead
    /// of the file.
    pub(crate) unsorted: Option<Vec<(Option<Key>, u64)>>,
}

/// Order a possibly-null key the way the lookup sorts (null first).
pub(crate) fn cmp_keys(a: &Option<Key>, b: &Option<Key>) -> std::cmp::Ordering {
    match (a, b) {
        (None, None) => std::cmp::Ordering::Equal,
        (None, Some(_)) => std::cmp::Ordering::Less,
        (Some(_), None) => std::cmp::Ordering::Greater,
        (Some(x), Some(y)) => x.cmp(y),
    }
}

impl KeySamples {
    /// Switch to the unsorted view: `keys[i]` is the key of row `i`.
    pub(crate) fn set_unsorted(&mut self, keys: Vec<Option<Key>>) {
        let mut view: Vec<(Option<Key>, u64)> = keys.into_iter().zip(0u64..).collect();
        view.sort_by(|a, b| cmp_keys(&a.0, &b.0).then(a.1.cmp(&b.1)));
        self.bytes = view.iter().map(|(k, _)| 56 + key_bytes(k)).sum();
        self.keys.clear();
        self.unsorted = Some(view);
    }

    /// Record `key` at `row`, checking that the keys stay strictly ascending and that only
    /// row 0 holds the null key.
    pub(crate) fn insert(&mut self, row: u64, key: Option<Key>) -> Result<()> {
        if key.is_none() && row != 0 {
            return Err(Error::corrupt(format!(
                "null key at row {row} (only row 0 may hold it)"
            )));
        }
        if let Some((&prev_row, prev)) = self.keys.range(..row).next_back() {
            if cmp_keys(prev, &key) != std::cmp::Ordering::Less {
                return Err(out_of_order(prev_row, row));
            }
        }
        if let Some((&next_row, next)) = self.keys.range(row + 1..).next() {
            if cmp_keys(&key, next) != std::cmp::Ordering::Less {
                return Err(out_of_order(row, next_row));
            }
        }
        if let Some(old) = self.keys.get(&row) {
            if cmp_keys(old, &key) != std::cmp::Ordering::Equal {
                return Err(Error::corrupt(format!(
                    "row {row} read twice with different keys"
                )));
            }
            return Ok(());
        }
        self.bytes += 48 + key_bytes(&key);
        self.keys.insert(row, key);
        Ok(())
    }
}

fn out_of_order(a: u64, b: u64) -> Error {
    Error::corrupt(format!("keys out of order: row {a} is not below row {b}"))
}

fn key_bytes(key: &Option<Key>) -> usize {
    match key {
        Some(Key::Bytes(b)) => b.len(),
        _ => 0,
    }
}

/// The rows of an unsorted lookup (its sorted view) whose keys lie in `[start, end)`,
/// ascending.
pub(crate) fn unsorted_span_rows(
    view: &[(Option<Key>, u64)],
    start: &Target,
    end: &Target,
) -> Vec<u64> {
    let a = view.partition_point(|(k, _)| start.is_before(k));
    let b = view.partition_point(|(k, _)| end.is_before(k)).max(a);
    let mut rows: Vec<u64> = view[a..b].iter().map(|(_, r)| *r).collect();
    rows.sort_unstable();
    rows
}

/// A boundary position in the sorted keys.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Target {
    /// The first row whose key is not null.
    FirstNonNull,
    /// Past the last key.
    End,
    /// The first row whose key is `>= key` (`strict`: `> key`).
    After {
        /// The key.
        key: Key,
        /// `>` instead of `>=`.
        strict: bool,
    },
}

impl Target {
    /// Whether a row with `key` lies before this boundary.
    fn is_before(&self, key: &Option<Key>) -> bool {
        let Some(k) = key else { return true };
        match self {
            Target::FirstNonNull => false,
            Target::End => true,
            Target::After { key: t, strict } => {
                if *strict {
                    k <= t
                } else {
                    k < t
                }
            }
        }
    }
}

/// The rows a query needs: `[start target, end target)` spans, plus whether the null key's
/// row is asked for (IS NULL, or IN with NULL).
#[derive(Debug, Clone, Default)]
pub(crate) struct KeySpans {
    /// Half-open spans between two targets.
    pub(crate) spans: Vec<(Target, Target)>,
    /// The null key's bitmap is wanted (as TRUE rows).
    pub(crate) null_key: bool,
}

/// The spans of keys that make `query` TRUE.
pub(crate) fn spans_of(query: &LeafQuery) -> KeySpans {
    let point = |k: &Key| {
        (
            Target::After {
                key: k.clone(),
                strict: false,
            },
            Target::After {
                key: k.clone(),
                strict: true,
            },
        )
    };
    match query {
        LeafQuery::Equals(k) => KeySpans {
            spans: vec![point(k)],
            null_key: false,
        },
        LeafQuery::In { values, .. } => KeySpans {
            spans: values.iter().map(point).collect(),
            null_key: false,
        },
        LeafQuery::Range { lower, upper } => {
            let start = match lower {
                Bound::Unbounded => Target::FirstNonNull,
                Bound::Included(k) => Target::After {
                    key: k.clone(),
                    strict: false,
                },
                Bound::Excluded(k) => Target::After {
                    key: k.clone(),
                    strict: true,
                },
            };
            let end = match upper {
                Bound::Unbounded => Target::End,
                Bound::Included(k) => Target::After {
                    key: k.clone(),
                    strict: true,
                },
                Bound::Excluded(k) => Target::After {
                    key: k.clone(),
                    strict: false,
                },
            };
            KeySpans {
                spans: vec![(start, end)],
                null_key: false,
            }
        }
        LeafQuery::IsNull => KeySpans {
            spans: Vec::new(),
            null_key: true,
        },
        LeafQuery::AlwaysNull => KeySpans::default(),
    }
}

/// Search state over a lookup of `rows` keys.
#[derive(Debug, Clone)]
pub(crate) struct SearchPlan {
    rows: u64,
    /// Probe rows per unresolved target and round.
    #[cfg_attr(not(any(test, feature = "fuzzing")), allow(dead_code))]
    probes: u64,
    /// A bracket of at most this many rows is read whole.
    #[cfg_attr(not(any(test, feature = "fuzzing")), allow(dead_code))]
    read_whole: u64,
}

impl SearchPlan {
    /// A plan over `rows` keys.
    pub(crate) fn new(rows: u64, probes: u64, read_whole: u64) -> Self {
        Self {
            rows,
            probes: probes.max(1),
            read_whole: read_whole.max(1),
        }
    }

    /// `[lo, hi]`: the boundary of `target` lies in this bracket given `samples`.
    fn bracket(&self, samples: &KeySamples, target: &Target) -> (u64, u64) {
        if *target == Target::End {
            return (self.rows, self.rows);
        }
        let mut lo = 0;
        let mut hi = self.rows;
        // Keys ascend, so "before" holds on a prefix: binary search the known rows.
        let known: Vec<(&u64, &Option<Key>)> = samples.keys.iter().collect();
        let split = known.partition_point(|(_, k)| target.is_before(k));
        if split > 0 {
            lo = known[split - 1].0 + 1;
        }
        if let Some((row, _)) = known.get(split) {
            hi = **row;
        }
        (lo, hi.max(lo))
    }

    /// The boundary row of `target`, once known.
    pub(crate) fn resolved(&self, samples: &KeySamples, target: &Target) -> Option<u64> {
        let (lo, hi) = self.bracket(samples, target);
        (lo == hi).then_some(lo)
    }

    /// Rows to read next for `targets` (empty when every target is resolved; row 0 is
    /// read first so the null key is known). Only sound over keys known to be sorted:
    /// lakeseek reads lookups whole (old writers did not sort them), so this probe
    /// planner serves tests and fuzzing.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn next_reads(&self, samples: &KeySamples, targets: &[&Target]) -> Vec<Range<u64>> {
        let mut out: Vec<Range<u64>> = Vec::new();
        if self.rows > 0 && !samples.keys.contains_key(&0) {
            out.push(0..1);
        }
        if self.rows > 1 && !samples.keys.contains_key(&(self.rows - 1)) {
            out.push(self.rows - 1..self.rows);
        }
        for target in targets {
            let (lo, hi) = self.bracket(samples, target);
            if lo == hi {
                continue;
            }
            let width = hi - lo;
            if width <= self.read_whole {
                out.push(lo..hi);
                continue;
            }
            let step = width / (self.probes + 1);
            for i in 1..=self.probes {
                let row = lo + i * step.max(1);
                if row < hi && !samples.keys.contains_key(&row) {
                    out.push(row..row + 1);
                }
            }
        }
        merge(out)
    }
}

/// Sort and merge overlapping or touching ranges.
pub(crate) fn merge(mut ranges: Vec<Range<u64>>) -> Vec<Range<u64>> {
    ranges.sort_by_key(|r| r.start);
    let mut out: Vec<Range<u64>> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}
