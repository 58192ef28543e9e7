//! Token positions of an INVERTED index built `with_position`: pure, validating decoders
//! of the two layouts pylance writes.
//!
//! * **Shared stream** (format v2, v3; `positions_layout = shared_stream_v2`): one
//!   `_compressed_position` binary per token and `_position_block_offset`, the start of
//!   each posting block's positions in it. A block holds, per document in posting order,
//!   its positions delta-coded within the document (the first is absolute). Codec
//!   `packed_delta_v1`: the block's deltas in groups of 128 (`[bit width u8][BitPacker4x
//!   body]`), the last partial group as varints; `varint_doc_delta_v2`: every delta a varint.
//! * **Per document** (format v1): `_position` is `List<List<LargeBinary>>`, one list per
//!   posting: the u32 position count, then one binary per 128 positions
//!   (`[first u32][bit width u8][BitPacker4x sorted body]`) and the rest as raw u32s.
//!
//! Every count, width and length is checked against the bytes before it sizes anything.

use lance_bitpacking::{BitPacker, BitPacker4x};

use crate::error::{Error, Result};

const GROUP: usize = BitPacker4x::BLOCK_LEN;

/// How a shared position stream codes its deltas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PositionCodec {
    /// `packed_delta_v1`: groups of 128 bit-packed deltas, then varints.
    PackedDelta,
    /// `varint_doc_delta_v2`: one varint per delta.
    VarintDocDelta,
}

impl PositionCodec {
    /// The codec `positions_codec` names (absent: `varint_doc_delta_v2`, as lance reads it).
    pub(crate) fn parse(name: Option<&str>) -> Result<Self> {
        match name {
            Some("packed_delta_v1") => Ok(Self::PackedDelta),
            Some("varint_doc_delta_v2") | None => Ok(Self::VarintDocDelta),
            Some(other) => Err(Error::unsupported(format!("positions codec {other:?}"))),
        }
    }
}

fn eof(what: &str) -> Error {
    Error::corrupt(format!("position data ends inside {what}"))
}

fn varint(src: &[u8], at: &mut usize) -> Result<u32> {
    let mut value: u64 = 0;
    for shift in (0..35).step_by(7) {
        let byte = *src.get(*at).ok_or_else(|| eof("a varint"))?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return u32::try_from(value).map_err(|_| Error::corrupt("position varint over u32"));
        }
    }
    Err(Error::corrupt("position varint longer than 5 bytes"))
}

fn width(bits: u8) -> Result<u8> {
    if bits > 32 {
        return Err(Error::corrupt(format!("position bit width {bits} over 32")));
    }
    Ok(bits)
}

/// Rebuild each document's positions from its deltas (`frequencies[i]` deltas each).
fn undelta(deltas: &[u32], frequencies: &[u32]) -> Result<Vec<Vec<u32>>> {
    let mut out = Vec::with_capacity(frequencies.len());
    let mut at = 0usize;
    for &f in frequencies {
        let n = f as usize;
        let part = deltas
            .get(at..at + n)
            .ok_or_else(|| Error::corrupt("fewer positions than the frequencies say"))?;
        at += n;
        let mut doc = Vec::with_capacity(n);
        let mut previous = 0u32;
        for (i, d) in part.iter().enumerate() {
            let p = if i == 0 {
                *d
            } else {
                previous
                    .checked_add(*d)
                    .ok_or_else(|| Error::corrupt("position overflows u32"))?
            };
            doc.push(p);
            previous = p;
        }
        out.push(doc);
    }
    Ok(out)
}

/// Total positions of a block: the sum of its frequencies, bounded by what `bytes` can
/// hold (at least one byte per varint, per 128-delta group).
fn total_positions(frequencies: &[u32], bytes: usize, codec: PositionCodec) -> Result<usize> {
    let total = frequencies
        .iter()
        .try_fold(0usize, |t, f| t.checked_add(*f as usize))
        .ok_or_else(|| Error::corrupt("position count overflows"))?;
    let most = match codec {
        PositionCodec::VarintDocDelta => bytes,
        PositionCodec::PackedDelta => bytes.saturating_mul(GROUP),
    };
    if total > most {
        return Err(Error::corrupt(format!(
            "{total} positions cannot fit in a {bytes}-byte position block"
        )));
    }
    Ok(total)
}

/// The positions of each document of one posting block (`frequencies` in posting order)
/// from that block's slice of a shared stream.
pub(crate) fn decode_stream_block(
    bytes: &[u8],
    frequencies: &[u32],
    codec: PositionCodec,
) -> Result<Vec<Vec<u32>>> {
    let total = total_positions(frequencies, bytes.len(), codec)?;
    let mut deltas = Vec::with_capacity(total);
    let mut at = 0usize;
    if codec == PositionCodec::PackedDelta {
        let mut group = [0u32; GROUP];
        for _ in 0..total / GROUP {
            let bits = width(*bytes.get(at).ok_or_else(|| eof("a group header"))?)?;
            let len = BitPacker4x::compressed_block_size(bits);
            let body = bytes
                .get(at + 1..at + 1 + len)
                .ok_or_else(|| eof("a packed group"))?;
            BitPacker4x::new().decompress(body, &mut group, bits);
            deltas.extend_from_slice(&group);
            at += 1 + len;
        }
    }
    while deltas.len() < total {
        deltas.push(varint(bytes, &mut at)?);
    }
    if at != bytes.len() {
        return Err(Error::corrupt(format!(
            "position block has {} trailing bytes",
            bytes.len() - at
        )));
    }
    undelta(&deltas, frequencies)
}

/// The slices of each posting block in a shared stream, from its block offsets.
pub(crate) fn stream_blocks<'a>(bytes: &'a [u8], offsets: &[u32]) -> Result<Vec<&'a [u8]>> {
    let mut out = Vec::with_capacity(offsets.len());
    for (i, start) in offsets.iter().enumerate() {
        let end = offsets.get(i + 1).map_or(bytes.len(), |e| *e as usize);
        let slice = bytes.get(*start as usize..end).ok_or_else(|| {
            Error::corrupt(format!(
                "position block {i} at {start}..{end} is outside the {}-byte stream",
                bytes.len()
            ))
        })?;
        out.push(slice);
    }
    Ok(out)
}

/// One document's positions in the per-document layout (format v1), which must number
/// `frequency`.
pub(crate) fn decode_per_doc(blobs: &[&[u8]], frequency: u32) -> Result<Vec<u32>> {
    let head = blobs.first().ok_or_else(|| eof("the position count"))?;
    let count: [u8; 4] = (*head)
        .try_into()
        .map_err(|_| Error::corrupt("position count is not 4 bytes"))?;
    let count = u32::from_le_bytes(count);
    if count != frequency {
        return Err(Error::corrupt(format!(
            "{count} positions for a term frequency of {frequency}"
        )));
    }
    let n = count as usize;
    let (full, rest) = (n / GROUP, n % GROUP);
    let expected = 1 + full + usize::from(rest > 0);
    if blobs.len() != expected {
        return Err(Error::corrupt(format!(
            "{} position blocks for {n} positions, expected {expected}",
            blobs.len()
        )));
    }
    let mut out = Vec::with_capacity(n);
    let mut group = [0u32; GROUP];
    for blob in &blobs[1..1 + full] {
        let (first, tail) = blob.split_at_checked(4).ok_or_else(|| eof("a group"))?;
        let first = u32::from_le_bytes([first[0], first[1], first[2], first[3]]);
        let (bits, body) = tail.split_first().ok_or_else(|| eof("a group"))?;
        let bits = width(*bits)?;
        if body.len() != BitPacker4x::compressed_block_size(bits) {
            return Err(Error::corrupt("packed position group has the wrong length"));
        }
        BitPacker4x::new().decompress_sorted(first, body, &mut group, bits);
        out.extend_from_slice(&group);
    }
    if rest > 0 {
        let raw = blobs[1 + full];
        if raw.len() != rest * 4 {
            return Err(Error::corrupt("raw positions have the wrong length"));
        }
        out.extend(
            raw.chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
        );
    }
    if out.windows(2).any(|w| w[1] < w[0]) {
        return Err(Error::corrupt("positions are not ascending"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_stream_blocks_split_by_frequency() {
        // doc 0: positions 3, 5; doc 1: 0.
        let got = decode_stream_block(&[3, 2, 0], &[2, 1], PositionCodec::VarintDocDelta);
        assert_eq!(got.unwrap(), vec![vec![3, 5], vec![0]]);
        let got = decode_stream_block(&[3, 2, 0], &[2, 1], PositionCodec::PackedDelta);
        assert_eq!(got.unwrap(), vec![vec![3, 5], vec![0]]);
    }

    #[test]
    fn lying_counts_and_widths_are_corrupt() {
        let e = decode_stream_block(&[1], &[u32::MAX], PositionCodec::PackedDelta);
        assert!(e.unwrap_err().to_string().contains("cannot fit"));
        let mut bytes = vec![40u8];
        bytes.extend([0u8; 200]);
        let e = decode_stream_block(&bytes, &[128], PositionCodec::PackedDelta);
        assert!(e.unwrap_err().to_string().contains("over 32"));
        let e = decode_stream_block(&[1, 2, 3], &[2], PositionCodec::VarintDocDelta);
        assert!(e.unwrap_err().to_string().contains("trailing"));
        assert!(stream_blocks(&[1, 2], &[0, 5]).is_err());
        let e = decode_per_doc(&[&2u32.to_le_bytes(), &[1, 0, 0, 0]], 2);
        assert!(e.unwrap_err().to_string().contains("wrong length"));
        let e = decode_per_doc(&[&3u32.to_le_bytes()], 2);
        assert!(e.unwrap_err().to_string().contains("term frequency"));
    }

    #[test]
    fn per_doc_raw_positions() {
        let raw: Vec<u8> = [5u32, 7].iter().flat_map(|v| v.to_le_bytes()).collect();
        let got = decode_per_doc(&[&2u32.to_le_bytes(), &raw], 2).unwrap();
        assert_eq!(got, vec![5, 7]);
    }
}
