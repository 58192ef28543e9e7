//! Container messages of Lance v2 files: `lance.file` (schema, `protos/file.proto`) and
//! `lance.file.v2` (column and page metadata, `protos/file2.proto`) of lance 14.0.2.
//!
//! Only the fields a reader needs are declared; prost skips unknown fields, so legacy
//! (v1-only) fields such as `Field.dictionary` or `Schema`-level statistics are ignored.
//! Field numbers are exactly those of the 14.0.2 `.proto` files.

use std::collections::HashMap;

/// `lance.file.FileDescriptor`: global buffer 0 of every v2 file.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct FileDescriptor {
    /// The schema of the file.
    #[prost(message, optional, tag = "1")]
    pub schema: Option<Schema>,
    /// Number of top-level rows.
    #[prost(uint64, tag = "2")]
    pub length: u64,
}

/// `lance.file.Schema`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Schema {
    /// All fields, flattened in depth-first pre-order (children after their parent).
    #[prost(message, repeated, tag = "1")]
    pub fields: Vec<Field>,
    /// Schema-level metadata.
    #[prost(map = "string, bytes", tag = "5")]
    pub metadata: HashMap<String, Vec<u8>>,
}

/// `lance.file.Field`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Field {
    /// Legacy field kind (PARENT=0, REPEATED=1, LEAF=2); pylance leaves it 0. Ignored.
    #[prost(int32, tag = "1")]
    pub r#type: i32,
    /// Field name.
    #[prost(string, tag = "2")]
    pub name: String,
    /// Field id.
    #[prost(int32, tag = "3")]
    pub id: i32,
    /// Id of the parent field, -1 for top-level fields.
    #[prost(int32, tag = "4")]
    pub parent_id: i32,
    /// Lance logical type, e.g. `"uint32"`, `"string"`, `"fixed_size_list:float:128"`.
    #[prost(string, tag = "5")]
    pub logical_type: String,
    /// Whether the field may hold nulls.
    #[prost(bool, tag = "6")]
    pub nullable: bool,
    /// Legacy v1 encoding enum. Ignored.
    #[prost(int32, tag = "7")]
    pub encoding: i32,
    /// Deprecated extension type name (the Arrow metadata key is used instead).
    #[prost(string, tag = "9")]
    pub extension_name: String,
    /// Field metadata (e.g. `lance-encoding:*` keys, Arrow extension names).
    #[prost(map = "string, bytes", tag = "10")]
    pub metadata: HashMap<String, Vec<u8>>,
    /// Part of an (unenforced) primary key.
    #[prost(bool, tag = "12")]
    pub unenforced_primary_key: bool,
    /// 1-based position in the primary key (0 = ordered by field id).
    #[prost(uint32, tag = "13")]
    pub unenforced_primary_key_position: u32,
    /// Part of an (unenforced) clustering key.
    #[prost(bool, tag = "14")]
    pub unenforced_clustering_key: bool,
    /// 1-based position in the clustering key (0 = not part of it).
    #[prost(uint32, tag = "15")]
    pub unenforced_clustering_key_position: u32,
}

/// `lance.file.v2.DeferredEncoding`: an encoding stored elsewhere in the file.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct DeferredEncoding {
    /// Absolute position of the buffer holding the encoding.
    #[prost(uint64, tag = "1")]
    pub buffer_location: u64,
    /// Size of that buffer.
    #[prost(uint64, tag = "2")]
    pub buffer_length: u64,
}

/// `lance.file.v2.DirectEncoding`: an encoding embedded in the metadata.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct DirectEncoding {
    /// A serialized `google.protobuf.Any`.
    #[prost(bytes = "bytes", tag = "1")]
    pub encoding: bytes::Bytes,
}

/// `lance.file.v2.Encoding`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Encoding {
    /// Where the encoding is.
    #[prost(oneof = "encoding::Location", tags = "1, 2, 3")]
    pub location: Option<encoding::Location>,
}

/// Nested types of [`Encoding`].
pub(crate) mod encoding {
    /// `Encoding.location`.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub(crate) enum Location {
        /// Stored in another buffer (never written by pylance; rejected by lance 14.0.2).
        #[prost(message, tag = "1")]
        Indirect(super::DeferredEncoding),
        /// Embedded `Any`.
        #[prost(message, tag = "2")]
        Direct(super::DirectEncoding),
        /// No encoding (`google.protobuf.Empty`).
        #[prost(message, tag = "3")]
        None(()),
    }
}

/// `lance.file.v2.ColumnMetadata`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ColumnMetadata {
    /// Column-level encoding (a `/lance.encodings.ColumnEncoding` with `values {}` in 2.1+).
    #[prost(message, optional, tag = "1")]
    pub encoding: Option<Encoding>,
    /// Pages in row order.
    #[prost(message, repeated, tag = "2")]
    pub pages: Vec<column_metadata::Page>,
    /// Positions of column-level buffers (empty in 2.1+ files).
    #[prost(uint64, repeated, tag = "3")]
    pub buffer_offsets: Vec<u64>,
    /// Sizes of column-level buffers.
    #[prost(uint64, repeated, tag = "4")]
    pub buffer_sizes: Vec<u64>,
}

/// Nested types of [`ColumnMetadata`].
pub(crate) mod column_metadata {
    /// `lance.file.v2.ColumnMetadata.Page`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct Page {
        /// Absolute position of each page buffer.
        #[prost(uint64, repeated, tag = "1")]
        pub buffer_offsets: Vec<u64>,
        /// Size of each page buffer (same length as `buffer_offsets`).
        #[prost(uint64, repeated, tag = "2")]
        pub buffer_sizes: Vec<u64>,
        /// Rows in the page (2.3 sparse pages: rows times the fixed-size-list scale).
        #[prost(uint64, tag = "3")]
        pub length: u64,
        /// The page encoding (a serialized `Any` of a page layout).
        #[prost(message, optional, tag = "4")]
        pub encoding: Option<super::Encoding>,
        /// First top-level row of the page.
        #[prost(uint64, tag = "5")]
        pub priority: u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn encoding_oneof_round_trips_every_variant() {
        for location in [
            encoding::Location::Indirect(DeferredEncoding {
                buffer_location: 7,
                buffer_length: 9,
            }),
            encoding::Location::Direct(DirectEncoding {
                encoding: bytes::Bytes::from_static(b"xy"),
            }),
            encoding::Location::None(()),
        ] {
            let enc = Encoding {
                location: Some(location),
            };
            let decoded = Encoding::decode(enc.encode_to_vec().as_slice()).expect("decodes");
            assert_eq!(decoded, enc);
        }
    }

    #[test]
    fn page_buffers_use_packed_tags_1_and_2() {
        // Hand-written: field 1 packed [64, 128], field 2 packed [3], length 10, priority 5.
        let raw = [
            0x0a, 0x03, 0x40, 0x80, 0x01, 0x12, 0x01, 0x03, 0x18, 0x0a, 0x28, 0x05,
        ];
        let page = column_metadata::Page::decode(raw.as_slice()).expect("decodes");
        assert_eq!(page.buffer_offsets, vec![64, 128]);
        assert_eq!(page.buffer_sizes, vec![3]);
        assert_eq!(page.length, 10);
        assert_eq!(page.priority, 5);
    }
}
