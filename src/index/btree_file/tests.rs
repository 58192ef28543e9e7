use super::*;
use std::sync::Arc;

use arrow_array::{Int64Array, UInt32Array};
use proptest::prelude::*;

use crate::index::predicate::Leaf;
use crate::index::sql::eval::eval_predicate;

/// Build the lookup lance would write for sorted (nulls first) `values` cut into pages of
/// `batch` rows.
fn lookup_for(values: &[Option<i64>], batch: usize) -> BTreePageLookup {
    let mut sorted = values.to_vec();
    sorted.sort(); // None first
    let (mut mins, mut maxs, mut nulls, mut idx) = (vec![], vec![], vec![], vec![]);
    for (p, chunk) in sorted.chunks(batch).enumerate() {
        mins.push(chunk[0]);
        maxs.push(*chunk.last().unwrap());
        nulls.push(chunk.iter().filter(|v| v.is_none()).count() as u32);
        idx.push(p as u32);
    }
    let md: HashMap<String, String> = [("batch_size".to_string(), batch.to_string())].into();
    BTreePageLookup::new(
        &(Arc::new(Int64Array::from(mins)) as ArrayRef),
        &(Arc::new(Int64Array::from(maxs)) as ArrayRef),
        &(Arc::new(UInt32Array::from(nulls)) as ArrayRef),
        &(Arc::new(UInt32Array::from(idx)) as ArrayRef),
        &md,
    )
    .unwrap()
}

fn leaf(q: LeafQuery) -> Predicate {
    Predicate::Leaf(Leaf {
        column: 0,
        query: q,
    })
}

/// The doc's example: 3000 int64 rows, 5% null, 40% the value 7, zone size 128.
fn doc_example() -> (Vec<Option<i64>>, BTreePageLookup) {
    let mut v: Vec<Option<i64>> = vec![None; 168];
    v.extend(std::iter::repeat_n(Some(7), 1200));
    let mut x = 5i64;
    while v.len() < 3000 {
        v.push(Some(x));
        x = if x == 100 { 5 } else { x + 1 };
        if x == 7 {
            x = 8;
        }
    }
    let lookup = lookup_for(&v, 128);
    (v, lookup)
}

#[test]
fn equality_backs_up_over_the_run_sharing_a_min() {
    let (_, l) = doc_example();
    // Page 0 all null, page 1 straddles (min NULL), pages holding 7 are contiguous.
    assert_eq!(l.row(0).unwrap().1, None);
    assert_eq!(l.row(1).unwrap().0, None);
    let pages: Vec<u32> = l
        .select(&leaf(LeafQuery::Equals(Key::Int(7))))
        .keys()
        .copied()
        .collect();
    let want: Vec<u32> = (0..l.num_pages())
        .filter(|&i| {
            let (min, max, _, _) = l.row(i).unwrap();
            max.is_some_and(|m| m >= Key::Int(7)) && min.is_none_or(|m| m <= Key::Int(7))
        })
        .map(|i| i as u32)
        .collect();
    assert_eq!(pages, want);
    assert!(l
        .select(&leaf(LeafQuery::Equals(Key::Int(7))))
        .values()
        .all(|k| *k == PageMatch::Some));
    assert!(l
        .select(&leaf(LeafQuery::Equals(Key::Int(1000))))
        .is_empty());
    // A value below every non-null value could only sit on the straddle page.
    let below: Vec<u32> = l
        .select(&leaf(LeafQuery::Equals(Key::Int(-1))))
        .keys()
        .copied()
        .collect();
    assert_eq!(below, vec![1]);
}

#[test]
fn is_null_takes_all_null_pages_whole() {
    let (_, l) = doc_example();
    let sel = l.select(&leaf(LeafQuery::IsNull));
    assert_eq!(
        sel.into_iter().collect::<Vec<_>>(),
        vec![(0, PageMatch::All), (1, PageMatch::Some)]
    );
}

#[test]
fn ranges_mark_inner_pages_all() {
    let (_, l) = doc_example();
    let sel = l.select(&leaf(LeafQuery::Range {
        lower: Bound::Included(Key::Int(7)),
        upper: Bound::Included(Key::Int(7)),
    }));
    // Pages whose min == max == 7 are fully inside.
    let inner: Vec<u32> = (0..l.num_pages())
        .filter(|&i| {
            l.row(i)
                .map(|r| r.0 == Some(Key::Int(7)) && r.1 == Some(Key::Int(7)))
                .unwrap()
        })
        .map(|i| i as u32)
        .collect();
    assert!(!inner.is_empty());
    for p in &inner {
        assert_eq!(sel.get(p), Some(&PageMatch::All));
    }
    // An unbounded range reads every non-null page, the straddle page partially.
    let all = l.select(&leaf(LeafQuery::Range {
        lower: Bound::Unbounded,
        upper: Bound::Unbounded,
    }));
    assert_eq!(all.len(), l.num_pages() - 1);
    assert_eq!(all.get(&1), Some(&PageMatch::Some));
}

#[test]
fn page_rows_follow_batch_size() {
    let (v, l) = doc_example();
    assert_eq!(l.page_rows(0, &[v.len() as u64]).unwrap(), (0, 0..128));
    let last = (l.num_pages() - 1) as u32;
    assert_eq!(
        l.page_rows(last, &[3000]).unwrap(),
        (0, last as u64 * 128..3000)
    );
    assert!(l.page_rows(last + 1, &[3000]).is_err());
}

#[test]
fn rejects_inconsistent_lookups() {
    let md = HashMap::new();
    let a = |v: Vec<Option<i64>>| Arc::new(Int64Array::from(v)) as ArrayRef;
    let u = |v: Vec<u32>| Arc::new(UInt32Array::from(v)) as ArrayRef;
    // min not ascending
    assert!(BTreePageLookup::new(
        &a(vec![Some(5), Some(1)]),
        &a(vec![Some(6), Some(2)]),
        &u(vec![0, 0]),
        &u(vec![0, 1]),
        &md
    )
    .is_err());
    // lengths differ
    assert!(BTreePageLookup::new(
        &a(vec![Some(1)]),
        &a(vec![Some(6), Some(2)]),
        &u(vec![0, 0]),
        &u(vec![0, 1]),
        &md
    )
    .is_err());
    // repeated page
    assert!(BTreePageLookup::new(
        &a(vec![Some(1), Some(2)]),
        &a(vec![Some(1), Some(2)]),
        &u(vec![0, 0]),
        &u(vec![0, 0]),
        &md
    )
    .is_err());
    let md0: HashMap<String, String> = [("batch_size".to_string(), "0".to_string())].into();
    assert!(BTreePageLookup::new(
        &a(vec![Some(1)]),
        &a(vec![Some(1)]),
        &u(vec![0]),
        &u(vec![0]),
        &md0
    )
    .is_err());
    // range partitions map global pages to part files
    let mdp: HashMap<String, String> = [
        ("batch_size".to_string(), "10".to_string()),
        ("range_partitioned".to_string(), "true".to_string()),
        (
            "page_num_per_range_partition".to_string(),
            "[[0,2],[4294967296,1]]".to_string(),
        ),
    ]
    .into();
    let l = BTreePageLookup::new(
        &a(vec![Some(1), Some(2), Some(3)]),
        &a(vec![Some(1), Some(2), Some(3)]),
        &u(vec![0, 0, 0]),
        &u(vec![0, 1, 2]),
        &mdp,
    )
    .unwrap();
    assert_eq!(l.page_rows(1, &[15, 4]).unwrap(), (0, 10..15));
    assert_eq!(l.page_rows(2, &[15, 4]).unwrap(), (1, 0..4));
}

fn arb_query() -> impl Strategy<Value = LeafQuery> {
    let key = || (-3i64..25).prop_map(Key::Int);
    let bound = move || {
        prop_oneof![
            Just(Bound::Unbounded),
            key().prop_map(Bound::Included),
            key().prop_map(Bound::Excluded)
        ]
    };
    prop_oneof![
        key().prop_map(LeafQuery::Equals),
        proptest::collection::vec(key(), 1..4).prop_map(|mut v| {
            v.sort();
            v.dedup();
            LeafQuery::In {
                values: v,
                has_null: false,
            }
        }),
        (bound(), bound()).prop_map(|(lower, upper)| LeafQuery::Range { lower, upper }),
        Just(LeafQuery::IsNull),
    ]
}

fn arb_predicate() -> impl Strategy<Value = Predicate> {
    arb_query()
        .prop_map(leaf)
        .prop_recursive(3, 12, 3, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 1..3).prop_map(Predicate::And),
                proptest::collection::vec(inner.clone(), 1..3).prop_map(Predicate::Or),
                inner.clone().prop_map(|p| Predicate::Not(Box::new(p))),
            ]
        })
}

proptest! {
    /// Page selection is complete (every TRUE row lies on a selected page) and "All" pages
    /// are exact (every row on them is TRUE), for random data, page sizes and predicates.
    #[test]
    fn selection_is_complete_and_all_pages_are_exact(
        values in proptest::collection::vec(proptest::option::weighted(0.9, 0i64..20), 1..300),
        batch in 1usize..40,
        predicate in arb_predicate(),
    ) {
        let lookup = lookup_for(&values, batch);
        let mut sorted = values.clone();
        sorted.sort();
        let selection = lookup.select(&predicate);
        let test = predicate.to_sql();
        for (page, chunk) in sorted.chunks(batch).enumerate() {
            let truths: Vec<Option<bool>> = chunk
                .iter()
                .map(|v| eval_predicate(&test, &[v.map(Key::Int)]))
                .collect();
            let any_true = truths.contains(&Some(true));
            match selection.get(&(page as u32)) {
                None => prop_assert!(!any_true, "page {page} skipped but holds a TRUE row"),
                Some(PageMatch::All) => prop_assert!(truths.iter().all(|t| *t == Some(true)), "page {page} All but not all TRUE"),
                Some(PageMatch::Some) => {}
            }
        }
    }
}

/// BTrees of pylance <= 0.18 record min/max of a page's non-null values only, nulls
/// anywhere in the page (issue 32: `key < 'zzz'` returned the 16 NULL keys of
/// `p0_18_2_legacy`): a page holding nulls is never "all TRUE".
#[test]
fn a_page_with_nulls_is_never_all_true() {
    let md: HashMap<String, String> = [("batch_size".to_string(), "4".to_string())].into();
    let l = BTreePageLookup::new(
        &(Arc::new(Int64Array::from(vec![1, 10])) as ArrayRef),
        &(Arc::new(Int64Array::from(vec![5, 20])) as ArrayRef),
        &(Arc::new(UInt32Array::from(vec![1, 0])) as ArrayRef),
        &(Arc::new(UInt32Array::from(vec![0, 1])) as ArrayRef),
        &md,
    )
    .unwrap();
    let range = LeafQuery::Range {
        lower: Bound::Unbounded,
        upper: Bound::Excluded(Key::Int(100)),
    };
    let pages = l.select(&leaf(range));
    assert_eq!(pages.get(&0), Some(&PageMatch::Some), "{pages:?}");
    assert_eq!(pages.get(&1), Some(&PageMatch::All), "{pages:?}");
}
