//! The coalescing decision: which ranges of one object share a GET. Pure.
//!
//! A fixed gap alone over-reads: 48 reads of 72 B each, ~15 KB apart, all fit under a 64 KiB
//! gap and become one 534 KB GET for 3.4 KB of wanted bytes. With a **waste rule** two
//! neighbouring ranges merge only when the gap is at most [`CoalescePolicy::max_gap`] *and*
//! either the gap is tiny ([`CoalescePolicy::free_gap`]: cheaper to read than to ask for) or
//! the bytes wasted by the merged GET stay within [`CoalescePolicy::waste_ratio`] times the
//! bytes it reads for the caller. Without a waste ratio the rule is the plain gap (the
//! `coalesce_gap` storage option on its own, as before).

use std::ops::Range;

/// A gap this small is always merged under the waste rule.
pub(crate) const FREE_GAP: u64 = 4096;

/// The default waste ratio for remote stores: a merged GET may read up to 8 unwanted bytes
/// per wanted one. On the benchmark server (`docs/bench-vs-pylance.md`, 100 random rows of a
/// 1M-row int64 column) that is 13 requests and 0.85× pylance's bytes per warm take (ratio 1:
/// 69 requests, 0.16×; the 64 KiB gap alone: pylance's 8 requests and bytes), and it keeps
/// small reads far apart from becoming one large GET.
pub(crate) const REMOTE_WASTE_RATIO: f64 = 8.0;

/// How ranges of one object are merged into GETs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CoalescePolicy {
    /// Never merge across a gap larger than this.
    pub(crate) max_gap: u64,
    /// Never merge into a GET larger than this (overlapping ranges are always merged).
    pub(crate) max_merged: u64,
    /// Gaps up to this are merged regardless of the waste ratio.
    pub(crate) free_gap: u64,
    /// A merged GET may waste at most this many bytes per byte wanted; `None`: the gap alone
    /// decides.
    pub(crate) waste_ratio: Option<f64>,
}

impl CoalescePolicy {
    /// The plain gap rule: merge when the gap is at most `max_gap`.
    pub(crate) fn gap(max_gap: u64, max_merged: u64) -> Self {
        Self {
            max_gap,
            max_merged,
            free_gap: max_gap,
            waste_ratio: None,
        }
    }

    /// The gap rule bounded by a waste ratio (gaps up to [`FREE_GAP`] are free).
    pub(crate) fn with_waste(max_gap: u64, max_merged: u64, waste_ratio: f64) -> Self {
        Self {
            max_gap,
            max_merged,
            free_gap: FREE_GAP.min(max_gap),
            waste_ratio: Some(waste_ratio.max(0.0)),
        }
    }

    /// Whether a run `run` (reading `wanted` bytes the caller asked for) should absorb the
    /// next range `next` (sorted after it, not overlapping).
    pub(crate) fn should_merge(&self, run: &Range<u64>, wanted: u64, next: &Range<u64>) -> bool {
        let gap = next.start.saturating_sub(run.end);
        let merged_len = run.end.max(next.end) - run.start;
        if gap > self.max_gap || merged_len > self.max_merged {
            return false;
        }
        match self.waste_ratio {
            None => true,
            Some(_) if gap <= self.free_gap => true,
            Some(ratio) => {
                let wanted = wanted + (next.end - next.start);
                let waste = merged_len.saturating_sub(wanted);
                (waste as f64) <= ratio * wanted as f64
            }
        }
    }
}

/// Merge ranges under `policy`: overlapping ranges always merge, neighbours as
/// [`CoalescePolicy::should_merge`] decides, greedily from the left. Empty ranges are
/// ignored. Returns disjoint merged ranges sorted by start.
pub(crate) fn coalesce(ranges: &[Range<u64>], policy: &CoalescePolicy) -> Vec<Range<u64>> {
    let mut sorted: Vec<Range<u64>> = ranges.iter().filter(|r| r.start < r.end).cloned().collect();
    sorted.sort_by_key(|r| (r.start, r.end));
    let mut merged: Vec<(Range<u64>, u64)> = Vec::with_capacity(sorted.len());
    for r in sorted {
        if let Some((last, wanted)) = merged.last_mut() {
            if r.start < last.end {
                // Overlap: only the part past the run's end is new.
                *wanted += r.end.saturating_sub(last.end);
                last.end = last.end.max(r.end);
                continue;
            }
            if policy.should_merge(last, *wanted, &r) {
                *wanted += r.end - r.start;
                last.end = r.end;
                continue;
            }
        }
        let len = r.end - r.start;
        merged.push((r, len));
    }
    merged.into_iter().map(|(r, _)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_reads_far_apart_are_not_merged_into_one_big_get() {
        // The over-read of issue 16: 48 × 72 B, ~15 KB apart, under a 64 KiB gap.
        let ranges: Vec<Range<u64>> = (0..48u64).map(|i| i * 15_000..i * 15_000 + 72).collect();
        let gap_only = coalesce(&ranges, &CoalescePolicy::gap(64 << 10, 16 << 20));
        assert_eq!(gap_only.len(), 1);
        assert!(gap_only[0].end - gap_only[0].start > 700_000);
        for ratio in [1.0, REMOTE_WASTE_RATIO] {
            let policy = CoalescePolicy::with_waste(64 << 10, 16 << 20, ratio);
            assert_eq!(coalesce(&ranges, &policy), ranges);
        }
    }

    #[test]
    fn tiny_gaps_merge_and_wasted_bytes_stay_within_the_ratio() {
        let p = CoalescePolicy::with_waste(64 << 10, 16 << 20, 1.0);
        // 100 B gaps are free.
        assert_eq!(coalesce(&[0..10, 110..120], &p), vec![0..120]);
        // 8 KB reads 8 KB apart: waste = wanted / 2 after the first merge, within 1.0.
        let r: Vec<Range<u64>> = (0..4u64).map(|i| i * 16_000..i * 16_000 + 8_000).collect();
        assert_eq!(coalesce(&r, &p), vec![0..56_000]);
        // 8 KB reads 20 KB apart: 20 KB wasted for 16 KB read: not merged.
        let r: Vec<Range<u64>> = (0..3u64).map(|i| i * 28_000..i * 28_000 + 8_000).collect();
        assert_eq!(coalesce(&r, &p).len(), 3);
        // A big run absorbs a gap that is small next to what it reads.
        assert_eq!(
            coalesce(&[0..1_000_000, 1_060_000..1_000_100 + 60_000], &p).len(),
            1
        );
        // Never past max_gap, whatever the ratio.
        let loose = CoalescePolicy::with_waste(1000, 16 << 20, 1e9);
        assert_eq!(coalesce(&[0..10_000, 11_001..12_000], &loose).len(), 2);
    }

    #[test]
    fn overlaps_always_merge_and_max_merged_caps() {
        let p = CoalescePolicy::with_waste(64 << 10, 100, 1.0);
        assert_eq!(coalesce(&[0..80, 50..150, 5..6], &p), vec![0..150]);
        assert_eq!(coalesce(&[0..60, 61..120], &p), vec![0..60, 61..120]);
        assert_eq!(coalesce(&[5..5, 3..4], &p), vec![3..4]);
    }

    #[test]
    fn plain_gap_rule_is_the_old_merge() {
        let p = CoalescePolicy::gap(10, 1000);
        assert_eq!(coalesce(&[0..5, 15..20, 31..40], &p), vec![0..20, 31..40]);
    }
}
