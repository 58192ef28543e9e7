//! The BLOOMFILTER index behind the filter engine's [`IndexKind`] interface: candidate
//! zones for `=` / `IN` (rechecked by the engine on the column), exact `IS NULL` rows.

use arrow_schema::DataType;
use async_trait::async_trait;

use super::exec::load_bloom;
use super::{sbbf, value_bytes, BloomIndex, BloomZone, BLOOM_DETAILS_TYPES, BLOOM_FILE};
use crate::error::{Error, Result};
use crate::index::kind::segments::{
    check_segments, does_not_answer, has_type, planned_scalar, refuse_segment, scalar_predicate,
};
use crate::index::kind::{Exactness, IndexKind, IndexLeaf, IndexSegments, PlannedLeaf, Want};
use crate::index::predicate::leaves;
use crate::index::predicate::LeafQuery;
use crate::index::zones::planned::{zone_files_cached, PlannedZones, ZoneIndex};
use crate::index::zones::{Possible, ZoneBound};
use crate::io::IoStats;
use crate::lance::dataset::{DatasetVersion, IndexSegment};

/// The BLOOMFILTER kind.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BloomKind;

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

impl ZoneIndex for BloomIndex {
    type Zone = BloomZone;
    fn zones(&self) -> &[BloomZone] {
        &self.zones
    }
    fn null_buffer(&self) -> Option<usize> {
        self.null_buffer
    }
    fn bound(zone: &BloomZone) -> ZoneBound {
        zone.bound
    }
    fn possible(zone: &BloomZone, query: &LeafQuery, data_type: Option<&DataType>) -> Possible {
        match data_type {
            Some(t) => bloom_possible(zone, query, t),
            // (Planning requires a type; without one nothing is ruled out.)
            None => Possible {
                t: true,
                f: true,
                n: true,
            },
        }
    }
}

/// The kind as messages name it.
const BLOOM: &str = "a bloom filter";

#[async_trait]
impl IndexKind for BloomKind {
    fn name(&self) -> &'static str {
        "bloomfilter"
    }

    fn reads(&self, segment: &IndexSegment) -> bool {
        has_type(segment, &BLOOM_DETAILS_TYPES)
    }

    async fn is_cached(&self, dataset: &DatasetVersion, index: &IndexSegments) -> bool {
        zone_files_cached(dataset, index, BLOOM_FILE).await
    }

    fn check(
        &self,
        dataset: &DatasetVersion,
        index: &IndexSegments,
        leaf: &IndexLeaf,
    ) -> std::result::Result<Exactness, String> {
        let predicate = scalar_predicate(BLOOM, leaf)?;
        let Some(data_type) = &leaf.column.data_type else {
            return Err(does_not_answer(BLOOM, leaf));
        };
        if !leaves(predicate).iter().all(|q| answerable(q, data_type)) {
            return Err(format!(
                "a bloom filter answers =, IN and IS NULL on hashable types, not {}",
                leaf.text
            ));
        }
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
        let predicate = planned_scalar(BLOOM, leaf)?;
        let Some(data_type) = &leaf.column.data_type else {
            return Err(Error::InvalidArgument(does_not_answer(BLOOM, leaf)));
        };
        let load = |s: IndexSegment| async move { load_bloom(dataset, &s, stats).await };
        let leaf = (predicate, Some(data_type));
        PlannedZones::plan("bloomfilter", dataset, index, leaf, want, load).await
    }
}
