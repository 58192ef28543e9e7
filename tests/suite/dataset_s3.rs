//! Datasets and BTree queries over the real S3 protocol (in-process s3s server, every HTTP
//! request counted): pylance's answers for every recorded predicate, and the request
//! budget of opening a dataset and of cold / warm point queries.

use crate::suite::common;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::io::IoStats;
use crate::lance::dataset::{DatasetSession, DatasetVersion, ManifestNaming};
use crate::suite::common::btree_query::{query_row_addresses, QueryOptions};
use crate::suite::common::{json_fixture, undelta};
use common::S3TestServer;
use serde_json::Value;

fn fixtures() -> PathBuf {
    crate::suite::common::fixture("datasets")
}

fn answers() -> Value {
    json_fixture("datasets/answers.json")
}

fn expected(q: &Value) -> Vec<u64> {
    undelta(&q["addr_deltas"])
}

async fn server_with(names: &[&str]) -> S3TestServer {
    let s3 = S3TestServer::start().await;
    for name in names {
        s3.upload_dir(
            &fixtures().join(format!("{name}.lance")),
            &format!("ds/{name}.lance"),
        )
        .await;
    }
    s3
}

async fn open(
    s3: &S3TestServer,
    name: &str,
    version: Option<u64>,
    session: Arc<DatasetSession>,
    stats: &IoStats,
) -> DatasetVersion {
    let opened = s3.open(&format!("ds/{name}.lance"));
    DatasetVersion::open_opened(&opened, version, session, stats)
        .await
        .unwrap()
}

fn is_list(r: &crate::io::wrappers::HttpRequestRecord) -> bool {
    r.method == "GET" && !r.path.contains(".lance/")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_recorded_predicate_matches_pylance_over_s3() {
    let doc = answers();
    let names: Vec<String> = doc["datasets"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
    let s3 = server_with(&refs).await;
    let mut failures = Vec::new();
    let mut checked = 0;
    for (name, ds) in doc["datasets"].as_object().unwrap() {
        let unindexed: Vec<&str> = ds["unindexed_filters"]
            .as_array()
            .map(|v| v.iter().map(|x| x.as_str().unwrap()).collect())
            .unwrap_or_default();
        // One session per dataset: later queries run warm, as in a long-lived process.
        let session = Arc::new(DatasetSession::default());
        for q in ds["queries"].as_array().unwrap() {
            let filter = q["filter"].as_str().unwrap();
            let stats = IoStats::new();
            let dataset = open(
                &s3,
                name,
                q["version"].as_u64(),
                Arc::clone(&session),
                &stats,
            )
            .await;
            let options = QueryOptions {
                allow_scan: unindexed.contains(&filter),
            };
            checked += 1;
            match query_row_addresses(&dataset, filter, options, &stats).await {
                Ok(a) => {
                    let got: Vec<u64> = a.row_addresses.iter().collect();
                    if got != expected(q) {
                        failures.push(format!(
                            "{name} {filter:?}: got {} rows, want {}",
                            got.len(),
                            expected(q).len()
                        ));
                    }
                }
                Err(e) => failures.push(format!("{name} {filter:?}: {e}")),
            }
        }
    }
    assert!(checked >= 240);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(s3.http_counts().heads, 0, "no HEAD requests anywhere");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opening_the_latest_version_by_its_hint_sends_no_list() {
    let s3 = server_with(&["types", "v1_names"]).await;
    s3.counting().counters().reset_log_and_peak();
    let stats = IoStats::new();
    let before = s3.http_counts();
    let ds = open(
        &s3,
        "types",
        None,
        Arc::new(DatasetSession::default()),
        &stats,
    )
    .await;
    let http = s3.http_counts().since(&before);
    let log = s3.counting().counters().log();
    assert_eq!(ds.manifest_location().naming, ManifestNaming::V2);
    assert_eq!(
        ds.version(),
        answers()["datasets"]["types"]["describe"]["latest_version"]
            .as_u64()
            .unwrap()
    );
    // The hint, then the manifest it names and a probe of the next one (404) together.
    assert_eq!((http.requests, http.gets, http.heads), (3, 3, 0), "{log:?}");
    assert_eq!(log.iter().filter(|r| is_list(r)).count(), 0, "{log:?}");
    assert_eq!(log.iter().filter(|r| r.status == 404).count(), 1, "{log:?}");
    assert_eq!(stats.snapshot().round_trips, 2);

    // Warm (same session): the hint and the probe in one round trip, the manifest cached.
    let session = Arc::new(DatasetSession::default());
    open(&s3, "types", None, Arc::clone(&session), &IoStats::new()).await;
    s3.counting().counters().reset_log_and_peak();
    let (before, stats) = (s3.http_counts(), IoStats::new());
    let warm = open(&s3, "types", None, session, &stats).await;
    assert_eq!(warm.version(), ds.version());
    let log = s3.counting().counters().log();
    assert_eq!(s3.http_counts().since(&before).requests, 2, "{log:?}");
    assert_eq!(log.iter().filter(|r| is_list(r)).count(), 0, "{log:?}");
    assert_eq!(stats.snapshot().round_trips, 1);

    // Pinned version: one GET, no LIST, no HEAD.
    s3.counting().counters().reset_log_and_peak();
    let before = s3.http_counts();
    let stats = IoStats::new();
    let indexed = answers()["datasets"]["types"]["versions"]["indexed"]
        .as_u64()
        .unwrap();
    let ds = open(
        &s3,
        "types",
        Some(indexed),
        Arc::new(DatasetSession::default()),
        &stats,
    )
    .await;
    assert_eq!(ds.version(), indexed);
    let http = s3.http_counts().since(&before);
    assert_eq!(
        (http.requests, http.gets, http.heads),
        (1, 1, 0),
        "{:?}",
        s3.counting().counters().log()
    );

    // V1 names (with a hint): the V2 names of the hinted version and the next are missing,
    // then the V1 names are read; a pinned V1 version tries the V2 name first.
    s3.counting().counters().reset_log_and_peak();
    let before = s3.http_counts();
    let stats = IoStats::new();
    let ds = open(
        &s3,
        "v1_names",
        None,
        Arc::new(DatasetSession::default()),
        &stats,
    )
    .await;
    assert_eq!(ds.manifest_location().naming, ManifestNaming::V1);
    assert_eq!(
        ds.version(),
        answers()["datasets"]["v1_names"]["describe"]["latest_version"]
            .as_u64()
            .unwrap()
    );
    let log = s3.counting().counters().log();
    assert_eq!(s3.http_counts().since(&before).requests, 5, "{log:?}");
    assert_eq!(log.iter().filter(|r| is_list(r)).count(), 0, "{log:?}");
    let before = s3.http_counts();
    let stats = IoStats::new();
    open(
        &s3,
        "v1_names",
        Some(1),
        Arc::new(DatasetSession::default()),
        &stats,
    )
    .await;
    assert_eq!(
        s3.http_counts().since(&before).requests,
        2,
        "404 on the V2 name, then the V1 name"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cold_point_query_is_five_round_trips_and_a_warm_repeat_is_none() {
    let s3 = server_with(&["wide"]).await;
    // A little latency so concurrent requests really overlap, as on S3.
    s3.counting().set_latency(Duration::from_millis(5));
    let doc = answers();
    let queries = doc["datasets"]["wide"]["queries"].as_array().unwrap();
    let session = Arc::new(DatasetSession::default());
    let stats = IoStats::new();
    let before = s3.http_counts();
    let ds = open(&s3, "wide", None, Arc::clone(&session), &stats).await;
    let q = &queries[1];
    let a = query_row_addresses(
        &ds,
        q["filter"].as_str().unwrap(),
        QueryOptions::default(),
        &stats,
    )
    .await
    .unwrap();
    assert_eq!(a.row_addresses.iter().collect::<Vec<_>>(), expected(q));
    let cold = stats.snapshot();
    let http = s3.http_counts().since(&before);
    assert_eq!(
        cold.round_trips, 5,
        "list, manifest, lookup+tail, page init, chunks: {cold:?}"
    );
    assert_eq!(
        http.requests, cold.requests,
        "IoStats agrees with the HTTP layer"
    );
    assert_eq!(http.heads, 0);

    // Warm, another key on another page: chunk metadata of that disk page may be new.
    let warm = IoStats::new();
    let q = &queries[0];
    let a = query_row_addresses(
        &ds,
        q["filter"].as_str().unwrap(),
        QueryOptions::default(),
        &warm,
    )
    .await
    .unwrap();
    assert_eq!(a.row_addresses.iter().collect::<Vec<_>>(), expected(q));
    assert!(warm.snapshot().round_trips <= 2, "{:?}", warm.snapshot());
    // The same key again: its BTree page is in the session's page cache (on by default),
    // so nothing is read, and the server sees nothing.
    let again = IoStats::new();
    let before = s3.http_counts();
    let b = query_row_addresses(
        &ds,
        q["filter"].as_str().unwrap(),
        QueryOptions::default(),
        &again,
    )
    .await
    .unwrap();
    assert_eq!(b.row_addresses, a.row_addresses);
    let snap = again.snapshot();
    assert_eq!((snap.requests, snap.round_trips), (0, 0), "{snap:?}");
    assert_eq!(s3.http_counts().since(&before).requests, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_noted_on_disk_by_another_process_saves_a_round_trip_and_is_only_a_guess() {
    let s3 = server_with(&["types"]).await;
    let latest = answers()["datasets"]["types"]["describe"]["latest_version"]
        .as_u64()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let disk = crate::io::disk::DiskCache::open(dir.path(), u64::MAX).unwrap();
    // Each session stands for a new process sharing the cache directory.
    let process = || Arc::new(DatasetSession::default().with_disk(Some(disk.clone())));
    let open_counted = |session| async {
        let (before, stats) = (s3.http_counts(), IoStats::new());
        let ds = open(&s3, "types", None, session, &stats).await;
        let requests = s3.http_counts().since(&before).requests;
        (ds, requests, stats.snapshot().round_trips)
    };

    // First process: cold (hint; manifest + probe), notes the version it found.
    let (ds, requests, round_trips) = open_counted(process()).await;
    assert_eq!((ds.version(), requests, round_trips), (latest, 3, 2));
    // Second process: hint, noted manifest and probe in one round trip.
    let (ds, requests, round_trips) = open_counted(process()).await;
    assert_eq!((ds.version(), requests, round_trips), (latest, 3, 1));

    // A note behind the store (newer versions committed since): the next version exists,
    // the open climbs to the latest one.
    let note = object_store::path::Path::from("ds/types.lance/_versions/.lakeseek-latest-seen");
    let fetcher = &ds.store().fetcher;
    fetcher
        .set_disk_note(&note, format!("{} v2", latest - 1).as_bytes())
        .await;
    let (ds, requests, round_trips) = open_counted(process()).await;
    assert_eq!(ds.version(), latest, "a stale note");
    assert_eq!((requests, round_trips), (4, 2));
    // A note ahead of the store (the dataset was recreated with fewer versions), a garbled
    // note: the hint decides, as on a cold open.
    for bad in [format!("{} v2", latest + 5), "garbage".to_string()] {
        fetcher.set_disk_note(&note, bad.as_bytes()).await;
        let (ds, _, _) = open_counted(process()).await;
        assert_eq!(ds.version(), latest, "note {bad}");
    }
}
