//! Filters across columns (`AND` / `OR` / `NOT` over two BTree-indexed columns, indexed +
//! unindexed mixes, nulls, deletions, a deleted fragment, an appended unindexed fragment)
//! through the one filter entry point, against pylance's answers
//! (tests/fixtures/cross_column/gen_cross_column.py), and what such queries read.

use crate::suite::common::recorded::{open_recorded, Recorded};
use crate::suite::common::undelta;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::index::filter::{filter_row_addresses, plan_filter, FilterOptions};
use crate::io::wrappers::LatencySource;
use crate::io::{IoStats, RangeSource};
use crate::lance::dataset::{DatasetSession, DatasetVersion};
use crate::Error;
use serde_json::Value;

fn dir() -> PathBuf {
    crate::suite::common::fixture("cross_column")
}

fn queries() -> Vec<(String, bool, BTreeSet<u64>)> {
    let text = std::fs::read_to_string(dir().join("answers.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc["queries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            let addrs = undelta(&q["addr_deltas"])
                .into_iter()
                .collect::<BTreeSet<u64>>();
            assert_eq!(addrs.len() as u64, q["count"].as_u64().unwrap());
            (
                q["filter"].as_str().unwrap().to_string(),
                q["bounded"].as_bool().unwrap(),
                addrs,
            )
        })
        .collect()
}

async fn open(session: Arc<DatasetSession>) -> Recorded {
    open_with_latency(session, Duration::ZERO).await
}

/// Open with `latency` per request (requests issued together then overlap, as on S3).
async fn open_with_latency(session: Arc<DatasetSession>, latency: Duration) -> Recorded {
    let slow = |source| Arc::new(LatencySource::new(source, latency)) as Arc<dyn RangeSource>;
    open_recorded(&dir().join("cross.lance"), session, &IoStats::new(), slow)
        .await
        .unwrap()
}

async fn answer(
    dataset: &DatasetVersion,
    filter: &str,
    allow_scan: bool,
) -> crate::Result<BTreeSet<u64>> {
    let stats = IoStats::new();
    let a = filter_row_addresses(dataset, filter, FilterOptions { allow_scan }, &stats).await?;
    Ok(a.iter().collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_filter_matches_pylance() {
    let rec = open(Arc::new(DatasetSession::default())).await;
    let mut failures = Vec::new();
    let qs = queries();
    assert!(qs.len() >= 30);
    for (filter, bounded, want) in &qs {
        match (answer(&rec.dataset, filter, false).await, bounded) {
            (Ok(got), true) if &got == want => {}
            (Err(Error::InvalidArgument(m)), false) if m.contains("allow_scan") => {}
            (other, _) => failures.push(format!("{filter} (no scan): {other:?}")),
        }
        match answer(&rec.dataset, filter, true).await {
            Ok(got) if &got == want => {}
            Ok(got) => {
                let extra: Vec<_> = got.difference(want).take(5).collect();
                let missing: Vec<_> = want.difference(&got).take(5).collect();
                failures.push(format!("{filter}: extra {extra:?} missing {missing:?}"));
            }
            Err(e) => failures.push(format!("{filter}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
async fn explain_names_the_index_of_each_leaf_and_what_is_evaluated_on_data() {
    let rec = open(Arc::new(DatasetSession::default())).await;
    let plan = plan_filter(
        &rec.dataset,
        "NOT (cat = 'c1' OR a = 7) AND x > 1",
        FilterOptions { allow_scan: true },
        &IoStats::new(),
    )
    .await
    .unwrap();
    let e = plan.explain();
    let leaves = e["leaves"].as_array().unwrap();
    assert_eq!(leaves.len(), 3, "{e:#}");
    assert_eq!(leaves[0]["column"], "cat");
    assert_eq!(
        leaves[0]["want"], "false",
        "NOT asks cat = 'c1' for its FALSE rows"
    );
    assert_eq!(leaves[0]["index_kind"], "btree");
    assert_eq!(leaves[0]["exactness"], "exact");
    assert_eq!(leaves[0]["answered_by"]["index"], "cat_idx");
    // The appended fragment 3 is not covered: evaluated on data.
    assert_eq!(
        leaves[0]["evaluated_on_data"]["fragments"],
        serde_json::json!([3])
    );
    assert_eq!(leaves[1]["answered_by"]["index"], "a_idx");
    assert_eq!(leaves[1]["want"], "false");
    assert_eq!(leaves[2]["column"], "x");
    assert_eq!(leaves[2]["want"], "true");
    assert!(leaves[2]["answered_by"].is_null());
    assert!(leaves[2]["not_used"][0]
        .as_str()
        .unwrap()
        .contains("no index"));
    assert_eq!(e["tree"], "((leaf 0 AND leaf 1) AND leaf 2)");
}

fn data_reads(rec: &Recorded) -> Vec<String> {
    rec.recorder
        .reads()
        .into_iter()
        .map(|r| r.path)
        .filter(|p| p.contains("/data/"))
        .collect()
}

fn index_reads(rec: &Recorded, index_dir_contains: &[String]) -> usize {
    rec.recorder
        .reads()
        .into_iter()
        .filter(|r| {
            index_dir_contains
                .iter()
                .any(|u| r.path.contains(u.as_str()))
        })
        .count()
}

#[tokio::test]
async fn indexed_leaves_read_no_data_of_covered_fragments() {
    let rec = open(Arc::new(DatasetSession::default())).await;
    let manifest = std::sync::Arc::clone(rec.dataset.manifest());
    let file_of = |fragment: u64| manifest.fragment(fragment).unwrap().files[0].path.clone();
    rec.recorder.clear();
    answer(&rec.dataset, "a < 10 AND cat IN ('c3', 'c4')", false)
        .await
        .unwrap();
    let reads = data_reads(&rec);
    for covered in [0, 2] {
        assert!(
            !reads.iter().any(|p| p.ends_with(&file_of(covered))),
            "fragment {covered} is answered by both indices, its data was read: {reads:?}"
        );
    }
    assert!(
        reads.iter().any(|p| p.ends_with(&file_of(3))),
        "the appended fragment must be evaluated on data: {reads:?}"
    );
    // A leaf on one index never reads the other index.
    let cat_uuids: Vec<String> = manifest
        .indices
        .iter()
        .filter(|s| s.name == "cat_idx")
        .map(|s| s.uuid_string())
        .collect();
    rec.recorder.clear();
    answer(&rec.dataset, "a = 7 AND x > 0", false)
        .await
        .unwrap();
    assert_eq!(index_reads(&rec, &cat_uuids), 0);
    // The deleted fragment 1 is never read.
    assert!(!data_reads(&rec).iter().any(|p| manifest
        .fragments
        .iter()
        .all(|f| !p.ends_with(&f.files[0].path))
        && p.ends_with(".lance")));
}

/// Warm repeats: index-answered filters (uncovered fragments evaluated in the same wave)
/// cost one round trip; a recheck of an unindexed leaf on the index's candidates needs the
/// candidates first (two).
#[tokio::test]
async fn warm_repeat_is_one_round_trip() {
    for (page_cache, filters) in [
        (
            false,
            [
                ("a < 10 AND cat IN ('c3', 'c4')", 1),
                ("NOT (a = 7 OR cat = 'c3')", 1),
                ("a = 7 AND x > 0", 2),
            ],
        ),
        (
            true,
            [
                ("a < 10 AND cat IN ('c3', 'c4')", 1),
                ("NOT (a = 7 OR cat = 'c3')", 1),
                // The appended fragment: `a` on its data, then `x` on the rows where
                // a = 7 — two waves even with every index page cached.
                ("a = 7 AND x > 0", 2),
            ],
        ),
    ] {
        let mut session = DatasetSession::default();
        if page_cache {
            session = session.with_page_cache(16 << 20);
        }
        let rec = open_with_latency(Arc::new(session), Duration::from_millis(20)).await;
        for (filter, most) in filters {
            let first = answer(&rec.dataset, filter, false).await.unwrap();
            let warm = IoStats::new();
            let again = filter_row_addresses(&rec.dataset, filter, FilterOptions::default(), &warm)
                .await
                .unwrap();
            assert_eq!(first, again.iter().collect());
            assert!(
                warm.snapshot().round_trips <= most,
                "{filter} (page cache {page_cache}): {:?}",
                warm.snapshot()
            );
        }
    }
}

/// `NOT (key = K)` on a BTree of 15 pages reads only the page holding K (and pages holding
/// nulls): the FALSE rows are the covered rows minus K's rows and the nulls.
#[tokio::test]
async fn not_of_a_point_lookup_reads_one_page_not_every_page() {
    let wide = crate::suite::common::fixture("datasets");
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(wide.join("answers.json")).unwrap()).unwrap();
    let q = &doc["datasets"]["wide"]["queries"][1];
    let (filter, count) = (q["filter"].as_str().unwrap(), q["count"].as_u64().unwrap());
    let stats = IoStats::new();
    let dataset = DatasetVersion::open_url(
        wide.join("wide.lance").to_str().unwrap(),
        &[],
        None,
        Arc::new(DatasetSession::default()),
        &stats,
    )
    .await
    .unwrap();
    let not = format!("NOT ({filter})");
    let plan = plan_filter(&dataset, &not, FilterOptions::default(), &stats)
        .await
        .unwrap();
    let e = plan.explain();
    let pages = e["segments"][0]["pages"].as_array().unwrap();
    assert_eq!(pages.len(), 1, "{e:#}");
    assert!(e["segments"][0]["page_lookup"]["pages"].as_u64().unwrap() >= 10);
    let got = crate::index::filter::execute_filter(&dataset, &plan, &stats)
        .await
        .unwrap();
    assert_eq!(
        got.len(),
        dataset.manifest().fragments[0].physical_rows - count
    );
}
