//! Run-length encoding (stable form, 2.1–2.3 mini-blocks and blocks).
//!
//! Mini-block: two buffers per chunk, run values then run lengths. Block: one payload framed
//! `[u64 LE values_bytes][values][run lengths]`. Values are 8/16/32/64-bit words, run lengths
//! 8/16/32-bit (u8 in 2.1/2.2). Either child may be `Flat` (raw), `General` over `Flat` or
//! `OutOfLineBitpacking`, or `OutOfLineBitpacking`; a bitpacked child needs the run count,
//! which then comes from the other child (they cannot both need it).
//!
//! A mini-block's run lengths may sum past the chunk's value count (old writers re-encoded the
//! excess in the next chunk): the excess is dropped, as lance does. Blocks must sum exactly.

use bytes::Bytes;

use super::bitpacking::decode_out_of_line;
use super::common::{check_output, child, read_u64, to_usize, variant};
use super::general::{self, Scheme};
use super::DecodedValues;
use crate::error::{Error, Result};
use crate::lance::proto::encodings::compressive_encoding::Compression;
use crate::lance::proto::encodings::{CompressiveEncoding, Rle};

/// How one RLE child buffer is stored.
#[derive(Debug)]
enum ChildForm {
    Flat,
    OutOfLine { width: u64 },
    GeneralFlat(Scheme),
    GeneralOutOfLine(Scheme, u64),
}

/// A validated RLE child: its decoded word width and storage form.
#[derive(Debug)]
struct RleChild {
    bits: u64,
    form: ChildForm,
}

fn ool_width(ool: &crate::lance::proto::encodings::OutOfLineBitpacking, role: &str) -> Result<u64> {
    let values = child(&ool.values, role)?;
    match &values.compression {
        Some(Compression::Flat(flat)) => Ok(flat.bits_per_value),
        _ => Err(Error::corrupt(format!(
            "Rle {role}: bitpacked child must have Flat values"
        ))),
    }
}

impl RleChild {
    fn parse(encoding: &CompressiveEncoding, role: &str) -> Result<Self> {
        Ok(match variant(encoding)? {
            Compression::Flat(flat) => RleChild {
                bits: flat.bits_per_value,
                form: ChildForm::Flat,
            },
            Compression::OutOfLineBitpacking(ool) => RleChild {
                bits: ool.uncompressed_bits_per_value,
                form: ChildForm::OutOfLine {
                    width: ool_width(ool, role)?,
                },
            },
            Compression::General(g) => {
                let scheme = general::scheme_of(g.compression.as_ref())?;
                match variant(child(&g.values, role)?)? {
                    Compression::Flat(flat) => RleChild {
                        bits: flat.bits_per_value,
                        form: ChildForm::GeneralFlat(scheme),
                    },
                    Compression::OutOfLineBitpacking(ool) => RleChild {
                        bits: ool.uncompressed_bits_per_value,
                        form: ChildForm::GeneralOutOfLine(scheme, ool_width(ool, role)?),
                    },
                    other => {
                        return Err(Error::corrupt(format!(
                        "Rle {role}: General child must wrap Flat or OutOfLineBitpacking, got {}",
                        super::describe::node_name(other)
                    )))
                    }
                }
            }
            other => {
                return Err(Error::corrupt(format!(
                    "Rle {role} must be Flat, General or OutOfLineBitpacking, got {}",
                    super::describe::node_name(other)
                )))
            }
        })
    }

    fn needs_count(&self) -> bool {
        matches!(
            self.form,
            ChildForm::OutOfLine { .. } | ChildForm::GeneralOutOfLine(..)
        )
    }

    /// Decodes to raw little-endian words of `self.bits`.
    fn decode(&self, data: Bytes, count: Option<usize>) -> Result<Bytes> {
        let unpack = |width: u64, data: &[u8]| -> Result<Bytes> {
            let count =
                count.ok_or_else(|| Error::corrupt("Rle bitpacked child needs the run count"))?;
            Ok(Bytes::from(decode_out_of_line(
                self.bits, width, data, count,
            )?))
        };
        match self.form {
            ChildForm::Flat => Ok(data),
            ChildForm::OutOfLine { width } => unpack(width, &data),
            ChildForm::GeneralFlat(scheme) => Ok(Bytes::from(general::decompress(scheme, &data)?)),
            ChildForm::GeneralOutOfLine(scheme, width) => {
                unpack(width, &general::decompress(scheme, &data)?)
            }
        }
    }

    fn count_of(&self, decoded: &Bytes, role: &str) -> Result<usize> {
        let width = (self.bits / 8) as usize;
        crate::ensure_corrupt!(
            width > 0 && decoded.len().is_multiple_of(width),
            "Rle {role}: {} bytes is not a multiple of {width}",
            decoded.len()
        );
        Ok(decoded.len() / width)
    }
}

/// A validated stable RLE description.
struct StableRle {
    values: RleChild,
    lengths: RleChild,
}

impl StableRle {
    fn parse(rle: &Rle) -> Result<Self> {
        let values = RleChild::parse(child(&rle.values, "Rle values")?, "values")?;
        let lengths = RleChild::parse(child(&rle.run_lengths, "Rle run lengths")?, "run lengths")?;
        crate::ensure_corrupt!(
            matches!(values.bits, 8 | 16 | 32 | 64),
            "Rle values must be 8/16/32/64 bits, got {}",
            values.bits
        );
        crate::ensure_corrupt!(
            matches!(lengths.bits, 8 | 16 | 32),
            "Rle run lengths must be 8/16/32 bits, got {}",
            lengths.bits
        );
        crate::ensure_corrupt!(
            !(values.needs_count() && lengths.needs_count()),
            "Rle values and run lengths cannot both need the run count"
        );
        Ok(StableRle { values, lengths })
    }

    fn decode_children(&self, values: Bytes, lengths: Bytes) -> Result<(Bytes, Bytes)> {
        if self.values.needs_count() {
            let lengths = self.lengths.decode(lengths, None)?;
            let runs = self.lengths.count_of(&lengths, "run lengths")?;
            Ok((self.values.decode(values, Some(runs))?, lengths))
        } else {
            let values = self.values.decode(values, None)?;
            let runs = self.values.count_of(&values, "values")?;
            Ok((values, self.lengths.decode(lengths, Some(runs))?))
        }
    }

    fn expand(
        &self,
        values: &[u8],
        lengths: &[u8],
        num_values: usize,
        clamp: bool,
    ) -> Result<Bytes> {
        let value_width = (self.values.bits / 8) as usize;
        let length_width = (self.lengths.bits / 8) as usize;
        crate::ensure_corrupt!(
            values.len().is_multiple_of(value_width) && lengths.len().is_multiple_of(length_width),
            "Rle buffers of {} and {} bytes are not multiples of {value_width} and {length_width}",
            values.len(),
            lengths.len()
        );
        let runs = values.len() / value_width;
        crate::ensure_corrupt!(
            runs == lengths.len() / length_width,
            "Rle has {runs} values but {} run lengths",
            lengths.len() / length_width
        );
        let run_length = |i: usize| -> u64 {
            let mut buf = [0u8; 8];
            buf[..length_width].copy_from_slice(&lengths[i * length_width..(i + 1) * length_width]);
            u64::from_le_bytes(buf)
        };
        let mut total = 0u64;
        for i in 0..runs {
            let length = run_length(i);
            crate::ensure_corrupt!(length > 0, "Rle run {i} has length 0");
            total = total.saturating_add(length);
        }
        let n = num_values as u64;
        crate::ensure_corrupt!(
            total == n || (clamp && total > n),
            "Rle run lengths sum to {total}, expected {num_values}"
        );
        check_output(num_values, value_width, "Rle")?;
        let mut out = Vec::with_capacity(num_values * value_width);
        let mut remaining = num_values;
        for i in 0..runs {
            if remaining == 0 {
                break;
            }
            let take = (run_length(i) as usize).min(remaining);
            let value = &values[i * value_width..(i + 1) * value_width];
            // One copy, then double what is there: log2(run) copies per run.
            let start = out.len();
            out.extend_from_slice(value);
            let mut filled = 1;
            while filled < take {
                let n = filled.min(take - filled);
                out.extend_from_within(start..start + n * value_width);
                filled += n;
            }
            remaining -= take;
        }
        Ok(Bytes::from(out))
    }

    fn fixed(&self, data: Bytes, num_values: usize) -> DecodedValues {
        DecodedValues::Fixed {
            bits_per_value: self.values.bits,
            num_values,
            data,
        }
    }
}

/// Decodes a mini-block RLE chunk (two buffers).
pub(super) fn decode_miniblock(
    rle: &Rle,
    buffers: &[Bytes],
    num_values: usize,
) -> Result<DecodedValues> {
    let rle = StableRle::parse(rle)?;
    if num_values == 0 {
        return Ok(rle.fixed(Bytes::new(), 0));
    }
    let [values, lengths] = buffers else {
        return Err(Error::corrupt(format!(
            "Rle chunk has {} buffers, expected 2",
            buffers.len()
        )));
    };
    let (values, lengths) = rle.decode_children(values.clone(), lengths.clone())?;
    let data = rle.expand(&values, &lengths, num_values, true)?;
    Ok(rle.fixed(data, num_values))
}

/// Splits the block frame `[u64 values_bytes][values][run lengths]`.
pub(super) fn split_block_frame(payload: &Bytes) -> Result<(Bytes, Bytes)> {
    let size = to_usize(read_u64(payload, 0, "Rle block frame")?, "Rle values size")?;
    let end = size
        .checked_add(8)
        .filter(|end| *end <= payload.len())
        .ok_or_else(|| {
            Error::corrupt(format!(
                "Rle values of {size} bytes overrun the {}-byte block",
                payload.len()
            ))
        })?;
    Ok((payload.slice(8..end), payload.slice(end..)))
}

/// Decodes a block RLE payload (run lengths must sum exactly to `num_values`).
pub(super) fn decode_block(rle: &Rle, payload: &Bytes, num_values: usize) -> Result<DecodedValues> {
    let rle = StableRle::parse(rle)?;
    let (values, lengths) = split_block_frame(payload)?;
    if num_values == 0 {
        return Ok(rle.fixed(Bytes::new(), 0));
    }
    let (values, lengths) = rle.decode_children(values, lengths)?;
    let data = rle.expand(&values, &lengths, num_values, false)?;
    Ok(rle.fixed(data, num_values))
}

/// Decodes a block RLE payload of 16-bit levels into `(value, length)` runs without
/// expanding them (the run lengths must sum exactly to `num_values`, as for
/// [`decode_block`]). Levels of mostly-empty lists are long runs: readers that only need a
/// few rows of a chunk work on the runs instead of every level.
pub(super) fn decode_block_runs(
    rle: &Rle,
    payload: &Bytes,
    num_values: usize,
) -> Result<Vec<(u16, u32)>> {
    let parsed = StableRle::parse(rle)?;
    crate::ensure_corrupt!(
        parsed.values.bits == 16,
        "levels are {}-bit Rle values, expected 16",
        parsed.values.bits
    );
    let (values, lengths) = split_block_frame(payload)?;
    if num_values == 0 {
        return Ok(Vec::new());
    }
    let (values, lengths) = parsed.decode_children(values, lengths)?;
    let length_width = (parsed.lengths.bits / 8) as usize;
    crate::ensure_corrupt!(
        values.len() % 2 == 0 && lengths.len() % length_width == 0,
        "Rle buffers of {} and {} bytes are not multiples of 2 and {length_width}",
        values.len(),
        lengths.len()
    );
    let count = values.len() / 2;
    crate::ensure_corrupt!(
        count == lengths.len() / length_width,
        "Rle has {count} values but {} run lengths",
        lengths.len() / length_width
    );
    crate::ensure_corrupt!(
        count <= num_values,
        "Rle has {count} runs for {num_values} levels"
    );
    let mut runs = Vec::with_capacity(count);
    let mut total = 0u64;
    for i in 0..count {
        let mut buf = [0u8; 8];
        buf[..length_width].copy_from_slice(&lengths[i * length_width..(i + 1) * length_width]);
        let length = u64::from_le_bytes(buf);
        crate::ensure_corrupt!(length > 0, "Rle run {i} has length 0");
        total = total.saturating_add(length);
        crate::ensure_corrupt!(
            total <= num_values as u64,
            "Rle run lengths sum past {num_values}"
        );
        runs.push((
            u16::from_le_bytes([values[2 * i], values[2 * i + 1]]),
            length as u32,
        ));
    }
    crate::ensure_corrupt!(
        total == num_values as u64,
        "Rle run lengths sum to {total}, expected {num_values}"
    );
    Ok(runs)
}

/// The level count of a block RLE of u16 values with raw u8 run lengths (the form pylance
/// 6.0.1 used for levels whose count overflowed the u16 chunk header), or `None` for any other
/// RLE form.
#[cfg(any(test, feature = "fuzzing"))]
pub(super) fn infer_level_count(rle: &Rle, payload: &Bytes) -> Result<Option<u64>> {
    let parsed = StableRle::parse(rle)?;
    if parsed.values.bits != 16
        || parsed.lengths.bits != 8
        || !matches!(parsed.values.form, ChildForm::Flat)
        || !matches!(parsed.lengths.form, ChildForm::Flat)
    {
        return Ok(None);
    }
    let (values, lengths) = split_block_frame(payload)?;
    crate::ensure_corrupt!(
        values.len() % 2 == 0 && values.len() / 2 == lengths.len(),
        "Rle level block has {} value bytes and {} run lengths",
        values.len(),
        lengths.len()
    );
    let mut total = 0u64;
    for (i, length) in lengths.iter().enumerate() {
        crate::ensure_corrupt!(*length > 0, "Rle run {i} has length 0");
        total += *length as u64;
    }
    Ok(Some(total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lance::proto::encodings::{BufferCompression, Flat, General, OutOfLineBitpacking};

    fn flat(bits: u64) -> Option<Box<CompressiveEncoding>> {
        Some(Box::new(CompressiveEncoding {
            compression: Some(Compression::Flat(Flat {
                bits_per_value: bits,
                data: None,
            })),
        }))
    }

    fn levels(values: &DecodedValues) -> Vec<u16> {
        let DecodedValues::Fixed {
            bits_per_value: 16,
            data,
            ..
        } = values
        else {
            panic!("not u16")
        };
        data.chunks(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect()
    }

    #[test]
    fn doc_level_example() {
        // rep levels `0a 00..` + u16 [1,0,1,0,1] + u8 [5,1,4,2,1] → 13 levels.
        let rle = Rle {
            values: flat(16),
            run_lengths: flat(8),
        };
        let mut payload = 10u64.to_le_bytes().to_vec();
        for v in [1u16, 0, 1, 0, 1] {
            payload.extend(v.to_le_bytes());
        }
        payload.extend([5u8, 1, 4, 2, 1]);
        let payload = Bytes::from(payload);
        let decoded = decode_block(&rle, &payload, 13).unwrap();
        assert_eq!(
            levels(&decoded),
            vec![1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 0, 1]
        );
        assert_eq!(infer_level_count(&rle, &payload).unwrap(), Some(13));
        // Blocks are strict about the sum; mini-blocks clamp an excess but not a shortfall.
        assert!(decode_block(&rle, &payload, 12).is_err());
        assert!(decode_block(&rle, &payload, 14).is_err());
        let buffers = [payload.slice(8..18), payload.slice(18..)];
        assert_eq!(
            levels(&decode_miniblock(&rle, &buffers, 12).unwrap()).len(),
            12
        );
        assert!(decode_miniblock(&rle, &buffers, 14).is_err());
    }

    #[test]
    fn zero_run_and_mismatched_counts_are_corrupt() {
        let rle = Rle {
            values: flat(32),
            run_lengths: flat(8),
        };
        let values = Bytes::from(
            [7u32, 8]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect::<Vec<_>>(),
        );
        assert!(decode_miniblock(&rle, &[values.clone(), Bytes::from_static(&[2, 0])], 2).is_err());
        assert!(decode_miniblock(&rle, &[values.clone(), Bytes::from_static(&[2])], 2).is_err());
        assert!(decode_miniblock(&rle, std::slice::from_ref(&values), 2).is_err());
        let ok = decode_miniblock(&rle, &[values, Bytes::from_static(&[2, 1])], 3).unwrap();
        assert_eq!(ok.num_values(), 3);
    }

    #[test]
    fn child_compressed_values_with_u16_run_lengths() {
        // Values General(LZ4, Flat32) = [5, 6]; run lengths u16 [300, 2].
        let raw: Vec<u8> = [5u32, 6].iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut framed = (raw.len() as u32).to_le_bytes().to_vec();
        framed.extend(lz4_flex::block::compress(&raw));
        let rle = Rle {
            values: Some(Box::new(CompressiveEncoding {
                compression: Some(Compression::General(General {
                    compression: Some(BufferCompression {
                        scheme: 1,
                        level: None,
                    }),
                    values: flat(32),
                })),
            })),
            run_lengths: flat(16),
        };
        let lengths: Vec<u8> = [300u16, 2].iter().flat_map(|v| v.to_le_bytes()).collect();
        let decoded =
            decode_miniblock(&rle, &[Bytes::from(framed), Bytes::from(lengths)], 302).unwrap();
        let DecodedValues::Fixed {
            bits_per_value: 32,
            data,
            ..
        } = decoded
        else {
            panic!()
        };
        assert_eq!(&data[..4], &5u32.to_le_bytes());
        assert_eq!(&data[300 * 4..], &[6, 0, 0, 0, 6, 0, 0, 0]);
    }

    #[test]
    fn both_children_bitpacked_is_corrupt() {
        let ool = |t| {
            Some(Box::new(CompressiveEncoding {
                compression: Some(Compression::OutOfLineBitpacking(OutOfLineBitpacking {
                    uncompressed_bits_per_value: t,
                    values: flat(3),
                })),
            }))
        };
        let rle = Rle {
            values: ool(32),
            run_lengths: ool(8),
        };
        assert!(decode_miniblock(&rle, &[Bytes::new(), Bytes::new()], 4).is_err());
    }
}
