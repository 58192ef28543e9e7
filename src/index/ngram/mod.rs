//! The NGRAM index (pylance 14's `create_scalar_index(col, "NGRAM")`): one file,
//! `ngram_postings.lance`, with a `tokens` column (`uint32`, one row per trigram) and a
//! `posting_list` column (`binary`: a serialized `RoaringTreemap` of the row addresses
//! whose text holds the trigram; index version 1 = row addresses, version 0 = row ids,
//! the same values without stable row ids).
//!
//! Lance indexes the text lower-cased and ASCII-folded, cut into character trigrams, and
//! keeps only trigrams of ASCII letters and digits, each as a number in base 37
//! (`0-9` = 1..10, `a-z` = 11..36). It answers `contains(col, 'x')`, `LIKE` and
//! `starts_with` (case-sensitive) with candidates: the rows holding every trigram of the
//! pattern's literal parts; the engine rechecks them on data.
//!
//! The query side here uses only the trigrams that lie in runs of ASCII letters and digits
//! of the pattern (ASCII-lower-cased): lower-casing and folding map each character on its
//! own and leave ASCII letters and digits as they are (up to case), so every such trigram
//! of a matching value is in the index — the candidates are a superset of the matches
//! without reproducing tantivy's folding tables. A pattern without such a trigram is not
//! answered from the index (evaluated on data, as lance rechecks every row then).
//!
//! * [`exec`]: reading the token map and posting lists (through the session caches);
//! * [`kind`]: the [`crate::index::kind::IndexKind`].

pub(crate) mod exec;
pub(crate) mod kind;

use std::collections::HashMap;

use roaring::RoaringTreemap;

use crate::error::{Error, Result};
use crate::io::cache::DeepSize;

/// The index's one file.
pub(crate) const NGRAM_FILE: &str = "ngram_postings.lance";
/// The details type of an NGRAM segment.
pub(crate) const NGRAM_DETAILS_TYPES: [&str; 2] = [
    "lance.table.NGramIndexDetails",
    "lance.index.pb.NGramIndexDetails",
];
/// Characters per n-gram (lance always builds trigrams).
pub(crate) const NGRAM_N: usize = 3;
/// Letters and digits plus one (base of the token numbers).
const ALPHA_SPAN: u32 = 37;

/// The token number of an n-gram of ASCII digits and lower-case letters.
fn token_of(ngram: &[u8]) -> u32 {
    ngram.iter().fold(0u32, |acc, b| {
        let pos = match b {
            b'0'..=b'9' => u32::from(b - b'0') + 1,
            _ => u32::from(b.saturating_sub(b'a')) + 11,
        };
        acc * ALPHA_SPAN + pos
    })
}

/// The token numbers of the trigrams every value matching contains `substrings` holds
/// (sorted, deduplicated): trigrams inside runs of ASCII letters and digits, lower-cased.
pub(crate) fn query_tokens(substrings: &[String]) -> Vec<u32> {
    let mut out = Vec::new();
    for s in substrings {
        let bytes = s.as_bytes();
        for run in bytes.split(|b| !b.is_ascii_alphanumeric()) {
            let lower: Vec<u8> = run.iter().map(u8::to_ascii_lowercase).collect();
            out.extend(lower.windows(NGRAM_N).map(token_of));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The token map of one posting file: token number -> row of the file.
#[derive(Debug, Clone, Default)]
pub(crate) struct NgramTokens {
    /// Token -> row.
    pub(crate) rows: HashMap<u32, u64>,
}

impl DeepSize for NgramTokens {
    fn deep_size(&self) -> usize {
        64 + self.rows.capacity() * 24
    }
}

impl NgramTokens {
    /// The map of a `tokens` column (a null token, written for no text, is skipped; a
    /// repeated token is corrupt).
    pub(crate) fn decode(tokens: &arrow_array::UInt32Array) -> Result<Self> {
        let mut rows = HashMap::with_capacity(tokens.len());
        for (row, t) in tokens.iter().enumerate() {
            let Some(t) = t else { continue };
            if rows.insert(t, row as u64).is_some() {
                return Err(Error::corrupt(format!(
                    "ngram token {t} appears twice (row {row})"
                )));
            }
        }
        Ok(Self { rows })
    }
}

/// One decoded posting list.
#[derive(Debug, Clone, Default)]
pub(crate) struct NgramPosting(pub(crate) RoaringTreemap);

impl DeepSize for NgramPosting {
    fn deep_size(&self) -> usize {
        32 + self.0.serialized_size()
    }
}

/// Decode a serialized `RoaringTreemap` (`u64` count, then per entry a `u32` high key and
/// a portable roaring bitmap), checking the count against the bytes before decoding.
pub(crate) fn decode_posting(bytes: &[u8]) -> Result<NgramPosting> {
    let Some(head) = bytes.get(..8) else {
        return Err(Error::corrupt(format!(
            "posting list of {} bytes is shorter than its 8-byte count",
            bytes.len()
        )));
    };
    let count = u64::from_le_bytes(head.try_into().unwrap_or_default());
    // Each entry takes at least a 4-byte key and an 8-byte bitmap header.
    if count > (bytes.len() as u64 - 8) / 12 {
        return Err(Error::corrupt(format!(
            "posting list claims {count} bitmaps in {} bytes",
            bytes.len()
        )));
    }
    let mut reader = bytes;
    let set = RoaringTreemap::deserialize_from(&mut reader)
        .map_err(|e| Error::corrupt(format!("posting list does not decode: {e}")))?;
    if !reader.is_empty() {
        return Err(Error::corrupt(format!(
            "posting list has {} bytes after its bitmaps",
            reader.len()
        )));
    }
    Ok(NgramPosting(set))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_numbers_are_lances() {
        // "ali" = 11*37^2 + 22*37 + 19 ("a" = 11, "l" = 22, "i" = 19).
        assert_eq!(token_of(b"ali"), 11 * 37 * 37 + 22 * 37 + 19);
        assert_eq!(token_of(b"000"), 37 * 37 + 37 + 1);
        assert_eq!(query_tokens(&["Ali".into()]), vec![token_of(b"ali")]);
        // Only runs of ASCII letters and digits count; short runs give nothing.
        assert!(query_tokens(&["al".into(), "e c".into(), "ße".into()]).is_empty());
        assert_eq!(
            query_tokens(&["naïve café".into()]),
            vec![token_of(b"caf")],
            "ï and é split the runs"
        );
        assert_eq!(query_tokens(&["50% off".into()]), vec![token_of(b"off")]);
        assert_eq!(query_tokens(&["abcd".into(), "bcd".into()]).len(), 2);
    }

    #[test]
    fn postings_decode_and_garbage_is_corrupt() {
        let mut set = RoaringTreemap::new();
        set.extend([1u64, 5, (3u64 << 32) | 7]);
        let mut bytes = Vec::new();
        set.serialize_into(&mut bytes).unwrap();
        assert_eq!(decode_posting(&bytes).unwrap().0, set);
        let corrupt = |b: &[u8]| matches!(decode_posting(b), Err(Error::Corrupt { .. }));
        assert!(corrupt(&bytes[..bytes.len() - 1]), "truncated");
        assert!(corrupt(&bytes[..5]), "no count");
        let mut lying = bytes.clone();
        lying[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(corrupt(&lying), "count past the bytes");
        let mut trailing = bytes.clone();
        trailing.push(0);
        assert!(corrupt(&trailing), "trailing bytes");
        assert!(corrupt(&[0xff; 40]));
    }
}
