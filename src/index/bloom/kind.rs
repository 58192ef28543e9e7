//! The BLOOMFILTER index behind the filter engine's [`IndexKind`] interface: candidate
//! zones for `=` / `IN` (rechecked by the engine on the column), exact `IS NULL` rows.

use std::sync::Arc;

use arrow_schema::DataType;
use async_trait::async_trait;
use roaring::RoaringBitmap;

use super::exec::load_bloom;
use super::{sbbf, value_bytes, BloomIndex, BloomZone, BLOOM_DETAILS_TYPES, BLOOM_FILE};
use crate::error::{Error, Result};
use crate::index::bitmap::kind::{coverage_of, covered_segments, has_type, refuse_segments};
use crate::index::bitmap::leaves;
use crate::index::filter::kind::{
    Exactness, IndexKind, IndexLeaf, IndexQuery, IndexSegments, LeafAnswer, PlannedLeaf, Want,
};
use crate::index::predicate::{LeafQuery, Predicate};
use crate::index::zonemap::kind::{answer_zones, is_file_cached, ZoneSegment};
use crate::index::zonemap::{possible, Possible};
use crate::io::IoStats;
use crate::lance::dataset::{Dataset, IndexSegment};
use crate::lance::reader::LanceFileReader;

/// The BLOOMFILTER kind.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BloomKind;

#[derive(Debug, Clone)]
struct PlannedBloom {
    name: String,
    predicate: Predicate,
    data_type: DataType,
    want: Want,
    segments: Vec<(LanceFileReader, Arc<BloomIndex>, RoaringBitmap)>,
    coverage: RoaringBitmap,
}

/// Whether a bloom filter can answer `query` on a column of `data_type`.
fn answerable(query: &LeafQuery, data_type: &DataType) -> bool {
    match query {
        LeafQuery::Equals(k) => value_bytes(k, data_type).is_some(),
        LeafQuery::In { values, .. } => values.iter().all(|k| value_bytes(k, data_type).is_some()),
        LeafQuery::IsNull | LeafQuery::AlwaysNull => true,
        LeafQuery::Range { .. } => false,
    }
}

/// The truth values `query` may take on the rows of `zone`.
fn bloom_possible(zone: &BloomZone, query: &LeafQuery, data_type: &DataType) -> Possible {
    let hit = |k| value_bytes(k, data_type).is_none_or(|b| zone.filter.check_hash(sbbf::hash(&b)));
    match query {
        LeafQuery::Equals(k) => Possible {
            t: hit(k),
            f: true,
            n: zone.has_null,
        },
        LeafQuery::In { values, has_null } => Possible {
            t: values.iter().any(hit),
            f: !has_null,
            n: *has_null || zone.has_null,
        },
        LeafQuery::IsNull => Possible {
            t: zone.has_null,
            f: true,
            n: false,
        },
        LeafQuery::AlwaysNull => Possible {
            t: false,
            f: false,
            n: true,
        },
        LeafQuery::Range { .. } => Possible {
            t: true,
            f: true,
            n: true,
        },
    }
}

fn is_null_test(predicate: &Predicate) -> bool {
    matches!(predicate, Predicate::Leaf(l) if l.query == LeafQuery::IsNull)
}

#[async_trait]
impl IndexKind for BloomKind {
    fn name(&self) -> &'static str {
        "bloomfilter"
    }

    fn reads(&self, segment: &IndexSegment) -> bool {
        has_type(segment, &BLOOM_DETAILS_TYPES)
    }

    async fn is_cached(&self, dataset: &Dataset, index: &IndexSegments) -> bool {
        for s in &index.segments {
            if !coverage_of(dataset, s).is_empty() && !is_file_cached(dataset, s, BLOOM_FILE).await
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
        let IndexQuery::Scalar(predicate) = &leaf.query else {
            return Err(format!("a bloom filter does not answer {}", leaf.text));
        };
        let Some(data_type) = &leaf.column.data_type else {
            return Err(format!("a bloom filter does not answer {}", leaf.text));
        };
        if !leaves(predicate).iter().all(|q| answerable(q, data_type)) {
            return Err(format!(
                "a bloom filter answers =, IN and IS NULL on hashable types, not {}",
                leaf.text
            ));
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
        let (IndexQuery::Scalar(predicate), Some(data_type)) =
            (&leaf.query, &leaf.column.data_type)
        else {
            return Err(Error::InvalidArgument(format!(
                "a bloom filter does not answer {}",
                leaf.text
            )));
        };
        let (segments, coverage) = covered_segments(dataset, index);
        let loads = segments.iter().map(|(s, _)| load_bloom(dataset, s, stats));
        let loaded = futures::future::try_join_all(loads).await?;
        Ok(Box::new(PlannedBloom {
            name: index.name.clone(),
            predicate: predicate.clone(),
            data_type: data_type.clone(),
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

impl PlannedBloom {
    fn candidates(&self, index: &BloomIndex) -> Vec<(crate::index::zonemap::ZoneBound, bool)> {
        let want_true = self.want == Want::True;
        index
            .zones
            .iter()
            .map(|z| {
                let p = possible(&self.predicate, &|q| bloom_possible(z, q, &self.data_type));
                (z.bound, p.admits(want_true))
            })
            .collect()
    }
}

#[async_trait]
impl PlannedLeaf for PlannedBloom {
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
                let kept = self
                    .candidates(m)
                    .iter()
                    .filter(|(b, k)| *k && c.contains(b.fragment))
                    .count();
                serde_json::json!({
                    "path": r.path().to_string(),
                    "zones": m.zones.len(),
                    "candidate_zones": kept,
                    "fragments": c.iter().collect::<Vec<u32>>(),
                })
            })
            .collect();
        serde_json::json!({
            "kind": "bloomfilter",
            "index": self.name,
            "answer": if is_null_test(&self.predicate) { "exact (null rows)" } else { "candidate zones, rechecked" },
            "segments": segments,
        })
    }

    async fn answer(&self, dataset: &Dataset, stats: &IoStats) -> Result<LeafAnswer> {
        let null_test = is_null_test(&self.predicate);
        let segments = self.segments.iter().map(|(reader, index, covered)| {
            let segment = ZoneSegment {
                reader,
                null_buffer: index.null_buffer,
                covered,
            };
            let exact_nulls = null_test && index.null_buffer.is_some();
            let candidates = if exact_nulls {
                Vec::new()
            } else {
                self.candidates(index)
            };
            (segment, candidates)
        });
        let segments: Vec<_> = segments.collect();
        answer_zones(dataset, segments, null_test, self.want, stats).await
    }
}
