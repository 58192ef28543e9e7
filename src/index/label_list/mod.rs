//! The LABEL_LIST scalar index (pylance 14 `lance-index/src/scalar/label_list.rs`) on
//! `list<T>` / `large_list<T>` columns.
//!
//! Stored exactly as a BITMAP index over the list *elements* (`bitmap_page_lookup.lance`,
//! see [`crate::index::bitmap`] and [`crate::index::bitmap_file`]): one row per distinct element value with the rows whose
//! list holds it; null elements form the null key. Version 1 files also carry the rows
//! whose *list* is null, in the global buffer named by schema metadata
//! `lance:label_list_nulls`.
//!
//! Semantics (lance 14): `array_has_any(col, [v..])` is TRUE where the list holds any of
//! the values (the union of their bitmaps), `array_has_all` where it holds all of them
//! (the intersection), `array_contains(col, v)` / `array_has` as `array_has_any` of one
//! value. Null elements never match; a null list makes the test NULL.

pub(crate) mod kind;

#[cfg(test)]
mod tests;

use roaring::RoaringTreemap;

use crate::error::Result;
use crate::index::bitmap_file::exec::{
    buffer_index, read_buffer_row_set, read_row_sets, search_keys, BitmapFile, LABEL_LIST_NULLS_KEY,
};
use crate::index::bitmap_file::search::{spans_of, KeySpans};
use crate::index::bitmap_file::{file_addresses, ExactAnswer, ReadSummary};
use crate::index::key::Key;
use crate::index::predicate::LeafQuery;
pub(crate) use crate::index::sql::list_has::ListTest;
use crate::io::IoStats;
use crate::lance::dataset::DatasetVersion;

/// Type names (after the last '/') of LABEL_LIST index details.
pub(crate) const LABEL_LIST_DETAILS_TYPES: [&str; 2] = [
    "lance.table.LabelListIndexDetails",
    "lance.index.pb.LabelListIndexDetails",
];

/// Answer `test` of `values` from an open label-list lookup. The NULL rows are the null
/// lists (read when the file records them and `want_nulls`).
pub(crate) async fn answer_label_list(
    dataset: &DatasetVersion,
    file: &BitmapFile,
    test: ListTest,
    values: &[Key],
    want_nulls: bool,
    stats: &IoStats,
) -> Result<ExactAnswer> {
    let mut spans = KeySpans::default();
    for v in values {
        spans
            .spans
            .extend(spans_of(&LeafQuery::Equals(v.clone())).spans);
    }
    let found = search_keys(dataset, file, &spans, stats).await?;
    // The lookup rows of each value (one when keys are unique; an unsorted lookup may
    // repeat a key, and then the value's rows are the union of its rows' sets).
    let per_value: &[Vec<u64>] = &found.span_rows;
    let mut rows: Vec<u64> = per_value.iter().flatten().copied().collect();
    rows.sort_unstable();
    rows.dedup();
    let nulls_buffer = buffer_index(&file.reader, LABEL_LIST_NULLS_KEY)?;
    let sets = read_row_sets(dataset, file, &rows, stats);
    let nulls = async {
        match nulls_buffer {
            Some(b) if want_nulls => read_buffer_row_set(dataset, &file.reader, b, stats)
                .await
                .map(|s| file_addresses(dataset, file, &s)),
            _ => Ok(RoaringTreemap::new()),
        }
    };
    let (sets, null_rows) = futures::try_join!(sets, nulls)?;
    let set_of = |value_rows: &Vec<u64>| -> RoaringTreemap {
        value_rows
            .iter()
            .filter_map(|row| rows.binary_search(row).ok())
            .fold(RoaringTreemap::new(), |acc, i| {
                acc | file_addresses(dataset, file, &sets[i])
            })
    };
    let true_rows = match test {
        ListTest::Any => per_value
            .iter()
            .fold(RoaringTreemap::new(), |acc, r| acc | set_of(r)),
        ListTest::All => {
            if per_value.is_empty() || per_value.iter().any(|r| r.is_empty()) {
                RoaringTreemap::new()
            } else {
                let mut it = per_value.iter();
                let first = it.next().map(set_of).unwrap_or_default();
                it.fold(first, |acc, r| acc & set_of(r))
            }
        }
    };
    Ok(ExactAnswer {
        true_rows,
        null_rows,
        others_null: false,
        read: ReadSummary {
            keys_read: found.keys_read,
            search_rounds: found.rounds,
            bitmaps: rows.len() as u64,
            lookup_keys: file.num_keys(),
        },
    })
}
