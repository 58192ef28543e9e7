//! Read plans of 2.3 sparse nested pages (pylance fixtures `nested/v2_3_sparse/*`): a take
//! of rows that reach no leaf value (empty or null lists) fetches no value bytes at all and,
//! with the structural plan cached, sends no request; a take of rows that do reach values
//! fetches, in one round trip, exactly the value ranges the plan names for their leaf slots.
#![allow(clippy::single_range_in_vec_init)]

use crate::suite::read_support as support;

use std::ops::Range;
use std::sync::Arc;

use crate::io::wrappers::{ReadKind, RecordingSource};
use crate::io::{FetchOptions, IoStats, RangeFetcher};
use crate::lance::page::{PageInit, PageLayout};
use crate::lance::reader::{LanceFileReader, ReaderCaches, RowSelection};
use bytes::Bytes;
use support::{catalog, Backend};

/// One nested field's sparse pages (one per leaf column, page 0 of each).
struct SparseField {
    index: usize,
    name: String,
    pages: Vec<(PageLayout, PageInit, Range<u64>)>,
}

/// A reader of the fixture whose file metadata comes from a warm cache (as after an open
/// with the size from a manifest): no suffix bytes to serve pages from, so every page byte
/// it needs is fetched and recorded.
async fn open(relative: &str) -> (Arc<RecordingSource>, LanceFileReader, Vec<u8>) {
    let bytes = std::fs::read(support::fixtures_dir().join(relative)).expect("bytes");
    let (recording, path) = support::recording(Backend::Local, relative).await;
    let fetcher = RangeFetcher::new(
        Arc::<RecordingSource>::clone(&recording),
        FetchOptions::default(),
    );
    let caches = Arc::new(ReaderCaches::default().without_data_tails());
    let size = Some(bytes.len() as u64);
    LanceFileReader::open(
        fetcher.clone(),
        path.clone(),
        size,
        Arc::clone(&caches),
        &IoStats::new(),
    )
    .await
    .expect("open");
    let stats = IoStats::new();
    let reader = LanceFileReader::open(fetcher, path, size, caches, &stats)
        .await
        .expect("open");
    assert_eq!(stats.snapshot().requests, 0, "metadata cached");
    (recording, reader, bytes)
}

/// Nested fields whose every leaf column has a single sparse page.
fn sparse_fields(reader: &LanceFileReader, file: &[u8]) -> Vec<SparseField> {
    let mut out = Vec::new();
    for (index, field) in reader.schema().fields.iter().enumerate() {
        if field.is_flat_leaf() {
            continue;
        }
        let mut pages = Vec::new();
        for column in field.first_column..field.first_column + field.num_columns {
            let info = &reader.metadata().columns[column];
            if info.pages.len() != 1 {
                break;
            }
            let page = &info.pages[0];
            if !matches!(page.layout, PageLayout::Sparse(_)) {
                break;
            }
            let init_bytes: Vec<Bytes> = page
                .layout
                .init_ranges()
                .iter()
                .map(|r| Bytes::copy_from_slice(&file[r.start as usize..r.end as usize]))
                .collect();
            let init = page.layout.decode_init(&init_bytes).expect("init");
            pages.push((page.layout.clone(), init, page.rows.clone()));
        }
        if pages.len() == field.num_columns {
            out.push(SparseField {
                index,
                name: field.name.clone(),
                pages,
            });
        }
    }
    out
}

/// Rows of the page whose projection reaches no leaf slot, and rows that reach some.
fn split_rows(init: &PageInit, rows: u64) -> (Vec<u64>, Vec<u64>) {
    let PageInit::Sparse(sparse) = init else {
        panic!("not a sparse init")
    };
    let (mut empty, mut reaching) = (Vec::new(), Vec::new());
    for row in 0..rows {
        let projection = sparse.plan.project(&[row..row + 1]).expect("project");
        if projection.leaf_ranges.is_empty() {
            empty.push(row);
        } else {
            reaching.push(row);
        }
    }
    (empty, reaching)
}

fn every_few(rows: &[u64], n: usize) -> Vec<u64> {
    let step = (rows.len() / n).max(1);
    rows.iter().step_by(step).take(n).copied().collect()
}

/// Byte ranges read since the last clear, as sorted, merged ranges.
fn read_ranges(recording: &RecordingSource) -> Vec<Range<u64>> {
    let mut ranges: Vec<Range<u64>> = recording
        .take()
        .into_iter()
        .filter_map(|r| match r.kind {
            ReadKind::Range(range) => Some(range),
            _ => None,
        })
        .collect();
    merge(&mut ranges)
}

fn merge(ranges: &mut [Range<u64>]) -> Vec<Range<u64>> {
    ranges.sort_by_key(|r| r.start);
    let mut out: Vec<Range<u64>> = Vec::new();
    for r in ranges.iter() {
        match out.last_mut() {
            Some(last) if last.end >= r.start => last.end = last.end.max(r.end),
            _ => out.push(r.clone()),
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_rows_read_no_values_and_reaching_rows_read_only_their_chunks() {
    let mut checked_empty = 0;
    let mut checked_reaching = 0;
    for file in catalog()
        .iter()
        .filter(|f| f.path.starts_with("nested/v2_3_sparse/"))
    {
        let (recording, reader, bytes) = open(&file.path).await;
        for field in sparse_fields(&reader, &bytes) {
            let (_, init, rows) = &field.pages[0];
            let (empty, reaching) = split_rows(init, rows.end - rows.start);
            let what = format!("{} {}", file.path, field.name);
            let stats = IoStats::new();
            if !empty.is_empty() {
                let take = every_few(&empty, 10);
                // Cold: page init (structure) is read, no value byte is.
                recording.clear();
                let batch = reader
                    .read_rows(&[field.index], &RowSelection::Rows(take.clone()), &stats)
                    .await
                    .expect("read");
                assert_eq!(batch.num_rows(), take.len());
                let read = read_ranges(&recording);
                for (layout, init, _) in &field.pages {
                    let all_values = layout
                        .plan(init, std::slice::from_ref(rows))
                        .expect("plan")
                        .ranges;
                    for value in &all_values {
                        assert!(
                            !read
                                .iter()
                                .any(|r| r.start < value.end && value.start < r.end),
                            "{what}: rows {take:?} reach no value, yet {read:?} touches {value:?}"
                        );
                    }
                }
                // Warm: nothing at all.
                let before = stats.snapshot();
                reader
                    .read_rows(&[field.index], &RowSelection::Rows(take.clone()), &stats)
                    .await
                    .expect("read");
                let delta = stats.snapshot().since(&before);
                assert_eq!(delta.requests, 0, "{what}: warm take of empty rows");
                assert!(recording.is_empty(), "{what}");
                checked_empty += 1;
            }
            if !reaching.is_empty() {
                let take = every_few(&reaching, 3);
                reader
                    .read_rows(&[field.index], &RowSelection::Rows(take.clone()), &stats)
                    .await
                    .expect("warm-up");
                recording.clear();
                let before = stats.snapshot();
                reader
                    .read_rows(&[field.index], &RowSelection::Rows(take.clone()), &stats)
                    .await
                    .expect("read");
                let delta = stats.snapshot().since(&before);
                let local: Vec<Range<u64>> = take.iter().map(|&r| r..r + 1).collect();
                let mut planned: Vec<Range<u64>> = Vec::new();
                for (layout, init, _) in &field.pages {
                    planned.extend(layout.plan(init, &local).expect("plan").ranges);
                }
                let planned = merge(&mut planned);
                assert_eq!(read_ranges(&recording), planned, "{what}: rows {take:?}");
                let expected_round_trips = u64::from(!planned.is_empty());
                assert_eq!(delta.round_trips, expected_round_trips, "{what}");
                checked_reaching += 1;
            }
        }
    }
    assert!(
        checked_empty >= 5,
        "only {checked_empty} fields with empty rows"
    );
    assert!(
        checked_reaching >= 5,
        "only {checked_reaching} fields with reaching rows"
    );
}

/// The leaf columns of `detections` (label, confidence, area) repeat one list<struct>
/// structure in their own pages: loaded together, their page inits hold one shared plan
/// (equal plans are kept once).
#[tokio::test]
async fn leaf_columns_of_one_field_share_their_structural_plan() {
    let (_, reader, _) = open("nested/v2_3_sparse/detections.lance").await;
    let field = reader
        .schema()
        .field_index("detections")
        .expect("detections");
    let first = reader.schema().fields[field].first_column;
    let columns = reader.schema().fields[field].num_columns;
    assert_eq!(columns, 3, "label, confidence, area");
    let pages: Vec<(usize, usize)> = (first..first + columns).map(|c| (c, 0)).collect();
    let inits = reader.page_inits(&pages, &IoStats::new()).await.unwrap();
    let plans: Vec<_> = inits
        .iter()
        .map(|init| match &**init {
            PageInit::Sparse(s) => Arc::clone(&s.plan),
            other => panic!("not a sparse init: {other:?}"),
        })
        .collect();
    assert!(Arc::ptr_eq(&plans[0], &plans[1]) && Arc::ptr_eq(&plans[0], &plans[2]));
    // A take through the shared plan still answers like pylance (checked for all fixtures in
    // read_fixtures); here: every leaf's rows come back.
    let batch = reader
        .read_rows(
            &[field],
            &RowSelection::Rows(vec![0, 7, 4999]),
            &IoStats::new(),
        )
        .await
        .unwrap();
    assert_eq!(batch.num_rows(), 3);
}
