//! Fuzz target `legacy_file`: arbitrary bytes opened as a legacy v1 Lance file (through the
//! version dispatch, so v2 bytes go to the v2 reader) and read back.

use std::sync::Arc;

use bytes::Bytes;

use super::{memory_object, runtime, MAX_ROWS};
use crate::index::btree_file::layout::{PageDataLayout, IDS, VALUES};
use crate::io::{FetchOptions, IoStats, RangeFetcher};
use crate::lance::data_file::DataFileReader;
use crate::lance::reader::{ReaderCaches, RowSelection};

/// `legacy_file`: the whole input is the file. Opens it, then reads up to `MAX_ROWS` rows of
/// every field as a range and as scattered rows (with a repeat); successful reads must have
/// the row counts asked for. Each field's page byte ranges must lie in the file, and a file
/// shaped like a BTree page-data file (legacy index files are) is read as the index reads it.
pub fn legacy_file(data: &[u8]) {
    let (source, path) = memory_object(Bytes::copy_from_slice(data));
    let fetcher = RangeFetcher::new(source, FetchOptions::default());
    runtime().block_on(async {
        let stats = IoStats::new();
        let caches = Arc::new(ReaderCaches::new(1 << 20, 1 << 20));
        let Ok(reader) = DataFileReader::open(fetcher, path, None, caches, None, &stats).await
        else {
            return;
        };
        let rows = reader.num_rows();
        let n = rows.min(MAX_ROWS);
        if let Ok(layout) = PageDataLayout::of(&reader) {
            if let Ok(cols) = reader.field_indices(&layout.names(&[VALUES, IDS])) {
                let _ = reader
                    .read_rows(&cols, &RowSelection::Range(0..n), &stats)
                    .await;
            }
        }
        for field in 0..reader.schema().fields.len() {
            for r in reader.page_byte_ranges(field, 0..rows) {
                assert!(
                    r.start < r.end && r.end <= data.len() as u64,
                    "page span {r:?}"
                );
            }
            let range = reader
                .read_rows(&[field], &RowSelection::Range(0..n), &stats)
                .await;
            if let Ok(batch) = range {
                assert_eq!(batch.num_rows() as u64, n, "range read row count");
            }
            if rows > 0 {
                let picks = vec![0, rows / 2, rows / 2, rows - 1];
                let take = reader
                    .read_rows(&[field], &RowSelection::Rows(picks), &stats)
                    .await;
                if let Ok(batch) = take {
                    assert_eq!(batch.num_rows(), 4, "take row count");
                }
            }
        }
    });
}
