//! The planner's ranges against the evaluator, element by element (spec: "Accelerated
//! Queries"): for random conjunctions over the keys (label: string, kind: int8,
//! confidence: float) and a non-key field (area), and random element tuples,
//! * an exact plan finds a tuple iff the predicate is TRUE on it;
//! * a superset plan finds every tuple on which it is TRUE;
//! * NULL ranges, when the index determines them, find a tuple iff the predicate is
//!   UNKNOWN on it (so NOT any_element can be answered from the index).

use crate::index::list_element::{
    eval_element, plan_any_element, BoundElementPredicate, ElementField, ElementValue, IndexAnswer,
    KeyEncoder, KeyType, NullRows, PlanOptions, ResolvedKey,
};
use proptest::prelude::*;

const LABELS: [&str; 5] = ["", "a", "ca", "car", "cart"];
const KINDS: [i64; 5] = [-128, -1, 0, 1, 127];
const CONFS: [&str; 6] = ["-1.5", "-0.0", "0.0", "0.5", "1.0", "CAST('NaN' AS FLOAT)"];
const CONF_VALUES: [f32; 7] = [-1.5, -0.0, 0.0, 0.5, 1.0, f32::NAN, f32::INFINITY];

fn fields() -> Vec<ElementField> {
    vec![
        ElementField::new(3, "label", "string"),
        ElementField::new(6, "kind", "int8"),
        ElementField::new(4, "confidence", "float"),
        ElementField::new(5, "area", "float"),
    ]
}

fn keys() -> Vec<ResolvedKey> {
    let k = |id, name: &str, t| ResolvedKey {
        field_id: id,
        name: name.into(),
        written_name: name.into(),
        key_type: t,
    };
    vec![
        k(3, "label", KeyType::Utf8),
        k(6, "kind", KeyType::Int8),
        k(4, "confidence", KeyType::Float32),
    ]
}

/// One conjunct from a template number and three small parameters.
fn conjunct(template: u8, a: usize, b: usize, c: usize) -> String {
    let l = |i: usize| format!("'{}'", LABELS[i % LABELS.len()]);
    let k = |i: usize| KINDS[i % KINDS.len()].to_string();
    let f = |i: usize| CONFS[i % CONFS.len()].to_string();
    match template % 24 {
        0 => format!("label = {}", l(a)),
        1 => format!("label IN ({}, {})", l(a), l(b)),
        2 => format!("label IN ({}, NULL)", l(a)),
        3 => "label IS NULL".into(),
        4 => format!("label > {}", l(a)),
        5 => "label IS NOT NULL".into(),
        6 => format!("kind = {}", k(a)),
        7 => format!("kind IN ({}, {}, {})", k(a), k(b), k(c)),
        8 => "kind IS NULL".into(),
        9 => format!("kind BETWEEN {} AND {}", k(a), k(b)),
        10 => format!("kind < {}", k(a)),
        11 => format!("kind != {}", k(a)),
        12 => format!("confidence = {}", f(a)),
        13 => format!("confidence > {}", f(a)),
        14 => format!("confidence <= {}", f(a)),
        15 => format!("confidence BETWEEN {} AND {}", f(a), f(b)),
        16 => "confidence IS NULL".into(),
        17 => format!("confidence IN ({}, {})", f(a), f(b)),
        18 => format!("area > {}", f(a)),
        19 => format!("(label = {} OR kind = {})", l(a), k(b)),
        20 => format!("kind >= {}", k(a)),
        21 => format!("confidence IS DISTINCT FROM {}", f(a)),
        22 => format!("(kind > {}) IS NOT FALSE", k(a)),
        _ => format!("label = {} AND kind = {}", l(a), k(b)),
    }
}

type Element = (Option<usize>, Option<usize>, Option<usize>, Option<usize>);

fn element_values(e: &Element) -> [Option<ElementValue>; 4] {
    [
        e.0.map(|i| ElementValue::Bytes(LABELS[i % LABELS.len()].as_bytes().to_vec())),
        e.1.map(|i| ElementValue::Int(KINDS[i % KINDS.len()])),
        e.2.map(|i| ElementValue::Float32(CONF_VALUES[i % CONF_VALUES.len()])),
        e.3.map(|i| ElementValue::Float32(CONF_VALUES[i % CONF_VALUES.len()])),
    ]
}

fn arb_element() -> impl Strategy<Value = Element> {
    (
        prop::option::weighted(0.85, 0..5usize),
        prop::option::weighted(0.85, 0..5usize),
        prop::option::weighted(0.85, 0..7usize),
        prop::option::weighted(0.85, 0..7usize),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn ranges_agree_with_three_valued_evaluation(
        parts in prop::collection::vec((0u8..24, 0usize..7, 0usize..7, 0usize..7), 1..4),
        elements in prop::collection::vec(arb_element(), 1..40),
        max_null_ranges in prop::sample::select(vec![2usize, 4096]),
    ) {
        let text = parts.iter().map(|&(t, a, b, c)| conjunct(t, a, b, c)).collect::<Vec<_>>().join(" AND ");
        let bound = BoundElementPredicate::parse(&text, &fields()).unwrap();
        let keys = keys();
        let encoder = KeyEncoder::new(keys.iter().map(|k| k.key_type.clone()).collect()).unwrap();
        let options = PlanOptions { max_ranges: 4096, max_null_ranges };
        let plan = plan_any_element(&bound, &keys, &encoder, &options).unwrap();
        let all_fields = fields();
        for e in &elements {
            let all = element_values(e);
            // Values in the order of the bound predicate's fields.
            let values: Vec<Option<ElementValue>> = bound.fields.iter().map(|f| {
                let i = all_fields.iter().position(|x| x.name == f.name).unwrap();
                all[i].clone()
            }).collect();
            let truth = eval_element(&bound.predicate, &values);
            let tuple = encoder.encode_tuple(&all[..3]).unwrap();
            let found = plan.true_ranges.iter().any(|r| r.contains(&tuple));
            match plan.answer {
                IndexAnswer::Exact => prop_assert_eq!(found, truth == Some(true), "{} on {:?}", text, e),
                IndexAnswer::SupersetWithRecheck => {
                    if truth == Some(true) { prop_assert!(found, "{} on {:?}", text, e); }
                }
                IndexAnswer::NotUsed => prop_assert!(plan.true_ranges.is_empty()),
            }
            if let NullRows::FromIndex { ranges } = &plan.null_rows {
                prop_assert_eq!(plan.answer, IndexAnswer::Exact);
                let unknown = ranges.iter().any(|r| r.contains(&tuple));
                prop_assert_eq!(unknown, truth.is_none(), "NULL ranges of {} on {:?}", text, e);
            }
        }
    }
}

#[test]
fn the_generator_covers_every_answer_kind() {
    // Guard against a generator that never exercises a branch.
    let keys = keys();
    let encoder = KeyEncoder::new(keys.iter().map(|k| k.key_type.clone()).collect()).unwrap();
    let mut seen = [false; 5];
    for t in 0..24u8 {
        for u in 0..24u8 {
            let text = format!("{} AND {}", conjunct(t, 1, 2, 3), conjunct(u, 3, 1, 0));
            let bound = BoundElementPredicate::parse(&text, &fields()).unwrap();
            let plan = plan_any_element(&bound, &keys, &encoder, &PlanOptions::default()).unwrap();
            seen[plan.answer as usize] = true;
            match &plan.null_rows {
                NullRows::FromIndex { ranges } if !ranges.is_empty() => seen[3] = true,
                NullRows::NotDetermined { .. } if plan.answer == IndexAnswer::Exact => {
                    seen[4] = true
                }
                _ => {}
            }
        }
    }
    assert_eq!(seen, [true; 5]);
}
