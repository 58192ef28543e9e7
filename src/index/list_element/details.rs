//! Decoding and checking `ListElementIndexDetails` (spec: "Index Details"), and the
//! [`Refusal`] a reader reports when it must not use an index.

use prost::Message;
use prost_types::Any;

use crate::lance::proto::list_element::{
    ListElementIndexDetails, ListElementKeyEncoding, LIST_ELEMENT_DETAILS_NAME,
};

use super::key_encoding::KeyType;

/// Which rule made a reader refuse a list element index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum RefusalKind {
    /// `index_details` is not a `ListElementIndexDetails`.
    NotListElementDetails,
    /// `index_details` does not decode.
    UndecodableDetails,
    /// `IndexMetadata.index_version` is not 0 (the only list element index version).
    UnknownIndexVersion,
    /// `key_field_ids` is empty ("There is at least one").
    NoKeys,
    /// `keys` or `key_types` is not parallel to `key_field_ids`.
    MismatchedLengths,
    /// An id appears twice in `key_field_ids`.
    DuplicateKeyField,
    /// `key_encoding` is UNSPECIFIED or a value this reader does not know.
    UnknownKeyEncoding,
    /// A `key_types` entry is not in the spec's key type table.
    UnsupportedKeyType,
    /// `target_details` is missing or is not a `BTreeIndexDetails`.
    BadTargetDetails,
    /// `target_index_version` is 0 ("It is 1 or greater") or newer than lakeseek knows.
    BadTargetVersion,
    /// `IndexMetadata.fields` is not exactly one field.
    IndexedFieldCount,
    /// The indexed field no longer exists.
    IndexedFieldMissing,
    /// The indexed field is not a List or LargeList of a Struct.
    IndexedFieldNotListOfStruct,
    /// A key field id no longer exists (dropped).
    KeyFieldMissing,
    /// A key field is not a direct child of the element struct (moved).
    KeyFieldNotDirectChild,
    /// A key field no longer has the type recorded in `key_types`.
    KeyFieldTypeChanged,
    /// Segments of one logical index disagree on keys, key types or encoding.
    SegmentsDisagree,
    /// A segment does not record which fragments it covers.
    NoCoverage,
    /// A segment's files live under another base path, which lakeseek does not read.
    UnsupportedLocation,
}

/// Why a list element index is not used; the reader evaluates the call on the data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// The rule.
    pub kind: RefusalKind,
    /// A sentence for `--explain`.
    pub reason: String,
}

impl Refusal {
    /// A refusal of `kind` with a reason.
    pub(crate) fn new(kind: RefusalKind, reason: impl Into<String>) -> Self {
        Refusal {
            kind,
            reason: reason.into(),
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "list element index not used: {}", self.reason)
    }
}

/// The highest target BTree version lakeseek reads (lance 14's BTree plugin version).
pub(crate) const MAX_TARGET_INDEX_VERSION: u32 = 1;

/// The last name of a type URL (after the last `/` and the last `.`), lowercased.
fn type_url_name(type_url: &str) -> String {
    let after_slash = type_url.rsplit('/').next().unwrap_or(type_url);
    after_slash
        .rsplit('.')
        .next()
        .unwrap_or(after_slash)
        .to_ascii_lowercase()
}

/// Whether an `index_details` type URL names `ListElementIndexDetails` (any package;
/// compared case-insensitively like lance compares type URLs).
pub(crate) fn is_list_element_type_url(type_url: &str) -> bool {
    type_url_name(type_url) == LIST_ELEMENT_DETAILS_NAME.to_ascii_lowercase()
}

/// Whether a type URL names a BTree's details (`lance.table.BTreeIndexDetails` or the
/// older `lance.index.pb.BTreeIndexDetails`).
pub(crate) fn is_btree_type_url(type_url: &str) -> bool {
    type_url_name(type_url) == "btreeindexdetails"
}

/// Decode `IndexMetadata.index_details` of a list element index.
pub(crate) fn decode_details(index_details: &Any) -> Result<ListElementIndexDetails, Refusal> {
    if !is_list_element_type_url(&index_details.type_url) {
        return Err(Refusal::new(
            RefusalKind::NotListElementDetails,
            format!(
                "index_details has type {:?}, not ListElementIndexDetails",
                index_details.type_url
            ),
        ));
    }
    ListElementIndexDetails::decode(index_details.value.as_slice()).map_err(|e| {
        Refusal::new(
            RefusalKind::UndecodableDetails,
            format!("ListElementIndexDetails does not decode: {e}"),
        )
    })
}

/// The checks that need only the details message: at least one key, parallel lists, no
/// duplicate id, a known key encoding, key types from the spec's table, a BTree target of
/// version 1 or greater (and at most [`MAX_TARGET_INDEX_VERSION`]). Returns the key types.
pub(crate) fn check_details(details: &ListElementIndexDetails) -> Result<Vec<KeyType>, Refusal> {
    check_key_lists(details)?;
    check_key_encoding(details.key_encoding)?;
    let key_types = parse_key_types(&details.key_types)?;
    check_target(details)?;
    Ok(key_types)
}

/// At least one key, `key_field_ids`, `keys` and `key_types` parallel, no id twice.
fn check_key_lists(details: &ListElementIndexDetails) -> Result<(), Refusal> {
    let ids = &details.key_field_ids;
    if ids.is_empty() {
        return Err(Refusal::new(
            RefusalKind::NoKeys,
            "key_field_ids is empty (the spec requires at least one key)",
        ));
    }
    if details.key_types.len() != ids.len() || details.keys.len() != ids.len() {
        return Err(Refusal::new(
            RefusalKind::MismatchedLengths,
            format!(
                "key_field_ids has {} entries but keys has {} and key_types {}",
                ids.len(),
                details.keys.len(),
                details.key_types.len()
            ),
        ));
    }
    for (i, id) in ids.iter().enumerate() {
        if ids[..i].contains(id) {
            return Err(Refusal::new(
                RefusalKind::DuplicateKeyField,
                format!("field id {id} appears twice in key_field_ids"),
            ));
        }
    }
    Ok(())
}

/// The key encoding is one lakeseek reads (Arrow row format, version 1).
fn check_key_encoding(key_encoding: i32) -> Result<(), Refusal> {
    match ListElementKeyEncoding::try_from(key_encoding) {
        Ok(ListElementKeyEncoding::ArrowRowV1) => Ok(()),
        Ok(ListElementKeyEncoding::Unspecified) => Err(Refusal::new(
            RefusalKind::UnknownKeyEncoding,
            "key_encoding is LIST_ELEMENT_KEY_ENCODING_UNSPECIFIED",
        )),
        Err(_) => Err(Refusal::new(
            RefusalKind::UnknownKeyEncoding,
            format!("unknown key_encoding {key_encoding}"),
        )),
    }
}

/// Each key type from the spec's table.
fn parse_key_types(key_types: &[String]) -> Result<Vec<KeyType>, Refusal> {
    key_types
        .iter()
        .enumerate()
        .map(|(i, t)| {
            KeyType::from_logical_type(t).ok_or_else(|| {
                Refusal::new(
                    RefusalKind::UnsupportedKeyType,
                    format!("key {i} has type {t:?}, which is not a list element key type"),
                )
            })
        })
        .collect()
}

/// The target is a BTree of a version lakeseek reads.
fn check_target(details: &ListElementIndexDetails) -> Result<(), Refusal> {
    match &details.target_details {
        Some(any) if is_btree_type_url(&any.type_url) => {}
        Some(any) => {
            return Err(Refusal::new(
                RefusalKind::BadTargetDetails,
                format!(
                    "target_details has type {:?}, not BTreeIndexDetails",
                    any.type_url
                ),
            ))
        }
        None => {
            return Err(Refusal::new(
                RefusalKind::BadTargetDetails,
                "target_details is missing",
            ))
        }
    }
    let version = details.target_index_version;
    if version == 0 || version > MAX_TARGET_INDEX_VERSION {
        return Err(Refusal::new(
            RefusalKind::BadTargetVersion,
            format!(
                "target_index_version is {version}; lakeseek reads BTree targets of version 1..={MAX_TARGET_INDEX_VERSION}"
            ),
        ));
    }
    Ok(())
}

/// "Every segment of one logical index has the same key_field_ids, key_types and
/// key_encoding" — refuse the index when its segments disagree.
pub(crate) fn check_segments_agree(segments: &[ListElementIndexDetails]) -> Result<(), Refusal> {
    let Some(first) = segments.first() else {
        return Ok(());
    };
    for (i, s) in segments.iter().enumerate().skip(1) {
        if s.key_field_ids != first.key_field_ids
            || s.key_types != first.key_types
            || s.key_encoding != first.key_encoding
        {
            return Err(Refusal::new(
                RefusalKind::SegmentsDisagree,
                format!("segment {i} has different key fields, key types or key encoding than segment 0"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lance::proto::list_element::LIST_ELEMENT_DETAILS_TYPE_URL;

    pub(crate) fn btree_any() -> Any {
        Any {
            type_url: "/lance.table.BTreeIndexDetails".into(),
            value: vec![],
        }
    }

    fn good() -> ListElementIndexDetails {
        ListElementIndexDetails {
            key_field_ids: vec![3, 4],
            keys: vec!["label".into(), "confidence".into()],
            key_types: vec!["string".into(), "float".into()],
            key_encoding: ListElementKeyEncoding::ArrowRowV1 as i32,
            target_details: Some(btree_any()),
            target_index_version: 1,
        }
    }

    fn kind(d: &ListElementIndexDetails) -> Option<RefusalKind> {
        check_details(d).err().map(|r| r.kind)
    }

    #[test]
    fn type_urls() {
        assert!(is_list_element_type_url(LIST_ELEMENT_DETAILS_TYPE_URL));
        assert!(is_list_element_type_url(
            "type.googleapis.com/x.y.listelementindexdetails"
        ));
        assert!(!is_list_element_type_url("/lance.index.JsonIndexDetails"));
        assert!(is_btree_type_url("/lance.index.pb.BTreeIndexDetails"));
        assert!(!is_btree_type_url("/lance.table.BitmapIndexDetails"));
    }

    #[test]
    fn decode_round_trip_and_garbage() {
        let any = Any {
            type_url: LIST_ELEMENT_DETAILS_TYPE_URL.into(),
            value: good().encode_to_vec(),
        };
        assert_eq!(decode_details(&any).unwrap(), good());
        let garbage = Any {
            type_url: LIST_ELEMENT_DETAILS_TYPE_URL.into(),
            value: vec![0x0A, 0xFF],
        };
        assert_eq!(
            decode_details(&garbage).unwrap_err().kind,
            RefusalKind::UndecodableDetails
        );
        let other = Any {
            type_url: "/lance.table.BTreeIndexDetails".into(),
            value: vec![],
        };
        assert_eq!(
            decode_details(&other).unwrap_err().kind,
            RefusalKind::NotListElementDetails
        );
    }

    #[test]
    fn details_rules() {
        assert_eq!(
            check_details(&good()).unwrap(),
            vec![KeyType::Utf8, KeyType::Float32]
        );
        let mut d = good();
        d.key_field_ids.clear();
        d.keys.clear();
        d.key_types.clear();
        assert_eq!(kind(&d), Some(RefusalKind::NoKeys));
        let mut d = good();
        d.key_types.pop();
        assert_eq!(kind(&d), Some(RefusalKind::MismatchedLengths));
        let mut d = good();
        d.keys.push("extra".into());
        assert_eq!(kind(&d), Some(RefusalKind::MismatchedLengths));
        let mut d = good();
        d.key_field_ids = vec![3, 3];
        assert_eq!(kind(&d), Some(RefusalKind::DuplicateKeyField));
        let mut d = good();
        d.key_encoding = 0;
        assert_eq!(kind(&d), Some(RefusalKind::UnknownKeyEncoding));
        d.key_encoding = 2;
        assert_eq!(kind(&d), Some(RefusalKind::UnknownKeyEncoding));
        let mut d = good();
        d.key_types[1] = "halffloat".into();
        assert_eq!(kind(&d), Some(RefusalKind::UnsupportedKeyType));
        let mut d = good();
        d.target_details = None;
        assert_eq!(kind(&d), Some(RefusalKind::BadTargetDetails));
        d.target_details = Some(Any {
            type_url: "/lance.table.BitmapIndexDetails".into(),
            value: vec![],
        });
        assert_eq!(kind(&d), Some(RefusalKind::BadTargetDetails));
        let mut d = good();
        d.target_index_version = 0;
        assert_eq!(kind(&d), Some(RefusalKind::BadTargetVersion));
        d.target_index_version = 2;
        assert_eq!(kind(&d), Some(RefusalKind::BadTargetVersion));
    }

    #[test]
    fn segments_must_agree_but_names_may_differ() {
        let mut renamed = good();
        renamed.keys[0] = "kind".into();
        assert!(check_segments_agree(&[good(), renamed]).is_ok());
        let mut other = good();
        other.key_types[1] = "double".into();
        assert_eq!(
            check_segments_agree(&[good(), other]).unwrap_err().kind,
            RefusalKind::SegmentsDisagree
        );
        assert!(check_segments_agree(&[]).is_ok());
    }
}
