//! Label-list tests: pylance's answers on the fixture (list<string>, list<int64>,
//! large_list<string>; null lists, empty lists, null elements), `NOT` through the null
//! lists.

use super::*;
use crate::index::bitmap::tests::fixture;
use crate::index::bitmap_file::exec::open_bitmap_file;

/// `(negated, test, column, values)` of the fixture's label-list filter spellings.
fn parse(filter: &str) -> Option<(bool, ListTest, String, Vec<Key>)> {
    let (negated, rest) = match filter.strip_prefix("NOT ") {
        Some(r) => (true, r),
        None => (false, filter),
    };
    let (name, args) = rest.split_once('(')?;
    let test = match name {
        "array_has_any" | "array_contains" | "array_has" => ListTest::Any,
        "array_has_all" => ListTest::All,
        _ => return None,
    };
    let args = args.strip_suffix(')')?;
    let (column, values) = args.split_once(", ")?;
    let values = values.trim_start_matches('[').trim_end_matches(']');
    let keys = values
        .split(", ")
        .map(|v| match v.strip_prefix('\'') {
            Some(s) => Key::Bytes(s.trim_end_matches('\'').as_bytes().to_vec()),
            None => Key::Int(v.parse().unwrap()),
        })
        .collect();
    Some((negated, test, column.to_string(), keys))
}

#[tokio::test]
async fn every_label_list_filter_matches_pylance() {
    let dataset = fixture::open().await;
    let mut checked = 0;
    for (filter, addrs) in fixture::oracle() {
        let Some((negated, test, column, values)) = parse(&filter) else {
            continue;
        };
        let segment = fixture::segment(&dataset, &column);
        assert!(LABEL_LIST_DETAILS_TYPES.contains(&segment.type_name().unwrap()));
        let universe = fixture::live_covered(&dataset, &segment).await;
        let stats = IoStats::new();
        let file = open_bitmap_file(&dataset, &segment, &stats).await.unwrap();
        let answer = answer_label_list(&dataset, &file, test, &values, negated, &stats)
            .await
            .unwrap();
        let t = &answer.true_rows & &universe;
        let got = if negated {
            (&universe - &t) - &answer.null_rows
        } else {
            t
        };
        let want: Vec<u64> = addrs
            .into_iter()
            .filter(|a| universe.contains(*a))
            .collect();
        assert_eq!(got.iter().collect::<Vec<_>>(), want, "{filter}");
        checked += 1;
    }
    assert_eq!(checked, 14);
}

#[tokio::test]
async fn null_lists_come_from_the_global_buffer() {
    let dataset = fixture::open().await;
    let segment = fixture::segment(&dataset, "tags");
    let stats = IoStats::new();
    let file = open_bitmap_file(&dataset, &segment, &stats).await.unwrap();
    assert!(buffer_index(&file.reader, LABEL_LIST_NULLS_KEY)
        .unwrap()
        .is_some());
    let a = answer_label_list(
        &dataset,
        &file,
        ListTest::Any,
        &[Key::Bytes("red".into())],
        true,
        &stats,
    )
    .await
    .unwrap();
    assert!(!a.null_rows.is_empty());
    assert!((&a.null_rows & &a.true_rows).is_empty());
}
