//! SQL over lakeseek tables: answers equal DataFusion's own over the same tables read in
//! full and pylance's for filters; pushdown plans; bad input.

use crate::common::{
    lakeseek_ctx, open_local, open_sample, reference_ctx, rows, try_rows, undelta,
};
use lakeseek::{Dataset, IoStats};

/// Queries over `t` and `u` (two lakeseek tables over scalar_indices.lance) whose answers
/// must equal DataFusion's over the rows read in full.
const SCALAR_QUERIES: &[(&str, bool)] = &[
    ("SELECT count(*) AS n FROM t", false),
    ("SELECT count(*) AS n FROM t WHERE b_s = 'v00002'", false),
    ("SELECT id, b_i FROM t WHERE b_i IN (3, 5) AND id < 100", false),
    ("SELECT id FROM t WHERE z_i < 500", false),
    ("SELECT id FROM t WHERE f_s = 'v00400'", false),
    ("SELECT id FROM t WHERE b_i = 3 OR id = 7", false),
    ("SELECT b_s, count(*) AS n, sum(id) AS s FROM t WHERE b_i > 3 GROUP BY b_s", false),
    ("SELECT b_i, min(id) AS lo, max(id) AS hi FROM t GROUP BY b_i ORDER BY b_i NULLS FIRST", true),
    ("SELECT id, z_i FROM t WHERE z_i < 900 ORDER BY z_i DESC, id LIMIT 7", true),
    ("SELECT id FROM t WHERE b_s = 'v00003' ORDER BY id LIMIT 5", true),
    ("SELECT id, _rowaddr FROM t WHERE _rowaddr IN (5, 4294967299, 8589934599, 12884901895, 99999999999)", false),
    ("SELECT id FROM t WHERE _rowaddr = 8589934600 AND b_i > 2", false),
    ("SELECT t.id, u.id AS uid FROM t JOIN u ON t.b_i = u.b_i WHERE t.b_s = 'v00002' AND u.id < 40", false),
    ("SELECT count(*) AS n FROM t WHERE array_has_any(tags, ['red', 'blue'])", false),
    ("SELECT id FROM t WHERE array_contains(ntags, 50) AND NOT b_i = 3", false),
    ("SELECT id FROM t WHERE NOT array_has_all(tags, ['red'])", false),
    ("SELECT b_d, count(*) AS n FROM t WHERE b_d IS NOT NULL GROUP BY b_d", false),
    ("SELECT id FROM t WHERE b_ts >= TIMESTAMP '2024-01-01 00:05:00' AND b_ts < TIMESTAMP '2024-01-01 00:08:00'", false),
];

/// `any_element` and the rest over the sample `frames` table (BTree on `key`, list element
/// index on `detections` keyed by label and confidence).
const FRAME_QUERIES: &[(&str, bool)] = &[
    ("SELECT key FROM frames WHERE key = 'cam06-029417'", false),
    // exact from the list element index
    ("SELECT key FROM frames WHERE any_element(detections, 'label = ''car'' AND confidence > 0.9')", false),
    // superset (area is not a key): candidates rechecked
    ("SELECT key FROM frames WHERE any_element(detections, 'label = ''bus'' AND area > 0.5')", false),
    // no list element index answers a predicate on `area` alone: evaluated on the lists of
    // every fragment inside the scan (a residual filter per fragment group)
    ("SELECT key FROM frames WHERE any_element(detections, 'area > 0.97 AND label = ''truck''')", false),
    ("SELECT count(*) AS n FROM frames WHERE any_element(detections, 'area > 0.9')", false),
    // NOT
    ("SELECT count(*) AS n FROM frames WHERE NOT any_element(detections, 'label = ''car'' AND confidence > 0.9')", false),
    // not pushable as a whole: evaluated row by row by the UDF
    ("SELECT count(*) AS n FROM frames WHERE any_element(detections, 'label = ''car''') OR camera = 1", false),
    ("SELECT camera, count(*) AS n FROM frames WHERE any_element(detections, 'confidence > 0.95') GROUP BY camera", false),
    ("SELECT key, any_element(detections, 'label = ''car''') AS car FROM frames WHERE key IN ('cam06-029417', 'cam01-000003')", false),
];

async fn scalar_tables() -> (Dataset, Dataset) {
    (
        open_local("scalar_indices.lance").await,
        open_local("scalar_indices.lance").await,
    )
}

async fn check_queries(tables: &[(&str, &Dataset)], queries: &[(&str, bool)]) {
    let ctx = lakeseek_ctx(tables);
    let reference = reference_ctx(tables).await;
    for (sql, ordered) in queries {
        let got = rows(&ctx, sql, *ordered).await;
        let want = rows(&reference, sql, *ordered).await;
        assert_eq!(got, want, "{sql}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queries_equal_datafusion_over_the_rows_read_in_full() {
    let (t, u) = scalar_tables().await;
    check_queries(&[("t", &t), ("u", &u)], SCALAR_QUERIES).await;
    let frames = open_sample().await;
    check_queries(&[("frames", &frames)], FRAME_QUERIES).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_equal_pylance() {
    let answers: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(crate::common::fixture("scalar_answers.json")).unwrap(),
    )
    .unwrap();
    let t = open_local("scalar_indices.lance").await;
    let ctx = lakeseek_ctx(&[("t", &t)]);
    let queries = answers["datasets"]["scalar_indices"]["queries"]
        .as_array()
        .unwrap();
    assert!(queries.len() > 100);
    for q in queries {
        let filter = q["filter"].as_str().unwrap();
        let sql = format!("SELECT _rowaddr FROM t WHERE {filter} ORDER BY _rowaddr");
        let got: Vec<u64> = rows(&ctx, &sql, true)
            .await
            .iter()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["_rowaddr"]
                    .as_u64()
                    .unwrap()
            })
            .collect();
        assert_eq!(got, undelta(&q["addr_deltas"]), "{filter}");
    }
    // The sample's any_element answer (pylance's, recorded by assets/demo/gen_demo.py).
    let demo: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(crate::common::sample_dir().join("../answers.json")).unwrap(),
    )
    .unwrap();
    let frames = open_sample().await;
    let ctx = lakeseek_ctx(&[("frames", &frames)]);
    let filter = demo["any_element"]["filter"].as_str().unwrap();
    let sql = format!("SELECT _rowaddr FROM frames WHERE {filter} ORDER BY _rowaddr");
    let got: Vec<u64> = rows(&ctx, &sql, true)
        .await
        .iter()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["_rowaddr"]
                .as_u64()
                .unwrap()
        })
        .collect();
    let want: Vec<u64> = demo["any_element"]["row_addresses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(got, want);
}

async fn physical_plan(ctx: &datafusion::prelude::SessionContext, sql: &str) -> String {
    let lines = rows(ctx, &format!("EXPLAIN {sql}"), true).await;
    lines.join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_answered_filters_are_pushed_down_exactly_without_a_full_scan() {
    let frames = open_sample().await;
    let stats = IoStats::new();
    let counted = frames.with_stats(&stats);
    let ctx = lakeseek_ctx(&[("frames", &counted)]);
    let sql = "SELECT key, camera FROM frames WHERE key = 'cam06-029417' LIMIT 3";
    let plan = physical_plan(&ctx, sql).await;
    // Exact: in the scan's full filters, no FilterExec above it, the scan takes one row.
    assert!(plan.contains("full_filters=[frames.key = Utf8"), "{plan}");
    assert!(!plan.contains("FilterExec"), "{plan}");
    assert!(plan.contains("rows=take 1 row addresses"), "{plan}");
    assert!(!plan.contains("full scan"), "{plan}");
    let before = stats.snapshot();
    assert_eq!(rows(&ctx, sql, false).await.len(), 1);
    let cost = stats.snapshot();
    // The lookup and the take read a small part of the 1.6 MB dataset.
    assert!(cost.bytes - before.bytes < 400_000, "{cost:?}");

    // Candidates (zone map): Inexact, rechecked above the scan; no index: Unsupported.
    let t = open_local("scalar_indices.lance").await;
    let ctx = lakeseek_ctx(&[("t", &t)]);
    let plan = physical_plan(&ctx, "SELECT id FROM t WHERE z_i < 500").await;
    assert!(
        plan.contains("partial_filters=[t.z_i < Int32(500)]"),
        "{plan}"
    );
    assert!(plan.contains("FilterExec"), "{plan}");
    let plan = physical_plan(&ctx, "SELECT id FROM t WHERE id < 5").await;
    assert!(plan.contains("FilterExec"), "{plan}");
    assert!(plan.contains("full scan"), "{plan}");
    let frames_ctx = lakeseek_ctx(&[("frames", &frames)]);
    let plan = physical_plan(
        &frames_ctx,
        "SELECT key FROM frames WHERE any_element(detections, 'area > 0.9')",
    )
    .await;
    assert!(plan.contains("rows=residual filter"), "{plan}");
    assert!(!plan.contains("FilterExec"), "{plan}");
    let plan = physical_plan(&ctx, "SELECT id FROM t WHERE _rowaddr = 5").await;
    assert!(plan.contains("rows=take 1 row addresses"), "{plan}");
    assert!(!plan.contains("FilterExec"), "{plan}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_a_clear_error() {
    let frames = open_sample().await;
    let ctx = lakeseek_ctx(&[("frames", &frames)]);
    let e = try_rows(&ctx, "SELECT * FROM nope", false)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("nope") && e.contains("not found"), "{e}");
    let e = try_rows(&ctx, "SELECT missing FROM frames", false)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing"), "{e}");
    let e = try_rows(
        &ctx,
        "SELECT key FROM frames WHERE any_element(detections, 'label = ')",
        false,
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(e.contains("any_element") && e.contains("label ="), "{e}");
    let e = try_rows(
        &ctx,
        "SELECT key FROM frames WHERE any_element(detections, 'nofield = 1')",
        false,
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(e.contains("nofield"), "{e}");
    let e = try_rows(
        &ctx,
        "SELECT key FROM frames WHERE any_element(key, 'x = 1')",
        false,
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(e.contains("any_element"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queries_over_the_s3_server_equal_local_ones() {
    let s3 = crate::common::s3::S3Server::start();
    let url = s3.copy_in(
        &crate::common::fixture("scalar_indices.lance"),
        "scalar_indices.lance",
    );
    let open = |url: String| {
        let options = crate::common::s3::storage_options(&s3);
        async move {
            Dataset::builder(&url)
                .storage_options(options)
                .open()
                .await
                .expect("open on S3")
        }
    };
    let (t, u) = (open(url.clone()).await, open(url).await);
    let frames_url = s3.copy_in(&crate::common::sample_dir(), "frames.lance");
    let frames = open(frames_url).await;
    let remote = lakeseek_ctx(&[("t", &t), ("u", &u), ("frames", &frames)]);
    let (lt, lu) = scalar_tables().await;
    let lf = open_sample().await;
    let local = lakeseek_ctx(&[("t", &lt), ("u", &lu), ("frames", &lf)]);
    for (sql, ordered) in SCALAR_QUERIES.iter().chain(FRAME_QUERIES) {
        assert_eq!(
            rows(&remote, sql, *ordered).await,
            rows(&local, sql, *ordered).await,
            "{sql}"
        );
    }
}

/// `lakeseek-sql sql [global...] --table t=URL ... SQL` against `s3`, on a blocking thread.
fn sql_command(
    s3: &crate::common::s3::S3Server,
    global: &[&str],
    table: &str,
    sql: &str,
) -> tokio::task::JoinHandle<std::process::Output> {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_lakeseek-sql"));
    cmd.env_remove("LAKESEEK_CACHE_DIR")
        .arg("sql")
        .args(global)
        .args(["--table", &format!("t={table}")]);
    for (k, v) in crate::common::s3::storage_options(s3) {
        cmd.arg("--storage-option").arg(format!("{k}={v}"));
    }
    // Columns 0 and 3 of a data file are then two GETs of one wave.
    cmd.args(["--storage-option", "coalesce_gap=0", sql]);
    tokio::task::spawn_blocking(move || cmd.output().expect("run lakeseek-sql"))
}

/// `lakeseek sql --max-requests N` bounds the requests in flight to the store as the main
/// CLI's commands do: the query sends two data GETs at once by default (seen at the closed
/// gate), never more than one request with `--max-requests 1`, and answers the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sql_command_holds_max_requests() {
    let s3 = crate::common::s3::S3Server::start();
    let url = s3.copy_in(
        &crate::common::fixture("scalar_indices.lance"),
        "scalar_indices.lance",
    );
    let sql = "SELECT id, b_f FROM t ORDER BY id";
    s3.faults().close_gate_for_data_gets();
    let run = sql_command(&s3, &[], &url, sql);
    for _ in 0..12_000 {
        if s3.faults().gate_held() >= 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert!(
        s3.faults().gate_held() >= 2,
        "two data GETs at once by default"
    );
    s3.faults().open_gate();
    let out = run.await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).lines().count() > 1000);
    s3.faults().reset_active_peak();
    let bounded = sql_command(&s3, &["--max-requests", "1"], &url, sql)
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&bounded.stderr);
    assert!(bounded.status.success(), "{stderr}");
    assert_eq!(bounded.stdout, out.stdout);
    assert_eq!(s3.faults().active_peak(), 1);
    let zero = sql_command(&s3, &["--max-requests", "0"], &url, sql)
        .await
        .unwrap();
    assert_eq!(zero.status.code(), Some(2), "clap refuses 0");
    assert!(String::from_utf8_lossy(&zero.stderr).contains("--max-requests"));
}
