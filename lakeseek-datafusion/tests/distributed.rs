//! Distributed execution over `lakeseek worker` processes on 127.0.0.1 against the
//! in-process S3 server: same answers as single-node, tasks spread over workers, clear
//! errors for a dead worker and a vanished dataset version.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::s3::S3Server;
use crate::common::{register, rows, try_rows};
use lakeseek::Dataset;
use lakeseek_datafusion::session_context;
use url::Url;

/// How long a worker may take to start, or a query to finish, before the test gives up
/// (a hang guard, not a timing assertion).
const PATIENCE: Duration = Duration::from_secs(120);

/// `lakeseek-sql worker`: the companion binary that `lakeseek worker` runs (this package's
/// own binary, so always built fresh for these tests; the root binary's pass-through is
/// tested by the root crate's CLI tests).
fn worker_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lakeseek-sql"));
    command.arg("worker");
    command
}

struct Worker {
    child: Child,
    url: Url,
    lines: Arc<Mutex<Vec<String>>>,
}

/// Worker processes, killed by their PIDs when dropped.
struct Workers(Vec<Worker>);

impl Workers {
    fn start(n: usize, storage_options: &[(String, String)]) -> Workers {
        let mut workers = Workers(Vec::new());
        for _ in 0..n {
            let mut command = worker_command();
            command.args(["--listen", "127.0.0.1:0"]);
            for (k, v) in storage_options {
                command.args(["--storage-option", &format!("{k}={v}")]);
            }
            let mut child = command
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start a worker");
            let stderr = child.stderr.take().expect("worker stderr");
            let lines = Arc::new(Mutex::new(Vec::new()));
            let (tx, rx) = std::sync::mpsc::channel::<String>();
            let sink = Arc::clone(&lines);
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    let _ = tx.send(line.clone());
                    sink.lock().unwrap().push(line);
                }
            });
            // Push the child first so the guard kills it even if startup fails.
            workers.0.push(Worker {
                child,
                url: Url::parse("http://127.0.0.1:1").unwrap(),
                lines,
            });
            let first = rx
                .recv_timeout(PATIENCE)
                .expect("worker prints its address");
            let v: serde_json::Value = serde_json::from_str(&first).expect("JSON line");
            let addr = v["listening"].as_str().expect("listening address");
            workers.0.last_mut().unwrap().url = Url::parse(&format!("http://{addr}")).unwrap();
        }
        workers
    }

    fn urls(&self) -> Vec<Url> {
        self.0.iter().map(|w| w.url.clone()).collect()
    }

    /// Per worker, the task report lines it printed.
    fn task_reports(&self) -> Vec<Vec<serde_json::Value>> {
        self.0
            .iter()
            .map(|w| {
                w.lines
                    .lock()
                    .unwrap()
                    .iter()
                    .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                    .filter(|v| v.get("task").is_some())
                    .collect()
            })
            .collect()
    }

    fn kill(&mut self, i: usize) {
        let _ = self.0[i].child.kill();
        let _ = self.0[i].child.wait();
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        for w in &mut self.0 {
            let _ = w.child.kill();
            let _ = w.child.wait();
        }
    }
}

async fn open(url: &str, s3: &S3Server) -> Dataset {
    Dataset::builder(url)
        .storage_options(crate::common::s3::storage_options(s3))
        .open()
        .await
        .expect("open on S3")
}

const QUERIES: &[(&str, bool)] = &[
    ("SELECT camera, count(*) AS n FROM frames GROUP BY camera", false),
    ("SELECT key FROM frames WHERE any_element(detections, 'label = ''car'' AND confidence > 0.9')", false),
    ("SELECT camera, count(*) AS n FROM frames WHERE any_element(detections, 'confidence > 0.95') GROUP BY camera", false),
    ("SELECT key FROM frames WHERE key = 'cam06-029417'", false),
    ("SELECT camera, count(*) AS n FROM frames WHERE any_element(detections, 'area > 0.9') GROUP BY camera", false),
    ("SELECT key, camera FROM frames ORDER BY key DESC LIMIT 5", true),
    ("SELECT b_s, count(*) AS n, sum(id) AS s FROM t WHERE b_i > 3 GROUP BY b_s", false),
    ("SELECT id, z_i FROM t WHERE z_i < 900 ORDER BY z_i DESC, id LIMIT 7", true),
    ("SELECT t.id, u.id AS uid FROM t JOIN u ON t.b_i = u.b_i WHERE t.b_s = 'v00002' AND u.id < 40", false),
    ("SELECT id, _rowaddr FROM t WHERE _rowaddr IN (5, 8589934599)", false),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_return_the_single_node_answers() {
    let s3 = S3Server::start();
    let frames_url = s3.copy_in(&crate::common::sample_dir(), "frames.lance");
    let scalar_url = s3.copy_in(
        &crate::common::fixture("scalar_indices.lance"),
        "scalar.lance",
    );
    let workers = Workers::start(3, &crate::common::s3::storage_options(&s3));
    let frames = open(&frames_url, &s3).await;
    let t = open(&scalar_url, &s3).await;
    let u = open(&scalar_url, &s3).await;
    let tables = [("frames", &frames), ("t", &t), ("u", &u)];
    let single = crate::common::lakeseek_ctx(&tables);
    let distributed = session_context(&workers.urls()).expect("distributed session");
    register(&distributed, &tables);
    let plan = distributed
        .sql("SELECT camera, count(*) FROM frames GROUP BY camera")
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let plan = datafusion_distributed::display_plan_ascii(plan.as_ref(), false);
    assert!(
        plan.contains("DistributedExec") && plan.contains("LakeseekScanExec"),
        "{plan}"
    );
    println!("{plan}");
    for (sql, ordered) in QUERIES {
        let got = tokio::time::timeout(PATIENCE, rows(&distributed, sql, *ordered))
            .await
            .expect("the distributed query finishes");
        assert_eq!(got, rows(&single, sql, *ordered).await, "{sql}");
    }
    let reports = workers.task_reports();
    let busy = reports.iter().filter(|r| !r.is_empty()).count();
    assert!(busy >= 2, "tasks ran on {busy} workers: {reports:?}");
    let rows_read: u64 = reports
        .iter()
        .flatten()
        .map(|r| r["rows"].as_u64().unwrap())
        .sum();
    assert!(rows_read >= 40_000, "{reports:?}");
    assert!(reports
        .iter()
        .flatten()
        .all(|r| r["requests"].as_u64().is_some() && r["bytes"].as_u64().is_some()));
}

/// The sample dataset on `s3` as table `frames` of a session distributed over two workers.
async fn frames_on_two_workers(s3: &S3Server) -> (Workers, datafusion::prelude::SessionContext) {
    let frames_url = s3.copy_in(&crate::common::sample_dir(), "frames.lance");
    let workers = Workers::start(2, &crate::common::s3::storage_options(s3));
    let frames = open(&frames_url, s3).await;
    let ctx = session_context(&workers.urls()).expect("distributed session");
    register(&ctx, &[("frames", &frames)]);
    (workers, ctx)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_worker_is_a_clear_error_naming_it() {
    let s3 = S3Server::start();
    let (mut workers, ctx) = frames_on_two_workers(&s3).await;
    let dead = workers.urls()[1].clone();
    workers.kill(1);
    let sql = "SELECT camera, count(*) AS n FROM frames GROUP BY camera";
    let result = tokio::time::timeout(PATIENCE, try_rows(&ctx, sql, false))
        .await
        .expect("no hang");
    let e = result
        .expect_err("a dead worker fails the query")
        .to_string();
    let port = dead.port().unwrap().to_string();
    assert!(e.contains(&port), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_dying_mid_query_is_a_clear_error_naming_it() {
    let s3 = S3Server::start();
    let (mut workers, ctx) = frames_on_two_workers(&s3).await;
    // Data-file reads wait at the gate: once one waits, the query is running on a worker
    // (the scan spreads over both; neither can finish its task before the gate opens).
    s3.faults().close_gate_for_data_gets();
    let sql = "SELECT camera, count(*) AS n FROM frames GROUP BY camera";
    let query = tokio::spawn(async move { try_rows(&ctx, sql, false).await });
    let waited = tokio::time::timeout(PATIENCE, async {
        while s3.faults().gate_held() == 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    waited.await.expect("a worker reads data");
    let dead = workers.urls()[1].clone();
    workers.kill(1);
    s3.faults().open_gate();
    let result = tokio::time::timeout(PATIENCE, query)
        .await
        .expect("no hang")
        .expect("query task");
    let e = result.expect_err("a worker died mid-query").to_string();
    let port = dead.port().unwrap().to_string();
    assert!(e.contains(&port), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_that_no_longer_exists_is_a_clear_error() {
    let s3 = S3Server::start();
    let url = s3.copy_in(&crate::common::sample_dir(), "gone.lance");
    let workers = Workers::start(2, &crate::common::s3::storage_options(&s3));
    let frames = open(&url, &s3).await;
    let version = frames.version();
    // The version's manifest is removed after the coordinator opened it.
    let versions = s3.bucket_dir().join("gone.lance/_versions");
    std::fs::remove_dir_all(&versions).expect("remove _versions");
    let ctx = session_context(&workers.urls()).expect("distributed session");
    register(&ctx, &[("frames", &frames)]);
    let sql = "SELECT camera, count(*) AS n FROM frames GROUP BY camera";
    let result = tokio::time::timeout(PATIENCE, try_rows(&ctx, sql, false))
        .await
        .expect("no hang");
    let e = result.expect_err("the version is gone").to_string();
    assert!(
        e.contains(&format!("version {version}")) && e.contains("gone.lance"),
        "{e}"
    );
}

/// Per worker, its task report lines, once some report has `rows` rows (or the patience
/// runs out: the line is written before the task's rows are sent, but read by a thread).
fn reports_once_one_has(workers: &Workers, rows: u64) -> Vec<Vec<serde_json::Value>> {
    let deadline = std::time::Instant::now() + PATIENCE;
    loop {
        let reports = workers.task_reports();
        let seen = reports.iter().flatten().any(|r| r["rows"] == rows);
        if seen || std::time::Instant::now() > deadline {
            return reports;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nearest_and_search_run_distributed_with_the_single_node_answers() {
    use crate::queries::root_fixture;
    let s3 = S3Server::start();
    let vectors = s3.copy_in(&root_fixture("vector/datasets/ivf_pq_l2"), "v.lance");
    let texts = s3.copy_in(&root_fixture("fts/datasets/default"), "d.lance");
    let workers = Workers::start(2, &crate::common::s3::storage_options(&s3));
    let t = open(&vectors, &s3).await;
    let d = open(&texts, &s3).await;
    let tables = [("t", &t), ("d", &d)];
    let single = crate::common::lakeseek_ctx(&tables);
    let distributed = session_context(&workers.urls()).expect("distributed session");
    register(&distributed, &tables);
    let v = "[-2.1519735, 5.083549, 0.5865445, 2.5790617, -1.9659233, -4.8064218, -0.3040556, \
             0.5321319, -2.3906116, -3.2077494, -0.39936128, -1.9677507, -0.49427363, \
             0.056415025, 2.2123194, 0.05841343]";
    let joined_nearest = format!(
        "SELECT t.id, t.cat, n._distance FROM nearest('t', 'vec', {v}, 3, 'nprobes=1') n \
         JOIN t ON t._rowaddr = n._rowaddr ORDER BY n._distance"
    );
    let queries = [
        (joined_nearest.clone(), true),
        (format!("SELECT id, _rowaddr, _distance FROM nearest('t', 'vec', {v}, 10, 'nprobes=4', 'refine_factor=2')"), true),
        (format!("SELECT cat, count(*) AS n FROM nearest('t', 'vec', {v}, 50, 'nprobes=2') GROUP BY cat"), false),
        ("SELECT d.id, s._score FROM search('d', 'body', 'river dog fox', 5) s JOIN d ON d._rowaddr = s._rowaddr".to_string(), false),
        ("SELECT id, _score FROM search('d', 'body', 'zebra', 'operator=and')".to_string(), false),
    ];
    let plan = distributed
        .sql(&joined_nearest)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let plan = datafusion_distributed::display_plan_ascii(plan.as_ref(), false);
    // The query is the join's small side: broadcast from a worker's stage.
    let stage = plan.find("Stage 1 ").expect("a worker stage");
    assert!(
        plan[stage..].contains("LakeseekQueryExec: nearest"),
        "{plan}"
    );
    for (sql, ordered) in &queries {
        let got = tokio::time::timeout(PATIENCE, rows(&distributed, sql, *ordered))
            .await
            .expect("the distributed query finishes");
        let want = rows(&single, sql, *ordered).await;
        assert!(!want.is_empty(), "{sql}");
        assert_eq!(got, want, "{sql}");
    }
    // A worker ran the nearest query of the join (3 rows) and read the data over S3.
    let reports = reports_once_one_has(&workers, 3);
    let query_task = reports.iter().flatten().find(|r| r["rows"] == 3);
    let query_task = query_task.unwrap_or_else(|| panic!("no worker ran the query: {reports:?}"));
    assert!(query_task["requests"].as_u64().unwrap() > 0, "{reports:?}");
}
