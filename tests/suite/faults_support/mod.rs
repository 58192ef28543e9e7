//! Shared pieces of the `faults_*` tests: small retry budgets, fault mixes, and one report
//! line per capability x fault kind (printed with `--nocapture`, collected into the issue
//! note).

#![allow(dead_code)]

use std::time::Duration;

use crate::io::{is_object_changed, FaultConfig, FaultCounts, FaultKind, RetryPolicy};
use crate::Error;

/// Seeds every fault test runs with (deterministic).
pub(super) const SEEDS: [u64; 4] = [11, 23, 37, 41];

/// A small, fast retry budget: `retries` retries, 1-4 ms backoff, 10 s overall, and no
/// attempt longer than 5 s (the faults' own delays are a few ms).
pub(super) fn fast_policy(retries: usize) -> RetryPolicy {
    RetryPolicy {
        max_retries: retries,
        init_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(4),
        retry_timeout: Duration::from_secs(10),
        attempt_timeout: Some(Duration::from_secs(5)),
        store_retries: true,
    }
}

/// Transient faults only (503s, timeouts, stalls, truncated bodies); at most 2 faulty
/// attempts per read, so 2 retries always get through.
pub(super) fn transient(seed: u64) -> FaultConfig {
    FaultConfig::seeded(seed)
        .with(FaultKind::ServerError, 0.15)
        .with(FaultKind::Timeout, 0.05)
        .with(FaultKind::Stall, 0.05)
        .with(FaultKind::Truncate, 0.15)
}

/// Only truncated bodies, on half of the attempts.
pub(super) fn truncating(seed: u64) -> FaultConfig {
    FaultConfig::seeded(seed).with(FaultKind::Truncate, 0.5)
}

/// Objects replaced between reads on a fraction of the attempts.
pub(super) fn drifting(seed: u64, p: f64) -> FaultConfig {
    FaultConfig::seeded(seed).with(FaultKind::VersionDrift, p)
}

/// Whether `err` is an acceptable outcome of a changed object: the change was detected
/// (`ObjectChanged`), or the stale metadata made a decoder refuse the bytes (`Corrupt`).
pub(super) fn is_clean_change_error(err: &Error) -> bool {
    is_object_changed(err) || matches!(err, Error::Corrupt { .. })
}

/// One row of the fault report.
pub(super) fn report(
    capability: &str,
    kind: &str,
    outcome: &str,
    counts: &FaultCounts,
    retries: u64,
) {
    eprintln!(
        "FAULT-REPORT | {capability} | {kind} | {outcome} | injected {} (failing {}) of {} attempts | retries {retries} | wrong answers 0",
        counts.injected(),
        counts.failing(),
        counts.attempts
    );
}

/// Sum two fault counts.
pub(super) fn add(a: FaultCounts, b: FaultCounts) -> FaultCounts {
    FaultCounts {
        attempts: a.attempts + b.attempts,
        server_errors: a.server_errors + b.server_errors,
        timeouts: a.timeouts + b.timeouts,
        stalls: a.stalls + b.stalls,
        truncations: a.truncations + b.truncations,
        version_drifts: a.version_drifts + b.version_drifts,
        persistent: a.persistent + b.persistent,
    }
}
