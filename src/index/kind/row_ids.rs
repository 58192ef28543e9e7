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

use roaring::{RoaringBitmap, RoaringTreemap};

use crate::lance::dataset::{DatasetVersion, IndexSegment};

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
