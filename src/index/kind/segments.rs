//! The segments of one index on a column, as every index kind sees them: which ones a kind
//! reads, which current fragments each covers, why they cannot answer, and whether the
//! covered ones are all in the session caches.

use std::future::Future;

use roaring::{RoaringBitmap, RoaringTreemap};

use super::{Exactness, IndexLeaf, IndexQuery, IndexSegments};
use crate::error::{Error, Result};
use crate::index::predicate::Predicate;
use crate::io::IoStats;
use crate::lance::dataset::{DatasetVersion, IndexSegment};

/// Whether `segment`'s details type is one of `types`.
pub(crate) fn has_type(segment: &IndexSegment, types: &[&str]) -> bool {
    let name = segment.type_name().unwrap_or("");
    types.iter().any(|t| t.eq_ignore_ascii_case(name))
}

/// The current fragments a segment covers.
pub(crate) fn coverage_of(dataset: &DatasetVersion, s: &IndexSegment) -> RoaringBitmap {
    let current = dataset.manifest().fragment_ids();
    s.fragment_bitmap
        .as_ref()
        .map(|b| b & &current)
        .unwrap_or_default()
}

/// Segments of `index` with their coverage (empty ones dropped), and the union.
pub(crate) fn covered_segments(
    dataset: &DatasetVersion,
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

/// Whether `is_cached` holds for every segment of `index` that covers a current fragment
/// (asked concurrently; a kind's [`super::IndexKind::is_cached`]).
pub(crate) async fn covered_all_cached<'a, F, Fut>(
    dataset: &DatasetVersion,
    index: &'a IndexSegments,
    is_cached: F,
) -> bool
where
    F: Fn(&'a IndexSegment) -> Fut,
    Fut: Future<Output = bool>,
{
    let asks = index
        .segments
        .iter()
        .filter(|s| !coverage_of(dataset, s).is_empty())
        .map(is_cached);
    futures::future::join_all(asks).await.into_iter().all(|c| c)
}

/// `Ok(exactness)` when every segment of `index` can answer on `dataset`, else the
/// reasons `refuse` gives, joined.
pub(crate) fn check_segments(
    dataset: &DatasetVersion,
    index: &IndexSegments,
    exactness: Exactness,
    refuse: impl Fn(&DatasetVersion, &IndexSegment) -> Option<String>,
) -> std::result::Result<Exactness, String> {
    let reasons: Vec<String> = index
        .segments
        .iter()
        .filter_map(|s| refuse(dataset, s))
        .collect();
    if reasons.is_empty() {
        Ok(exactness)
    } else {
        Err(reasons.join("; "))
    }
}

/// Why a segment cannot answer on `dataset` (no fragment bitmap), if it cannot. Segments
/// that hold stable row ids answer: the kinds resolve them to row addresses
/// ([`super::row_ids`]).
pub(crate) fn refuse_segment(_dataset: &DatasetVersion, s: &IndexSegment) -> Option<String> {
    s.fragment_bitmap.is_none().then(|| {
        format!(
            "index {:?} does not record which fragments it covers",
            s.name
        )
    })
}

/// Keep only rows of `fragments`.
pub(crate) fn restrict(rows: RoaringTreemap, fragments: &RoaringBitmap) -> RoaringTreemap {
    rows.iter()
        .filter(|a| fragments.contains((a >> 32) as u32))
        .collect()
}

/// Open the metadata of every `.lance` file `segment` lists (through the session caches),
/// in one wave: the default prewarm of a kind ([`super::IndexKind::prewarm`]).
pub(crate) async fn open_lance_files(
    dataset: &DatasetVersion,
    segment: &IndexSegment,
    stats: &IoStats,
) -> Result<()> {
    let names = segment
        .files
        .iter()
        .filter(|f| f.path.ends_with(".lance"))
        .map(|f| f.path.as_str());
    let opens = names.map(|name| async move {
        dataset
            .open_index_file(segment, name, stats)
            .await
            .map(|_| ())
    });
    futures::future::try_join_all(opens).await?;
    Ok(())
}

/// Why a kind named `kind` (e.g. `"a bitmap index"`) does not answer `leaf`.
pub(crate) fn does_not_answer(kind: &str, leaf: &IndexLeaf) -> String {
    format!("{kind} does not answer {}", leaf.text)
}

/// The predicate of a scalar `leaf`, for a kind (named `kind`) that answers only those;
/// `Err(reason)` otherwise (a kind's [`super::IndexKind::check`]).
pub(crate) fn scalar_predicate<'a>(
    kind: &str,
    leaf: &'a IndexLeaf,
) -> std::result::Result<&'a Predicate, String> {
    match &leaf.query {
        IndexQuery::Scalar(predicate) => Ok(predicate),
        _ => Err(does_not_answer(kind, leaf)),
    }
}

/// [`scalar_predicate`] as an error, for a kind's [`super::IndexKind::plan`] (the engine
/// plans only leaves the kind's check accepted).
pub(crate) fn planned_scalar<'a>(kind: &str, leaf: &'a IndexLeaf) -> Result<&'a Predicate> {
    scalar_predicate(kind, leaf).map_err(Error::InvalidArgument)
}
