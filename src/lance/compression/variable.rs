//! Variable-width values (`Variable`) and FSST.
//!
//! * Mini-block legacy form (offsets = `Flat` 32/64): one buffer = `n+1` offsets measured from
//!   the buffer start (first offset ≥ `(n+1)*width`), then the value bytes, padded.
//! * Mini-block generic form (2.3, offsets = any 32/64-bit block codec): buffers
//!   `[offsets payload (if the codec has one), value bytes]`; offsets start at 0 and end at
//!   the value buffer length.
//! * Block form: `[u32 32][u32 data_start][u32 offsets][bytes]` or the 64-bit variant
//!   `[u64 64][u64 data_start][u64 offsets][bytes]`; offsets start at 0. An older form
//!   `[u8 width][u32|u64 n][u32|u64 data_start]` is also accepted, as lance does.
//! * FSST: decode the inner `Variable`, then expand every value with the symbol table.

use bytes::Bytes;

use super::common::{read_u32, read_u64, to_usize, vec_with_capacity, words_to_u64};
use super::{sequence, DecodedValues, MAX_DECODED_BYTES};
use crate::error::{Error, Result};
use crate::lance::proto::encodings::compressive_encoding::Compression;
use crate::lance::proto::encodings::{Fsst, Variable};

/// How the offsets of a mini-block `Variable` are stored.
pub(super) enum OffsetsForm<'a> {
    /// Flat offsets inline in the single buffer, relative to the buffer start.
    Legacy { bits: u64 },
    /// Offsets under a generic 32/64-bit block codec, in their own buffer when it has a payload.
    Generic {
        encoding: &'a crate::lance::proto::encodings::CompressiveEncoding,
        bits: u64,
        has_payload: bool,
    },
}

/// Classifies the offsets of a mini-block `Variable`.
pub(super) fn offsets_form(variable: &Variable) -> Result<OffsetsForm<'_>> {
    crate::ensure_corrupt!(
        variable.values.is_none(),
        "mini-block Variable must not carry value buffer compression"
    );
    let offsets = super::common::child(&variable.offsets, "Variable offsets")?;
    if let Some(Compression::Flat(flat)) = &offsets.compression {
        crate::ensure_corrupt!(
            flat.data.is_none() && matches!(flat.bits_per_value, 32 | 64),
            "legacy Variable offsets must be plain Flat 32 or 64 bits, got {} bits",
            flat.bits_per_value
        );
        return Ok(OffsetsForm::Legacy {
            bits: flat.bits_per_value,
        });
    }
    let bits = sequence::infer_bits(offsets)?;
    let has_payload = sequence::has_payload(offsets, bits)?;
    Ok(OffsetsForm::Generic {
        encoding: offsets,
        bits,
        has_payload,
    })
}

/// Decodes a mini-block `Variable` chunk.
pub(super) fn decode_miniblock(
    variable: &Variable,
    buffers: &[Bytes],
    num_values: usize,
) -> Result<DecodedValues> {
    match offsets_form(variable)? {
        OffsetsForm::Legacy { bits } => {
            let [buffer] = buffers else {
                return Err(Error::corrupt(format!(
                    "legacy Variable chunk has {} buffers, expected 1",
                    buffers.len()
                )));
            };
            decode_legacy(bits, buffer, num_values)
        }
        OffsetsForm::Generic {
            encoding,
            bits,
            has_payload,
        } => {
            let expected = 1 + usize::from(has_payload);
            crate::ensure_corrupt!(
                buffers.len() == expected,
                "generic Variable chunk has {} buffers, expected {expected}",
                buffers.len()
            );
            let values = buffers[expected - 1].clone();
            let payload = has_payload.then(|| buffers[0].clone());
            crate::ensure_corrupt!(
                num_values < MAX_DECODED_BYTES,
                "Variable chunk claims {num_values} values"
            );
            let offsets = sequence::decode(encoding, payload, num_values + 1, bits)?;
            check_offsets(&offsets, values.len(), true)?;
            crate::ensure_corrupt!(
                offsets.last() == Some(&(values.len() as u64)),
                "last generic offset {:?} does not equal the {}-byte value buffer",
                offsets.last(),
                values.len()
            );
            if bits == 32 {
                crate::ensure_corrupt!(
                    offsets.last().is_none_or(|last| *last <= i32::MAX as u64),
                    "32-bit offsets exceed i32::MAX"
                );
            }
            Ok(DecodedValues::Variable {
                offsets,
                data: values,
            })
        }
    }
}

/// Legacy mini-block form: offsets relative to the buffer start.
fn decode_legacy(bits: u64, buffer: &Bytes, num_values: usize) -> Result<DecodedValues> {
    let width = (bits / 8) as usize;
    crate::ensure_corrupt!(
        buffer.len().is_multiple_of(width),
        "Variable chunk of {} bytes is not a multiple of the {width}-byte offset",
        buffer.len()
    );
    let num_offsets = num_values
        .checked_add(1)
        .filter(|n| *n <= buffer.len() / width)
        .ok_or_else(|| {
            Error::corrupt(format!(
                "Variable chunk of {} bytes cannot hold {num_values} values' offsets",
                buffer.len()
            ))
        })?;
    let raw = words_to_u64(&buffer[..num_offsets * width], bits, "Variable offsets")?;
    let first = raw[0];
    crate::ensure_corrupt!(
        first >= (num_offsets * width) as u64,
        "Variable value region starts at {first}, inside the {num_offsets} offsets"
    );
    check_offsets(&raw, buffer.len(), false)?;
    let last = raw[num_offsets - 1] as usize;
    let offsets = raw.iter().map(|o| o - first).collect();
    Ok(DecodedValues::Variable {
        offsets,
        data: buffer.slice(first as usize..last),
    })
}

/// Checks offsets are non-decreasing, within `data_len`, and (if asked) start at 0.
pub(super) fn check_offsets(offsets: &[u64], data_len: usize, from_zero: bool) -> Result<()> {
    let Some(first) = offsets.first() else {
        return Err(Error::corrupt("Variable values need at least one offset"));
    };
    if from_zero {
        crate::ensure_corrupt!(*first == 0, "first offset is {first}, expected 0");
    }
    let mut previous = *first;
    for (i, offset) in offsets.iter().enumerate() {
        crate::ensure_corrupt!(
            *offset >= previous,
            "offset {i} ({offset}) is below the previous ({previous})"
        );
        previous = *offset;
    }
    crate::ensure_corrupt!(
        previous <= data_len as u64,
        "last offset {previous} is beyond the {data_len}-byte value data"
    );
    Ok(())
}

/// Block form (dictionaries): `[width][data_start][offsets][bytes]`.
pub(super) fn decode_block(payload: &Bytes, num_values: usize) -> Result<DecodedValues> {
    const WHAT: &str = "Variable block";
    crate::ensure_corrupt!(
        payload.len() >= 4,
        "{WHAT} of {} bytes has no header",
        payload.len()
    );
    let old_scheme = payload[1] != 0 || payload[2] != 0 || payload[3] != 0;
    let (bits, data_start, offsets_start) = if old_scheme {
        match payload[0] {
            32 => (32u64, read_u32(payload, 5, WHAT)? as u64, 9usize),
            64 => (64u64, read_u64(payload, 9, WHAT)?, 17usize),
            other => {
                return Err(Error::corrupt(format!(
                    "{WHAT}: unsupported offset width {other}"
                )))
            }
        }
    } else {
        match read_u32(payload, 0, WHAT)? {
            32 => (32u64, read_u32(payload, 4, WHAT)? as u64, 8usize),
            64 => (64u64, read_u64(payload, 8, WHAT)?, 16usize),
            other => {
                return Err(Error::corrupt(format!(
                    "{WHAT}: unsupported offset width {other}"
                )))
            }
        }
    };
    crate::ensure_corrupt!(
        data_start >= offsets_start as u64 && data_start <= payload.len() as u64,
        "{WHAT}: data start {data_start} outside [{offsets_start}, {}]",
        payload.len()
    );
    let data_start = data_start as usize;
    let width = (bits / 8) as u128;
    let expected = (num_values as u128 + 1) * width;
    crate::ensure_corrupt!(
        (data_start - offsets_start) as u128 == expected,
        "{WHAT}: {} offset bytes for {num_values} values, expected {expected}",
        data_start - offsets_start
    );
    let offsets = words_to_u64(&payload[offsets_start..data_start], bits, WHAT)?;
    let data = payload.slice(data_start..);
    check_offsets(&offsets, data.len(), true)?;
    Ok(DecodedValues::Variable { offsets, data })
}

/// Checks the symbol table the way the `fsst` crate reads it, with clear messages.
fn check_symbol_table(table: &[u8]) -> Result<()> {
    let size = fsst::fsst::FSST_SYMBOL_TABLE_SIZE;
    crate::ensure_corrupt!(
        table.len() == size,
        "FSST symbol table has {} bytes, expected {size}",
        table.len()
    );
    let header = read_u64(table, 0, "FSST symbol table")?;
    crate::ensure_corrupt!(
        header >> 32 == 0x4653_5354,
        "FSST symbol table has no FSST magic"
    );
    let symbols = (header & 0xff) as usize;
    // n symbols of 8 bytes follow the header, then their n lengths.
    let lens = &table[8 + symbols * 8..8 + symbols * 9];
    if let Some(i) = lens.iter().position(|len| !(1..=8).contains(len)) {
        return Err(Error::corrupt(format!(
            "FSST symbol {i} has length {}, expected 1..=8",
            lens[i]
        )));
    }
    Ok(())
}

/// Expands FSST-compressed values (`offsets` into `data`) with `table`.
pub(super) fn fsst_expand(table: &[u8], offsets: &[u64], data: &Bytes) -> Result<DecodedValues> {
    check_symbol_table(table)?;
    check_offsets(offsets, data.len(), false)?;
    let in_offsets: Vec<i64> = offsets
        .iter()
        .map(|o| i64::try_from(*o).map_err(|_| Error::corrupt("FSST offset exceeds i64")))
        .collect::<Result<_>>()?;
    // The decoder needs 8x the input: each code expands to at most 8 bytes.
    let out_len = data
        .len()
        .checked_mul(8)
        .filter(|n| *n <= MAX_DECODED_BYTES)
        .ok_or_else(|| {
            Error::corrupt(format!(
                "FSST output for {} input bytes is above the limit",
                data.len()
            ))
        })?;
    let mut out = Vec::new();
    out.try_reserve_exact(out_len)
        .map_err(|_| Error::corrupt("FSST: cannot allocate output"))?;
    out.resize(out_len, 0);
    let mut out_offsets: Vec<i64> = vec_with_capacity(in_offsets.len(), "FSST offsets")?;
    out_offsets.resize(in_offsets.len(), 0);
    fsst::fsst::decompress(table, data, &in_offsets, &mut out, &mut out_offsets)
        .map_err(|e| Error::corrupt(format!("FSST data is invalid: {e}")).with_source(e))?;
    let offsets: Vec<u64> = out_offsets.iter().map(|o| *o as u64).collect();
    check_offsets(&offsets, out.len(), false)?;
    Ok(DecodedValues::Variable {
        offsets,
        data: Bytes::from(out),
    })
}

/// Decodes a mini-block FSST chunk: inner Variable, then expansion.
pub(super) fn decode_fsst_miniblock(
    fsst: &Fsst,
    buffers: &[Bytes],
    num_values: usize,
) -> Result<DecodedValues> {
    let inner = super::common::child(&fsst.values, "Fsst")?;
    let Some(Compression::Variable(variable)) = &inner.compression else {
        return Err(Error::corrupt("Fsst values must be a Variable encoding"));
    };
    match decode_miniblock(variable, buffers, num_values)? {
        DecodedValues::Variable { offsets, data } => {
            fsst_expand(&fsst.symbol_table, &offsets, &data)
        }
        _ => Err(Error::corrupt(
            "Fsst inner encoding did not decode to variable-width values",
        )),
    }
}

/// Number of buffers of a mini-block `Variable`.
pub(super) fn miniblock_buffer_count(variable: &Variable) -> Result<usize> {
    Ok(match offsets_form(variable)? {
        OffsetsForm::Legacy { .. } => 1,
        OffsetsForm::Generic { has_payload, .. } => 1 + usize::from(has_payload),
    })
}

/// Full-zip `Variable`: the caller's offsets and bytes, checked.
pub(super) fn fullzip_passthrough(offsets: Vec<u64>, data: Bytes) -> Result<DecodedValues> {
    check_offsets(&offsets, data.len(), false)?;
    Ok(DecodedValues::Variable { offsets, data })
}

/// Full-zip general compression: every value is its own framed LZ4/zstd buffer.
pub(super) fn fullzip_general(
    scheme: super::general::Scheme,
    offsets: &[u64],
    data: &Bytes,
) -> Result<DecodedValues> {
    check_offsets(offsets, data.len(), false)?;
    let mut out = Vec::new();
    let mut out_offsets = vec_with_capacity::<u64>(offsets.len(), "full-zip offsets")?;
    out_offsets.push(0);
    for pair in offsets.windows(2) {
        let value = &data[to_usize(pair[0], "offset")?..to_usize(pair[1], "offset")?];
        let decoded = super::general::decompress(scheme, value)?;
        crate::ensure_corrupt!(
            out.len() + decoded.len() <= MAX_DECODED_BYTES,
            "full-zip general values decompress above the {MAX_DECODED_BYTES}-byte limit"
        );
        out.extend_from_slice(&decoded);
        out_offsets.push(out.len() as u64);
    }
    Ok(DecodedValues::Variable {
        offsets: out_offsets,
        data: Bytes::from(out),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lance::proto::encodings::{CompressiveEncoding, Flat};

    fn variable(bits: u64) -> Variable {
        Variable {
            offsets: Some(Box::new(CompressiveEncoding {
                compression: Some(Compression::Flat(Flat {
                    bits_per_value: bits,
                    data: None,
                })),
            })),
            values: None,
        }
    }

    fn strings(values: &DecodedValues) -> Vec<Vec<u8>> {
        let DecodedValues::Variable { offsets, data } = values else {
            panic!("not variable")
        };
        offsets
            .windows(2)
            .map(|w| data[w[0] as usize..w[1] as usize].to_vec())
            .collect()
    }

    #[test]
    fn legacy_u32_chunk_with_padding() {
        // 3 values "a", "", "bcd": 4 offsets (16 bytes) then 4 bytes of data, then padding.
        let mut chunk = Vec::new();
        for o in [16u32, 17, 17, 20] {
            chunk.extend(o.to_le_bytes());
        }
        chunk.extend(b"abcd");
        let decoded = decode_miniblock(&variable(32), &[Bytes::from(chunk.clone())], 3).unwrap();
        assert_eq!(
            strings(&decoded),
            vec![b"a".to_vec(), vec![], b"bcd".to_vec()]
        );
        // Non-monotonic offsets, offsets past the end, and too many values are corrupt.
        let mut bad = chunk.clone();
        bad[4..8].copy_from_slice(&15u32.to_le_bytes());
        assert!(decode_miniblock(&variable(32), &[Bytes::from(bad)], 3).is_err());
        let mut bad = chunk.clone();
        bad[12..16].copy_from_slice(&21u32.to_le_bytes());
        assert!(decode_miniblock(&variable(32), &[Bytes::from(bad)], 3).is_err());
        assert!(decode_miniblock(&variable(32), &[Bytes::from(chunk)], 5).is_err());
    }

    #[test]
    fn legacy_u64_chunk() {
        let mut chunk = Vec::new();
        for o in [24u64, 26, 29] {
            chunk.extend(o.to_le_bytes());
        }
        chunk.extend(b"hixyz");
        chunk.extend([0x48; 3]);
        let decoded = decode_miniblock(&variable(64), &[Bytes::from(chunk)], 2).unwrap();
        assert_eq!(strings(&decoded), vec![b"hi".to_vec(), b"xyz".to_vec()]);
    }

    #[test]
    fn block_form_32_and_64() {
        let mut payload = Vec::new();
        payload.extend(32u32.to_le_bytes());
        payload.extend(20u32.to_le_bytes());
        for o in [0u32, 3, 5] {
            payload.extend(o.to_le_bytes());
        }
        payload.extend(b"fooba");
        let decoded = decode_block(&Bytes::from(payload.clone()), 2).unwrap();
        assert_eq!(strings(&decoded), vec![b"foo".to_vec(), b"ba".to_vec()]);
        assert!(decode_block(&Bytes::from(payload.clone()), 3).is_err());
        let mut bad = payload;
        bad[8..12].copy_from_slice(&1u32.to_le_bytes());
        assert!(decode_block(&Bytes::from(bad), 2).is_err());

        let mut payload = Vec::new();
        payload.extend(64u64.to_le_bytes());
        payload.extend(32u64.to_le_bytes());
        for o in [0u64, 1] {
            payload.extend(o.to_le_bytes());
        }
        payload.push(b'z');
        assert_eq!(
            strings(&decode_block(&Bytes::from(payload), 1).unwrap()),
            vec![b"z".to_vec()]
        );
    }

    #[test]
    fn fsst_symbol_table_validation() {
        let good = {
            let mut table = vec![0u8; fsst::fsst::FSST_SYMBOL_TABLE_SIZE];
            table[..8].copy_from_slice(&(0x4653_5354u64 << 32).to_le_bytes());
            table
        };
        assert!(check_symbol_table(&good).is_ok());
        assert!(check_symbol_table(&good[..100]).is_err());
        let mut bad_len = good.clone();
        bad_len[..8].copy_from_slice(&((0x4653_5354u64 << 32) | 1).to_le_bytes());
        bad_len[8 + 8] = 9; // symbol 0 longer than 8 bytes
        assert!(check_symbol_table(&bad_len).is_err());
    }

    #[test]
    fn fsst_round_trip_with_crate_compressor() {
        let words: Vec<String> = (0..3000)
            .map(|i| format!("value-{:05}-lakeseek", i % 700))
            .collect();
        let mut input = Vec::new();
        let mut offsets = vec![0i32];
        for w in &words {
            input.extend(w.as_bytes());
            offsets.push(input.len() as i32);
        }
        let mut table = vec![0u8; fsst::fsst::FSST_SYMBOL_TABLE_SIZE];
        let mut out = vec![0u8; input.len() * 2];
        let mut out_offsets = vec![0i32; offsets.len() * 2];
        fsst::fsst::compress(&mut table, &input, &offsets, &mut out, &mut out_offsets).unwrap();
        let compressed_offsets: Vec<u64> = out_offsets[..offsets.len()]
            .iter()
            .map(|o| *o as u64)
            .collect();
        let data = Bytes::from(out[..*compressed_offsets.last().unwrap() as usize].to_vec());
        let decoded = fsst_expand(&table, &compressed_offsets, &data).unwrap();
        let expected: Vec<Vec<u8>> = words.iter().map(|w| w.as_bytes().to_vec()).collect();
        assert_eq!(strings(&decoded), expected);
    }
}
