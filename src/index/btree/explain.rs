//! The `--explain` description of a planned BTree segment: coverage, lookup and page-data
//! files, chosen pages with their page-data rows and the disk byte ranges that hold them.

use std::collections::BTreeSet;
use std::ops::Range;

use crate::index::btree_file::layout::{PageDataLayout, IDS, VALUES};
use crate::index::btree_file::PageMatch;
use crate::lance::data_file::DataFileReader;

/// The `--explain` description of one planned BTree segment: coverage, lookup and
/// page-data files, chosen pages with their page-data rows and the disk byte ranges that
/// hold them.
pub(crate) fn explain_segment(s: &super::kind::PlannedSegment) -> serde_json::Value {
    use serde_json::json;
    let file_rows: Vec<u64> = s.opened.page_data.iter().map(|r| r.num_rows()).collect();
    let pages: Vec<serde_json::Value> = s
        .selection
        .iter()
        .map(|(page, kind)| {
            let (file, rows) = s
                .opened
                .lookup
                .page_rows(*page, &file_rows)
                .unwrap_or((0, 0..0));
            let disk = s
                .opened
                .page_data
                .get(file)
                .map(|r| disk_ranges(r, &rows, *kind))
                .unwrap_or_default();
            json!({
                "page": page,
                "match": if *kind == PageMatch::All { "all" } else { "some" },
                "file": s.opened.page_data.get(file).map(|r| r.path().to_string()),
                "rows": [rows.start, rows.end],
                "disk_page_ranges": disk,
            })
        })
        .collect();
    json!({
        "uuid": s.segment.uuid_string(),
        "index_version": s.segment.index_version,
        "fragments": s.coverage.iter().collect::<Vec<u32>>(),
        "page_lookup": {"path": s.opened.lookup_path.to_string(), "pages": s.opened.lookup.num_pages(), "batch_size": s.opened.lookup.batch_size},
        "page_data": s.opened.page_data.iter().map(|r| json!({"path": r.path().to_string(), "rows": r.num_rows(), "bytes": r.version().size, "legacy_v1": r.is_legacy()})).collect::<Vec<_>>(),
        "pages": pages,
    })
}

/// Byte ranges of the disk pages (both `values` and `ids` columns, or `ids` alone for
/// "all" pages) overlapping `rows`; the reader fetches chunk metadata and only the chunks
/// inside these.
fn disk_ranges(reader: &DataFileReader, rows: &Range<u64>, kind: PageMatch) -> Vec<[u64; 2]> {
    let names: &[&str] = if kind == PageMatch::All {
        &[IDS]
    } else {
        &[VALUES, IDS]
    };
    let Ok(layout) = PageDataLayout::of(reader) else {
        return Vec::new();
    };
    let Ok(fields) = reader.field_indices(&layout.names(names)) else {
        return Vec::new();
    };
    let mut out = BTreeSet::new();
    for f in fields {
        for b in reader.page_byte_ranges(f, rows.clone()) {
            out.insert([b.start, b.end]);
        }
    }
    out.into_iter().collect()
}
