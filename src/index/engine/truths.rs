//! The session's memo of truth values a scalar leaf had on data: per data file (immutable,
//! named once; keyed by path and size as every session cache is) and predicate, the offsets
//! evaluated and which were TRUE / FALSE. A repeated recheck or scan of the same rows reads
//! nothing; new rows are evaluated and added.

use roaring::RoaringBitmap;

use crate::index::caches::session_cache;
use crate::io::budget::CacheShare;
use crate::io::cache::{CacheKey, DeepSize};
use crate::io::ObjectVersion;

/// What is known of one predicate on one data file's rows (fragment offsets).
#[derive(Debug, Clone, Default)]
pub(crate) struct Truths {
    evaluated: RoaringBitmap,
    true_rows: RoaringBitmap,
    false_rows: RoaringBitmap,
    /// Bytes of the entry's key (its path and predicate text), weighed with the value.
    key_bytes: usize,
}

impl DeepSize for Truths {
    fn deep_size(&self) -> usize {
        96 + self.key_bytes
            + self.evaluated.serialized_size()
            + self.true_rows.serialized_size()
            + self.false_rows.serialized_size()
    }
}

impl Truths {
    /// The offsets of `offsets` (sorted, unique) not evaluated yet.
    pub(crate) fn missing(&self, offsets: &[u64]) -> Vec<u64> {
        offsets
            .iter()
            .copied()
            .filter(|&o| u32::try_from(o).map_or(true, |o| !self.evaluated.contains(o)))
            .collect()
    }

    /// Record the truth of each of `offsets` (offsets past `u32` are not kept).
    pub(crate) fn record(&mut self, offsets: &[u64], truth: &[Option<bool>]) {
        for (&o, t) in offsets.iter().zip(truth) {
            let Ok(o) = u32::try_from(o) else { continue };
            self.evaluated.insert(o);
            match t {
                Some(true) => self.true_rows.insert(o),
                Some(false) => self.false_rows.insert(o),
                None => false,
            };
        }
    }

    /// Count `key`'s bytes in this entry's weight (the cache weighs values only).
    pub(crate) fn weigh_key(&mut self, key: &CacheKey<String>) {
        self.key_bytes = key.path.len() + key.item.len();
    }

    /// The truth of an evaluated offset (`None`: NULL, or never evaluated).
    pub(crate) fn truth(&self, offset: u64) -> Option<bool> {
        let o = u32::try_from(offset).ok()?;
        if self.true_rows.contains(o) {
            Some(true)
        } else if self.false_rows.contains(o) {
            Some(false)
        } else {
            None
        }
    }
}

/// Longest predicate text memoized.
const MAX_TEXT: usize = 4096;

/// The text naming `predicate` on field `field_id` bound at `slot` of `slots` (operands name
/// the bound fields' slots, so they are part of it), or `None` when it is not memoized: a
/// text over [`MAX_TEXT`] bytes (a long value list: the key would outweigh what it saves;
/// formatting stops there) or one holding a NaN (its text drops the sign and payload that
/// order it — -NaN sorts first, NaN last — so two predicates could share it).
pub(crate) fn predicate_text(
    field_id: i32,
    slot: usize,
    slots: usize,
    predicate: &impl std::fmt::Debug,
) -> Option<String> {
    use std::fmt::Write;
    let mut text = Bounded(String::new());
    write!(
        text,
        "field {field_id} slot {slot} of {slots}: {predicate:?}"
    )
    .ok()?;
    (!text.0.contains("NaN")).then_some(text.0)
}

/// A string that refuses to grow past [`MAX_TEXT`] bytes.
struct Bounded(String);

impl std::fmt::Write for Bounded {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        if self.0.len() + s.len() > MAX_TEXT {
            return Err(std::fmt::Error);
        }
        self.0.push_str(s);
        Ok(())
    }
}

/// The key of a predicate's text ([`predicate_text`]) on the data file at `path` of `size`
/// bytes.
pub(crate) fn key(path: &str, size: u64, predicate: String) -> CacheKey<String> {
    CacheKey {
        path: path.to_string(),
        version: ObjectVersion { size, etag: None },
        item: predicate,
    }
}

/// The memo (a share of the session's row-set budget).
pub(crate) fn memo(
    dataset: &crate::lance::dataset::DatasetVersion,
) -> crate::io::cache::SizedCache<String, Truths> {
    session_cache::<String, Truths>(dataset.session(), CacheShare::BitmapRowSets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_answer_and_report_what_is_missing() {
        let mut t = Truths::default();
        assert_eq!(t.missing(&[1, 2, 3]), vec![1, 2, 3]);
        t.record(&[1, 2, 3], &[Some(true), None, Some(false)]);
        assert_eq!(t.missing(&[0, 1, 2, 3, 4]), vec![0, 4]);
        assert_eq!(
            (t.truth(1), t.truth(2), t.truth(3), t.truth(9)),
            (Some(true), None, Some(false), None)
        );
        // Offsets past u32 are never taken as evaluated.
        let big = u64::from(u32::MAX) + 1;
        t.record(&[big], &[Some(true)]);
        assert_eq!(t.missing(&[big]), vec![big]);
        // The key's bytes count in the entry's weight.
        let before = t.deep_size();
        t.weigh_key(&key("data/a.lance", 10, "x".repeat(1000)));
        assert!(t.deep_size() >= before + 1000);
    }

    #[test]
    fn long_or_nan_predicates_have_no_text() {
        assert_eq!(
            predicate_text(3, 0, 1, &"x > 1").as_deref(),
            Some("field 3 slot 0 of 1: \"x > 1\"")
        );
        assert_eq!(predicate_text(3, 0, 1, &vec![7u64; 2000]), None);
        assert_eq!(predicate_text(3, 0, 1, &f64::NAN), None);
        assert_eq!(predicate_text(3, 0, 1, &-f64::NAN), None);
    }
}
