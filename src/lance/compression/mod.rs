//! Pure decoders of Lance compressive encodings (the `CompressiveEncoding` tree of 2.1–2.3
//! pages), written from the lance-encoding 14.0.2 payload formats.
//!
//! Entry points by position in a page:
//! * [`decode_miniblock`] / [`miniblock_buffer_count`]: one mini-block chunk's value buffers.
//! * [`decode_block`] / [`decode_levels`] / [`block_has_payload`]: whole blocks (page
//!   dictionaries, rep/def levels, constant-layout levels).
//! * [`decode_u64_sequence`] / [`decode_u32_sequence`]: 2.3 unsigned sequences (sparse
//!   positions and counts, indexed dictionary indices).
//! * [`decode_fullzip_fixed`] / [`decode_fullzip_variable`]: full-zip values after the caller
//!   has removed control words and lengths.
//! * [`describe`] / [`codec_names`]: text for inspection and coverage reports.
//!
//! Every function is a pure function of its arguments. Malformed input gives
//! `Error::Corrupt` (or `Error::Unsupported` for valid encodings lakeseek does not implement),
//! never a panic; allocations are bounded by the bytes present or by [`MAX_DECODED_BYTES`].

mod bitpacking;
mod common;
mod describe;
mod fixed;
mod general;
mod rle;
mod sequence;
mod variable;

use bytes::Bytes;

use crate::error::{Error, Result};
use crate::lance::proto::encodings::compressive_encoding::Compression;
use crate::lance::proto::encodings::CompressiveEncoding;
use common::{require_payload, variant};

pub(crate) use describe::{codec_names, describe};

/// Upper bound on the size of any single decoded output (1 GiB). Larger claims are `Corrupt`.
pub(crate) const MAX_DECODED_BYTES: usize = 1 << 30;

/// Decoded values of a chunk/block.
#[derive(Clone, Debug, PartialEq)]
pub enum DecodedValues {
    /// Fixed-width values packed little-endian, `bits_per_value` bits each (1 = LSB-first
    /// bitmap, Arrow order). `bits_per_value == 0` (empty `data`) means every value is null:
    /// a `Constant` without a scalar.
    Fixed {
        /// Bits per value.
        bits_per_value: u64,
        /// Number of values.
        num_values: usize,
        /// `ceil(num_values * bits_per_value / 8)` bytes.
        data: Bytes,
    },
    /// Variable-width values: `offsets.len() == num_values + 1`, non-decreasing,
    /// last <= data.len(); value i = `data[offsets[i]..offsets[i+1]]`.
    Variable {
        /// Start of each value, plus the end of the last.
        offsets: Vec<u64>,
        /// Value bytes.
        data: Bytes,
    },
    /// Fixed-size lists: `items` holds `num_values * dimension` items; `item_validity` is an
    /// optional LSB-first bitmap, one bit per item.
    FixedSizeList {
        /// Items per list.
        dimension: u64,
        /// The flattened items (may itself be a `FixedSizeList`).
        items: Box<DecodedValues>,
        /// Validity of the items (1 = valid), when the layer is nullable.
        item_validity: Option<Bytes>,
    },
}

impl DecodedValues {
    /// Number of top-level values.
    pub fn num_values(&self) -> usize {
        match self {
            DecodedValues::Fixed { num_values, .. } => *num_values,
            DecodedValues::Variable { offsets, .. } => offsets.len().saturating_sub(1),
            DecodedValues::FixedSizeList {
                dimension, items, ..
            } => usize::try_from(*dimension)
                .ok()
                .filter(|d| *d > 0)
                .map_or(0, |d| items.num_values() / d),
        }
    }
}

/// Decode one mini-block chunk's value buffers (each already sliced to its declared size, no
/// padding) holding `num_values` values.
pub(crate) fn decode_miniblock(
    encoding: &CompressiveEncoding,
    buffers: &[Bytes],
    num_values: usize,
) -> Result<DecodedValues> {
    match variant(encoding)? {
        Compression::Flat(flat) => {
            let [buffer] = buffers else {
                return Err(Error::corrupt(format!(
                    "Flat chunk has {} buffers, expected 1",
                    buffers.len()
                )));
            };
            fixed::decode_flat(flat, buffer.clone(), num_values)
        }
        Compression::InlineBitpacking(inline) => {
            if inline.values.is_some() {
                return Err(Error::unsupported(
                    "InlineBitpacking with buffer compression",
                ));
            }
            let [buffer] = buffers else {
                return Err(Error::corrupt(format!(
                    "InlineBitpacking chunk has {} buffers, expected 1",
                    buffers.len()
                )));
            };
            crate::ensure_corrupt!(
                num_values <= bitpacking::BLOCK_VALUES,
                "InlineBitpacking chunk holds at most 1024 values, got {num_values}"
            );
            let bits = inline.uncompressed_bits_per_value;
            let data = bitpacking::decode_inline(bits, buffer, num_values)?;
            Ok(DecodedValues::Fixed {
                bits_per_value: bits,
                num_values,
                data: Bytes::from(data),
            })
        }
        Compression::Variable(v) => variable::decode_miniblock(v, buffers, num_values),
        Compression::Fsst(fsst) => variable::decode_fsst_miniblock(fsst, buffers, num_values),
        Compression::FixedSizeList(fsl) => fixed::decode_fsl_miniblock(fsl, buffers, num_values),
        Compression::Rle(r) => rle::decode_miniblock(r, buffers, num_values),
        Compression::ByteStreamSplit(bss) => {
            fixed::decode_byte_stream_split(bss, buffers, num_values)
        }
        Compression::General(g) => {
            let scheme = general::scheme_of(g.compression.as_ref())?;
            let inner = common::child(&g.values, "General")?;
            let Some((first, rest)) = buffers.split_first() else {
                return Err(Error::corrupt("General chunk has no buffers"));
            };
            let mut buffers = Vec::with_capacity(buffers.len());
            buffers.push(Bytes::from(general::decompress(scheme, first)?));
            buffers.extend(rest.iter().cloned());
            decode_miniblock(inner, &buffers, num_values)
        }
        Compression::PackedStruct(p) => decode_miniblock(packed_flat(p)?, buffers, num_values),
        Compression::VariablePackedStruct(_) => {
            Err(Error::unsupported("variable packed struct mini-blocks"))
        }
        other => Err(Error::corrupt(format!(
            "{} is not a mini-block encoding",
            describe::node_name(other)
        ))),
    }
}

/// The values encoding of a packed struct read as fixed-width rows: supported when it is
/// an uncompressed `Flat` as wide as the children together (blob v1 descriptors: two u64s
/// as one 128-bit value), each row's bytes being the children's bytes in order.
fn packed_flat(p: &crate::lance::proto::encodings::PackedStruct) -> Result<&CompressiveEncoding> {
    let values = common::child(&p.values, "PackedStruct")?;
    let total = p
        .bits_per_value
        .iter()
        .try_fold(0u64, |sum, b| sum.checked_add(*b).filter(|_| b % 8 == 0));
    match (&values.compression, total) {
        (Some(Compression::Flat(f)), Some(total))
            if f.data.is_none() && f.bits_per_value == total =>
        {
            Ok(values)
        }
        _ => Err(Error::unsupported(
            "packed struct mini-blocks other than uncompressed byte-aligned Flat rows",
        )),
    }
}

/// Value buffers per chunk this encoding writes (to cross-check `MiniBlockLayout.num_buffers`).
pub(crate) fn miniblock_buffer_count(encoding: &CompressiveEncoding) -> Result<usize> {
    match variant(encoding)? {
        Compression::Flat(_)
        | Compression::InlineBitpacking(_)
        | Compression::ByteStreamSplit(_) => Ok(1),
        Compression::Variable(v) => variable::miniblock_buffer_count(v),
        Compression::Fsst(fsst) => miniblock_buffer_count(common::child(&fsst.values, "Fsst")?),
        Compression::FixedSizeList(fsl) => fixed::fsl_buffer_count(fsl),
        Compression::Rle(_) => Ok(2),
        Compression::General(g) => miniblock_buffer_count(common::child(&g.values, "General")?),
        Compression::PackedStruct(p) => miniblock_buffer_count(packed_flat(p)?),
        Compression::VariablePackedStruct(_) => {
            Err(Error::unsupported("variable packed struct mini-blocks"))
        }
        other => Err(Error::corrupt(format!(
            "{} is not a mini-block encoding",
            describe::node_name(other)
        ))),
    }
}

/// Decode a block: page dictionaries, rep/def levels, constant-layout levels, 2.3 sequences.
pub(crate) fn decode_block(
    encoding: &CompressiveEncoding,
    payload: Option<Bytes>,
    num_values: usize,
) -> Result<DecodedValues> {
    match variant(encoding)? {
        Compression::Flat(flat) => {
            fixed::decode_flat(flat, require_payload(payload, "Flat")?, num_values)
        }
        Compression::Constant(constant) => fixed::decode_constant(constant, &payload, num_values),
        Compression::InlineBitpacking(inline) => {
            if inline.values.is_some() {
                return Err(Error::unsupported(
                    "InlineBitpacking with buffer compression",
                ));
            }
            let payload = require_payload(payload, "InlineBitpacking")?;
            let bits = inline.uncompressed_bits_per_value;
            let data = bitpacking::decode_inline(bits, &payload, num_values)?;
            Ok(DecodedValues::Fixed {
                bits_per_value: bits,
                num_values,
                data: Bytes::from(data),
            })
        }
        Compression::OutOfLineBitpacking(ool) => {
            let values = common::child(&ool.values, "OutOfLineBitpacking")?;
            let Some(Compression::Flat(flat)) = &values.compression else {
                return Err(Error::corrupt("OutOfLineBitpacking values must be Flat"));
            };
            let payload = require_payload(payload, "OutOfLineBitpacking")?;
            let bits = ool.uncompressed_bits_per_value;
            let data =
                bitpacking::decode_out_of_line(bits, flat.bits_per_value, &payload, num_values)?;
            Ok(DecodedValues::Fixed {
                bits_per_value: bits,
                num_values,
                data: Bytes::from(data),
            })
        }
        Compression::Variable(_) => {
            variable::decode_block(&require_payload(payload, "Variable")?, num_values)
        }
        Compression::FixedSizeList(fsl) => {
            fixed::decode_fsl_per_value(fsl, require_payload(payload, "FixedSizeList")?, num_values)
        }
        Compression::General(g) => {
            let scheme = general::scheme_of(g.compression.as_ref())?;
            let inner = common::child(&g.values, "General")?;
            let payload = require_payload(payload, "General")?;
            let raw = match &inner.compression {
                Some(Compression::FixedSizeList(fsl)) => {
                    let expected = fixed::fsl_per_value_bytes(fsl, num_values)?;
                    general::decompress_exact(scheme, &payload, expected)?
                }
                _ => general::decompress(scheme, &payload)?,
            };
            decode_block(inner, Some(Bytes::from(raw)), num_values)
        }
        Compression::Rle(r) => rle::decode_block(r, &require_payload(payload, "Rle")?, num_values),
        Compression::Range(_) | Compression::Delta(_) | Compression::Dictionary(_) => {
            let bits = sequence::infer_bits(encoding)?;
            let values = sequence::decode(encoding, payload, num_values, bits)?;
            let data = common::u64_to_words(&values, bits, "block sequence")?;
            Ok(DecodedValues::Fixed {
                bits_per_value: bits,
                num_values,
                data,
            })
        }
        Compression::PackedStruct(_) | Compression::VariablePackedStruct(_) => {
            Err(Error::unsupported("packed struct blocks"))
        }
        other => Err(Error::corrupt(format!(
            "{} is not a block encoding",
            describe::node_name(other)
        ))),
    }
}

/// Rep/def levels as u16 (block form).
pub(crate) fn decode_levels(
    encoding: &CompressiveEncoding,
    payload: Option<Bytes>,
    num_values: usize,
) -> Result<Vec<u16>> {
    match decode_block(encoding, payload, num_values)? {
        DecodedValues::Fixed {
            bits_per_value: 16,
            num_values: n,
            data,
        } if n == num_values => Ok(data
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect()),
        DecodedValues::Fixed { bits_per_value, .. } => Err(Error::corrupt(format!(
            "levels decoded to {bits_per_value}-bit values, expected 16"
        ))),
        _ => Err(Error::corrupt(
            "levels did not decode to fixed-width values",
        )),
    }
}

/// [`decode_levels`] as `(value, length)` runs: RLE blocks are read run by run without
/// expanding them; any other encoding is decoded and grouped into runs.
pub(crate) fn decode_level_runs(
    encoding: &CompressiveEncoding,
    payload: Option<Bytes>,
    num_values: usize,
) -> Result<Vec<(u16, u32)>> {
    if let Some(Compression::Rle(r)) = &encoding.compression {
        return rle::decode_block_runs(r, &require_payload(payload, "Rle")?, num_values);
    }
    let levels = decode_levels(encoding, payload, num_values)?;
    let mut runs: Vec<(u16, u32)> = Vec::new();
    for level in levels {
        match runs.last_mut() {
            Some((value, length)) if *value == level && *length < u32::MAX => *length += 1,
            _ => runs.push((level, 1)),
        }
    }
    Ok(runs)
}

/// 2.3 unsigned sequences (positions, counts): u64 values under the generic block grammar
/// (Constant without value = empty, Range, Flat64, OOL bitpacking, Delta, General, Rle,
/// Dictionary). `num_values` is the cardinality from the container.
pub(crate) fn decode_u64_sequence(
    encoding: &CompressiveEncoding,
    payload: Option<Bytes>,
    num_values: usize,
) -> Result<Vec<u64>> {
    sequence::check_cardinality(encoding, num_values)?;
    sequence::decode(encoding, payload, num_values, 64)
}

/// 2.3 u32 sequences under the same grammar (indexed dictionary indices), widened to u64.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn decode_u32_sequence(
    encoding: &CompressiveEncoding,
    payload: Option<Bytes>,
    num_values: usize,
) -> Result<Vec<u64>> {
    sequence::check_cardinality(encoding, num_values)?;
    sequence::decode(encoding, payload, num_values, 32)
}

/// Whether the block codec has a payload buffer (metadata-only codecs like Constant/Range/
/// Delta-of-Range do not).
pub(crate) fn block_has_payload(encoding: &CompressiveEncoding) -> Result<bool> {
    match variant(encoding)? {
        Compression::Constant(_) => Ok(false),
        Compression::Range(_) => Ok(false),
        Compression::Delta(_) | Compression::Dictionary(_) => {
            let bits = sequence::infer_bits(encoding)?;
            sequence::has_payload(encoding, bits)
        }
        Compression::Rle(r) => {
            // A stable RLE always frames a payload; a generic one may be metadata-only.
            let metadata_lengths = matches!(
                r.run_lengths
                    .as_deref()
                    .and_then(|l| l.compression.as_ref()),
                Some(Compression::Constant(_) | Compression::Range(_))
            );
            if metadata_lengths {
                let bits = sequence::infer_bits(encoding)?;
                sequence::has_payload(encoding, bits)
            } else {
                Ok(true)
            }
        }
        _ => Ok(true),
    }
}

/// The true level count of a legacy block RLE of u16 levels with u8 run lengths (pylance
/// 6.0.1 wrote such chunks with a `num_levels` header that overflowed u16); `None` for other
/// encodings.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn infer_level_count(
    encoding: &CompressiveEncoding,
    payload: &Bytes,
) -> Result<Option<u64>> {
    match variant(encoding)? {
        Compression::Rle(r) => rle::infer_level_count(r, payload),
        _ => Ok(None),
    }
}

/// Full-zip per-value decoders: the caller has already stripped control words and lengths.
/// `data` holds `num_values` values of the encoding's fixed width.
pub(crate) fn decode_fullzip_fixed(
    encoding: &CompressiveEncoding,
    data: Bytes,
    num_values: usize,
) -> Result<DecodedValues> {
    match variant(encoding)? {
        Compression::Flat(flat) => {
            crate::ensure_corrupt!(
                flat.bits_per_value % 8 == 0,
                "full-zip Flat values must be whole bytes, got {} bits",
                flat.bits_per_value
            );
            fixed::decode_flat(flat, data, num_values)
        }
        Compression::FixedSizeList(fsl) => fixed::decode_fsl_per_value(fsl, data, num_values),
        Compression::Constant(constant) => fixed::decode_constant(constant, &None, num_values),
        Compression::PackedStruct(_) => Err(Error::unsupported("packed struct full-zip values")),
        other => Err(Error::corrupt(format!(
            "{} is not a fixed full-zip encoding",
            describe::node_name(other)
        ))),
    }
}

/// Full-zip variable-width values: `offsets` (`n+1`, non-decreasing) into `data`.
pub(crate) fn decode_fullzip_variable(
    encoding: &CompressiveEncoding,
    offsets: Vec<u64>,
    data: Bytes,
) -> Result<DecodedValues> {
    match variant(encoding)? {
        Compression::Variable(v) => {
            let offsets_encoding = common::child(&v.offsets, "Variable")?;
            crate::ensure_corrupt!(
                matches!(&offsets_encoding.compression, Some(Compression::Flat(_))),
                "full-zip Variable offsets must be Flat"
            );
            variable::fullzip_passthrough(offsets, data)
        }
        Compression::Fsst(fsst) => variable::fsst_expand(&fsst.symbol_table, &offsets, &data),
        Compression::General(g) => {
            let scheme = general::scheme_of(g.compression.as_ref())?;
            variable::fullzip_general(scheme, &offsets, &data)
        }
        // Each row's packed bytes as one value (blob v2 descriptors; `lance::blob`).
        Compression::VariablePackedStruct(_) => variable::fullzip_passthrough(offsets, data),
        other => Err(Error::corrupt(format!(
            "{} is not a variable full-zip encoding",
            describe::node_name(other)
        ))),
    }
}

#[cfg(test)]
mod golden_tests;
#[cfg(test)]
mod tests;

/// Decompress one whole buffer framed as lance frames general compression (`zstd` with a
/// u64 length prefix or a bare frame, `lz4` with a u32 length prefix): the `Flat`
/// compression of 2.0 pages.
pub(crate) fn decompress_general(zstd: bool, input: &[u8]) -> Result<Vec<u8>> {
    let scheme = if zstd {
        general::Scheme::Zstd
    } else {
        general::Scheme::Lz4
    };
    general::decompress(scheme, input)
}

/// Expand FSST-compressed values (`offsets` into `data`) with the serialized symbol
/// `table`, checked as the 2.1 FSST decoder checks it: `(offsets, bytes)` of the plain
/// values. Used by 2.0 `Fsst` pages.
pub(crate) fn fsst_expand_values(
    table: &[u8],
    offsets: &[u64],
    data: &Bytes,
) -> Result<(Vec<u64>, Bytes)> {
    match variable::fsst_expand(table, offsets, data)? {
        DecodedValues::Variable { offsets, data } => Ok((offsets, data)),
        _ => Err(Error::corrupt(
            "internal: FSST expanded to fixed-width values",
        )),
    }
}
