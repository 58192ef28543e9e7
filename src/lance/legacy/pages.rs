//! Where a legacy v1 file's pages lie, for explain output and read-size estimates: a page of
//! field `id` in batch `b` starts at its page-table position and ends where the next page
//! (of any field) starts, or at the data end. Legacy writers lay pages out back to back, so
//! these spans are the bytes each page occupies. Pure functions of the decoded file.

use std::ops::Range;

use super::format::{LegacyMetadata, PageTable};

/// The batches whose rows overlap `rows`.
pub(crate) fn batches_for(metadata: &LegacyMetadata, rows: &Range<u64>) -> Range<usize> {
    let offsets = &metadata.batch_offsets;
    let batches = metadata.num_batches();
    if rows.start >= rows.end {
        return 0..0;
    }
    // Batch b covers offsets[b]..offsets[b + 1]; find the first ending after rows.start and
    // the first starting at or after rows.end.
    let first = offsets
        .get(1..)
        .map_or(0, |ends| ends.partition_point(|&end| end <= rows.start));
    let end = offsets.get(..batches).map_or(0, |starts| {
        starts.partition_point(|&start| start < rows.end)
    });
    first.min(batches)..end.max(first).min(batches)
}

/// Byte spans of the pages of field `id` in `batches`: each from its position to the next
/// page position above it (or `data_end`). Empty spans are left out.
pub(crate) fn page_spans(
    table: &PageTable,
    id: i32,
    batches: Range<usize>,
    data_end: u64,
) -> Vec<Range<u64>> {
    let mut starts: Vec<u64> = table.pages.iter().map(|p| p.position).collect();
    starts.sort_unstable();
    starts.dedup();
    batches
        .filter_map(|b| table.page(id, b))
        .filter_map(|page| {
            let next = starts.partition_point(|&s| s <= page.position);
            let end = starts.get(next).copied().unwrap_or(data_end).min(data_end);
            (page.position < end).then_some(page.position..end)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lance::legacy::format::LegacyPage;

    fn metadata(offsets: &[u64]) -> LegacyMetadata {
        LegacyMetadata {
            batch_offsets: offsets.to_vec(),
            page_table_position: 0,
            manifest_position: None,
            has_statistics: false,
        }
    }

    #[test]
    fn batches_overlapping_rows() {
        let m = metadata(&[0, 4, 8, 10]);
        assert_eq!(batches_for(&m, &(0..1)), 0..1);
        assert_eq!(batches_for(&m, &(3..5)), 0..2);
        assert_eq!(batches_for(&m, &(4..8)), 1..2);
        assert_eq!(batches_for(&m, &(9..10)), 2..3);
        assert_eq!(batches_for(&m, &(10..12)), 3..3);
        assert_eq!(batches_for(&m, &(5..5)).len(), 0);
        assert_eq!(batches_for(&metadata(&[]), &(0..3)), 0..0);
        assert_eq!(batches_for(&metadata(&[0]), &(0..3)), 0..0);
    }

    #[test]
    fn spans_run_to_the_next_page_or_the_data_end() {
        // Two fields (ids 0, 1), two batches, laid out batch-major as the writer does.
        let page = |position, length| LegacyPage { position, length };
        let table = PageTable {
            first_field: 0,
            num_batches: 2,
            pages: vec![page(0, 4), page(100, 4), page(32, 4), page(132, 4)],
        };
        assert_eq!(page_spans(&table, 0, 0..2, 160), vec![0..32, 100..132]);
        assert_eq!(page_spans(&table, 1, 1..2, 160), vec![132..160]);
        // A data end below a page's position leaves it out; unknown fields have no pages.
        assert_eq!(page_spans(&table, 1, 0..2, 120), vec![32..100]);
        assert!(page_spans(&table, 5, 0..2, 160).is_empty());
    }
}
