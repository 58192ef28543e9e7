//! The LABEL_LIST index behind the filter engine's [`IndexKind`] interface:
//! `array_has_any` / `array_has_all` / `array_contains` exactly, NULL for null lists.

use async_trait::async_trait;
use roaring::{RoaringBitmap, RoaringTreemap};

use super::{answer_label_list, ListTest, LABEL_LIST_DETAILS_TYPES};
use crate::error::{Error, Result};
use crate::index::bitmap_file::exec::{
    is_lookup_cached, lookups_json, open_bitmap_segments, prefetch_page_inits, BitmapFile,
};
use crate::index::bitmap_file::{read_json, ReadSummary};
use crate::index::key::Key;
use crate::index::kind::segments::{
    check_segments, covered_all_cached, does_not_answer, has_type, refuse_segment, restrict,
};
use crate::index::kind::{
    rows_with_value, Exactness, IndexKind, IndexLeaf, IndexQuery, IndexSegments, LeafAnswer,
    ListHasMode, PlannedLeaf, Want,
};
use crate::io::IoStats;
use crate::lance::dataset::{DatasetVersion, IndexSegment};

/// The LABEL_LIST kind.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LabelListKind;

#[derive(Debug, Clone)]
struct PlannedLabelList {
    name: String,
    test: ListTest,
    values: Vec<Key>,
    want: Want,
    segments: Vec<(BitmapFile, RoaringBitmap)>,
    coverage: RoaringBitmap,
}

#[async_trait]
impl IndexKind for LabelListKind {
    fn name(&self) -> &'static str {
        "label_list"
    }

    fn reads(&self, segment: &IndexSegment) -> bool {
        has_type(segment, &LABEL_LIST_DETAILS_TYPES)
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
        match &leaf.query {
            IndexQuery::ListHas {
                has_null: false, ..
            } => {}
            IndexQuery::ListHas { .. } => {
                return Err(format!(
                    "a label list index does not answer NULL values in {}",
                    leaf.text
                ))
            }
            _ => return Err(does_not_answer("a label list index", leaf)),
        }
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
        let IndexQuery::ListHas { mode, values, .. } = &leaf.query else {
            return Err(Error::InvalidArgument(does_not_answer(
                "a label list index",
                leaf,
            )));
        };
        let (segments, coverage) = open_bitmap_segments(dataset, index, stats).await?;
        Ok(Box::new(PlannedLabelList {
            name: index.name.clone(),
            test: match mode {
                ListHasMode::Any => ListTest::Any,
                ListHasMode::All => ListTest::All,
            },
            values: values.clone(),
            want,
            segments,
            coverage,
        }))
    }
}

#[async_trait]
impl PlannedLeaf for PlannedLabelList {
    fn coverage(&self) -> &RoaringBitmap {
        &self.coverage
    }

    fn exactness(&self) -> Exactness {
        Exactness::Exact
    }

    fn explain(&self) -> serde_json::Value {
        serde_json::json!({
            "kind": "label_list",
            "index": self.name,
            "answer": "exact",
            "test": if self.test == ListTest::Any { "any" } else { "all" },
            "values": self.values.len(),
            "lookups": lookups_json(&self.segments),
        })
    }

    async fn answer(&self, dataset: &DatasetVersion, stats: &IoStats) -> Result<LeafAnswer> {
        let want_nulls = self.want == Want::False;
        let answers = self.segments.iter().map(|(file, covered)| async move {
            prefetch_page_inits(file, stats).await?;
            answer_label_list(dataset, file, self.test, &self.values, want_nulls, stats)
                .await
                .map(|a| (a, covered))
        });
        let answers = futures::future::try_join_all(answers).await?;
        let mut sure = RoaringTreemap::new();
        let mut read = ReadSummary::default();
        for (a, covered) in answers {
            let t = restrict(a.true_rows, covered);
            let n = restrict(a.null_rows, covered);
            sure |= rows_with_value(dataset, covered, self.want, t, &n);
            read.add(&a.read);
        }
        Ok(LeafAnswer {
            sure,
            maybe: RoaringTreemap::new(),
            read: read_json(&read),
        })
    }
}
