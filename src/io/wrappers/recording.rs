//! [`RecordingSource`]: remembers every read for read-plan assertions.

use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use bytes::Bytes;
use object_store::path::Path;

use crate::error::Result;
use crate::io::source::{ObjectVersion, RangeSource};

/// What kind of read was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReadKind {
    /// `get_range` of this byte range.
    Range(Range<u64>),
    /// `get_suffix` of the last this-many bytes.
    Suffix(u64),
    /// `get_all`.
    Whole,
}

/// One read seen by a [`RecordingSource`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RecordedRead {
    /// Object path.
    pub path: String,
    /// What was asked for.
    pub kind: ReadKind,
    /// Absolute byte range of the object that was returned: the range itself for range
    /// reads; for suffix and whole reads known only once the response (with the object size)
    /// arrived. `None` while in flight or when the read failed.
    pub bytes: Option<Range<u64>>,
}

/// Records every request made through it, in the order they were issued.
///
/// Placed under a [`RangeFetcher`](crate::io::RangeFetcher) it sees the *merged* ranges the
/// fetcher sends (gap bytes included), i.e. exactly what was downloaded. That is what a
/// read-plan assertion wants: `!rec.touched("f.lance", page3)` means no byte of page 3 was
/// fetched, not even as coalescing filler.
#[derive(Debug)]
pub(crate) struct RecordingSource {
    inner: Arc<dyn RangeSource>,
    log: Mutex<Vec<RecordedRead>>,
}

impl RecordingSource {
    /// Wrap `inner`.
    pub(crate) fn new(inner: Arc<dyn RangeSource>) -> Self {
        Self {
            inner,
            log: Mutex::new(Vec::new()),
        }
    }

    fn log(&self) -> MutexGuard<'_, Vec<RecordedRead>> {
        // A panic while holding the lock cannot leave the log half-written; keep going.
        self.log
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn start(&self, path: &Path, kind: ReadKind) -> usize {
        let mut log = self.log();
        log.push(RecordedRead {
            path: path.to_string(),
            kind,
            bytes: None,
        });
        log.len() - 1
    }

    fn finish(&self, index: usize, bytes: Range<u64>) {
        if let Some(entry) = self.log().get_mut(index) {
            entry.bytes = Some(bytes);
        }
    }

    /// All reads so far.
    pub(crate) fn reads(&self) -> Vec<RecordedRead> {
        self.log().clone()
    }

    /// All reads so far, clearing the log.
    pub(crate) fn take(&self) -> Vec<RecordedRead> {
        std::mem::take(&mut *self.log())
    }

    /// Forget all reads.
    pub(crate) fn clear(&self) {
        self.log().clear();
    }

    /// Whether nothing was read yet.
    pub(crate) fn is_empty(&self) -> bool {
        self.log().is_empty()
    }

    /// Absolute byte ranges returned for `path`, in issue order (failed reads left out).
    pub(crate) fn ranges_of(&self, path: &str) -> Vec<Range<u64>> {
        self.log()
            .iter()
            .filter(|r| r.path == path)
            .filter_map(|r| r.bytes.clone())
            .collect()
    }

    /// Whether any returned byte of `path` lies in `range`.
    pub(crate) fn touched(&self, path: &str, range: Range<u64>) -> bool {
        self.ranges_of(path)
            .iter()
            .any(|r| r.start < range.end && range.start < r.end)
    }

    /// Total bytes returned so far, over all paths.
    pub(crate) fn total_bytes(&self) -> u64 {
        self.log()
            .iter()
            .filter_map(|r| r.bytes.as_ref())
            .map(|r| r.end - r.start)
            .sum()
    }
}

#[async_trait]
impl RangeSource for RecordingSource {
    async fn get_range(
        &self,
        path: &Path,
        range: Range<u64>,
        expected: Option<&ObjectVersion>,
    ) -> Result<Bytes> {
        let index = self.start(path, ReadKind::Range(range.clone()));
        let bytes = self.inner.get_range(path, range.clone(), expected).await?;
        self.finish(index, range.start..range.start + bytes.len() as u64);
        Ok(bytes)
    }

    async fn get_suffix(&self, path: &Path, n: u64) -> Result<(Bytes, ObjectVersion)> {
        let index = self.start(path, ReadKind::Suffix(n));
        let (bytes, version) = self.inner.get_suffix(path, n).await?;
        self.finish(
            index,
            version.size.saturating_sub(bytes.len() as u64)..version.size,
        );
        Ok((bytes, version))
    }

    async fn get_all(&self, path: &Path) -> Result<(Bytes, ObjectVersion)> {
        let index = self.start(path, ReadKind::Whole);
        let (bytes, version) = self.inner.get_all(path).await?;
        self.finish(index, 0..bytes.len() as u64);
        Ok((bytes, version))
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
        self.inner.describe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::fetch::{FetchOptions, RangeFetcher, ReadRequest};
    use crate::io::source::ObjectStoreSource;
    use crate::io::stats::IoStats;
    use crate::io::wrappers::LatencySource;
    use object_store::memory::InMemory;
    use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
    use std::time::Duration;

    #[tokio::test]
    async fn records_merged_reads_and_answers_touched() {
        let store = Arc::new(InMemory::new());
        store
            .put(&Path::from("f"), PutPayload::from(vec![7u8; 1000]))
            .await
            .unwrap();
        let base = Arc::new(ObjectStoreSource::new(
            store as Arc<dyn ObjectStore>,
            0,
            "memory",
        ));
        let slow = Arc::new(LatencySource::new(base, Duration::from_millis(1)));
        let rec = Arc::new(RecordingSource::new(slow));
        let fetcher = RangeFetcher::new(
            Arc::<RecordingSource>::clone(&rec),
            FetchOptions {
                coalesce_gap: Some(10),
                ..Default::default()
            },
        );
        let stats = IoStats::new();
        let reqs = [
            ReadRequest::new(Path::from("f"), 0..100),
            ReadRequest::new(Path::from("f"), 105..200),
            ReadRequest::new(Path::from("f"), 500..600),
        ];
        fetcher.fetch(&reqs, &stats).await.unwrap();
        fetcher.tail(&Path::from("f"), 50, &stats).await.unwrap();
        assert!(fetcher
            .tail(&Path::from("missing"), 50, &stats)
            .await
            .is_err());
        let mut ranges = rec.ranges_of("f");
        ranges.sort_by_key(|r| r.start);
        assert_eq!(ranges, vec![0..200, 500..600, 950..1000]);
        assert!(
            rec.touched("f", 100..105),
            "coalescing filler counts as read"
        );
        assert!(!rec.touched("f", 200..500));
        assert!(!rec.touched("f", 600..950));
        assert_eq!(rec.total_bytes(), 200 + 100 + 50);
        let all = rec.take();
        assert_eq!(all.len(), 4);
        assert_eq!(
            all[3],
            RecordedRead {
                path: "missing".into(),
                kind: ReadKind::Suffix(50),
                bytes: None
            }
        );
        assert!(rec.is_empty());
    }
}
