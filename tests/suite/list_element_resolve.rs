//! Resolution of a list element index against the current schema, and every refusal rule
//! (spec: list-element-index.md, "Index Details").

use crate::index::list_element::{
    decode_details, resolve, FlatField, FlatSchema, KeyType, RefusalKind,
};
use crate::lance::proto::list_element::{
    ListElementIndexDetails, ListElementKeyEncoding, LIST_ELEMENT_DETAILS_TYPE_URL,
};
use prost::Message;
use prost_types::Any;

/// id(0) int64, det(1) list<struct<label(3) string, confidence(4) float, area(5) float,
/// box(6) struct<x(7) float>>> with element struct item(2), s(8) struct<label(9) string>.
fn schema() -> FlatSchema {
    FlatSchema {
        fields: vec![
            FlatField::new(0, -1, "id", "int64"),
            FlatField::new(1, -1, "det", "list.struct"),
            FlatField::new(2, 1, "item", "struct"),
            FlatField::new(3, 2, "label", "string"),
            FlatField::new(4, 2, "confidence", "float"),
            FlatField::new(5, 2, "area", "float"),
            FlatField::new(6, 2, "box", "struct"),
            FlatField::new(7, 6, "x", "float"),
            FlatField::new(8, -1, "s", "struct"),
            FlatField::new(9, 8, "label", "string"),
        ],
    }
}

fn details(ids: &[i32], names: &[&str], types: &[&str]) -> ListElementIndexDetails {
    ListElementIndexDetails {
        key_field_ids: ids.to_vec(),
        keys: names.iter().map(|s| s.to_string()).collect(),
        key_types: types.iter().map(|s| s.to_string()).collect(),
        key_encoding: ListElementKeyEncoding::ArrowRowV1 as i32,
        target_details: Some(Any {
            type_url: "/lance.table.BTreeIndexDetails".into(),
            value: vec![],
        }),
        target_index_version: 1,
    }
}

fn label_confidence() -> ListElementIndexDetails {
    details(&[3, 4], &["label", "confidence"], &["string", "float"])
}

fn refusal(
    d: &ListElementIndexDetails,
    fields: &[i32],
    version: i32,
    s: &FlatSchema,
) -> RefusalKind {
    let r = resolve(d, fields, version, s).expect_err("must be refused");
    assert!(!r.reason.is_empty());
    assert!(r.to_string().starts_with("list element index not used: "));
    r.kind
}

#[test]
fn resolves_keys_by_id_to_current_names() {
    let r = resolve(&label_confidence(), &[1], 0, &schema()).unwrap();
    assert_eq!(r.column_path, "det");
    assert!(!r.large_list);
    assert_eq!(r.element_id, 2);
    let names: Vec<_> = r.keys.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["label", "confidence"]);
    assert_eq!(r.keys[1].key_type, KeyType::Float32);
    let element_names: Vec<_> = r.element_fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(element_names, ["label", "confidence", "area", "box"]);
    // Nested children are listed but cannot be read as scalars.
    assert_eq!(r.element_fields[3].data_type, None);
    assert_eq!(r.key_position(4), Some(1));
    assert_eq!(r.key_position(5), None);
}

#[test]
fn details_round_trip_through_any() {
    // IndexMetadata.index_details is an Any whose type URL ends in ListElementIndexDetails.
    let any = Any {
        type_url: LIST_ELEMENT_DETAILS_TYPE_URL.into(),
        value: label_confidence().encode_to_vec(),
    };
    let decoded = decode_details(&any).unwrap();
    assert!(resolve(&decoded, &[1], 0, &schema()).is_ok());
}

#[test]
fn follows_a_rename_including_one_that_reuses_the_old_name() {
    // "the index follows a rename, including one that gives a key's old name to another
    // field", and "a reader must not use [keys] to find the key fields".
    let mut s = schema();
    s.fields[3].name = "kind".into();
    s.fields.push(FlatField::new(10, 2, "label", "string"));
    let r = resolve(&label_confidence(), &[1], 0, &s).unwrap();
    assert_eq!(r.keys[0].name, "kind");
    assert_eq!(r.keys[0].written_name, "label");
    assert_eq!(r.keys[0].field_id, 3);
    // The new "label" is an ordinary element field, not a key.
    let new_label = r.element_fields.iter().find(|f| f.name == "label").unwrap();
    assert_eq!(new_label.id, 10);
    assert_eq!(r.key_position(new_label.id), None);
}

#[test]
fn works_on_large_lists() {
    // "IndexMetadata.fields holds the single list<struct> field ..., which may be a List or
    // a LargeList of a Struct."
    let mut s = schema();
    s.fields[1].logical_type = "large_list.struct".into();
    assert!(
        resolve(&label_confidence(), &[1], 0, &s)
            .unwrap()
            .large_list
    );
}

#[test]
fn refuses_a_dropped_key_field() {
    // "The field must exist."
    let mut s = schema();
    s.fields.retain(|f| f.id != 4);
    assert_eq!(
        refusal(&label_confidence(), &[1], 0, &s),
        RefusalKind::KeyFieldMissing
    );
}

#[test]
fn refuses_a_key_that_is_not_a_direct_child_of_the_element_struct() {
    // "must be a direct child of the element struct of the column in IndexMetadata.fields"
    let s = schema();
    // A grandchild (box.x).
    let d = details(&[3, 7], &["label", "x"], &["string", "float"]);
    assert_eq!(
        refusal(&d, &[1], 0, &s),
        RefusalKind::KeyFieldNotDirectChild
    );
    // A field of another column with the same name.
    let d = details(&[9], &["label"], &["string"]);
    assert_eq!(
        refusal(&d, &[1], 0, &s),
        RefusalKind::KeyFieldNotDirectChild
    );
    // The element struct itself.
    let d = details(&[2], &["item"], &["string"]);
    assert_eq!(
        refusal(&d, &[1], 0, &s),
        RefusalKind::KeyFieldNotDirectChild
    );
    // A key moved out of the element struct.
    let mut moved = schema();
    moved.fields[4].parent_id = 8;
    assert_eq!(
        refusal(&label_confidence(), &[1], 0, &moved),
        RefusalKind::KeyFieldNotDirectChild
    );
}

#[test]
fn refuses_a_type_change() {
    // "must have the logical type recorded in key_types"
    let mut s = schema();
    s.fields[4].logical_type = "double".into();
    assert_eq!(
        refusal(&label_confidence(), &[1], 0, &s),
        RefusalKind::KeyFieldTypeChanged
    );
    let mut s = schema();
    s.fields[3].logical_type = "large_string".into();
    assert_eq!(
        refusal(&label_confidence(), &[1], 0, &s),
        RefusalKind::KeyFieldTypeChanged
    );
}

#[test]
fn refuses_unknown_or_unspecified_key_encoding() {
    // "A reader must not use an index whose key_encoding it does not know, including
    // LIST_ELEMENT_KEY_ENCODING_UNSPECIFIED."
    let mut d = label_confidence();
    d.key_encoding = ListElementKeyEncoding::Unspecified as i32;
    assert_eq!(
        refusal(&d, &[1], 0, &schema()),
        RefusalKind::UnknownKeyEncoding
    );
    d.key_encoding = 7;
    assert_eq!(
        refusal(&d, &[1], 0, &schema()),
        RefusalKind::UnknownKeyEncoding
    );
}

#[test]
fn refuses_malformed_details() {
    let s = schema();
    // "there is at least one key"
    assert_eq!(
        refusal(&details(&[], &[], &[]), &[1], 0, &s),
        RefusalKind::NoKeys
    );
    // "no ID appears twice"
    let d = details(&[3, 3], &["label", "label"], &["string", "string"]);
    assert_eq!(refusal(&d, &[1], 0, &s), RefusalKind::DuplicateKeyField);
    // keys / key_types are parallel to key_field_ids.
    let d = details(&[3, 4], &["label", "confidence"], &["string"]);
    assert_eq!(refusal(&d, &[1], 0, &s), RefusalKind::MismatchedLengths);
    let d = details(&[3, 4], &["label"], &["string", "float"]);
    assert_eq!(refusal(&d, &[1], 0, &s), RefusalKind::MismatchedLengths);
    // A key type outside the table, even if the field has it.
    let mut s2 = schema();
    s2.fields[4].logical_type = "halffloat".into();
    let d = details(&[3, 4], &["label", "confidence"], &["string", "halffloat"]);
    assert_eq!(refusal(&d, &[1], 0, &s2), RefusalKind::UnsupportedKeyType);
    // "target_index_version ... is 1 or greater"
    let mut d = label_confidence();
    d.target_index_version = 0;
    assert_eq!(refusal(&d, &[1], 0, &s), RefusalKind::BadTargetVersion);
    // "target_details holds the BTreeIndexDetails of the target index"
    let mut d = label_confidence();
    d.target_details = None;
    assert_eq!(refusal(&d, &[1], 0, &s), RefusalKind::BadTargetDetails);
}

#[test]
fn refuses_a_bad_indexed_field() {
    let s = schema();
    let d = label_confidence();
    // "IndexMetadata.index_version holds the version of the list element index itself,
    // which is 0."
    assert_eq!(refusal(&d, &[1], 1, &s), RefusalKind::UnknownIndexVersion);
    // "IndexMetadata.fields holds the single list<struct> field"
    assert_eq!(refusal(&d, &[1, 0], 0, &s), RefusalKind::IndexedFieldCount);
    assert_eq!(refusal(&d, &[], 0, &s), RefusalKind::IndexedFieldCount);
    assert_eq!(refusal(&d, &[42], 0, &s), RefusalKind::IndexedFieldMissing);
    assert_eq!(
        refusal(&d, &[0], 0, &s),
        RefusalKind::IndexedFieldNotListOfStruct
    );
    assert_eq!(
        refusal(&d, &[8], 0, &s),
        RefusalKind::IndexedFieldNotListOfStruct
    );
    // A list of int.
    let mut s2 = schema();
    s2.fields.push(FlatField::new(20, -1, "ints", "list"));
    s2.fields.push(FlatField::new(21, 20, "item", "int32"));
    assert_eq!(
        refusal(&d, &[20], 0, &s2),
        RefusalKind::IndexedFieldNotListOfStruct
    );
}
