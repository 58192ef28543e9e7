//! The ZONEMAP index behind the filter engine's [`IndexKind`] interface: candidate zones
//! (rows the engine rechecks on the column), or the exact null rows for `IS NULL`, through
//! the planned leaf every zone-based kind shares ([`PlannedZones`]).

use arrow_schema::DataType;
use async_trait::async_trait;

use super::exec::load_zone_map;
use super::{zone_possible, Possible, ZoneBound, ZoneMap, ZONEMAP_DETAILS_TYPES, ZONEMAP_FILE};
use crate::error::Result;
use crate::index::kind::segments::{
    check_segments, has_type, planned_scalar, refuse_segment, scalar_predicate,
};
use crate::index::kind::{Exactness, IndexKind, IndexLeaf, IndexSegments, PlannedLeaf, Want};
use crate::index::predicate::LeafQuery;
use crate::index::zones::planned::{zone_files_cached, PlannedZones, ZoneIndex};
use crate::io::IoStats;
use crate::lance::dataset::{DatasetVersion, IndexSegment};

/// The ZONEMAP kind.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ZoneMapKind;

impl ZoneIndex for ZoneMap {
    type Zone = super::Zone;
    fn zones(&self) -> &[super::Zone] {
        &self.zones
    }
    fn null_buffer(&self) -> Option<usize> {
        self.null_buffer
    }
    fn bound(zone: &super::Zone) -> ZoneBound {
        zone.bound
    }
    fn possible(zone: &super::Zone, query: &LeafQuery, _: Option<&DataType>) -> Possible {
        zone_possible(zone, query)
    }
}

#[async_trait]
impl IndexKind for ZoneMapKind {
    fn name(&self) -> &'static str {
        "zonemap"
    }

    fn reads(&self, segment: &IndexSegment) -> bool {
        has_type(segment, &ZONEMAP_DETAILS_TYPES)
    }

    async fn is_cached(&self, dataset: &DatasetVersion, index: &IndexSegments) -> bool {
        zone_files_cached(dataset, index, ZONEMAP_FILE).await
    }

    fn check(
        &self,
        dataset: &DatasetVersion,
        index: &IndexSegments,
        leaf: &IndexLeaf,
    ) -> std::result::Result<Exactness, String> {
        scalar_predicate("a zone map", leaf)?;
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
        let predicate = planned_scalar("a zone map", leaf)?;
        let load = |s: IndexSegment| async move { load_zone_map(dataset, &s, stats).await };
        PlannedZones::plan("zonemap", dataset, index, (predicate, None), want, load).await
    }
}
