//! A probe's partitions as the search scores them: the ones the session's vector cache
//! holds are scored while the missing ones are read (one wave, started in a task of its own
//! before the scoring begins, so a warm query's CPU overlaps its round trip), then the ones
//! read, once cached.

use std::sync::Arc;

use super::caches::{key, VectorCache, VectorEntry};
use super::partition::Partition;
use super::segment::{read_partitions, OpenSegment};
use crate::error::{Error, Result};
use crate::io::IoStats;

/// The partitions `ids` of `open`, each passed to `score` once: cached ones first (in
/// `ids` order) while the others are read, then those (in `ids` order). With `in_order`
/// (a search whose result depends on the order, RaBitQ's running bound) every partition is
/// loaded first and scored in `ids` order. Returns how many came from the cache.
pub(crate) async fn score_probed<F>(
    open: &OpenSegment,
    ids: &[usize],
    caches: &VectorCache,
    stats: &IoStats,
    in_order: bool,
    mut score: F,
) -> Result<usize>
where
    F: FnMut(usize, &Partition) -> Result<()>,
{
    let (mut found, missing) = cached_partitions(open, ids, caches).await;
    let from_cache = ids.len() - missing.len();
    let (path, size) = (open.aux_path(), open.aux_size());
    let read = ReadTask::start(open, &missing, stats);
    if !in_order {
        for (&p, part) in ids.iter().zip(&found) {
            if let Some(part) = part {
                score(p, part)?;
            }
        }
    }
    for (p, part) in missing.iter().zip(read.finish().await?) {
        let part = Arc::new(part);
        let entry = Arc::new(VectorEntry::Partition(Arc::clone(&part)));
        caches.insert(key(&path, size, Some(*p)), entry).await;
        if in_order {
            if let Some(i) = ids.iter().position(|q| q == p) {
                found[i] = Some(part);
            }
        } else {
            score(*p, &part)?;
        }
    }
    if in_order {
        for (&p, part) in ids.iter().zip(&found) {
            let part = part
                .as_ref()
                .ok_or_else(|| Error::corrupt("internal: partition not loaded"))?;
            score(p, part)?;
        }
    }
    Ok(from_cache)
}

/// The read of a probe's missing partitions: a task of its own on a tokio runtime (its
/// requests go out while the caller scores), else read when finished; aborted if dropped.
enum ReadTask {
    /// Nothing to read.
    Nothing,
    /// Running in its own task.
    Spawned(AbortOnDrop),
    /// No runtime to spawn on: read in [`ReadTask::finish`].
    Later(OpenSegment, Vec<usize>, IoStats),
}

impl ReadTask {
    fn start(open: &OpenSegment, missing: &[usize], stats: &IoStats) -> Self {
        if missing.is_empty() {
            return Self::Nothing;
        }
        let (open, missing, stats) = (open.clone(), missing.to_vec(), stats.clone());
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                Self::Spawned(AbortOnDrop(runtime.spawn(async move {
                    Box::pin(read_partitions(&open, &missing, &stats)).await
                })))
            }
            Err(_) => Self::Later(open, missing, stats),
        }
    }

    async fn finish(self) -> Result<Vec<Partition>> {
        match self {
            Self::Nothing => Ok(Vec::new()),
            Self::Later(open, missing, stats) => {
                Box::pin(read_partitions(&open, &missing, &stats)).await
            }
            Self::Spawned(mut task) => match (&mut task.0).await {
                Ok(read) => read,
                Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                Err(e) => Err(Error::Io(Arc::new(std::io::Error::other(format!(
                    "vector partition read stopped: {e}"
                ))))),
            },
        }
    }
}

/// A task aborted when its handle is dropped (a query dropped mid-read stops its read).
struct AbortOnDrop(tokio::task::JoinHandle<Result<Vec<Partition>>>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Partitions `ids` of `open` found in the caches (`None` for the others), and the ids of
/// the others.
pub(crate) async fn cached_partitions(
    open: &OpenSegment,
    ids: &[usize],
    caches: &VectorCache,
) -> (Vec<Option<Arc<Partition>>>, Vec<usize>) {
    let (path, size) = (open.aux_path(), open.aux_size());
    let mut found: Vec<Option<Arc<Partition>>> = Vec::with_capacity(ids.len());
    for &p in ids {
        found.push(
            match caches.get(&key(&path, size, Some(p))).await.as_deref() {
                Some(VectorEntry::Partition(part)) => Some(Arc::clone(part)),
                _ => None,
            },
        );
    }
    let missing: Vec<usize> = ids
        .iter()
        .zip(&found)
        .filter(|(_, f)| f.is_none())
        .map(|(&p, _)| p)
        .collect();
    (found, missing)
}
