//! The BITMAP index behind the filter engine's [`IndexKind`] interface: exact TRUE / NULL
//! rows of a single-column predicate tree, from only the matching keys' bitmaps.

use async_trait::async_trait;
use roaring::{RoaringBitmap, RoaringTreemap};

use super::exec::{is_lookup_cached, open_bitmap_file, prefetch_page_inits, BitmapFile};
use super::{answer_bitmap_predicate, leaves, ReadSummary, BITMAP_DETAILS_TYPES};
use crate::error::{Error, Result};
use crate::index::filter::kind::{
    fragment_rows, rows_with_value, Exactness, IndexKind, IndexLeaf, IndexQuery, IndexSegments,
    LeafAnswer, PlannedLeaf, Want,
};
use crate::index::predicate::Predicate;
use crate::io::IoStats;
use crate::lance::dataset::{Dataset, IndexSegment};

/// The BITMAP kind.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BitmapKind;

/// Whether `segment`'s details type is one of `types`.
pub(crate) fn has_type(segment: &IndexSegment, types: &[&str]) -> bool {
    let name = segment.type_name().unwrap_or("");
    types.iter().any(|t| t.eq_ignore_ascii_case(name))
}

/// The current fragments a segment covers.
pub(crate) fn coverage_of(dataset: &Dataset, s: &IndexSegment) -> RoaringBitmap {
    let current = dataset.manifest().fragment_ids();
    s.fragment_bitmap
        .as_ref()
        .map(|b| b & &current)
        .unwrap_or_default()
}

/// Why the segments of `index` cannot answer on `dataset` (no fragment bitmap, stable row
/// ids), if they cannot.
pub(crate) fn refuse_segments(dataset: &Dataset, index: &IndexSegments) -> Option<String> {
    let reasons: Vec<String> = index
        .segments
        .iter()
        .filter_map(|s| {
            if s.fragment_bitmap.is_none() {
                Some(format!(
                    "index {:?} does not record which fragments it covers",
                    s.name
                ))
            } else if dataset.manifest().uses_stable_row_ids() {
                Some(format!(
                    "index {:?} holds stable row ids, not row addresses",
                    s.name
                ))
            } else {
                None
            }
        })
        .collect();
    (!reasons.is_empty()).then(|| reasons.join("; "))
}

/// Segments of `index` with their coverage (empty ones dropped), and the union.
pub(crate) fn covered_segments(
    dataset: &Dataset,
    index: &IndexSegments,
) -> (Vec<(IndexSegment, RoaringBitmap)>, RoaringBitmap) {
    let segments: Vec<(IndexSegment, RoaringBitmap)> = index
        .segments
        .iter()
        .map(|s| (s.clone(), coverage_of(dataset, s)))
        .filter(|(_, c)| !c.is_empty())
        .collect();
    let mut all = RoaringBitmap::new();
    for (_, c) in &segments {
        all |= c;
    }
    (segments, all)
}

/// Keep only rows of `fragments`.
pub(crate) fn restrict(rows: RoaringTreemap, fragments: &RoaringBitmap) -> RoaringTreemap {
    rows.iter()
        .filter(|a| fragments.contains((a >> 32) as u32))
        .collect()
}

/// A read summary as explain JSON.
pub(crate) fn read_json(r: &ReadSummary) -> serde_json::Value {
    serde_json::json!({
        "lookup_keys": r.lookup_keys,
        "keys_read": r.keys_read,
        "search_rounds": r.search_rounds,
        "bitmaps_read": r.bitmaps,
        "cached_pages": 0,
    })
}

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

    async fn is_cached(&self, dataset: &Dataset, index: &IndexSegments) -> bool {
        for s in &index.segments {
            if !coverage_of(dataset, s).is_empty() && !is_lookup_cached(dataset, s).await {
                return false;
            }
        }
        true
    }

    fn check(
        &self,
        dataset: &Dataset,
        index: &IndexSegments,
        leaf: &IndexLeaf,
    ) -> std::result::Result<Exactness, String> {
        if !matches!(leaf.query, IndexQuery::Scalar(_)) {
            return Err(format!("a bitmap index does not answer {}", leaf.text));
        }
        match refuse_segments(dataset, index) {
            Some(reason) => Err(reason),
            None => Ok(Exactness::Exact),
        }
    }

    async fn plan(
        &self,
        dataset: &Dataset,
        index: &IndexSegments,
        leaf: &IndexLeaf,
        want: Want,
        stats: &IoStats,
    ) -> Result<Box<dyn PlannedLeaf>> {
        let IndexQuery::Scalar(predicate) = &leaf.query else {
            return Err(Error::InvalidArgument(format!(
                "a bitmap index does not answer {}",
                leaf.text
            )));
        };
        let (segments, coverage) = covered_segments(dataset, index);
        let opens = segments
            .iter()
            .map(|(s, _)| open_bitmap_file(dataset, s, stats));
        let files = futures::future::try_join_all(opens).await?;
        Ok(Box::new(PlannedBitmap {
            name: index.name.clone(),
            predicate: predicate.clone(),
            want,
            segments: files
                .into_iter()
                .zip(segments.into_iter().map(|(_, c)| c))
                .collect(),
            coverage,
        }))
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
            "lookups": self.segments.iter().map(|(f, c)| serde_json::json!({
                "path": f.path().to_string(),
                "keys": f.num_keys(),
                "fragments": c.iter().collect::<Vec<u32>>(),
            })).collect::<Vec<_>>(),
        })
    }

    async fn answer(&self, dataset: &Dataset, stats: &IoStats) -> Result<LeafAnswer> {
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
            read.keys_read += r.keys_read;
            read.search_rounds = read.search_rounds.max(r.search_rounds);
            read.bitmaps += r.bitmaps;
            read.lookup_keys += r.lookup_keys;
        }
        Ok(LeafAnswer {
            sure,
            maybe: RoaringTreemap::new(),
            read: read_json(&read),
        })
    }
}
