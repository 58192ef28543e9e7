//! Hedged reads: the pure policy.
//!
//! Object stores answer most GETs within a first-byte latency of tens of ms, but a few take
//! several times longer (a long-tailed, roughly lognormal distribution). A wave of N GETs
//! waits for its slowest, so the more requests a wave has, the more it pays the tail. A
//! *hedge* is a duplicate of a GET that is still outstanding past an adaptive threshold
//! (about the p95 of the store's recent first-byte latency, plus the transfer time of its
//! bytes): whichever copy answers first is used and the other is cancelled ("The Tail at
//! Scale", Dean & Barroso 2013).
//!
//! Extra requests are capped twice: per wave (at most `ceil(fraction × GETs)` hedges) and
//! overall by a token budget that earns `fraction` of a token per request sent (so hedges
//! stay at most about `fraction` of all requests, plus a small burst). Nothing hedges until
//! [`HedgeConfig::min_samples`] latencies have been seen.
//!
//! Everything here is pure bookkeeping (no clocks, no I/O); [`crate::io::fetch`] measures
//! and races the copies.

use std::collections::VecDeque;
use std::time::Duration;

/// Latency samples remembered per store.
const WINDOW: usize = 256;
/// A GET at least this large also measures the store's per-connection throughput.
const THROUGHPUT_MIN_BYTES: u64 = 64 * 1024;
/// Throughput assumed until a large GET has been measured (bytes per second).
const DEFAULT_THROUGHPUT: f64 = 50e6;

/// When to hedge (from storage options: `hedge_fraction`, `hedge_quantile`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HedgeConfig {
    /// At most this fraction of a wave's GETs (and of all requests, over time) are hedged;
    /// 0 turns hedging off.
    pub fraction: f64,
    /// The latency quantile past which an outstanding GET is duplicated.
    pub quantile: f64,
    /// Hedge only once this many latencies of the store have been seen.
    pub min_samples: usize,
    /// Never hedge a GET outstanding for less than this.
    pub floor: Duration,
    /// Largest number of hedge tokens saved up.
    pub burst: f64,
}

impl HedgeConfig {
    /// No hedging (local files, in-memory stores).
    pub(crate) fn off() -> Self {
        Self {
            fraction: 0.0,
            ..Self::remote()
        }
    }

    /// The default for remote object stores: up to 10% extra requests past the p95.
    pub(crate) fn remote() -> Self {
        Self {
            fraction: 0.1,
            quantile: 0.95,
            min_samples: 10,
            floor: Duration::from_millis(5),
            burst: 3.0,
        }
    }

    /// Whether any GET may be hedged.
    pub(crate) fn enabled(&self) -> bool {
        self.fraction > 0.0
    }
}

impl Default for HedgeConfig {
    fn default() -> Self {
        Self::off()
    }
}

/// At most this many hedges in a wave of `gets` GETs: `ceil(fraction × gets)`, 0 when off.
pub(crate) fn wave_cap(gets: usize, fraction: f64) -> usize {
    if fraction <= 0.0 || gets == 0 {
        return 0;
    }
    ((gets as f64) * fraction).ceil().min(gets as f64) as usize
}

/// Nearest-rank quantile `q` (0..=1) of `samples` (any order); `None` when empty.
pub(crate) fn quantile(samples: &[f64], q: f64) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = (q.clamp(0.0, 1.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// Recent latencies of one store and the hedge budget: the state behind the policy.
#[derive(Debug, Clone)]
pub(crate) struct LatencyTracker {
    config: HedgeConfig,
    /// Estimated first-byte latencies (seconds), newest last.
    first_byte: VecDeque<f64>,
    /// Measured throughputs of large GETs (bytes/s), newest last.
    throughput: VecDeque<f64>,
    tokens: f64,
}

impl LatencyTracker {
    /// An empty tracker (no samples, a full burst of tokens).
    pub(crate) fn new(config: HedgeConfig) -> Self {
        let tokens = config.burst;
        Self {
            config,
            first_byte: VecDeque::new(),
            throughput: VecDeque::new(),
            tokens,
        }
    }

    /// The policy's configuration.
    pub(crate) fn config(&self) -> &HedgeConfig {
        &self.config
    }

    /// Per-connection throughput estimate (bytes/s): the best of the recent large GETs.
    pub(crate) fn throughput(&self) -> f64 {
        self.throughput
            .iter()
            .copied()
            .fold(None, |best: Option<f64>, t| {
                Some(best.map_or(t, |b| b.max(t)))
            })
            .unwrap_or(DEFAULT_THROUGHPUT)
    }

    /// Time to transfer `bytes` at the estimated throughput.
    fn transfer(&self, bytes: u64) -> f64 {
        bytes as f64 / self.throughput()
    }

    /// Record a GET of `bytes` answered in `elapsed` (first byte + transfer).
    pub(crate) fn record(&mut self, elapsed: Duration, bytes: u64) {
        let secs = elapsed.as_secs_f64();
        if bytes >= THROUGHPUT_MIN_BYTES && secs > 0.0 {
            push_bounded(&mut self.throughput, bytes as f64 / secs, 64);
        }
        let first = (secs - self.transfer(bytes)).max(0.0);
        push_bounded(&mut self.first_byte, first, WINDOW);
    }

    /// Count one request sent: earns `fraction` of a hedge token.
    pub(crate) fn earn(&mut self) {
        self.tokens = (self.tokens + self.config.fraction).min(self.config.burst.max(1.0));
    }

    /// Spend a token for one hedge; false (nothing spent) when the budget is empty.
    pub(crate) fn try_spend(&mut self) -> bool {
        // (A tolerance: ten earnings of 0.1 must make a whole token.)
        if !self.config.enabled() || self.tokens < 1.0 - 1e-9 {
            return false;
        }
        self.tokens -= 1.0;
        true
    }

    /// How long a GET of `bytes` may be outstanding before it is hedged; `None` when
    /// hedging is off or too few latencies are known.
    pub(crate) fn threshold(&self, bytes: u64) -> Option<Duration> {
        if !self.config.enabled() || self.first_byte.len() < self.config.min_samples.max(1) {
            return None;
        }
        let samples: Vec<f64> = self.first_byte.iter().copied().collect();
        let q = quantile(&samples, self.config.quantile)?;
        let secs = q.max(self.config.floor.as_secs_f64()) + self.transfer(bytes);
        Some(Duration::from_secs_f64(secs))
    }
}

fn push_bounded(q: &mut VecDeque<f64>, v: f64, cap: usize) {
    if q.len() >= cap {
        q.pop_front();
    }
    q.push_back(v);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn wave_cap_is_a_tenth_rounded_up_and_zero_when_off() {
        assert_eq!(wave_cap(0, 0.1), 0);
        assert_eq!(wave_cap(1, 0.1), 1);
        assert_eq!(wave_cap(10, 0.1), 1);
        assert_eq!(wave_cap(11, 0.1), 2);
        assert_eq!(wave_cap(62, 0.1), 7);
        assert_eq!(wave_cap(62, 0.0), 0);
        assert_eq!(wave_cap(3, 5.0), 3);
    }

    #[test]
    fn quantile_is_nearest_rank() {
        let xs: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(&xs, 0.95), Some(95.0));
        assert_eq!(quantile(&xs, 0.5), Some(50.0));
        assert_eq!(quantile(&xs, 0.0), Some(1.0));
        assert_eq!(quantile(&xs, 1.0), Some(100.0));
        assert_eq!(quantile(&[], 0.5), None);
    }

    #[test]
    fn no_threshold_until_enough_samples_or_when_off() {
        let mut t = LatencyTracker::new(HedgeConfig::remote());
        for _ in 0..9 {
            t.record(ms(20), 100);
        }
        assert_eq!(t.threshold(100), None);
        t.record(ms(20), 100);
        assert!(t.threshold(100).is_some());
        let mut off = LatencyTracker::new(HedgeConfig::off());
        for _ in 0..50 {
            off.record(ms(20), 100);
        }
        assert_eq!(off.threshold(100), None);
        assert!(!off.try_spend());
    }

    #[test]
    fn threshold_is_the_p95_first_byte_plus_transfer() {
        let mut t = LatencyTracker::new(HedgeConfig::remote());
        // 95 fast, 5 slow small GETs: p95 is the last fast one.
        for i in 0..95 {
            t.record(ms(10 + i % 10), 1000);
        }
        for _ in 0..5 {
            t.record(ms(200), 1000);
        }
        // A 1 MB GET at 1 MB per 10 ms measures the throughput (100 MB/s) ...
        t.record(ms(10), 1_000_000);
        let small = t.threshold(0).unwrap();
        assert!(
            small >= Duration::from_micros(18_900) && small <= ms(20),
            "{small:?}"
        );
        // ... and larger GETs may take their transfer time longer.
        let big = t.threshold(2_000_000).unwrap();
        let extra = big - small;
        assert!(extra >= ms(19) && extra <= ms(21), "{extra:?}");
    }

    #[test]
    fn threshold_never_below_the_floor() {
        let mut t = LatencyTracker::new(HedgeConfig::remote());
        for _ in 0..20 {
            t.record(Duration::from_micros(100), 10);
        }
        assert!(t.threshold(10).unwrap() >= ms(5));
    }

    #[test]
    fn budget_allows_about_a_fraction_of_requests() {
        let cfg = HedgeConfig {
            burst: 1.0,
            ..HedgeConfig::remote()
        };
        let mut t = LatencyTracker::new(cfg);
        assert!(t.try_spend());
        assert!(!t.try_spend());
        let mut hedges = 0;
        for _ in 0..1000 {
            t.earn();
            if t.try_spend() {
                hedges += 1;
            }
        }
        assert!((99..=101).contains(&hedges), "{hedges}");
    }
}
