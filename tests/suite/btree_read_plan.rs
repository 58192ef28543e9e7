//! Read-plan tests: a selective BTree query fetches the page lookup and the page-data
//! metadata in one wave, then only the mini-block chunks of the pages it selected — the
//! chunks holding other BTree pages are never fetched — and warm queries cost one wave
//! (zero with the page cache).

use crate::suite::common::recorded::{self, Recorded};
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use crate::io::wrappers::ReadKind;
use crate::io::{open_url, FetchOptions, IoStats, RangeFetcher};
use crate::lance::dataset::{DatasetSession, DatasetVersion};
use crate::lance::reader::{LanceFileReader, ReaderCaches};
use crate::suite::common::btree_query::{
    execute_plan, plan_query, query_row_addresses, QueryOptions,
};
use bytes::Bytes;
use serde_json::Value;

fn wide_dir() -> PathBuf {
    crate::suite::common::fixture("datasets/wide.lance")
}

fn wide_queries() -> Vec<(String, u64)> {
    let text = std::fs::read_to_string(wide_dir().parent().unwrap().join("answers.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc["datasets"]["wide"]["queries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            (
                q["filter"].as_str().unwrap().to_string(),
                q["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

async fn open_recorded(session: Arc<DatasetSession>, stats: &IoStats) -> Recorded {
    recorded::open_recorded(&wide_dir(), session, stats, |s| s)
        .await
        .unwrap()
}

/// For every BTree page (4096 rows) of page_data.lance: the byte ranges of the mini-block
/// chunks holding its rows, in both columns (computed independently from the file).
async fn chunk_ranges_per_page(
    page_data: &std::path::Path,
    pages: u64,
) -> (String, BTreeMap<u64, Vec<Range<u64>>>) {
    let opened = open_url(page_data.to_str().unwrap(), &[]).unwrap();
    let fetcher = RangeFetcher::new(Arc::clone(&opened.source), FetchOptions::default());
    let stats = IoStats::new();
    let reader = LanceFileReader::open(
        fetcher,
        opened.path.clone(),
        None,
        Arc::new(ReaderCaches::default()),
        &stats,
    )
    .await
    .unwrap();
    let bytes = std::fs::read(page_data).unwrap();
    let mut out: BTreeMap<u64, Vec<Range<u64>>> = BTreeMap::new();
    for column in &reader.metadata().columns {
        assert!(!column.pages.is_empty());
        for page in &column.pages {
            let init_bytes: Vec<Bytes> = page
                .layout
                .init_ranges()
                .iter()
                .map(|r| Bytes::copy_from_slice(&bytes[r.start as usize..r.end as usize]))
                .collect();
            let init = page.layout.decode_init(&init_bytes).unwrap();
            for p in 0..pages {
                let rows = p * 4096..((p + 1) * 4096).min(reader.num_rows());
                let local = rows.start.max(page.rows.start)..rows.end.min(page.rows.end);
                if local.start >= local.end {
                    continue;
                }
                let local = local.start - page.rows.start..local.end - page.rows.start;
                let plan = page.layout.plan(&init, &[local]).unwrap();
                out.entry(p).or_default().extend(plan.ranges);
            }
        }
    }
    (opened.path.to_string(), out)
}

fn overlaps(a: &Range<u64>, b: &Range<u64>) -> bool {
    a.start < b.end && b.start < a.end
}

#[tokio::test]
async fn point_query_reads_only_its_pages_chunks_and_lookup_with_tail_in_one_wave() {
    let session = Arc::new(DatasetSession::default());
    let open_stats = IoStats::new();
    let rec = open_recorded(Arc::clone(&session), &open_stats).await;
    assert_eq!(open_stats.snapshot().round_trips, 2, "list + manifest");
    let segment = rec
        .dataset
        .manifest()
        .indices
        .iter()
        .find(|s| s.name == "key_idx")
        .unwrap()
        .clone();
    let page_data = wide_dir()
        .join("_indices")
        .join(segment.uuid_string())
        .join("page_data.lance");
    let (data_path, chunks) = chunk_ranges_per_page(&page_data, 15).await;
    let distinct: std::collections::BTreeSet<_> = chunks
        .values()
        .flatten()
        .map(|r| (r.start, r.end))
        .collect();
    assert!(
        distinct.len() >= 10,
        "fixture must have many chunks, has {}",
        distinct.len()
    );

    // key on BTree page 7 (row 7 * 4096 + 100 of the sorted keys).
    let (filter, count) = wide_queries()[1].clone();
    rec.recorder.clear();
    let stats = IoStats::new();
    let plan = plan_query(&rec.dataset, &filter, QueryOptions::default(), &stats)
        .await
        .unwrap();
    assert_eq!(
        stats.snapshot().round_trips,
        1,
        "lookup and page-data tail in one wave"
    );
    assert_eq!(stats.snapshot().requests, 2);
    assert_eq!(segment_pages(&plan)[0], vec![7]);
    let answer = execute_plan(&rec.dataset, &plan, &stats).await.unwrap();
    assert_eq!(answer.row_addresses.len(), count);
    assert_eq!(stats.snapshot().round_trips, 3, "+ page init + chunks");

    // Ranged reads only: the 64 KiB metadata tail read at open may cover chunks near the
    // end of the file, but it is the same for every query.
    let fetched: Vec<Range<u64>> = rec
        .recorder
        .reads()
        .into_iter()
        .filter(|r| r.path == data_path && matches!(r.kind, ReadKind::Range(_)))
        .filter_map(|r| r.bytes)
        .collect();
    let mine: Vec<Range<u64>> = chunks[&7].clone();
    assert!(
        fetched.iter().any(|f| mine.iter().any(|m| overlaps(f, m))),
        "page 7's chunks were read"
    );
    for (page, ranges) in &chunks {
        if (6..=8).contains(page) {
            continue;
        }
        for r in ranges.iter().filter(|r| !mine.iter().any(|m| m == *r)) {
            assert!(
                !fetched.iter().any(|f| overlaps(f, r)),
                "chunk {r:?} of BTree page {page} was fetched for a key on page 7 (fetched {fetched:?})"
            );
        }
    }
    let total: u64 = fetched.iter().map(|r| r.end - r.start).sum();
    let size = std::fs::metadata(&page_data).unwrap().len();
    assert!(
        total < size / 3,
        "read {total} of {size} bytes of page_data"
    );

    // Warm: lookup, metadata and page init cached -> one wave of chunk reads.
    let (filter, count) = wide_queries()[2].clone();
    let warm = IoStats::new();
    let a = query_row_addresses(&rec.dataset, &filter, QueryOptions::default(), &warm)
        .await
        .unwrap();
    assert_eq!(a.row_addresses.len(), count);
    assert!(
        warm.snapshot().round_trips <= 2,
        "warm query on a new disk page: init + chunks, got {:?}",
        warm.snapshot()
    );
    // The same key again: page init and the decoded page are cached (the default session
    // caches index pages): nothing is read.
    let again = IoStats::new();
    rec.recorder.clear();
    let b = query_row_addresses(&rec.dataset, &filter, QueryOptions::default(), &again)
        .await
        .unwrap();
    assert_eq!(b.row_addresses, a.row_addresses);
    let snap = again.snapshot();
    assert_eq!(
        (snap.requests, snap.round_trips),
        (0, 0),
        "warm repeat, page cached: no read: {:#?}",
        rec.recorder.reads()
    );
    assert!(rec.recorder.reads().is_empty());
}

#[tokio::test]
async fn page_cache_answers_repeated_pages_without_requests() {
    let session = Arc::new(DatasetSession::default().with_page_cache(64 << 20));
    let stats = IoStats::new();
    let rec = open_recorded(session, &stats).await;
    for (filter, count) in wide_queries() {
        let first = IoStats::new();
        let a = query_row_addresses(&rec.dataset, &filter, QueryOptions::default(), &first)
            .await
            .unwrap();
        assert_eq!(a.row_addresses.len(), count, "{filter}");
        let second = IoStats::new();
        let b = query_row_addresses(&rec.dataset, &filter, QueryOptions::default(), &second)
            .await
            .unwrap();
        assert_eq!(a.row_addresses, b.row_addresses);
        assert_eq!(
            second.snapshot().requests,
            0,
            "{filter}: {:?}",
            second.snapshot()
        );
        assert_eq!(b.cached_pages, rec_pages(&rec.dataset, &filter).await);
    }
}

async fn rec_pages(dataset: &DatasetVersion, filter: &str) -> usize {
    let plan = plan_query(dataset, filter, QueryOptions::default(), &IoStats::new())
        .await
        .unwrap();
    segment_pages(&plan).iter().map(Vec::len).sum()
}

#[tokio::test]
async fn in_list_reads_all_its_pages_in_one_chunk_wave() {
    let session = Arc::new(DatasetSession::default());
    let stats = IoStats::new();
    let rec = open_recorded(session, &stats).await;
    let (filter, count) = wide_queries()[5].clone();
    let q = IoStats::new();
    let plan = plan_query(&rec.dataset, &filter, QueryOptions::default(), &q)
        .await
        .unwrap();
    let pages: Vec<u32> = segment_pages(&plan)[0].clone();
    assert_eq!(pages.len(), 3, "three keys on three pages: {pages:?}");
    let a = execute_plan(&rec.dataset, &plan, &q).await.unwrap();
    assert_eq!(a.row_addresses.len(), count);
    assert_eq!(
        q.snapshot().round_trips,
        3,
        "lookup+tail, init, chunks: {:?}",
        q.snapshot()
    );
}

/// Pages chosen per BTree segment of a one-column plan, from its `--explain` description.
fn segment_pages(plan: &crate::index::filter::FilterPlan) -> Vec<Vec<u32>> {
    plan.explain()["segments"]
        .as_array()
        .expect("segments")
        .iter()
        .map(|s| {
            s["pages"]
                .as_array()
                .expect("pages")
                .iter()
                .map(|p| p["page"].as_u64().expect("page") as u32)
                .collect()
        })
        .collect()
}
