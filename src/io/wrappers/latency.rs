//! [`LatencySource`]: a fixed delay per request around any [`RangeSource`].

use std::ops::Range;
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
}

impl LatencySource {
    /// Wrap `inner`, adding `delay` to every request.
    pub(crate) fn new(inner: Arc<dyn RangeSource>, delay: Duration) -> Self {
        Self { inner, delay }
    }

    async fn wait(&self) {
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
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
        self.wait().await;
        self.inner.get_range(path, range, expected).await
    }

    async fn get_suffix(&self, path: &Path, n: u64) -> Result<(Bytes, ObjectVersion)> {
        self.wait().await;
        self.inner.get_suffix(path, n).await
    }

    async fn get_all(&self, path: &Path) -> Result<(Bytes, ObjectVersion)> {
        self.wait().await;
        self.inner.get_all(path).await
    }

    fn coalesce_gap(&self) -> u64 {
        self.inner.coalesce_gap()
    }

    fn retry_policy(&self) -> Option<crate::io::retry::RetryPolicy> {
        self.inner.retry_policy()
    }

    fn describe(&self) -> String {
        format!(
            "{} (+{} ms/request)",
            self.inner.describe(),
            self.delay.as_millis()
        )
    }
}
