//! Index answers on datasets with stable row ids: which segments hold stable row ids rather
//! than row addresses, and the row addresses of some row ids in a segment's covered
//! fragments.
//!
//! The domain follows lance 14's `IndexMetadata::results_are_row_addrs` (verified on files
//! pylance 14.0.2 writes): ZONEMAP, BLOOMFILTER, FM and a BTREE with `index_version` ≥ 1
//! hold row addresses; a BTREE with `index_version` 0 (trained on `_rowid`), BITMAP,
//! LABEL_LIST, NGRAM, INVERTED and the rest hold row ids. lakeseek's own list element index
//! holds row addresses. On a dataset without stable row ids the two are the same.
//!
//! A row-id answer is resolved per covered fragment through that fragment's inline
//! sequence (no dataset-wide map): every row whose id is in the answer. An id that an
//! update or a compaction copied sits in two fragments, the old copy deleted; both
//! addresses come back, and the engine drops the deleted one with the deletion vectors it
//! reads anyway.

use std::collections::HashMap;
use std::sync::Arc;

use roaring::{RoaringBitmap, RoaringTreemap};

use crate::lance::dataset::{DatasetVersion, DeletionVector, IndexSegment};
use crate::lance::rowids::RowIdSequence;

/// Lowercase details type names (after the last `.`) of the kinds that answer with row
/// addresses whatever their version.
const ADDRESS_DOMAIN_TYPES: [&str; 4] = [
    "zonemapindexdetails",
    "bloomfilterindexdetails",
    "fmindexdetails",
    "listelementindexdetails",
];
/// The BTree details type name.
const BTREE_TYPE: &str = "btreeindexdetails";
/// First BTree index version that holds row addresses (lance `BTREE_ROW_ADDR_DOMAIN_VERSION`).
const BTREE_ROW_ADDRESS_VERSION: i32 = 1;

/// Whether `segment`'s answers are row addresses by its details type and version alone.
pub(crate) fn answers_row_addresses(segment: &IndexSegment) -> bool {
    let name = segment.type_name().unwrap_or("");
    let name = name
        .rsplit(['.', '/'])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    if name == BTREE_TYPE {
        return segment.index_version >= BTREE_ROW_ADDRESS_VERSION;
    }
    ADDRESS_DOMAIN_TYPES.contains(&name.as_str())
}

/// Whether the values `segment` stores are stable row ids that must be resolved to row
/// addresses on `dataset`.
pub(crate) fn holds_row_ids(dataset: &DatasetVersion, segment: &IndexSegment) -> bool {
    dataset.manifest().uses_stable_row_ids() && !answers_row_addresses(segment)
}

/// The row addresses, in the current `fragments`, of the rows whose stable id is in `ids`
/// (deleted copies included: the engine drops them).
pub(crate) fn row_id_addresses(
    dataset: &DatasetVersion,
    fragments: &RoaringBitmap,
    ids: &RoaringTreemap,
) -> RoaringTreemap {
    let mut out = RoaringTreemap::new();
    if ids.is_empty() {
        return out;
    }
    let sorted: Vec<u64> = ids.iter().collect();
    for f in &dataset.manifest().fragments {
        let covered = u32::try_from(f.id).is_ok_and(|id| fragments.contains(id));
        if let (true, Some(sequence)) = (covered, &f.row_ids) {
            let base = f.id << 32;
            sequence.positions_of(&sorted, &mut |_, position| {
                out.insert(base | position);
            });
        }
    }
    out
}

/// [`row_id_addresses`] when `segment` holds row ids on `dataset`; `rows` as they are
/// otherwise (already row addresses).
pub(crate) fn to_row_addresses(
    dataset: &DatasetVersion,
    segment: &IndexSegment,
    fragments: &RoaringBitmap,
    rows: RoaringTreemap,
) -> RoaringTreemap {
    if holds_row_ids(dataset, segment) {
        row_id_addresses(dataset, fragments, &rows)
    } else {
        rows
    }
}

/// Resolves the stable row ids a search path reads from an index (vector partitions,
/// full-text documents) to the row addresses of their live copies in the fragments the
/// index covers, through each fragment's sequence and deletion vector (no dataset-wide
/// map). On a dataset without stable row ids it is the identity.
#[derive(Debug, Clone, Default)]
pub(crate) struct RowIdResolver {
    /// The covered fragments with their sequences and deletions; `None` when ids are
    /// already row addresses.
    fragments: Option<Vec<CoveredFragment>>,
}

/// One covered fragment of a [`RowIdResolver`].
#[derive(Debug, Clone)]
struct CoveredFragment {
    /// Fragment id.
    id: u64,
    /// Its row ids.
    sequence: Arc<RowIdSequence>,
    /// Its deleted offsets, if any.
    deletions: Option<Arc<DeletionVector>>,
}

impl RowIdResolver {
    /// The resolver of an index covering `covered` on `dataset` (`deletions`: the deletion
    /// vectors of at least the covered fragments that have one).
    pub(crate) fn new(
        dataset: &DatasetVersion,
        deletions: &HashMap<u64, Arc<DeletionVector>>,
        covered: &RoaringBitmap,
    ) -> Self {
        if !dataset.manifest().uses_stable_row_ids() {
            return Self::default();
        }
        let fragments = dataset
            .manifest()
            .fragments
            .iter()
            .filter(|f| u32::try_from(f.id).is_ok_and(|id| covered.contains(id)))
            .filter_map(|f| {
                f.row_ids.as_ref().map(|sequence| CoveredFragment {
                    id: f.id,
                    sequence: Arc::clone(sequence),
                    deletions: deletions.get(&f.id).cloned(),
                })
            })
            .collect();
        Self {
            fragments: Some(fragments),
        }
    }

    /// The resolver of the union of `segments`' covered fragments.
    pub(crate) fn for_segments(
        dataset: &DatasetVersion,
        deletions: &HashMap<u64, Arc<DeletionVector>>,
        segments: &[IndexSegment],
    ) -> Self {
        let mut covered = RoaringBitmap::new();
        for s in segments {
            if let Some(b) = &s.fragment_bitmap {
                covered |= b;
            }
        }
        Self::new(dataset, deletions, &covered)
    }

    /// Whether ids need resolving (the dataset has stable row ids); `false`: each id is
    /// its row address.
    pub(crate) fn resolves(&self) -> bool {
        self.fragments.is_some()
    }

    /// Per id of `ids`, the address of its live copy in a covered fragment (`None`: no
    /// live copy — deleted, or dropped by a compaction the index has not seen); each id
    /// itself when ids are addresses.
    pub(crate) fn addresses<'a>(
        &self,
        ids: &'a [u64],
    ) -> Box<dyn Iterator<Item = Option<u64>> + Send + 'a> {
        let Some(fragments) = &self.fragments else {
            return Box::new(ids.iter().map(|id| Some(*id)));
        };
        let mut sorted = ids.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let mut live: HashMap<u64, u64> = HashMap::with_capacity(sorted.len());
        for f in fragments {
            f.sequence.positions_of(&sorted, &mut |id, position| {
                let deleted = f
                    .deletions
                    .as_ref()
                    .is_some_and(|d| u32::try_from(position).map_or(true, |p| d.0.contains(p)));
                if !deleted {
                    live.entry(id).or_insert(f.id << 32 | position);
                }
            });
        }
        Box::new(
            ids.iter()
                .map(move |id| live.get(id).copied())
                .collect::<Vec<_>>()
                .into_iter(),
        )
    }
}

/// `items` (read from an index covering `covered` on `dataset`) with the stable row id
/// each holds at `row` replaced by its live row address; items without a live copy in a
/// covered fragment are dropped. `items` unchanged on a dataset without stable row ids.
pub(crate) fn resolve_rows<T>(
    dataset: &DatasetVersion,
    covered: Option<&RoaringBitmap>,
    deletions: &HashMap<u64, Arc<DeletionVector>>,
    mut items: Vec<T>,
    row: impl Fn(&mut T) -> &mut u64,
) -> Vec<T> {
    if !dataset.manifest().uses_stable_row_ids() {
        return items;
    }
    let resolver = RowIdResolver::new(dataset, deletions, covered.unwrap_or(&RoaringBitmap::new()));
    let ids: Vec<u64> = items.iter_mut().map(|i| *row(i)).collect();
    let addresses: Vec<Option<u64>> = resolver.addresses(&ids).collect();
    let mut kept = Vec::with_capacity(items.len());
    for (mut item, address) in items.drain(..).zip(addresses) {
        if let Some(a) = address {
            *row(&mut item) = a;
            kept.push(item);
        }
    }
    kept
}
