//! Bitmap reader tests on the pylance fixture (`tests/fixtures/datasets/scalar_indices.lance`,
//! answers from `gen_scalar_indices.py`), plus search-planner unit tests.

use std::sync::Arc;

use roaring::{RoaringBitmap, RoaringTreemap};

use super::*;
use crate::index::bitmap_file::exec::open_bitmap_file;
use crate::index::bitmap_file::search::{spans_of, unsorted_span_rows, KeySamples, SearchPlan};
use crate::index::key::Key;
use crate::lance::dataset::{DatasetSession, IndexSegment};

/// Shared fixture helpers for the scalar-index reader tests.
pub(crate) mod fixture {
    use super::*;

    /// Path of the fixture dataset.
    pub(crate) fn path() -> String {
        format!(
            "{}/tests/fixtures/datasets/scalar_indices.lance",
            env!("CARGO_MANIFEST_DIR")
        )
    }

    /// The fixture opened with a fresh session.
    pub(crate) async fn open() -> DatasetVersion {
        DatasetVersion::open_url(
            &path(),
            &[],
            None,
            Arc::new(DatasetSession::new(64 << 20)),
            &IoStats::new(),
        )
        .await
        .unwrap()
    }

    /// `(filter, sorted row addresses)` pylance returned for `scalar_indices`.
    pub(crate) fn oracle() -> Vec<(String, Vec<u64>)> {
        let text = std::fs::read_to_string(format!(
            "{}/tests/fixtures/datasets/scalar_answers.json",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        doc["datasets"]["scalar_indices"]["queries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| {
                let mut acc = 0u64;
                let addrs = q["addr_deltas"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| {
                        acc += d.as_u64().unwrap();
                        acc
                    })
                    .collect();
                (q["filter"].as_str().unwrap().to_string(), addrs)
            })
            .collect()
    }

    /// The one segment of the index on `column`.
    pub(crate) fn segment(dataset: &DatasetVersion, column: &str) -> IndexSegment {
        let field = dataset.manifest().schema.field_by_path(column).unwrap().id;
        dataset
            .manifest()
            .indices
            .iter()
            .find(|s| s.fields == [field])
            .unwrap()
            .clone()
    }

    /// Rows of the current fragments `segment` covers, minus deleted rows.
    pub(crate) async fn live_covered(
        dataset: &DatasetVersion,
        segment: &IndexSegment,
    ) -> RoaringTreemap {
        let covered = segment.fragment_bitmap.clone().unwrap() & dataset.manifest().fragment_ids();
        let frags: Vec<_> = dataset
            .manifest()
            .fragments
            .iter()
            .filter(|f| covered.contains(f.id as u32))
            .collect();
        let deleted = dataset
            .deletion_vectors(&frags, &IoStats::new())
            .await
            .unwrap();
        let mut out = RoaringTreemap::new();
        for f in frags {
            let mut rows: RoaringBitmap = (0..f.physical_rows as u32).collect();
            if let Some(d) = deleted.get(&f.id) {
                rows -= &d.0;
            }
            out.extend(rows.iter().map(|r| (f.id << 32) | u64::from(r)));
        }
        out
    }
}

#[tokio::test]
async fn warm_repeat_reads_nothing() {
    let dataset = fixture::open().await;
    let segment = fixture::segment(&dataset, "b_s");
    let cold = IoStats::new();
    let file = open_bitmap_file(&dataset, &segment, &cold).await.unwrap();
    let q = LeafQuery::Equals(Key::Bytes("v00003".into()));
    let a = answer_bitmap(&dataset, &file, &q, false, &cold)
        .await
        .unwrap();
    assert!(!a.true_rows.is_empty());
    let warm = IoStats::new();
    let file = open_bitmap_file(&dataset, &segment, &warm).await.unwrap();
    let b = answer_bitmap(&dataset, &file, &q, false, &warm)
        .await
        .unwrap();
    assert_eq!(a.true_rows, b.true_rows);
    assert_eq!(b.read.keys_read, 0);
    assert_eq!(warm.snapshot().requests, 0, "{:?}", warm.snapshot());
}

fn samples(keys: &[Option<i64>]) -> KeySamples {
    let mut s = KeySamples::default();
    for (i, k) in keys.iter().enumerate() {
        s.insert(i as u64, k.map(Key::Int)).unwrap();
    }
    s
}

/// Run the planner against an in-memory sorted key list; return rows read and the spans.
fn simulate(keys: &[Option<i64>], query: &LeafQuery) -> (u64, u32, Vec<std::ops::Range<u64>>) {
    let plan = SearchPlan::new(keys.len() as u64, 8, 64);
    let spans = spans_of(query);
    let targets: Vec<_> = spans.spans.iter().flat_map(|(a, b)| [a, b]).collect();
    let mut s = KeySamples::default();
    let (mut read, mut rounds) = (0, 0);
    loop {
        let reads = plan.next_reads(&s, &targets);
        if reads.is_empty() {
            break;
        }
        rounds += 1;
        for r in reads {
            for row in r {
                read += 1;
                s.insert(row, keys[row as usize].map(Key::Int)).unwrap();
            }
        }
        assert!(rounds < 20);
    }
    let rows = spans
        .spans
        .iter()
        .map(|(a, b)| plan.resolved(&s, a).unwrap()..plan.resolved(&s, b).unwrap())
        .collect();
    (read, rounds, rows)
}

#[test]
fn search_reads_a_small_share_of_the_keys() {
    let mut keys: Vec<Option<i64>> = vec![None];
    keys.extend((0..100_000i64).map(|k| Some(k * 3)));
    for probe in [0i64, 3, 150_000, 299_997, 7] {
        let (read, rounds, rows) = simulate(&keys, &LeafQuery::Equals(Key::Int(probe)));
        let want = if probe % 3 == 0 {
            let r = (probe / 3 + 1) as u64;
            r..r + 1
        } else {
            let r = (probe / 3 + 2) as u64;
            r..r
        };
        assert_eq!(rows, vec![want], "{probe}");
        assert!(read < 1000, "{probe}: read {read} keys");
        assert!(rounds <= 6, "{probe}: {rounds} rounds");
    }
    let (_, _, rows) = simulate(
        &keys,
        &LeafQuery::Range {
            lower: std::ops::Bound::Excluded(Key::Int(10)),
            upper: std::ops::Bound::Unbounded,
        },
    );
    assert_eq!(rows, vec![5..100_001]);
}

#[test]
fn keys_out_of_order_are_corrupt() {
    let mut s = samples(&[None, Some(1), Some(5)]);
    assert!(s.insert(7, Some(Key::Int(3))).is_err());
    assert!(s.insert(4, None).is_err());
    let mut t = KeySamples::default();
    t.insert(10, Some(Key::Int(9))).unwrap();
    let e = t.insert(20, Some(Key::Int(9))).unwrap_err();
    assert!(e.to_string().contains("out of order"), "{e}");
}

/// pylance 6.1.0 wrote label-list lookups with unsorted keys (`t10, t3, t7, t11, t1, ...`):
/// the order check says so, and the sorted view finds every key's rows.
#[test]
fn unsorted_lookups_are_searched_through_their_sorted_view() {
    let keys: Vec<Option<i64>> = vec![Some(10), Some(3), Some(7), Some(11), Some(1), None];
    let mut s = KeySamples::default();
    s.insert(0, keys[0].map(Key::Int)).unwrap();
    assert!(s.clone().insert(1, keys[1].map(Key::Int)).is_err());
    assert!(s.clone().insert(1, Some(Key::Int(12))).is_ok());
    assert!(
        s.clone().insert(3, None).is_err(),
        "the null key may only be at row 0"
    );
    s.set_unsorted(keys.iter().map(|k| k.map(Key::Int)).collect());
    let view = s.unsorted.as_ref().unwrap();
    let rows_of = |query: &LeafQuery| -> Vec<Vec<u64>> {
        spans_of(query)
            .spans
            .iter()
            .map(|(a, b)| unsorted_span_rows(view, a, b))
            .collect()
    };
    assert_eq!(rows_of(&LeafQuery::Equals(Key::Int(7))), vec![vec![2]]);
    assert_eq!(
        rows_of(&LeafQuery::Equals(Key::Int(8))),
        vec![Vec::<u64>::new()]
    );
    let range = LeafQuery::Range {
        lower: std::ops::Bound::Included(Key::Int(3)),
        upper: std::ops::Bound::Excluded(Key::Int(11)),
    };
    assert_eq!(rows_of(&range), vec![vec![0, 1, 2]]);
    let all = LeafQuery::Range {
        lower: std::ops::Bound::Unbounded,
        upper: std::ops::Bound::Unbounded,
    };
    assert_eq!(
        rows_of(&all),
        vec![vec![0, 1, 2, 3, 4]],
        "the null key is no value"
    );
    assert_eq!(
        view.first().map(|(k, r)| (k.is_none(), *r)),
        Some((true, 5))
    );
}
