//! A measurement, not a check (`#[ignore]`; run it by hand): the issue-36 load scenario,
//! small, against the in-process S3 server (its LIST walks the bucket's directory, so it
//! is costly, as on small self-hosted stores). `LOAD_QUERIES` (default 300) queries at
//! once through one session, two thirds of them opening their own `Dataset` of one of
//! `LOAD_DATASETS` (default 12) copies of `wide.lance`, each answering a BTree filter; every
//! request with a 5 s timeout and 20 ms of added latency.
//!
//! * before: the limit pinned at 256 and datasets without a version hint (every open
//!   LISTs `_versions/`, as every open did before);
//! * after: the adaptive limit, datasets with their hint (no LIST).
//!
//! ```sh
//! LOAD_QUERIES=3000 cargo test --lib suite::load_opens_bench -- --ignored --nocapture
//! ```

use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::suite::common::S3TestServer;
use crate::{Dataset, Session};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn copy_without_hint(from: &FsPath, to: &FsPath) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type().unwrap().is_dir() {
            copy_without_hint(&src, &dst);
        } else if entry.file_name() != "latest_version_hint.json" {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

async fn scenario(label: &str, hint: bool, pinned: bool) {
    let (queries, datasets) = (
        env_usize("LOAD_QUERIES", 300),
        env_usize("LOAD_DATASETS", 12),
    );
    let s3 = S3TestServer::start().await;
    let fixture =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/datasets/wide.lance");
    let source = if hint {
        fixture
    } else {
        let dir = std::env::temp_dir().join(format!("lakeseek-h36-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        copy_without_hint(&fixture, &dir);
        dir
    };
    for d in 0..datasets {
        s3.upload_dir(&source, &format!("ds/t{d}.lance")).await;
    }
    s3.counting().set_latency(Duration::from_millis(20));
    let session = if pinned {
        Session::builder().max_requests(256).build().unwrap()
    } else {
        Session::builder().build().unwrap()
    };
    let opened = s3.open_with("ds", &[("timeout", "5s")]);
    let store = Arc::clone(&opened.store);
    let open = |d: usize| {
        Dataset::builder(&s3.url(&format!("ds/t{d}.lance")))
            .object_store(Arc::clone(&store))
            .session(&session)
            .open()
    };
    let shared = open(0).await.unwrap();
    s3.counting().counters().reset_log_and_peak();
    let before = s3.http_counts();
    let started = Instant::now();
    let tasks: Vec<_> = (0..queries)
        .map(|q| {
            let own = (q % 3 != 0).then(|| open(q % datasets));
            let shared = shared.clone();
            tokio::spawn(async move {
                let t = Instant::now();
                let ds = match own {
                    Some(opening) => opening.await?,
                    None => shared,
                };
                let rows = ds.filter("key = 479478").await?;
                assert_eq!(rows.len(), 1, "wrong answer");
                Ok::<_, crate::Error>(t.elapsed().as_secs_f64())
            })
        })
        .collect();
    let (mut lat, mut errors, mut first_error) = (Vec::new(), 0, None);
    for task in tasks {
        match task.await.unwrap() {
            Ok(s) => lat.push(s),
            Err(e) => {
                errors += 1;
                first_error.get_or_insert(e.to_string());
            }
        }
    }
    let wall = started.elapsed().as_secs_f64();
    let http = s3.http_counts().since(&before);
    let log = s3.counting().counters().log();
    let lists = log
        .iter()
        .filter(|r| r.method == "GET" && !r.path.contains(".lance/"))
        .count();
    lat.sort_by(f64::total_cmp);
    let (p50, p99) = if lat.is_empty() {
        (0.0, 0.0)
    } else {
        (pct(&lat, 0.5), pct(&lat, 0.99))
    };
    eprintln!(
        "{label}: {queries} queries, {errors} errors, {:.1} q/s, p50 {:.0} ms, p99 {:.0} ms, \
         {} requests ({lists} LIST), peak {} in flight, wall {wall:.1} s; first error: {first_error:?}",
        queries as f64 / wall,
        p50 * 1e3,
        p99 * 1e3,
        http.requests,
        http.max_in_flight,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement (prints numbers); run by hand"]
async fn load_opens_before_and_after() {
    scenario("before (pinned 256, LIST opens)", false, true).await;
    scenario("after (adaptive, hinted opens)", true, false).await;
}
