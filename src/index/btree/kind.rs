//! The BTree index behind the [`IndexKind`] interface: page lookup -> page selection ->
//! only the touched pages of `page_data.lance` (the file format: [`crate::index::btree_file`],
//! shared with the list element index, which is a BTree over encoded keys).

use async_trait::async_trait;
use roaring::{RoaringBitmap, RoaringTreemap};

use super::explain::explain_segment;
use crate::error::Result;
use crate::index::btree_file::exec::{
    answer_segment, load_all_pages, open_segment, segment_is_cached, OpenedSegment,
};
use crate::index::btree_file::{PageMatch, PageSelection};
use crate::index::btree_file::{BTREE_DETAILS_TYPES, MAX_BTREE_VERSION};
use crate::index::kind::row_ids::to_row_addresses;
use crate::index::kind::segments::{
    check_segments, covered_all_cached, covered_segments, has_type, planned_scalar,
    scalar_predicate,
};
use crate::index::kind::{
    fragment_rows, Exactness, IndexKind, IndexLeaf, IndexSegments, LeafAnswer, PlannedLeaf,
    PrewarmCounts, Want,
};
use crate::index::predicate::Predicate;
use crate::io::IoStats;
use crate::lance::dataset::{DatasetVersion, IndexSegment};

/// The BTree kind.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BTreeKind;

/// One BTree segment of a planned leaf.
#[derive(Debug, Clone)]
pub(crate) struct PlannedSegment {
    /// Its manifest entry.
    pub(crate) segment: IndexSegment,
    /// Current fragments it answers for.
    pub(crate) coverage: RoaringBitmap,
    /// Lookup and page-data files.
    pub(crate) opened: OpenedSegment,
    /// Pages chosen.
    pub(crate) selection: PageSelection,
}

/// A leaf planned on a BTree index.
#[derive(Debug, Clone)]
pub(crate) struct PlannedBTree {
    /// Index name.
    pub(crate) name: String,
    /// The search.
    pub(crate) predicate: Predicate,
    /// Whether the answer is every covered row the search does NOT return.
    pub(crate) complement: bool,
    /// Segments with coverage.
    pub(crate) segments: Vec<PlannedSegment>,
    /// Union of the segments' coverage.
    pub(crate) coverage: RoaringBitmap,
}

/// Why a BTree segment cannot answer on `dataset`, if it cannot.
fn refuse_btree_segment(_dataset: &DatasetVersion, s: &IndexSegment) -> Option<String> {
    let type_name = s.type_name().unwrap_or("<no index_details>");
    if !BTREE_DETAILS_TYPES
        .iter()
        .any(|t| t.eq_ignore_ascii_case(type_name))
    {
        return Some(format!(
            "index {:?} has type {type_name}, which lakeseek does not read",
            s.name
        ));
    }
    if s.index_version > MAX_BTREE_VERSION {
        return Some(format!(
            "index {:?} has BTree version {} (newest known: {MAX_BTREE_VERSION})",
            s.name, s.index_version
        ));
    }
    if s.fragment_bitmap.is_none() {
        return Some(format!(
            "index {:?} does not record which fragments it covers",
            s.name
        ));
    }
    None
}

/// Whether every row a search returns makes it TRUE and a NULL value never makes it
/// FALSE: `AND` / `OR` of `=`, `IN` without NULL, ranges and `IS NULL`.
fn positive(p: &Predicate) -> bool {
    use crate::index::predicate::LeafQuery;
    match p {
        Predicate::Leaf(l) => !matches!(
            l.query,
            LeafQuery::AlwaysNull | LeafQuery::In { has_null: true, .. }
        ),
        Predicate::And(v) | Predicate::Or(v) => v.iter().all(positive),
        Predicate::Not(_) | Predicate::IsTrue(_) => false,
    }
}

/// The search for the rows where `predicate` has value `want`, and whether the answer is
/// its complement. `NOT q` wanted TRUE is `q` wanted FALSE; the FALSE rows of a positive
/// `q` are the covered rows where neither `q` nor `IS NULL` holds (a NULL value never
/// makes it FALSE), so only the pages `q` and the nulls touch are read, not every page.
fn search_for(predicate: &Predicate, want: Want) -> (Predicate, bool) {
    let (mut q, mut want) = (predicate, want);
    while let Predicate::Not(inner) = q {
        q = inner;
        want = match want {
            Want::True => Want::False,
            Want::False => Want::True,
        };
    }
    match want {
        Want::True => (q.clone(), false),
        Want::False if positive(q) => (
            Predicate::Or(vec![
                q.clone(),
                Predicate::Leaf(crate::index::predicate::Leaf {
                    column: 0,
                    query: crate::index::predicate::LeafQuery::IsNull,
                }),
            ]),
            true,
        ),
        Want::False => (Predicate::Not(Box::new(q.clone())), false),
    }
}

#[async_trait]
impl IndexKind for BTreeKind {
    fn name(&self) -> &'static str {
        "btree"
    }

    fn reads(&self, segment: &IndexSegment) -> bool {
        has_type(segment, &BTREE_DETAILS_TYPES)
    }

    async fn is_cached(&self, dataset: &DatasetVersion, index: &IndexSegments) -> bool {
        covered_all_cached(dataset, index, |s| segment_is_cached(dataset, s)).await
    }

    fn check(
        &self,
        dataset: &DatasetVersion,
        index: &IndexSegments,
        leaf: &IndexLeaf,
    ) -> std::result::Result<Exactness, String> {
        scalar_predicate("a BTree index", leaf)?;
        check_segments(dataset, index, Exactness::Exact, refuse_btree_segment)
    }

    async fn plan(
        &self,
        dataset: &DatasetVersion,
        index: &IndexSegments,
        leaf: &IndexLeaf,
        want: Want,
        stats: &IoStats,
    ) -> Result<Box<dyn PlannedLeaf>> {
        let predicate = planned_scalar("a BTree index", leaf)?;
        let (predicate, complement) = search_for(predicate, want);
        let (segments, coverage) = covered_segments(dataset, index);
        let opens = segments
            .iter()
            .map(|(s, _)| open_segment(dataset, s, stats));
        let opened = futures::future::try_join_all(opens).await?;
        let segments = segments
            .into_iter()
            .zip(opened)
            .map(|((segment, c), opened)| {
                let selection = opened.lookup.select(&predicate);
                PlannedSegment {
                    segment,
                    coverage: c,
                    opened,
                    selection,
                }
            })
            .collect();
        Ok(Box::new(PlannedBTree {
            name: index.name.clone(),
            predicate,
            complement,
            segments,
            coverage,
        }))
    }

    /// The page lookup and the page-data file's metadata; with `all_pages`, every page into
    /// the page cache (counted).
    async fn prewarm(
        &self,
        dataset: &DatasetVersion,
        segment: &IndexSegment,
        all_pages: bool,
        stats: &IoStats,
    ) -> Result<PrewarmCounts> {
        let opened = open_segment(dataset, segment, stats).await?;
        let index_pages = if all_pages {
            load_all_pages(dataset, &opened, stats).await?
        } else {
            0
        };
        Ok(PrewarmCounts { index_pages })
    }
}

#[async_trait]
impl PlannedLeaf for PlannedBTree {
    fn coverage(&self) -> &RoaringBitmap {
        &self.coverage
    }

    fn exactness(&self) -> Exactness {
        Exactness::Exact
    }

    fn explain(&self) -> serde_json::Value {
        serde_json::json!({
            "kind": "btree",
            "index": self.name,
            "answer": "exact",
            "search": format!("{:?}", self.predicate),
            "complement": self.complement,
            "segments": self.segments.iter().map(explain_segment).collect::<Vec<_>>(),
        })
    }

    async fn answer(&self, dataset: &DatasetVersion, stats: &IoStats) -> Result<LeafAnswer> {
        let answers = self
            .segments
            .iter()
            .map(|s| answer_segment(dataset, &s.opened, &self.predicate, stats));
        let answers = futures::future::try_join_all(answers).await?;
        let mut sure = RoaringTreemap::new();
        let mut cached_pages = 0;
        let mut pages = 0;
        for (planned, answer) in self.segments.iter().zip(answers) {
            cached_pages += answer.cached_pages;
            pages += answer.pages.len();
            let rows = answer.ids.into_iter().collect();
            let rows = to_row_addresses(dataset, &planned.segment, &planned.coverage, rows);
            sure.extend(
                rows.into_iter()
                    .filter(|id| planned.coverage.contains((id >> 32) as u32)),
            );
        }
        if self.complement {
            let mut rows = fragment_rows(dataset, &self.coverage);
            rows -= &sure;
            sure = rows;
        }
        let all_pages = self
            .segments
            .iter()
            .flat_map(|s| s.selection.values())
            .filter(|k| **k == PageMatch::All)
            .count();
        Ok(LeafAnswer {
            sure,
            maybe: RoaringTreemap::new(),
            read: serde_json::json!({
                "pages": pages,
                "pages_ids_only": all_pages,
                "cached_pages": cached_pages,
            }),
        })
    }
}
