//! Posting lists of the partitioned INVERTED layout: pure, validating decoders.
//!
//! One invert row per token holds its posting list as `List<LargeBinary>`, one binary per
//! block of `block_size` (128 or 256) documents, and its document frequency (`_length`).
//! A full block (lance's `encoding.rs`): for 128-doc blocks an f32 block max score, then
//! the u32 first doc id, a bit width and BitPacker sorted-delta doc ids, then a bit width and
//! BitPacker frequencies (256-doc blocks: BitPacker8x, no score prefix, frequencies in
//! patched FOR: width, exception count, packed body, `(index u8, high bits varint)` per
//! exception). The last, partial block: the score prefix, then `n` doc ids and `n`
//! frequencies, as u32 LE (`fixed32_v1`) or as varints, doc ids delta-coded
//! (`varint_delta_v1`). Every width, count, length and doc id is checked before use.

use lance_bitpacking::{BitPacker, BitPacker4x, BitPacker8x};

use crate::error::{Error, Result};

/// How the last, partial block of a posting list is coded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TailCodec {
    /// `fixed32_v1`: u32 LE doc ids, then u32 LE frequencies (format v1).
    Fixed32,
    /// `varint_delta_v1`: varint doc-id deltas, then varint frequencies (format v2, v3).
    VarintDelta,
}

impl TailCodec {
    /// The codec `posting_tail_codec` names (absent: the format version's default).
    pub(crate) fn parse(name: Option<&str>, format_version: u32) -> Result<Self> {
        match name {
            Some("fixed32_v1") => Ok(Self::Fixed32),
            Some("varint_delta_v1") => Ok(Self::VarintDelta),
            Some(other) => Err(Error::unsupported(format!("posting tail codec {other:?}"))),
            None if format_version <= 1 => Ok(Self::Fixed32),
            None => Ok(Self::VarintDelta),
        }
    }
}

/// The block layout of one index's posting lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PostingLayout {
    /// Documents per full block: 128 or 256.
    pub(crate) block_size: usize,
    /// The codec of the last, partial block.
    pub(crate) tail: TailCodec,
}

impl PostingLayout {
    /// A layout of `block_size` (128 or 256) and `tail`.
    pub(crate) fn new(block_size: usize, tail: TailCodec) -> Result<Self> {
        if block_size != BitPacker4x::BLOCK_LEN && block_size != BitPacker8x::BLOCK_LEN {
            return Err(Error::corrupt(format!(
                "posting block size {block_size} is neither 128 nor 256"
            )));
        }
        Ok(Self { block_size, tail })
    }

    /// Bytes of the block max score prefix (128-doc blocks only).
    fn score_prefix(&self) -> usize {
        if self.block_size == BitPacker8x::BLOCK_LEN {
            0
        } else {
            4
        }
    }
}

/// The decoded postings of one token: doc ids (ascending, local to the partition) and
/// frequencies.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Postings {
    /// Doc ids, strictly ascending, each below the partition's document count.
    pub(crate) doc_ids: Vec<u32>,
    /// Term frequency of each doc.
    pub(crate) frequencies: Vec<u32>,
    /// Each block's max score as lance stored it (128-doc blocks; empty when the layout
    /// has none).
    pub(crate) block_max: Vec<f32>,
}

/// Decode the posting list `blocks` of a token with document frequency `length` in a
/// partition of `num_docs` documents.
pub(crate) fn decode_postings(
    blocks: &[&[u8]],
    length: u32,
    num_docs: u32,
    layout: PostingLayout,
) -> Result<Postings> {
    let length = length as usize;
    if length > num_docs as usize {
        return Err(Error::corrupt(format!(
            "posting list of {length} documents in a partition of {num_docs}"
        )));
    }
    let full = length / layout.block_size;
    let tail = length % layout.block_size;
    let expected = full + usize::from(tail > 0);
    if blocks.len() != expected {
        return Err(Error::corrupt(format!(
            "posting list of {length} documents has {} blocks, expected {expected}",
            blocks.len()
        )));
    }
    let mut out = Postings {
        doc_ids: Vec::with_capacity(length),
        frequencies: Vec::with_capacity(length),
        block_max: Vec::with_capacity(if layout.score_prefix() > 0 {
            expected
        } else {
            0
        }),
    };
    for (i, block) in blocks[..full].iter().enumerate() {
        decode_full_block(block, layout, &mut out)
            .map_err(|e| e.context(format!("posting block {i}")))?;
    }
    if tail > 0 {
        decode_tail_block(blocks[full], tail, layout, &mut out)
            .map_err(|e| e.context(format!("posting block {full} (last, {tail} docs)")))?;
    }
    check_doc_ids(&out.doc_ids, num_docs)?;
    Ok(out)
}

/// Doc ids strictly ascending and below `num_docs`.
fn check_doc_ids(doc_ids: &[u32], num_docs: u32) -> Result<()> {
    for pair in doc_ids.windows(2) {
        if pair[1] <= pair[0] {
            return Err(Error::corrupt(format!(
                "posting doc ids not ascending: {} after {}",
                pair[1], pair[0]
            )));
        }
    }
    match doc_ids.last() {
        Some(&last) if last >= num_docs => Err(Error::corrupt(format!(
            "posting doc id {last} past the partition's {num_docs} documents"
        ))),
        _ => Ok(()),
    }
}

/// A little cursor over one block's bytes that never reads past its end.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.bytes.len());
        let end = end.ok_or_else(|| {
            Error::corrupt(format!(
                "posting block of {} bytes ends before byte {}",
                self.bytes.len(),
                self.at.saturating_add(n)
            ))
        })?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    /// The block max score prefix, if the layout has one.
    fn score(&mut self, layout: PostingLayout, out: &mut Postings) -> Result<()> {
        let b = self.take(layout.score_prefix())?;
        if let [a, b, c, d] = *b {
            out.block_max.push(f32::from_le_bytes([a, b, c, d]));
        }
        Ok(())
    }

    fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn varint(&mut self) -> Result<u32> {
        let mut value: u64 = 0;
        for shift in (0..35).step_by(7) {
            let byte = self.u8()?;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return u32::try_from(value)
                    .map_err(|_| Error::corrupt("posting varint overflows u32"));
            }
        }
        Err(Error::corrupt("posting varint longer than 5 bytes"))
    }

    fn width(&mut self) -> Result<u8> {
        let bits = self.u8()?;
        if bits > 32 {
            return Err(Error::corrupt(format!("posting bit width {bits} over 32")));
        }
        Ok(bits)
    }

    fn finish(&self) -> Result<()> {
        if self.at != self.bytes.len() {
            return Err(Error::corrupt(format!(
                "posting block has {} trailing bytes",
                self.bytes.len() - self.at
            )));
        }
        Ok(())
    }
}

/// Decode one full block into `out`.
fn decode_full_block(block: &[u8], layout: PostingLayout, out: &mut Postings) -> Result<()> {
    let mut c = Cursor {
        bytes: block,
        at: 0,
    };
    c.score(layout, out)?;
    let first = c.u32()?;
    let doc_bits = c.width()?;
    let mut buf = [0u32; BitPacker8x::BLOCK_LEN];
    let n = layout.block_size;
    if n == BitPacker4x::BLOCK_LEN {
        unpack_sorted::<BitPacker4x>(&mut c, first, doc_bits, &mut buf[..n])?;
    } else {
        unpack_sorted::<BitPacker8x>(&mut c, first, doc_bits, &mut buf[..n])?;
    }
    out.doc_ids.extend_from_slice(&buf[..n]);
    if n == BitPacker4x::BLOCK_LEN {
        let freq_bits = c.width()?;
        unpack::<BitPacker4x>(&mut c, freq_bits, &mut buf[..n])?;
    } else {
        unpack_pfor(&mut c, &mut buf[..n])?;
    }
    out.frequencies.extend_from_slice(&buf[..n]);
    c.finish()
}

/// BitPacker sorted-delta values of one block (the length checked before unpacking).
fn unpack_sorted<P: BitPacker>(
    c: &mut Cursor<'_>,
    first: u32,
    bits: u8,
    out: &mut [u32],
) -> Result<()> {
    let packed = c.take(P::compressed_block_size(bits))?;
    P::new().decompress_sorted(first, packed, out, bits);
    Ok(())
}

/// BitPacker values of one block (the length checked before unpacking).
fn unpack<P: BitPacker>(c: &mut Cursor<'_>, bits: u8, out: &mut [u32]) -> Result<()> {
    let packed = c.take(P::compressed_block_size(bits))?;
    P::new().decompress(packed, out, bits);
    Ok(())
}

/// Patched FOR frequencies of a 256-doc block.
fn unpack_pfor(c: &mut Cursor<'_>, out: &mut [u32]) -> Result<()> {
    let bits = c.width()?;
    let exceptions = c.u8()?;
    unpack::<BitPacker8x>(c, bits, out)?;
    for _ in 0..exceptions {
        let index = c.u8()? as usize;
        let high = c.varint()?;
        let slot = out
            .get_mut(index)
            .ok_or_else(|| Error::corrupt(format!("frequency exception at {index}")))?;
        let shifted = if bits >= 32 {
            0
        } else {
            high.checked_shl(u32::from(bits)).unwrap_or(0)
        };
        *slot |= shifted;
    }
    Ok(())
}

/// Decode the last, partial block of `n` docs into `out`.
fn decode_tail_block(
    block: &[u8],
    n: usize,
    layout: PostingLayout,
    out: &mut Postings,
) -> Result<()> {
    let mut c = Cursor {
        bytes: block,
        at: 0,
    };
    c.score(layout, out)?;
    match layout.tail {
        TailCodec::Fixed32 => {
            for _ in 0..n {
                out.doc_ids.push(c.u32()?);
            }
            for _ in 0..n {
                out.frequencies.push(c.u32()?);
            }
        }
        TailCodec::VarintDelta => {
            let mut previous = 0u32;
            for i in 0..n {
                let delta = c.varint()?;
                let doc = if i == 0 {
                    delta
                } else {
                    previous
                        .checked_add(delta)
                        .ok_or_else(|| Error::corrupt("posting doc id delta overflows u32"))?
                };
                out.doc_ids.push(doc);
                previous = doc;
            }
            for _ in 0..n {
                out.frequencies.push(c.varint()?);
            }
        }
    }
    c.finish()
}

#[cfg(test)]
#[path = "posting_tests.rs"]
mod tests;
