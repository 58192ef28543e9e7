//! The BITMAP index behind the filter engine's [`IndexKind`] interface: exact TRUE / NULL
//! rows of a single-column predicate tree, from only the matching keys' bitmaps.

use async_trait::async_trait;
use roaring::{RoaringBitmap, RoaringTreemap};

use super::{answer_bitmap_predicate, BITMAP_DETAILS_TYPES};
use crate::error::Result;
use crate::index::bitmap_file::exec::{
    is_lookup_cached, load_all_keys_and_row_sets, lookups_json, open_bitmap_file,
    open_bitmap_segments, prefetch_page_inits, BitmapFile,
};
use crate::index::bitmap_file::{read_json, ReadSummary};
use crate::index::kind::segments::{
    check_segments, covered_all_cached, has_type, planned_scalar, refuse_segment, restrict,
    scalar_predicate,
};
use crate::index::kind::{
    fragment_rows, rows_with_value, Exactness, IndexKind, IndexLeaf, IndexSegments, LeafAnswer,
    PlannedLeaf, PrewarmCounts, Want,
};
use crate::index::predicate::leaves;
use crate::index::predicate::Predicate;
use crate::io::IoStats;
use crate::lance::dataset::{DatasetVersion, IndexSegment};

/// The BITMAP kind.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BitmapKind;

/// A leaf planned on a BITMAP index.
#[derive(Debug, Clone)]
struct PlannedBitmap {
    name: String,
    predicate: Predicate,
    want: Want,
    segments: Vec<(BitmapFile, RoaringBitmap)>,
    coverage: RoaringBitmap,
}

#[async_trait]
impl IndexKind for BitmapKind {
    fn name(&self) -> &'static str {
        "bitmap"
    }

    fn reads(&self, segment: &IndexSegment) -> bool {
        has_type(segment, &BITMAP_DETAILS_TYPES)
    }

    async fn is_cached(&self, dataset: &DatasetVersion, index: &IndexSegments) -> bool {
        covered_all_cached(dataset, index, |s| is_lookup_cached(dataset, s)).await
    }

    fn check(
        &self,
        dataset: &DatasetVersion,
        index: &IndexSegments,
        leaf: &IndexLeaf,
    ) -> std::result::Result<Exactness, String> {
        scalar_predicate("a bitmap index", leaf)?;
        check_segments(dataset, index, Exactness::Exact, refuse_segment)
    }

    async fn plan(
        &self,
        dataset: &DatasetVersion,
        index: &IndexSegments,
        leaf: &IndexLeaf,
        want: Want,
        stats: &IoStats,
    ) -> Result<Box<dyn PlannedLeaf>> {
        let predicate = planned_scalar("a bitmap index", leaf)?;
        let (segments, coverage) = open_bitmap_segments(dataset, index, stats).await?;
        Ok(Box::new(PlannedBitmap {
            name: index.name.clone(),
            predicate: predicate.clone(),
            want,
            segments,
            coverage,
        }))
    }

    /// The lookup's metadata and page inits; with `all_pages`, every key and row set into
    /// the bitmap caches (no BTree page is counted).
    async fn prewarm(
        &self,
        dataset: &DatasetVersion,
        segment: &IndexSegment,
        all_pages: bool,
        stats: &IoStats,
    ) -> Result<PrewarmCounts> {
        let file = open_bitmap_file(dataset, segment, stats).await?;
        prefetch_page_inits(&file, stats).await?;
        if all_pages {
            load_all_keys_and_row_sets(dataset, &file, stats).await?;
        }
        Ok(PrewarmCounts::default())
    }
}

#[async_trait]
impl PlannedLeaf for PlannedBitmap {
    fn coverage(&self) -> &RoaringBitmap {
        &self.coverage
    }

    fn exactness(&self) -> Exactness {
        Exactness::Exact
    }

    fn explain(&self) -> serde_json::Value {
        serde_json::json!({
            "kind": "bitmap",
            "index": self.name,
            "answer": "exact",
            "tests": leaves(&self.predicate).len(),
            "lookups": lookups_json(&self.segments),
        })
    }

    async fn answer(&self, dataset: &DatasetVersion, stats: &IoStats) -> Result<LeafAnswer> {
        let want_nulls = self.want == Want::False;
        let answers = self.segments.iter().map(|(file, covered)| async move {
            prefetch_page_inits(file, stats).await?;
            let universe = fragment_rows(dataset, covered);
            answer_bitmap_predicate(dataset, file, &self.predicate, &universe, want_nulls, stats)
                .await
                .map(|(t, n, r)| (restrict(t, covered), restrict(n, covered), r, covered))
        });
        let answers = futures::future::try_join_all(answers).await?;
        let mut sure = RoaringTreemap::new();
        let mut read = ReadSummary::default();
        for (t, n, r, covered) in answers {
            sure |= rows_with_value(dataset, covered, self.want, t, &n);
            read.add(&r);
        }
        Ok(LeafAnswer {
            sure,
            maybe: RoaringTreemap::new(),
            read: read_json(&read),
        })
    }
}
