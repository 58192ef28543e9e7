//! Mini-block pages (2.1 / 2.2 `MiniBlockLayout`) for flat columns, written the way
//! lance-encoding 14.0.2 serializes them (`serialize_miniblocks`):
//!
//! * fixed-width values: `Flat(bits)`, 4 KiB of values per chunk (512 u64, 1024 u32);
//! * variable-width values: `Variable(offsets: Flat(32))` (the legacy mini-block form:
//!   `n+1` u32 offsets measured from the buffer start, then the bytes, padded to 4), about
//!   4 KiB per chunk, power-of-two value counts in every chunk but the last;
//! * nulls: layer `NULLABLE_ITEM` and def levels `Flat(16)` (1 = null) per chunk; a page
//!   without nulls is `ALL_VALID_ITEM` with no def buffer.
//!
//! Chunk framing: `u16 num_levels`, `u16 def_bytes` (with def), one `u16` (2.1) or `u32`
//! (2.2) size per value buffer, padding to 8 (`0xFE`), then the def levels and the value
//! buffer, each padded to 8. The chunk metadata word is `((bytes / 8 - 1) << 4) | log2(n)`
//! (0 in the last chunk). Pure: array in, page buffers and layout out.

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;

use crate::error::{Error, Result};
use crate::lance::proto::encodings::{
    compressive_encoding::Compression, page_layout, CompressiveEncoding, Flat, MiniBlockLayout,
    PageLayout, RepDefLayer, Variable,
};

/// Most values in one chunk (lance's default `LANCE_MINIBLOCK_MAX_VALUES`).
pub(crate) const MAX_CHUNK_VALUES: usize = 4096;

/// Value bytes a chunk aims for (lance: "about 4 KiB").
pub(crate) const TARGET_CHUNK_BYTES: usize = 4096;

/// Padding byte inside a chunk (lance's `FILL_BYTE`).
const FILL_BYTE: u8 = 0xFE;

/// Chunk alignment inside the chunk data buffer.
const CHUNK_ALIGN: usize = 8;

/// One encoded page: its buffers (chunk metadata words, chunk data) and its layout.
#[derive(Debug, Clone)]
pub(crate) struct EncodedPage {
    /// Page buffers in order: 0 = chunk metadata words, 1 = chunk data.
    pub(crate) buffers: Vec<Vec<u8>>,
    /// The page's `PageLayout`.
    pub(crate) layout: PageLayout,
    /// Rows in the page.
    pub(crate) rows: u64,
}

/// The values of a page as byte slices per item (fixed width or variable).
enum Values<'a> {
    /// `width` bytes per item, back to back.
    Fixed { data: &'a [u8], width: usize },
    /// Item `i` is `data[offsets[i]..offsets[i+1]]` (relative offsets).
    Variable { data: &'a [u8], offsets: Vec<usize> },
}

impl Values<'_> {
    /// Bytes of items `[start, start + n)`.
    fn bytes(&self, start: usize, n: usize) -> usize {
        match self {
            Values::Fixed { width, .. } => width * n,
            Values::Variable { offsets, .. } => offsets[start + n] - offsets[start],
        }
    }
}

/// Whether `data_type` can be written by [`encode_page`].
pub(crate) fn supports(data_type: &DataType) -> bool {
    fixed_width(data_type).is_some() || matches!(data_type, DataType::Binary | DataType::Utf8)
}

/// Byte width of a supported fixed-width type.
fn fixed_width(data_type: &DataType) -> Option<usize> {
    Some(match data_type {
        DataType::Int8 | DataType::UInt8 => 1,
        DataType::Int16 | DataType::UInt16 => 2,
        DataType::Int32 | DataType::UInt32 | DataType::Float32 => 4,
        DataType::Int64 | DataType::UInt64 | DataType::Float64 => 8,
        _ => return None,
    })
}

/// Encode `array` (one page, at least one row) as a mini-block page; `large_chunk` is
/// true for 2.2 files (u32 chunk words and buffer sizes), false for 2.1.
pub(crate) fn encode_page(array: &ArrayRef, large_chunk: bool) -> Result<EncodedPage> {
    let n = array.len();
    if n == 0 {
        return Err(Error::InvalidArgument(
            "a page needs at least one row".into(),
        ));
    }
    let data = array.to_data();
    let values = match (fixed_width(array.data_type()), array.data_type()) {
        (Some(width), _) => {
            let start = data.offset() * width;
            Values::Fixed {
                data: &data.buffers()[0].as_slice()[start..start + n * width],
                width,
            }
        }
        (None, DataType::Binary) => variable_values(
            array.as_binary::<i32>().value_offsets(),
            array.as_binary::<i32>().values(),
        ),
        (None, DataType::Utf8) => {
            let s = array.as_string::<i32>();
            variable_values(s.value_offsets(), s.values())
        }
        (None, other) => {
            return Err(Error::unsupported(format!(
                "the Lance writer cannot write {other} columns"
            )))
        }
    };
    let nulls = array.logical_nulls().filter(|n| n.null_count() > 0);
    let chunks = plan_chunks(&values, n);
    let mut meta = Vec::new();
    let mut out = Vec::new();
    for (i, &(start, count)) in chunks.iter().enumerate() {
        let last = i + 1 == chunks.len();
        let def = nulls.as_ref().map(|nb| {
            (start..start + count)
                .flat_map(|r| u16::from(nb.is_null(r)).to_le_bytes())
                .collect::<Vec<u8>>()
        });
        let buffer = value_buffer(&values, start, count);
        let chunk_start = out.len();
        write_chunk(&mut out, count, def.as_deref(), &buffer, large_chunk)?;
        let bytes = out.len() - chunk_start;
        let log2 = if last {
            0
        } else {
            count.trailing_zeros() as u64
        };
        let word = ((bytes / CHUNK_ALIGN - 1) as u64) << 4 | log2;
        if large_chunk {
            meta.extend_from_slice(&(word as u32).to_le_bytes());
        } else {
            meta.extend_from_slice(&(word as u16).to_le_bytes());
        }
    }
    Ok(EncodedPage {
        buffers: vec![meta, out],
        layout: layout(array.data_type(), nulls.is_some(), n as u64, large_chunk),
        rows: n as u64,
    })
}

fn variable_values<'a>(offsets: &[i32], data: &'a [u8]) -> Values<'a> {
    let base = offsets[0] as usize;
    Values::Variable {
        data: &data[base..*offsets.last().expect("offsets") as usize],
        offsets: offsets.iter().map(|&o| o as usize - base).collect(),
    }
}

/// `(first item, items)` of each chunk: power-of-two counts except the last.
fn plan_chunks(values: &Values<'_>, n: usize) -> Vec<(usize, usize)> {
    let mut chunks = Vec::new();
    let mut start = 0;
    while start < n {
        let remaining = n - start;
        let count = match values {
            Values::Fixed { width, .. } => {
                let per = (TARGET_CHUNK_BYTES / width).clamp(1, MAX_CHUNK_VALUES);
                per.min(remaining)
            }
            Values::Variable { .. } => {
                if remaining <= MAX_CHUNK_VALUES
                    && values.bytes(start, remaining) <= TARGET_CHUNK_BYTES
                {
                    remaining
                } else {
                    let mut k = 1usize << remaining.min(MAX_CHUNK_VALUES).ilog2();
                    while k > 1 && values.bytes(start, k) > TARGET_CHUNK_BYTES {
                        k /= 2;
                    }
                    k
                }
            }
        };
        chunks.push((start, count));
        start += count;
    }
    chunks
}

/// The value buffer of one chunk.
fn value_buffer(values: &Values<'_>, start: usize, count: usize) -> Vec<u8> {
    match values {
        Values::Fixed { data, width } => data[start * width..(start + count) * width].to_vec(),
        Values::Variable { data, offsets } => {
            let header = (count + 1) * 4;
            let base = offsets[start];
            let mut out = Vec::with_capacity(header + offsets[start + count] - base + 3);
            for o in &offsets[start..=start + count] {
                out.extend_from_slice(&((header + o - base) as u32).to_le_bytes());
            }
            out.extend_from_slice(&data[base..offsets[start + count]]);
            while !out.len().is_multiple_of(4) {
                out.push(0x48);
            }
            out
        }
    }
}

fn pad(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(CHUNK_ALIGN) {
        out.push(FILL_BYTE);
    }
}

/// Append one chunk (header, def levels, one value buffer) to `out`.
fn write_chunk(
    out: &mut Vec<u8>,
    count: usize,
    def: Option<&[u8]>,
    buffer: &[u8],
    large_chunk: bool,
) -> Result<()> {
    let start = out.len();
    let too_big = |what: &str, size: usize| {
        Error::unsupported(format!(
            "mini-block {what} of {size} bytes exceeds the {} format's limit (a value is too long)",
            if large_chunk { "2.2" } else { "2.1" }
        ))
    };
    let num_levels = if def.is_some() { count as u16 } else { 0 };
    out.extend_from_slice(&num_levels.to_le_bytes());
    if let Some(def) = def {
        let size = u16::try_from(def.len()).map_err(|_| too_big("def buffer", def.len()))?;
        out.extend_from_slice(&size.to_le_bytes());
    }
    if large_chunk {
        let size = u32::try_from(buffer.len()).map_err(|_| too_big("buffer", buffer.len()))?;
        out.extend_from_slice(&size.to_le_bytes());
    } else {
        let size = u16::try_from(buffer.len()).map_err(|_| too_big("buffer", buffer.len()))?;
        out.extend_from_slice(&size.to_le_bytes());
    }
    pad(out);
    if let Some(def) = def {
        out.extend_from_slice(def);
        pad(out);
    }
    out.extend_from_slice(buffer);
    pad(out);
    let bytes = out.len() - start;
    let limit = if large_chunk { 1usize << 31 } else { 32 * 1024 };
    if bytes > limit {
        return Err(too_big("chunk", bytes));
    }
    Ok(())
}

fn encoding(compression: Compression) -> CompressiveEncoding {
    CompressiveEncoding {
        compression: Some(compression),
    }
}

fn flat(bits: u64) -> CompressiveEncoding {
    encoding(Compression::Flat(Flat {
        bits_per_value: bits,
        data: None,
    }))
}

/// The page layout of a flat mini-block page.
fn layout(data_type: &DataType, has_nulls: bool, n: u64, large_chunk: bool) -> PageLayout {
    let value_compression = match fixed_width(data_type) {
        Some(w) => flat(8 * w as u64),
        None => encoding(Compression::Variable(Variable {
            offsets: Some(Box::new(flat(32))),
            values: None,
        })),
    };
    let layer = if has_nulls {
        RepDefLayer::RepdefNullableItem
    } else {
        RepDefLayer::RepdefAllValidItem
    };
    PageLayout {
        layout: Some(page_layout::Layout::MiniBlockLayout(MiniBlockLayout {
            rep_compression: None,
            def_compression: has_nulls.then(|| flat(16)),
            value_compression: Some(value_compression),
            dictionary: None,
            num_dictionary_items: 0,
            layers: vec![layer as i32],
            num_buffers: 1,
            repetition_index_depth: 0,
            num_items: n,
            has_large_chunk: large_chunk,
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{BinaryArray, UInt32Array};
    use std::sync::Arc;

    #[test]
    fn u32_page_matches_the_documented_bytes() {
        // lance-file-format.md 2.2: 10 u32 values, v2.2 word 50 00 00 00, chunk
        // 00 00 | 28 00 00 00 | fe fe | 40 value bytes; v2.1 word 50 00, chunk
        // 00 00 | 28 00 | fe fe fe fe | 40 value bytes.
        let array: ArrayRef = Arc::new(UInt32Array::from_iter_values(0..10));
        let page = encode_page(&array, true).unwrap();
        assert_eq!(page.buffers[0], [0x50, 0, 0, 0]);
        assert_eq!(&page.buffers[1][..8], &[0, 0, 0x28, 0, 0, 0, 0xFE, 0xFE]);
        assert_eq!(page.buffers[1].len(), 48);
        let page = encode_page(&array, false).unwrap();
        assert_eq!(page.buffers[0], [0x50, 0]);
        assert_eq!(
            &page.buffers[1][..8],
            &[0, 0, 0x28, 0, 0xFE, 0xFE, 0xFE, 0xFE]
        );
    }

    #[test]
    fn variable_chunks_are_powers_of_two_but_the_last() {
        let values: Vec<Vec<u8>> = (0..5000).map(|i| vec![b'x'; i % 40]).collect();
        let array: ArrayRef = Arc::new(BinaryArray::from_iter_values(values.iter()));
        let values = variable_values(
            array.as_binary::<i32>().value_offsets(),
            array.as_binary::<i32>().values(),
        );
        let chunks = plan_chunks(&values, 5000);
        assert!(chunks.len() > 10);
        for (i, (_, n)) in chunks.iter().enumerate() {
            assert!(i + 1 == chunks.len() || n.is_power_of_two(), "{chunks:?}");
        }
        assert_eq!(chunks.iter().map(|c| c.1).sum::<usize>(), 5000);
    }

    #[test]
    fn a_value_too_long_for_2_1_is_refused() {
        let array: ArrayRef = Arc::new(BinaryArray::from_iter_values([vec![1u8; 70_000]]));
        let err = encode_page(&array, false).unwrap_err();
        assert!(matches!(err, Error::Unsupported { .. }), "{err}");
        assert!(encode_page(&array, true).is_ok());
    }
}
