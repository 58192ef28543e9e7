//! Mini-block pages: values compressed in small chunks (≤ 32 KiB in 2.1) addressed by a
//! table of chunk metadata words; optional page dictionary and repetition index.
//!
//! Buffers: 0 = chunk metadata words (u16 in 2.1, u32 with `has_large_chunk`), 1 = chunk
//! data, 2 = dictionary (if any), last = repetition index (if `repetition_index_depth > 0`).
//! Word = `((chunk_bytes / 8 - 1) << 4) | log2(items)`; the last chunk holds the remainder.
//!
//! Chunk framing: `u16 num_levels`, `u16 rep_bytes` (if rep), `u16 def_bytes` (if def),
//! `num_buffers` × (u16 | u32) buffer sizes, pad to 8; then rep, def and each value buffer,
//! each padded to 8.

use std::ops::Range;

use bytes::Bytes;

use super::values::LeafBuilder;
use super::{
    buffer, decode_layers, describe_opt, flat_nullability, FlatNullability, PageReadPlan,
    PlanDetail, RowRanges,
};
use crate::error::{Error, Result};
use crate::lance::compression::{self, DecodedValues};
use crate::lance::proto::encodings::{self as pb, CompressiveEncoding, RepDefLayer};

/// Alignment of chunks and of the pieces inside a chunk.
const MINIBLOCK_ALIGNMENT: usize = 8;

/// A mini-block page.
#[derive(Debug, Clone, PartialEq)]
pub struct MiniBlockPage {
    /// Block encoding of per-chunk repetition levels.
    pub rep_compression: Option<CompressiveEncoding>,
    /// Block encoding of per-chunk definition levels.
    pub def_compression: Option<CompressiveEncoding>,
    /// Mini-block encoding of the values.
    pub value_compression: CompressiveEncoding,
    /// Block encoding of the page dictionary.
    pub dictionary: Option<CompressiveEncoding>,
    /// Dictionary entries.
    pub num_dictionary_items: u64,
    /// Structural layers, inner-most first.
    pub layers: Vec<RepDefLayer>,
    /// Value buffers per chunk.
    pub num_buffers: usize,
    /// Repetition index depth (0 = none).
    pub repetition_index_depth: u32,
    /// Visible items in the page.
    pub num_items: u64,
    /// u32 chunk words and buffer sizes (else u16).
    pub has_large_chunk: bool,
    /// Absolute range of the chunk metadata words.
    pub chunk_meta: Range<u64>,
    /// Absolute range of the chunk data.
    pub chunk_data: Range<u64>,
    /// Absolute range of the dictionary buffer.
    pub dictionary_buffer: Option<Range<u64>>,
    /// Absolute range of the repetition index.
    pub repetition_index: Option<Range<u64>>,
    /// Top-level rows of the page.
    pub page_rows: u64,
}

/// Most value buffers per chunk accepted (real encodings use 1–3).
const MAX_BUFFERS_PER_CHUNK: u64 = 16;

impl MiniBlockPage {
    /// Build from the protobuf and the page's buffers.
    pub fn new(
        layout: pb::MiniBlockLayout,
        buffers: &[Range<u64>],
        page_rows: u64,
    ) -> Result<Self> {
        let value_compression = layout
            .value_compression
            .ok_or_else(|| Error::corrupt("mini-block page has no value compression"))?;
        let expected_buffers = compression::miniblock_buffer_count(&value_compression)?;
        crate::ensure_corrupt!(
            layout.num_buffers <= MAX_BUFFERS_PER_CHUNK && layout.num_buffers as usize == expected_buffers,
            "mini-block page declares {} value buffers per chunk; its encoding uses {expected_buffers}",
            layout.num_buffers
        );
        let mut next = 2;
        let dictionary_buffer = if layout.dictionary.is_some() {
            next = 3;
            Some(buffer(buffers, 2, "dictionary")?)
        } else {
            None
        };
        let repetition_index = if layout.repetition_index_depth > 0 {
            crate::ensure_corrupt!(
                buffers.len() == next + 1,
                "mini-block page with a repetition index has {} buffers, expected {}",
                buffers.len(),
                next + 1
            );
            Some(buffer(buffers, next, "repetition index")?)
        } else {
            crate::ensure_corrupt!(
                buffers.len() == next,
                "mini-block page has {} buffers, expected {next}",
                buffers.len()
            );
            None
        };
        Ok(Self {
            rep_compression: layout.rep_compression,
            def_compression: layout.def_compression,
            value_compression,
            dictionary: layout.dictionary,
            num_dictionary_items: layout.num_dictionary_items,
            layers: decode_layers(&layout.layers)?,
            num_buffers: layout.num_buffers as usize,
            repetition_index_depth: layout.repetition_index_depth,
            num_items: layout.num_items,
            has_large_chunk: layout.has_large_chunk,
            chunk_meta: buffer(buffers, 0, "chunk metadata")?,
            chunk_data: buffer(buffers, 1, "chunk data")?,
            dictionary_buffer,
            repetition_index,
            page_rows,
        })
    }

    /// Every compressive encoding of the page.
    pub fn encodings(&self) -> Vec<&CompressiveEncoding> {
        let mut all = vec![&self.value_compression];
        all.extend(self.dictionary.iter());
        all.extend(self.rep_compression.iter());
        all.extend(self.def_compression.iter());
        all
    }

    /// Compression trees for `inspect`.
    pub fn describe(&self) -> String {
        let mut s = format!("values: {}", compression::describe(&self.value_compression));
        if let Some(d) = &self.dictionary {
            s.push_str(&format!(
                "; dictionary({} items): {}",
                self.num_dictionary_items,
                compression::describe(d)
            ));
        }
        if self.rep_compression.is_some() {
            s.push_str(&format!("; rep: {}", describe_opt(&self.rep_compression)));
        }
        if self.def_compression.is_some() {
            s.push_str(&format!("; def: {}", describe_opt(&self.def_compression)));
        }
        s
    }

    /// Page init: chunk metadata, dictionary, repetition index.
    pub fn init_ranges(&self) -> Vec<Range<u64>> {
        let mut ranges = vec![self.chunk_meta.clone()];
        ranges.extend(self.dictionary_buffer.clone());
        ranges.extend(self.repetition_index.clone());
        ranges
    }

    /// Decode the chunk table (and dictionary) from the init buffers.
    pub fn decode_init(&self, bytes: &[Bytes]) -> Result<MiniBlockInit> {
        let mut parts = bytes.iter();
        let meta = parts
            .next()
            .ok_or_else(|| Error::corrupt("missing chunk metadata"))?;
        let dictionary_bytes = match self.dictionary_buffer {
            Some(_) => Some(
                parts
                    .next()
                    .ok_or_else(|| Error::corrupt("missing dictionary buffer"))?,
            ),
            None => None,
        };
        let rep_index = match self.repetition_index {
            Some(_) => Some(
                parts
                    .next()
                    .ok_or_else(|| Error::corrupt("missing repetition index"))?,
            ),
            None => None,
        };
        let chunks = ChunkTable::parse(
            meta,
            self.has_large_chunk,
            self.num_items,
            self.chunk_data.end - self.chunk_data.start,
        )
        .map_err(|e| e.context("chunk metadata"))?;
        let dictionary = match (&self.dictionary, dictionary_bytes) {
            (Some(encoding), Some(payload)) => {
                let n = usize::try_from(self.num_dictionary_items)
                    .map_err(|_| Error::corrupt("dictionary item count overflows"))?;
                // A dictionary item takes at least one bit of payload or is a fixed-size
                // value; refuse counts the payload cannot possibly hold before allocating.
                crate::ensure_corrupt!(
                    n as u128 <= (payload.len() as u128 + 1) * 8 * 4096,
                    "dictionary of {n} items in {} bytes",
                    payload.len()
                );
                let values = compression::decode_block(encoding, Some(payload.clone()), n)
                    .map_err(|e| e.context("dictionary"))?;
                crate::ensure_corrupt!(
                    super::values::decoded_len(&values) == n,
                    "dictionary decoded {} items, layout says {n}",
                    super::values::decoded_len(&values)
                );
                Some(values)
            }
            _ => None,
        };
        let rows = match rep_index {
            Some(index) => Some(
                super::miniblock_nested::parse_repetition_index(
                    index,
                    chunks.chunks.len(),
                    self.repetition_index_depth,
                    self.page_rows,
                )
                .map_err(|e| e.context("repetition index"))?,
            ),
            None => None,
        };
        Ok(MiniBlockInit {
            chunks,
            dictionary,
            rows,
        })
    }

    /// Chunks holding page-local `rows`, as runs of consecutive chunks (one byte range each).
    pub fn plan(&self, init: &MiniBlockInit, rows: &RowRanges) -> Result<PageReadPlan> {
        flat_nullability(&self.layers)?;
        crate::ensure_corrupt!(
            self.num_items == self.page_rows,
            "flat mini-block page has {} items but {} rows",
            self.num_items,
            self.page_rows
        );
        let runs = init.chunks.chunk_runs(rows)?;
        let ranges = runs
            .iter()
            .map(|run| {
                let start = init.chunks.chunks[run.start].byte_start;
                let last = &init.chunks.chunks[run.end - 1];
                self.chunk_data.start + start..self.chunk_data.start + last.byte_start + last.bytes
            })
            .collect();
        Ok(PageReadPlan {
            ranges,
            detail: PlanDetail::MiniBlockChunks(runs),
            projection: None,
        })
    }

    /// Decode the fetched chunk runs and append the wanted rows to `out`.
    pub fn decode_into(
        &self,
        init: &MiniBlockInit,
        rows: &RowRanges,
        plan: &PageReadPlan,
        bytes: &[Bytes],
        out: &mut LeafBuilder,
    ) -> Result<()> {
        let nullability = flat_nullability(&self.layers)?;
        let PlanDetail::MiniBlockChunks(runs) = &plan.detail else {
            return Err(Error::corrupt(
                "mini-block page got a plan of another layout",
            ));
        };
        let mut wanted = rows.iter().peekable();
        for (run, run_bytes) in runs.iter().zip(bytes) {
            let run_start = init
                .chunks
                .chunks
                .get(run.start)
                .map_or(0, |c| c.byte_start);
            for index in run.clone() {
                let chunk = init
                    .chunks
                    .chunks
                    .get(index)
                    .ok_or_else(|| Error::corrupt("chunk index out of range"))?;
                let lo = (chunk.byte_start - run_start) as usize;
                let hi = lo + chunk.bytes as usize;
                crate::ensure_corrupt!(
                    hi <= run_bytes.len(),
                    "chunk {index} extends past the fetched bytes"
                );
                let items = chunk.item_start..chunk.item_start + chunk.items;
                let decoded = self
                    .decode_chunk(&run_bytes.slice(lo..hi), chunk.items as usize, nullability)
                    .map_err(|e| e.context(format!("chunk {index}")))?;
                // Skip wanted ranges that ended before this chunk; emit the overlaps.
                while let Some(r) = wanted.peek() {
                    if r.end <= items.start {
                        wanted.next();
                        continue;
                    }
                    if r.start >= items.end {
                        break;
                    }
                    let lo = r.start.max(items.start) - items.start;
                    let hi = r.end.min(items.end) - items.start;
                    self.emit(init, &decoded, lo as usize..hi as usize, out)?;
                    if r.end <= items.end {
                        wanted.next();
                    } else {
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    fn emit(
        &self,
        init: &MiniBlockInit,
        chunk: &DecodedChunk,
        range: Range<usize>,
        out: &mut LeafBuilder,
    ) -> Result<()> {
        let validity = chunk
            .def
            .as_ref()
            .map(|def| {
                def.get(range.clone())
                    .map(|d| d.iter().map(|&l| l == 0).collect::<Vec<_>>())
            })
            .map(|v| v.ok_or_else(|| Error::corrupt("fewer def levels than values")))
            .transpose()?;
        match &init.dictionary {
            Some(dictionary) => {
                out.push_dictionary(dictionary, &chunk.values, range, validity.as_deref())
            }
            None => out.push_values(&chunk.values, range, validity.as_deref()),
        }
    }

    fn decode_chunk(
        &self,
        chunk: &Bytes,
        num_values: usize,
        nullability: FlatNullability,
    ) -> Result<DecodedChunk> {
        let frame = ChunkFrame::parse(
            chunk,
            self.rep_compression.is_some(),
            self.def_compression.is_some(),
            self.num_buffers,
            self.has_large_chunk,
        )?;
        let values =
            compression::decode_miniblock(&self.value_compression, &frame.buffers, num_values)?;
        crate::ensure_corrupt!(
            super::values::decoded_len(&values) == num_values,
            "decoded {} values, chunk holds {num_values}",
            super::values::decoded_len(&values)
        );
        let def = match (&self.def_compression, frame.def) {
            (Some(encoding), Some(payload)) => {
                crate::ensure_corrupt!(
                    frame.num_levels == num_values,
                    "flat chunk has {} levels for {num_values} values",
                    frame.num_levels
                );
                let levels = compression::decode_levels(encoding, Some(payload), frame.num_levels)?;
                crate::ensure_corrupt!(
                    levels.len() == num_values,
                    "decoded {} def levels for {num_values} values",
                    levels.len()
                );
                if let Some(bad) = levels.iter().find(|&&l| l > 1) {
                    return Err(Error::corrupt(format!(
                        "def level {bad} in a flat nullable page"
                    )));
                }
                Some(levels)
            }
            _ => None,
        };
        if nullability == FlatNullability::Nullable
            && def.is_none()
            && self.def_compression.is_some()
        {
            return Err(Error::corrupt("nullable chunk without def levels"));
        }
        Ok(DecodedChunk { values, def })
    }
}

pub(crate) struct DecodedChunk {
    pub(crate) values: DecodedValues,
    pub(crate) def: Option<Vec<u16>>,
}

/// The pieces of one chunk.
#[derive(Debug)]
pub(crate) struct ChunkFrame {
    /// Rep/def levels in the chunk.
    pub num_levels: usize,
    /// Repetition level payload.
    pub rep: Option<Bytes>,
    /// Definition level payload.
    pub def: Option<Bytes>,
    /// Value buffers, each sliced to its declared size.
    pub buffers: Vec<Bytes>,
}

fn pad8(n: usize) -> usize {
    n.div_ceil(MINIBLOCK_ALIGNMENT) * MINIBLOCK_ALIGNMENT
}

impl ChunkFrame {
    /// Split a chunk into its level payloads and value buffers (all sizes checked).
    pub(crate) fn parse(
        chunk: &Bytes,
        has_rep: bool,
        has_def: bool,
        num_buffers: usize,
        large: bool,
    ) -> Result<Self> {
        let size_width = if large { 4 } else { 2 };
        let header_len =
            2 + 2 * usize::from(has_rep) + 2 * usize::from(has_def) + num_buffers * size_width;
        crate::ensure_corrupt!(
            chunk.len() >= header_len,
            "chunk of {} bytes is shorter than its {header_len}-byte header",
            chunk.len()
        );
        let u16_at = |at: usize| usize::from(u16::from_le_bytes([chunk[at], chunk[at + 1]]));
        let num_levels = u16_at(0);
        let mut at = 2;
        let mut take_u16 = |present: bool| {
            present.then(|| {
                let v = u16_at(at);
                at += 2;
                v
            })
        };
        let rep_bytes = take_u16(has_rep);
        let def_bytes = take_u16(has_def);
        let mut sizes = Vec::with_capacity(num_buffers);
        for _ in 0..num_buffers {
            let size = if large {
                u32::from_le_bytes([chunk[at], chunk[at + 1], chunk[at + 2], chunk[at + 3]])
                    as usize
            } else {
                u16_at(at)
            };
            at += size_width;
            sizes.push(size);
        }
        let mut offset = pad8(at);
        let mut take = |size: usize, what: &str| -> Result<Bytes> {
            let end = offset
                .checked_add(size)
                .filter(|&e| e <= chunk.len())
                .ok_or_else(|| {
                    Error::corrupt(format!(
                        "{what} of {size} bytes at {offset} overruns the {}-byte chunk",
                        chunk.len()
                    ))
                })?;
            let piece = chunk.slice(offset..end);
            offset = pad8(end);
            Ok(piece)
        };
        let rep = rep_bytes.map(|n| take(n, "rep levels")).transpose()?;
        let def = def_bytes.map(|n| take(n, "def levels")).transpose()?;
        let buffers = sizes
            .into_iter()
            .enumerate()
            .map(|(i, n)| take(n, &format!("value buffer {i}")))
            .collect::<Result<_>>()?;
        Ok(Self {
            num_levels,
            rep,
            def,
            buffers,
        })
    }
}

/// Decoded page-init data of a mini-block page.
#[derive(Debug, Clone)]
pub struct MiniBlockInit {
    /// Where each chunk is and which items it holds.
    pub chunks: ChunkTable,
    /// The decoded page dictionary.
    pub dictionary: Option<DecodedValues>,
    /// Rows of each chunk, from the repetition index (pages with lists).
    pub rows: Option<Vec<super::miniblock_nested::ChunkRows>>,
}

impl MiniBlockInit {
    /// Approximate heap size.
    pub fn deep_size(&self) -> usize {
        self.chunks.chunks.len() * std::mem::size_of::<ChunkInfo>()
            + self.dictionary.as_ref().map_or(0, decoded_size)
            + self.rows.as_ref().map_or(0, |r| {
                r.len() * std::mem::size_of::<super::miniblock_nested::ChunkRows>()
            })
    }
}

/// Approximate heap size of decoded values.
pub(crate) fn decoded_size(values: &DecodedValues) -> usize {
    match values {
        DecodedValues::Fixed { data, .. } => data.len(),
        DecodedValues::Variable { offsets, data } => offsets.len() * 8 + data.len(),
        DecodedValues::FixedSizeList {
            items,
            item_validity,
            ..
        } => decoded_size(items) + item_validity.as_ref().map_or(0, |v| v.len()),
    }
}

/// One chunk of a mini-block page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkInfo {
    /// First item (page-local) in the chunk.
    pub item_start: u64,
    /// Items in the chunk.
    pub items: u64,
    /// Offset of the chunk in the chunk data buffer.
    pub byte_start: u64,
    /// Size of the chunk in bytes.
    pub bytes: u64,
}

/// The chunk table of a page, from its metadata words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkTable {
    /// Chunks in order.
    pub chunks: Vec<ChunkInfo>,
}

impl ChunkTable {
    /// Parse the metadata words, checking that item counts sum to `num_items` and chunk
    /// sizes sum to `data_size` (the chunk data buffer size).
    pub fn parse(words: &[u8], large: bool, num_items: u64, data_size: u64) -> Result<Self> {
        let width = if large { 4 } else { 2 };
        crate::ensure_corrupt!(
            words.len().is_multiple_of(width),
            "{} bytes of chunk metadata is not a whole number of {width}-byte words",
            words.len()
        );
        let count = words.len() / width;
        crate::ensure_corrupt!(
            count > 0 || num_items == 0,
            "no chunks for {num_items} items"
        );
        let mut chunks = Vec::with_capacity(count);
        let (mut item_start, mut byte_start) = (0u64, 0u64);
        for (i, raw) in words.chunks_exact(width).enumerate() {
            let word = if large {
                u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]])
            } else {
                u32::from(u16::from_le_bytes([raw[0], raw[1]]))
            };
            let log_items = word & 0xF;
            let bytes = (u64::from(word >> 4) + 1) * MINIBLOCK_ALIGNMENT as u64;
            let is_last = i + 1 == count;
            let items = if is_last {
                let rest = num_items.checked_sub(item_start).ok_or_else(|| {
                    Error::corrupt(format!(
                        "chunks before the last hold {item_start} items, page has {num_items}"
                    ))
                })?;
                crate::ensure_corrupt!(
                    log_items == 0 || 1u64 << log_items == rest,
                    "last chunk says 2^{log_items} items but {rest} remain"
                );
                rest
            } else {
                crate::ensure_corrupt!(
                    log_items > 0,
                    "chunk {i} of {count} (not the last) has log2(items) = 0"
                );
                1u64 << log_items
            };
            chunks.push(ChunkInfo {
                item_start,
                items,
                byte_start,
                bytes,
            });
            item_start += items;
            byte_start += bytes;
            crate::ensure_corrupt!(
                item_start <= num_items,
                "chunks hold more than the page's {num_items} items"
            );
        }
        crate::ensure_corrupt!(
            byte_start == data_size,
            "chunk sizes sum to {byte_start} bytes but the chunk data buffer has {data_size}"
        );
        Ok(Self { chunks })
    }

    /// Index of the chunk holding item `item`.
    fn chunk_of(&self, item: u64) -> Result<usize> {
        let after = self.chunks.partition_point(|c| c.item_start <= item);
        let index = after
            .checked_sub(1)
            .ok_or_else(|| Error::corrupt("no chunks"))?;
        // Skip empty chunks (a last chunk can be empty).
        let chunk = &self.chunks[index];
        crate::ensure_corrupt!(
            item < chunk.item_start + chunk.items,
            "item {item} is past the last chunk"
        );
        Ok(index)
    }

    /// Runs of consecutive chunks that hold any of `rows` (flat pages: rows = items).
    pub fn chunk_runs(&self, rows: &RowRanges) -> Result<Vec<Range<usize>>> {
        let mut runs: Vec<Range<usize>> = Vec::new();
        for r in rows {
            if r.start >= r.end {
                continue;
            }
            let first = self.chunk_of(r.start)?;
            let last = self.chunk_of(r.end - 1)?;
            match runs.last_mut() {
                Some(run) if first <= run.end => run.end = run.end.max(last + 1),
                _ => runs.push(first..last + 1),
            }
        }
        Ok(runs)
    }
}

#[cfg(test)]
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;

    fn words(ws: &[u32], large: bool) -> Vec<u8> {
        ws.iter()
            .flat_map(|&w| {
                if large {
                    w.to_le_bytes().to_vec()
                } else {
                    (w as u16).to_le_bytes().to_vec()
                }
            })
            .collect()
    }

    #[test]
    fn chunk_table_from_words() {
        // Two chunks of 1024 items (4104 bytes = 513*8), last with 10 items in 48 bytes.
        let w = words(&[(512 << 4) | 10, (512 << 4) | 10, (5 << 4)], true);
        let t = ChunkTable::parse(&w, true, 2058, 4104 * 2 + 48).unwrap();
        assert_eq!(t.chunks.len(), 3);
        assert_eq!(
            t.chunks[2],
            ChunkInfo {
                item_start: 2048,
                items: 10,
                byte_start: 8208,
                bytes: 48
            }
        );
        assert_eq!(t.chunk_runs(&[0..1, 5..6]).unwrap(), vec![0..1]);
        assert_eq!(t.chunk_runs(&[0..1, 2050..2051]).unwrap(), vec![0..1, 2..3]);
        assert_eq!(t.chunk_runs(&[1000..1100]).unwrap(), vec![0..2]);
        assert_eq!(t.chunk_runs(&[1000..1100, 1500..2058]).unwrap(), vec![0..3]);
        assert!(t.chunk_runs(&[2058..2059]).is_err());
    }

    #[test]
    fn chunk_table_rejects_bad_sums() {
        let w = words(&[(512 << 4) | 10, 5 << 4], false);
        assert!(
            ChunkTable::parse(&w, false, 1034, 4104).is_err(),
            "bytes do not sum"
        );
        assert!(
            ChunkTable::parse(&w, false, 1000, 4104 + 48).is_err(),
            "items exceed page"
        );
        let w = words(&[(512 << 4), 5 << 4], false);
        assert!(
            ChunkTable::parse(&w, false, 1034, 4104 + 48).is_err(),
            "non-last chunk with log 0"
        );
        assert!(
            ChunkTable::parse(&[1, 2, 3], false, 1, 8).is_err(),
            "odd word bytes"
        );
    }

    #[test]
    fn chunk_frame_v22_and_v21() {
        // v2.2: u16 levels, u32 size, 2 pad bytes, 40 value bytes.
        let mut c = vec![0, 0, 40, 0, 0, 0, 0xfe, 0xfe];
        c.extend(0..40u8);
        let f = ChunkFrame::parse(&Bytes::from(c), false, false, 1, true).unwrap();
        assert_eq!(f.buffers[0].len(), 40);
        assert_eq!(f.buffers[0][0], 0);
        // v2.1 with def levels: levels 3, def 6 bytes, value 12 bytes.
        let mut c = vec![3, 0, 6, 0, 12, 0, 0xfe, 0xfe];
        c.extend([1, 0, 0, 0, 1, 0, 0xfe, 0xfe]);
        c.extend([7u8; 12]);
        let f = ChunkFrame::parse(&Bytes::from(c.clone()), false, true, 1, false).unwrap();
        assert_eq!(f.num_levels, 3);
        assert_eq!(f.def.as_ref().unwrap().len(), 6);
        assert_eq!(&f.buffers[0][..], &[7u8; 12]);
        c.truncate(c.len() - 1);
        assert!(ChunkFrame::parse(&Bytes::from(c), false, true, 1, false).is_err());
        assert!(ChunkFrame::parse(&Bytes::from_static(&[0, 0]), false, false, 1, true).is_err());
    }
}
