//! Three-valued any_element semantics (spec: "Accelerated Queries", first paragraph).

use std::sync::Arc;

use arrow_array::builder::{Float32Builder, ListBuilder, StringBuilder, StructBuilder};
use arrow_array::{ArrayRef, LargeListArray, ListArray, StringViewArray, StructArray};
use arrow_schema::{Field, Fields};

use super::*;
use crate::index::sql::bind::ElementField;

fn element_fields() -> Vec<ElementField> {
    vec![
        ElementField::new(3, "label", "string"),
        ElementField::new(4, "confidence", "float"),
        ElementField::new(5, "area", "float"),
    ]
}

type Element = Option<(Option<&'static str>, Option<f32>, f32)>;

/// Rows of list<struct<label, confidence, area>>; `None` row = null list, `None`
/// element = null element (its child slots hold junk that must be ignored).
fn lists(rows: &[Option<Vec<Element>>]) -> ListArray {
    let fields = Fields::from(vec![
        Field::new("label", DataType::Utf8, true),
        Field::new("confidence", DataType::Float32, true),
        Field::new("area", DataType::Float32, true),
    ]);
    let mut b = ListBuilder::new(StructBuilder::from_fields(fields, 0));
    for row in rows {
        match row {
            None => b.append(false),
            Some(elements) => {
                for e in elements {
                    let s = b.values();
                    let (label, conf, area) = e.unwrap_or((Some("car"), Some(0.99), 0.0));
                    s.field_builder::<StringBuilder>(0)
                        .unwrap()
                        .append_option(label);
                    s.field_builder::<Float32Builder>(1)
                        .unwrap()
                        .append_option(conf);
                    s.field_builder::<Float32Builder>(2)
                        .unwrap()
                        .append_value(area);
                    s.append(e.is_some());
                }
                b.append(true);
            }
        }
    }
    b.finish()
}

fn detections() -> ListArray {
    lists(&[
        Some(vec![
            Some((Some("car"), Some(0.95), 120.0)),
            Some((Some("person"), Some(0.30), 80.0)),
        ]),
        None,
        Some(vec![]),
        Some(vec![None]),
        Some(vec![Some((None, Some(0.95), 1.0))]),
        Some(vec![
            Some((Some("car"), None, 2.0)),
            Some((Some("dog"), Some(0.1), 3.0)),
        ]),
        Some(vec![Some((Some("car"), Some(0.5), 4.0)), None]),
    ])
}

fn eval(list: &dyn Array, text: &str) -> Vec<Option<bool>> {
    let bound = BoundElementPredicate::parse(text, &element_fields()).unwrap();
    evaluate_any_element(list, &bound).unwrap().iter().collect()
}

const T: Option<bool> = Some(true);
const F: Option<bool> = Some(false);
const N: Option<bool> = None;

#[test]
fn true_null_false_per_row() {
    let d = detections();
    // Row 0: one element matches both conjuncts (TRUE). Row 1: null list (NULL). Row 2:
    // empty list (FALSE). Row 3: null element (UNKNOWN on every field). Row 4: null label
    // with a matching confidence (UNKNOWN). Row 5: car with a null confidence (UNKNOWN).
    // Row 6: a FALSE element and a null element (NULL).
    assert_eq!(
        eval(&d, "label = 'car' AND confidence > 0.9"),
        [T, N, F, N, N, N, N]
    );
    assert_eq!(eval(&d, "label = 'car'"), [T, N, F, N, N, T, T]);
    // A null element's fields are null, so IS NULL is TRUE on it.
    assert_eq!(eval(&d, "label IS NULL"), [F, N, F, T, T, F, T]);
    assert_eq!(
        eval(&d, "label IS NOT DISTINCT FROM NULL"),
        [F, N, F, T, T, F, T]
    );
    assert_eq!(eval(&d, "label IS NOT NULL"), [T, N, F, F, F, T, T]);
    // "label IN ('car', NULL) is UNKNOWN for dog"
    assert_eq!(eval(&d, "label IN ('car', NULL)"), [T, N, F, N, N, T, T]);
    assert_eq!(
        eval(&d, "label IN ('dog', 'person')"),
        [T, N, F, N, N, T, N]
    );
    assert_eq!(eval(&d, "label NOT IN ('car')"), [T, N, F, N, N, T, N]);
    assert_eq!(
        eval(&d, "(confidence > 0.9) IS UNKNOWN"),
        [F, N, F, T, F, T, T]
    );
    assert_eq!(
        eval(&d, "(label = 'car' AND confidence > 0.9) IS NOT TRUE"),
        [T, N, F, T, T, T, T]
    );
    assert_eq!(eval(&d, "(label = 'car') IS FALSE"), [T, N, F, F, F, T, F]);
    assert_eq!(
        eval(&d, "label = 'car' OR area > 100"),
        [T, N, F, N, N, T, T]
    );
    assert_eq!(eval(&d, "NOT (label = 'car')"), [T, N, F, N, N, T, N]);
    assert_eq!(
        eval(&d, "confidence BETWEEN 0.3 AND 0.5"),
        [T, N, F, N, F, N, T]
    );
    assert_eq!(
        eval(&d, "label IS DISTINCT FROM 'car'"),
        [T, N, F, T, T, T, T]
    );
    assert_eq!(eval(&d, "confidence < area"), [T, N, F, N, T, T, T]);
    assert_eq!(eval(&d, "label = NULL"), [N, N, F, N, N, N, N]);
    assert_eq!(eval(&d, "TRUE"), [T, N, F, T, T, T, T]);
}

#[test]
fn large_lists_and_slices_agree() {
    let d = detections();
    let large = arrow_cast::cast(
        &d,
        &DataType::LargeList(Arc::new(Field::new(
            "item",
            d.values().data_type().clone(),
            true,
        ))),
    )
    .unwrap();
    assert!(large.as_any().downcast_ref::<LargeListArray>().is_some());
    assert_eq!(eval(large.as_ref(), "label = 'car'"), [T, N, F, N, N, T, T]);
    let sliced = d.slice(3, 3);
    assert_eq!(eval(&sliced, "label = 'car'"), [N, N, T]);
}

#[test]
fn view_children_evaluate_like_plain_strings() {
    let labels: ArrayRef = Arc::new(StringViewArray::from(vec![
        Some("car"),
        None,
        Some("a long label, more than 12 bytes"),
    ]));
    let conf: ArrayRef = Arc::new(arrow_array::Float32Array::from(vec![1.0, 2.0, 3.0]));
    let elements = StructArray::from(vec![
        (
            Arc::new(Field::new("label", DataType::Utf8View, true)),
            labels,
        ),
        (
            Arc::new(Field::new("confidence", DataType::Float32, true)),
            conf,
        ),
    ]);
    let offsets = arrow_buffer::OffsetBuffer::new(vec![0i32, 2, 3].into());
    let field = Arc::new(Field::new("item", elements.data_type().clone(), true));
    let list = ListArray::new(field, offsets, Arc::new(elements), None);
    assert_eq!(eval(&list, "label = 'car'"), [T, F]);
    // Row 0's second element has a null label: UNKNOWN, so the row is NULL.
    assert_eq!(
        eval(&list, "label = 'a long label, more than 12 bytes'"),
        [N, T]
    );
}

#[test]
fn refusals() {
    let d = detections();
    let bound = BoundElementPredicate::parse("lower(label) = 'car'", &element_fields()).unwrap();
    assert!(matches!(
        evaluate_any_element(&d, &bound),
        Err(Error::Unsupported { .. })
    ));
    let other = vec![ElementField::new(9, "speed", "double")];
    let bound = BoundElementPredicate::parse("speed > 1", &other).unwrap();
    assert!(matches!(
        evaluate_any_element(&d, &bound),
        Err(Error::InvalidArgument(_))
    ));
    let wrong_type = vec![ElementField::new(3, "label", "int32")];
    let bound = BoundElementPredicate::parse("label = 1", &wrong_type).unwrap();
    assert!(matches!(
        evaluate_any_element(&d, &bound),
        Err(Error::InvalidArgument(_))
    ));
    let bound = BoundElementPredicate::parse("TRUE", &element_fields()).unwrap();
    let not_a_list = arrow_array::Int32Array::from(vec![1]);
    assert!(evaluate_any_element(&not_a_list, &bound).is_err());
}
