//! The BITMAP scalar index (pylance 14 `lance-index/src/scalar/bitmap.rs`).
//!
//! One file, `bitmap_page_lookup.lance` (Lance 2.2): column `keys` (the indexed type, one
//! row per distinct value, sorted ascending, the null key first when the column has
//! nulls) and column `bitmaps` (Binary: each value a serialized `RowAddrTreeMap`, see
//! [`crate::index::bitmap_file::treemap`]). Schema metadata `lance:index_stats` = `{"num_bitmaps":N}`.
//!
//! A query finds the rows of its keys among the `keys` column, read whole on the first
//! search (pylance <= 0.39 wrote them unsorted, the null key anywhere: see
//! [`crate::index::bitmap_file::exec::search_keys`]), then reads only those rows of
//! `bitmaps` ([`crate::index::bitmap_file::exec`]). The answer
//! is exact: the TRUE row addresses and the NULL ones (the null key's rows), over every
//! fragment the index was built on — coverage and deletions are the caller's.

pub(crate) mod kind;

#[cfg(test)]
pub(crate) mod tests;

#[cfg(test)]
mod read_plan_tests;

use roaring::RoaringTreemap;

use crate::error::Result;
use crate::index::bitmap_file::exec::{read_row_sets, search_keys, BitmapFile};
use crate::index::bitmap_file::search::spans_of;
use crate::index::bitmap_file::{file_addresses, ExactAnswer, ReadSummary};
use crate::index::predicate::{leaves, LeafQuery, Predicate};
use crate::io::IoStats;
use crate::lance::dataset::DatasetVersion;

/// Type names (after the last '/') of BITMAP index details.
pub(crate) const BITMAP_DETAILS_TYPES: [&str; 2] = [
    "lance.table.BitmapIndexDetails",
    "lance.index.pb.BitmapIndexDetails",
];

/// Answer `query` (a test on the indexed column) from an open bitmap lookup. `want_nulls`:
/// also read the null key's rows (needed when the caller negates or keeps NULLs apart).
pub(crate) async fn answer_bitmap(
    dataset: &DatasetVersion,
    file: &BitmapFile,
    query: &LeafQuery,
    want_nulls: bool,
    stats: &IoStats,
) -> Result<ExactAnswer> {
    let spans = spans_of(query);
    let found = search_keys(dataset, file, &spans, stats).await?;
    let mut rows: Vec<u64> = found.rows.iter().flat_map(|r| r.clone()).collect();
    let null_row = found.null_row.filter(|_| spans.null_key || want_nulls);
    if let Some(n) = null_row {
        rows.push(n);
    }
    rows.sort_unstable();
    rows.dedup();
    let sets = read_row_sets(dataset, file, &rows, stats).await?;
    let mut answer = ExactAnswer {
        others_null: matches!(
            query,
            LeafQuery::AlwaysNull | LeafQuery::In { has_null: true, .. }
        ),
        read: ReadSummary {
            keys_read: found.keys_read,
            search_rounds: found.rounds,
            bitmaps: rows.len() as u64,
            lookup_keys: file.num_keys(),
        },
        ..Default::default()
    };
    for (row, set) in rows.iter().zip(&sets) {
        let addrs = file_addresses(dataset, file, set);
        if Some(*row) == null_row && !found.rows.iter().any(|r| r.contains(row)) {
            if spans.null_key {
                answer.true_rows |= addrs;
            } else {
                answer.null_rows |= addrs;
            }
        } else {
            answer.true_rows |= addrs;
        }
    }
    Ok(answer)
}

/// TRUE and NULL rows of a predicate tree (every leaf on the indexed column) over the
/// rows `universe`, from the exact answers of its leaves (in [`leaves`] order), with SQL
/// three-valued logic.
pub(crate) fn combine(
    predicate: &Predicate,
    answers: &mut std::slice::Iter<'_, ExactAnswer>,
    universe: &RoaringTreemap,
) -> (RoaringTreemap, RoaringTreemap) {
    match predicate {
        Predicate::Leaf(_) => {
            let a = answers.next().cloned().unwrap_or_default();
            let t = &a.true_rows & universe;
            let n = if a.others_null {
                universe - &t
            } else {
                (&a.null_rows & universe) - &t
            };
            (t, n)
        }
        Predicate::Not(p) => {
            let (t, n) = combine(p, answers, universe);
            ((universe - &t) - &n, n)
        }
        Predicate::IsTrue(p) => (combine(p, answers, universe).0, RoaringTreemap::new()),
        Predicate::And(ps) => {
            let mut t = universe.clone();
            let mut t_or_n = universe.clone();
            for p in ps {
                let (pt, pn) = combine(p, answers, universe);
                t &= &pt;
                t_or_n &= &(pt | pn);
            }
            let n = t_or_n - &t;
            (t, n)
        }
        Predicate::Or(ps) => {
            let mut t = RoaringTreemap::new();
            let mut n = RoaringTreemap::new();
            for p in ps {
                let (pt, pn) = combine(p, answers, universe);
                t |= pt;
                n |= pn;
            }
            n -= &t;
            (t, n)
        }
    }
}

/// TRUE and NULL rows of a single-column `predicate` over `universe` from an open bitmap
/// lookup: every leaf answered concurrently (their waves overlap), then combined. The NULL
/// rows of a bare leaf are filled only with `want_nulls`.
pub(crate) async fn answer_bitmap_predicate(
    dataset: &DatasetVersion,
    file: &BitmapFile,
    predicate: &Predicate,
    universe: &RoaringTreemap,
    want_nulls: bool,
    stats: &IoStats,
) -> Result<(RoaringTreemap, RoaringTreemap, ReadSummary)> {
    // A bare leaf needs its NULL rows only when asked; any tree needs them to combine.
    let only_true = matches!(predicate, Predicate::Leaf(_)) && !want_nulls;
    let leaves = leaves(predicate);
    let answers = futures::future::try_join_all(
        leaves
            .iter()
            .map(|q| answer_bitmap(dataset, file, q, !only_true, stats)),
    )
    .await?;
    let mut read = ReadSummary {
        lookup_keys: file.num_keys(),
        ..Default::default()
    };
    for a in &answers {
        read.keys_read += a.read.keys_read;
        read.search_rounds = read.search_rounds.max(a.read.search_rounds);
        read.bitmaps += a.read.bitmaps;
    }
    let (t, n) = combine(predicate, &mut answers.iter(), universe);
    Ok((t, n, read))
}
