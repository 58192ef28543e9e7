//! Planning a read's pages: page init, read plan and value bytes of every page task, in two
//! waves (the init of pages not cached, then the values) or, when every page still
//! needing its init is small ([`LanceFileReader::with_whole_page_bytes`]), in one: those
//! pages are read whole with the other pages' values and their init is decoded from the
//! same bytes (then cached like any page init).

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;

use super::{LanceFileReader, PageTask};
use crate::error::{Error, Result};
use crate::io::IoStats;
use crate::lance::page::{PageInit, PageReadPlan};

/// A page task's init, read plan and the bytes of the plan's ranges.
pub(super) type PlannedPage = (Arc<PageInit>, PageReadPlan, Vec<Bytes>);

impl LanceFileReader {
    /// Init, plan and value bytes of every task (in task order).
    pub(super) async fn plan_pages_and_fetch(
        &self,
        tasks: &[PageTask],
        stats: &IoStats,
    ) -> Result<Vec<PlannedPage>> {
        let whole = self.whole_page_spans(tasks).await?;
        let read_whole: Vec<bool> = whole.iter().map(Option::is_some).collect();
        // Without whole pages this is the init wave; with them every init loaded here is
        // cached.
        let inits = self
            .load_page_inits_except(tasks, &read_whole, stats)
            .await?;
        let plans: Vec<Option<PageReadPlan>> = tasks
            .iter()
            .zip(&inits)
            .zip(&whole)
            .map(|((t, init), span)| match span {
                None => self.plan_of(t, init).map(Some),
                Some(_) => Ok(None),
            })
            .collect::<Result<_>>()?;
        let mut spans: Vec<Range<u64>> = whole.iter().flatten().cloned().collect();
        spans.sort_by_key(|r| (r.start, r.end));
        spans.dedup();
        let mut ranges: Vec<Range<u64>> = plans
            .iter()
            .flatten()
            .flat_map(|p| p.ranges.iter().cloned())
            .collect();
        let planned_ranges = ranges.len();
        ranges.extend(spans.iter().cloned());
        let mut fetched = self.fetch(&ranges, stats).await?;
        let span_bytes: HashMap<u64, (Range<u64>, Bytes)> = spans
            .into_iter()
            .zip(fetched.split_off(planned_ranges))
            .map(|(r, b)| (r.start, (r, b)))
            .collect();
        let mut fetched = fetched.into_iter();
        let mut out = Vec::with_capacity(tasks.len());
        for (((task, init), plan), span) in tasks.iter().zip(inits).zip(plans).zip(&whole) {
            match (plan, span) {
                (Some(plan), _) => {
                    let bytes: Vec<Bytes> = fetched.by_ref().take(plan.ranges.len()).collect();
                    out.push((init, plan, bytes));
                }
                (None, None) => return Err(Error::corrupt("internal: page plans out of step")),
                (None, Some(span)) => {
                    let (span, bytes) = span_bytes
                        .get(&span.start)
                        .ok_or_else(|| Error::corrupt("internal: whole page not fetched"))?;
                    out.push(self.plan_whole_page(task, span, bytes).await?);
                }
            }
        }
        Ok(out)
    }

    /// For each task, the byte span of its page when the page is read whole: only when
    /// every page whose init is not cached spans at most `whole_page_bytes` (one such page
    /// larger means an init wave anyway, and then every init comes in it).
    async fn whole_page_spans(&self, tasks: &[PageTask]) -> Result<Vec<Option<Range<u64>>>> {
        let mut spans = Vec::with_capacity(tasks.len());
        for t in tasks {
            let page = self.page(t)?;
            if self.whole_page_bytes == 0
                || page.layout.init_ranges().is_empty()
                || self.caches.page_init.get(&self.page_key(t)).await.is_some()
            {
                spans.push(None);
                continue;
            }
            let buffers = page.buffers.iter().filter(|b| b.start < b.end);
            let start = buffers.clone().map(|b| b.start).min().unwrap_or(0);
            let end = buffers.map(|b| b.end).max().unwrap_or(0);
            if end.saturating_sub(start) > self.whole_page_bytes {
                return Ok(vec![None; tasks.len()]);
            }
            spans.push(Some(start..end));
        }
        Ok(spans)
    }

    pub(super) fn plan_of(&self, task: &PageTask, init: &PageInit) -> Result<PageReadPlan> {
        self.page(task)
            .and_then(|p| p.layout.plan(init, &task.rows))
            .map_err(|e| self.page_error(e, task))
    }

    /// Init (decoded and cached), plan and value bytes of a page read whole as `bytes`
    /// (the page's buffers `span`).
    async fn plan_whole_page(
        &self,
        task: &PageTask,
        span: &Range<u64>,
        bytes: &Bytes,
    ) -> Result<PlannedPage> {
        let layout = &self.page(task)?.layout;
        let slice = |r: &Range<u64>| slice_of(span, bytes, r).map_err(|e| self.page_error(e, task));
        let init_bytes = layout
            .init_ranges()
            .iter()
            .map(slice)
            .collect::<Result<Vec<_>>>()?;
        let init = layout
            .decode_init(&init_bytes)
            .map_err(|e| self.page_error(e, task))?;
        let init = Arc::new(init);
        self.caches
            .page_init
            .insert(self.page_key(task), Arc::clone(&init))
            .await;
        let plan = self.plan_of(task, &init)?;
        let values = plan.ranges.iter().map(slice).collect::<Result<Vec<_>>>()?;
        Ok((init, plan, values))
    }
}

/// The bytes of `range` inside `bytes`, which hold `span` of the object.
fn slice_of(span: &Range<u64>, bytes: &Bytes, range: &Range<u64>) -> Result<Bytes> {
    if range.start >= range.end {
        return Ok(Bytes::new());
    }
    let inside = range.start >= span.start
        && range.end <= span.end
        && span.end - span.start == bytes.len() as u64;
    if !inside {
        return Err(Error::corrupt(format!(
            "page range {range:?} outside the page's buffers {span:?}"
        )));
    }
    let from = (range.start - span.start) as usize;
    Ok(bytes.slice(from..from + (range.end - range.start) as usize))
}
