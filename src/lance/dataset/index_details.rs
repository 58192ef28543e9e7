//! Index kinds of segments whose metadata carries no `index_details` (releases before
//! lance 0.20 or so wrote none): inferred from the column type and the segment's files, as
//! lance does — a list column's index is a LABEL_LIST, an index directory holding
//! `bitmap_page_lookup.lance` a BITMAP, one holding `page_lookup.lance` a BTREE. Segments
//! whose files say neither (vector and full-text indices) stay without a kind.

use futures::future::try_join_all;
use object_store::path::Path;

use crate::error::Result;
use crate::io::list::ListControl;
use crate::io::IoStats;
use crate::lance::dataset::manifest::{IndexSegment, Manifest};
use crate::lance::dataset::DatasetStore;

/// Details type URL lakeseek gives an inferred BTREE segment.
pub(crate) const INFERRED_BTREE: &str = "/lance.index.pb.BTreeIndexDetails";
/// Details type URL lakeseek gives an inferred BITMAP segment.
pub(crate) const INFERRED_BITMAP: &str = "/lance.index.pb.BitmapIndexDetails";
/// Details type URL lakeseek gives an inferred LABEL_LIST segment.
pub(crate) const INFERRED_LABEL_LIST: &str = "/lance.index.pb.LabelListIndexDetails";

const BITMAP_LOOKUP_FILE: &str = "bitmap_page_lookup.lance";
const BTREE_LOOKUP_FILE: &str = "page_lookup.lance";

/// Pure: the kind of a detail-less segment on a column of `logical_type` whose index
/// directory holds `files` (`None`: the files are needed, or say no scalar kind).
pub(crate) fn infer_kind(logical_type: &str, files: Option<&[String]>) -> Option<&'static str> {
    if logical_type.starts_with("list") || logical_type.starts_with("large_list") {
        return Some(INFERRED_LABEL_LIST);
    }
    let files = files?;
    let has = |name: &str| files.iter().any(|f| f == name);
    if has(BITMAP_LOOKUP_FILE) {
        Some(INFERRED_BITMAP)
    } else if has(BTREE_LOOKUP_FILE) {
        Some(INFERRED_BTREE)
    } else {
        None
    }
}

/// Give every detail-less segment of `manifest` its inferred kind: from the column type
/// alone where it says, else from the file names of its index directory (listed in one
/// concurrent wave; the manifest's own file list is used when it has one).
pub(crate) async fn infer_missing_details(
    manifest: &mut Manifest,
    store: &DatasetStore,
    root: &Path,
    stats: &IoStats,
) -> Result<()> {
    let needs_files: Vec<usize> = (0..manifest.indices.len())
        .filter(|&i| {
            let segment = &manifest.indices[i];
            segment.details_type_url.is_none()
                && infer_kind(&column_type(manifest, segment), None).is_none()
        })
        .collect();
    let listings = try_join_all(needs_files.iter().map(|&i| {
        let segment = &manifest.indices[i];
        segment_files(store, root, segment, stats)
    }))
    .await?;
    let mut listed = needs_files.into_iter().zip(listings);
    let mut next = listed.next();
    for i in 0..manifest.indices.len() {
        if manifest.indices[i].details_type_url.is_some() {
            continue;
        }
        let files = match &next {
            Some((at, files)) if *at == i => {
                let files = files.clone();
                next = listed.next();
                Some(files)
            }
            _ => None,
        };
        let logical_type = column_type(manifest, &manifest.indices[i]);
        if let Some(url) = infer_kind(&logical_type, files.as_deref()) {
            let segment = &mut manifest.indices[i];
            segment.details_type_url = Some(url.to_string());
            segment.details_inferred = true;
        }
    }
    Ok(())
}

/// Logical type of the segment's (first) indexed column ("" when unknown).
fn column_type(manifest: &Manifest, segment: &IndexSegment) -> String {
    segment
        .fields
        .first()
        .and_then(|&id| manifest.schema.field_by_id(id))
        .map(|f| f.logical_type.clone())
        .unwrap_or_default()
}

/// File names in the segment's index directory: the manifest's list, or one LIST.
async fn segment_files(
    store: &DatasetStore,
    root: &Path,
    segment: &IndexSegment,
    stats: &IoStats,
) -> Result<Vec<String>> {
    if !segment.files.is_empty() {
        return Ok(segment.files.iter().map(|f| f.path.clone()).collect());
    }
    let dir = root.clone().join("_indices").join(segment.uuid_string());
    let mut names = Vec::new();
    store
        .lister
        .list(&dir, stats, &mut |o| {
            if let Some(name) = o.path.filename() {
                names.push(name.to_string());
            }
            ListControl::Continue
        })
        .await?;
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn kinds_follow_lances_inference() {
        assert_eq!(infer_kind("list", None), Some(INFERRED_LABEL_LIST));
        assert_eq!(infer_kind("large_list", None), Some(INFERRED_LABEL_LIST));
        assert_eq!(infer_kind("string", None), None);
        let bitmap = names(&["bitmap_page_lookup.lance"]);
        assert_eq!(infer_kind("string", Some(&bitmap)), Some(INFERRED_BITMAP));
        let btree = names(&["page_lookup.lance", "page_data.lance"]);
        assert_eq!(infer_kind("int64", Some(&btree)), Some(INFERRED_BTREE));
        let vector = names(&["index.idx"]);
        assert_eq!(infer_kind("fixed_size_list:float:8", Some(&vector)), None);
    }
}
