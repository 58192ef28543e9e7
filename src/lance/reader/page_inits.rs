//! Page init of a read: the cached ones, the rest decoded from one wave and cached.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;

use super::{LanceFileReader, PageTask, SharedPlans};
use crate::error::{Error, Result};
use crate::io::IoStats;
use crate::lance::page::PageInit;

impl LanceFileReader {
    /// Decoded page init of each `(column, page)`: from the cache, the rest read in one wave
    /// (e.g. to report the structural plans of sparse pages).
    pub(crate) async fn page_inits(
        &self,
        pages: &[(usize, usize)],
        stats: &IoStats,
    ) -> Result<Vec<Arc<PageInit>>> {
        let tasks = pages
            .iter()
            .map(|&(column, page)| {
                let task = PageTask {
                    output: 0,
                    leaf: 0,
                    column,
                    page,
                    rows: Vec::new(),
                };
                self.page(&task).map(|_| task).map_err(|_| {
                    Error::InvalidArgument(format!("no page {page} in column {column}"))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        self.load_page_inits(&tasks, stats).await
    }

    /// Page init for every task: cached ones from the cache, the rest in one wave.
    pub(super) async fn load_page_inits(
        &self,
        tasks: &[PageTask],
        stats: &IoStats,
    ) -> Result<Vec<Arc<PageInit>>> {
        let skip = vec![false; tasks.len()];
        self.load_page_inits_except(tasks, &skip, stats).await
    }

    /// [`Self::load_page_inits`] of the tasks not marked in `skip` (those get
    /// [`PageInit::None`]).
    pub(super) async fn load_page_inits_except(
        &self,
        tasks: &[PageTask],
        skip: &[bool],
        stats: &IoStats,
    ) -> Result<Vec<Arc<PageInit>>> {
        let mut inits: Vec<Option<Arc<PageInit>>> = Vec::with_capacity(tasks.len());
        let mut missing: Vec<usize> = Vec::new();
        let mut ranges: Vec<Range<u64>> = Vec::new();
        let mut seen: std::collections::HashSet<(usize, usize)> = std::collections::HashSet::new();
        for (i, t) in tasks.iter().enumerate() {
            if skip.get(i).copied().unwrap_or(false) {
                inits.push(Some(Arc::new(PageInit::None)));
                continue;
            }
            let layout = &self.page(t)?.layout;
            let needed = layout.init_ranges();
            if needed.is_empty() {
                // Init from metadata alone (e.g. sparse structure without payloads): cheap,
                // not cached.
                let init = layout.decode_init(&[]).map_err(|e| self.page_error(e, t))?;
                inits.push(Some(Arc::new(init)));
                continue;
            }
            match self.caches.page_init.get(&self.page_key(t)).await {
                Some(init) => inits.push(Some(init)),
                None => {
                    inits.push(None);
                    if seen.insert((t.column, t.page)) {
                        missing.push(i);
                        ranges.extend(needed);
                    }
                }
            }
        }
        if !missing.is_empty() {
            let mut fetched = self.fetch(&ranges, stats).await?.into_iter();
            let mut decoded: HashMap<(usize, usize), Arc<PageInit>> = HashMap::new();
            let mut plans = SharedPlans::default();
            for &i in &missing {
                let t = &tasks[i];
                let layout = &self.page(t)?.layout;
                let bytes: Vec<Bytes> = fetched.by_ref().take(layout.init_ranges().len()).collect();
                let mut init = layout
                    .decode_init(&bytes)
                    .map_err(|e| self.page_error(e, t))?;
                if let PageInit::Sparse(sparse) = &mut init {
                    plans.share(&mut sparse.plan);
                }
                let init = Arc::new(init);
                self.caches
                    .page_init
                    .insert(self.page_key(t), Arc::clone(&init))
                    .await;
                decoded.insert((t.column, t.page), init);
            }
            // The same page may serve several outputs (a field asked for twice).
            for (t, slot) in tasks.iter().zip(inits.iter_mut()) {
                if slot.is_none() {
                    *slot = decoded.get(&(t.column, t.page)).cloned();
                }
            }
        }
        tasks
            .iter()
            .zip(inits)
            .map(|(t, init)| {
                init.ok_or_else(|| {
                    Error::corrupt(format!(
                        "internal: page init of column {} page {} missing",
                        t.column, t.page
                    ))
                })
            })
            .collect()
    }
}
