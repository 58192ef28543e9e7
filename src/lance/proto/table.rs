//! `lance.table` messages of a dataset manifest (lance-table 14.0.2 `table.proto`,
//! `fragment_metadata.proto`) and the `lance.file.Field` schema entry they embed.
//!
//! Only the fields a reader needs are declared; prost skips the others. Messages that a
//! reader must refuse rather than ignore (fragment trees, data overlays) are kept as raw
//! bytes so their presence can be detected.

use std::collections::HashMap;

/// `lance.table.Manifest`: one version of a dataset.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Manifest {
    /// Flat schema in pre-order (a parent precedes its children).
    #[prost(message, repeated, tag = "1")]
    pub fields: Vec<Field>,
    /// Fragments of this version (empty when `fragment_tree` is used).
    #[prost(message, repeated, tag = "2")]
    pub fragments: Vec<DataFragment>,
    /// Dataset version number (equals the number in the manifest file name).
    #[prost(uint64, tag = "3")]
    pub version: u64,
    /// Schema-level metadata.
    #[prost(map = "string, bytes", tag = "5")]
    pub schema_metadata: HashMap<String, Vec<u8>>,
    /// Absolute file offset of the `IndexSection` (0 is a valid offset; absent = no indices).
    #[prost(uint64, optional, tag = "6")]
    pub index_section: Option<u64>,
    /// When the version was committed.
    #[prost(message, optional, tag = "7")]
    pub timestamp: Option<prost_types::Timestamp>,
    /// Features a reader must understand (see `READER_FLAG_*` in the dataset module).
    #[prost(uint64, tag = "9")]
    pub reader_feature_flags: u64,
    /// Features a writer must understand.
    #[prost(uint64, tag = "10")]
    pub writer_feature_flags: u64,
    /// Library and version that wrote this manifest.
    #[prost(message, optional, tag = "13")]
    pub writer_version: Option<WriterVersion>,
    /// Next unused stable row id.
    #[prost(uint64, tag = "14")]
    pub next_row_id: u64,
    /// Data storage format ("lance", "2.2").
    #[prost(message, optional, tag = "15")]
    pub data_format: Option<DataStorageFormat>,
    /// Table config.
    #[prost(map = "string, string", tag = "16")]
    pub config: HashMap<String, String>,
    /// Base paths of files that live outside the dataset root.
    #[prost(message, repeated, tag = "18")]
    pub base_paths: Vec<BasePath>,
    /// Branch name, when this version belongs to a branch.
    #[prost(string, optional, tag = "20")]
    pub branch: Option<String>,
    /// Fragment tree (reader flag 1 << 12), kept raw: lakeseek refuses it.
    #[prost(bytes = "vec", optional, tag = "22")]
    pub fragment_tree: Option<Vec<u8>>,
}

/// `lance.table.Manifest.WriterVersion`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct WriterVersion {
    /// Library name, e.g. "lance".
    #[prost(string, tag = "1")]
    pub library: String,
    /// Library version, e.g. "14.0.2".
    #[prost(string, tag = "2")]
    pub version: String,
}

/// `lance.table.Manifest.DataStorageFormat`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct DataStorageFormat {
    /// "lance".
    #[prost(string, tag = "1")]
    pub file_format: String,
    /// Default data file version, e.g. "2.2".
    #[prost(string, tag = "2")]
    pub version: String,
}

/// `lance.table.BasePath`: a root that data, deletion or index files can live under.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct BasePath {
    /// Id referenced by `base_id` fields.
    #[prost(uint32, tag = "1")]
    pub id: u32,
    /// Optional alias.
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    /// True when the path is a dataset root (files under `data/`, `_deletions/`, ...).
    #[prost(bool, tag = "3")]
    pub is_dataset_root: bool,
    /// The base path (URL or path).
    #[prost(string, tag = "4")]
    pub path: String,
}

/// `lance.file.Field`: one schema entry.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Field {
    /// PARENT / REPEATED / LEAF (lance 14 always writes 0; meaningless).
    #[prost(int32, tag = "1")]
    pub r#type: i32,
    /// Unqualified name.
    #[prost(string, tag = "2")]
    pub name: String,
    /// Field id (0 is omitted on the wire).
    #[prost(int32, tag = "3")]
    pub id: i32,
    /// Parent field id, -1 for top-level fields.
    #[prost(int32, tag = "4")]
    pub parent_id: i32,
    /// Logical type string, e.g. "int64", "timestamp:us:UTC", "list.struct".
    #[prost(string, tag = "5")]
    pub logical_type: String,
    /// Whether the field may hold nulls.
    #[prost(bool, tag = "6")]
    pub nullable: bool,
    /// Field metadata.
    #[prost(map = "string, bytes", tag = "10")]
    pub metadata: HashMap<String, Vec<u8>>,
}

/// `lance.table.DataFragment`: a set of rows stored in one or more data files.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct DataFragment {
    /// Fragment id (high 32 bits of the row addresses of its rows).
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Data files, each holding some of the fields.
    #[prost(message, repeated, tag = "2")]
    pub files: Vec<DataFile>,
    /// Deleted rows, if any.
    #[prost(message, optional, tag = "3")]
    pub deletion_file: Option<DeletionFile>,
    /// Number of rows ever written to the fragment (deleted rows included).
    #[prost(uint64, tag = "4")]
    pub physical_rows: u64,
    /// Serialized `RowIdSequence` (stable row ids, `oneof row_id_sequence`).
    #[prost(bytes = "vec", optional, tag = "5")]
    pub inline_row_ids: Option<Vec<u8>>,
    /// `ExternalFile` row ids (never written by a release; reserved in 14.x), kept raw.
    #[prost(bytes = "vec", optional, tag = "6")]
    pub external_row_ids: Option<Vec<u8>>,
    /// `RowLineageColumn` marker: the row ids are a data-file column (reader flag 2048).
    #[prost(bytes = "vec", optional, tag = "12")]
    pub column_row_ids: Option<Vec<u8>>,
    /// Data overlay files (reader flag 1 << 6), kept raw: lakeseek refuses them.
    #[prost(bytes = "vec", repeated, tag = "11")]
    pub overlays: Vec<Vec<u8>>,
}

/// `lance.table.DataFile`: one Lance file of a fragment.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct DataFile {
    /// Path relative to `<root>/data/` (or to the base path given by `base_id`).
    #[prost(string, tag = "1")]
    pub path: String,
    /// Field ids stored in the file (leaf ids only for 2.1+ files; negative = reserved).
    #[prost(int32, repeated, tag = "2")]
    pub fields: Vec<i32>,
    /// Column index in the file of each entry of `fields`.
    #[prost(int32, repeated, tag = "3")]
    pub column_indices: Vec<i32>,
    /// File format major version.
    #[prost(uint32, tag = "4")]
    pub file_major_version: u32,
    /// File format minor version.
    #[prost(uint32, tag = "5")]
    pub file_minor_version: u32,
    /// File size in bytes (0 = unknown).
    #[prost(uint64, tag = "6")]
    pub file_size_bytes: u64,
    /// Base path id, when the file lives outside the dataset root.
    #[prost(uint32, optional, tag = "7")]
    pub base_id: Option<u32>,
}

/// `lance.table.DeletionFile.DeletionFileType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum DeletionFileType {
    /// Arrow IPC file with one UInt32 column `row_id` of deleted row offsets (`.arrow`).
    ArrowArray = 0,
    /// Portable 32-bit roaring bitmap of deleted row offsets (`.bin`).
    Bitmap = 1,
}

/// `lance.table.DeletionFile`: which rows of a fragment are deleted.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct DeletionFile {
    /// File format.
    #[prost(enumeration = "DeletionFileType", tag = "1")]
    pub file_type: i32,
    /// Dataset version the deleting transaction read.
    #[prost(uint64, tag = "2")]
    pub read_version: u64,
    /// Random id that keeps concurrent writers apart.
    #[prost(uint64, tag = "3")]
    pub id: u64,
    /// Number of deleted rows (0 = unknown in old datasets).
    #[prost(uint64, tag = "4")]
    pub num_deleted_rows: u64,
    /// Base path id, when the file lives outside the dataset root.
    #[prost(uint32, optional, tag = "7")]
    pub base_id: Option<u32>,
}

/// `lance.table.UUID`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Uuid {
    /// 16 raw bytes.
    #[prost(bytes = "vec", tag = "1")]
    pub uuid: Vec<u8>,
}

/// `lance.table.IndexSection`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct IndexSection {
    /// All index segments of the version.
    #[prost(message, repeated, tag = "1")]
    pub indices: Vec<IndexMetadata>,
}

/// `lance.table.IndexMetadata`: one index segment.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct IndexMetadata {
    /// Segment uuid (names its directory under `_indices/`).
    #[prost(message, optional, tag = "1")]
    pub uuid: Option<Uuid>,
    /// Field ids the index is keyed on (see the covering-fields caution in the docs).
    #[prost(int32, repeated, tag = "2")]
    pub fields: Vec<i32>,
    /// Index name; segments of one logical index share it.
    #[prost(string, tag = "3")]
    pub name: String,
    /// Dataset version the segment was built at.
    #[prost(uint64, tag = "4")]
    pub dataset_version: u64,
    /// Portable 32-bit roaring bitmap of the covered fragment ids (empty = unknown).
    #[prost(bytes = "vec", tag = "5")]
    pub fragment_bitmap: Vec<u8>,
    /// Index type and type-specific details.
    #[prost(message, optional, tag = "6")]
    pub index_details: Option<prost_types::Any>,
    /// Index format version (absent = 0).
    #[prost(int32, optional, tag = "7")]
    pub index_version: Option<i32>,
    /// Creation time, ms since the epoch.
    #[prost(uint64, optional, tag = "8")]
    pub created_at: Option<u64>,
    /// Base path id, when the index lives outside the dataset root.
    #[prost(uint32, optional, tag = "9")]
    pub base_id: Option<u32>,
    /// Files of the segment with their sizes.
    #[prost(message, repeated, tag = "10")]
    pub files: Vec<IndexFile>,
    /// Carried (covering) fields.
    #[prost(int32, repeated, tag = "11")]
    pub covering_fields: Vec<i32>,
}

/// `lance.table.IndexFile`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct IndexFile {
    /// Path relative to the index directory.
    #[prost(string, tag = "1")]
    pub path: String,
    /// Size in bytes.
    #[prost(uint64, tag = "2")]
    pub size_bytes: u64,
}
