//! The planned leaf every zone-based index kind answers with ([`PlannedZones`]): the
//! zones whose statistics admit the wanted truth value, as candidate rows the engine
//! rechecks on the column, or the exact null rows (from the file's null buffer) for a bare
//! `IS NULL`. A kind describes its zones through [`ZoneIndex`].

use std::fmt::Debug;
use std::sync::Arc;

use arrow_schema::DataType;
use async_trait::async_trait;
use roaring::{RoaringBitmap, RoaringTreemap};

use super::{possible, Possible, ZoneBound};
use crate::error::Result;
use crate::index::bitmap_file::addresses;
use crate::index::bitmap_file::exec::read_buffer_row_set;
use crate::index::kind::segments::{covered_all_cached, covered_segments, restrict};
use crate::index::kind::{
    rows_with_value, Exactness, IndexSegments, LeafAnswer, PlannedLeaf, Want,
};
use crate::index::predicate::{LeafQuery, Predicate};
use crate::io::IoStats;
use crate::lance::data_file::DataFileReader;
use crate::lance::dataset::{DatasetVersion, IndexSegment};

/// What one segment of a zone-based index holds, as [`PlannedZones`] needs it.
pub(crate) trait ZoneIndex: Debug + Send + Sync + 'static {
    /// One zone's statistics.
    type Zone;
    /// The zones, in order.
    fn zones(&self) -> &[Self::Zone];
    /// Global buffer of the exact null rows, when the file has one.
    fn null_buffer(&self) -> Option<usize>;
    /// Where `zone` is.
    fn bound(zone: &Self::Zone) -> ZoneBound;
    /// The truth values `query` may take on the rows of `zone`, in a column of `data_type`.
    fn possible(zone: &Self::Zone, query: &LeafQuery, data_type: Option<&DataType>) -> Possible;
}

/// Whether every covered segment's index file `name` is in the session caches (a
/// zone-based kind's [`IndexKind::is_cached`]).
pub(crate) async fn zone_files_cached(
    dataset: &DatasetVersion,
    index: &IndexSegments,
    name: &str,
) -> bool {
    covered_all_cached(dataset, index, |s| dataset.is_index_file_cached(s, name)).await
}

/// Candidate rows: every row of the covered zones where `want` is possible.
fn zone_rows(
    zones: impl Iterator<Item = (ZoneBound, bool)>,
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
struct ZoneSegment<'a> {
    /// The open index file.
    reader: &'a DataFileReader,
    /// Its global buffer of exact null rows, when it has one.
    null_buffer: Option<usize>,
    /// Current fragments the segment covers.
    covered: &'a RoaringBitmap,
}

/// The answer of a zone-based index: the exact null rows (from the file's null buffer) for an
/// `IS NULL` test, otherwise the rows of the zones `candidates` keeps, for the engine to recheck.
async fn answer_zones<'a>(
    dataset: &DatasetVersion,
    segments: Vec<(ZoneSegment<'a>, Vec<(ZoneBound, bool)>)>,
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

/// A leaf planned on a zone-based index: kept zones of each covered segment.
#[derive(Debug, Clone)]
pub(crate) struct PlannedZones<Z> {
    /// Kind name shown by explain.
    kind: &'static str,
    /// Index name.
    name: String,
    predicate: Predicate,
    data_type: Option<DataType>,
    want: Want,
    segments: Vec<(DataFileReader, Arc<Z>, RoaringBitmap)>,
    coverage: RoaringBitmap,
}

impl<Z: ZoneIndex> PlannedZones<Z> {
    /// Plan `predicate` on the covered segments of `index`, each loaded by `load` (in one
    /// wave).
    pub(crate) async fn plan<F, Fut>(
        kind: &'static str,
        dataset: &DatasetVersion,
        index: &IndexSegments,
        (predicate, data_type): (&Predicate, Option<&DataType>),
        want: Want,
        load: F,
    ) -> Result<Box<dyn PlannedLeaf>>
    where
        F: Fn(IndexSegment) -> Fut,
        Fut: std::future::Future<Output = Result<(DataFileReader, Arc<Z>)>>,
    {
        let (segments, coverage) = covered_segments(dataset, index);
        let loads = segments.iter().map(|(s, _)| load(s.clone()));
        let loaded = futures::future::try_join_all(loads).await?;
        let segments = loaded.into_iter().zip(segments);
        Ok(Box::new(PlannedZones {
            kind,
            name: index.name.clone(),
            predicate: predicate.clone(),
            data_type: data_type.cloned(),
            want,
            segments: segments.map(|((r, z), (_, c))| (r, z, c)).collect(),
            coverage,
        }))
    }

    /// Each zone's bound and whether the predicate may take the wanted value in it.
    fn candidates(&self, index: &Z) -> Vec<(ZoneBound, bool)> {
        let want_true = self.want == Want::True;
        let data_type = self.data_type.as_ref();
        let zones = index.zones().iter().map(|z| {
            let p = possible(&self.predicate, &|q| Z::possible(z, q, data_type));
            (Z::bound(z), p.admits(want_true))
        });
        zones.collect()
    }
}

/// Whether `predicate` is a bare `IS NULL`.
pub(crate) fn is_null_test(predicate: &Predicate) -> bool {
    matches!(predicate, Predicate::Leaf(l) if l.query == LeafQuery::IsNull)
}

#[async_trait]
impl<Z: ZoneIndex> PlannedLeaf for PlannedZones<Z> {
    fn coverage(&self) -> &RoaringBitmap {
        &self.coverage
    }

    fn exactness(&self) -> Exactness {
        Exactness::Candidates
    }

    fn explain(&self) -> serde_json::Value {
        let segments = self.segments.iter().map(|(r, z, c)| {
            let kept: Vec<[u64; 3]> = self
                .candidates(z)
                .iter()
                .filter(|(b, k)| *k && c.contains(b.fragment))
                .map(|(b, _)| [u64::from(b.fragment), b.start, b.length])
                .collect();
            serde_json::json!({
                "path": r.path().to_string(),
                "zones": z.zones().len(),
                "candidate_zones": kept.len(),
                "candidates": kept.iter().take(64).collect::<Vec<_>>(),
                "fragments": c.iter().collect::<Vec<u32>>(),
            })
        });
        let answer = if is_null_test(&self.predicate) {
            "exact (null rows)"
        } else {
            "candidate zones, rechecked"
        };
        serde_json::json!({
            "kind": self.kind,
            "index": self.name,
            "answer": answer,
            "segments": segments.collect::<Vec<_>>(),
        })
    }

    async fn answer(&self, dataset: &DatasetVersion, stats: &IoStats) -> Result<LeafAnswer> {
        let null_test = is_null_test(&self.predicate);
        let segments = self.segments.iter().map(|(reader, zones, covered)| {
            let segment = ZoneSegment {
                reader,
                null_buffer: zones.null_buffer(),
                covered,
            };
            let exact_nulls = null_test && zones.null_buffer().is_some();
            let candidates = if exact_nulls {
                Vec::new()
            } else {
                self.candidates(zones)
            };
            (segment, candidates)
        });
        let segments: Vec<_> = segments.collect();
        answer_zones(dataset, segments, null_test, self.want, stats).await
    }
}
