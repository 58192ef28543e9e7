//! Which hits of an INVERTED index are live rows: row ids resolved (stable row ids), rows
//! of fragments the segment no longer covers, of deleted fragments and deleted rows left out.

use std::collections::HashMap;
use std::sync::Arc;

use roaring::RoaringBitmap;

use super::files::FtsSegment;
use super::search::Hit;
use crate::index::kind::row_ids::resolve_rows;
use crate::lance::dataset::{DatasetVersion, DeletionVector, IndexSegment};

/// The hits of partition `part_of` (row ids) that are live rows, as row addresses.
pub(crate) fn live_hits(
    dataset: &DatasetVersion,
    covered: &[(IndexSegment, RoaringBitmap)],
    deletions: &HashMap<u64, Arc<DeletionVector>>,
    part_of: &FtsSegment,
    hits: Vec<Hit>,
) -> Vec<Hit> {
    let coverage = covered
        .iter()
        .find(|(s, _)| s.uuid == part_of.segment.uuid)
        .map(|(_, c)| c);
    let hits = resolve_rows(dataset, coverage, deletions, hits, |h| &mut h.row_address);
    hits.into_iter()
        .filter(|h| {
            is_live(
                h.row_address,
                coverage,
                &part_of.deleted_fragments,
                deletions,
            )
        })
        .collect()
}

/// Whether every document the opened segments list is a live row at its row id: no
/// stable row ids, no deletions, no fragment a segment covered gone.
pub(crate) fn all_rows_live(
    dataset: &DatasetVersion,
    covered: &[(IndexSegment, RoaringBitmap)],
    opened: &[Arc<FtsSegment>],
    deletions: &HashMap<u64, Arc<DeletionVector>>,
) -> bool {
    !dataset.manifest().uses_stable_row_ids()
        && deletions.values().all(|d| d.0.is_empty())
        && opened.iter().all(|s| s.deleted_fragments.is_empty())
        && covered.iter().all(|(s, c)| {
            s.fragment_bitmap
                .as_ref()
                .is_some_and(|all| all.len() == c.len())
        })
}

/// Whether the row at `address` is still in the dataset and the segment still covers it.
fn is_live(
    address: u64,
    coverage: Option<&RoaringBitmap>,
    deleted_fragments: &RoaringBitmap,
    deletions: &HashMap<u64, std::sync::Arc<DeletionVector>>,
) -> bool {
    let fragment = address >> 32;
    let Ok(f32id) = u32::try_from(fragment) else {
        return false;
    };
    if !coverage.is_some_and(|c| c.contains(f32id)) || deleted_fragments.contains(f32id) {
        return false;
    }
    match deletions.get(&fragment) {
        Some(dv) => !dv.0.contains(address as u32),
        None => true,
    }
}
