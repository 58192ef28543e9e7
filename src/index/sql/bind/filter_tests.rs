//! Top-level filters through the one binder: literal typing as lance 14 does it, and the
//! index searches derived from them (the tests of the former `predicate::bind`).

use std::ops::Bound;

use super::*;
use crate::index::engine::tree::{index_query, shape};
use crate::index::key::Key;
use crate::index::predicate::{LeafQuery, Predicate};
use crate::lance::proto::table as pb;

fn schema() -> Schema {
    let f = |name: &str, id: i32, t: &str| pb::Field {
        name: name.into(),
        id,
        parent_id: -1,
        logical_type: t.into(),
        nullable: true,
        ..Default::default()
    };
    Schema::from_proto(&[
        f("i", 0, "int64"),
        f("i8", 1, "int8"),
        f("u", 2, "uint32"),
        f("f", 3, "double"),
        f("f32", 4, "float"),
        f("s", 5, "string"),
        f("b", 6, "binary"),
        f("d", 7, "date32:day"),
        f("ts", 8, "timestamp:us:-"),
        f("tss", 9, "timestamp:s:-"),
        f("p8", 10, "timestamp:ms:+08:00"),
        f("ny", 11, "timestamp:us:America/New_York"),
        f("bl", 12, "bool"),
        f("l", 13, "list"),
        pb::Field {
            name: "item".into(),
            id: 14,
            parent_id: 13,
            logical_type: "int32".into(),
            ..Default::default()
        },
    ])
    .unwrap()
}

fn bind(text: &str) -> Result<BoundPredicate> {
    BoundPredicate::parse_filter(text, &schema())
}

/// The index search of a one-column filter.
fn search(text: &str) -> Predicate {
    let bound = bind(text).unwrap();
    let s = shape(&bound.predicate);
    assert_eq!(s.leaves.len(), 1, "{text}");
    index_query(&s.leaves[0].predicate).unwrap()
}

fn leaf_of(p: Predicate) -> LeafQuery {
    match p {
        Predicate::Leaf(l) => l.query,
        other => panic!("not a leaf: {other:?}"),
    }
}

fn leaf(text: &str) -> LeafQuery {
    leaf_of(search(text))
}

#[test]
fn coerces_literals_like_lance() {
    assert_eq!(leaf("i = 7"), LeafQuery::Equals(Key::Int(7)));
    assert_eq!(
        leaf("u >= 4000000000"),
        LeafQuery::Range {
            lower: Bound::Included(Key::UInt(4_000_000_000)),
            upper: Bound::Unbounded
        }
    );
    assert_eq!(
        leaf("10 > i"),
        LeafQuery::Range {
            lower: Bound::Unbounded,
            upper: Bound::Excluded(Key::Int(10))
        }
    );
    assert_eq!(
        leaf("f32 > 0.1"),
        LeafQuery::Range {
            lower: Bound::Excluded(Key::Float(0.1f32 as f64)),
            upper: Bound::Unbounded
        }
    );
    assert_eq!(leaf("f = 3"), LeafQuery::Equals(Key::Float(3.0)));
    assert_eq!(
        leaf("d = DATE '1970-01-02'"),
        LeafQuery::Equals(Key::Int(1))
    );
    assert_eq!(
        leaf("ts = TIMESTAMP '1970-01-01 00:00:01.5'"),
        LeafQuery::Equals(Key::Int(1_500_000))
    );
    assert_eq!(
        leaf("ts = DATE '1970-01-02'"),
        LeafQuery::Equals(Key::Int(86_400_000_000))
    );
    assert_eq!(
        leaf("tss = TIMESTAMP '1970-01-01 00:00:01.5'"),
        LeafQuery::Equals(Key::Int(1))
    );
    assert_eq!(
        leaf("p8 = TIMESTAMP '1970-01-01 09:00:00'"),
        LeafQuery::Equals(Key::Int(3_600_000))
    );
    assert_eq!(
        leaf("p8 = TIMESTAMP '1970-01-01 09:00:00+08:00'"),
        LeafQuery::Equals(Key::Int(-8 * 3_600_000 + 3_600_000))
    );
    assert_eq!(
        leaf("b = X'00ff'"),
        LeafQuery::Equals(Key::Bytes(vec![0, 255]))
    );
    assert_eq!(leaf("bl"), LeafQuery::Equals(Key::Bool(true)));
    assert_eq!(leaf("i = NULL"), LeafQuery::AlwaysNull);
    assert_eq!(
        leaf("i IN (3, NULL, 1, 3)"),
        LeafQuery::In {
            values: vec![Key::Int(1), Key::Int(3)],
            has_null: true
        }
    );
}

#[test]
fn rewrites_signed_zero_comparisons() {
    let both = LeafQuery::In {
        values: vec![Key::Float(-0.0), Key::Float(0.0)],
        has_null: false,
    };
    assert_eq!(leaf("f = 0"), both);
    assert_eq!(leaf("f = -0.0"), both);
    assert_eq!(leaf("f IN (0.0)"), both);
    let bits = |q: LeafQuery| match q {
        LeafQuery::Range { lower, upper } => {
            let b = |x: Bound<Key>| match x {
                Bound::Included(Key::Float(v)) | Bound::Excluded(Key::Float(v)) => {
                    Some(v.to_bits())
                }
                _ => None,
            };
            (b(lower), b(upper))
        }
        _ => panic!(),
    };
    let neg = Some((-0.0f64).to_bits());
    let pos = Some(0.0f64.to_bits());
    assert_eq!(bits(leaf("f < 0")), (None, neg));
    assert_eq!(bits(leaf("f >= 0.0")), (neg, None));
    assert_eq!(bits(leaf("f <= -0.0")), (None, pos));
    assert_eq!(bits(leaf("f > -0.0")), (pos, None));
    assert_eq!(bits(leaf("f BETWEEN 0.0 AND -0.0")), (neg, pos));
    assert!(matches!(search("f != 0.0"), Predicate::Not(_)));
}

#[test]
fn refuses_wrong_types_like_lance() {
    for bad in [
        "i = 7.5",
        "i = '7'",
        "i8 = 200",
        "i8 < 300",
        "u = -1",
        "s = 5",
        "b = 'ab'",
        "bl = 1",
        "d = '2024-01-05'",
        "ts = '2024-01-01 00:00:00'",
        "d = TIMESTAMP '2024-01-01 00:00:00'",
        "nope = 1",
        "l = 1",
        "i = j",
        "1 = 1",
        "s",
        "ts = TIMESTAMP 'yesterday'",
        "i = ",
        "i = 1 garbage",
        "upper(s) = 'A'",
        "i + 1 = 2",
        "i LIKE 'a%'",
        "contains(s, 1)",
        "upper(s) LIKE 'a%'",
        "i = j + 1",
        "X'0'= b",
        "",
    ] {
        assert!(
            matches!(bind(bad), Err(Error::InvalidArgument(_))),
            "{bad}: {:?}",
            bind(bad)
        );
    }
    // Named zones resolve (chrono-tz); a wall-clock time the zone skips is refused, as
    // pylance refuses it.
    assert!(bind("ny = TIMESTAMP '2024-01-01 00:00:00'").is_ok());
    assert!(matches!(
        bind("ny = TIMESTAMP '2024-03-10 02:30:00'"),
        Err(Error::InvalidArgument(_))
    ));
    assert!(bind("l.item = 1").is_err());
}

#[test]
fn a_nested_column_is_tested_for_null_as_a_whole_and_nothing_else() {
    for text in ["l IS NULL", "l IS NOT NULL", "NOT (l IS NULL) AND i < 3"] {
        let bound = bind(text).unwrap();
        let l = bound.fields.iter().find(|f| f.name == "l").unwrap();
        assert!(matches!(l.data_type, DataType::List(_)), "{text}: {l:?}");
    }
    assert!(matches!(
        bind("l IS NULL").unwrap().predicate,
        SqlPredicate::IsNull { negated: false, .. }
    ));
    // Comparisons, IN and BETWEEN still need a scalar column.
    for bad in [
        "l = 1",
        "l IN (1, 2)",
        "l BETWEEN 1 AND 2",
        "l > 0 OR l IS NULL",
    ] {
        assert!(matches!(bind(bad), Err(Error::InvalidArgument(_))), "{bad}");
    }
}

#[test]
fn evaluates_with_three_valued_logic() {
    use crate::index::sql::eval::eval_predicate;
    use crate::index::sql::value::ElementValue as V;
    let truth = |text: &str, v: Option<V>| eval_predicate(&bind(text).unwrap().predicate, &[v]);
    assert_eq!(truth("NOT (i IN (1, NULL))", Some(V::Int(1))), Some(false));
    assert_eq!(truth("NOT (i IN (1, NULL))", Some(V::Int(2))), None);
    assert_eq!(truth("NOT (i IN (1, NULL))", None), None);
    assert_eq!(truth("i IS NULL OR i > 5", None), Some(true));
    assert_eq!(truth("i IS NULL OR i > 5", Some(V::Int(3))), Some(false));
    assert_eq!(truth("bl IS NOT TRUE", None), Some(true));
    assert_eq!(truth("bl IS NOT TRUE", Some(V::Bool(true))), Some(false));
    assert_eq!(truth("i BETWEEN NULL AND 5", Some(V::Int(9))), Some(false));
    assert_eq!(truth("i BETWEEN NULL AND 5", Some(V::Int(1))), None);
}

#[test]
fn binds_calls_and_columns_anywhere_in_the_tree() {
    let b = bind("NOT (i = 1 OR s = 'x') AND bl IS NOT NULL").unwrap();
    assert_eq!(b.fields.len(), 3);
    assert!(matches!(
        bind("array_has_any(l, [1, 2]) OR i = 3").unwrap().predicate,
        SqlPredicate::Or(_)
    ));
    assert!(matches!(
        bind("array_has_any(l, ['x'])"),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn binds_string_tests_on_string_columns() {
    for (text, shown) in [
        ("s LIKE 'a%'", "s LIKE 'a%'"),
        ("s ILIKE 'A\\%'", "s ILIKE 'A\\%'"),
        ("contains(s, 'it''s')", "contains(s, 'it''s')"),
        ("STARTS_WITH(s, 'x')", "starts_with(s, 'x')"),
        ("s NOT LIKE 'a_' ESCAPE '\\'", "NOT (s LIKE 'a_')"),
    ] {
        let b = bind(text).unwrap();
        assert_eq!(b.describe(&b.predicate), shown, "{text}");
    }
    assert_eq!(
        bind("contains(s, NULL)").unwrap().predicate,
        SqlPredicate::Constant(None)
    );
}
