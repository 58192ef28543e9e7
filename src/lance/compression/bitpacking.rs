//! FastLanes bitpacking: inline (bit width stored per 1024-value block) and out-of-line
//! (one width for the whole buffer).
//!
//! Both pack blocks of 1024 values of a T-bit word type (T = 8/16/32/64) into `1024 * W / T`
//! T-bit words in the FastLanes transposed order (see `docs/lance-file-format.md` §3). The
//! unpack kernels come from the `lance-bitpacking` crate; they are `unsafe` and only
//! debug-checked, so every call goes through [`unpack_block`], which validates `W <= T` and the
//! exact input/output lengths first.

use lance_bitpacking::BitPacking;

use super::common::{check_output, word_bytes};
use crate::error::{Error, Result};

/// Values per FastLanes block.
pub(super) const BLOCK_VALUES: usize = 1024;

/// Unpacks one block of `1024 * width / T` words into 1024 values.
fn unpack_block<T: BitPacking + Copy + Default>(width: usize, packed: &[T]) -> Result<Vec<T>> {
    let type_bits = std::mem::size_of::<T>() * 8;
    crate::ensure_corrupt!(
        width <= type_bits,
        "bit width {width} exceeds the {type_bits}-bit word"
    );
    let expected_words = BLOCK_VALUES * width / type_bits;
    crate::ensure_corrupt!(
        packed.len() == expected_words,
        "packed block has {} words, expected {expected_words} for width {width}",
        packed.len()
    );
    let mut out = vec![T::default(); BLOCK_VALUES];
    // SAFETY: width <= T, input length == 1024 * W / T and output length == 1024 were checked
    // just above, which is the kernel's whole contract.
    unsafe { T::unchecked_unpack(width, packed, &mut out) };
    Ok(out)
}

/// A little-endian word type the kernels support.
trait Word: BitPacking + Copy + Default {
    fn from_le(bytes: &[u8]) -> Self;
    fn write_le(self, out: &mut Vec<u8>);
    fn as_u64(self) -> u64;
}

macro_rules! impl_word {
    ($t:ty) => {
        impl Word for $t {
            fn from_le(bytes: &[u8]) -> Self {
                let mut buf = [0u8; std::mem::size_of::<$t>()];
                buf.copy_from_slice(bytes);
                <$t>::from_le_bytes(buf)
            }
            fn write_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn as_u64(self) -> u64 {
                self as u64
            }
        }
    };
}
impl_word!(u8);
impl_word!(u16);
impl_word!(u32);
impl_word!(u64);

fn to_words<T: Word>(bytes: &[u8]) -> Vec<T> {
    bytes
        .chunks_exact(std::mem::size_of::<T>())
        .map(T::from_le)
        .collect()
}

/// Decodes `num_values` values from concatenated inline-bitpacked blocks
/// `[W][1024*W/T words]...`; the payload must be consumed exactly.
pub(super) fn decode_inline(type_bits: u64, payload: &[u8], num_values: usize) -> Result<Vec<u8>> {
    match type_bits {
        8 => decode_inline_typed::<u8>(payload, num_values),
        16 => decode_inline_typed::<u16>(payload, num_values),
        32 => decode_inline_typed::<u32>(payload, num_values),
        64 => decode_inline_typed::<u64>(payload, num_values),
        other => Err(Error::corrupt(format!(
            "inline bitpacking word width {other} is not 8/16/32/64"
        ))),
    }
}

fn decode_inline_typed<T: Word>(payload: &[u8], num_values: usize) -> Result<Vec<u8>> {
    let word = std::mem::size_of::<T>();
    let type_bits = word * 8;
    if num_values == 0 {
        return Ok(Vec::new());
    }
    crate::ensure_corrupt!(
        payload.len().is_multiple_of(word),
        "inline bitpacking payload of {} bytes is not a multiple of the {word}-byte word",
        payload.len()
    );
    let num_blocks = num_values.div_ceil(BLOCK_VALUES);
    // Every block has at least its width word.
    crate::ensure_corrupt!(
        num_blocks <= payload.len() / word,
        "inline bitpacking: {num_values} values need {num_blocks} blocks but the payload has {} bytes",
        payload.len()
    );
    check_output(num_values, word, "inline bitpacking")?;
    let mut out = Vec::with_capacity(num_values * word);
    let mut pos = 0usize;
    for block in 0..num_blocks {
        let header = payload.get(pos..pos + word).ok_or_else(|| {
            Error::corrupt(format!("inline bitpacking block {block} has no width word"))
        })?;
        let width = T::from_le(header).as_u64();
        crate::ensure_corrupt!(
            width <= type_bits as u64,
            "inline bitpacking block {block}: width {width} exceeds {type_bits} bits"
        );
        let width = width as usize;
        let block_bytes = BLOCK_VALUES * width / type_bits * word;
        let start = pos + word;
        let packed = payload.get(start..start + block_bytes).ok_or_else(|| {
            Error::corrupt(format!(
                "inline bitpacking block {block}: width {width} needs {block_bytes} bytes, {} left",
                payload.len() - start
            ))
        })?;
        let values = unpack_block::<T>(width, &to_words::<T>(packed))?;
        let keep = (num_values - block * BLOCK_VALUES).min(BLOCK_VALUES);
        for value in &values[..keep] {
            value.write_le(&mut out);
        }
        pos = start + block_bytes;
    }
    crate::ensure_corrupt!(
        pos == payload.len(),
        "inline bitpacking payload has {} trailing bytes after {num_values} values",
        payload.len() - pos
    );
    Ok(out)
}

/// The two payload sizes an out-of-line packed buffer of `num_values` values may have:
/// `(raw tail, padded tail)`.
pub(super) fn out_of_line_sizes(
    num_values: usize,
    type_bits: u64,
    width: u64,
) -> Result<(u128, u128)> {
    let word = word_bytes(type_bits, "out-of-line bitpacking")? as u128;
    crate::ensure_corrupt!(
        width <= type_bits,
        "out-of-line bitpacking width {width} exceeds the {type_bits}-bit word"
    );
    let block_bytes = (BLOCK_VALUES as u128 * width as u128).div_ceil(type_bits as u128) * word;
    let full = (num_values / BLOCK_VALUES) as u128 * block_bytes;
    let tail = (num_values % BLOCK_VALUES) as u128;
    let raw = full + tail * word;
    let padded = full + if tail > 0 { block_bytes } else { 0 };
    Ok((raw, padded))
}

/// Decodes an out-of-line packed payload: `floor(n/1024)` packed blocks, then the tail either
/// raw (T-bit words) or as one more padded block; raw iff the length says so.
pub(super) fn decode_out_of_line(
    type_bits: u64,
    width: u64,
    payload: &[u8],
    num_values: usize,
) -> Result<Vec<u8>> {
    let (raw, padded) = out_of_line_sizes(num_values, type_bits, width)?;
    let len = payload.len() as u128;
    crate::ensure_corrupt!(
        len == raw || len == padded,
        "out-of-line bitpacking payload has {} bytes, expected {raw} (raw tail) or {padded} (padded tail) for {num_values} values of width {width}",
        payload.len()
    );
    let tail_is_raw = len == raw && !num_values.is_multiple_of(BLOCK_VALUES);
    match type_bits {
        8 => decode_ool_typed::<u8>(width as usize, payload, num_values, tail_is_raw),
        16 => decode_ool_typed::<u16>(width as usize, payload, num_values, tail_is_raw),
        32 => decode_ool_typed::<u32>(width as usize, payload, num_values, tail_is_raw),
        64 => decode_ool_typed::<u64>(width as usize, payload, num_values, tail_is_raw),
        other => Err(Error::corrupt(format!(
            "out-of-line bitpacking word width {other} is not 8/16/32/64"
        ))),
    }
}

fn decode_ool_typed<T: Word>(
    width: usize,
    payload: &[u8],
    num_values: usize,
    tail_is_raw: bool,
) -> Result<Vec<u8>> {
    let word = std::mem::size_of::<T>();
    let type_bits = word * 8;
    let block_bytes = (BLOCK_VALUES * width).div_ceil(type_bits) * word;
    check_output(num_values, word, "out-of-line bitpacking")?;
    let mut out = Vec::with_capacity(num_values * word);
    let full_blocks = num_values / BLOCK_VALUES;
    let tail = num_values % BLOCK_VALUES;
    for block in 0..full_blocks {
        let packed = &payload[block * block_bytes..(block + 1) * block_bytes];
        for value in unpack_block::<T>(width, &to_words::<T>(packed))? {
            value.write_le(&mut out);
        }
    }
    let tail_start = full_blocks * block_bytes;
    if tail > 0 {
        if tail_is_raw {
            out.extend_from_slice(&payload[tail_start..tail_start + tail * word]);
        } else {
            let packed = &payload[tail_start..tail_start + block_bytes];
            let values = unpack_block::<T>(width, &to_words::<T>(packed))?;
            for value in &values[..tail] {
                value.write_le(&mut out);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FL_ORDER: [usize; 8] = [0, 4, 2, 6, 1, 5, 3, 7];

    /// Independent FastLanes packer written from the layout description in the format doc:
    /// packed word `k*LANES + lane` holds bits `[k*T, (k+1)*T)` of the lane's bit stream; row r
    /// of the lane is bits `[r*W, (r+1)*W)` and is the value at
    /// `FL_ORDER[r/8]*16 + (r%8)*128 + lane`.
    fn pack_reference(values: &[u64], type_bits: usize, width: usize) -> Vec<u64> {
        assert_eq!(values.len(), 1024);
        let lanes = 1024 / type_bits;
        let words = 1024 * width / type_bits;
        let mut packed = vec![0u64; words];
        for lane in 0..lanes {
            for row in 0..type_bits {
                let index = FL_ORDER[row / 8] * 16 + (row % 8) * 128 + lane;
                let value = values[index];
                for bit in 0..width {
                    if value >> bit & 1 == 1 {
                        let stream_bit = row * width + bit;
                        let k = stream_bit / type_bits;
                        packed[k * lanes + lane] |= 1 << (stream_bit % type_bits);
                    }
                }
            }
        }
        packed
    }

    fn words_le(words: &[u64], type_bits: usize) -> Vec<u8> {
        words
            .iter()
            .flat_map(|w| w.to_le_bytes()[..type_bits / 8].to_vec())
            .collect()
    }

    fn values_le(bytes: &[u8], type_bits: usize) -> Vec<u64> {
        bytes
            .chunks(type_bits / 8)
            .map(|c| {
                let mut b = [0u8; 8];
                b[..c.len()].copy_from_slice(c);
                u64::from_le_bytes(b)
            })
            .collect()
    }

    fn sample(width: usize, seed: u64) -> Vec<u64> {
        let mask = if width == 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        let mut state = seed | 1;
        (0..1024)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state & mask
            })
            .collect()
    }

    #[test]
    fn inline_matches_reference_layout_for_every_word_type() {
        for (type_bits, width) in [
            (8, 3),
            (16, 1),
            (16, 11),
            (32, 20),
            (32, 32),
            (64, 35),
            (64, 0),
        ] {
            let values = sample(width, 99 + width as u64);
            let mut payload = words_le(&[width as u64], type_bits);
            payload.extend(words_le(
                &pack_reference(&values, type_bits, width),
                type_bits,
            ));
            let decoded = decode_inline(type_bits as u64, &payload, 1000).unwrap();
            assert_eq!(
                values_le(&decoded, type_bits),
                values[..1000],
                "T={type_bits} W={width}"
            );
        }
    }

    #[test]
    fn inline_multiple_blocks_and_exact_length() {
        let a = sample(5, 1);
        let b = sample(9, 2);
        let mut payload = words_le(&[5], 32);
        payload.extend(words_le(&pack_reference(&a, 32, 5), 32));
        payload.extend(words_le(&[9], 32));
        payload.extend(words_le(&pack_reference(&b, 32, 9), 32));
        let decoded = values_le(&decode_inline(32, &payload, 1500).unwrap(), 32);
        assert_eq!(decoded[..1024], a[..]);
        assert_eq!(decoded[1024..], b[..476]);
        // Trailing garbage, truncation and a width above the word are all corrupt.
        let mut longer = payload.clone();
        longer.extend([0; 4]);
        assert!(decode_inline(32, &longer, 1500).is_err());
        assert!(decode_inline(32, &payload[..payload.len() - 4], 1500).is_err());
        let mut wide = payload.clone();
        wide[0] = 33;
        assert!(matches!(
            decode_inline(32, &wide, 1500),
            Err(Error::Corrupt { .. })
        ));
        // Too many values for the blocks present.
        assert!(decode_inline(32, &payload, 5000).is_err());
        assert!(decode_inline(32, &[], 0).unwrap().is_empty());
    }

    #[test]
    fn out_of_line_raw_and_padded_tails() {
        // Levels: T=16, W=1, 1030 values → one block + 6-value tail.
        let values: Vec<u64> = (0..2048).map(|i| (i % 3 == 0) as u64).collect();
        let block0 = words_le(&pack_reference(&values[..1024], 16, 1), 16);
        let mut raw = block0.clone();
        raw.extend(words_le(&values[1024..1030], 16));
        let decoded = values_le(&decode_out_of_line(16, 1, &raw, 1030).unwrap(), 16);
        assert_eq!(decoded, values[..1030]);

        let mut padded_values = values[1024..1030].to_vec();
        padded_values.resize(1024, 0);
        let mut padded = block0;
        padded.extend(words_le(&pack_reference(&padded_values, 16, 1), 16));
        let decoded = values_le(&decode_out_of_line(16, 1, &padded, 1030).unwrap(), 16);
        assert_eq!(decoded, values[..1030]);

        assert!(decode_out_of_line(16, 1, &padded[..padded.len() - 2], 1030).is_err());
        assert!(decode_out_of_line(16, 17, &padded, 1030).is_err());
        assert!(decode_out_of_line(12, 1, &padded, 1030).is_err());
    }

    #[test]
    fn out_of_line_u64_counts_of_width_three() {
        let values: Vec<u64> = (0..1024).map(|i| i % 8).collect();
        let payload = words_le(&pack_reference(&values, 64, 3), 64);
        assert_eq!(payload.len(), 384);
        let decoded = values_le(&decode_out_of_line(64, 3, &payload, 1024).unwrap(), 64);
        assert_eq!(decoded, values);
    }

    #[test]
    fn reference_packer_agrees_with_the_kernel_crate() {
        let values: Vec<u32> = sample(13, 7).into_iter().map(|v| v as u32).collect();
        let mut packed = vec![0u32; 1024 * 13 / 32];
        // SAFETY: input 1024 values, output 1024*13/32 words, width 13 <= 32.
        unsafe { u32::unchecked_pack(13, &values, &mut packed) };
        let reference = pack_reference(
            &values.iter().map(|v| *v as u64).collect::<Vec<_>>(),
            32,
            13,
        );
        assert_eq!(
            packed.iter().map(|w| *w as u64).collect::<Vec<_>>(),
            reference
        );
    }
}
