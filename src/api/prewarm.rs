//! [`Prewarm`]: load what later queries need into a dataset's session caches (and disk
//! tier) ahead of time.

use std::time::Instant;

use super::dataset::Dataset;
use crate::error::Result;
use crate::index::prewarm::{prewarm, PrewarmPlan};
use crate::io::IoStatsSnapshot;

/// Prewarm a [`Dataset`]: its index lookups (a vector index: its centroids and codebook,
/// and its partitions while they fit the session's vector cache), optionally every index
/// page and the page inits of named columns, into the session's caches and disk tier. Built by
/// [`Dataset::prewarm`].
///
/// ```
/// # #[tokio::main] async fn main() -> lakeseek::Result<()> {
/// use lakeseek::{Dataset, IoStats};
///
/// let dataset = Dataset::builder(lakeseek::sample::DATASET_URL)
///     .object_store(lakeseek::sample::store().await?)
///     .open()
///     .await?;
/// let report = dataset
///     .prewarm()
///     .index("key_idx")
///     .all_index_pages(true)
///     .column("detections")
///     .run()
///     .await?;
/// assert_eq!(report.indices, vec!["key_idx".to_string()]);
/// assert!(report.stats.requests > 0);
/// // A lookup on the prewarmed index now needs no request.
/// let stats = IoStats::new();
/// let rows = dataset.with_stats(&stats).filter("key = 'cam06-029417'").await?;
/// assert_eq!((rows.len(), stats.snapshot().requests), (1, 0));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a prewarm does nothing until `run` is awaited"]
pub struct Prewarm<'a> {
    dataset: &'a Dataset,
    plan: PrewarmPlan,
}

/// What a [`Prewarm`] loaded and what it cost.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct PrewarmReport {
    /// Names of the indices loaded.
    pub indices: Vec<String>,
    /// Index segments loaded.
    pub segments: usize,
    /// BTree pages now in the page cache (0 unless all index pages were asked for).
    pub index_pages: usize,
    /// Pages of the named columns whose page inits are now cached.
    pub column_pages: usize,
    /// Decoded vector index partitions now cached (vector indices: their centroids and
    /// codebook always, then partitions while they fit the session's vector cache).
    pub vector_partitions: usize,
    /// Requests, bytes and round trips the prewarm took (also counted into the dataset's
    /// stats handle).
    pub stats: IoStatsSnapshot,
    /// Wall time in milliseconds.
    pub millis: u64,
}

impl<'a> Prewarm<'a> {
    pub(crate) fn new(dataset: &'a Dataset) -> Self {
        Self {
            dataset,
            plan: PrewarmPlan::default(),
        }
    }

    /// Prewarm the index `name` (repeatable; default: every index of the version). An
    /// unknown name fails the run with
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument).
    pub fn index(mut self, name: &str) -> Self {
        self.plan.indices.push(name.to_string());
        self
    }

    /// Also load every page of the indices (BTree pages into the page cache; with a disk
    /// tier, every index file whole into it), not only their lookups.
    pub fn all_index_pages(mut self, yes: bool) -> Self {
        self.plan.all_index_pages = yes;
        self
    }

    /// Also load the page inits of the top-level column `name` in every data file
    /// (repeatable).
    pub fn column(mut self, name: &str) -> Self {
        self.plan.columns.push(name.to_string());
        self
    }

    /// Load everything asked for.
    pub async fn run(self) -> Result<PrewarmReport> {
        let stats = self.dataset.stats_handle();
        let before = stats.snapshot();
        let started = Instant::now();
        let done = prewarm(self.dataset.version_handle(), &self.plan, stats)
            .await
            .map_err(|e| self.dataset.named(e))?;
        Ok(PrewarmReport {
            indices: done.indices,
            segments: done.segments,
            index_pages: done.index_pages,
            column_pages: done.column_pages,
            vector_partitions: done.vector_partitions,
            stats: stats.snapshot().since(&before),
            millis: started.elapsed().as_millis() as u64,
        })
    }
}
