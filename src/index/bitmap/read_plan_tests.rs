//! Read-plan tests on `scalar_wide.lance` (a 230 KB bitmap lookup, a 256-row zone map):
//! a bitmap point lookup reads a small part of the lookup file (never the whole file,
//! never the bitmaps of other keys' chunks far away), and a zone-map range reads only the
//! candidate zones' rows of the column.

use std::ops::Range;
use std::sync::Arc;

use super::tests::fixture;
use super::*;
use crate::index::bitmap_file::exec;
use crate::index::bitmap_file::exec::open_bitmap_file;
use crate::index::key::Key;
use crate::io::list::{ObjectLister, ObjectStoreLister};
use crate::io::wrappers::{ReadKind, RecordingSource};
use crate::io::{open_url, RangeSource};
use crate::lance::dataset::{DatasetSession, DatasetStore};

fn wide_path() -> String {
    format!(
        "{}/tests/fixtures/datasets/scalar_wide.lance",
        env!("CARGO_MANIFEST_DIR")
    )
}

async fn open_recorded() -> (DatasetVersion, Arc<RecordingSource>) {
    let opened = open_url(&wide_path(), &[]).unwrap();
    let recorder = Arc::new(RecordingSource::new(Arc::clone(&opened.source)));
    let lister: Arc<dyn ObjectLister> = Arc::new(ObjectStoreLister::for_scheme(
        Arc::clone(&opened.store),
        &opened.scheme,
    ));
    let store = DatasetStore::new(Arc::clone(&recorder) as Arc<dyn RangeSource>, lister);
    let session = Arc::new(DatasetSession::new(64 << 20));
    let dataset = DatasetVersion::open(store, opened.path.clone(), None, session, &IoStats::new())
        .await
        .unwrap();
    (dataset, recorder)
}

fn bytes_of(recorder: &RecordingSource, path: &str) -> (u64, usize, bool) {
    let reads: Vec<_> = recorder
        .reads()
        .into_iter()
        .filter(|r| r.path == path)
        .collect();
    let whole = reads.iter().any(|r| r.kind == ReadKind::Whole);
    let bytes = reads
        .iter()
        .filter_map(|r| r.bytes.clone())
        .map(|r: Range<u64>| r.end - r.start)
        .sum();
    (bytes, reads.len(), whole)
}

#[tokio::test]
async fn bitmap_point_lookup_reads_a_small_part_of_the_lookup() {
    let (dataset, recorder) = open_recorded().await;
    let segment = fixture::segment(&dataset, "k");
    let path = dataset
        .index_file_path(&segment, exec::BITMAP_LOOKUP_FILE)
        .unwrap()
        .to_string();
    let size = segment.file_size(exec::BITMAP_LOOKUP_FILE).unwrap();
    recorder.clear();
    let stats = IoStats::new();
    let file = open_bitmap_file(&dataset, &segment, &stats).await.unwrap();
    exec::prefetch_page_inits(&file, &stats).await.unwrap();
    let q = LeafQuery::Equals(Key::Int(20993));
    let a = answer_bitmap(&dataset, &file, &q, false, &stats)
        .await
        .unwrap();
    assert_eq!(a.true_rows.len(), 2);
    let (bytes, requests, whole) = bytes_of(&recorder, &path);
    assert!(!whole, "the whole lookup was read");
    assert!(
        bytes * 2 < size,
        "{bytes} of {size} bytes read in {requests} requests"
    );
    // The 11 KB keys column is read in one round (cheaper than probing it).
    assert_eq!(a.read.search_rounds, 1, "{:?}", a.read);
    // Round trips after the open: page init, keys (≤ 2 rounds), bitmaps.
    assert!(stats.snapshot().round_trips <= 5, "{:?}", stats.snapshot());
}

#[tokio::test]
async fn zonemap_range_reads_only_candidate_zone_rows() {
    let (dataset, recorder) = open_recorded().await;
    let fragment = &dataset.manifest().fragments[0];
    let data_path = dataset.data_file_path(&fragment.files[0]).to_string();
    let data_size = fragment.files[0].size_bytes.unwrap();
    let filter = "t >= TIMESTAMP '2024-01-01 10:00:00' AND t < TIMESTAMP '2024-01-01 10:10:00'";
    recorder.clear();
    let stats = IoStats::new();
    let plan = crate::index::filter::plan_filter(&dataset, filter, Default::default(), &stats)
        .await
        .unwrap();
    let explain = plan.explain().to_string();
    assert!(
        explain.contains("\"candidate_zones\":1") || explain.contains("\"candidate_zones\":2"),
        "{explain}"
    );
    let got = crate::index::filter::execute_filter(&dataset, &plan, &stats)
        .await
        .unwrap();
    assert_eq!(got.iter().collect::<Vec<_>>(), fixture_answer(filter));
    let (_, _, whole) = bytes_of(&recorder, &data_path);
    assert!(!whole);
    // Beyond the open's suffix read, only chunks of the candidate zones' rows.
    let ranged: u64 = recorder
        .reads()
        .into_iter()
        .filter(|r| r.path == data_path && matches!(r.kind, ReadKind::Range(_)))
        .filter_map(|r| r.bytes)
        .map(|r| r.end - r.start)
        .sum();
    assert!(
        ranged * 8 < data_size,
        "{ranged} of {data_size} data-file bytes"
    );
}

#[tokio::test]
async fn bitmap_point_lookup_through_the_engine() {
    let (dataset, recorder) = open_recorded().await;
    let segment = fixture::segment(&dataset, "k");
    let path = dataset
        .index_file_path(&segment, exec::BITMAP_LOOKUP_FILE)
        .unwrap()
        .to_string();
    let size = segment.file_size(exec::BITMAP_LOOKUP_FILE).unwrap();
    recorder.clear();
    let stats = IoStats::new();
    let got = crate::index::filter::filter_row_addresses(
        &dataset,
        "k = 20993",
        Default::default(),
        &stats,
    )
    .await
    .unwrap();
    assert_eq!(got.iter().collect::<Vec<_>>(), fixture_answer("k = 20993"));
    let (bytes, _, whole) = bytes_of(&recorder, &path);
    assert!(!whole && bytes * 2 < size, "{bytes} of {size}");
    assert!(stats.snapshot().round_trips <= 5, "{:?}", stats.snapshot());
}

fn fixture_answer(filter: &str) -> Vec<u64> {
    let text = std::fs::read_to_string(format!(
        "{}/tests/fixtures/datasets/scalar_answers.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let q = doc["datasets"]["scalar_wide"]["queries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["filter"] == filter)
        .unwrap()
        .clone();
    let mut acc = 0;
    q["addr_deltas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            acc += d.as_u64().unwrap();
            acc
        })
        .collect()
}
