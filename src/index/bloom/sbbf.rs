//! Split-block bloom filter checks, bit-compatible with lance 14's copy of the Parquet
//! SBBF (`lance-core/src/utils/bloomfilter/sbbf.rs`): XxHash64 with seed 0; the upper
//! 32 bits pick a 32-byte block, the lower 32 bits set one bit in each of its 8 words.

use std::fmt;

use twox_hash::XxHash64;

use crate::error::Error;

/// The salts of the Parquet SBBF.
const SALT: [u32; 8] = [
    0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31,
];
/// Bytes of one block.
const BLOCK_BYTES: usize = 32;
/// Largest filter lance builds (128 MiB).
const MAX_BYTES: usize = 128 << 20;

/// A decoded filter.
#[derive(Clone)]
pub(crate) struct Sbbf {
    blocks: Vec<[u32; 8]>,
}

impl fmt::Debug for Sbbf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sbbf({} blocks)", self.blocks.len())
    }
}

/// The hash lance inserts for a value's bytes.
pub(crate) fn hash(bytes: &[u8]) -> u64 {
    XxHash64::oneshot(0, bytes)
}

fn mask(x: u32) -> [u32; 8] {
    let mut out = [0u32; 8];
    for (o, salt) in out.iter_mut().zip(SALT) {
        *o = 1 << (x.wrapping_mul(salt) >> 27);
    }
    out
}

impl Sbbf {
    /// Decode a bitset: a positive multiple of 32 bytes, at most 128 MiB (otherwise
    /// `Corrupt`, path attached by the caller).
    pub(crate) fn new(bitset: &[u8]) -> Result<Self, Error> {
        if bitset.is_empty()
            || !bitset.len().is_multiple_of(BLOCK_BYTES)
            || bitset.len() > MAX_BYTES
        {
            return Err(Error::corrupt(format!(
                "bloom filter of {} bytes (must be a positive multiple of 32, at most 128 MiB)",
                bitset.len()
            )));
        }
        let blocks = bitset
            .chunks_exact(BLOCK_BYTES)
            .map(|chunk| {
                let mut block = [0u32; 8];
                for (w, bytes) in block.iter_mut().zip(chunk.chunks_exact(4)) {
                    *w = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
                }
                block
            })
            .collect();
        Ok(Self { blocks })
    }

    /// Whether a value with this hash may be in the set.
    pub(crate) fn check_hash(&self, hash: u64) -> bool {
        let index = ((hash >> 32).saturating_mul(self.blocks.len() as u64) >> 32) as usize;
        let Some(block) = self.blocks.get(index) else {
            return true;
        };
        let m = mask(hash as u32);
        block.iter().zip(m).all(|(w, m)| w & m != 0)
    }

    /// Insert a hash (tests build filters with it).
    #[cfg(test)]
    pub(crate) fn insert_hash(&mut self, hash: u64) {
        let index = ((hash >> 32).saturating_mul(self.blocks.len() as u64) >> 32) as usize;
        let m = mask(hash as u32);
        for (w, m) in self.blocks[index].iter_mut().zip(m) {
            *w |= m;
        }
    }
}
