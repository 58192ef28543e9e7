//! Reads every pylance-written fixture file (2.0, 2.1, 2.2, 2.3) and compares with pylance's own
//! decoded output: full reads, pylance's take lists, random row sets and ranges, over local
//! files and the in-memory store. Plus read-plan and round-trip assertions.

#[allow(dead_code)]
use crate::suite::common;
use crate::suite::read_support as support;

use std::ops::Range;

use crate::io::wrappers::{ReadKind, RecordingSource};
use crate::io::{FetchOptions, IoStats, RangeFetcher};
use crate::lance::page::{PageInit, PageLayout};
use crate::lance::reader::{LanceFileReader, ReaderCaches, RowSelection};
use crate::Error;
use arrow_array::{ArrayRef, RecordBatch, UInt64Array};
use std::sync::Arc;
use support::{
    assert_same, catalog, open, oracle_full, random_rows, read_ipc, source_for, Backend,
    FixtureFile,
};

/// Indices of all top-level fields (every fixture field is readable: flat, dense nested
/// and 2.3 sparse nested).
fn all_fields(reader: &LanceFileReader) -> Vec<usize> {
    (0..reader.schema().fields.len()).collect()
}

fn oracle_column(batch: &RecordBatch, name: &str) -> ArrayRef {
    Arc::clone(
        batch
            .column_by_name(name)
            .unwrap_or_else(|| panic!("oracle has no column {name}")),
    )
}

fn take(array: &ArrayRef, rows: &[u64]) -> ArrayRef {
    arrow_select::take::take(array.as_ref(), &UInt64Array::from(rows.to_vec()), None).expect("take")
}

async fn check_file(file: &FixtureFile, backend: Backend) {
    let (source, path) = source_for(backend, &file.path).await;
    check_file_on(file, source, path, &format!("{backend:?}")).await;
}

/// Everything `check_file` asserts, over any source (`backend` labels the messages).
async fn check_file_on(
    file: &FixtureFile,
    source: Arc<dyn crate::io::RangeSource>,
    path: object_store::path::Path,
    backend: &str,
) {
    let reader = open(source, path)
        .await
        .unwrap_or_else(|e| panic!("{}: open: {e}", file.path));
    assert_eq!(reader.num_rows(), file.rows, "{}", file.path);
    assert_eq!(
        reader.metadata().version.as_str(),
        file.version,
        "{}",
        file.path
    );
    let oracle = oracle_full(file);
    let fields = all_fields(&reader);
    let stats = IoStats::new();

    // The schema matches pylance's (types, nullability, field metadata; the forced-sparse
    // variant differs only by its top-level field metadata).
    for &i in &fields {
        let field = &reader.schema().fields[i];
        let theirs = oracle
            .schema()
            .field_with_name(&field.name)
            .expect("oracle field")
            .clone();
        if file.path.contains("v2_3_sparse") {
            assert_eq!(
                field.data_type,
                *theirs.data_type(),
                "{}: field {}",
                file.path,
                field.name
            );
        } else {
            assert_eq!(
                field.to_arrow(),
                theirs,
                "{}: field {}",
                file.path,
                field.name
            );
        }
    }

    // Full read of each field alone, then all fields together.
    for &i in &fields {
        let name = reader.schema().fields[i].name.clone();
        let what = format!("{} column {name} ({backend:?})", file.path);
        let batch = reader
            .read_rows(&[i], &RowSelection::Range(0..file.rows), &stats)
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_same(batch.column(0), &oracle_column(&oracle, &name), &what);
    }
    let all = reader
        .read_rows(&fields, &RowSelection::Range(0..file.rows), &stats)
        .await
        .expect("all columns");
    assert_eq!(all.num_columns(), fields.len());
    // A field asked for twice comes back twice.
    if let Some(&i) = fields.first() {
        let twice = reader
            .read_rows(&[i, i], &RowSelection::Rows(vec![0, file.rows - 1]), &stats)
            .await
            .expect("twice");
        assert_same(
            twice.column(0),
            twice.column(1),
            &format!("{} field twice", file.path),
        );
    }

    // pylance's take lists.
    let takes = read_ipc(&support::fixtures_dir().join(&file.oracle_take));
    assert_eq!(takes.len(), file.take_row_lists.len());
    for (rows, expected) in file.take_row_lists.iter().zip(&takes) {
        let batch = reader
            .read_rows(&fields, &RowSelection::Rows(rows.clone()), &stats)
            .await
            .expect("take");
        for (k, &i) in fields.iter().enumerate() {
            let name = &reader.schema().fields[i].name;
            assert_same(
                batch.column(k),
                &oracle_column(expected, name),
                &format!("{} take {rows:?} {name}", file.path),
            );
        }
    }

    // Random row sets (with a duplicate) and ranges, against the full oracle.
    for seed in 0..3u64 {
        let mut rows = random_rows(
            seed * 7919 + file.rows,
            file.rows,
            1 + (seed as usize * 17) % 40,
        );
        if let Some(&first) = rows.first() {
            rows.insert(0, first);
        }
        let a = (seed * 613) % file.rows;
        let b = (a + 1 + seed * 997).min(file.rows);
        let batch_rows = reader
            .read_rows(&fields, &RowSelection::Rows(rows.clone()), &stats)
            .await
            .expect("rows");
        let batch_range = reader
            .read_rows(&fields, &RowSelection::Range(a..b), &stats)
            .await
            .expect("range");
        for (k, &i) in fields.iter().enumerate() {
            let name = &reader.schema().fields[i].name;
            let full = oracle_column(&oracle, name);
            assert_same(
                batch_rows.column(k),
                &take(&full, &rows),
                &format!("{} rows {rows:?} {name}", file.path),
            );
            let expected = full.slice(a as usize, (b - a) as usize);
            assert_same(
                batch_range.column(k),
                &expected,
                &format!("{} range {a}..{b} {name}", file.path),
            );
        }
    }
    let empty = reader
        .read_rows(&fields, &RowSelection::Range(3..3), &stats)
        .await
        .expect("empty read");
    assert_eq!(empty.num_rows(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fixture_matches_pylance_on_local_files() {
    for file in catalog() {
        check_file(&file, Backend::Local).await;
    }
}

/// The same checks over the real S3 HTTP protocol: every fixture uploaded to the in-process
/// S3 server (s3s, 127.0.0.1) and read through `open_url` with storage options.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fixture_matches_pylance_over_s3() {
    let s3 = common::S3TestServer::start().await;
    let files = catalog();
    for file in &files {
        let bytes = std::fs::read(support::fixtures_dir().join(&file.path)).expect("fixture bytes");
        s3.put(&format!("fixtures/{}", file.path), bytes).await;
    }
    for file in &files {
        let opened = s3.open(&format!("fixtures/{}", file.path));
        check_file_on(file, Arc::clone(&opened.source), opened.path.clone(), "S3").await;
    }
    let http = s3.http_counts();
    assert!(http.requests > 0, "reads went over HTTP: {http:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fixture_matches_pylance_in_memory() {
    for file in catalog() {
        check_file(&file, Backend::Memory).await;
    }
}

/// A chunk of a mini-block page: page-local items and absolute bytes.
struct Chunk {
    items: Range<u64>,
    bytes: Range<u64>,
}

/// (field, column, page) of the first flat mini-block page with at least three chunks,
/// with its chunk table decoded from the file bytes.
fn multi_chunk_page(
    reader: &LanceFileReader,
    bytes: &[u8],
) -> Option<(usize, usize, usize, Vec<Chunk>)> {
    for (field_index, field) in reader.schema().fields.iter().enumerate() {
        if !field.is_flat_leaf() {
            continue;
        }
        let column = field.first_column;
        for (p, page) in reader.metadata().columns[column].pages.iter().enumerate() {
            let PageLayout::MiniBlock(mini) = &page.layout else {
                continue;
            };
            let init_bytes: Vec<bytes::Bytes> = page
                .layout
                .init_ranges()
                .iter()
                .map(|r| bytes::Bytes::copy_from_slice(&bytes[r.start as usize..r.end as usize]))
                .collect();
            let Ok(PageInit::MiniBlock(init)) = page.layout.decode_init(&init_bytes) else {
                continue;
            };
            if init.chunks.chunks.len() >= 3 {
                let chunks = init
                    .chunks
                    .chunks
                    .iter()
                    .map(|c| Chunk {
                        items: c.item_start..c.item_start + c.items,
                        bytes: mini.chunk_data.start + c.byte_start
                            ..mini.chunk_data.start + c.byte_start + c.bytes,
                    })
                    .collect();
                return Some((field_index, column, p, chunks));
            }
        }
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_files_are_read_from_the_open_suffix_read_alone() {
    let mut checked = 0;
    for file in catalog().iter() {
        let size = std::fs::metadata(support::fixtures_dir().join(&file.path))
            .expect("size")
            .len();
        if size > 64 * 1024 {
            continue;
        }
        let (recording, path) = support::recording(Backend::Local, &file.path).await;
        let fetcher = RangeFetcher::new(
            Arc::<RecordingSource>::clone(&recording),
            FetchOptions::default(),
        );
        let stats = IoStats::new();
        let reader = LanceFileReader::open(
            fetcher,
            path,
            None,
            Arc::new(ReaderCaches::default()),
            &stats,
        )
        .await
        .expect("open");
        let batch = reader
            .read_rows(
                &all_fields(&reader),
                &RowSelection::Range(0..reader.num_rows()),
                &stats,
            )
            .await
            .expect("read");
        assert_eq!(batch.num_rows() as u64, reader.num_rows());
        let total = stats.snapshot();
        assert_eq!(
            (total.requests, total.round_trips, total.bytes),
            (1, 1, size),
            "{}: open + full read of a {size}-byte file",
            file.path
        );
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} small fixtures");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_few_rows_fetch_only_their_chunks_in_three_cold_and_one_warm_round_trip() {
    let mut checked = 0;
    for file in catalog().iter().filter(|f| f.path.starts_with("v2_")) {
        let bytes = std::fs::read(support::fixtures_dir().join(&file.path)).expect("bytes");
        let (recording, path) = support::recording(Backend::Local, &file.path).await;
        let stats = IoStats::new();
        let reader = support::open_with_cached_metadata(&recording, path, bytes.len() as u64).await;
        assert_eq!(stats.snapshot().round_trips, 0, "{}: open", file.path);
        let Some((field, column, page, chunks)) = multi_chunk_page(&reader, &bytes) else {
            continue;
        };
        let page_start = reader.metadata().columns[column].pages[page].rows.start;
        // The second row of the first chunk and the last row of the last chunk.
        let first = &chunks[0];
        let last = chunks.last().expect("chunks");
        let rows = vec![
            page_start + first.items.start + 1,
            page_start + last.items.end - 1,
        ];
        recording.clear();
        let before = stats.snapshot();
        let batch = reader
            .read_rows(&[field], &RowSelection::Rows(rows.clone()), &stats)
            .await
            .expect("read");
        assert_eq!(batch.num_rows(), 2);
        let cold = stats.snapshot().since(&before);
        // Metadata cached (so no suffix bytes to serve from): page init, then chunks.
        assert_eq!(cold.round_trips, 2, "{}: {cold:?}", file.path);
        let data = first.bytes.start..last.bytes.end;
        let data_reads: Vec<Range<u64>> = recording
            .take()
            .into_iter()
            .filter_map(|r| match r.kind {
                ReadKind::Range(range) if range.start < data.end && data.start < range.end => {
                    Some(range)
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            data_reads,
            vec![first.bytes.clone(), last.bytes.clone()],
            "{}: exactly the two chunks",
            file.path
        );

        // Warm: page init cached, one round trip for the same chunk bytes.
        let before = stats.snapshot();
        reader
            .read_rows(&[field], &RowSelection::Rows(rows), &stats)
            .await
            .expect("warm read");
        let warm = stats.snapshot().since(&before);
        assert_eq!(warm.round_trips, 1, "{}: warm {warm:?}", file.path);
        let chunk_bytes =
            (first.bytes.end - first.bytes.start) + (last.bytes.end - last.bytes.start);
        assert_eq!(warm.bytes, chunk_bytes, "{}", file.path);
        checked += 1;
    }
    assert!(
        checked >= 6,
        "only {checked} files have a multi-chunk mini-block page"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_is_one_suffix_read_and_cached_metadata_needs_none() {
    let file = catalog()
        .into_iter()
        .find(|f| f.path == "v2_2/strings.lance")
        .expect("strings 2.2");
    let (recording, path) = support::recording(Backend::Memory, &file.path).await;
    let caches = Arc::new(ReaderCaches::default().without_data_tails());
    let stats = IoStats::new();
    let fetcher = RangeFetcher::new(
        Arc::<RecordingSource>::clone(&recording),
        FetchOptions::default(),
    );
    let reader = LanceFileReader::open(
        fetcher.clone(),
        path.clone(),
        None,
        Arc::clone(&caches),
        &stats,
    )
    .await
    .expect("open");
    let reads = recording.take();
    assert_eq!(reads.len(), 1, "{reads:?}");
    assert_eq!(reads[0].kind, ReadKind::Suffix(64 * 1024));
    // With the size known and the metadata cached: no request at all.
    let size = reader.metadata().object_size;
    let stats2 = IoStats::new();
    LanceFileReader::open(fetcher, path, Some(size), Arc::clone(&caches), &stats2)
        .await
        .expect("open again");
    LanceFileReader::open(
        RangeFetcher::new(
            Arc::<RecordingSource>::clone(&recording),
            FetchOptions::default(),
        ),
        reader.path().clone(),
        Some(size),
        caches,
        &stats2,
    )
    .await
    .expect("open a third time");
    assert_eq!(
        stats2.snapshot().requests,
        0,
        "the entry the unhinted open decoded serves opens with a size hint"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_columns_and_bad_selections_are_invalid_arguments() {
    let file = catalog()
        .into_iter()
        .find(|f| f.path == "v2_1/ints.lance")
        .expect("ints 2.1");
    let (source, path) = source_for(Backend::Memory, &file.path).await;
    let reader = open(source, path).await.expect("open");
    let stats = IoStats::new();
    assert!(matches!(
        reader.field_indices(&["nope"]),
        Err(Error::NotFound { .. })
    ));
    let n = reader.num_rows();
    for selection in [
        RowSelection::Range(0..n + 1),
        RowSelection::Rows(vec![2, 1]),
        RowSelection::Rows(vec![n]),
    ] {
        let err = reader
            .read_rows(&[0], &selection, &stats)
            .await
            .expect_err("bad selection");
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    }
    let err = reader
        .read_rows(&[999], &RowSelection::Range(0..1), &stats)
        .await
        .expect_err("bad column");
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    assert_eq!(
        stats.snapshot().requests,
        0,
        "bad arguments are rejected before any I/O"
    );
}

/// Our layout name for the catalog's `summary.layout`.
fn expected_layout(catalog_layout: &str, all_null: bool) -> String {
    match catalog_layout {
        "mini_block_layout" | "planar_dense_chunked" => "mini-block".into(),
        "full_zip_layout" | "planar_dense_zipped" => "full-zip".into(),
        "constant_layout" if all_null => "all-null".into(),
        "constant_layout" | "planar_dense_constant" => "constant".into(),
        "planar_dense_none" => "all-null".into(),
        "array_encoding_v2_0" => "2.0".into(),
        other => match other.strip_prefix("planar_sparse_") {
            Some(values) => format!("sparse({values})"),
            None => panic!("unknown catalog layout {other}"),
        },
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspect_matches_the_catalog_page_by_page() {
    let text =
        std::fs::read_to_string(support::fixtures_dir().join("catalog.json")).expect("catalog");
    let json: serde_json::Value = serde_json::from_str(&text).expect("json");
    let mut pages_checked = 0;
    for entry in json["files"].as_array().expect("files") {
        let relative = entry["path"].as_str().expect("path");
        let (source, path) = source_for(Backend::Memory, relative).await;
        let reader = open(source, path).await.expect("open");
        let inspection = reader.inspect();
        assert_eq!(
            inspection.version,
            entry["version"].as_str().expect("version")
        );
        assert_eq!(
            inspection.object_size,
            entry["file_size"].as_u64().expect("size")
        );
        let columns = entry["physical_columns"]
            .as_array()
            .expect("physical columns");
        assert_eq!(inspection.columns.len(), columns.len(), "{relative}");
        for (ours, theirs) in inspection.columns.iter().zip(columns) {
            assert_eq!(
                ours.field,
                theirs["leaf"].as_str().expect("leaf"),
                "{relative}"
            );
            let pages = theirs["pages"].as_array().expect("pages");
            assert_eq!(ours.pages.len(), pages.len(), "{relative} {}", ours.field);
            if inspection.version != "2.0" {
                // 2.0 columns count their own rows (a list's item column counts items).
                assert_eq!(ours.rows, inspection.num_rows, "{relative} {}", ours.field);
            }
            for (page, expected) in ours.pages.iter().zip(pages) {
                let buffers: Vec<Range<u64>> = expected["buffers"]
                    .as_array()
                    .expect("buffers")
                    .iter()
                    .map(|b| {
                        let p = b[0].as_u64().expect("pos");
                        p..p + b[1].as_u64().expect("size")
                    })
                    .collect();
                assert_eq!(page.buffers, buffers, "{relative} {}", ours.field);
                let layout = expected["summary"]["layout"].as_str().expect("layout");
                let all_null = expected["layouts"]
                    .as_array()
                    .is_some_and(|l| l.iter().any(|t| t == "constant_layout_all_null"));
                let ours_layout = match page.layout.split_once(' ') {
                    Some(("2.0", _)) => "2.0".to_string(),
                    _ => page.layout.clone(),
                };
                assert_eq!(
                    ours_layout,
                    expected_layout(layout, all_null),
                    "{relative} {}: {}",
                    ours.field,
                    page.compression
                );
                assert!(!page.compression.is_empty());
                pages_checked += 1;
            }
        }
        let json = serde_json::to_string(&inspection).expect("inspection serializes");
        assert!(json.contains("\"pages\""));
    }
    assert!(pages_checked > 400, "{pages_checked}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_row_of_a_list_column_fetches_only_the_chunks_holding_it() {
    let mut checked = 0;
    for file in catalog()
        .iter()
        .filter(|f| f.path.starts_with("nested/v2_2") || f.path.starts_with("nested/v2_3/"))
    {
        let bytes = std::fs::read(support::fixtures_dir().join(&file.path)).expect("bytes");
        let (recording, path) = support::recording(Backend::Local, &file.path).await;
        let stats = IoStats::new();
        let reader = support::open_with_cached_metadata(&recording, path, bytes.len() as u64).await;
        for (field_index, field) in reader.schema().fields.iter().enumerate() {
            if field.is_flat_leaf() {
                continue;
            }
            // The field's first leaf column, page 0, when it is a multi-chunk list page.
            let column = field.first_column;
            let page = &reader.metadata().columns[column].pages[0];
            let PageLayout::MiniBlock(mini) = &page.layout else {
                continue;
            };
            let init_bytes: Vec<bytes::Bytes> = page
                .layout
                .init_ranges()
                .iter()
                .map(|r| bytes::Bytes::copy_from_slice(&bytes[r.start as usize..r.end as usize]))
                .collect();
            let PageInit::MiniBlock(init) = page.layout.decode_init(&init_bytes).expect("init")
            else {
                continue;
            };
            let Some(chunk_rows) = &init.rows else {
                continue;
            };
            if chunk_rows.len() < 3 {
                continue;
            }
            let row = page.rows.start + (page.rows.end - page.rows.start) / 2;
            let local = row - page.rows.start;
            let holding: Vec<usize> = (0..chunk_rows.len())
                .filter(|&c| chunk_rows[c].touching().contains(&local))
                .collect();
            let first = &init.chunks.chunks[holding[0]];
            let last = &init.chunks.chunks[*holding.last().expect("a chunk")];
            let expected = mini.chunk_data.start + first.byte_start
                ..mini.chunk_data.start + last.byte_start + last.bytes;
            // Warm the page init, then read the row alone.
            reader
                .read_rows(&[field_index], &RowSelection::Rows(vec![row]), &stats)
                .await
                .expect("read");
            recording.clear();
            let before = stats.snapshot();
            let batch = reader
                .read_rows(&[field_index], &RowSelection::Rows(vec![row]), &stats)
                .await
                .expect("read");
            assert_eq!(batch.num_rows(), 1);
            let delta = stats.snapshot().since(&before);
            assert_eq!(delta.round_trips, 1, "{} {}", file.path, field.name);
            let data = mini.chunk_data.clone();
            let touched: Vec<Range<u64>> = recording
                .take()
                .into_iter()
                .filter_map(|r| match r.kind {
                    ReadKind::Range(range) if range.start < data.end && data.start < range.end => {
                        Some(range)
                    }
                    _ => None,
                })
                .collect();
            assert_eq!(
                touched,
                vec![expected],
                "{} {}: only the chunks of row {row}",
                file.path,
                field.name
            );
            checked += 1;
        }
    }
    assert!(checked >= 2, "only {checked} multi-chunk list pages");
}
