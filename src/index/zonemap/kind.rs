//! The ZONEMAP index behind the filter engine's [`IndexKind`] interface: candidate zones
//! (rows the engine rechecks on the column), or the exact null rows for `IS NULL`.

use std::sync::Arc;

use async_trait::async_trait;
use roaring::{RoaringBitmap, RoaringTreemap};

use super::exec::load_zone_map;
use super::{possible, zone_possible, ZoneMap, ZONEMAP_DETAILS_TYPES, ZONEMAP_FILE};
use crate::error::{Error, Result};
use crate::index::bitmap::addresses;
use crate::index::bitmap::exec::read_buffer_row_set;
use crate::index::bitmap::kind::{
    coverage_of, covered_segments, has_type, refuse_segments, restrict,
};
use crate::index::filter::kind::{
    rows_with_value, Exactness, IndexKind, IndexLeaf, IndexQuery, IndexSegments, LeafAnswer,
    PlannedLeaf, Want,
};
use crate::index::predicate::{LeafQuery, Predicate};
use crate::io::IoStats;
use crate::lance::dataset::{Dataset, IndexSegment};
use crate::lance::reader::LanceFileReader;

/// The ZONEMAP kind.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ZoneMapKind;

/// Whether the metadata of index file `name` of `segment` is cached.
pub(crate) async fn is_file_cached(dataset: &Dataset, segment: &IndexSegment, name: &str) -> bool {
    let (Ok(path), Some(size)) = (
        dataset.index_file_path(segment, name),
        segment.file_size(name),
    ) else {
        return false;
    };
    let key = crate::io::cache::CacheKey {
        path: path.to_string(),
        version: crate::io::ObjectVersion { size, etag: None },
        item: (),
    };
    dataset
        .session()
        .reader_caches
        .file_metadata
        .get(&key)
        .await
        .is_some()
}

/// Candidate rows: every row of the covered zones where `want` is possible.
pub(crate) fn zone_rows(
    zones: impl Iterator<Item = (super::ZoneBound, bool)>,
    covered: &RoaringBitmap,
) -> RoaringTreemap {
    let mut out = RoaringTreemap::new();
    for (bound, keep) in zones {
        if keep && covered.contains(bound.fragment) {
            let base = u64::from(bound.fragment) << 32;
            let rows = bound.rows();
            out.insert_range(base + rows.start..base + rows.end);
        }
    }
    out
}

/// One segment of a zone-based index (zone map, bloom filter) as [`answer_zones`] needs it.
pub(crate) struct ZoneSegment<'a> {
    /// The open index file.
    pub(crate) reader: &'a LanceFileReader,
    /// Its global buffer of exact null rows, when it has one.
    pub(crate) null_buffer: Option<usize>,
    /// Current fragments the segment covers.
    pub(crate) covered: &'a RoaringBitmap,
}

/// The answer of a zone-based index: the exact null rows (from the file's null buffer) for an
/// `IS NULL` test, otherwise the rows of the zones `candidates` keeps, for the engine to recheck.
pub(crate) async fn answer_zones<'a>(
    dataset: &Dataset,
    segments: Vec<(ZoneSegment<'a>, Vec<(super::ZoneBound, bool)>)>,
    null_test: bool,
    want: Want,
    stats: &IoStats,
) -> Result<LeafAnswer> {
    let mut sure = RoaringTreemap::new();
    let mut maybe = RoaringTreemap::new();
    let mut zones = 0usize;
    for (segment, candidates) in segments {
        if let (true, Some(buffer)) = (null_test, segment.null_buffer) {
            let nulls = read_buffer_row_set(dataset, segment.reader, buffer, stats).await?;
            let nulls = restrict(addresses(dataset, &nulls), segment.covered);
            let none = RoaringTreemap::new();
            sure |= rows_with_value(dataset, segment.covered, want, nulls, &none);
            continue;
        }
        zones += candidates.iter().filter(|(_, k)| *k).count();
        maybe |= zone_rows(candidates.into_iter(), segment.covered);
    }
    Ok(LeafAnswer {
        sure,
        maybe,
        read: serde_json::json!({"candidate_zones": zones, "cached_pages": 0}),
    })
}

#[derive(Debug, Clone)]
struct PlannedZoneMap {
    name: String,
    predicate: Predicate,
    want: Want,
    segments: Vec<(LanceFileReader, Arc<ZoneMap>, RoaringBitmap)>,
    coverage: RoaringBitmap,
}

/// Whether `predicate` is a bare `IS NULL`.
fn is_null_test(predicate: &Predicate) -> bool {
    matches!(predicate, Predicate::Leaf(l) if l.query == LeafQuery::IsNull)
}

#[async_trait]
impl IndexKind for ZoneMapKind {
    fn name(&self) -> &'static str {
        "zonemap"
    }

    fn reads(&self, segment: &IndexSegment) -> bool {
        has_type(segment, &ZONEMAP_DETAILS_TYPES)
    }

    async fn is_cached(&self, dataset: &Dataset, index: &IndexSegments) -> bool {
        for s in &index.segments {
            if !coverage_of(dataset, s).is_empty()
                && !is_file_cached(dataset, s, ZONEMAP_FILE).await
            {
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
            return Err(format!("a zone map does not answer {}", leaf.text));
        }
        match refuse_segments(dataset, index) {
            Some(reason) => Err(reason),
            None => Ok(Exactness::Candidates),
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
                "a zone map does not answer {}",
                leaf.text
            )));
        };
        let (segments, coverage) = covered_segments(dataset, index);
        let loads = segments
            .iter()
            .map(|(s, _)| load_zone_map(dataset, s, stats));
        let loaded = futures::future::try_join_all(loads).await?;
        Ok(Box::new(PlannedZoneMap {
            name: index.name.clone(),
            predicate: predicate.clone(),
            want,
            segments: loaded
                .into_iter()
                .zip(segments)
                .map(|((r, m), (_, c))| (r, m, c))
                .collect(),
            coverage,
        }))
    }
}

impl PlannedZoneMap {
    /// Candidate zones of one segment for the wanted value.
    fn candidates(&self, map: &ZoneMap) -> Vec<(super::ZoneBound, bool)> {
        let want_true = self.want == Want::True;
        map.zones
            .iter()
            .map(|z| {
                let p = possible(&self.predicate, &|q| zone_possible(z, q));
                (z.bound, p.admits(want_true))
            })
            .collect()
    }
}

#[async_trait]
impl PlannedLeaf for PlannedZoneMap {
    fn coverage(&self) -> &RoaringBitmap {
        &self.coverage
    }

    fn exactness(&self) -> Exactness {
        Exactness::Candidates
    }

    fn explain(&self) -> serde_json::Value {
        let segments: Vec<serde_json::Value> = self
            .segments
            .iter()
            .map(|(r, m, c)| {
                let zones = self.candidates(m);
                let kept: Vec<[u64; 3]> = zones
                    .iter()
                    .filter(|(b, k)| *k && c.contains(b.fragment))
                    .map(|(b, _)| [u64::from(b.fragment), b.start, b.length])
                    .collect();
                serde_json::json!({
                    "path": r.path().to_string(),
                    "zones": m.zones.len(),
                    "candidate_zones": kept.len(),
                    "candidates": kept.iter().take(64).collect::<Vec<_>>(),
                    "fragments": c.iter().collect::<Vec<u32>>(),
                })
            })
            .collect();
        serde_json::json!({
            "kind": "zonemap",
            "index": self.name,
            "answer": if is_null_test(&self.predicate) { "exact (null rows)" } else { "candidate zones, rechecked" },
            "segments": segments,
        })
    }

    async fn answer(&self, dataset: &Dataset, stats: &IoStats) -> Result<LeafAnswer> {
        let null_test = is_null_test(&self.predicate);
        let segments = self.segments.iter().map(|(reader, map, covered)| {
            let segment = ZoneSegment {
                reader,
                null_buffer: map.null_buffer,
                covered,
            };
            let exact_nulls = null_test && map.null_buffer.is_some();
            let candidates = if exact_nulls {
                Vec::new()
            } else {
                self.candidates(map)
            };
            (segment, candidates)
        });
        let segments: Vec<_> = segments.collect();
        answer_zones(dataset, segments, null_test, self.want, stats).await
    }
}
