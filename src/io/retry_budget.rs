//! [`RetryBudget`]: retries of one store, within a session, limited to a fraction of its
//! successful requests, so retries never multiply an outage.
//!
//! A token bucket: every answered request earns [`RetryBudget::ratio`] of a token (at most
//! [`RetryBudget::burst`] saved), every retry spends one. While a store fails most requests
//! (a storm of `503 SlowDown`, a partition), nothing is earned and retries stop once the
//! saved tokens are spent: each read then fails with its own error (naming its object) after
//! one attempt instead of adding `max_retries` more requests to a struggling store. When the
//! store recovers, answered requests refill the bucket.

use std::sync::Mutex;

/// Default share of answered requests that may be retried (10 %).
pub(crate) const DEFAULT_RETRY_RATIO: f64 = 0.1;

/// Default tokens saved up (retries allowed at once before any request was answered).
pub(crate) const DEFAULT_RETRY_BURST: f64 = 20.0;

/// The retry budget of one store of a session.
#[derive(Debug)]
pub(crate) struct RetryBudget {
    ratio: f64,
    burst: f64,
    tokens: Mutex<f64>,
}

impl Default for RetryBudget {
    fn default() -> Self {
        Self::new(DEFAULT_RETRY_RATIO, DEFAULT_RETRY_BURST)
    }
}

impl RetryBudget {
    /// Retries of up to `ratio` of answered requests, `burst` saved (the bucket starts full).
    pub(crate) fn new(ratio: f64, burst: f64) -> Self {
        let burst = burst.max(1.0);
        Self {
            ratio: ratio.max(0.0),
            burst,
            tokens: Mutex::new(burst),
        }
    }

    fn tokens(&self) -> std::sync::MutexGuard<'_, f64> {
        self.tokens.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One request was answered.
    pub(crate) fn earn(&self) {
        let mut t = self.tokens();
        *t = (*t + self.ratio).min(self.burst);
    }

    /// Spend a token for one retry; false (nothing spent) when the budget is empty.
    pub(crate) fn try_spend(&self) -> bool {
        let mut t = self.tokens();
        // (A tolerance: ten earnings of 0.1 make a whole token.)
        if *t < 1.0 - 1e-9 {
            return false;
        }
        *t -= 1.0;
        true
    }

    /// Tokens left (whole retries allowed now).
    #[cfg(test)]
    pub(crate) fn available(&self) -> f64 {
        *self.tokens()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_storm_spends_the_burst_then_retries_stop_until_requests_succeed() {
        let b = RetryBudget::new(0.1, 5.0);
        let retried = (0..1000).filter(|_| b.try_spend()).count();
        assert_eq!(retried, 5, "an outage gets the burst, not 1000 retries");
        for _ in 0..10 {
            b.earn();
        }
        assert!(b.try_spend());
        assert!(!b.try_spend());
        for _ in 0..10_000 {
            b.earn();
        }
        assert_eq!(b.available(), 5.0);
    }
}
