//! `lance.table.RowIdSequence` and its parts (lance-table 14.0.2 `protos/rowids.proto`).

/// `RowIdSequence`: the row ids of a fragment's physical rows, in order, as segments.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct RowIdSequence {
    /// The segments, concatenated.
    #[prost(message, repeated, tag = "1")]
    pub segments: Vec<U64Segment>,
}

/// `U64Segment`: one run of row ids.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct U64Segment {
    /// The encoding.
    #[prost(oneof = "Segment", tags = "1, 2, 3, 4, 5")]
    pub segment: Option<Segment>,
}

/// The encodings of a [`U64Segment`].
#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum Segment {
    /// `start..end`.
    #[prost(message, tag = "1")]
    Range(Range),
    /// `start..end` without the (absolute, sorted) holes.
    #[prost(message, tag = "2")]
    RangeWithHoles(RangeWithHoles),
    /// The values of `start..end` whose bit is set (least significant bit first).
    #[prost(message, tag = "3")]
    RangeWithBitmap(RangeWithBitmap),
    /// Strictly increasing values.
    #[prost(message, tag = "4")]
    SortedArray(EncodedU64Array),
    /// Values in any order.
    #[prost(message, tag = "5")]
    Array(EncodedU64Array),
}

/// `U64Segment.Range`: `start..end` (end exclusive).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Range {
    /// First value.
    #[prost(uint64, tag = "1")]
    pub start: u64,
    /// One past the last value.
    #[prost(uint64, tag = "2")]
    pub end: u64,
}

/// `U64Segment.RangeWithHoles`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct RangeWithHoles {
    /// First value of the range.
    #[prost(uint64, tag = "1")]
    pub start: u64,
    /// One past the last value of the range.
    #[prost(uint64, tag = "2")]
    pub end: u64,
    /// The values of the range that are absent, sorted.
    #[prost(message, optional, tag = "3")]
    pub holes: Option<EncodedU64Array>,
}

/// `U64Segment.RangeWithBitmap`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct RangeWithBitmap {
    /// First value of the range.
    #[prost(uint64, tag = "1")]
    pub start: u64,
    /// One past the last value of the range.
    #[prost(uint64, tag = "2")]
    pub end: u64,
    /// One bit per value of the range, least significant bit first.
    #[prost(bytes = "vec", tag = "3")]
    pub bitmap: Vec<u8>,
}

/// `EncodedU64Array`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct EncodedU64Array {
    /// The width.
    #[prost(oneof = "Array", tags = "1, 2, 3")]
    pub array: Option<Array>,
}

/// The widths of an [`EncodedU64Array`].
#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum Array {
    /// `base` + little-endian u16 offsets.
    #[prost(message, tag = "1")]
    U16(OffsetArray),
    /// `base` + little-endian u32 offsets.
    #[prost(message, tag = "2")]
    U32(OffsetArray),
    /// Little-endian u64 values.
    #[prost(message, tag = "3")]
    U64(U64Array),
}

/// `EncodedU64Array.U16Array` / `U32Array`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct OffsetArray {
    /// Added to every offset.
    #[prost(uint64, tag = "1")]
    pub base: u64,
    /// Little-endian offsets.
    #[prost(bytes = "vec", tag = "2")]
    pub offsets: Vec<u8>,
}

/// `EncodedU64Array.U64Array`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct U64Array {
    /// Little-endian values.
    #[prost(bytes = "vec", tag = "2")]
    pub values: Vec<u8>,
}
