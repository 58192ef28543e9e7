//! General-purpose buffer compression (LZ4, zstd) as framed by lance 14.0.2.
//!
//! * LZ4: `[u32 LE uncompressed length][LZ4 block]`.
//! * zstd: `[u64 LE uncompressed length][zstd frame(s)]`, or (legacy) a bare frame that starts
//!   with the zstd magic `28 B5 2F FD` and whose frame header descriptor has the reserved bit
//!   clear. An empty zstd payload decodes to nothing.
//!
//! Output sizes are bounded by the declared length, by [`MAX_DECODED_BYTES`] and (for LZ4) by
//! the largest ratio LZ4 can reach, so a forged length cannot make us allocate much more than
//! the compressed bytes justify.

use std::io::Read;

use super::MAX_DECODED_BYTES;
use crate::error::{Error, Result};
use crate::lance::proto::encodings::{BufferCompression, CompressionScheme};

/// A general compression algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Scheme {
    /// LZ4 block with a u32 length prefix.
    Lz4,
    /// zstd frame with a u64 length prefix (or a legacy bare frame).
    Zstd,
}

impl Scheme {
    /// Lower-case name used in descriptions.
    pub(super) fn name(self) -> &'static str {
        match self {
            Scheme::Lz4 => "lz4",
            Scheme::Zstd => "zstd",
        }
    }
}

/// The algorithm of a `BufferCompression` (unspecified / unknown → `Corrupt`).
pub(super) fn scheme_of(compression: Option<&BufferCompression>) -> Result<Scheme> {
    let compression = compression
        .ok_or_else(|| Error::corrupt("general compression has no compression config"))?;
    match CompressionScheme::try_from(compression.scheme) {
        Ok(CompressionScheme::CompressionAlgorithmLz4) => Ok(Scheme::Lz4),
        Ok(CompressionScheme::CompressionAlgorithmZstd) => Ok(Scheme::Zstd),
        _ => Err(Error::corrupt(format!(
            "unsupported general compression scheme {}",
            compression.scheme
        ))),
    }
}

/// Name of a `BufferCompression` for descriptions ("lz4", "zstd", "unspecified").
pub(super) fn scheme_name(compression: Option<&BufferCompression>) -> String {
    match scheme_of(compression) {
        Ok(scheme) => scheme.name().to_string(),
        Err(_) => match compression {
            Some(c) if c.scheme != 0 => format!("scheme{}", c.scheme),
            _ => "unspecified".to_string(),
        },
    }
}

/// Decompresses one framed buffer whose size is given by its own header.
pub(super) fn decompress(scheme: Scheme, input: &[u8]) -> Result<Vec<u8>> {
    match scheme {
        Scheme::Lz4 => decompress_lz4(input, None),
        Scheme::Zstd => decompress_zstd(input, None),
    }
}

/// Decompresses one framed buffer that must produce exactly `expected` bytes.
pub(super) fn decompress_exact(scheme: Scheme, input: &[u8], expected: usize) -> Result<Vec<u8>> {
    crate::ensure_corrupt!(
        expected <= MAX_DECODED_BYTES,
        "{}: expected output of {expected} bytes is above the {MAX_DECODED_BYTES}-byte limit",
        scheme.name()
    );
    let out = match scheme {
        Scheme::Lz4 => decompress_lz4(input, Some(expected))?,
        Scheme::Zstd => decompress_zstd(input, Some(expected))?,
    };
    crate::ensure_corrupt!(
        out.len() == expected,
        "{} produced {} bytes, expected {expected}",
        scheme.name(),
        out.len()
    );
    Ok(out)
}

/// Largest output an LZ4 block of `compressed` bytes can produce (each length-extension byte
/// adds at most 255 bytes).
fn lz4_max_output(compressed: usize) -> usize {
    compressed.saturating_mul(255).saturating_add(64)
}

fn decompress_lz4(input: &[u8], expected: Option<usize>) -> Result<Vec<u8>> {
    crate::ensure_corrupt!(
        input.len() >= 4,
        "lz4 payload of {} bytes has no length prefix",
        input.len()
    );
    let declared = u32::from_le_bytes([input[0], input[1], input[2], input[3]]) as usize;
    let block = &input[4..];
    if let Some(expected) = expected {
        crate::ensure_corrupt!(
            declared == expected,
            "lz4 declares {declared} bytes, expected {expected}"
        );
    }
    crate::ensure_corrupt!(
        declared <= MAX_DECODED_BYTES && declared <= lz4_max_output(block.len()),
        "lz4 declares {declared} bytes from a {}-byte block (impossible or above the limit)",
        block.len()
    );
    let mut out = Vec::new();
    out.try_reserve_exact(declared)
        .map_err(|_| Error::corrupt(format!("lz4: cannot allocate {declared} bytes")))?;
    out.resize(declared, 0);
    let written = lz4_flex::block::decompress_into(block, &mut out)
        .map_err(|e| Error::corrupt(format!("lz4 block is invalid: {e}")).with_source(e))?;
    crate::ensure_corrupt!(
        written == declared,
        "lz4 produced {written} bytes, declared {declared}"
    );
    Ok(out)
}

const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// Lance's rule: a payload is a bare (legacy) zstd frame when it is shorter than 8 bytes, or
/// starts with the magic and has the frame-header reserved bit clear.
fn is_bare_zstd_frame(input: &[u8]) -> bool {
    if input.len() < 8 {
        return true;
    }
    input[..4] == ZSTD_MAGIC && input[4] & 0b0001_0000 == 0
}

fn decompress_zstd(input: &[u8], expected: Option<usize>) -> Result<Vec<u8>> {
    if input.is_empty() {
        return match expected {
            None | Some(0) => Ok(Vec::new()),
            Some(n) => Err(Error::corrupt(format!(
                "zstd payload is empty, expected {n} bytes"
            ))),
        };
    }
    let (frame, limit) = if is_bare_zstd_frame(input) {
        (input, expected.unwrap_or(MAX_DECODED_BYTES))
    } else {
        let declared = u64::from_le_bytes(input[..8].try_into().unwrap_or([0; 8]));
        crate::ensure_corrupt!(
            declared <= MAX_DECODED_BYTES as u64,
            "zstd declares {declared} bytes, above the {MAX_DECODED_BYTES}-byte limit"
        );
        let declared = declared as usize;
        if let Some(expected) = expected {
            crate::ensure_corrupt!(
                declared == expected,
                "zstd declares {declared} bytes, expected {expected}"
            );
        }
        (&input[8..], declared)
    };
    let decoder = zstd::stream::read::Decoder::with_buffer(frame)
        .map_err(|e| Error::corrupt(format!("zstd decoder could not start: {e}")).with_source(e))?;
    // Read at most one byte beyond the limit: the Vec grows with the real output only.
    let mut out = Vec::new();
    decoder
        .take(limit as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| Error::corrupt(format!("zstd frame is invalid: {e}")).with_source(e))?;
    crate::ensure_corrupt!(out.len() <= limit, "zstd output exceeds {limit} bytes");
    if !is_bare_zstd_frame(input) {
        crate::ensure_corrupt!(
            out.len() == limit,
            "zstd produced {} bytes, declared {limit}",
            out.len()
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lz4_framing_round_trip() {
        let original = b"hello hello hello hello hello lakeseek".repeat(20);
        let mut framed = (original.len() as u32).to_le_bytes().to_vec();
        framed.extend(lz4_flex::block::compress(&original));
        assert_eq!(decompress(Scheme::Lz4, &framed).unwrap(), original);
        assert_eq!(
            decompress_exact(Scheme::Lz4, &framed, original.len()).unwrap(),
            original
        );
        assert!(decompress_exact(Scheme::Lz4, &framed, original.len() + 1).is_err());
    }

    #[test]
    fn lz4_rejects_forged_length_and_garbage() {
        // Declares 1 GiB from a 3-byte block.
        let mut forged = (1u32 << 30).to_le_bytes().to_vec();
        forged.extend([0x10, b'a', 0]);
        assert!(matches!(
            decompress(Scheme::Lz4, &forged),
            Err(Error::Corrupt { .. })
        ));
        assert!(decompress(Scheme::Lz4, &[1, 2]).is_err());
        let mut bad = 100u32.to_le_bytes().to_vec();
        bad.extend([0xff; 10]);
        assert!(decompress(Scheme::Lz4, &bad).is_err());
    }

    #[test]
    fn zstd_prefixed_and_bare_frames() {
        let original = b"zstd zstd zstd zstd zstd zstd".repeat(50);
        let frame = zstd::bulk::compress(&original, 3).unwrap();
        assert_eq!(frame[..4], ZSTD_MAGIC);
        // Legacy bare frame.
        assert_eq!(decompress(Scheme::Zstd, &frame).unwrap(), original);
        // Length-prefixed.
        let mut prefixed = (original.len() as u64).to_le_bytes().to_vec();
        prefixed.extend(&frame);
        assert_eq!(decompress(Scheme::Zstd, &prefixed).unwrap(), original);
        assert_eq!(
            decompress_exact(Scheme::Zstd, &prefixed, original.len()).unwrap(),
            original
        );
        // Wrong declared length.
        let mut wrong = (original.len() as u64 + 5).to_le_bytes().to_vec();
        wrong.extend(&frame);
        assert!(decompress(Scheme::Zstd, &wrong).is_err());
        // Truncated frame.
        assert!(decompress(Scheme::Zstd, &prefixed[..prefixed.len() - 3]).is_err());
        // Empty payload.
        assert!(decompress(Scheme::Zstd, &[]).unwrap().is_empty());
        assert!(decompress_exact(Scheme::Zstd, &[], 4).is_err());
    }

    #[test]
    fn zstd_absurd_declared_length_is_corrupt() {
        let frame = zstd::bulk::compress(b"abc", 1).unwrap();
        let mut forged = u64::MAX.to_le_bytes().to_vec();
        forged.extend(&frame);
        assert!(matches!(
            decompress(Scheme::Zstd, &forged),
            Err(Error::Corrupt { .. })
        ));
    }

    #[test]
    fn scheme_parsing() {
        let lz4 = BufferCompression {
            scheme: 1,
            level: None,
        };
        let zstd = BufferCompression {
            scheme: 2,
            level: Some(3),
        };
        let none = BufferCompression {
            scheme: 0,
            level: None,
        };
        assert_eq!(scheme_of(Some(&lz4)).unwrap(), Scheme::Lz4);
        assert_eq!(scheme_of(Some(&zstd)).unwrap(), Scheme::Zstd);
        assert!(scheme_of(Some(&none)).is_err());
        assert!(scheme_of(None).is_err());
        assert_eq!(scheme_name(Some(&none)), "unspecified");
    }
}
