//! Small checked helpers shared by the codec modules: payload access, bounded allocation,
//! little-endian reads and fixed-width conversions.

use bytes::Bytes;

use super::MAX_DECODED_BYTES;
use crate::error::{Error, Result};
use crate::lance::proto::encodings::compressive_encoding::Compression;
use crate::lance::proto::encodings::CompressiveEncoding;

/// The codec variant of a node, or `Corrupt` when the oneof is unset.
pub(super) fn variant(encoding: &CompressiveEncoding) -> Result<&Compression> {
    encoding
        .compression
        .as_ref()
        .ok_or_else(|| Error::corrupt("compressive encoding has no codec set"))
}

/// A required child encoding.
pub(super) fn child<'a>(
    child: &'a Option<Box<CompressiveEncoding>>,
    what: &str,
) -> Result<&'a CompressiveEncoding> {
    child
        .as_deref()
        .ok_or_else(|| Error::corrupt(format!("{what} is missing its child encoding")))
}

/// The payload of a codec that needs one.
pub(super) fn require_payload(payload: Option<Bytes>, codec: &str) -> Result<Bytes> {
    payload.ok_or_else(|| Error::corrupt(format!("{codec} block requires a payload buffer")))
}

/// Checks that a metadata-only codec got no payload (an empty buffer is tolerated).
pub(super) fn require_no_payload(payload: &Option<Bytes>, codec: &str) -> Result<()> {
    match payload {
        Some(bytes) if !bytes.is_empty() => Err(Error::corrupt(format!(
            "{codec} has no payload but a {}-byte buffer was given",
            bytes.len()
        ))),
        _ => Ok(()),
    }
}

/// Bytes needed by `num_values` values of `bits` bits each (rounded up), bounded by
/// [`MAX_DECODED_BYTES`].
pub(super) fn packed_len(num_values: usize, bits: u64, what: &str) -> Result<usize> {
    let total_bits = (num_values as u128) * (bits as u128);
    let bytes = total_bits.div_ceil(8);
    if bytes > MAX_DECODED_BYTES as u128 {
        return Err(Error::corrupt(format!(
            "{what}: {num_values} values of {bits} bits need {bytes} bytes, above the {MAX_DECODED_BYTES}-byte limit"
        )));
    }
    Ok(bytes as usize)
}

/// Checks that an output of `num_values` items of `item_bytes` bytes stays within the
/// decode limit, so that it can be allocated.
pub(super) fn check_output(num_values: usize, item_bytes: usize, what: &str) -> Result<()> {
    let bytes = (num_values as u128) * (item_bytes.max(1) as u128);
    if bytes > MAX_DECODED_BYTES as u128 {
        return Err(Error::corrupt(format!(
            "{what}: {num_values} values would need {bytes} bytes, above the {MAX_DECODED_BYTES}-byte limit"
        )));
    }
    Ok(())
}

/// A vector with room for `num_values` items, after checking the decode limit.
pub(super) fn vec_with_capacity<T>(num_values: usize, what: &str) -> Result<Vec<T>> {
    check_output(num_values, std::mem::size_of::<T>(), what)?;
    let mut out = Vec::new();
    out.try_reserve_exact(num_values)
        .map_err(|_| Error::corrupt(format!("{what}: cannot allocate {num_values} values")))?;
    Ok(out)
}

/// Little-endian u32 at `at`.
pub(super) fn read_u32(bytes: &[u8], at: usize, what: &str) -> Result<u32> {
    bytes
        .get(at..at.saturating_add(4))
        .and_then(|s| s.try_into().ok())
        .map(u32::from_le_bytes)
        .ok_or_else(|| {
            Error::corrupt(format!(
                "{what}: {} bytes, cannot read u32 at {at}",
                bytes.len()
            ))
        })
}

/// Little-endian u64 at `at`.
pub(super) fn read_u64(bytes: &[u8], at: usize, what: &str) -> Result<u64> {
    bytes
        .get(at..at.saturating_add(8))
        .and_then(|s| s.try_into().ok())
        .map(u64::from_le_bytes)
        .ok_or_else(|| {
            Error::corrupt(format!(
                "{what}: {} bytes, cannot read u64 at {at}",
                bytes.len()
            ))
        })
}

/// A u64 read from the file as a `usize` length or count.
pub(super) fn to_usize(value: u64, what: &str) -> Result<usize> {
    usize::try_from(value)
        .map_err(|_| Error::corrupt(format!("{what} {value} does not fit in memory")))
}

/// Byte width of an unsigned word type of `bits` bits (8, 16, 32 or 64).
pub(super) fn word_bytes(bits: u64, what: &str) -> Result<usize> {
    match bits {
        8 | 16 | 32 | 64 => Ok((bits / 8) as usize),
        other => Err(Error::corrupt(format!(
            "{what}: unsupported word width {other} bits (8/16/32/64)"
        ))),
    }
}

/// Reads `data` as little-endian unsigned words of `bits` bits (8/16/32/64) widened to u64.
/// The length must be an exact multiple of the word size.
pub(super) fn words_to_u64(data: &[u8], bits: u64, what: &str) -> Result<Vec<u64>> {
    let width = word_bytes(bits, what)?;
    crate::ensure_corrupt!(
        data.len().is_multiple_of(width),
        "{what}: {} bytes is not a multiple of the {width}-byte word",
        data.len()
    );
    let mut out = vec_with_capacity::<u64>(data.len() / width, what)?;
    for word in data.chunks_exact(width) {
        let mut buf = [0u8; 8];
        buf[..width].copy_from_slice(word);
        out.push(u64::from_le_bytes(buf));
    }
    Ok(out)
}

/// Writes u64 values as little-endian words of `bits` bits (32 or 64; values must fit).
pub(super) fn u64_to_words(values: &[u64], bits: u64, what: &str) -> Result<Bytes> {
    let width = word_bytes(bits, what)?;
    check_output(values.len(), width, what)?;
    let mut out = Vec::new();
    out.try_reserve_exact(values.len() * width)
        .map_err(|_| Error::corrupt(format!("{what}: cannot allocate output")))?;
    for value in values {
        if width < 8 && *value >> (width * 8) != 0 {
            return Err(Error::corrupt(format!(
                "{what}: value {value} does not fit in {bits} bits"
            )));
        }
        out.extend_from_slice(&value.to_le_bytes()[..width]);
    }
    Ok(Bytes::from(out))
}

/// Repeats `scalar` `count` times (bounded by the decode limit).
pub(super) fn repeat_scalar(scalar: &[u8], count: usize, what: &str) -> Result<Bytes> {
    if scalar.is_empty() {
        return Ok(Bytes::new());
    }
    check_output(count, scalar.len(), what)?;
    let total = count.saturating_mul(scalar.len());
    let mut out = Vec::new();
    out.try_reserve_exact(total)
        .map_err(|_| Error::corrupt(format!("{what}: cannot allocate {total} bytes")))?;
    for _ in 0..count {
        out.extend_from_slice(scalar);
    }
    Ok(Bytes::from(out))
}
