//! Admission control of what is opened without a session: `EcpIndex::open_url` /
//! `open_store` (the process's default admission, one bound per store), and the `lakeseek`
//! commands that open single files and indexes (`read`, `inspect`, `ecp info|search`: the
//! bound of `--max-requests`). Seen by the server (requests at its gate, most served at
//! once) and the admission counters, never by time.

use crate::suite::common::wait_until;
use std::process::{Command, Output};
use std::sync::Arc;

use crate::ecp::{EcpIndex, OpenOptions};
use crate::io::admission::{process_default, Admission};
use crate::suite::common::{lakeseek_bin, S3TestServer};
use crate::suite::ecp_support::{expected, fixture_dir};
use crate::DEFAULT_MAX_REQUESTS;

/// Open `opens` indexes at once with the server's gate closed: exactly the default bound of
/// requests reach the server, the rest wait in `admission`; then every open succeeds.
async fn opens_hold_the_default_bound<F, Fut>(s3: &S3TestServer, admission: &Admission, open: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = crate::Result<EcpIndex>> + Send + 'static,
{
    let bound = DEFAULT_MAX_REQUESTS as u64;
    let before = s3.server_requests();
    s3.faults().close_gate();
    // An open asks for 8 arrays at once: 64 opens ask for more than the bound.
    let tasks: Vec<_> = (0..64).map(|_| tokio::spawn(open())).collect();
    wait_until("the bound's requests at the gate, more queued", || {
        s3.faults().waiting_at_gate() == bound && admission.snapshot().queued > 0
    })
    .await;
    assert_eq!(
        s3.server_requests() - before,
        bound,
        "only admitted requests are sent"
    );
    s3.faults().open_gate();
    for task in tasks {
        let index = task.await.expect("open task").expect("open");
        assert_eq!(index.info().dim, expected("l3_l2_i8").dim);
    }
    assert_eq!(s3.faults().gate_peak(), bound);
    let snap = admission.snapshot();
    assert_eq!((snap.in_flight, snap.queued), (0, 0), "{snap:?}");
    assert_eq!(snap.peak_in_flight, DEFAULT_MAX_REQUESTS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ecp_opens_by_url_without_a_session_share_the_default_bound_of_their_store() {
    let s3 = S3TestServer::start().await;
    s3.upload_dir(&fixture_dir("l3_l2_i8"), "idx").await;
    let (url, options) = (s3.url("idx"), s3.storage_options());
    let identity = crate::io::open_url(&url, &options)
        .unwrap()
        .store_identity
        .expect("an S3 URL names its store");
    let admission = process_default().for_store(&identity);
    opens_hold_the_default_bound(&s3, &admission, || {
        let (url, options) = (url.clone(), options.clone());
        async move { EcpIndex::open_url(&url, &options, OpenOptions::default()).await }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ecp_opens_on_a_store_handle_share_the_default_bound_of_that_store() {
    let s3 = S3TestServer::start().await;
    s3.upload_dir(&fixture_dir("l3_l2_i8"), "idx").await;
    let opened = s3.open("idx");
    let admission = process_default().for_handle(&opened.store);
    let label = s3.url("idx");
    opens_hold_the_default_bound(&s3, &admission, || {
        let (store, path, label) = (
            Arc::clone(&opened.store),
            opened.path.clone(),
            label.clone(),
        );
        async move { EcpIndex::open_store(store, path, &label, OpenOptions::default()).await }
    })
    .await;
}

/// `lakeseek <global flags> <args> --storage-option ...` against `s3`, on a blocking thread.
fn lakeseek(
    s3: &S3TestServer,
    global: &[&str],
    args: &[String],
) -> tokio::task::JoinHandle<Output> {
    let mut cmd = Command::new(lakeseek_bin());
    cmd.env_remove("LAKESEEK_CACHE_DIR").args(global).args(args);
    for (k, v) in s3.storage_options() {
        cmd.arg("--storage-option").arg(format!("{k}={v}"));
    }
    cmd.arg("--storage-option").arg("coalesce_gap=0");
    tokio::task::spawn_blocking(move || cmd.output().expect("run lakeseek"))
}

fn succeeded(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `args` has at least two requests at the server at once with the default bound, and never
/// more than one with `--max-requests 1`; both print the same output. Every answer is held
/// 400 ms at the server, so the requests a command sends together overlap there (a closed
/// gate cannot show it: a command's first request must be answered before it sends more).
async fn max_requests_bounds(s3: &S3TestServer, args: &[String]) {
    s3.faults()
        .slow_every(1, std::time::Duration::from_millis(400));
    s3.faults().reset_active_peak();
    let unbounded = succeeded(&lakeseek(s3, &[], args).await.unwrap(), "default bound");
    assert!(
        s3.faults().active_peak() >= 2,
        "{args:?} never had two requests at the server at once: the check below proves nothing"
    );
    s3.faults().reset_active_peak();
    let out = lakeseek(s3, &["--max-requests", "1"], args).await.unwrap();
    assert_eq!(succeeded(&out, "--max-requests 1"), unbounded);
    assert_eq!(s3.faults().active_peak(), 1, "{args:?}");
    s3.faults().slow_every(0, std::time::Duration::ZERO);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_and_index_commands_hold_max_requests() {
    let s3 = S3TestServer::start().await;
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/files/v2_2/ints.lance"
    );
    s3.put("ints.lance", std::fs::read(file).unwrap()).await;
    s3.upload_dir(&fixture_dir("l3_l2_i8"), "idx").await;
    let strings = |args: &[&str]| args.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    let read = strings(&[
        "read",
        &s3.url("ints.lance"),
        "--columns",
        "i8_small,i8_null,i64_full",
        "--rows",
        "0,1499",
    ]);
    max_requests_bounds(&s3, &read).await;
    max_requests_bounds(&s3, &strings(&["ecp", "info", &s3.url("idx")])).await;
    let query = vec!["0.5"; expected("l3_l2_i8").dim].join(",");
    let search = strings(&["ecp", "search", &s3.url("idx"), "--query", &query]);
    max_requests_bounds(&s3, &search).await;
}
