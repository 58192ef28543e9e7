//! [`ConcurrencyLimitSource`]: a cap on requests in flight across every user of a source.

use std::ops::Range;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use object_store::path::Path;
use tokio::sync::Semaphore;

use crate::error::{Error, Result};
use crate::io::source::{ObjectVersion, RangeSource};

/// Lets at most `limit` requests run at once through the inner source, however many
/// fetches share it (a [`RangeFetcher`](crate::io::RangeFetcher)'s own bound is per wave).
#[derive(Debug, Clone)]
pub(crate) struct ConcurrencyLimitSource {
    inner: Arc<dyn RangeSource>,
    permits: Arc<Semaphore>,
    limit: usize,
}

impl ConcurrencyLimitSource {
    /// Wrap `inner`, allowing `limit` (at least 1) requests in flight.
    pub(crate) fn new(inner: Arc<dyn RangeSource>, limit: usize) -> Self {
        let limit = limit.max(1);
        Self {
            inner,
            permits: Arc::new(Semaphore::new(limit)),
            limit,
        }
    }

    async fn permit(&self) -> Result<tokio::sync::SemaphorePermit<'_>> {
        // The semaphore is never closed; an error here would be a bug, not bad input.
        self.permits
            .acquire()
            .await
            .map_err(|e| Error::from(std::io::Error::other(e)))
    }
}

#[async_trait]
impl RangeSource for ConcurrencyLimitSource {
    async fn get_range(
        &self,
        path: &Path,
        range: Range<u64>,
        expected: Option<&ObjectVersion>,
    ) -> Result<Bytes> {
        let _permit = self.permit().await?;
        self.inner.get_range(path, range, expected).await
    }

    async fn get_suffix(&self, path: &Path, n: u64) -> Result<(Bytes, ObjectVersion)> {
        let _permit = self.permit().await?;
        self.inner.get_suffix(path, n).await
    }

    async fn get_all(&self, path: &Path) -> Result<(Bytes, ObjectVersion)> {
        let _permit = self.permit().await?;
        self.inner.get_all(path).await
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
            "{} (at most {} in flight)",
            self.inner.describe(),
            self.limit
        )
    }
}

/// A test source: objects whose byte `i` is `i % 251`, of any size; it tracks the most
/// requests in flight, and each request yields a few times so concurrent ones overlap.
#[cfg(test)]
pub(crate) mod probe {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts requests in flight and their peak.
    #[derive(Debug, Default)]
    pub(crate) struct Probe {
        in_flight: AtomicUsize,
        /// Most requests in flight at once.
        pub(crate) peak: AtomicUsize,
    }

    #[async_trait]
    impl RangeSource for Probe {
        async fn get_range(
            &self,
            _path: &Path,
            range: Range<u64>,
            _expected: Option<&ObjectVersion>,
        ) -> Result<Bytes> {
            let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            self.peak.fetch_max(now, Ordering::SeqCst);
            for _ in 0..5 {
                tokio::task::yield_now().await;
            }
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            Ok(range.map(|i| (i % 251) as u8).collect())
        }
        async fn get_suffix(&self, _path: &Path, _n: u64) -> Result<(Bytes, ObjectVersion)> {
            Err(crate::error::Error::unsupported(
                "the probe serves only ranged reads",
            ))
        }
        async fn get_all(&self, _path: &Path) -> Result<(Bytes, ObjectVersion)> {
            Err(crate::error::Error::unsupported(
                "the probe serves only ranged reads",
            ))
        }
        fn coalesce_gap(&self) -> u64 {
            0
        }
        fn describe(&self) -> String {
            "probe".into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::probe::Probe;
    use super::*;
    use crate::io::fetch::{FetchOptions, RangeFetcher, ReadRequest};
    use crate::io::stats::IoStats;
    use std::sync::atomic::Ordering;

    async fn run_three_fetches(source: Arc<dyn RangeSource>) {
        let f = RangeFetcher::new(
            source,
            FetchOptions {
                max_concurrency: 8,
                ..Default::default()
            },
        );
        let reqs: Vec<ReadRequest> = (0..16u64)
            .map(|i| ReadRequest::new(Path::from("p"), i * 10..i * 10 + 5))
            .collect();
        let stats = IoStats::new();
        let (a, b, c) = tokio::join!(
            f.fetch(&reqs, &stats),
            f.fetch(&reqs, &stats),
            f.fetch(&reqs, &stats)
        );
        assert!(a.is_ok() && b.is_ok() && c.is_ok());
        assert_eq!(stats.snapshot().requests, 48);
    }

    #[tokio::test]
    async fn caps_requests_across_concurrent_fetches() {
        let unlimited = Arc::new(Probe::default());
        run_three_fetches(Arc::<Probe>::clone(&unlimited)).await;
        assert!(
            unlimited.peak.load(Ordering::SeqCst) > 3,
            "without the cap requests overlap"
        );

        let probe = Arc::new(Probe::default());
        run_three_fetches(Arc::new(ConcurrencyLimitSource::new(
            Arc::<Probe>::clone(&probe),
            3,
        )))
        .await;
        assert_eq!(probe.peak.load(Ordering::SeqCst), 3);
    }
}
