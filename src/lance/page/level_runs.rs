//! Repetition or definition levels of one mini-block chunk, held as runs.
//!
//! Levels of mostly-empty or mostly-null columns are long runs of one value (a 64K-row page
//! of 99% empty lists is a few thousand runs). A take that needs a few rows of such a chunk
//! locates them and copies their levels run by run: the work follows the runs, not every
//! level of the chunk.

use std::ops::Range;

/// Levels as runs, with the count of "marked" levels (row starts for repetition levels,
/// visible levels for definition levels) before each run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LevelRuns {
    values: Vec<u16>,
    /// Level index where each run ends (exclusive), ascending.
    ends: Vec<usize>,
    /// Marked levels before each run, plus the total (`values.len() + 1` entries).
    marked_before: Vec<usize>,
}

impl LevelRuns {
    /// Runs of `(value, length)` (lengths > 0); `is_marked` says which values count.
    pub(crate) fn new(runs: &[(u16, u32)], is_marked: impl Fn(u16) -> bool) -> Self {
        let mut values = Vec::with_capacity(runs.len());
        let mut ends = Vec::with_capacity(runs.len());
        let mut marked_before = Vec::with_capacity(runs.len() + 1);
        let (mut end, mut marked) = (0usize, 0usize);
        marked_before.push(0);
        for &(value, length) in runs {
            end += length as usize;
            if is_marked(value) {
                marked += length as usize;
            }
            values.push(value);
            ends.push(end);
            marked_before.push(marked);
        }
        Self {
            values,
            ends,
            marked_before,
        }
    }

    /// Number of levels.
    pub(crate) fn len(&self) -> usize {
        self.ends.last().copied().unwrap_or(0)
    }

    /// Whether there are no levels.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of marked levels.
    pub(crate) fn marked(&self) -> usize {
        self.marked_before.last().copied().unwrap_or(0)
    }

    fn start(&self, run: usize) -> usize {
        if run == 0 {
            0
        } else {
            self.ends[run - 1]
        }
    }

    /// Marked levels before level `level` (all of them when `level >= len`).
    pub(crate) fn marked_before(&self, level: usize) -> usize {
        let run = self.ends.partition_point(|&e| e <= level);
        if run == self.values.len() {
            return self.marked();
        }
        let within = if self.marked_before[run + 1] > self.marked_before[run] {
            level - self.start(run)
        } else {
            0
        };
        self.marked_before[run] + within
    }

    /// Level index of the `k`-th marked level (0-based), if there are more than `k`.
    pub(crate) fn nth_marked(&self, k: usize) -> Option<usize> {
        let run = self.marked_before[1..].partition_point(|&m| m <= k);
        (run < self.values.len()).then(|| self.start(run) + (k - self.marked_before[run]))
    }

    /// Append the levels of `range` (clamped to the levels) to `out`.
    pub(crate) fn extend_into(&self, range: Range<usize>, out: &mut Vec<u16>) {
        let end = range.end.min(self.len());
        let mut at = range.start;
        let mut run = self.ends.partition_point(|&e| e <= at);
        while at < end && run < self.values.len() {
            let upto = self.ends[run].min(end);
            out.extend(std::iter::repeat_n(self.values[run], upto - at));
            at = upto;
            run += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(runs: &[(u16, u32)]) -> Vec<u16> {
        runs.iter()
            .flat_map(|&(v, n)| std::iter::repeat_n(v, n as usize))
            .collect()
    }

    /// Every query agrees with the same question asked of the expanded levels.
    #[test]
    fn runs_answer_like_the_expanded_levels() {
        let runs = [(1, 3), (0, 2), (1, 1), (2, 4), (1, 2), (0, 1)];
        let levels = expand(&runs);
        let marked = |v: u16| v == 1;
        let r = LevelRuns::new(&runs, marked);
        assert_eq!(r.len(), levels.len());
        let starts: Vec<usize> = (0..levels.len()).filter(|&i| marked(levels[i])).collect();
        assert_eq!(r.marked(), starts.len());
        for (k, &want) in starts.iter().enumerate() {
            assert_eq!(r.nth_marked(k), Some(want), "k={k}");
        }
        assert_eq!(r.nth_marked(starts.len()), None);
        for level in 0..=levels.len() + 2 {
            let want = levels[..level.min(levels.len())]
                .iter()
                .filter(|&&v| marked(v))
                .count();
            assert_eq!(r.marked_before(level), want, "level {level}");
        }
        for lo in 0..=levels.len() {
            for hi in lo..=levels.len() + 1 {
                let mut out = vec![9];
                r.extend_into(lo..hi, &mut out);
                assert_eq!(out[1..], levels[lo..hi.min(levels.len())], "{lo}..{hi}");
            }
        }
        let empty = LevelRuns::new(&[], marked);
        assert!(empty.is_empty() && empty.nth_marked(0).is_none());
        assert_eq!(empty.marked_before(3), 0);
    }
}
