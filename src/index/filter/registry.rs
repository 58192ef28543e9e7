//! The index kinds lakeseek reads: the one list the engine chooses from.

use crate::index::kind::IndexKind;
use crate::lance::dataset::IndexSegment;

/// Every index kind lakeseek reads, in order of preference (exact kinds first). Add a new
/// kind here.
pub(crate) fn index_kinds() -> Vec<Box<dyn IndexKind>> {
    vec![
        Box::new(crate::index::btree::kind::BTreeKind),
        Box::new(crate::index::bitmap::kind::BitmapKind),
        Box::new(crate::index::label_list::kind::LabelListKind),
        Box::new(crate::index::list_element::kind::ListElementKind),
        Box::new(crate::index::zonemap::kind::ZoneMapKind),
        Box::new(crate::index::bloom::kind::BloomKind),
        Box::new(crate::index::ngram::kind::NgramKind),
    ]
}

/// The kind that reads `segment` (the first in order of preference), if any: the one that
/// prewarms it.
pub(crate) fn kind_reading(segment: &IndexSegment) -> Option<Box<dyn IndexKind>> {
    index_kinds().into_iter().find(|kind| kind.reads(segment))
}
