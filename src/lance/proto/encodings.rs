//! `lance.encodings21` and `lance.encodings23` messages: page layouts and compressive encodings.
//!
//! Hand-written prost derives (no protoc, no build script) with field numbers and types taken
//! from lance-encoding 14.0.2 `protos/encodings_v2_1.proto` and `protos/encodings_v2_3.proto`.
//!
//! The two packages share the compressive-encoding messages (`CompressiveEncoding` field numbers
//! 1–13 are identical); 2.3 adds `range = 14` and `delta = 15`. One Rust [`CompressiveEncoding`]
//! serves both: the page layer must reject `Range`/`Delta` in 2.1/2.2 pages.
//! [`RepDefLayer`] and [`CompressionScheme`] also have identical numbering in both packages.

use bytes::Bytes;

/// `google.protobuf.Any` type URL of a 2.1/2.2 page layout.
pub(crate) const PAGE_LAYOUT_TYPE_URL: &str = "/lance.encodings21.PageLayout";
/// `google.protobuf.Any` type URL of a 2.3 page layout.
pub(crate) const PLANAR_LAYOUT_TYPE_URL: &str = "/lance.encodings23.PlanarLayout";

// ------------------------------------------------------------------------------------------
// Shared enums
// ------------------------------------------------------------------------------------------

/// Meaning of one structural (rep/def) layer, inner-most first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum RepDefLayer {
    /// Not set (invalid in a written file).
    RepdefUnspecified = 0,
    /// Item layer without nulls (consumes no def level).
    RepdefAllValidItem = 1,
    /// List layer without nulls or empty lists (consumes no def level).
    RepdefAllValidList = 2,
    /// Item/struct layer that may be null (1 def level).
    RepdefNullableItem = 3,
    /// List layer that may be null (1 def level).
    RepdefNullableList = 4,
    /// List layer that may be empty (1 def level).
    RepdefEmptyableList = 5,
    /// List layer that may be null or empty (2 def levels: null = b+1, empty = b+2).
    RepdefNullAndEmptyList = 6,
}

/// General-purpose compression algorithm of a [`BufferCompression`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum CompressionScheme {
    /// Not set.
    CompressionAlgorithmUnspecified = 0,
    /// LZ4 block compression.
    CompressionAlgorithmLz4 = 1,
    /// Zstandard.
    CompressionAlgorithmZstd = 2,
}

// ------------------------------------------------------------------------------------------
// lance.encodings21: page layouts
// ------------------------------------------------------------------------------------------

/// Mini-block layout: values compressed into small (≤ 32 KiB) chunks.
#[derive(Clone, PartialEq, prost::Message)]
pub struct MiniBlockLayout {
    /// Block encoding of each chunk's repetition levels; absent = no rep buffer.
    #[prost(message, optional, tag = "1")]
    pub rep_compression: Option<CompressiveEncoding>,
    /// Block encoding of each chunk's definition levels; absent = no def buffer.
    #[prost(message, optional, tag = "2")]
    pub def_compression: Option<CompressiveEncoding>,
    /// Mini-block encoding of the values.
    #[prost(message, optional, tag = "3")]
    pub value_compression: Option<CompressiveEncoding>,
    /// Block encoding of the page dictionary; absent = no dictionary.
    #[prost(message, optional, tag = "4")]
    pub dictionary: Option<CompressiveEncoding>,
    /// Number of dictionary entries.
    #[prost(uint64, tag = "5")]
    pub num_dictionary_items: u64,
    /// Structural layers, inner-most first.
    #[prost(enumeration = "RepDefLayer", repeated, tag = "6")]
    pub layers: Vec<i32>,
    /// Value buffers per chunk (excluding rep/def).
    #[prost(uint64, tag = "7")]
    pub num_buffers: u64,
    /// Depth of the repetition index (0 = none).
    #[prost(uint32, tag = "8")]
    pub repetition_index_depth: u32,
    /// Visible items in the page.
    #[prost(uint64, tag = "9")]
    pub num_items: u64,
    /// true: u32 chunk metadata words and buffer sizes; false: u16.
    #[prost(bool, tag = "10")]
    pub has_large_chunk: bool,
}

/// Addressing of a full-zip page: fixed value width or variable-width offsets.
pub(crate) mod full_zip_layout {
    /// `oneof details` of [`super::FullZipLayout`].
    #[derive(Clone, Copy, PartialEq, Eq, prost::Oneof)]
    pub enum Details {
        /// Fixed width: bits per (compressed) value.
        #[prost(uint32, tag = "3")]
        BitsPerValue(u32),
        /// Variable width: bits per inline length.
        #[prost(uint32, tag = "4")]
        BitsPerOffset(u32),
    }
}

/// Full-zip layout: per value `[control word][value]`, for large values.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FullZipLayout {
    /// Bits of repetition in each control word.
    #[prost(uint32, tag = "1")]
    pub bits_rep: u32,
    /// Bits of definition in each control word.
    #[prost(uint32, tag = "2")]
    pub bits_def: u32,
    /// Items (levels) in the page.
    #[prost(uint32, tag = "5")]
    pub num_items: u32,
    /// Visible items in the page.
    #[prost(uint32, tag = "6")]
    pub num_visible_items: u32,
    /// Per-value encoding.
    #[prost(message, optional, tag = "7")]
    pub value_compression: Option<CompressiveEncoding>,
    /// Structural layers, inner-most first.
    #[prost(enumeration = "RepDefLayer", repeated, tag = "8")]
    pub layers: Vec<i32>,
    /// Fixed width or variable width addressing (a oneof: declared last, as prost-build does).
    #[prost(oneof = "full_zip_layout::Details", tags = "3, 4")]
    pub details: Option<full_zip_layout::Details>,
}

/// Constant layout: every visible value is one scalar (or null).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ConstantLayout {
    /// Structural layers, inner-most first.
    #[prost(enumeration = "RepDefLayer", repeated, tag = "5")]
    pub layers: Vec<i32>,
    /// Inline little-endian scalar (≤ 32 bytes); absent for an all-null page.
    #[prost(bytes = "bytes", optional, tag = "6")]
    pub inline_value: Option<Bytes>,
    /// Block encoding of the repetition buffer; absent = raw u16 levels.
    #[prost(message, optional, tag = "7")]
    pub rep_compression: Option<CompressiveEncoding>,
    /// Block encoding of the definition buffer; absent = raw u16 levels.
    #[prost(message, optional, tag = "8")]
    pub def_compression: Option<CompressiveEncoding>,
    /// Number of repetition levels.
    #[prost(uint64, tag = "9")]
    pub num_rep_values: u64,
    /// Number of definition levels.
    #[prost(uint64, tag = "10")]
    pub num_def_values: u64,
}

/// Blob layout (blob v1): large binary values stored outside the page.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct BlobLayout {
    /// Layout of the (position, size) descriptions.
    #[prost(message, optional, boxed, tag = "1")]
    pub inner_layout: Option<Box<PageLayout>>,
    /// Structural layers, inner-most first.
    #[prost(enumeration = "RepDefLayer", repeated, tag = "2")]
    pub layers: Vec<i32>,
}

/// The layout variants of [`PageLayout`].
pub(crate) mod page_layout {
    /// `oneof layout` of [`super::PageLayout`].
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub(crate) enum Layout {
        /// Mini-block chunks.
        #[prost(message, tag = "1")]
        MiniBlockLayout(super::MiniBlockLayout),
        /// Constant / all-null.
        #[prost(message, tag = "2")]
        ConstantLayout(super::ConstantLayout),
        /// Full-zip.
        #[prost(message, tag = "3")]
        FullZipLayout(super::FullZipLayout),
        /// Blob descriptions.
        #[prost(message, tag = "4")]
        BlobLayout(super::BlobLayout),
    }
}

/// `lance.encodings21.PageLayout`: page encoding of 2.1 and 2.2 files.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct PageLayout {
    /// The layout.
    #[prost(oneof = "page_layout::Layout", tags = "1, 2, 3, 4")]
    pub layout: Option<page_layout::Layout>,
}

// ------------------------------------------------------------------------------------------
// Compressive encodings (shared by encodings21 and encodings23)
// ------------------------------------------------------------------------------------------

/// General compression applied to one buffer.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BufferCompression {
    /// Algorithm.
    #[prost(enumeration = "CompressionScheme", tag = "1")]
    pub scheme: i32,
    /// Compression level (writer side only).
    #[prost(int32, optional, tag = "2")]
    pub level: Option<i32>,
}

/// Fixed-width values packed contiguously.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Flat {
    /// Bits per value (> 0, not necessarily a multiple of 8).
    #[prost(uint64, tag = "1")]
    pub bits_per_value: u64,
    /// Optional general compression of the buffer.
    #[prost(message, optional, tag = "2")]
    pub data: Option<BufferCompression>,
}

/// Variable-width values: offsets (a fixed-width block) plus value bytes.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Variable {
    /// Encoding of the offsets.
    #[prost(message, optional, boxed, tag = "1")]
    pub offsets: Option<Box<CompressiveEncoding>>,
    /// Optional general compression of the value bytes.
    #[prost(message, optional, tag = "2")]
    pub values: Option<BufferCompression>,
}

/// All values equal one scalar (stored here); no payload.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Constant {
    /// The little-endian scalar; in 2.3 unsigned sequences absent = empty sequence.
    #[prost(bytes = "bytes", optional, tag = "1")]
    pub value: Option<Bytes>,
}

/// 2.3 only: arithmetic sequence `start + step * i`; no payload.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Range {
    /// 32 or 64.
    #[prost(uint64, tag = "1")]
    pub uncompressed_bits_per_value: u64,
    /// First value.
    #[prost(uint64, tag = "2")]
    pub start: u64,
    /// Difference between adjacent values.
    #[prost(uint64, tag = "3")]
    pub step: u64,
}

/// 2.3 only: first value plus a child sequence of `n - 1` deltas.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Delta {
    /// 32 or 64.
    #[prost(uint64, tag = "1")]
    pub uncompressed_bits_per_value: u64,
    /// First value.
    #[prost(uint64, tag = "2")]
    pub base: u64,
    /// Encoding of the deltas.
    #[prost(message, optional, boxed, tag = "3")]
    pub deltas: Option<Box<CompressiveEncoding>>,
}

/// Bitpacking with one width for the whole buffer (stored in the child `Flat`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct OutOfLineBitpacking {
    /// Width T of the unpacked values (8, 16, 32, 64).
    #[prost(uint64, tag = "1")]
    pub uncompressed_bits_per_value: u64,
    /// Encoding of the packed values (normally `Flat { bits_per_value: W }`).
    #[prost(message, optional, boxed, tag = "3")]
    pub values: Option<Box<CompressiveEncoding>>,
}

/// Bitpacking with the bit width stored inline per chunk.
#[derive(Clone, PartialEq, prost::Message)]
pub struct InlineBitpacking {
    /// Width T of the unpacked values (8, 16, 32, 64).
    #[prost(uint64, tag = "1")]
    pub uncompressed_bits_per_value: u64,
    /// Optional general compression of the buffer.
    #[prost(message, optional, tag = "2")]
    pub values: Option<BufferCompression>,
}

/// FSST string compression with a page-wide symbol table.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Fsst {
    /// Serialized FSST symbol table.
    #[prost(bytes = "bytes", tag = "1")]
    pub symbol_table: Bytes,
    /// Encoding of the compressed variable-width values.
    #[prost(message, optional, boxed, tag = "2")]
    pub values: Option<Box<CompressiveEncoding>>,
}

/// Compressive dictionary encoding (2.3 block grammar).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Dictionary {
    /// Encoding of the indices.
    #[prost(message, optional, boxed, tag = "1")]
    pub indices: Option<Box<CompressiveEncoding>>,
    /// Encoding of the dictionary items.
    #[prost(message, optional, boxed, tag = "2")]
    pub items: Option<Box<CompressiveEncoding>>,
    /// Number of dictionary items.
    #[prost(uint32, tag = "3")]
    pub num_dictionary_items: u32,
}

/// Run-length encoding: run values plus run lengths.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Rle {
    /// Encoding of the run values.
    #[prost(message, optional, boxed, tag = "1")]
    pub values: Option<Box<CompressiveEncoding>>,
    /// Encoding of the run lengths.
    #[prost(message, optional, boxed, tag = "2")]
    pub run_lengths: Option<Box<CompressiveEncoding>>,
}

/// Fixed-size lists flattened to their items.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FixedSizeList {
    /// List dimension.
    #[prost(uint64, tag = "1")]
    pub items_per_value: u64,
    /// Whether an item validity bitmap precedes the values.
    #[prost(bool, tag = "3")]
    pub has_validity: bool,
    /// Encoding of the flattened items.
    #[prost(message, optional, boxed, tag = "2")]
    pub values: Option<Box<CompressiveEncoding>>,
}

/// Fixed-width struct children packed row by row.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PackedStruct {
    /// Bits per value of each child.
    #[prost(uint64, repeated, tag = "1")]
    pub bits_per_value: Vec<u64>,
    /// Encoding of the packed rows.
    #[prost(message, optional, boxed, tag = "2")]
    pub values: Option<Box<CompressiveEncoding>>,
}

/// Nested messages of [`VariablePackedStruct`].
pub(crate) mod variable_packed_struct {
    /// One child field of a variable packed struct.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct FieldEncoding {
        /// Encoding of the child values.
        #[prost(message, optional, tag = "1")]
        pub value: Option<super::CompressiveEncoding>,
        /// Fixed or variable width of the child in a row.
        #[prost(oneof = "field_encoding::Layout", tags = "2, 3")]
        pub layout: Option<field_encoding::Layout>,
    }

    /// Nested oneof of [`FieldEncoding`].
    pub(crate) mod field_encoding {
        /// `oneof layout` of [`super::FieldEncoding`].
        #[derive(Clone, Copy, PartialEq, Eq, prost::Oneof)]
        pub enum Layout {
            /// Fixed width child.
            #[prost(uint64, tag = "2")]
            BitsPerValue(u64),
            /// Variable width child with a length prefix of this many bits.
            #[prost(uint64, tag = "3")]
            BitsPerLength(u64),
        }
    }
}

/// Variable-width struct children, compressed per field and transposed row-major.
#[derive(Clone, PartialEq, prost::Message)]
pub struct VariablePackedStruct {
    /// The child fields.
    #[prost(message, repeated, tag = "1")]
    pub fields: Vec<variable_packed_struct::FieldEncoding>,
}

/// General (LZ4/zstd) compression wrapping an inner encoding's output.
#[derive(Clone, PartialEq, prost::Message)]
pub struct General {
    /// The algorithm.
    #[prost(message, optional, tag = "1")]
    pub compression: Option<BufferCompression>,
    /// The inner encoding.
    #[prost(message, optional, boxed, tag = "3")]
    pub values: Option<Box<CompressiveEncoding>>,
}

/// Byte-plane transposition of fixed-width values.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ByteStreamSplit {
    /// Encoding of the transposed values (Flat 32/64).
    #[prost(message, optional, boxed, tag = "1")]
    pub values: Option<Box<CompressiveEncoding>>,
}

/// The codec variants of [`CompressiveEncoding`].
pub(crate) mod compressive_encoding {
    /// `oneof compression` of [`super::CompressiveEncoding`].
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Compression {
        /// Plain fixed-width values.
        #[prost(message, tag = "1")]
        Flat(super::Flat),
        /// Variable-width values.
        #[prost(message, tag = "2")]
        Variable(super::Variable),
        /// Constant value, no payload.
        #[prost(message, tag = "3")]
        Constant(super::Constant),
        /// Out-of-line bitpacking.
        #[prost(message, tag = "4")]
        OutOfLineBitpacking(super::OutOfLineBitpacking),
        /// Inline bitpacking.
        #[prost(message, tag = "5")]
        InlineBitpacking(super::InlineBitpacking),
        /// FSST.
        #[prost(message, tag = "6")]
        Fsst(super::Fsst),
        /// Dictionary.
        #[prost(message, tag = "7")]
        Dictionary(super::Dictionary),
        /// Run-length encoding.
        #[prost(message, tag = "8")]
        Rle(super::Rle),
        /// Byte stream split.
        #[prost(message, tag = "9")]
        ByteStreamSplit(super::ByteStreamSplit),
        /// General compression.
        #[prost(message, tag = "10")]
        General(super::General),
        /// Fixed-size list flattening.
        #[prost(message, tag = "11")]
        FixedSizeList(super::FixedSizeList),
        /// Packed struct.
        #[prost(message, tag = "12")]
        PackedStruct(super::PackedStruct),
        /// Variable packed struct.
        #[prost(message, tag = "13")]
        VariablePackedStruct(super::VariablePackedStruct),
        /// 2.3 only: arithmetic sequence.
        #[prost(message, tag = "14")]
        Range(super::Range),
        /// 2.3 only: delta sequence.
        #[prost(message, tag = "15")]
        Delta(super::Delta),
    }
}

/// A node of the compression tree (`lance.encodings21/23.CompressiveEncoding`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct CompressiveEncoding {
    /// The codec; `None` is invalid in a written file.
    #[prost(
        oneof = "compressive_encoding::Compression",
        tags = "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15"
    )]
    pub compression: Option<compressive_encoding::Compression>,
}

// ------------------------------------------------------------------------------------------
// lance.encodings23: planar layout
// ------------------------------------------------------------------------------------------

/// `lance.encodings23.PlanarLayout`: page encoding of 2.3 files.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct PlanarLayout {
    /// Rows → leaf slots.
    #[prost(message, optional, tag = "1")]
    pub structure: Option<StructuralPlane>,
    /// Leaf slots → bytes.
    #[prost(message, optional, tag = "2")]
    pub values: Option<ValuePlane>,
}

/// The codec variants of [`StructuralPlane`].
pub(crate) mod structural_plane {
    /// `oneof codec` of [`super::StructuralPlane`].
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub(crate) enum Codec {
        /// Rep/def levels (2.2 engines).
        #[prost(message, tag = "1")]
        Dense(super::DenseStructure),
        /// Sparse layers.
        #[prost(message, tag = "2")]
        Sparse(super::SparseStructure),
    }
}

/// How a 2.3 page maps rows to leaf slots.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct StructuralPlane {
    /// Dense or sparse.
    #[prost(oneof = "structural_plane::Codec", tags = "1, 2")]
    pub codec: Option<structural_plane::Codec>,
}

/// Dense structure: rep/def layers, inner-most first.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct DenseStructure {
    /// Structural layers, inner-most first.
    #[prost(enumeration = "RepDefLayer", repeated, tag = "1")]
    pub layers: Vec<i32>,
}

/// Sparse structure: layers outer-most first.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SparseStructure {
    /// Layers, outer-most first.
    #[prost(message, repeated, tag = "1")]
    pub layers: Vec<SparseStructuralLayer>,
}

/// The codec variants of [`ValuePlane`].
pub(crate) mod value_plane {
    /// `oneof codec` of [`super::ValuePlane`].
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Codec {
        /// Mini-block chunks.
        #[prost(message, tag = "1")]
        Chunked(super::ChunkedValues),
        /// Full-zip values.
        #[prost(message, tag = "2")]
        Zipped(super::ZippedValues),
        /// One scalar.
        #[prost(message, tag = "3")]
        Constant(super::ConstantValue),
        /// No materialized values.
        #[prost(message, tag = "4")]
        None(super::NoValues),
        /// Indices into a zipped dictionary.
        #[prost(message, tag = "5")]
        Indexed(super::IndexedValues),
    }
}

/// How a 2.3 page stores leaf values.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ValuePlane {
    /// The codec.
    #[prost(oneof = "value_plane::Codec", tags = "1, 2, 3, 4, 5")]
    pub codec: Option<value_plane::Codec>,
}

/// Sparse values that index an addressable dictionary.
#[derive(Clone, PartialEq, prost::Message)]
pub struct IndexedValues {
    /// Encoding of the u32 indices (one per leaf slot).
    #[prost(message, optional, tag = "1")]
    pub indices: Option<CompressiveEncoding>,
    /// The dictionary items, full-zip addressable.
    #[prost(message, optional, tag = "2")]
    pub items: Option<ZippedValues>,
}

/// Mini-block chunked values (2.3).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ChunkedValues {
    /// Mini-block value encoding.
    #[prost(message, optional, tag = "1")]
    pub compression: Option<CompressiveEncoding>,
    /// Rep/def levels; present only with dense structure.
    #[prost(message, optional, tag = "2")]
    pub levels: Option<DenseChunkLevels>,
    /// Block encoding of the page dictionary.
    #[prost(message, optional, tag = "3")]
    pub dictionary: Option<CompressiveEncoding>,
    /// Number of dictionary entries.
    #[prost(uint64, tag = "4")]
    pub num_dictionary_items: u64,
    /// Value buffers per chunk.
    #[prost(uint64, tag = "5")]
    pub num_buffers: u64,
    /// Visible items (0 for sparse pages).
    #[prost(uint64, tag = "6")]
    pub num_items: u64,
}

/// Per-chunk level encodings of dense chunked values.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DenseChunkLevels {
    /// Block encoding of repetition levels; absent = none.
    #[prost(message, optional, tag = "1")]
    pub repetition: Option<CompressiveEncoding>,
    /// Block encoding of definition levels; absent = none.
    #[prost(message, optional, tag = "2")]
    pub definition: Option<CompressiveEncoding>,
    /// Depth of the repetition index.
    #[prost(uint32, tag = "3")]
    pub repetition_index_depth: u32,
}

/// Addressing variants of [`ZippedValues`].
pub(crate) mod zipped_values {
    /// `oneof addressing` of [`super::ZippedValues`].
    #[derive(Clone, Copy, PartialEq, Eq, prost::Oneof)]
    pub enum Addressing {
        /// Fixed width: bits per value.
        #[prost(uint32, tag = "3")]
        BitsPerValue(u32),
        /// Variable width: bits per inline length.
        #[prost(uint32, tag = "4")]
        BitsPerOffset(u32),
    }
}

/// Full-zip values (2.3).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ZippedValues {
    /// Per-value encoding.
    #[prost(message, optional, tag = "1")]
    pub compression: Option<CompressiveEncoding>,
    /// Control word widths (dense only).
    #[prost(message, optional, tag = "2")]
    pub levels: Option<DenseZipLevels>,
    /// Items in the page.
    #[prost(uint64, tag = "5")]
    pub num_items: u64,
    /// Visible items in the page.
    #[prost(uint64, tag = "6")]
    pub num_visible_items: u64,
    /// Fixed or variable width addressing (a oneof: declared last, as prost-build does).
    #[prost(oneof = "zipped_values::Addressing", tags = "3, 4")]
    pub addressing: Option<zipped_values::Addressing>,
}

/// Control word widths of dense zipped values.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DenseZipLevels {
    /// Bits of repetition.
    #[prost(uint32, tag = "1")]
    pub bits_repetition: u32,
    /// Bits of definition.
    #[prost(uint32, tag = "2")]
    pub bits_definition: u32,
}

/// One scalar for all materialized slots.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ConstantValue {
    /// Little-endian scalar, 1..=32 bytes (bool = 1 byte).
    #[prost(bytes = "bytes", tag = "1")]
    pub scalar: Bytes,
}

/// No materialized values.
#[derive(Clone, Copy, PartialEq, prost::Message)]
pub struct NoValues {}

/// The layer variants of [`SparseStructuralLayer`].
pub(crate) mod sparse_structural_layer {
    /// `oneof layer` of [`super::SparseStructuralLayer`].
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Layer {
        /// Struct/leaf validity.
        #[prost(message, tag = "1")]
        Validity(super::SparseValiditySet),
        /// List layer.
        #[prost(message, tag = "2")]
        List(super::SparseListLayer),
        /// Fixed-size-list layer.
        #[prost(message, tag = "3")]
        FixedSizeList(super::SparseFixedSizeListLayer),
    }
}

/// One layer of a sparse structure.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SparseStructuralLayer {
    /// The layer.
    #[prost(oneof = "sparse_structural_layer::Layer", tags = "1, 2, 3")]
    pub layer: Option<sparse_structural_layer::Layer>,
}

/// Sparse list layer: non-empty parent positions and their child counts.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SparseListLayer {
    /// Size of the child domain (= sum of counts).
    #[prost(uint64, tag = "1")]
    pub num_child_slots: u64,
    /// u64 block encoding of the strictly increasing non-empty parent positions.
    #[prost(message, optional, tag = "2")]
    pub non_empty_positions: Option<CompressiveEncoding>,
    /// Cardinality of `non_empty_positions` and `counts`.
    #[prost(uint64, tag = "3")]
    pub num_non_empty_positions: u64,
    /// u64 block encoding of the child counts.
    #[prost(message, optional, tag = "4")]
    pub counts: Option<CompressiveEncoding>,
    /// List nullability.
    #[prost(message, optional, tag = "5")]
    pub validity: Option<SparseValiditySet>,
}

/// Sparse fixed-size-list layer.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SparseFixedSizeListLayer {
    /// List dimension.
    #[prost(uint64, tag = "1")]
    pub dimension: u64,
    /// List nullability.
    #[prost(message, optional, tag = "2")]
    pub validity: Option<SparseValiditySet>,
}

/// Nested enum of [`SparseValiditySet`].
pub(crate) mod sparse_validity_set {
    /// Whether the positions list null or valid slots.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum Meaning {
        /// Not set (invalid).
        SparseValidityUnspecified = 0,
        /// Positions are the null slots.
        SparseValidityNullPositions = 1,
        /// Positions are the valid slots.
        SparseValidityValidPositions = 2,
    }
}

/// A set of slot positions that are null (or valid).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SparseValiditySet {
    /// Polarity of the positions.
    #[prost(enumeration = "sparse_validity_set::Meaning", tag = "1")]
    pub meaning: i32,
    /// u64 block encoding of strictly increasing positions.
    #[prost(message, optional, tag = "2")]
    pub positions: Option<CompressiveEncoding>,
    /// Cardinality of `positions`.
    #[prost(uint64, tag = "3")]
    pub num_positions: u64,
}

#[cfg(test)]
mod tests {
    use super::compressive_encoding::Compression;
    use super::*;
    use prost::Message;

    fn flat(bits: u64) -> CompressiveEncoding {
        CompressiveEncoding {
            compression: Some(Compression::Flat(Flat {
                bits_per_value: bits,
                data: None,
            })),
        }
    }

    #[test]
    fn page_layout_round_trip() {
        let dictionary = CompressiveEncoding {
            compression: Some(Compression::General(General {
                compression: Some(BufferCompression {
                    scheme: CompressionScheme::CompressionAlgorithmLz4 as i32,
                    level: None,
                }),
                values: Some(Box::new(CompressiveEncoding {
                    compression: Some(Compression::Variable(Variable {
                        offsets: Some(Box::new(flat(32))),
                        values: None,
                    })),
                })),
            })),
        };
        let layout = PageLayout {
            layout: Some(page_layout::Layout::MiniBlockLayout(MiniBlockLayout {
                rep_compression: None,
                def_compression: Some(flat(16)),
                value_compression: Some(CompressiveEncoding {
                    compression: Some(Compression::Rle(Rle {
                        values: Some(Box::new(flat(32))),
                        run_lengths: Some(Box::new(flat(8))),
                    })),
                }),
                dictionary: Some(dictionary),
                num_dictionary_items: 5000,
                layers: vec![RepDefLayer::RepdefNullableItem as i32],
                num_buffers: 2,
                repetition_index_depth: 0,
                num_items: 4096,
                has_large_chunk: true,
            })),
        };
        let bytes = layout.encode_to_vec();
        let back = PageLayout::decode(bytes.as_slice()).unwrap();
        assert_eq!(back, layout);
    }

    #[test]
    fn mini_block_field_numbers_match_proto() {
        // num_dictionary_items = 5 (varint 7) and has_large_chunk = 10 (varint 1).
        let layout = MiniBlockLayout {
            num_dictionary_items: 7,
            has_large_chunk: true,
            ..Default::default()
        };
        assert_eq!(layout.encode_to_vec(), vec![0x28, 7, 0x50, 1]);
    }

    #[test]
    fn planar_layout_round_trip() {
        let range = |start, step| CompressiveEncoding {
            compression: Some(Compression::Range(Range {
                uncompressed_bits_per_value: 64,
                start,
                step,
            })),
        };
        let layout = PlanarLayout {
            structure: Some(StructuralPlane {
                codec: Some(structural_plane::Codec::Sparse(SparseStructure {
                    layers: vec![SparseStructuralLayer {
                        layer: Some(sparse_structural_layer::Layer::List(SparseListLayer {
                            num_child_slots: 6,
                            non_empty_positions: Some(CompressiveEncoding {
                                compression: Some(Compression::Delta(Delta {
                                    uncompressed_bits_per_value: 64,
                                    base: 2,
                                    deltas: Some(Box::new(range(2, 2))),
                                })),
                            }),
                            num_non_empty_positions: 3,
                            counts: Some(range(1, 1)),
                            validity: Some(SparseValiditySet {
                                meaning: sparse_validity_set::Meaning::SparseValidityValidPositions
                                    as i32,
                                positions: Some(range(1, 1)),
                                num_positions: 9,
                            }),
                        })),
                    }],
                })),
            }),
            values: Some(ValuePlane {
                codec: Some(value_plane::Codec::Zipped(ZippedValues {
                    compression: Some(flat(32)),
                    levels: Some(DenseZipLevels {
                        bits_repetition: 0,
                        bits_definition: 1,
                    }),
                    addressing: Some(zipped_values::Addressing::BitsPerValue(32)),
                    num_items: 10,
                    num_visible_items: 10,
                })),
            }),
        };
        let bytes = layout.encode_to_vec();
        assert_eq!(PlanarLayout::decode(bytes.as_slice()).unwrap(), layout);
    }

    #[test]
    fn range_and_delta_use_tags_14_and_15() {
        let range = CompressiveEncoding {
            compression: Some(Compression::Range(Range {
                uncompressed_bits_per_value: 0,
                start: 0,
                step: 0,
            })),
        };
        // field 14, wire type 2 → key 0x72, empty message.
        assert_eq!(range.encode_to_vec(), vec![0x72, 0]);
        let delta = CompressiveEncoding {
            compression: Some(Compression::Delta(Delta {
                uncompressed_bits_per_value: 0,
                base: 0,
                deltas: None,
            })),
        };
        assert_eq!(delta.encode_to_vec(), vec![0x7a, 0]);
    }

    #[test]
    fn constant_layout_inline_value_and_fullzip_oneof() {
        let constant = ConstantLayout {
            layers: vec![RepDefLayer::RepdefAllValidItem as i32],
            inline_value: Some(Bytes::from_static(&[7, 0, 0, 0, 0, 0, 0, 0])),
            ..Default::default()
        };
        let layout = PageLayout {
            layout: Some(page_layout::Layout::ConstantLayout(constant)),
        };
        let back = PageLayout::decode(layout.encode_to_vec().as_slice()).unwrap();
        assert_eq!(back, layout);
        let zip = FullZipLayout {
            bits_rep: 0,
            bits_def: 0,
            details: Some(full_zip_layout::Details::BitsPerOffset(32)),
            num_items: 3,
            num_visible_items: 3,
            value_compression: Some(flat(8)),
            layers: vec![RepDefLayer::RepdefAllValidItem as i32],
        };
        // bits_per_offset is field 4 → key 0x20.
        assert!(zip.encode_to_vec().windows(2).any(|w| w == [0x20, 32]));
        assert_eq!(
            FullZipLayout::decode(zip.encode_to_vec().as_slice()).unwrap(),
            zip
        );
    }
}
