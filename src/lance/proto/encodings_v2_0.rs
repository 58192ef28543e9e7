//! `lance.encodings` messages: the `ArrayEncoding` trees of Lance 2.0 pages.
//!
//! Hand-written prost derives (no protoc) with field numbers and types taken from
//! lance-encoding 0.39.0 `protos/encodings_v2_0.proto` (the package every 2.0 writer from
//! lance 0.18 to 14.x uses for 2.0 pages; the message numbering did not change in between).
//! Only the messages a 2.0 page can hold are declared; the 2.1 mini-block messages that
//! share this package (`InlineBitpacking`, `Variable`, `Block`, ...) are kept as empty
//! markers so that a page naming one is recognised and refused by name.

use bytes::Bytes;

/// `google.protobuf.Any` type URL of a 2.0 page encoding.
pub(crate) const ARRAY_ENCODING_TYPE_URL: &str = "/lance.encodings.ArrayEncoding";
/// `google.protobuf.Any` type URL of a column-level encoding.
#[allow(dead_code)] // named for inspection of column metadata
pub(crate) const COLUMN_ENCODING_TYPE_URL: &str = "/lance.encodings.ColumnEncoding";

/// `lance.encodings.Buffer`: which buffer of the page (or column / file) holds data.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Buffer {
    /// Index into the buffers of `buffer_type`.
    #[prost(uint32, tag = "1")]
    pub(crate) buffer_index: u32,
    /// Page, column or file buffer.
    #[prost(enumeration = "BufferType", tag = "2")]
    pub(crate) buffer_type: i32,
}

/// `lance.encodings.Buffer.BufferType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub(crate) enum BufferType {
    /// A buffer of the page.
    Page = 0,
    /// A buffer of the column.
    Column = 1,
    /// A global buffer of the file.
    File = 2,
}

/// `lance.encodings.Nullable`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Nullable {
    /// Which of the three cases.
    #[prost(oneof = "nullable::Nullability", tags = "1, 2, 3")]
    pub(crate) nullability: Option<nullable::Nullability>,
}

/// Nested types of [`Nullable`].
pub(crate) mod nullable {
    /// No value is null.
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct NoNull {
        /// The values.
        #[prost(message, optional, boxed, tag = "1")]
        pub(crate) values: Option<Box<super::ArrayEncoding>>,
    }
    /// Every value is null.
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct AllNull {}
    /// Some values are null: a validity bitmap plus a slot for every value.
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct SomeNull {
        /// Validity (1 = valid), a 1-bit `Flat`.
        #[prost(message, optional, boxed, tag = "1")]
        pub(crate) validity: Option<Box<super::ArrayEncoding>>,
        /// The values (null slots hold anything).
        #[prost(message, optional, boxed, tag = "2")]
        pub(crate) values: Option<Box<super::ArrayEncoding>>,
    }
    /// `Nullable.nullability`.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub(crate) enum Nullability {
        /// No nulls.
        #[prost(message, tag = "1")]
        NoNulls(Box<NoNull>),
        /// Some nulls.
        #[prost(message, tag = "2")]
        SomeNulls(Box<SomeNull>),
        /// All null.
        #[prost(message, tag = "3")]
        AllNulls(AllNull),
    }
}

/// `lance.encodings.List`: offsets of a list column (items live in the child column).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct List {
    /// u64 end offset of each list, relative to the page's first item; a null list's
    /// offset has `null_offset_adjustment` added.
    #[prost(message, optional, boxed, tag = "1")]
    pub(crate) offsets: Option<Box<ArrayEncoding>>,
    /// Added to the offset of a null list (one more than the page's item span).
    #[prost(uint64, tag = "2")]
    pub(crate) null_offset_adjustment: u64,
    /// Items referenced by the page's lists.
    #[prost(uint64, tag = "3")]
    pub(crate) num_items: u64,
}

/// `lance.encodings.FixedSizeList`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct FixedSizeList {
    /// Items per list.
    #[prost(uint32, tag = "1")]
    pub(crate) dimension: u32,
    /// Whether the items carry validity (2.1 writers only).
    #[prost(bool, tag = "3")]
    pub(crate) has_validity: bool,
    /// The flattened items.
    #[prost(message, optional, boxed, tag = "2")]
    pub(crate) items: Option<Box<ArrayEncoding>>,
}

/// `lance.encodings.Compression`: general compression of a whole `Flat` buffer.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Compression {
    /// `"zstd"`, `"lz4"`, `"none"` (`"fsst"` is not a buffer compression).
    #[prost(string, tag = "1")]
    pub(crate) scheme: String,
    /// Compression level, when set.
    #[prost(int32, optional, tag = "2")]
    pub(crate) level: Option<i32>,
}

/// `lance.encodings.Flat`: fixed-width values (1 bit = LSB-first bitmap).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Flat {
    /// Bits per value (1 or a multiple of 8).
    #[prost(uint64, tag = "1")]
    pub(crate) bits_per_value: u64,
    /// Where the values are.
    #[prost(message, optional, tag = "2")]
    pub(crate) buffer: Option<Buffer>,
    /// Whole-buffer compression, if any.
    #[prost(message, optional, tag = "3")]
    pub(crate) compression: Option<Compression>,
}

/// `lance.encodings.Constant` (not written into 2.0 pages by the releases read).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Constant {
    /// The value.
    #[prost(bytes = "bytes", tag = "1")]
    pub(crate) value: Bytes,
}

/// `lance.encodings.Bitpacked`: values packed to a narrower bit width.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Bitpacked {
    /// Stored bits per value.
    #[prost(uint64, tag = "1")]
    pub(crate) compressed_bits_per_value: u64,
    /// Bits per value after unpacking.
    #[prost(uint64, tag = "2")]
    pub(crate) uncompressed_bits_per_value: u64,
    /// Where the packed bits are.
    #[prost(message, optional, tag = "3")]
    pub(crate) buffer: Option<Buffer>,
    /// Whether the values are signed (sign-extended on unpacking).
    #[prost(bool, tag = "4")]
    pub(crate) signed: bool,
}

/// `lance.encodings.BitpackedForNonNeg`: fastlanes-packed chunks of 1024 values.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct BitpackedForNonNeg {
    /// Stored bits per value.
    #[prost(uint64, tag = "1")]
    pub(crate) compressed_bits_per_value: u64,
    /// Bits per value after unpacking.
    #[prost(uint64, tag = "2")]
    pub(crate) uncompressed_bits_per_value: u64,
    /// Where the packed chunks are.
    #[prost(message, optional, tag = "3")]
    pub(crate) buffer: Option<Buffer>,
}

/// `lance.encodings.SimpleStruct`: a struct header column (no buffers).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct SimpleStruct {}

/// `lance.encodings.Binary`: u64 end offsets ("indices") then the value bytes.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Binary {
    /// End offset of each value; a null value's has `null_adjustment` added.
    #[prost(message, optional, boxed, tag = "1")]
    pub(crate) indices: Option<Box<ArrayEncoding>>,
    /// The bytes (an 8-bit `Flat`).
    #[prost(message, optional, boxed, tag = "2")]
    pub(crate) bytes: Option<Box<ArrayEncoding>>,
    /// Added to the offset of a null value (one more than the last offset).
    #[prost(uint64, tag = "3")]
    pub(crate) null_adjustment: u64,
}

/// `lance.encodings.Fsst`: FSST-compressed binary values.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Fsst {
    /// The compressed values as binary.
    #[prost(message, optional, boxed, tag = "1")]
    pub(crate) binary: Option<Box<ArrayEncoding>>,
    /// The serialized symbol table.
    #[prost(bytes = "bytes", tag = "2")]
    pub(crate) symbol_table: Bytes,
}

/// `lance.encodings.Dictionary`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Dictionary {
    /// Index of each value's item.
    #[prost(message, optional, boxed, tag = "1")]
    pub(crate) indices: Option<Box<ArrayEncoding>>,
    /// The dictionary items.
    #[prost(message, optional, boxed, tag = "2")]
    pub(crate) items: Option<Box<ArrayEncoding>>,
    /// Number of items.
    #[prost(uint32, tag = "3")]
    pub(crate) num_dictionary_items: u32,
}

/// `lance.encodings.PackedStruct`: fixed-width struct fields packed row by row.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct PackedStruct {
    /// Encoding of each field (fixed width).
    #[prost(message, repeated, tag = "1")]
    pub(crate) inner: Vec<ArrayEncoding>,
    /// Where the packed rows are.
    #[prost(message, optional, tag = "2")]
    pub(crate) buffer: Option<Buffer>,
}

/// `lance.encodings.FixedSizeBinary`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct FixedSizeBinary {
    /// The bytes of all values (an 8-bit encoding).
    #[prost(message, optional, boxed, tag = "1")]
    pub(crate) bytes: Option<Box<ArrayEncoding>>,
    /// Bytes per value.
    #[prost(uint32, tag = "2")]
    pub(crate) byte_width: u32,
}

/// A 2.1 mini-block message of the same package; never the encoding of a 2.0 page.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct MiniBlockOnly {}

/// `lance.encodings.ArrayEncoding`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ArrayEncoding {
    /// The encoding.
    #[prost(
        oneof = "array_encoding::ArrayEncoding",
        tags = "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21"
    )]
    pub(crate) array_encoding: Option<array_encoding::ArrayEncoding>,
}

/// Nested types of [`ArrayEncoding`].
pub(crate) mod array_encoding {
    use super::*;

    /// `ArrayEncoding.array_encoding`.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub(crate) enum ArrayEncoding {
        /// Fixed-width values.
        #[prost(message, tag = "1")]
        Flat(Flat),
        /// Validity around values.
        #[prost(message, tag = "2")]
        Nullable(Box<Nullable>),
        /// Fixed-size lists.
        #[prost(message, tag = "3")]
        FixedSizeList(Box<FixedSizeList>),
        /// List offsets.
        #[prost(message, tag = "4")]
        List(Box<List>),
        /// Struct header.
        #[prost(message, tag = "5")]
        Struct(SimpleStruct),
        /// Variable-width values.
        #[prost(message, tag = "6")]
        Binary(Box<Binary>),
        /// Dictionary.
        #[prost(message, tag = "7")]
        Dictionary(Box<Dictionary>),
        /// FSST.
        #[prost(message, tag = "8")]
        Fsst(Box<Fsst>),
        /// Packed struct.
        #[prost(message, tag = "9")]
        PackedStruct(PackedStruct),
        /// Bit-packed.
        #[prost(message, tag = "10")]
        Bitpacked(Bitpacked),
        /// Fixed-size binary.
        #[prost(message, tag = "11")]
        FixedSizeBinary(Box<FixedSizeBinary>),
        /// Fastlanes bit-packed.
        #[prost(message, tag = "12")]
        BitpackedForNonNeg(BitpackedForNonNeg),
        /// Constant.
        #[prost(message, tag = "13")]
        Constant(Constant),
        /// 2.1 mini-block message (refused in 2.0 pages).
        #[prost(message, tag = "14")]
        InlineBitpacking(MiniBlockOnly),
        /// 2.1 mini-block message (refused in 2.0 pages).
        #[prost(message, tag = "15")]
        OutOfLineBitpacking(MiniBlockOnly),
        /// 2.1 mini-block message (refused in 2.0 pages).
        #[prost(message, tag = "16")]
        Variable(MiniBlockOnly),
        /// 2.1 mini-block message (refused in 2.0 pages).
        #[prost(message, tag = "17")]
        PackedStructFixedWidthMiniBlock(MiniBlockOnly),
        /// 2.1 mini-block message (refused in 2.0 pages).
        #[prost(message, tag = "18")]
        Block(MiniBlockOnly),
        /// 2.1 mini-block message (refused in 2.0 pages).
        #[prost(message, tag = "19")]
        Rle(MiniBlockOnly),
        /// 2.1 mini-block message (refused in 2.0 pages).
        #[prost(message, tag = "20")]
        GeneralMiniBlock(MiniBlockOnly),
        /// 2.1 mini-block message (refused in 2.0 pages).
        #[prost(message, tag = "21")]
        ByteStreamSplit(MiniBlockOnly),
    }
}
