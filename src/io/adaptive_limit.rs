//! [`AdaptiveLimit`]: the bound on requests in flight to one store, following what the store
//! shows it can take (in the spirit of TCP congestion control, Netflix's concurrency-limits
//! and the AWS SDKs' adaptive retry mode). Pure: fed with completions (latency, outcome,
//! kind), it returns the new limit; the admission controller ([`crate::io::admission`])
//! drives it.
//!
//! * **Start** at the configured bound (256 by default) and never go above it.
//! * **Baseline**: per request kind (GET, LIST), a short moving average of latencies
//!   (about the last 20 answers) and the lowest that average has been. While the limit is
//!   at its floor the baseline drifts up slowly (about ×2 per 700 answers): a store that is
//!   slow even then became slower for good, and is re-learned.
//! * **Decrease** (multiplicative) when the average rises past [`LimitConfig::slow_ratio`]
//!   × the baseline (by `grow_ratio / ratio`, between ×0.9 and ×0.5), and when a request times out or the store throttles (503,
//!   SlowDown, 429) (×0.5). At most once per *generation*: only a request sent after the
//!   previous decrease can cause the next one (its predecessors saw the old limit), as TCP
//!   halves its window once per round trip.
//! * **Increase** by 1/√limit for every fast answer (average below [`LimitConfig::grow_ratio`]
//!   × the baseline; about √limit per round of `limit` answers) while at least half the
//!   limit is in use, so an idle store's limit does
//!   not grow on nothing. Between the two ratios the limit holds.
//! * **Weights**: a LIST takes [`LIST_WEIGHT`] units of the limit (a LIST costs 12.5 GETs on
//!   S3 and tens of times a GET's server time on small self-hosted stores), a GET one.
//! * **Floor**: never below [`LimitConfig::min`] (2 by default), so progress never stops.
//! * **Pinned** ([`LimitConfig::pinned`], `--max-requests N`): a fixed limit, no adaptation.

use std::time::Duration;

/// Units of the limit one LIST takes (one GET takes 1).
pub(crate) const LIST_WEIGHT: usize = 10;

/// Default floor of an adaptive limit.
pub(crate) const DEFAULT_MIN_LIMIT: usize = 2;

/// What a request is (its weight, and which latency baseline it is compared with).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RequestKind {
    /// A GET (range, suffix, whole object).
    Get,
    /// A LIST (one listing, however many pages).
    List,
}

impl RequestKind {
    /// Units of the limit a request of this kind takes.
    pub(crate) fn weight(self) -> usize {
        match self {
            RequestKind::Get => 1,
            RequestKind::List => LIST_WEIGHT,
        }
    }

    fn index(self) -> usize {
        match self {
            RequestKind::Get => 0,
            RequestKind::List => 1,
        }
    }
}

/// How a request ended, as far as the limit is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Answered (including a definite answer such as 404).
    Answered,
    /// Timed out (the store did not answer in time).
    TimedOut,
    /// The store said to slow down (503, SlowDown, 429).
    Throttled,
    /// Failed for another reason (says nothing about the store's load).
    Other,
}

/// One finished request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Completion {
    /// What it was.
    pub(crate) kind: RequestKind,
    /// Time from being sent (admitted) to its end; queue time is not part of it.
    pub(crate) latency: Duration,
    /// How it ended.
    pub(crate) outcome: Outcome,
    /// The limit's generation when it was sent ([`AdaptiveLimit::generation`]).
    pub(crate) generation: u64,
}

/// Tuning of an [`AdaptiveLimit`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LimitConfig {
    /// The limit at the start (and the most it grows to).
    pub(crate) initial: usize,
    /// The floor.
    pub(crate) min: usize,
    /// Decrease when the recent latency is above this many times the baseline.
    pub(crate) slow_ratio: f64,
    /// Increase while the recent latency is below this many times the baseline.
    pub(crate) grow_ratio: f64,
    /// Factor applied on a timeout or throttling.
    pub(crate) drop_factor: f64,
    /// Factor applied when latency rose.
    pub(crate) slow_factor: f64,
    /// No adaptation: the limit stays `initial`.
    pub(crate) pinned: bool,
}

impl LimitConfig {
    /// An adaptive limit starting at (and bounded by) `initial`.
    pub(crate) fn adaptive(initial: usize) -> Self {
        let initial = initial.max(1);
        Self {
            initial,
            min: DEFAULT_MIN_LIMIT.min(initial),
            slow_ratio: 2.0,
            grow_ratio: 1.5,
            drop_factor: 0.5,
            slow_factor: 0.9,
            pinned: false,
        }
    }

    /// What a session's stores use: an adaptive limit that is lowered only on timeouts and
    /// throttling (loss, as TCP Reno), never because answers got slower. Latency alone does
    /// not tell a store at capacity from a client whose own CPU is saturated: measured with
    /// two thirds of 300 queries opening datasets on a busy 2-core machine
    /// (`suite::load_opens_bench`), cutting on latency drove the limit to its floor and the
    /// median query from 1.2 s to 10.9 s. Latency still gates growth back after a cut.
    pub(crate) fn on_loss(initial: usize) -> Self {
        Self {
            slow_ratio: f64::INFINITY,
            ..Self::adaptive(initial)
        }
    }

    /// A fixed limit of `n` (at least 1).
    pub(crate) fn pinned(n: usize) -> Self {
        Self {
            pinned: true,
            min: n.max(1),
            ..Self::adaptive(n)
        }
    }
}

/// Moving averages of one request kind's latency (seconds).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Latencies {
    /// Recent average (exponential, about the last 20 answers).
    recent: Option<f64>,
    /// Lowest recent average seen, drifting up slowly.
    baseline: Option<f64>,
}

/// Weight of a new answer in the recent average.
const RECENT_ALPHA: f64 = 0.05;
/// Per-answer upward drift of the baseline (×2 after about 700 answers).
const BASELINE_DRIFT: f64 = 0.001;

impl Latencies {
    /// Add one answer's latency; returns recent / baseline.
    fn add(&mut self, seconds: f64, drift: bool) -> f64 {
        let seconds = seconds.max(1e-6);
        let recent = match self.recent {
            Some(r) => r + RECENT_ALPHA * (seconds - r),
            None => seconds,
        };
        self.recent = Some(recent);
        let baseline = match self.baseline {
            Some(b) if drift => recent.min(b * (1.0 + BASELINE_DRIFT)),
            Some(b) => recent.min(b),
            None => recent,
        };
        self.baseline = Some(baseline);
        recent / baseline
    }
}

/// What a completion did to the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    /// Nothing.
    None,
    /// Lowered.
    Decreased,
    /// Raised.
    Increased,
}

/// What an [`AdaptiveLimit`] reports (for `IoStats` and tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct LimitSnapshot {
    /// The limit now.
    pub(crate) limit: usize,
    /// The lowest it has been.
    pub(crate) min_seen: usize,
    /// The highest it has been.
    pub(crate) max_seen: usize,
    /// Times it was lowered.
    pub(crate) decreases: u64,
    /// Times it was raised (by at least one whole request).
    pub(crate) increases: u64,
}

/// The adaptive bound on requests in flight to one store (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct AdaptiveLimit {
    config: LimitConfig,
    limit: f64,
    generation: u64,
    latencies: [Latencies; 2],
    min_seen: usize,
    max_seen: usize,
    decreases: u64,
    increases: u64,
}

impl AdaptiveLimit {
    /// A limit with `config`.
    pub(crate) fn new(config: LimitConfig) -> Self {
        let initial = config.initial.max(1);
        let config = LimitConfig {
            initial,
            min: config.min.clamp(1, initial),
            ..config
        };
        Self {
            config,
            limit: initial as f64,
            generation: 0,
            latencies: [Latencies::default(); 2],
            min_seen: initial,
            max_seen: initial,
            decreases: 0,
            increases: 0,
        }
    }

    /// The current limit (units of [`RequestKind::weight`]).
    pub(crate) fn limit(&self) -> usize {
        (self.limit.floor() as usize).clamp(self.config.min, self.config.initial)
    }

    /// The units a request of `kind` takes: its weight, but never more than the limit (a
    /// LIST still runs, alone, at the floor).
    pub(crate) fn units(&self, kind: RequestKind) -> usize {
        kind.weight().min(self.limit())
    }

    /// The generation: how many times the limit was lowered. Requests carry it from their
    /// admission into their [`Completion`].
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// Counters.
    pub(crate) fn snapshot(&self) -> LimitSnapshot {
        LimitSnapshot {
            limit: self.limit(),
            min_seen: self.min_seen,
            max_seen: self.max_seen,
            decreases: self.decreases,
            increases: self.increases,
        }
    }

    /// Feed one finished request; `in_flight` is the units still in flight (after it).
    pub(crate) fn on_completion(&mut self, done: &Completion, in_flight: usize) -> Change {
        if self.config.pinned {
            return Change::None;
        }
        match done.outcome {
            Outcome::Other => Change::None,
            Outcome::TimedOut | Outcome::Throttled => {
                self.decrease(done.generation, self.config.drop_factor)
            }
            Outcome::Answered => {
                // The baseline only drifts up while the limit is at its floor: a store that
                // is slow even then is slow for good, not loaded.
                let drift = self.limit() <= self.config.min;
                let latencies = &mut self.latencies[done.kind.index()];
                let ratio = latencies.add(done.latency.as_secs_f64(), drift);
                if ratio > self.config.slow_ratio {
                    // The further above the baseline, the deeper the cut (at most by half).
                    let factor = (self.config.grow_ratio / ratio)
                        .clamp(self.config.drop_factor, self.config.slow_factor);
                    self.decrease(done.generation, factor)
                } else if ratio < self.config.grow_ratio && 2 * in_flight >= self.limit() {
                    self.increase()
                } else {
                    Change::None
                }
            }
        }
    }

    /// Lower by `factor` (and at least one) unless a decrease already answered a request of
    /// the same generation or the floor is reached.
    fn decrease(&mut self, generation: u64, factor: f64) -> Change {
        let (now, floor) = (self.limit(), self.config.min);
        self.limit = now as f64;
        if generation != self.generation || now <= floor {
            return Change::None;
        }
        let lowered = ((now as f64 * factor).floor() as usize).min(now - 1);
        self.limit = lowered.max(floor) as f64;
        self.generation += 1;
        self.decreases += 1;
        self.min_seen = self.min_seen.min(self.limit());
        Change::Decreased
    }

    fn increase(&mut self) -> Change {
        let before = self.limit();
        // +√limit per round of `limit` answers: quick from the floor, gentle near the top.
        let step = 1.0 / (before as f64).sqrt();
        self.limit = (self.limit + step).min(self.config.initial as f64);
        if self.limit() > before {
            self.increases += 1;
            self.max_seen = self.max_seen.max(self.limit());
            Change::Increased
        } else {
            Change::None
        }
    }
}

#[cfg(test)]
#[path = "adaptive_limit_tests.rs"]
mod tests;
