//! [`RangeFetcher`]: many byte ranges in, few coalesced concurrent GETs out, zero-copy slices
//! back.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use futures::stream::{self, StreamExt, TryStreamExt};
use object_store::path::Path;

use crate::error::{Error, Result};
use crate::io::source::{ObjectVersion, RangeSource};
use crate::io::stats::IoStats;

/// One range to read in a wave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadRequest {
    /// Object path.
    pub path: Path,
    /// Byte range wanted (non-empty).
    pub range: Range<u64>,
    /// Object size when known (from a manifest or an earlier read): ranges are validated
    /// against it before any request is sent.
    pub object_size: Option<u64>,
}

/// The result of a suffix ("tail") read.
#[derive(Debug, Clone)]
pub struct Tail {
    /// The last bytes of the object (the whole object if it is smaller than asked).
    pub bytes: Bytes,
    /// Size and version of the object, from the same response.
    pub version: ObjectVersion,
}

impl Tail {
    /// Absolute offset of `bytes[0]` in the object.
    pub fn start(&self) -> u64 {
        self.version.size - self.bytes.len() as u64
    }

    /// Slice the tail by an absolute byte range of the object, if the tail covers it.
    pub fn slice(&self, range: Range<u64>) -> Option<Bytes> {
        let start = self.start();
        if range.start < start || range.end > self.version.size || range.start > range.end {
            return None;
        }
        Some(
            self.bytes
                .slice((range.start - start) as usize..(range.end - start) as usize),
        )
    }
}

/// Tuning of a [`RangeFetcher`].
#[derive(Debug, Clone)]
pub struct FetchOptions {
    /// Merge two ranges when the gap between them is at most this many bytes.
    /// `None` uses the source's per-backend gap.
    pub coalesce_gap: Option<u64>,
    /// Never merge ranges into a request larger than this (unless one range alone is larger).
    pub max_merged_bytes: u64,
    /// At most this many requests in flight per wave.
    pub max_concurrency: usize,
}

impl Default for FetchOptions {
    fn default() -> Self {
        Self {
            coalesce_gap: None,
            max_merged_bytes: 16 << 20,
            max_concurrency: 16,
        }
    }
}

/// Merge sorted-or-not ranges: ranges that overlap or whose gap is at most `gap` are merged,
/// as long as the merged range stays within `max_merged` bytes (a single range larger than
/// `max_merged` stays whole). Empty ranges are ignored. Returns merged ranges sorted by
/// start. Pure.
pub fn merge_ranges(ranges: &[Range<u64>], gap: u64, max_merged: u64) -> Vec<Range<u64>> {
    let mut sorted: Vec<Range<u64>> = ranges.iter().filter(|r| r.start < r.end).cloned().collect();
    sorted.sort_by_key(|r| (r.start, r.end));
    let mut merged: Vec<Range<u64>> = Vec::with_capacity(sorted.len());
    for r in sorted {
        if let Some(last) = merged.last_mut() {
            let close_enough = r.start <= last.end.saturating_add(gap);
            let new_end = last.end.max(r.end);
            let overlaps = r.start < last.end;
            if overlaps || (close_enough && new_end - last.start <= max_merged) {
                last.end = new_end;
                continue;
            }
        }
        merged.push(r);
    }
    merged
}

/// Executes waves of range reads through a [`RangeSource`].
#[derive(Debug, Clone)]
pub struct RangeFetcher {
    source: Arc<dyn RangeSource>,
    options: FetchOptions,
}

impl RangeFetcher {
    /// A fetcher over `source`.
    pub fn new(source: Arc<dyn RangeSource>, options: FetchOptions) -> Self {
        Self { source, options }
    }

    /// The underlying source.
    pub fn source(&self) -> &Arc<dyn RangeSource> {
        &self.source
    }

    /// Suffix read of the last `n` bytes (one request, no HEAD).
    pub async fn tail(&self, path: &Path, n: u64, stats: &IoStats) -> Result<Tail> {
        let _guard = stats.start_request();
        let (bytes, version) = self.source.get_suffix(path, n).await?;
        stats.add_bytes(bytes.len() as u64);
        Ok(Tail { bytes, version })
    }

    /// Read a whole object (one request).
    pub async fn whole(&self, path: &Path, stats: &IoStats) -> Result<Tail> {
        let _guard = stats.start_request();
        let (bytes, version) = self.source.get_all(path).await?;
        stats.add_bytes(bytes.len() as u64);
        Ok(Tail { bytes, version })
    }

    /// Read all `requests` as one wave: ranges of the same object are merged, the merged
    /// GETs run concurrently (bounded), and each request's bytes come back in order as a
    /// zero-copy slice of its merged buffer.
    pub async fn fetch(&self, requests: &[ReadRequest], stats: &IoStats) -> Result<Vec<Bytes>> {
        for r in requests {
            validate_request(r)?;
        }
        let gap = self
            .options
            .coalesce_gap
            .unwrap_or_else(|| self.source.coalesce_gap());
        // Group by object, merge per object.
        let mut plan: Vec<(Path, Range<u64>)> = Vec::new();
        let mut paths: Vec<&Path> = requests.iter().map(|r| &r.path).collect();
        paths.sort();
        paths.dedup();
        for path in &paths {
            let ranges: Vec<Range<u64>> = requests
                .iter()
                .filter(|r| &&r.path == path)
                .map(|r| r.range.clone())
                .collect();
            for m in merge_ranges(&ranges, gap, self.options.max_merged_bytes) {
                plan.push(((*path).clone(), m));
            }
        }
        let source = &self.source;
        let fetched: Vec<(Path, Range<u64>, Bytes)> =
            stream::iter(plan.into_iter().map(|(path, range)| async move {
                let _guard = stats.start_request();
                let bytes = source.get_range(&path, range.clone()).await?;
                stats.add_bytes(bytes.len() as u64);
                Ok::<_, Error>((path, range, bytes))
            }))
            .buffer_unordered(self.options.max_concurrency.max(1))
            .try_collect()
            .await?;
        requests
            .iter()
            .map(|r| {
                let (_, merged, bytes) = fetched
                    .iter()
                    .find(|(p, m, _)| {
                        p == &r.path && m.start <= r.range.start && r.range.end <= m.end
                    })
                    .ok_or_else(|| {
                        Error::corrupt("internal: fetched ranges do not cover a request")
                    })?;
                let lo = (r.range.start - merged.start) as usize;
                let hi = (r.range.end - merged.start) as usize;
                Ok(bytes.slice(lo..hi))
            })
            .collect()
    }
}

fn validate_request(r: &ReadRequest) -> Result<()> {
    if r.range.start >= r.range.end {
        return Err(Error::InvalidArgument(format!(
            "empty or inverted range {}..{} of {}",
            r.range.start, r.range.end, r.path
        )));
    }
    if let Some(size) = r.object_size {
        if r.range.end > size {
            return Err(Error::Corrupt {
                path: r.path.to_string(),
                range: Some(r.range.clone()),
                what: format!("range ends past the end of the {size}-byte object"),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn merges_close_ranges_and_keeps_far_ones() {
        let m = merge_ranges(&[10..20, 0..5, 25..30, 100..110], 5, u64::MAX);
        assert_eq!(m, vec![0..30, 100..110]);
        let m = merge_ranges(&[10..20, 0..5, 25..30, 100..110], 4, u64::MAX);
        assert_eq!(m, vec![0..5, 10..20, 25..30, 100..110]);
    }

    #[test]
    fn respects_max_merged_size() {
        let m = merge_ranges(&[0..10, 10..20, 20..30], 0, 20);
        assert_eq!(m, vec![0..20, 20..30]);
    }

    proptest! {
        #[test]
        fn every_range_is_covered_and_merged_ranges_are_disjoint(
            ranges in proptest::collection::vec((0u64..10_000, 1u64..500), 0..50),
            gap in 0u64..1000,
            max in 1u64..5000,
        ) {
            let ranges: Vec<Range<u64>> = ranges.into_iter().map(|(s, l)| s..s + l).collect();
            let merged = merge_ranges(&ranges, gap, max);
            for r in &ranges {
                prop_assert!(merged.iter().any(|m| m.start <= r.start && r.end <= m.end));
            }
            for w in merged.windows(2) {
                prop_assert!(w[0].end < w[1].start || (w[0].end == w[1].start));
                prop_assert!(w[0].start < w[1].start);
            }
            let total_wanted: u64 = merge_ranges(&ranges, 0, u64::MAX).iter().map(|r| r.end - r.start).sum();
            let total_fetched: u64 = merged.iter().map(|r| r.end - r.start).sum();
            prop_assert!(total_fetched >= total_wanted);
            prop_assert!(total_fetched <= total_wanted + gap * merged.len() as u64 * ranges.len() as u64);
        }
    }
}
