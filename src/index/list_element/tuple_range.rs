//! Ranges of encoded key tuples: "the first j keys equal F, and the next key lies in a
//! range" as one range of Binary values of the target BTree (spec: "Accelerated
//! Queries": "the tuples whose encoding starts with the encoded fixed values and whose
//! next key lies in the range").
//!
//! # Why a prefix of fixed keys is one contiguous byte range
//!
//! Write `e(v)` for the encoding of one key and `P = e(f0) e(f1) ... e(fj-1)` for the
//! encoded fixed keys. Three facts about `LIST_ELEMENT_KEY_ENCODING_ARROW_ROW_V1`:
//!
//! 1. **Order**: for values `a`, `b` of one key type, `a < b` iff `e(a) < e(b)` in byte
//!    order (nulls first). In particular `e` is injective.
//! 2. **Prefix-free within a type**: no `e(a)` is a proper prefix of another `e(b)` of the
//!    same key type. Fixed-width keys all have length `1 + W`. A string/binary encoding
//!    ends at its first block terminator that is not `0xFF`; every earlier byte position
//!    has the same role (sentinel, data, terminator) in both strings, so if `e(a)` were a
//!    prefix of `e(b)`, `e(b)` would also end at that terminator, i.e. `e(a) = e(b)`.
//!    Note that the *raw* bytes are not prefix-free (`car` is a prefix of `cart`), but
//!    the encodings are: `e(car) = 02 63 61 72 00 00 00 00 00 03` and
//!    `e(cart) = 02 63 61 72 74 00 00 00 00 04` differ at byte 4 — the zero padding and
//!    the length byte are what make the encoding prefix-free.
//! 3. **Concatenation**: a tuple encodes as the concatenation of its keys' encodings.
//!
//! From 2 and 3, a tuple's encoding starts with `P` iff its first j keys encode to
//! `e(f0) ... e(fj-1)` (parse both strings key by key: at each key one encoding is a
//! prefix of the other, so they are equal), iff (by 1) its first j keys equal `F`.
//!
//! The byte strings that start with `P` are exactly the interval `[P, succ(P))`, where
//! `succ(P)` is the smallest string greater than every extension of `P`: drop trailing
//! `0xFF` bytes and increment the last remaining byte (no upper bound if nothing
//! remains). `P` itself is the smallest extension. The tempting upper bound `P ++ FF`
//! is not exact in general (a longer `P ++ FF ++ ...` would sort after it), so it is not
//! used.
//!
//! # A range on the next key
//!
//! For the next key `k` with bound encodings `e(lo)`, `e(hi)`, every matching tuple
//! encodes as `P ++ e(k) ++ rest`. By facts 1 and 2, comparing `P ++ e(k) ++ rest` with
//! `P ++ e(v)` decides at the first byte where `e(k)` and `e(v)` differ (they cannot be
//! prefixes of one another unless equal), so:
//! * `k >= lo` — lower bound `P ++ e(lo)`, included;
//! * `k > lo` — lower bound `succ(P ++ e(lo))`, included (skips every tuple with `k = lo`,
//!   whatever follows);
//! * `k < hi` — upper bound `P ++ e(hi)`, excluded;
//! * `k <= hi` — upper bound `succ(P ++ e(hi))`, excluded;
//! * no upper bound — `succ(P)`, excluded (stay inside the prefix);
//! * no lower bound — the caller passes `k > NULL` (`Excluded(e(NULL))`), because SQL
//!   comparisons are never TRUE on a null key and null sorts first.
//!
//! Every range is therefore "lower included, upper excluded or unbounded"
//! ([`EncodedRange`]), which a BTree range query over Binary answers directly.

use std::ops::Bound;

/// A range of encoded key tuples: `lower <= value < upper` (`upper == None`: unbounded).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct EncodedRange {
    /// Inclusive lower bound.
    pub lower: Vec<u8>,
    /// Exclusive upper bound; `None` when unbounded.
    pub upper: Option<Vec<u8>>,
}

impl EncodedRange {
    /// All tuples whose encoding starts with `prefix`: `[prefix, succ(prefix))`.
    pub(crate) fn with_prefix(prefix: Vec<u8>) -> EncodedRange {
        let upper = successor(&prefix);
        EncodedRange {
            lower: prefix,
            upper,
        }
    }

    /// Tuples starting with `prefix` whose next key lies between `lower` and `upper`,
    /// given as single-key encodings (see the module docs). `None` when the range is
    /// empty.
    pub(crate) fn with_prefix_and_next_key(
        prefix: &[u8],
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
    ) -> Option<EncodedRange> {
        let concat = |e: &[u8]| [prefix, e].concat();
        let lower = match lower {
            Bound::Unbounded => prefix.to_vec(),
            Bound::Included(e) => concat(e),
            Bound::Excluded(e) => successor(&concat(e))?,
        };
        let upper = match upper {
            Bound::Unbounded => successor(prefix),
            Bound::Included(e) => successor(&concat(e)),
            Bound::Excluded(e) => Some(concat(e)),
        };
        let range = EncodedRange { lower, upper };
        (!range.is_empty()).then_some(range)
    }

    /// Whether no byte string lies in the range.
    pub(crate) fn is_empty(&self) -> bool {
        matches!(&self.upper, Some(upper) if *upper <= self.lower)
    }

    /// Whether `value` lies in the range.
    #[cfg(test)]
    pub(crate) fn contains(&self, value: &[u8]) -> bool {
        value >= self.lower.as_slice() && self.upper.as_deref().is_none_or(|upper| value < upper)
    }
}

impl std::fmt::Display for EncodedRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}, ", hex(&self.lower))?;
        match &self.upper {
            Some(upper) => write!(f, "{})", hex(upper)),
            None => write!(f, "+inf)"),
        }
    }
}

/// Bytes as space-separated upper-case hex pairs (the spec's spelling).
pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 3);
    for (i, b) in bytes.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&format!("{b:02X}"));
    }
    out
}

/// The smallest byte string greater than every string that starts with `bytes`: drop
/// trailing `0xFF` bytes, then increment the last one. `None` when no such string exists
/// (`bytes` empty or all `0xFF`).
pub(crate) fn successor(bytes: &[u8]) -> Option<Vec<u8>> {
    let last = bytes.iter().rposition(|&b| b != 0xFF)?;
    let mut out = bytes[..=last].to_vec();
    out[last] += 1;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn successor_drops_trailing_ff_and_carries() {
        assert_eq!(successor(&[0x02, 0x63]), Some(vec![0x02, 0x64]));
        assert_eq!(successor(&[0x01, 0xFE, 0xFF]), Some(vec![0x01, 0xFF]));
        assert_eq!(successor(&[0x01, 0xFF, 0xFF]), Some(vec![0x02]));
        assert_eq!(successor(&[0xFF, 0xFF]), None);
        assert_eq!(successor(&[]), None);
    }

    #[test]
    fn successor_is_above_every_extension_and_below_the_next_prefix() {
        let p = [0x01u8, 0x80, 0xFF];
        let s = successor(&p).unwrap();
        for ext in [&[][..], &[0x00], &[0xFF, 0xFF, 0xFF], &[0x02, 0x61]] {
            let v = [&p[..], ext].concat();
            assert!(v.as_slice() < s.as_slice(), "{v:?}");
        }
        // The first string that does not start with p.
        assert_eq!(s, vec![0x01, 0x81]);
    }

    #[test]
    fn prefix_range_contains_exactly_the_extensions() {
        let r = EncodedRange::with_prefix(vec![0x02, 0x63]);
        assert!(r.contains(&[0x02, 0x63]));
        assert!(r.contains(&[0x02, 0x63, 0xFF, 0xFF]));
        assert!(!r.contains(&[0x02, 0x64]));
        assert!(!r.contains(&[0x02, 0x62, 0xFF]));
        assert!(!r.contains(&[0x02]));
    }

    #[test]
    fn next_key_bounds() {
        let p = [0x09u8];
        // k > 05 with single-byte keys: every tuple 09 05 ... excluded.
        let r = EncodedRange::with_prefix_and_next_key(
            &p,
            Bound::Excluded(&[0x05]),
            Bound::Included(&[0x07]),
        )
        .unwrap();
        assert_eq!(r.lower, vec![0x09, 0x06]);
        assert_eq!(r.upper, Some(vec![0x09, 0x08]));
        assert!(!r.contains(&[0x09, 0x05, 0xFF]));
        assert!(r.contains(&[0x09, 0x07, 0xFF]));
        // Empty ranges are dropped.
        assert_eq!(
            EncodedRange::with_prefix_and_next_key(
                &p,
                Bound::Included(&[0x07]),
                Bound::Excluded(&[0x07])
            ),
            None
        );
        // Unbounded above stays inside the prefix.
        let r = EncodedRange::with_prefix_and_next_key(&p, Bound::Included(&[1]), Bound::Unbounded)
            .unwrap();
        assert_eq!(r.upper, Some(vec![0x0A]));
    }

    #[test]
    fn display_uses_spec_hex() {
        let r = EncodedRange {
            lower: vec![0x02, 0xAB],
            upper: None,
        };
        assert_eq!(r.to_string(), "[02 AB, +inf)");
        assert!(!r.is_empty());
    }
}
