//! Messages of legacy Lance v1 files (`lance.file.Metadata`, and the v1-only parts of
//! `lance.file.Field`) as lance-file 0.10 – 0.17's `file.proto` declares them.
//!
//! A v1 file ends with a 16-byte footer (metadata position, version, magic); the
//! `Metadata` message it points at is stored length-prefixed (u32 little endian), like the
//! optional `lance.table.Manifest` that self-describing files carry.

/// `lance.file.Metadata`: batches, page table and manifest positions of a v1 file.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Metadata {
    /// Position of the length-prefixed `Manifest` (0 when the file carries none).
    #[prost(uint64, tag = "1")]
    pub manifest_position: u64,
    /// Cumulative row counts: batch `i` holds rows `batch_offsets[i]..batch_offsets[i+1]`.
    #[prost(int32, repeated, tag = "2")]
    pub batch_offsets: Vec<i32>,
    /// Position of the page table.
    #[prost(uint64, tag = "3")]
    pub page_table_position: u64,
    /// Page statistics, when the writer collected them.
    #[prost(message, optional, tag = "5")]
    pub statistics: Option<StatisticsMetadata>,
}

/// `lance.file.Metadata.StatisticsMetadata`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct StatisticsMetadata {
    /// Schema of the statistics columns.
    #[prost(message, repeated, tag = "1")]
    pub schema: Vec<super::file::Field>,
    /// Leaf field ids with statistics.
    #[prost(int32, repeated, tag = "2")]
    pub fields: Vec<i32>,
    /// Position of the statistics page table.
    #[prost(uint64, tag = "3")]
    pub page_table_position: u64,
}

/// The v1 parts of `lance.file.Field` (id, encoding, dictionary), decoded from the same
/// bytes as [`super::file::Field`].
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct FieldEncoding {
    /// Field id.
    #[prost(int32, tag = "3")]
    pub id: i32,
    /// `lance.file.Encoding`: NONE=0, PLAIN=1, VAR_BINARY=2, DICTIONARY=3, RLE=4.
    #[prost(int32, tag = "7")]
    pub encoding: i32,
    /// Where the dictionary values of a dictionary field are stored.
    #[prost(message, optional, tag = "8")]
    pub dictionary: Option<Dictionary>,
}

/// `lance.file.Dictionary`: `length` values stored at `offset` (plain or var-binary).
#[derive(Clone, Copy, PartialEq, prost::Message)]
pub(crate) struct Dictionary {
    /// Position of the values (of the positions array for string values).
    #[prost(int64, tag = "1")]
    pub offset: i64,
    /// Number of values.
    #[prost(int64, tag = "2")]
    pub length: i64,
}

/// The schema part of a `lance.table.Manifest` (field 1), with the v1 parts of each field.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ManifestFieldEncodings {
    /// Fields in pre-order.
    #[prost(message, repeated, tag = "1")]
    pub fields: Vec<FieldEncoding>,
}

/// The schema part of a `lance.table.Manifest` (fields 1 and 5).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ManifestSchema {
    /// Fields in pre-order.
    #[prost(message, repeated, tag = "1")]
    pub fields: Vec<super::file::Field>,
    /// Schema-level metadata.
    #[prost(map = "string, bytes", tag = "5")]
    pub metadata: std::collections::HashMap<String, Vec<u8>>,
}
