use super::*;

fn fields() -> Vec<ElementField> {
    vec![
        ElementField::new(3, "label", "string"),
        ElementField::new(4, "confidence", "float"),
        ElementField::new(5, "area", "double"),
        ElementField::new(6, "n", "int8"),
        ElementField::new(7, "u", "uint16"),
        ElementField::new(8, "ok", "bool"),
        ElementField::new(9, "d", "date32:day"),
        ElementField::new(10, "ts", "timestamp:us:UTC"),
        ElementField::new(11, "tz8", "timestamp:s:+08:00"),
        ElementField::new(12, "blob", "binary"),
        ElementField::new(13, "box", "struct"),
        ElementField::new(14, "ny", "timestamp:s:America/New_York"),
    ]
}

fn bind(text: &str) -> Result<BoundPredicate> {
    BoundPredicate::parse(text, &fields())
}

fn pred(text: &str) -> SqlPredicate {
    bind(text).unwrap().predicate
}

fn cmp(field: usize, op: CompareOp, value: ElementValue) -> SqlPredicate {
    SqlPredicate::Compare {
        field,
        op,
        value: Some(value),
    }
}

#[test]
fn fields_are_found_by_current_name_in_first_use_order() {
    let b = bind("confidence > 0.5 AND label = 'car' AND confidence < 0.9").unwrap();
    let names: Vec<_> = b.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["confidence", "label"]);
    assert_eq!(b.fields[0].id, 4);
    assert_eq!(b.fields[0].data_type, DataType::Float32);
}

#[test]
fn unknown_and_nested_fields_are_errors() {
    assert!(
        matches!(bind("colour = 'red'"), Err(Error::InvalidArgument(m)) if m.contains("colour"))
    );
    assert!(matches!(
        bind("box IS NULL"),
        Err(Error::Unsupported { .. })
    ));
    assert!(matches!(bind("label"), Err(Error::InvalidArgument(_))));
    assert!(matches!(bind("1 = 1"), Err(Error::InvalidArgument(_))));
    assert!(matches!(
        bind("label < confidence"),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(bind("'car'"), Err(Error::InvalidArgument(_))));
}

#[test]
fn literals_are_typed_like_top_level_filters() {
    use ElementValue as V;
    assert_eq!(
        pred("label = 'car'"),
        cmp(0, CompareOp::Eq, V::Bytes(b"car".to_vec()))
    );
    // Float literals round to the field's width.
    assert_eq!(
        pred("confidence > 0.9"),
        cmp(0, CompareOp::Gt, V::Float32(0.9f32))
    );
    assert_eq!(pred("area > 0.9"), cmp(0, CompareOp::Gt, V::Float(0.9)));
    assert_eq!(pred("n >= -128"), cmp(0, CompareOp::GtEq, V::Int(-128)));
    assert_eq!(pred("u = 65535"), cmp(0, CompareOp::Eq, V::UInt(65535)));
    // Literal on the left: the operator is swapped.
    assert_eq!(pred("5 < n"), cmp(0, CompareOp::Gt, V::Int(5)));
    assert_eq!(pred("ok = true"), cmp(0, CompareOp::Eq, V::Bool(true)));
    assert_eq!(
        pred("blob = X'00FF'"),
        cmp(0, CompareOp::Eq, V::Bytes(vec![0, 255]))
    );
    assert_eq!(
        pred("d = DATE '1970-01-03'"),
        cmp(0, CompareOp::Eq, V::Int(2))
    );
    assert_eq!(
        pred("ts < TIMESTAMP '1970-01-01 00:00:01.5'"),
        cmp(0, CompareOp::Lt, V::Int(1_500_000))
    );
    assert_eq!(
        pred("ts >= DATE '1970-01-02'"),
        cmp(0, CompareOp::GtEq, V::Int(86_400_000_000))
    );
    // A naive timestamp is local time in the field's fixed-offset zone.
    assert_eq!(
        pred("tz8 = TIMESTAMP '1970-01-01 08:00:00'"),
        cmp(0, CompareOp::Eq, V::Int(0))
    );
    // Named zones too: 2024-01-01 00:00 in New York (EST) is 05:00 UTC.
    assert_eq!(
        pred("ny = TIMESTAMP '2024-01-01 00:00:00'"),
        cmp(0, CompareOp::Eq, V::Int(1_704_085_200))
    );
    assert!(matches!(
        pred("confidence = CAST('NaN' AS FLOAT)"),
        SqlPredicate::Compare { value: Some(V::Float32(v)), .. } if v.is_nan()
    ));
    // Mismatches are errors, as in lance: out of range, decimal for an integer field,
    // number for a string, string for a date.
    for bad in [
        "n = 200",
        "u = -1",
        "n = 1.5",
        "label = 5",
        "d = '2024-01-01'",
        "ok = 1",
        "blob = 'x'",
        "d = TIMESTAMP '2024-01-01 00:00:00'",
        "ts = 'x'",
    ] {
        assert!(matches!(bind(bad), Err(Error::InvalidArgument(_))), "{bad}");
    }
}

#[test]
fn float_zero_comparisons_match_both_zeros() {
    use ElementValue as V;
    let both = vec![V::Float32(-0.0), V::Float32(0.0)];
    assert_eq!(
        pred("confidence = 0"),
        SqlPredicate::InList {
            field: 0,
            values: both.clone(),
            has_null: false,
            negated: false
        }
    );
    assert_eq!(
        pred("confidence != -0.0"),
        SqlPredicate::InList {
            field: 0,
            values: both.clone(),
            has_null: false,
            negated: true
        }
    );
    let SqlPredicate::Compare {
        value: Some(V::Float32(z)),
        ..
    } = pred("confidence < 0")
    else {
        panic!()
    };
    assert!(z.is_sign_negative());
    let SqlPredicate::Compare {
        value: Some(V::Float32(z)),
        ..
    } = pred("confidence > -0.0")
    else {
        panic!()
    };
    assert!(z.is_sign_positive());
    assert_eq!(
        pred("confidence IN (0.0, 1.0, NULL, 1.0)"),
        SqlPredicate::InList {
            field: 0,
            values: vec![V::Float32(-0.0), V::Float32(0.0), V::Float32(1.0)],
            has_null: true,
            negated: false
        }
    );
}

#[test]
fn between_null_and_truth_forms() {
    use ElementValue as V;
    assert_eq!(
        pred("n BETWEEN 1 AND 3"),
        SqlPredicate::And(vec![
            cmp(0, CompareOp::GtEq, V::Int(1)),
            cmp(0, CompareOp::LtEq, V::Int(3))
        ])
    );
    assert!(matches!(
        pred("n NOT BETWEEN 1 AND 3"),
        SqlPredicate::Not(_)
    ));
    assert_eq!(
        pred("n = NULL"),
        SqlPredicate::Compare {
            field: 0,
            op: CompareOp::Eq,
            value: None
        }
    );
    assert_eq!(
        pred("n IS NOT NULL"),
        SqlPredicate::IsNull {
            field: 0,
            negated: true
        }
    );
    assert!(matches!(
        pred("(n > 1) IS NULL"),
        SqlPredicate::IsTruth {
            truth: Truth::Unknown,
            negated: false,
            ..
        }
    ));
    assert_eq!(pred("NULL IS NULL"), SqlPredicate::Constant(Some(true)));
    assert_eq!(pred("ok"), SqlPredicate::BoolField(0));
    assert_eq!(
        pred("label IS NOT DISTINCT FROM NULL"),
        SqlPredicate::DistinctFrom {
            field: 0,
            value: None,
            negated: true
        }
    );
    assert_eq!(
        pred("confidence IS DISTINCT FROM area"),
        SqlPredicate::DistinctFields {
            left: 0,
            right: 1,
            negated: false
        }
    );
    assert!(
        matches!(pred("lower(label) = 'car'"), SqlPredicate::Opaque(t) if t == "lower(label) = 'car'")
    );
}

#[test]
fn describe_round_trips_the_meaning() {
    let b =
        bind("label IN ('car', NULL) AND NOT (confidence <= 0.5) AND (ok) IS NOT TRUE").unwrap();
    assert_eq!(
        b.describe(&b.predicate),
        "(label IN ('car', NULL)) AND (NOT (confidence <= 0.5)) AND ((ok) IS NOT TRUE)"
    );
}

#[test]
fn element_predicates_refuse_nested_paths_and_list_calls() {
    for bad in [
        "a.b = 1",
        "array_has_any(label, ['x'])",
        "any_element(label, 'x = 1')",
    ] {
        assert!(matches!(bind(bad), Err(Error::InvalidArgument(_))), "{bad}");
    }
}
