//! Decoding lance's serialized `RowAddrTreeMap` (lance-select 14 `mask.rs`), the row set
//! every bitmap-family index stores: a bitmap lookup's `bitmaps` values, the null bitmap
//! global buffers of zone maps and bloom filters, and `lance:label_list_nulls`.
//!
//! Layout (little endian): `u32 num_entries`, then per entry `u32 fragment_id`,
//! `u32 bitmap_size`, `bitmap_size` bytes of a portable roaring bitmap of row offsets.
//! `bitmap_size == 0` selects the whole fragment. Entries are written from a `BTreeMap`, so
//! fragment ids are strictly ascending.

use roaring::{RoaringBitmap, RoaringTreemap};

use crate::error::{Error, Result};

/// Bytes of one entry header (fragment id + bitmap size).
const ENTRY_HEADER: usize = 8;

/// The rows one entry selects.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FragmentRows {
    /// Every row of the fragment.
    Full,
    /// These row offsets.
    Partial(RoaringBitmap),
}

/// A decoded row set: per fragment (ascending ids), the rows selected.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct RowSet {
    /// `(fragment id, rows)`, fragment ids strictly ascending.
    pub(crate) fragments: Vec<(u32, FragmentRows)>,
}

impl RowSet {
    /// Approximate bytes held (for cache weighing).
    pub(crate) fn approx_bytes(&self) -> usize {
        64 + self
            .fragments
            .iter()
            .map(|(_, r)| match r {
                FragmentRows::Full => 16,
                FragmentRows::Partial(b) => 16 + b.serialized_size(),
            })
            .sum::<usize>()
    }

    /// Row addresses (`fragment << 32 | offset`); a `Full` fragment expands to
    /// `0..physical_rows(fragment)` (fragments `physical_rows` does not know are skipped:
    /// they no longer exist).
    pub(crate) fn to_addresses(
        &self,
        physical_rows: &dyn Fn(u32) -> Option<u64>,
    ) -> RoaringTreemap {
        let mut out = RoaringTreemap::new();
        for (fragment, rows) in &self.fragments {
            let base = u64::from(*fragment) << 32;
            match rows {
                FragmentRows::Partial(b) => out.extend(b.iter().map(|o| base | u64::from(o))),
                FragmentRows::Full => {
                    if let Some(n) = physical_rows(*fragment) {
                        out.insert_range(base..base + n.min(1 << 32));
                    }
                }
            }
        }
        out
    }
}

impl RowSet {
    /// The values as stable row ids (a set written by an index that holds row ids): the
    /// high 32 bits are the entry's key; a `Full` entry is all 2^32 values under it.
    pub(crate) fn to_row_ids(&self) -> RoaringTreemap {
        let mut out = RoaringTreemap::new();
        for (high, rows) in &self.fragments {
            let base = u64::from(*high) << 32;
            match rows {
                FragmentRows::Partial(b) => out.extend(b.iter().map(|o| base | u64::from(o))),
                FragmentRows::Full => {
                    out.insert_range(base..base + (1 << 32));
                }
            }
        }
        out
    }
}

/// Decode one serialized `RowAddrTreeMap`. `what` names the value in errors (e.g.
/// "bitmap of row 17"); the caller attaches the file path.
pub(crate) fn decode_row_set(bytes: &[u8], what: &str) -> Result<RowSet> {
    let corrupt = |msg: String| Error::corrupt(format!("{what}: {msg}"));
    if bytes.len() < 4 {
        return Err(corrupt(format!(
            "{} bytes, too short for a row set header",
            bytes.len()
        )));
    }
    let count = u32_at(bytes, 0) as usize;
    let body = &bytes[4..];
    // Every entry needs at least its header: the count cannot exceed what the bytes hold.
    if count > body.len() / ENTRY_HEADER {
        return Err(corrupt(format!(
            "declares {count} fragments but holds only {} bytes",
            body.len()
        )));
    }
    let mut fragments = Vec::with_capacity(count);
    let mut pos = 0usize;
    let mut previous: Option<u32> = None;
    for entry in 0..count {
        if body.len() - pos < ENTRY_HEADER {
            return Err(corrupt(format!("entry {entry} header is truncated")));
        }
        let fragment = u32_at(body, pos);
        let size = u32_at(body, pos + 4) as usize;
        pos += ENTRY_HEADER;
        if previous.is_some_and(|p| p >= fragment) {
            return Err(corrupt(format!(
                "fragment ids out of order ({} then {fragment})",
                previous.unwrap_or_default()
            )));
        }
        previous = Some(fragment);
        if size == 0 {
            fragments.push((fragment, FragmentRows::Full));
            continue;
        }
        if size > body.len() - pos {
            return Err(corrupt(format!(
                "fragment {fragment} declares a {size}-byte bitmap but only {} bytes remain",
                body.len() - pos
            )));
        }
        let payload = &body[pos..pos + size];
        pos += size;
        let bitmap = decode_roaring(payload)
            .map_err(|e| e.context(format!("{what}: fragment {fragment}")))?;
        fragments.push((fragment, FragmentRows::Partial(bitmap)));
    }
    if pos != body.len() {
        return Err(corrupt(format!(
            "{} trailing bytes after {count} fragments",
            body.len() - pos
        )));
    }
    Ok(RowSet { fragments })
}

/// A portable roaring bitmap of exactly `payload` (checked: containers sorted and valid,
/// no bytes left over); a `Corrupt` error keeps the roaring decoder's error as its source.
fn decode_roaring(payload: &[u8]) -> Result<RoaringBitmap> {
    let mut reader = payload;
    let bitmap = RoaringBitmap::deserialize_from(&mut reader)
        .map_err(|e| Error::corrupt(format!("invalid roaring bitmap ({e})")).with_source(e))?;
    if !reader.is_empty() {
        return Err(Error::corrupt(format!(
            "invalid roaring bitmap ({} bytes after the bitmap)",
            reader.len()
        )));
    }
    Ok(bitmap)
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

/// Serialize a row set the way lance does (tests and fuzz seeds).
#[cfg(test)]
pub(crate) fn encode_row_set(set: &RowSet) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(set.fragments.len() as u32).to_le_bytes());
    for (fragment, rows) in &set.fragments {
        out.extend_from_slice(&fragment.to_le_bytes());
        match rows {
            FragmentRows::Full => out.extend_from_slice(&0u32.to_le_bytes()),
            FragmentRows::Partial(b) => {
                out.extend_from_slice(&(b.serialized_size() as u32).to_le_bytes());
                b.serialize_into(&mut out).expect("serialize into a Vec");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> RowSet {
        RowSet {
            fragments: vec![
                (0, FragmentRows::Partial([1u32, 5, 9].into_iter().collect())),
                (2, FragmentRows::Full),
                (7, FragmentRows::Partial((0u32..3000).collect())),
            ],
        }
    }

    #[test]
    fn round_trip_and_addresses() {
        let bytes = encode_row_set(&sample());
        let decoded = decode_row_set(&bytes, "t").unwrap();
        assert_eq!(decoded, sample());
        let addrs = decoded.to_addresses(&|f| (f == 2).then_some(3));
        let want: Vec<u64> = [1u64, 5, 9, 2 << 32, (2 << 32) | 1, (2 << 32) | 2]
            .into_iter()
            .chain((0u64..3000).map(|o| (7 << 32) | o))
            .collect();
        assert_eq!(addrs.iter().collect::<Vec<_>>(), want);
    }

    #[test]
    fn real_pylance_bytes() {
        // Fragment 0 rows {0, 17}, as pylance 14.0.2 serialized it (array container).
        let mut b = vec![1, 0, 0, 0, 0, 0, 0, 0];
        let mut bm = RoaringBitmap::new();
        bm.insert(0);
        bm.insert(17);
        let mut payload = Vec::new();
        bm.serialize_into(&mut payload).unwrap();
        b.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        b.extend_from_slice(&payload);
        let d = decode_row_set(&b, "t").unwrap();
        assert_eq!(
            d.to_addresses(&|_| None).iter().collect::<Vec<_>>(),
            vec![0, 17]
        );
    }

    fn err(bytes: &[u8]) -> String {
        match decode_row_set(bytes, "bitmap of row 3") {
            Err(Error::Corrupt { what, .. }) => what,
            other => panic!("expected Corrupt, got {other:?}"),
        }
    }

    #[test]
    fn corrupt_inputs_are_errors() {
        let good = encode_row_set(&sample());
        assert!(err(&good[..2]).contains("too short"));
        // Truncated anywhere: an error, never a panic.
        for cut in 4..good.len() {
            let e = err(&good[..cut]);
            assert!(e.starts_with("bitmap of row 3"), "{e}");
        }
        // A huge count cannot size an allocation.
        let mut huge = good.clone();
        huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(err(&huge).contains("declares 4294967295 fragments"));
        // Fragment ids out of order.
        let swapped = RowSet {
            fragments: vec![(3, FragmentRows::Full), (1, FragmentRows::Full)],
        };
        assert!(err(&encode_row_set(&swapped)).contains("out of order"));
        // Garbled roaring payload (cookie destroyed).
        let mut garbled = good.clone();
        garbled[12] ^= 0xff;
        assert!(err(&garbled).contains("invalid roaring bitmap"));
        // Trailing bytes.
        let mut trailing = good;
        trailing.push(0);
        assert!(err(&trailing).contains("trailing"));
    }
}
