//! The NGRAM index behind the filter engine's [`IndexKind`] interface: candidates for
//! `contains(col, 'x')`, `LIKE` and `starts_with` (the rows holding every trigram of the
//! pattern's literal parts), rechecked by the engine on their rows only.

use async_trait::async_trait;
use roaring::{RoaringBitmap, RoaringTreemap};

use super::exec::{is_file_cached, load_tokens, open_ngram_file, read_postings, NgramFile};
use super::{query_tokens, NGRAM_DETAILS_TYPES};
use crate::error::{Error, Result};
use crate::index::kind::row_ids::{holds_row_ids, row_id_addresses};
use crate::index::kind::segments::{
    check_segments, covered_all_cached, covered_segments, does_not_answer, has_type,
    refuse_segment, restrict,
};
use crate::index::kind::{
    fragment_rows, Exactness, IndexKind, IndexLeaf, IndexQuery, IndexSegments, LeafAnswer,
    PlannedLeaf, Want,
};
use crate::index::sql::string_match::StringMatcher;
use crate::io::IoStats;
use crate::lance::dataset::{DatasetVersion, IndexSegment};

/// The NGRAM kind.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NgramKind;

/// The kind as messages name it.
const NGRAM: &str = "an ngram index";

/// The string test of `leaf` and its trigram tokens, or why the index cannot answer it.
fn leaf_tokens(leaf: &IndexLeaf) -> std::result::Result<(&StringMatcher, Vec<u32>), String> {
    let IndexQuery::StringMatch(matcher) = &leaf.query else {
        return Err(does_not_answer(NGRAM, leaf));
    };
    if matcher.case_insensitive() {
        return Err(format!(
            "{NGRAM} does not answer the case-insensitive {} (lance neither)",
            leaf.text
        ));
    }
    let tokens = query_tokens(&matcher.required_substrings());
    if tokens.is_empty() {
        return Err(format!(
            "{NGRAM} answers patterns with 3 consecutive ASCII letters or digits, not {}",
            leaf.text
        ));
    }
    Ok((matcher, tokens))
}

#[async_trait]
impl IndexKind for NgramKind {
    fn name(&self) -> &'static str {
        "ngram"
    }

    fn reads(&self, segment: &IndexSegment) -> bool {
        has_type(segment, &NGRAM_DETAILS_TYPES)
    }

    async fn is_cached(&self, dataset: &DatasetVersion, index: &IndexSegments) -> bool {
        covered_all_cached(dataset, index, |s| is_file_cached(dataset, s)).await
    }

    fn check(
        &self,
        dataset: &DatasetVersion,
        index: &IndexSegments,
        leaf: &IndexLeaf,
    ) -> std::result::Result<Exactness, String> {
        leaf_tokens(leaf)?;
        check_segments(dataset, index, Exactness::Candidates, refuse_segment)
    }

    async fn plan(
        &self,
        dataset: &DatasetVersion,
        index: &IndexSegments,
        leaf: &IndexLeaf,
        want: Want,
        stats: &IoStats,
    ) -> Result<Box<dyn PlannedLeaf>> {
        let (_, tokens) = leaf_tokens(leaf).map_err(Error::InvalidArgument)?;
        let (segments, coverage) = covered_segments(dataset, index);
        let row_ids = segments.iter().any(|(s, _)| holds_row_ids(dataset, s));
        let opens = segments
            .iter()
            .map(|(s, _)| open_ngram_file(dataset, s, stats));
        let files = futures::future::try_join_all(opens).await?;
        let segments = files
            .into_iter()
            .zip(segments.into_iter().map(|(_, c)| c))
            .collect();
        Ok(Box::new(PlannedNgram {
            name: index.name.clone(),
            want,
            tokens,
            segments,
            coverage,
            row_ids,
        }))
    }
}

/// A string test planned on one NGRAM index.
#[derive(Debug)]
struct PlannedNgram {
    /// Index name.
    name: String,
    /// The truth value wanted.
    want: Want,
    /// The pattern's trigram tokens (sorted, unique, at least one).
    tokens: Vec<u32>,
    /// Each covering segment's file and current fragments.
    segments: Vec<(NgramFile, RoaringBitmap)>,
    /// Union of the segments' fragments.
    coverage: RoaringBitmap,
    /// Whether the posting lists hold stable row ids (resolved through the covered
    /// fragments' sequences) rather than row addresses.
    row_ids: bool,
}

/// What one segment's answer read.
#[derive(Debug, Default, Clone, Copy)]
struct SegmentRead {
    /// Posting lists used.
    lists: usize,
    /// Posting lists read from the file (not cached).
    read: usize,
    /// Whether a trigram is absent (no candidate at all).
    absent: bool,
}

impl PlannedNgram {
    /// The candidates of one segment: the intersection of its trigrams' posting lists
    /// (none when a trigram is absent), restricted to the fragments it covers.
    async fn segment_candidates(
        &self,
        dataset: &DatasetVersion,
        file: &NgramFile,
        covered: &RoaringBitmap,
        stats: &IoStats,
    ) -> Result<(RoaringTreemap, SegmentRead)> {
        let map = load_tokens(dataset, file, stats).await?;
        let rows: Option<Vec<u64>> = self
            .tokens
            .iter()
            .map(|t| map.rows.get(t).copied())
            .collect();
        let Some(mut rows) = rows else {
            let read = SegmentRead {
                absent: true,
                ..SegmentRead::default()
            };
            return Ok((RoaringTreemap::new(), read));
        };
        rows.sort_unstable();
        rows.dedup();
        let (lists, read) = read_postings(dataset, file, &rows, stats).await?;
        let mut iter = lists.iter();
        let mut out = iter.next().map(|p| p.0.clone()).unwrap_or_default();
        for p in iter {
            out &= &p.0;
        }
        let read = SegmentRead {
            lists: lists.len(),
            read,
            absent: false,
        };
        let rows = if self.row_ids {
            row_id_addresses(dataset, covered, &out)
        } else {
            restrict(out, covered)
        };
        Ok((rows, read))
    }
}

/// A trigram token as its three characters (explain).
fn trigram_text(token: u32) -> String {
    let ch = |p: u32| match p {
        1..=10 => char::from(b'0' + (p - 1) as u8),
        11..=36 => char::from(b'a' + (p - 11) as u8),
        _ => '?',
    };
    [token / (37 * 37), (token / 37) % 37, token % 37]
        .into_iter()
        .map(ch)
        .collect()
}

#[async_trait]
impl PlannedLeaf for PlannedNgram {
    fn coverage(&self) -> &RoaringBitmap {
        &self.coverage
    }

    fn recheck_likely(&self) -> bool {
        // Every candidate is rechecked: the posting lists only prove that a row holds
        // each of the pattern's trigrams.
        true
    }

    fn exactness(&self) -> Exactness {
        Exactness::Candidates
    }

    fn explain(&self) -> serde_json::Value {
        let answer = match self.want {
            Want::True => "candidates (rows holding every trigram), rechecked",
            Want::False => "every covered row rechecked (the index only rules rows in)",
        };
        let segments = self.segments.iter().map(|(f, c)| {
            serde_json::json!({
                "path": f.path().to_string(),
                "trigrams_in_file": f.reader.num_rows(),
                "fragments": c.iter().collect::<Vec<u32>>(),
            })
        });
        serde_json::json!({
            "kind": "ngram",
            "index": self.name,
            "answer": answer,
            "trigrams": self.tokens.iter().map(|t| trigram_text(*t)).collect::<Vec<_>>(),
            "segments": segments.collect::<Vec<_>>(),
        })
    }

    async fn answer(&self, dataset: &DatasetVersion, stats: &IoStats) -> Result<LeafAnswer> {
        if self.want == Want::False {
            // Rows outside the candidates are FALSE or NULL: nothing is ruled out.
            return Ok(LeafAnswer {
                sure: RoaringTreemap::new(),
                maybe: fragment_rows(dataset, &self.coverage),
                read: serde_json::json!({"posting_lists": 0, "posting_lists_read": 0, "cached_pages": 0}),
            });
        }
        let answers = self
            .segments
            .iter()
            .map(|(f, c)| self.segment_candidates(dataset, f, c, stats));
        let mut maybe = RoaringTreemap::new();
        let (mut lists, mut read, mut absent) = (0, 0, 0);
        for (rows, r) in futures::future::try_join_all(answers).await? {
            maybe |= rows;
            lists += r.lists;
            read += r.read;
            absent += usize::from(r.absent);
        }
        Ok(LeafAnswer {
            sure: RoaringTreemap::new(),
            maybe,
            read: serde_json::json!({
                "posting_lists": lists,
                "posting_lists_read": read,
                "segments_missing_a_trigram": absent,
                "cached_pages": 0,
            }),
        })
    }
}
