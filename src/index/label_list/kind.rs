//! The LABEL_LIST index behind the filter engine's [`IndexKind`] interface:
//! `array_has_any` / `array_has_all` / `array_contains` exactly, NULL for null lists.
//!
//! Lookups written before lance recorded the null lists (no `lance:label_list_nulls`
//! buffer: pylance <= 0.39) cannot tell a FALSE row from a NULL one (a null list): their
//! TRUE rows are exact, but under a NOT the rows they do not list are only candidates,
//! rechecked on data (pylance 14.0.2 itself warns "NOT filters may be incorrect on nullable
//! lists" and returns the null lists there; its scan does not).

use async_trait::async_trait;
use roaring::{RoaringBitmap, RoaringTreemap};

use super::{answer_label_list, ListTest, LABEL_LIST_DETAILS_TYPES};
use crate::error::{Error, Result};
use crate::index::bitmap_file::exec::{
    buffer_index, is_lookup_cached, lookups_json, open_bitmap_segments, prefetch_page_inits,
    BitmapFile, LABEL_LIST_NULLS_KEY,
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
    /// The FALSE rows are wanted and some lookup does not record its null lists: those
    /// segments' non-TRUE rows are candidates.
    unknown_nulls: bool,
}

/// Whether `file` records the rows of null lists (label list version 1).
fn records_null_lists(file: &BitmapFile) -> Result<bool> {
    Ok(buffer_index(&file.reader, LABEL_LIST_NULLS_KEY)?.is_some())
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
        let mut unknown_nulls = false;
        if want == Want::False {
            for (file, _) in &segments {
                unknown_nulls |= !records_null_lists(file)?;
            }
        }
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
            unknown_nulls,
        }))
    }
}

#[async_trait]
impl PlannedLeaf for PlannedLabelList {
    fn coverage(&self) -> &RoaringBitmap {
        &self.coverage
    }

    fn exactness(&self) -> Exactness {
        if self.unknown_nulls {
            Exactness::Candidates
        } else {
            Exactness::Exact
        }
    }

    fn explain(&self) -> serde_json::Value {
        let mut out = serde_json::json!({
            "kind": "label_list",
            "index": self.name,
            "answer": if self.unknown_nulls { "candidates" } else { "exact" },
            "test": if self.test == ListTest::Any { "any" } else { "all" },
            "values": self.values.len(),
            "lookups": lookups_json(&self.segments),
        });
        if self.unknown_nulls {
            out["recheck"] = serde_json::json!(
                "an old label list lookup (no null-list rows: pylance <= 0.39) cannot tell \
                 FALSE from NULL under NOT: the rows it does not list are rechecked on data"
            );
        }
        out
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
        let mut maybe = RoaringTreemap::new();
        let mut read = ReadSummary::default();
        for ((a, covered), (file, _)) in answers.into_iter().zip(&self.segments) {
            let t = restrict(a.true_rows, covered);
            let n = restrict(a.null_rows, covered);
            let rows = rows_with_value(dataset, covered, self.want, t, &n);
            if self.want == Want::False && !records_null_lists(file)? {
                maybe |= rows;
            } else {
                sure |= rows;
            }
            read.add(&a.read);
        }
        Ok(LeafAnswer {
            sure,
            maybe,
            read: read_json(&read),
        })
    }
}
