//! [`LatencySource`]: a fixed delay per request around any [`RangeSource`], optionally a
//! different delay for chosen requests (by arrival order), counting requests abandoned
//! before their answer (cancelled, e.g. the losing copy of a hedged read).

use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use object_store::path::Path;

use crate::error::Result;
use crate::io::source::{ObjectVersion, RangeSource};

/// Sleeps `delay` before forwarding each request to the inner source, like a network round
/// trip would. Concurrent requests wait concurrently, so round trips (not requests) decide
/// the wall time, as on a real object store.
#[derive(Debug, Clone)]
pub(crate) struct LatencySource {
    inner: Arc<dyn RangeSource>,
    delay: Duration,
    /// Delays replacing `delay` for the n-th request (0-based, arrival order).
    chosen: Arc<HashMap<u64, Duration>>,
    started: Arc<AtomicU64>,
    cancelled: Arc<AtomicU64>,
}

/// Counts a request as cancelled when dropped before it was answered.
struct Pending<'a> {
    answered: bool,
    cancelled: &'a AtomicU64,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if !self.answered {
            self.cancelled.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl LatencySource {
    /// Wrap `inner`, adding `delay` to every request.
    pub(crate) fn new(inner: Arc<dyn RangeSource>, delay: Duration) -> Self {
        Self {
            inner,
            delay,
            chosen: Arc::default(),
            started: Arc::default(),
            cancelled: Arc::default(),
        }
    }

    /// Delay the requests with these arrival indices (0-based, counting every request
    /// through this source) by `delay` instead.
    #[cfg_attr(not(test), allow(dead_code))] // used by the hedging tests
    pub(crate) fn with_slow_requests(mut self, indices: &[u64], delay: Duration) -> Self {
        let mut chosen = (*self.chosen).clone();
        chosen.extend(indices.iter().map(|&i| (i, delay)));
        self.chosen = Arc::new(chosen);
        self
    }

    /// Requests received so far.
    #[cfg_attr(not(test), allow(dead_code))] // used by the hedging tests
    pub(crate) fn started(&self) -> u64 {
        self.started.load(Ordering::SeqCst)
    }

    /// Requests dropped before their answer (cancelled by the caller).
    #[cfg_attr(not(test), allow(dead_code))] // used by the hedging tests
    pub(crate) fn cancelled(&self) -> u64 {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// Wait this request's delay, then run `op`; counts the request as cancelled if the
    /// caller drops it first.
    async fn delayed<T>(&self, op: impl std::future::Future<Output = Result<T>>) -> Result<T> {
        let index = self.started.fetch_add(1, Ordering::SeqCst);
        let mut pending = Pending {
            answered: false,
            cancelled: &self.cancelled,
        };
        let delay = self.chosen.get(&index).copied().unwrap_or(self.delay);
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        let out = op.await;
        pending.answered = true;
        out
    }
}

#[async_trait]
impl RangeSource for LatencySource {
    async fn get_range(
        &self,
        path: &Path,
        range: Range<u64>,
        expected: Option<&ObjectVersion>,
    ) -> Result<Bytes> {
        self.delayed(self.inner.get_range(path, range, expected))
            .await
    }

    async fn get_suffix(&self, path: &Path, n: u64) -> Result<(Bytes, ObjectVersion)> {
        self.delayed(self.inner.get_suffix(path, n)).await
    }

    async fn get_all(&self, path: &Path) -> Result<(Bytes, ObjectVersion)> {
        self.delayed(self.inner.get_all(path)).await
    }

    fn coalesce_gap(&self) -> u64 {
        self.inner.coalesce_gap()
    }

    fn retry_policy(&self) -> Option<crate::io::retry::RetryPolicy> {
        self.inner.retry_policy()
    }

    fn coalesce_waste(&self) -> Option<f64> {
        self.inner.coalesce_waste()
    }

    fn hedge_config(&self) -> crate::io::hedge::HedgeConfig {
        self.inner.hedge_config()
    }

    fn describe(&self) -> String {
        format!(
            "{} (+{} ms/request)",
            self.inner.describe(),
            self.delay.as_millis()
        )
    }
}
