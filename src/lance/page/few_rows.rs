//! Reading a few rows of a page whose init is not cached, in one wave less or with fewer
//! bytes than init-then-values (pure planning; the reader fetches).
//!
//! * **Full-zip pages with a repetition index**: only the index entries bounding each row
//!   range (`(n + 1)` entries of 1–8 bytes) instead of the whole index (`rows + 1` entries:
//!   40 KB for the 10,000 blob descriptors of a 2.2 blob column). The entries are not a
//!   page init: nothing is cached, the next read of the page reads its entries again.
//! * **Guesses**: where the rows' value bytes probably are, fetched in the same wave as the
//!   entries (full-zip) or the chunk table (flat mini-block), so the values need no wave of
//!   their own when a guess holds the planned range. A guess is a small window around the
//!   position the page's average row (or chunk) width puts the rows at — exact for pages of
//!   equal-width rows such as blob descriptors. The exact plan is always computed from the
//!   entries or the chunk table; a range no guess holds is fetched in a wave of its own.

use std::ops::Range;

use bytes::Bytes;

use super::{FullZipPage, MiniBlockPage, PageLayout, PageReadPlan, RowRanges};
use crate::error::{Error, Result};

/// Most row ranges of one page a few-row read handles (more: the ordinary init wave).
pub(crate) const MAX_FEW_ROW_RANGES: usize = 1024;

/// Bytes of guesses allowed per row range of a page (at least [`MIN_GUESS_BUDGET`]); more:
/// no guess, the values get their own wave.
const GUESS_BYTES_PER_RANGE: u64 = 8 << 10;

/// Bytes of guesses any page may have.
const MIN_GUESS_BUDGET: u64 = 64 << 10;

/// Bytes a guess reaches before and after the guessed position, at least.
const GUESS_MARGIN_BYTES: u64 = 256;

/// What a few-row read of one page fetches in its init wave.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct FewRowsPlan {
    /// Full-zip: the repetition index entries bounding each row range (one range per row
    /// range, entries `start..=end`), read instead of the page init. `None`: the page init
    /// is read (and cached) as usual.
    pub entries: Option<Vec<Range<u64>>>,
    /// Absolute byte windows that probably hold the rows' values.
    pub guesses: Vec<Range<u64>>,
}

impl PageLayout {
    /// The few-row plan of page-local `rows` (sorted, disjoint), or `None` when this page is
    /// read the ordinary way (another layout, nested, too many ranges).
    pub(crate) fn few_rows_plan(&self, rows: &RowRanges) -> Option<FewRowsPlan> {
        let rows: Vec<Range<u64>> = rows.iter().filter(|r| r.start < r.end).cloned().collect();
        if rows.is_empty() || rows.len() > MAX_FEW_ROW_RANGES || self.is_nested() {
            return None;
        }
        match self {
            PageLayout::FullZip(f) => f.few_rows_plan(&rows),
            PageLayout::MiniBlock(m) => m.guesses(&rows).map(|guesses| FewRowsPlan {
                entries: None,
                guesses,
            }),
            _ => None,
        }
    }

    /// The value plan of `rows` from the repetition index entries a [`FewRowsPlan`] asked
    /// for (`entries[i]` holds the plan's `entries[i]`).
    pub(crate) fn plan_from_entries(
        &self,
        rows: &RowRanges,
        entries: &[Bytes],
    ) -> Result<PageReadPlan> {
        let PageLayout::FullZip(f) = self else {
            return Err(Error::corrupt(
                "internal: repetition index entries for a page that is not full-zip",
            ));
        };
        f.plan_from_entries(rows, entries)
    }
}

impl FullZipPage {
    /// Bytes of each repetition index entry; `None` without an index or when its size is
    /// not `rows + 1` entries of 1, 2, 4 or 8 bytes (the ordinary init read reports that).
    fn entry_width(&self) -> Option<u64> {
        let index = self.repetition_index.as_ref()?;
        let entries = self.num_rows.checked_add(1)?;
        let size = index.end - index.start;
        let width = size / entries;
        (matches!(width, 1 | 2 | 4 | 8) && width * entries == size).then_some(width)
    }

    fn few_rows_plan(&self, rows: &[Range<u64>]) -> Option<FewRowsPlan> {
        let width = self.entry_width()?;
        let index = self.repetition_index.as_ref()?;
        if rows.iter().any(|r| r.end > self.num_rows) {
            return None;
        }
        let entries = rows
            .iter()
            .map(|r| index.start + r.start * width..index.start + (r.end + 1) * width)
            .collect();
        Some(FewRowsPlan {
            entries: Some(entries),
            guesses: self.guesses(rows),
        })
    }

    /// Windows around where `rows` lie if every row had the page's average width; none
    /// when they would exceed the budget ([`within_budget`]).
    fn guesses(&self, rows: &[Range<u64>]) -> Vec<Range<u64>> {
        let size = self.data.end - self.data.start;
        if self.num_rows == 0 || size == 0 {
            return Vec::new();
        }
        let at = |row: u64| (u128::from(size) * u128::from(row) / u128::from(self.num_rows)) as u64;
        let margin = GUESS_MARGIN_BYTES.max(size / self.num_rows);
        let windows = rows
            .iter()
            .map(|r| {
                let start = at(r.start).saturating_sub(margin);
                let end = at(r.end).saturating_add(margin).min(size);
                self.data.start + start..self.data.start + end
            })
            .collect();
        within_budget(windows)
    }

    /// The value plan of `rows` from the entries bounding each row range: the first and
    /// last entry of each give its span, checked to be ordered and inside the data buffer.
    fn plan_from_entries(&self, rows: &RowRanges, entries: &[Bytes]) -> Result<PageReadPlan> {
        let width = self
            .entry_width()
            .ok_or_else(|| Error::corrupt("full-zip repetition index of an unexpected size"))?;
        let rows: Vec<Range<u64>> = rows.iter().filter(|r| r.start < r.end).cloned().collect();
        crate::ensure_corrupt!(
            rows.len() == entries.len(),
            "{} row ranges but {} entry reads",
            rows.len(),
            entries.len()
        );
        let size = self.data.end - self.data.start;
        let span_of = |r: &Range<u64>| -> Result<Range<u64>> {
            let i = rows
                .iter()
                .position(|x| x == r)
                .ok_or_else(|| Error::corrupt("internal: row range without entries"))?;
            let bytes = &entries[i];
            let expected = (r.end - r.start + 1) * width;
            crate::ensure_corrupt!(
                bytes.len() as u64 == expected,
                "{} bytes of repetition index entries for rows {r:?}, expected {expected}",
                bytes.len()
            );
            let w = width as usize;
            let start = le_word(&bytes[..w]);
            let end = le_word(&bytes[bytes.len() - w..]);
            crate::ensure_corrupt!(
                start <= end && end <= size,
                "repetition index says rows {r:?} span bytes {start}..{end} of a \
                 {size}-byte data buffer"
            );
            Ok(start..end)
        };
        self.plan_spans(&rows, span_of)
    }
}

impl MiniBlockPage {
    /// Windows around the chunks holding `rows`, if every chunk but the last held the same
    /// power-of-two number of rows in the page's average bytes per row; `None` for pages
    /// whose chunks are not plain (repetition index, dictionary) or when the windows
    /// would exceed the budget ([`within_budget`]).
    fn guesses(&self, rows: &[Range<u64>]) -> Option<Vec<Range<u64>>> {
        if self.repetition_index.is_some() || self.dictionary_buffer.is_some() {
            return None;
        }
        let size = self.chunk_data.end - self.chunk_data.start;
        let word = if self.has_large_chunk { 4 } else { 2 };
        let chunks = (self.chunk_meta.end - self.chunk_meta.start) / word;
        if chunks == 0 || self.page_rows == 0 || size == 0 {
            return None;
        }
        // Rows per chunk: the power of two that `chunks` chunks need for the page's rows.
        let per_chunk = self.page_rows.div_ceil(chunks).next_power_of_two();
        let chunk_bytes =
            (u128::from(size) * u128::from(per_chunk) / u128::from(self.page_rows)) as u64;
        let margin = GUESS_MARGIN_BYTES.max(chunk_bytes / 8);
        let windows = rows
            .iter()
            .map(|r| {
                let first = (r.start / per_chunk).min(chunks - 1);
                let last = ((r.end - 1) / per_chunk).min(chunks - 1);
                let start = (first * chunk_bytes).saturating_sub(margin).min(size);
                let end = ((last + 1) * chunk_bytes).saturating_add(margin).min(size);
                self.chunk_data.start + start..self.chunk_data.start + end
            })
            .collect();
        let windows = within_budget(windows);
        (!windows.is_empty()).then_some(windows)
    }
}

/// `windows` (one per row range) merged where they touch, or none when they add up to
/// more than [`GUESS_BYTES_PER_RANGE`] per row range (at least [`MIN_GUESS_BUDGET`]).
fn within_budget(mut windows: Vec<Range<u64>>) -> Vec<Range<u64>> {
    let budget = MIN_GUESS_BUDGET.max(GUESS_BYTES_PER_RANGE * windows.len() as u64);
    windows.sort_by_key(|w| w.start);
    let mut merged: Vec<Range<u64>> = Vec::with_capacity(windows.len());
    for w in windows {
        match merged.last_mut() {
            Some(last) if w.start <= last.end => last.end = last.end.max(w.end),
            _ => merged.push(w),
        }
    }
    let total: u64 = merged.iter().map(|w| w.end - w.start).sum();
    if total > budget {
        return Vec::new();
    }
    merged
}

/// A little-endian unsigned integer of 1–8 bytes.
fn le_word(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(word)
}

/// The bytes of `range` when one of the fetched `guesses` holds it.
pub(crate) fn from_guesses(range: &Range<u64>, guesses: &[(Range<u64>, Bytes)]) -> Option<Bytes> {
    guesses.iter().find_map(|(window, bytes)| {
        let whole = bytes.len() as u64 == window.end - window.start;
        (whole && range.start >= window.start && range.end <= window.end).then(|| {
            let start = (range.start - window.start) as usize;
            bytes.slice(start..start + (range.end - range.start) as usize)
        })
    })
}

#[cfg(test)]
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;
    use crate::lance::page::fullzip::ZipAddressing;
    use crate::lance::page::PlanDetail;
    use crate::lance::proto::encodings::RepDefLayer;

    /// A flat variable-width full-zip page of `rows` rows at data `1000..1000 + size`,
    /// with a 4-byte repetition index right after the data.
    fn page(rows: u64, size: u64) -> PageLayout {
        let data = 1000..1000 + size;
        let index = data.end..data.end + 4 * (rows + 1);
        PageLayout::FullZip(FullZipPage {
            bits_rep: 0,
            bits_def: 0,
            addressing: ZipAddressing::Variable {
                bits_per_offset: 32,
            },
            num_items: rows,
            num_visible_items: rows,
            value_compression: Default::default(),
            layers: vec![RepDefLayer::RepdefAllValidItem],
            data,
            repetition_index: Some(index),
            num_rows: rows,
        })
    }

    fn entries(offsets: &[u32]) -> Bytes {
        Bytes::from(
            offsets
                .iter()
                .flat_map(|o| o.to_le_bytes())
                .collect::<Vec<u8>>(),
        )
    }

    #[test]
    fn full_zip_rows_read_only_their_index_entries() {
        let layout = page(100, 2900);
        let plan = layout.few_rows_plan(&[5..6, 40..43]).expect("few rows");
        let index = 1000 + 2900;
        assert_eq!(
            plan.entries,
            Some(vec![index + 20..index + 28, index + 160..index + 176])
        );
        // Equal widths: every row is 29 bytes; entries say so.
        let got = layout
            .plan_from_entries(
                &[5..6, 40..43],
                &[entries(&[145, 174]), entries(&[1160, 1189, 1218, 1247])],
            )
            .unwrap();
        assert_eq!(got.ranges, vec![1145..1174, 2160..2247]);
        assert_eq!(got.detail, PlanDetail::FullZipRows(vec![5..6, 40..43]));
        // The guesses hold both planned ranges.
        let fetched: Vec<(Range<u64>, Bytes)> = plan
            .guesses
            .iter()
            .map(|g| {
                (
                    g.clone(),
                    Bytes::from(vec![7u8; (g.end - g.start) as usize]),
                )
            })
            .collect();
        assert!(plan
            .guesses
            .iter()
            .all(|g| g.start >= 1000 && g.end <= 3900));
        for r in &got.ranges {
            assert_eq!(
                from_guesses(r, &fetched).map(|b| b.len() as u64),
                Some(r.end - r.start)
            );
        }
    }

    #[test]
    fn a_range_no_guess_holds_is_left_to_fetch() {
        let layout = page(100, 2900);
        let plan = layout.few_rows_plan(&[5..6]).unwrap();
        let fetched: Vec<(Range<u64>, Bytes)> = plan
            .guesses
            .iter()
            .map(|g| {
                (
                    g.clone(),
                    Bytes::from(vec![0u8; (g.end - g.start) as usize]),
                )
            })
            .collect();
        // Rows of unequal widths: row 5 lies far from where the average puts it.
        assert_eq!(from_guesses(&(3000..3029), &fetched), None);
        // A short fetch never serves a slice.
        let short = vec![(1000..2000, Bytes::from(vec![0u8; 10]))];
        assert_eq!(from_guesses(&(1000..1005), &short), None);
    }

    #[test]
    fn bad_entries_are_corrupt() {
        let layout = page(100, 2900);
        for bad in [
            vec![entries(&[200, 100])],  // decreasing
            vec![entries(&[100, 3000])], // past the data buffer
            vec![entries(&[100])],       // too short
        ] {
            let err = layout.plan_from_entries(&[5..6], &bad).unwrap_err();
            assert!(matches!(err, Error::Corrupt { .. }), "{err}");
        }
        assert!(layout.plan_from_entries(&[5..6], &[]).is_err());
    }

    #[test]
    fn pages_read_the_ordinary_way() {
        let layout = page(100, 2900);
        // Past the page, or an index of the wrong size: no few-row plan.
        assert_eq!(layout.few_rows_plan(&[99..101]), None);
        let PageLayout::FullZip(mut f) = layout.clone() else {
            unreachable!()
        };
        f.repetition_index = Some(3900..3905);
        assert_eq!(PageLayout::FullZip(f).few_rows_plan(&[5..6]), None);
        let many: Vec<Range<u64>> = (0..=MAX_FEW_ROW_RANGES as u64).map(|r| r..r + 1).collect();
        assert_eq!(page(5000, 5000 * 29).few_rows_plan(&many), None);
        // Guesses over the budget are dropped; the entries stay.
        let wide = page(100, 100 * 100_000);
        let plan = wide.few_rows_plan(&[5..6]).unwrap();
        assert!(plan.entries.is_some() && plan.guesses.is_empty());
    }
}
