//! Session caches and the disk tier end to end: a warm repeat of a lookup costs no request
//! with a default session (BTree, bitmap, list element); a second `lakeseek` process with a
//! warm `--cache-dir` answers a BTree query with three requests (version hint, latest
//! manifest, probe of the next version) and none with
//! `--version`, and a sparse nested take with at most one; a dataset that changes between
//! processes (a new version, or deleted and recreated at the same path) is never answered
//! from stale bytes; two processes filling one directory at once both answer and leave a
//! valid cache; prewarm then a query costs nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::io::IoStatsSnapshot;
use crate::suite::common::{json_fixture, lakeseek_bin, undelta, S3TestServer};
use crate::{Dataset, IoStats, Session};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn json_file(rel: &str) -> Value {
    json_fixture(rel)
}

/// pylance's row addresses of `filter` on `dataset` at `version` (`None`: latest).
fn recorded(dataset: &str, filter: &str, version: Option<u64>) -> Vec<u64> {
    let doc = json_file("datasets/answers.json");
    let q = doc["datasets"][dataset]["queries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["filter"] == filter && q["version"].as_u64() == version)
        .unwrap_or_else(|| panic!("{dataset}: no recorded {filter:?} at {version:?}"))
        .clone();
    undelta(&q["addr_deltas"])
}

fn copy_dir(from: &Path, to: &Path, skip: &dyn Fn(&Path) -> bool) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &target, skip);
        } else if !skip(&path) {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// One `lakeseek` run with `--stats`: (stdout, the stats line).
fn lakeseek(
    args: &[&str],
    cache: Option<&Path>,
    options: &[(String, String)],
) -> (String, IoStatsSnapshot) {
    let out = run_lakeseek(args, cache, options);
    assert!(
        out.status.success(),
        "lakeseek {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    parse(out)
}

fn run_lakeseek(args: &[&str], cache: Option<&Path>, options: &[(String, String)]) -> Output {
    let mut cmd = Command::new(lakeseek_bin());
    cmd.env_remove("LAKESEEK_CACHE_DIR")
        .args(args)
        .arg("--stats");
    if let Some(dir) = cache {
        cmd.arg("--cache-dir").arg(dir);
    }
    for (k, v) in options {
        cmd.arg("--storage-option").arg(format!("{k}={v}"));
    }
    cmd.output().expect("run lakeseek")
}

fn parse(out: Output) -> (String, IoStatsSnapshot) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("no stats line in {stderr}"));
    let stats: IoStatsSnapshot = serde_json::from_str(line).unwrap();
    (String::from_utf8(out.stdout).unwrap(), stats)
}

fn row_addresses(stdout: &str) -> Vec<u64> {
    let v: Value = serde_json::from_str(stdout.trim()).unwrap();
    v["row_addresses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

/// Every entry of the cache directory `dir` decodes and sits where its key says.
fn assert_cache_valid(dir: &Path) {
    let cache = crate::io::disk::DiskCache::open(dir, u64::MAX).unwrap();
    let (valid, invalid) = cache.verify_all();
    assert!(valid > 0, "the cache holds entries");
    assert_eq!(invalid, 0, "{invalid} invalid entries");
}

#[tokio::test]
async fn a_warm_repeat_costs_no_request_with_a_default_session() {
    // BTree, bitmap and list element lookups, each through the public API with a default
    // session (what the CLI builds).
    let cases: [(PathBuf, &str); 3] = [
        (fixtures().join("datasets/wide.lance"), "key = 479478"),
        // (scalar_wide: one fragment, all covered by its bitmap index; a fragment an index
        // does not cover is scanned on every query, which is data, not index, I/O.)
        (fixtures().join("datasets/scalar_wide.lance"), "k = 20993"),
        (
            fixtures().join("list_element/datasets/renamed.lance"),
            "any_element(det, 'kind = ''car''')",
        ),
    ];
    for (path, filter) in cases {
        let session = Session::default();
        let dataset = Dataset::builder(path.to_str().unwrap())
            .session(&session)
            .open()
            .await
            .unwrap();
        let cold = IoStats::new();
        let a = dataset.with_stats(&cold).filter(filter).await.unwrap();
        assert!(cold.snapshot().requests > 0);
        let warm = IoStats::new();
        let b = dataset.with_stats(&warm).filter(filter).await.unwrap();
        assert_eq!(a, b, "{filter}");
        assert!(!a.is_empty(), "{filter}");
        let snap = warm.snapshot();
        assert_eq!(
            (snap.requests, snap.round_trips),
            (0, 0),
            "{filter}: {snap:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_process_with_a_warm_cache_dir_needs_one_request_and_none_pinned() {
    let s3 = S3TestServer::start().await;
    s3.upload_dir(&fixtures().join("datasets/wide.lance"), "ds/wide.lance")
        .await;
    let url = s3.url("ds/wide.lance");
    let options = s3.storage_options();
    let cache = tempfile::tempdir().unwrap();
    let filter = "key = 479478";
    let want = recorded("wide", filter, None);
    let query = ["query", url.as_str(), "--filter", filter];

    let (plain, plain_stats) = lakeseek(&query, None, &options);
    assert_eq!(row_addresses(&plain), want);
    let before = s3.server_requests();
    let (cold, cold_stats) = lakeseek(&query, Some(cache.path()), &options);
    assert_eq!(row_addresses(&cold), want);
    assert_eq!(
        cold_stats.requests, plain_stats.requests,
        "a cold cache costs nothing extra"
    );
    assert_eq!(s3.server_requests() - before, cold_stats.requests);

    let before = s3.server_requests();
    let (warm, warm_stats) = lakeseek(&query, Some(cache.path()), &options);
    assert_eq!(row_addresses(&warm), want);
    // Which version is latest is never taken from disk: the hint, the manifest of the
    // version the first process noted on disk and the probe of the next one (404), all in
    // one round trip; the index from disk.
    assert_eq!(
        (warm_stats.requests, warm_stats.round_trips),
        (3, 1),
        "hint, manifest, probe together: {warm_stats:?}"
    );
    assert!(warm_stats.disk_hits >= 3, "{warm_stats:?}");
    assert_eq!(
        s3.server_requests() - before,
        3,
        "the server saw three requests"
    );

    // Pinned: the manifest of version 2 is immutable, nothing is sent at all.
    let pinned = ["query", url.as_str(), "--filter", filter, "--version", "2"];
    let before = s3.server_requests();
    let (out, pinned_stats) = lakeseek(&pinned, Some(cache.path()), &options);
    assert_eq!(row_addresses(&out), want);
    assert_eq!(pinned_stats.requests, 0, "{pinned_stats:?}");
    assert_eq!(s3.server_requests() - before, 0);
    assert_cache_valid(cache.path());
}

#[test]
fn pinned_versions_with_v1_manifest_names_hit_the_disk_without_a_probe() {
    let cache = tempfile::tempdir().unwrap();
    let ds = fixtures().join("datasets/v1_names.lance");
    let filter = "s = 'w005'";
    let args = [
        "query",
        ds.to_str().unwrap(),
        "--filter",
        filter,
        "--version",
        "2",
    ];
    let (cold, _) = lakeseek(&args, Some(cache.path()), &[]);
    assert_eq!(row_addresses(&cold), recorded("v1_names", filter, Some(2)));
    let (warm, stats) = lakeseek(&args, Some(cache.path()), &[]);
    assert_eq!(row_addresses(&warm), row_addresses(&cold));
    assert_eq!(stats.requests, 0, "{stats:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_sparse_nested_take_needs_at_most_one_request() {
    let s3 = S3TestServer::start().await;
    s3.upload_dir(
        &fixtures().join("datasets/take/v2_3_sparse.lance"),
        "ds/sparse.lance",
    )
    .await;
    let url = s3.url("ds/sparse.lance");
    let options = s3.storage_options();
    let doc = json_file("datasets/take_answers.json");
    let rows: Vec<String> = doc["row_sets"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_u64().unwrap().to_string())
        .collect();
    let rows = rows.join(",");
    let take = [
        "take",
        url.as_str(),
        "--rows",
        &rows,
        "--columns",
        "id,detections",
    ];
    let cache = tempfile::tempdir().unwrap();
    let (plain, _) = lakeseek(&take, None, &options);
    let (cold, _) = lakeseek(&take, Some(cache.path()), &options);
    let before = s3.server_requests();
    let (warm, stats) = lakeseek(&take, Some(cache.path()), &options);
    assert!(!plain.is_empty());
    assert_eq!(cold, plain);
    assert_eq!(warm, plain);
    // Only the open reaches the store: the version hint, then the manifest it names and a
    // probe of the next version (issue 36: no LIST; which version is latest is never taken
    // from the disk tier).
    assert!(stats.requests <= 3 && stats.round_trips <= 2, "{stats:?}");
    assert_eq!(s3.server_requests() - before, stats.requests);
}

#[test]
fn a_new_version_between_processes_is_answered_from_its_own_manifest() {
    let work = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let ds = work.path().join("t.lance");
    let source = fixtures().join("datasets/bitmap_del.lance");
    // Versions 1 and 2 only (V2 names: version v is `u64::MAX - v`).
    let newer = |p: &Path| {
        let name = p.file_name().unwrap().to_str().unwrap();
        name == "18446744073709551611.manifest" || name == "18446744073709551612.manifest"
    };
    copy_dir(&source, &ds, &newer);
    let filter = "k = 7";
    let query = ["query", ds.to_str().unwrap(), "--filter", filter];
    let old = recorded("bitmap_del", filter, Some(2));
    let new = recorded("bitmap_del", filter, None);
    assert_ne!(old, new, "the fixture's versions answer differently");
    for _ in 0..2 {
        let (out, _) = lakeseek(&query, Some(cache.path()), &[]);
        assert_eq!(row_addresses(&out), old);
    }
    // A writer commits versions 3 and 4.
    copy_dir(&source, &ds, &|p| !newer(p));
    for _ in 0..2 {
        let (out, _) = lakeseek(&query, Some(cache.path()), &[]);
        assert_eq!(row_addresses(&out), new);
    }
    let pinned = [
        "query",
        ds.to_str().unwrap(),
        "--filter",
        filter,
        "--version",
        "2",
    ];
    let (out, _) = lakeseek(&pinned, Some(cache.path()), &[]);
    assert_eq!(row_addresses(&out), old);
    assert_cache_valid(cache.path());
}

#[test]
fn a_dataset_deleted_and_recreated_at_the_same_path_is_never_answered_stale() {
    let work = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let ds = work.path().join("t.lance");
    // Both fixtures are at version 2 with V2 names: the same manifest paths, other content.
    let above_2 = |p: &Path| {
        let name = p.file_name().unwrap().to_str().unwrap();
        name.ends_with(".manifest") && name < "18446744073709551613.manifest"
    };
    copy_dir(&fixtures().join("datasets/bitmap_del.lance"), &ds, &above_2);
    let first = ["query", ds.to_str().unwrap(), "--filter", "k = 7"];
    let (out, _) = lakeseek(&first, Some(cache.path()), &[]);
    assert_eq!(
        row_addresses(&out),
        recorded("bitmap_del", "k = 7", Some(2))
    );

    std::fs::remove_dir_all(&ds).unwrap();
    copy_dir(&fixtures().join("datasets/wide.lance"), &ds, &|_| false);
    let filter = "key = 479478";
    let second = ["query", ds.to_str().unwrap(), "--filter", filter];
    for _ in 0..2 {
        let (out, _) = lakeseek(&second, Some(cache.path()), &[]);
        assert_eq!(row_addresses(&out), recorded("wide", filter, None));
    }
    // The old dataset's filter is refused (no column k), not answered from cached bytes.
    let stale = run_lakeseek(&first, Some(cache.path()), &[]);
    assert!(!stale.status.success());
    assert_cache_valid(cache.path());
}

#[test]
fn two_processes_filling_one_directory_at_once_both_answer_and_leave_a_valid_cache() {
    let cache = tempfile::tempdir().unwrap();
    let ds = fixtures().join("datasets/wide.lance");
    let filters = ["key = 479478", "key = 74"];
    for round in 0..3 {
        let children: Vec<_> = filters
            .iter()
            .map(|f| {
                Command::new(lakeseek_bin())
                    .env_remove("LAKESEEK_CACHE_DIR")
                    .args(["query", ds.to_str().unwrap(), "--filter", f, "--stats"])
                    .arg("--cache-dir")
                    .arg(cache.path())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for (child, filter) in children.into_iter().zip(filters) {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let (stdout, _) = parse(out);
            assert_eq!(
                row_addresses(&stdout),
                recorded("wide", filter, None),
                "round {round}"
            );
        }
    }
    assert_cache_valid(cache.path());
    let (_, stats) = lakeseek(
        &["query", ds.to_str().unwrap(), "--filter", filters[0]],
        Some(cache.path()),
        &[],
    );
    // The open only: hint, manifest, probe of the next version (see above).
    assert!(stats.requests <= 3 && stats.round_trips <= 2, "{stats:?}");
}

#[tokio::test]
async fn prewarm_then_a_query_costs_no_request() {
    for (path, index, filter) in [
        ("datasets/wide.lance", "key_idx", "key = 479478"),
        ("datasets/scalar_wide.lance", "k_idx", "k = 20993"),
    ] {
        let stats = IoStats::new();
        let dataset = Dataset::builder(fixtures().join(path).to_str().unwrap())
            .stats(&stats)
            .open()
            .await
            .unwrap();
        let report = dataset
            .prewarm()
            .index(index)
            .all_index_pages(true)
            .run()
            .await
            .unwrap();
        assert_eq!(report.indices, vec![index.to_string()]);
        assert!(report.stats.requests > 0);
        let query = IoStats::new();
        let rows = dataset.with_stats(&query).filter(filter).await.unwrap();
        assert!(!rows.is_empty());
        let snap = query.snapshot();
        assert_eq!(
            (snap.requests, snap.round_trips),
            (0, 0),
            "{path}: {snap:?}"
        );
    }
    // An unknown index or column is a clear error.
    let dataset = Dataset::open(fixtures().join("datasets/wide.lance").to_str().unwrap())
        .await
        .unwrap();
    match dataset.prewarm().index("nope").run().await {
        Err(crate::Error::InvalidArgument(why)) => assert!(why.contains("nope"), "{why}"),
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
    match dataset.prewarm().column("nope").run().await {
        Err(crate::Error::InvalidArgument(why)) => assert!(why.contains("nope"), "{why}"),
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_prewarm_command_fills_the_disk_for_later_processes() {
    let s3 = S3TestServer::start().await;
    s3.upload_dir(&fixtures().join("datasets/wide.lance"), "ds/wide.lance")
        .await;
    let url = s3.url("ds/wide.lance");
    let options = s3.storage_options();
    let cache = tempfile::tempdir().unwrap();
    let (out, _) = lakeseek(
        &[
            "prewarm",
            url.as_str(),
            "--index",
            "key_idx",
            "--all-pages",
            "--columns",
            "key",
        ],
        Some(cache.path()),
        &options,
    );
    let report: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(report["indices"], serde_json::json!(["key_idx"]));
    assert!(report["requests"].as_u64().unwrap() > 0);
    assert!(report["bytes"].as_u64().unwrap() > 0);
    assert!(report["column_pages"].as_u64().unwrap() > 0);
    assert!(report["millis"].is_u64());
    // Any key now: the whole index is on disk; only the hint, the latest manifest and the
    // probe go out (none pinned).
    for filter in ["key = 74", "key = 999951"] {
        let query = ["query", url.as_str(), "--filter", filter];
        let (out, stats) = lakeseek(&query, Some(cache.path()), &options);
        assert_eq!(row_addresses(&out), recorded("wide", filter, None));
        assert_eq!(stats.requests, 3, "{filter}: {stats:?}");
        let pinned = ["query", url.as_str(), "--filter", filter, "--version", "2"];
        let (_, stats) = lakeseek(&pinned, Some(cache.path()), &options);
        assert_eq!(stats.requests, 0, "{filter} pinned: {stats:?}");
    }
    // A bad flag combination is a clear error.
    let out = run_lakeseek(
        &["prewarm", url.as_str(), "--cache-bytes", "10"],
        None,
        &options,
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--cache-dir"));
}

#[test]
fn cache_bytes_bounds_the_directory_and_answers_stay_right() {
    let cache = tempfile::tempdir().unwrap();
    let ds = fixtures().join("datasets/wide.lance");
    let budget: u64 = 60_000; // less than one query's reads (~78 KB)
    for filter in ["key = 479478", "key = 74", "key = 999951", "key = 479478"] {
        let out = run_lakeseek(
            &[
                "query",
                ds.to_str().unwrap(),
                "--filter",
                filter,
                "--cache-bytes",
                &budget.to_string(),
            ],
            Some(cache.path()),
            &[],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (stdout, _) = parse(out);
        assert_eq!(row_addresses(&stdout), recorded("wide", filter, None));
        let on_disk = crate::io::disk::DiskCache::open(cache.path(), u64::MAX)
            .unwrap()
            .measured_bytes();
        assert!(
            on_disk <= budget,
            "{on_disk} bytes on disk, budget {budget}"
        );
    }
}
