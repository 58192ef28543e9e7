//! `ListElementIndexDetails`: the details message of the experimental list element index
//! (spec: "List Element Index", section "Index Details").
//!
//! Lance 14.0.2 does not define this message; it is defined here, field by field from the
//! spec, with prost derives. The spec does not print the enum's numbers; they follow the
//! proto3 convention its names imply: `LIST_ELEMENT_KEY_ENCODING_UNSPECIFIED = 0`,
//! `LIST_ELEMENT_KEY_ENCODING_ARROW_ROW_V1 = 1`. The message is expected in package
//! `lance.index` (like `JsonIndexDetails`), i.e. type URL
//! `/lance.index.ListElementIndexDetails`; readers match only the last name.

/// Details of a list element index segment, stored as a `google.protobuf.Any` in
/// `IndexMetadata.index_details`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ListElementIndexDetails {
    /// The key fields, in key order, as Lance field ids (`file.Field.id`).
    #[prost(int32, repeated, tag = "1")]
    pub key_field_ids: Vec<i32>,
    /// Names of the key fields when the segment was written (informational only).
    #[prost(string, repeated, tag = "2")]
    pub keys: Vec<String>,
    /// Lance logical type of each key field when the index was trained.
    #[prost(string, repeated, tag = "3")]
    pub key_types: Vec<String>,
    /// How key tuples are encoded ([`ListElementKeyEncoding`] as its number).
    #[prost(enumeration = "ListElementKeyEncoding", tag = "4")]
    pub key_encoding: i32,
    /// Details of the target BTree (a `BTreeIndexDetails`).
    #[prost(message, optional, tag = "5")]
    pub target_details: Option<prost_types::Any>,
    /// The target BTree's own format version (1 or greater).
    #[prost(uint32, tag = "6")]
    pub target_index_version: u32,
}

/// How a key tuple is encoded into the target BTree's Binary values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum ListElementKeyEncoding {
    /// Not set; a reader must not use the index.
    Unspecified = 0,
    /// Arrow-row encoding, every key ascending with nulls first.
    ArrowRowV1 = 1,
}

/// The last component of the type URL of [`ListElementIndexDetails`].
pub(crate) const LIST_ELEMENT_DETAILS_NAME: &str = "ListElementIndexDetails";

/// The type URL lakeseek writes (in fixtures) for [`ListElementIndexDetails`].
pub(crate) const LIST_ELEMENT_DETAILS_TYPE_URL: &str = "/lance.index.ListElementIndexDetails";
