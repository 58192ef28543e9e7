//! Unit tests of sparse structural plans: hand-built list pages, one per rule.
#![allow(clippy::single_range_in_vec_init)]
use super::*;
use crate::lance::proto::encodings::{
    self as pb, compressive_encoding::Compression, sparse_structural_layer::Layer,
    sparse_validity_set::Meaning, CompressiveEncoding,
};

fn flat64() -> CompressiveEncoding {
    CompressiveEncoding {
        compression: Some(Compression::Flat(pb::Flat {
            bits_per_value: 64,
            data: None,
        })),
    }
}

fn empty() -> CompressiveEncoding {
    CompressiveEncoding {
        compression: Some(Compression::Constant(pb::Constant { value: None })),
    }
}

/// Structural payloads laid out back to back, as a page's buffers would be.
#[derive(Default)]
struct Payloads {
    bytes: Vec<Bytes>,
}

impl Payloads {
    /// A Flat(64) sequence (or the empty constant sequence when `values` is empty).
    fn seq(&mut self, values: &[u64]) -> (Option<CompressiveEncoding>, u64) {
        if values.is_empty() {
            return (Some(empty()), 0);
        }
        let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.bytes.push(Bytes::from(raw));
        (Some(flat64()), values.len() as u64)
    }

    fn validity(&mut self, null_positions: &[u64]) -> pb::SparseValiditySet {
        let (positions, num_positions) = self.seq(null_positions);
        pb::SparseValiditySet {
            meaning: Meaning::SparseValidityNullPositions as i32,
            positions,
            num_positions,
        }
    }

    /// Fake absolute ranges for the payloads (only their count matters to the page).
    fn ranges(&self) -> Vec<Range<u64>> {
        let mut at = 0u64;
        self.bytes
            .iter()
            .map(|b| {
                at += b.len() as u64;
                at - b.len() as u64..at
            })
            .collect()
    }
}

/// A list<int32> page description.
struct ListPage {
    rows: u64,
    non_empty: Vec<u64>,
    counts: Vec<u64>,
    num_child_slots: u64,
    null_lists: Vec<u64>,
    null_items: Vec<u64>,
}

fn example() -> ListPage {
    // Rows: 0 [], 1 [a, b], 2 [], 3 [null], 4 [c, d, e], 5 null.
    ListPage {
        rows: 6,
        non_empty: vec![1, 3, 4],
        counts: vec![2, 1, 3],
        num_child_slots: 6,
        null_lists: vec![5],
        null_items: vec![2],
    }
}

fn structure(p: &ListPage, payloads: &mut Payloads) -> pb::SparseStructure {
    let (non_empty_positions, num_non_empty_positions) = payloads.seq(&p.non_empty);
    let (counts, _) = payloads.seq(&p.counts);
    let list = pb::SparseListLayer {
        num_child_slots: p.num_child_slots,
        non_empty_positions,
        num_non_empty_positions,
        counts,
        validity: Some(payloads.validity(&p.null_lists)),
    };
    let leaf = payloads.validity(&p.null_items);
    pb::SparseStructure {
        layers: vec![
            pb::SparseStructuralLayer {
                layer: Some(Layer::List(list)),
            },
            pb::SparseStructuralLayer {
                layer: Some(Layer::Validity(leaf)),
            },
        ],
    }
}

fn constant_values() -> pb::value_plane::Codec {
    pb::value_plane::Codec::Constant(pb::ConstantValue {
        scalar: Bytes::from_static(&[7, 0, 0, 0]),
    })
}

fn build(p: &ListPage) -> Result<(SparsePage, Vec<Bytes>)> {
    let mut payloads = Payloads::default();
    let structure = structure(p, &mut payloads);
    let page =
        SparsePage::new(structure, constant_values(), &payloads.ranges())?.with_rows(p.rows)?;
    Ok((page, payloads.bytes))
}

fn decode(p: &ListPage) -> Result<SparseStructuralPlan> {
    let (page, bytes) = build(p)?;
    SparseStructuralPlan::decode(&page, &bytes)
}

fn assert_broken(result: Result<impl std::fmt::Debug>, rule: PlanRule) {
    match result {
        Err(Error::Corrupt { what, .. }) => assert!(
            what.contains(rule.name()),
            "expected rule '{}', got: {what}",
            rule.name()
        ),
        other => panic!("expected rule '{}' broken, got {other:?}", rule.name()),
    }
}

#[test]
fn a_valid_list_page_decodes_and_projects_rows_to_leaf_slots() {
    let plan = decode(&example()).unwrap();
    assert_eq!(plan.rows(), 6);
    assert_eq!(plan.leaf_slots(), 6);
    // Leaf slot 2 (row 3's item) is null; the null list (row 5) has no children.
    assert_eq!(plan.materialized.as_deref(), Some(&[0, 1, 3, 4, 5][..]));
    assert_eq!(
        plan.project(&[0..1, 2..3]).unwrap().leaf_ranges,
        Vec::<Range<u64>>::new()
    );
    assert_eq!(
        plan.project(&[5..6]).unwrap().leaf_ranges,
        Vec::<Range<u64>>::new()
    );
    assert_eq!(
        plan.project(&[1..2, 4..5]).unwrap().leaf_ranges,
        vec![0..2, 3..6]
    );
    let all = plan.project(&[0..6]).unwrap();
    assert_eq!(all.layers[0].offsets, Some(vec![0, 0, 2, 2, 3, 6, 6]));
    assert_eq!(
        all.layers[0].validity,
        Some(vec![true, true, true, true, true, false])
    );
    assert_eq!(plan.ordinals(&[2..6]).unwrap(), vec![2..5]);
    assert_eq!(plan.spread(&[1..4]).unwrap(), vec![Some(0), None, Some(1)]);
    // Dense levels: one per leaf slot plus one per empty or null list (rows 0, 2, 5).
    assert_eq!(plan.dense_level_entries(), 9);
    let summary = plan.summary();
    assert_eq!(summary[0].kind, "list");
    assert_eq!((summary[0].domain, summary[0].non_empty), (6, 3));
    assert_eq!((summary[1].domain, summary[1].validity_positions), (6, 1));
}

#[test]
fn materialized_slots_agree_with_projecting_every_row() {
    // Null lists that are non-empty still hide their children.
    let p = ListPage {
        rows: 8,
        non_empty: vec![0, 2, 3, 7],
        counts: vec![1, 3, 2, 2],
        num_child_slots: 8,
        null_lists: vec![2, 5],
        null_items: vec![0, 6],
    };
    let plan = decode(&p).unwrap();
    let all = plan.project(&[0..8]).unwrap();
    let leaf = all.layers.last().unwrap();
    let alive: Vec<u64> = (0..leaf.len as u64)
        .filter(|&s| leaf.validity.as_ref().is_none_or(|v| v[s as usize]))
        .collect();
    assert_eq!(plan.materialized.as_deref(), Some(&alive[..]));
    assert_eq!(alive, vec![4, 5, 7]);
}

#[test]
fn positions_that_do_not_increase_break_the_rule() {
    let mut p = example();
    p.non_empty = vec![3, 1, 4];
    assert_broken(decode(&p), PlanRule::PositionsIncreasing);
    let mut p = example();
    p.null_items = vec![2, 2];
    assert_broken(decode(&p), PlanRule::PositionsIncreasing);
}

#[test]
fn positions_outside_the_domain_break_the_rule() {
    let mut p = example();
    p.non_empty = vec![1, 3, 6];
    assert_broken(decode(&p), PlanRule::PositionsInDomain);
    let mut p = example();
    p.null_lists = vec![9];
    assert_broken(decode(&p), PlanRule::PositionsInDomain);
    // The leaf validity lives in the child domain (6 slots), not the row domain.
    let mut p = example();
    p.null_items = vec![6];
    assert_broken(decode(&p), PlanRule::PositionsInDomain);
}

#[test]
fn zero_counts_break_the_rule() {
    let mut p = example();
    p.counts = vec![2, 0, 4];
    assert_broken(decode(&p), PlanRule::CountsPositive);
}

#[test]
fn counts_that_do_not_sum_to_the_child_slots_break_the_rule() {
    let mut p = example();
    p.num_child_slots = 7;
    assert_broken(decode(&p), PlanRule::CountsSum);
    let mut p = example();
    p.counts = vec![u64::MAX, 1, 3];
    assert_broken(decode(&p), PlanRule::CountsSum);
}

#[test]
fn missing_and_extra_buffers_break_the_rule() {
    let p = example();
    let mut payloads = Payloads::default();
    let s = structure(&p, &mut payloads);
    let mut ranges = payloads.ranges();
    ranges.pop();
    assert_broken(
        SparsePage::new(s.clone(), constant_values(), &ranges),
        PlanRule::BuffersMatch,
    );
    let mut ranges = payloads.ranges();
    ranges.push(1000..1008);
    assert_broken(
        SparsePage::new(s.clone(), constant_values(), &ranges),
        PlanRule::BuffersMatch,
    );
    // Fewer payload bytes handed to the decoder than the page lists.
    let (page, mut bytes) = build(&p).unwrap();
    bytes.pop();
    assert_broken(
        SparseStructuralPlan::decode(&page, &bytes),
        PlanRule::BuffersMatch,
    );
}

#[test]
fn layers_that_do_not_chain_break_the_rule() {
    // A list as the inner-most layer: the leaf validity is missing.
    let p = example();
    let mut payloads = Payloads::default();
    let mut s = structure(&p, &mut payloads);
    s.layers.pop();
    payloads.bytes.pop();
    let page = SparsePage::new(s, constant_values(), &payloads.ranges())
        .unwrap()
        .with_rows(6)
        .unwrap();
    assert_broken(
        SparseStructuralPlan::decode(&page, &payloads.bytes),
        PlanRule::DomainsChain,
    );
    // A leaf-slot count that is not what the layers produce.
    let (mut page, bytes) = build(&example()).unwrap();
    page.leaf_slots = 5;
    assert_broken(
        SparseStructuralPlan::decode(&page, &bytes),
        PlanRule::DomainsChain,
    );
    // A child domain too large to hold.
    let mut p = example();
    p.num_child_slots = MAX_SPARSE_ENTRIES + 1;
    p.counts = vec![2, 1, MAX_SPARSE_ENTRIES - 2];
    assert_broken(decode(&p), PlanRule::DomainsChain);
}

#[test]
fn declared_lengths_beyond_the_limit_break_the_rule() {
    let p = example();
    let mut payloads = Payloads::default();
    let mut s = structure(&p, &mut payloads);
    if let Some(Layer::List(list)) = s.layers[0].layer.as_mut() {
        list.num_non_empty_positions = u64::MAX;
    }
    let page = SparsePage::new(s, constant_values(), &payloads.ranges())
        .unwrap()
        .with_rows(6)
        .unwrap();
    assert_broken(
        SparseStructuralPlan::decode(&page, &payloads.bytes),
        PlanRule::SequenceLength,
    );
}

#[test]
fn zipped_values_must_match_the_materialized_slots() {
    let p = example();
    let mut payloads = Payloads::default();
    let s = structure(&p, &mut payloads);
    let zipped = |num_items| {
        pb::value_plane::Codec::Zipped(pb::ZippedValues {
            compression: Some(CompressiveEncoding {
                compression: Some(Compression::Flat(pb::Flat {
                    bits_per_value: 32,
                    data: None,
                })),
            }),
            levels: None,
            addressing: Some(pb::zipped_values::Addressing::BitsPerValue(32)),
            num_items,
            num_visible_items: num_items,
        })
    };
    let mut ranges = vec![0..20];
    ranges.extend(payloads.ranges());
    for (items, ok) in [(5, true), (6, false), (4, false)] {
        let page = SparsePage::new(s.clone(), zipped(items), &ranges)
            .unwrap()
            .with_rows(6)
            .unwrap();
        let result = SparseStructuralPlan::decode(&page, &payloads.bytes);
        if ok {
            assert_eq!(result.unwrap().materialized_count(), 5);
        } else {
            assert_broken(result, PlanRule::ValuesMatchStructure);
        }
    }
}

#[test]
fn plan_memory_follows_the_positions_not_the_rows() {
    // 1,000,000 rows, 100 non-empty lists of 2: the plan stays a few KiB.
    let non_empty: Vec<u64> = (0..100).map(|i| i * 10_000 + 7).collect();
    let p = ListPage {
        rows: 1_000_000,
        counts: vec![2; 100],
        num_child_slots: 200,
        non_empty,
        null_lists: vec![],
        null_items: vec![],
    };
    let plan = decode(&p).unwrap();
    assert!(plan.deep_size() < 8 * 1024, "{} bytes", plan.deep_size());
    assert_eq!(plan.dense_level_entries(), 1_000_000 - 100 + 200);
}
