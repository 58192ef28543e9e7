use super::*;
use crate::index::predicate::BoundFilter;
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

fn bind(text: &str) -> Result<Predicate> {
    BoundFilter::parse(text, &schema()).map(|b| b.predicate)
}

fn leaf_of(p: Predicate) -> LeafQuery {
    match p {
        Predicate::Leaf(l) => l.query,
        other => panic!("not a leaf: {other:?}"),
    }
}

#[test]
fn coerces_literals_like_lance() {
    assert_eq!(
        leaf_of(bind("i = 7").unwrap()),
        LeafQuery::Equals(Key::Int(7))
    );
    assert_eq!(
        leaf_of(bind("u >= 4000000000").unwrap()),
        LeafQuery::Range {
            lower: Bound::Included(Key::UInt(4_000_000_000)),
            upper: Bound::Unbounded
        }
    );
    assert_eq!(
        leaf_of(bind("10 > i").unwrap()),
        LeafQuery::Range {
            lower: Bound::Unbounded,
            upper: Bound::Excluded(Key::Int(10))
        }
    );
    assert_eq!(
        leaf_of(bind("f32 > 0.1").unwrap()),
        LeafQuery::Range {
            lower: Bound::Excluded(Key::Float(0.1f32 as f64)),
            upper: Bound::Unbounded
        }
    );
    assert_eq!(
        leaf_of(bind("f = 3").unwrap()),
        LeafQuery::Equals(Key::Float(3.0))
    );
    assert_eq!(
        leaf_of(bind("d = DATE '1970-01-02'").unwrap()),
        LeafQuery::Equals(Key::Int(1))
    );
    assert_eq!(
        leaf_of(bind("ts = TIMESTAMP '1970-01-01 00:00:01.5'").unwrap()),
        LeafQuery::Equals(Key::Int(1_500_000))
    );
    assert_eq!(
        leaf_of(bind("ts = DATE '1970-01-02'").unwrap()),
        LeafQuery::Equals(Key::Int(86_400_000_000))
    );
    // Truncated to seconds.
    assert_eq!(
        leaf_of(bind("tss = TIMESTAMP '1970-01-01 00:00:01.5'").unwrap()),
        LeafQuery::Equals(Key::Int(1))
    );
    // Naive literal read as local +08:00 time; an explicit offset is normalised to UTC first.
    assert_eq!(
        leaf_of(bind("p8 = TIMESTAMP '1970-01-01 09:00:00'").unwrap()),
        LeafQuery::Equals(Key::Int(3_600_000))
    );
    assert_eq!(
        leaf_of(bind("p8 = TIMESTAMP '1970-01-01 09:00:00+08:00'").unwrap()),
        LeafQuery::Equals(Key::Int(-8 * 3_600_000 + 3_600_000))
    );
    assert_eq!(
        leaf_of(bind("b = X'00ff'").unwrap()),
        LeafQuery::Equals(Key::Bytes(Bytes::from_static(&[0, 255])))
    );
    assert_eq!(
        leaf_of(bind("bl").unwrap()),
        LeafQuery::Equals(Key::Bool(true))
    );
    assert_eq!(leaf_of(bind("i = NULL").unwrap()), LeafQuery::AlwaysNull);
    assert_eq!(
        leaf_of(bind("i IN (3, NULL, 1, 3)").unwrap()),
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
    assert_eq!(leaf_of(bind("f = 0").unwrap()), both);
    assert_eq!(leaf_of(bind("f = -0.0").unwrap()), both);
    assert_eq!(leaf_of(bind("f IN (0.0)").unwrap()), both);
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
    assert_eq!(bits(leaf_of(bind("f < 0").unwrap())), (None, neg));
    assert_eq!(bits(leaf_of(bind("f >= 0.0").unwrap())), (neg, None));
    assert_eq!(bits(leaf_of(bind("f <= -0.0").unwrap())), (None, pos));
    assert_eq!(bits(leaf_of(bind("f > -0.0").unwrap())), (pos, None));
    assert_eq!(
        bits(leaf_of(bind("f BETWEEN 0.0 AND -0.0").unwrap())),
        (neg, pos)
    );
    assert!(matches!(bind("f != 0.0").unwrap(), Predicate::Not(_)));
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
fn evaluates_with_three_valued_logic() {
    use crate::index::key::KeyRef;
    let p = bind("NOT (i IN (1, NULL))").unwrap();
    let v = |x: Option<i64>| move |_c: usize| x.map(KeyRef::Int);
    assert_eq!(p.eval(&v(Some(1))), Some(false));
    assert_eq!(p.eval(&v(Some(2))), None);
    assert_eq!(p.eval(&v(None)), None);
    let p = bind("i IS NULL OR i > 5").unwrap();
    assert_eq!(p.eval(&v(None)), Some(true));
    assert_eq!(p.eval(&v(Some(3))), Some(false));
    let p = bind("bl IS NOT TRUE").unwrap();
    let b = |x: Option<bool>| move |_c: usize| x.map(KeyRef::Bool);
    assert_eq!(p.eval(&b(None)), Some(true));
    assert_eq!(p.eval(&b(Some(true))), Some(false));
    let p = bind("i BETWEEN NULL AND 5").unwrap();
    assert_eq!(p.eval(&v(Some(9))), Some(false));
    assert_eq!(p.eval(&v(Some(1))), None);
}
