//! Clause-by-clause tests of the planner (spec: "Accelerated Queries").

use super::*;
use crate::index::list_element::key_encoding::KeyType;
use crate::index::list_element::resolve::ElementField;

fn fields() -> Vec<ElementField> {
    vec![
        ElementField::new(3, "label", "string"),
        ElementField::new(4, "confidence", "float"),
        ElementField::new(5, "area", "float"),
        ElementField::new(6, "kind", "int8"),
        ElementField::new(7, "flag", "bool"),
    ]
}

fn key(id: i32, name: &str, t: KeyType) -> ResolvedKey {
    ResolvedKey {
        field_id: id,
        name: name.into(),
        written_name: name.into(),
        key_type: t,
    }
}

/// Index on (label, confidence).
fn two_keys() -> (Vec<ResolvedKey>, KeyEncoder) {
    let keys = vec![
        key(3, "label", KeyType::Utf8),
        key(4, "confidence", KeyType::Float32),
    ];
    let enc = KeyEncoder::new(keys.iter().map(|k| k.key_type.clone()).collect()).unwrap();
    (keys, enc)
}

/// Index on (label, kind, confidence).
fn three_keys() -> (Vec<ResolvedKey>, KeyEncoder) {
    let keys = vec![
        key(3, "label", KeyType::Utf8),
        key(6, "kind", KeyType::Int8),
        key(4, "confidence", KeyType::Float32),
    ];
    let enc = KeyEncoder::new(keys.iter().map(|k| k.key_type.clone()).collect()).unwrap();
    (keys, enc)
}

fn plan_with(
    text: &str,
    (keys, enc): &(Vec<ResolvedKey>, KeyEncoder),
    options: PlanOptions,
) -> AnyElementPlan {
    let bound = BoundElementPredicate::parse(text, &fields()).unwrap();
    plan_any_element(&bound, keys, enc, &options).unwrap()
}

fn plan(text: &str) -> AnyElementPlan {
    plan_with(text, &two_keys(), PlanOptions::default())
}

fn s(v: &str) -> Option<ElementValue> {
    Some(ElementValue::Bytes(v.as_bytes().to_vec()))
}

fn f(v: f32) -> Option<ElementValue> {
    Some(ElementValue::Float32(v))
}

fn tuple(label: Option<ElementValue>, conf: Option<ElementValue>) -> Vec<u8> {
    two_keys().1.encode_tuple(&[label, conf]).unwrap()
}

fn found(ranges: &[EncodedRange], t: &[u8]) -> bool {
    ranges.iter().any(|r| r.contains(t))
}

fn null_ranges_of(p: &AnyElementPlan) -> &[EncodedRange] {
    match &p.null_rows {
        NullRows::FromIndex { ranges } => ranges,
        NullRows::NotDetermined { reason } => panic!("not determined: {reason}"),
    }
}

#[test]
fn first_key_fixed_by_equality_is_one_prefix_range() {
    // "fixes the first key with =": the tuples whose encoding starts with e('car').
    let p = plan("label = 'car'");
    assert_eq!(p.answer, IndexAnswer::Exact);
    assert_eq!(p.fixed_keys, ["label"]);
    let prefix = two_keys().1.encode_tuple(&[s("car")]).unwrap();
    assert_eq!(p.true_ranges, vec![EncodedRange::with_prefix(prefix)]);
    assert!(found(&p.true_ranges, &tuple(s("car"), None)));
    assert!(found(&p.true_ranges, &tuple(s("car"), f(f32::NAN))));
    assert!(!found(&p.true_ranges, &tuple(s("cart"), f(1.0))));
    assert!(!found(&p.true_ranges, &tuple(s("ca"), f(1.0))));
    assert!(!found(&p.true_ranges, &tuple(None, f(1.0))));
    // NULL rows: label null is the only way to be UNKNOWN.
    let nulls = null_ranges_of(&p);
    assert_eq!(nulls.len(), 1);
    assert!(found(nulls, &tuple(None, f(0.3))));
    assert!(!found(nulls, &tuple(s(""), f(0.3))));
    assert_eq!(p.strategy(false), CallStrategy::IndexExact);
    assert_eq!(p.strategy(true), CallStrategy::IndexComplement);
}

#[test]
fn fixed_key_then_one_range_on_the_next_key() {
    // "the last fixed key may be followed by one range on the next key"
    let p = plan("label = 'car' AND confidence > 0.9");
    assert_eq!(p.answer, IndexAnswer::Exact);
    assert_eq!(p.range_key.as_deref(), Some("confidence"));
    assert_eq!(p.true_ranges.len(), 1);
    assert!(found(&p.true_ranges, &tuple(s("car"), f(0.95))));
    assert!(found(&p.true_ranges, &tuple(s("car"), f(f32::INFINITY))));
    assert!(!found(&p.true_ranges, &tuple(s("car"), f(0.9))));
    assert!(!found(&p.true_ranges, &tuple(s("car"), None)));
    assert!(!found(&p.true_ranges, &tuple(s("dog"), f(0.95))));
    // UNKNOWN: (null, >0.9), (car, null), (null, null) — 2^2 - 1 sets.
    let nulls = null_ranges_of(&p);
    assert_eq!(nulls.len(), 3);
    assert!(found(nulls, &tuple(None, f(0.95))));
    assert!(!found(nulls, &tuple(None, f(0.5))));
    assert!(found(nulls, &tuple(s("car"), None)));
    assert!(!found(nulls, &tuple(s("dog"), None)));
    assert!(found(nulls, &tuple(None, None)));
}

#[test]
fn in_values_cross_with_the_range_and_null_sets() {
    // "Each combination of fixed values and the range becomes one range"; NULL sets are
    // "crossed with the IN values of the keys it leaves non-null".
    let p = plan("label IN ('car', 'dog') AND confidence BETWEEN 0.5 AND 0.9");
    assert_eq!(p.answer, IndexAnswer::Exact);
    assert_eq!(p.true_ranges.len(), 2);
    for (t, expected) in [
        (tuple(s("dog"), f(0.5)), true),
        (tuple(s("car"), f(0.9)), true),
        (tuple(s("car"), f(0.91)), false),
        (tuple(s("cat"), f(0.7)), false),
    ] {
        assert_eq!(found(&p.true_ranges, &t), expected);
    }
    // {label}: 1, {confidence}: 2 (car, dog), {both}: 1.
    assert_eq!(null_ranges_of(&p).len(), 4);
}

#[test]
fn merged_bounds_and_empty_ranges() {
    let p = plan("confidence > 0.5 AND label = 'car' AND confidence < 0.9 AND confidence >= 0.6");
    assert_eq!(p.answer, IndexAnswer::Exact);
    assert!(found(&p.true_ranges, &tuple(s("car"), f(0.6))));
    assert!(!found(&p.true_ranges, &tuple(s("car"), f(0.55))));
    assert!(!found(&p.true_ranges, &tuple(s("car"), f(0.9))));
    // An empty intersection gives no range at all and an exact empty answer.
    let p = plan("label = 'car' AND confidence > 0.9 AND confidence < 0.1");
    assert_eq!(p.answer, IndexAnswer::Exact);
    assert!(p.true_ranges.is_empty());
    // Same value, inclusive and exclusive: the exclusive one wins.
    let p = plan("label = 'car' AND confidence >= 0.5 AND confidence > 0.5");
    assert!(!found(&p.true_ranges, &tuple(s("car"), f(0.5))));
}

#[test]
fn is_null_fixes_a_key_and_is_never_unknown() {
    // "IS NULL is never UNKNOWN."
    let p = plan("label IS NULL AND confidence = 0.5");
    assert_eq!(p.answer, IndexAnswer::Exact);
    assert_eq!(p.true_ranges.len(), 1);
    assert!(found(&p.true_ranges, &tuple(None, f(0.5))));
    let nulls = null_ranges_of(&p);
    assert_eq!(nulls.len(), 1);
    assert!(found(nulls, &tuple(None, None)));
    assert!(!found(nulls, &tuple(s("car"), None)));
    let p = plan("label IS NULL");
    assert_eq!(null_ranges_of(&p).len(), 0);
}

#[test]
fn float_zero_is_two_fixed_values() {
    let p = plan("label = 'car' AND confidence = 0");
    assert_eq!(p.true_ranges.len(), 2);
    assert!(found(&p.true_ranges, &tuple(s("car"), f(-0.0))));
    assert!(found(&p.true_ranges, &tuple(s("car"), f(0.0))));
}

#[test]
fn bare_boolean_key_fixes_true() {
    let keys = vec![key(7, "flag", KeyType::Bool)];
    let enc = KeyEncoder::new(vec![KeyType::Bool]).unwrap();
    let p = plan_with("flag", &(keys, enc), PlanOptions::default());
    assert_eq!(p.answer, IndexAnswer::Exact);
    assert_eq!(p.true_ranges, vec![EncodedRange::with_prefix(vec![1, 1])]);
}

#[test]
fn residual_conjuncts_give_a_superset() {
    // "When some conjunct is not answered this way, for example a condition on a field
    // that is not a key, the index returns a superset"
    for (text, residual) in [
        ("label = 'car' AND area > 5", "area > 5.0"),
        (
            "label = 'car' AND confidence IS NOT NULL",
            "confidence IS NOT NULL",
        ),
        (
            "label = 'car' AND (confidence > 0.5) IS TRUE",
            "(confidence > 0.5) IS TRUE",
        ),
        (
            "label = 'car' AND confidence IS DISTINCT FROM 0.5",
            "confidence IS DISTINCT FROM 0.5",
        ),
        (
            "label = 'car' AND (confidence > 0.5 OR area < 1)",
            "(confidence > 0.5) OR (area < 1.0)",
        ),
        (
            "label = 'car' AND lower(label) = 'car'",
            "lower(label) = 'car'",
        ),
        ("label = 'car' AND label = 'dog'", "label = 'dog'"),
        ("label = 'car' AND confidence != 0.5", "confidence != 0.5"),
        ("label = 'car' AND confidence = NULL", "confidence = NULL"),
        (
            "label = 'car' AND NOT (confidence < 0.5)",
            "NOT (confidence < 0.5)",
        ),
    ] {
        let p = plan(text);
        assert_eq!(p.answer, IndexAnswer::SupersetWithRecheck, "{text}");
        assert_eq!(p.residual, vec![residual.to_string()], "{text}");
        assert_eq!(p.true_ranges.len(), 1, "{text}");
        assert_eq!(p.strategy(false), CallStrategy::IndexThenRecheck);
        assert!(
            matches!(p.strategy(true), CallStrategy::EvaluateOnData { .. }),
            "{text}"
        );
        assert!(
            matches!(p.null_rows, NullRows::NotDetermined { .. }),
            "{text}"
        );
    }
}

#[test]
fn first_key_must_be_fixed() {
    // "when its predicate is a conjunction that fixes the first key with =, IN or IS NULL"
    for text in [
        "confidence > 0.5",
        "confidence = 0.5",
        "area = 1",
        "label > 'a'",
        "label IS NOT NULL",
        "label != 'car'",
        "label NOT IN ('car')",
        "label = 'car' OR label = 'dog'",
        "label IS NOT DISTINCT FROM 'car'",
        "NOT (label = 'car')",
        "TRUE",
    ] {
        let p = plan(text);
        assert_eq!(p.answer, IndexAnswer::NotUsed, "{text}");
        assert!(p.true_ranges.is_empty());
        assert!(matches!(
            p.strategy(false),
            CallStrategy::EvaluateOnData { .. }
        ));
        assert!(matches!(
            p.strategy(true),
            CallStrategy::EvaluateOnData { .. }
        ));
    }
}

#[test]
fn null_literal_in_in_list_blocks_not() {
    // "when a conjunct holds a NULL literal (label IN ('car', NULL) is UNKNOWN for dog ...)"
    let p = plan("label IN ('car', NULL)");
    assert_eq!(p.answer, IndexAnswer::Exact);
    assert_eq!(p.true_ranges.len(), 1);
    assert!(
        matches!(&p.null_rows, NullRows::NotDetermined { reason } if reason.contains("NULL literal"))
    );
    assert!(matches!(
        p.strategy(true),
        CallStrategy::EvaluateOnData { .. }
    ));
    // Only NULL: nothing is TRUE.
    let p = plan("label IN (NULL)");
    assert_eq!(p.answer, IndexAnswer::Exact);
    assert!(p.true_ranges.is_empty());
}

#[test]
fn keys_are_used_in_order_only() {
    let three = three_keys();
    // A range on the third key without the second fixed is residual.
    let p = plan_with(
        "label = 'car' AND confidence > 0.5",
        &three,
        PlanOptions::default(),
    );
    assert_eq!(p.answer, IndexAnswer::SupersetWithRecheck);
    assert_eq!(p.fixed_keys, ["label"]);
    assert_eq!(p.range_key, None);
    // Two fixed keys and a range on the third.
    let p = plan_with(
        "kind IN (1, 2) AND label = 'car' AND confidence > 0.5",
        &three,
        PlanOptions::default(),
    );
    assert_eq!(p.answer, IndexAnswer::Exact);
    assert_eq!(p.fixed_keys, ["label", "kind"]);
    assert_eq!(p.range_key.as_deref(), Some("confidence"));
    assert_eq!(p.true_ranges.len(), 2);
    // NULL sets over 3 constrained keys: {l}:2 {k}:1 {l,k}:1 {c}:2 {l,c}:2 {k,c}:1 {l,k,c}:1.
    assert_eq!(null_ranges_of(&p).len(), 10);
    // A range on the second key ends the walk; a fix on the third is then residual.
    let p = plan_with(
        "label = 'car' AND kind > 1 AND confidence = 0.5",
        &three,
        PlanOptions::default(),
    );
    assert_eq!(p.answer, IndexAnswer::SupersetWithRecheck);
    assert_eq!(p.range_key.as_deref(), Some("kind"));
    assert_eq!(p.residual, ["confidence = 0.5"]);
}

#[test]
fn limits() {
    // "A reader may stop enumerating combinations past a limit of its choosing."
    let opts = PlanOptions {
        max_ranges: 4096,
        max_null_ranges: 3,
    };
    let p = plan_with(
        "label IN ('car', 'dog') AND confidence BETWEEN 0.5 AND 0.9",
        &two_keys(),
        opts,
    );
    assert_eq!(p.answer, IndexAnswer::Exact);
    assert!(
        matches!(&p.null_rows, NullRows::NotDetermined { reason } if reason.contains("more than 3"))
    );
    assert!(matches!(
        p.strategy(true),
        CallStrategy::EvaluateOnData { .. }
    ));
    // Too many TRUE combinations: trailing keys become residual (superset).
    let opts = PlanOptions {
        max_ranges: 5,
        max_null_ranges: 4096,
    };
    let p = plan_with(
        "label IN ('a', 'b', 'c') AND kind IN (1, 2) AND confidence > 0.5",
        &three_keys(),
        opts,
    );
    assert_eq!(p.answer, IndexAnswer::SupersetWithRecheck);
    assert_eq!(p.fixed_keys, ["label"]);
    assert_eq!(p.true_ranges.len(), 3);
    assert_eq!(p.residual.len(), 2);
}

#[test]
fn renamed_keys_are_matched_by_field_id() {
    // The key field 3 is now called "kind_of"; a new field took its old name "label".
    let fields = vec![
        ElementField::new(3, "kind_of", "string"),
        ElementField::new(10, "label", "string"),
        ElementField::new(4, "confidence", "float"),
    ];
    let keys = vec![
        key(3, "kind_of", KeyType::Utf8),
        key(4, "confidence", KeyType::Float32),
    ];
    let enc = KeyEncoder::new(vec![KeyType::Utf8, KeyType::Float32]).unwrap();
    let b = BoundElementPredicate::parse("label = 'car'", &fields).unwrap();
    let p = plan_any_element(&b, &keys, &enc, &PlanOptions::default()).unwrap();
    assert_eq!(p.answer, IndexAnswer::NotUsed);
    let b = BoundElementPredicate::parse("kind_of = 'car' AND label = 'x'", &fields).unwrap();
    let p = plan_any_element(&b, &keys, &enc, &PlanOptions::default()).unwrap();
    assert_eq!(p.answer, IndexAnswer::SupersetWithRecheck);
    assert_eq!(p.fixed_keys, ["kind_of"]);
}

#[test]
fn explain_names_the_decision_and_ranges() {
    let lines = plan("label = 'car' AND confidence > 0.9").explain();
    assert_eq!(lines[0], "list element index answers exactly");
    assert_eq!(lines[1], "keys used: label + range on confidence");
    assert!(
        lines[3].starts_with("  [02 63 61 72 00 00 00 00 00 03 01 BF 66 66 67"),
        "{}",
        lines[3]
    );
    let lines = plan("area = 1").explain();
    assert!(lines[0].starts_with("list element index not used: no conjunct fixes the first key"));
}
