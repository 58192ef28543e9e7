//! The init wave of a few-row read ([`LanceFileReader::read_few_rows`]): cached page inits
//! as always; for the other pages the init or, for full-zip pages, only the repetition
//! index entries of the rows — and the guessed places of the values, all in one wave
//! ([`crate::lance::page::few_rows`] plans what; this drives the fetches).

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;

use super::whole_pages::PlannedPage;
use super::{LanceFileReader, PageTask};
use crate::error::{Error, Result};
use crate::io::IoStats;
use crate::lance::page::few_rows::{from_guesses, FewRowsPlan};
use crate::lance::page::{PageInit, PageReadPlan};

/// What the init wave of a few-row read gives: the init of every task
/// ([`PageInit::None`] for those planned from entries), its value plan, and the fetched
/// guesses with their ranges.
pub(super) type FewRowsWave = (
    Vec<Arc<PageInit>>,
    Vec<PageReadPlan>,
    Vec<(Range<u64>, Bytes)>,
);

impl LanceFileReader {
    /// Wave 1 of a few-row read: page inits (cached, else read) of the tasks read the
    /// ordinary way, repetition index entries of the others, and every guess, the reads
    /// all at once; then each task's value plan.
    async fn plan_few_rows(&self, tasks: &[PageTask], stats: &IoStats) -> Result<FewRowsWave> {
        let mut few: Vec<Option<FewRowsPlan>> = Vec::with_capacity(tasks.len());
        for t in tasks {
            let layout = &self.page(t)?.layout;
            let cached = self.caches.page_init.get(&self.page_key(t)).await.is_some();
            few.push((!cached).then(|| layout.few_rows_plan(&t.rows)).flatten());
        }
        let skip: Vec<bool> = few
            .iter()
            .map(|f| f.as_ref().is_some_and(|f| f.entries.is_some()))
            .collect();
        let entry_ranges: Vec<Range<u64>> = few
            .iter()
            .flatten()
            .flat_map(|f| f.entries.iter().flatten().cloned())
            .collect();
        let guess_ranges: Vec<Range<u64>> = few
            .iter()
            .flatten()
            .flat_map(|f| f.guesses.iter().cloned())
            .collect();
        let extra: Vec<Range<u64>> = entry_ranges.iter().chain(&guess_ranges).cloned().collect();
        // Overlapping requests: one round trip.
        let (inits, mut fetched) = futures::try_join!(
            self.load_page_inits_except(tasks, &skip, stats),
            self.fetch(&extra, stats)
        )?;
        let guesses: Vec<(Range<u64>, Bytes)> = guess_ranges
            .into_iter()
            .zip(fetched.split_off(entry_ranges.len()))
            .collect();
        let mut entries = fetched.into_iter();
        let plans = tasks
            .iter()
            .zip(&inits)
            .zip(&few)
            .map(|((t, init), f)| {
                let layout = &self.page(t)?.layout;
                let planned = match f.as_ref().and_then(|f| f.entries.as_ref()) {
                    Some(ranges) => {
                        let bytes: Vec<Bytes> = entries.by_ref().take(ranges.len()).collect();
                        layout.plan_from_entries(&t.rows, &bytes)
                    }
                    None => layout.plan(init, &t.rows),
                };
                planned.map_err(|e| self.page_error(e, t))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok((inits, plans, guesses))
    }

    /// Init, plan and value bytes of every task of a few-row read (in task order): the
    /// init wave with the guesses ([`Self::plan_few_rows`]), then the values no guess holds.
    pub(super) async fn plan_few_rows_and_fetch(
        &self,
        tasks: &[PageTask],
        stats: &IoStats,
    ) -> Result<Vec<PlannedPage>> {
        let (inits, plans, guesses) = self.plan_few_rows(tasks, stats).await?;
        let ranges: Vec<Range<u64>> = plans
            .iter()
            .flat_map(|p| p.ranges.iter().cloned())
            .collect();
        let mut fetched = self
            .fetch_with_guesses(&ranges, &guesses, stats)
            .await?
            .into_iter();
        Ok(inits
            .into_iter()
            .zip(plans)
            .map(|(init, plan)| {
                let bytes: Vec<Bytes> = fetched.by_ref().take(plan.ranges.len()).collect();
                (init, plan, bytes)
            })
            .collect())
    }

    /// Fetch `ranges` in one wave, those a fetched guess holds served from it.
    async fn fetch_with_guesses(
        &self,
        ranges: &[Range<u64>],
        guesses: &[(Range<u64>, Bytes)],
        stats: &IoStats,
    ) -> Result<Vec<Bytes>> {
        if guesses.is_empty() {
            return self.fetch(ranges, stats).await;
        }
        let served: Vec<Option<Bytes>> = ranges.iter().map(|r| from_guesses(r, guesses)).collect();
        let missing: Vec<Range<u64>> = ranges
            .iter()
            .zip(&served)
            .filter(|(_, s)| s.is_none())
            .map(|(r, _)| r.clone())
            .collect();
        let mut fetched = self.fetch(&missing, stats).await?.into_iter();
        served
            .into_iter()
            .map(|s| match s {
                Some(bytes) => Ok(bytes),
                None => fetched
                    .next()
                    .ok_or_else(|| Error::corrupt("internal: fetch returned too few ranges")),
            })
            .collect()
    }
}
