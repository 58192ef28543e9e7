//! `lakeseek bench take` / `bench query`: both modes on the local sample data and over the
//! in-process S3 server (the report's counters against the server's request count and
//! the planner's round-trip bounds), the JSON report and plot through the binary, and bad
//! input. Nothing here is timed.

use crate::suite::common;

use std::path::PathBuf;
use std::process::Command;

use crate::bench::query::{run_query_bench, QueryBenchArgs};
use crate::bench::take::{run_take_bench, TakeBenchArgs};
use crate::bench::{BenchReport, CommonBenchArgs};
use crate::error::Error;
use common::S3TestServer;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn file_fixture(rel: &str) -> String {
    root()
        .join("tests/fixtures/files")
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

fn dataset_fixture(name: &str) -> String {
    root()
        .join("tests/fixtures/datasets")
        .join(format!("{name}.lance"))
        .to_string_lossy()
        .into_owned()
}

fn bench_fixture(name: &str) -> String {
    root()
        .join("tests/fixtures/bench")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn take_args(url: &str, columns: &[&str], rows: u64, takes: u64, warm: bool) -> TakeBenchArgs {
    TakeBenchArgs {
        url: url.to_string(),
        columns: columns.iter().map(|c| c.to_string()).collect(),
        rows_per_take: rows,
        takes,
        version: None,
        common: CommonBenchArgs {
            warm,
            cold: !warm,
            concurrency: 2,
            seed: 42,
            ..CommonBenchArgs::default()
        },
    }
}

fn query_args(
    url: &str,
    template: &str,
    values_from: &str,
    queries: u64,
    warm: bool,
) -> QueryBenchArgs {
    QueryBenchArgs {
        dataset: url.to_string(),
        filter_template: Some(template.to_string()),
        values_from: Some(values_from.to_string()),
        filters: None,
        queries,
        version: None,
        allow_scan: false,
        common: CommonBenchArgs {
            warm,
            cold: !warm,
            concurrency: 2,
            seed: 7,
            ..CommonBenchArgs::default()
        },
    }
}

/// Checks every report must pass: counts, totals = sum of operations, cold operations
/// carry their open and warm ones do not.
fn check_consistent(r: &BenchReport, expected_ops: u64) {
    assert_eq!(r.operations_completed, expected_ops);
    assert_eq!(r.operations.len() as u64, expected_ops);
    assert!(!r.interrupted);
    let sum: u64 = r.operations.iter().map(|o| o.requests).sum();
    assert_eq!(r.totals.requests, sum);
    let sum: u64 = r.operations.iter().map(|o| o.round_trips).sum();
    assert_eq!(r.totals.round_trips, sum);
    let indices: Vec<u64> = r.operations.iter().map(|o| o.index).collect();
    assert_eq!(indices, (0..expected_ops).collect::<Vec<_>>());
    for o in &r.operations {
        match r.settings.mode.as_str() {
            "cold" => {
                let open = o.open.expect("cold operations record their open");
                assert!(open.requests >= 1 && open.requests <= o.requests, "{o:?}");
                assert!(open.round_trips <= o.round_trips, "{o:?}");
            }
            "warm" => assert!(o.open.is_none(), "{o:?}"),
            m => panic!("mode {m}"),
        }
        if r.settings.mode == "cold" {
            // (Warm operations in flight together may wait a round trip for a load another
            // one issued: a round trip of theirs without a request.)
            assert!(o.round_trips <= o.requests, "{o:?}");
        }
    }
    assert!(r.latency_ms.p50 <= r.latency_ms.p99 && r.latency_ms.p99 <= r.latency_ms.max);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn take_a_local_file_cold_and_warm() {
    let url = file_fixture("v2_2/multipage.lance");
    let cold = run_take_bench(&take_args(&url, &["i32", "s"], 20, 8, false))
        .await
        .unwrap();
    check_consistent(&cold, 8);
    assert_eq!(cold.settings.target, "file");
    assert_eq!(cold.settings.columns, ["i32", "s"]);
    for o in &cold.operations {
        assert_eq!(o.rows, 20);
        // Open (footer) + page init + chunks.
        assert!(o.round_trips <= 3, "cold file take: {o:?}");
        assert_eq!(o.open.unwrap().round_trips, 1, "{o:?}");
    }
    let warm = run_take_bench(&take_args(&url, &["i32", "s"], 20, 8, true))
        .await
        .unwrap();
    check_consistent(&warm, 8);
    for o in &warm.operations {
        assert_eq!(o.rows, 20);
        assert!(o.round_trips <= 2, "warm file take: {o:?}");
    }
    // Probing for `_versions/` (1 LIST) and the shared open (the footer).
    assert_eq!(
        (warm.setup.requests, warm.setup.round_trips),
        (2, 2),
        "{:?}",
        warm.setup
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warm_takes_with_page_init_cached_are_one_round_trip() {
    // Every row in each take: after one warm-up take every page's init data is cached, so
    // a take is one wave of chunk reads (strings.lance: 277 KB, its first column lies
    // outside the open's 64 KiB suffix read).
    let url = file_fixture("v2_2/strings.lance");
    let mut args = take_args(&url, &["s_short"], 2000, 4, true);
    args.common.warmup = 1;
    let r = run_take_bench(&args).await.unwrap();
    check_consistent(&r, 4);
    for o in &r.operations {
        assert_eq!((o.rows, o.round_trips), (2000, 1), "{o:?}");
        assert!(o.requests >= 1);
    }
    assert!(r.setup.requests > r.per_operation.requests.max as u64 / 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warm_takes_of_a_file_inside_the_open_suffix_need_no_request() {
    // multipage.lance is smaller than the 64 KiB suffix read of the open: the warm reader
    // serves every page from those bytes.
    let url = file_fixture("v2_2/multipage.lance");
    assert!(std::fs::metadata(&url).unwrap().len() < 64 * 1024);
    let mut args = take_args(&url, &["i32", "s"], 50, 4, true);
    args.common.warmup = 1;
    let r = run_take_bench(&args).await.unwrap();
    check_consistent(&r, 4);
    for o in &r.operations {
        assert_eq!((o.rows, o.requests, o.round_trips), (50, 0, 0), "{o:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn take_a_local_dataset_with_deletions_cold_and_warm() {
    let url = dataset_fixture("types");
    for warm in [false, true] {
        let r = run_take_bench(&take_args(&url, &["i", "s"], 10, 6, warm))
            .await
            .unwrap();
        check_consistent(&r, 6);
        assert_eq!(r.settings.target, "dataset");
        for o in &r.operations {
            assert!(o.rows <= 10, "deleted rows are dropped, never added: {o:?}");
        }
        assert!(r.operations.iter().any(|o| o.rows > 0));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_seed_reads_the_same_rows() {
    let url = dataset_fixture("types");
    let a = run_take_bench(&take_args(&url, &["i"], 10, 5, false))
        .await
        .unwrap();
    let b = run_take_bench(&take_args(&url, &["i"], 10, 5, false))
        .await
        .unwrap();
    let rows = |r: &BenchReport| {
        r.operations
            .iter()
            .map(|o| (o.rows, o.bytes))
            .collect::<Vec<_>>()
    };
    assert_eq!(rows(&a), rows(&b));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_a_local_dataset_cold_and_warm_finds_every_sampled_value() {
    for (name, template, column) in [("v1_names", "s = '{}'", "s"), ("fmt_v21", "k = {}", "k")] {
        for warm in [false, true] {
            let r = run_query_bench(&query_args(
                &dataset_fixture(name),
                template,
                column,
                10,
                warm,
            ))
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            check_consistent(&r, 10);
            for o in &r.operations {
                // The value came from a live row, so the filter matches it.
                assert!(o.rows >= 1, "{name} {template}: {o:?}");
                assert!(o.requests >= 1 || warm, "{o:?}");
            }
            assert!(r.setup.requests > 0);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_runs_the_listed_filters_after_the_warmups() {
    let url = dataset_fixture("fmt_v21");
    let lines = ["k = 1", "k IN (1, 2, 3)", "k >= 0 AND k < 5", "k = -12345"];
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("filters.txt");
    std::fs::write(&file, lines.join("\n") + "\n\n").unwrap();
    let mut args = query_args(&url, "unused {}", "k", 5, true);
    (args.filter_template, args.values_from, args.filters) = (None, None, Some(file.clone()));
    args.common.warmup = 1;
    args.common.concurrency = 1;
    let r = run_query_bench(&args).await.unwrap();
    check_consistent(&r, 5);
    // Each filter's own answer, from a dataset opened apart from the bench.
    let session = std::sync::Arc::new(crate::lance::dataset::DatasetSession::default());
    let stats = crate::io::IoStats::new();
    let dataset = crate::lance::dataset::DatasetVersion::open_url(&url, &[], None, session, &stats)
        .await
        .unwrap();
    let mut expected = Vec::new();
    for filter in &lines[1..] {
        let options = crate::index::filter::FilterOptions::default();
        let stats = crate::io::IoStats::new();
        let rows = crate::index::filter::filter_row_addresses(&dataset, filter, options, &stats);
        expected.push(rows.await.unwrap().len());
    }
    assert!(
        expected.iter().any(|n| *n > 1) && expected[2] == 0,
        "{expected:?}"
    );
    let got: Vec<u64> = r.operations.iter().map(|o| o.rows).collect();
    let want: Vec<u64> = (0..5).map(|i| expected[i % 3]).collect();
    assert_eq!(got, want);
    // A file with no filter beyond the warm-ups is refused.
    std::fs::write(&file, "k = 1\n").unwrap();
    expect_invalid(run_query_bench(&args).await, "need more than --warmup 1");
}

fn expect_invalid(result: crate::Result<BenchReport>, needle: &str) {
    match result {
        Err(Error::InvalidArgument(msg)) => {
            assert!(
                msg.contains(needle),
                "message {msg:?} should mention {needle:?}"
            )
        }
        Err(e) => panic!("expected InvalidArgument mentioning {needle:?}, got {e:?}"),
        Ok(r) => panic!(
            "expected an error mentioning {needle:?}, got a report of {} ops",
            r.operations_completed
        ),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_a_clear_error() {
    let file = file_fixture("v2_2/multipage.lance");
    let ds = dataset_fixture("fmt_v21");
    expect_invalid(
        run_take_bench(&take_args(&file, &["nope"], 5, 2, false)).await,
        "nope",
    );
    expect_invalid(
        run_take_bench(&take_args(&ds, &["nope"], 5, 2, true)).await,
        "nope",
    );
    expect_invalid(
        run_take_bench(&take_args(&file, &["i32"], 3001, 2, false)).await,
        "larger than the 3000 rows",
    );
    expect_invalid(
        run_take_bench(&take_args(&file, &["i32"], 5, 0, false)).await,
        "--takes",
    );
    expect_invalid(
        run_take_bench(&take_args(&file, &["i32"], 0, 2, false)).await,
        "--rows-per-take",
    );
    expect_invalid(
        run_take_bench(&take_args(&bench_fixture("empty.lance"), &[], 1, 2, false)).await,
        "no rows",
    );
    expect_invalid(
        run_take_bench(&take_args(
            &bench_fixture("empty_file.lance"),
            &["id"],
            1,
            2,
            false,
        ))
        .await,
        "no rows",
    );
    let mut concurrency = take_args(&file, &["i32"], 5, 2, false);
    concurrency.common.concurrency = 0;
    expect_invalid(run_take_bench(&concurrency).await, "--concurrency");
    let mut jpg = take_args(&file, &["i32"], 5, 2, false);
    jpg.common.plot = Some("out.jpg".into());
    expect_invalid(run_take_bench(&jpg).await, "image format");

    expect_invalid(
        run_query_bench(&query_args(&ds, "k = 5", "k", 3, false)).await,
        "{}",
    );
    expect_invalid(
        run_query_bench(&query_args(&ds, "k = {}", "missing", 3, false)).await,
        "missing",
    );
    expect_invalid(
        run_query_bench(&query_args(&ds, "k = {}", "k", 0, false)).await,
        "--queries",
    );
    expect_invalid(
        run_query_bench(&query_args(&file, "k = {}", "k", 3, false)).await,
        "not a Lance dataset",
    );
    expect_invalid(
        run_query_bench(&query_args(
            &bench_fixture("empty.lance"),
            "id = {}",
            "id",
            3,
            false,
        ))
        .await,
        "no rows",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_s3_the_report_counts_every_request_the_server_saw() {
    let s3 = S3TestServer::start().await;
    let file_rel = "v2_2/multipage.lance";
    s3.put(
        "f/multipage.lance",
        std::fs::read(file_fixture(file_rel)).unwrap(),
    )
    .await;
    s3.upload_dir(
        &root().join("tests/fixtures/datasets/fmt_v21.lance"),
        "ds/fmt_v21.lance",
    )
    .await;
    let with_s3 = |mut common: CommonBenchArgs| {
        common.storage_options = s3.storage_options();
        common
    };

    // Cold file take: open (1 RT) + page init + chunks.
    let mut args = take_args(&s3.url("f/multipage.lance"), &["i32", "s"], 20, 6, false);
    args.common = with_s3(args.common);
    let before = s3.server_requests();
    let cold = run_take_bench(&args).await.unwrap();
    let seen = s3.server_requests() - before;
    check_consistent(&cold, 6);
    assert_eq!(
        seen,
        cold.totals.requests + cold.setup.requests,
        "server vs report"
    );
    for o in &cold.operations {
        assert!(o.requests > 0);
        assert!(o.round_trips <= 3, "cold S3 file take: {o:?}");
        assert_eq!(o.open.unwrap().round_trips, 1);
    }
    assert!(
        cold.settings.store.contains("s3"),
        "{}",
        cold.settings.store
    );
    assert!(
        cold.settings
            .store
            .contains(&format!("at endpoint {}", s3.endpoint())),
        "the report names the emulator: {}",
        cold.settings.store
    );

    // Warm file take: at most page init + chunks, never a footer again.
    args.common.warm = true;
    args.common.cold = false;
    let before = s3.server_requests();
    let warm = run_take_bench(&args).await.unwrap();
    assert_eq!(
        s3.server_requests() - before,
        warm.totals.requests + warm.setup.requests
    );
    check_consistent(&warm, 6);
    for o in &warm.operations {
        assert!(o.round_trips <= 2, "warm S3 file take: {o:?}");
    }

    // Cold dataset take of a one-file dataset: LIST + manifest GET (2 RT), then the data
    // file's footer, page init, chunks (3 RT).
    s3.upload_dir(
        &root().join("tests/fixtures/datasets/wide.lance"),
        "ds/wide.lance",
    )
    .await;
    let mut args = take_args(&s3.url("ds/wide.lance"), &["key"], 50, 4, false);
    args.common = with_s3(args.common);
    let before = s3.server_requests();
    let ds = run_take_bench(&args).await.unwrap();
    assert_eq!(
        s3.server_requests() - before,
        ds.totals.requests + ds.setup.requests
    );
    check_consistent(&ds, 4);
    for o in &ds.operations {
        let open = o.open.unwrap();
        assert_eq!(
            (open.requests, open.round_trips),
            (3, 2),
            "version hint, then the manifest and a probe of the next version: {o:?}"
        );
        assert!(o.round_trips <= 5, "cold S3 dataset take: {o:?}");
        assert_eq!(o.rows, 50);
    }
    // Two data files read concurrently: each file's page-init and chunk waves may count
    // apart when they do not overlap in time, so the bound is per file.
    let mut args = take_args(&s3.url("ds/fmt_v21.lance"), &["k"], 5, 4, false);
    args.common = with_s3(args.common);
    let before = s3.server_requests();
    let ds = run_take_bench(&args).await.unwrap();
    assert_eq!(
        s3.server_requests() - before,
        ds.totals.requests + ds.setup.requests
    );
    check_consistent(&ds, 4);
    for o in &ds.operations {
        assert_eq!(o.open.unwrap().round_trips, 2, "{o:?}");
        assert!(
            o.round_trips <= 2 + 1 + 2 * 2,
            "cold S3 dataset take, 2 files: {o:?}"
        );
    }

    // Query, cold and warm.
    for warm in [false, true] {
        let mut args = query_args(&s3.url("ds/fmt_v21.lance"), "k = {}", "k", 5, warm);
        args.common = with_s3(args.common);
        let before = s3.server_requests();
        let q = run_query_bench(&args).await.unwrap();
        assert_eq!(
            s3.server_requests() - before,
            q.totals.requests + q.setup.requests
        );
        check_consistent(&q, 5);
        assert!(q.operations.iter().all(|o| o.rows >= 1));
        if !warm {
            assert!(q.operations.iter().all(|o| o.requests > 0));
        }
    }
    assert_eq!(s3.http_counts().heads, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn injected_latency_is_reported() {
    let mut args = take_args(&file_fixture("v2_2/multipage.lance"), &["i32"], 5, 2, false);
    args.common.latency_ms = 3;
    let r = run_take_bench(&args).await.unwrap();
    assert_eq!(r.settings.injected_latency_ms, 3);
    assert!(
        r.settings.store.contains("+3 ms/request"),
        "{}",
        r.settings.store
    );
    let mut table = Vec::new();
    r.write_table(&mut table).unwrap();
    let table = String::from_utf8(table).unwrap();
    assert!(
        table.contains("injected latency: 3 ms per request"),
        "{table}"
    );
    assert!(table.contains("multipage.lance"), "{table}");
}

fn lakeseek(args: &[&str]) -> std::process::Output {
    Command::new(crate::suite::common::lakeseek_bin())
        .args(args)
        .output()
        .expect("run lakeseek")
}

#[test]
fn the_binary_prints_json_and_draws_an_overlaid_plot() {
    let dir = tempfile::tempdir().unwrap();
    let file = file_fixture("v2_2/multipage.lance");
    let first_svg = dir.path().join("first.svg");
    let out = lakeseek(&[
        "bench",
        "take",
        &file,
        "--columns",
        "i32,s",
        "--rows-per-take",
        "10",
        "--takes",
        "5",
        "--concurrency",
        "2",
        "--seed",
        "3",
        "--json",
        "--plot",
        first_svg.to_str().unwrap(),
        "--label",
        "first run",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json = String::from_utf8(out.stdout).unwrap();
    let report: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    assert_eq!(report["settings"]["mode"], "cold");
    assert_eq!(report["settings"]["rows_per_take"], 10);
    assert_eq!(report["operations_completed"], 5);
    assert_eq!(report["operations"].as_array().unwrap().len(), 5);
    for key in ["p50", "p90", "p99", "max"] {
        assert!(report["latency_ms"][key].is_f64(), "{key}");
    }
    assert!(
        report["per_operation"]["round_trips"]["max"]
            .as_f64()
            .unwrap()
            <= 3.0
    );
    let svg = std::fs::read_to_string(&first_svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("latency CDF"));
    assert!(svg.contains("first run"));

    let report_path = dir.path().join("first.json");
    std::fs::write(&report_path, &json).unwrap();
    let second_svg = dir.path().join("second.svg");
    let out = lakeseek(&[
        "bench",
        "take",
        &file,
        "--columns",
        "i32",
        "--rows-per-take",
        "10",
        "--takes",
        "5",
        "--warm",
        "--plot",
        second_svg.to_str().unwrap(),
        "--compare",
        report_path.to_str().unwrap(),
        "--label",
        "second run",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table.contains("p50") && table.contains("round trips"),
        "{table}"
    );
    assert!(table.contains("injected latency: none"), "{table}");
    let svg = std::fs::read_to_string(&second_svg).unwrap();
    assert!(
        svg.contains("first run") && svg.contains("second run"),
        "both runs in the legend"
    );
}

/// `--plot out.png` rasterizes the same figure with the bundled font: a real PNG of the
/// stated size whose pixels are not all background (text and curves were drawn).
#[test]
fn the_binary_draws_a_png_plot() {
    let dir = tempfile::tempdir().unwrap();
    let file = file_fixture("v2_2/multipage.lance");
    let png = dir.path().join("plot.png");
    let out = lakeseek(&[
        "bench",
        "take",
        &file,
        "--columns",
        "i32",
        "--rows-per-take",
        "10",
        "--takes",
        "8",
        "--plot",
        png.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    // IHDR: width and height, big-endian, right after the 8-byte signature and chunk header.
    let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    assert_eq!((width, height), (1200, 520));
    // A blank white image of this size compresses to a few KB; text, axes and curves do not.
    assert!(
        bytes.len() > 20_000,
        "PNG of {} bytes looks empty",
        bytes.len()
    );
}

#[test]
fn the_binary_reports_bad_input_without_panicking() {
    let file = file_fixture("v2_2/multipage.lance");
    for args in [
        vec![
            "bench",
            "take",
            file.as_str(),
            "--columns",
            "nope",
            "--takes",
            "1",
        ],
        vec!["bench", "take", file.as_str(), "--takes", "0"],
        vec![
            "bench",
            "query",
            file.as_str(),
            "--filter-template",
            "k = 1",
            "--values-from",
            "k",
        ],
        vec![
            "bench",
            "take",
            file.as_str(),
            "--takes",
            "1",
            "--plot",
            "x.gif",
        ],
    ] {
        let out = lakeseek(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(stderr.contains("error:"), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    let conflicting = lakeseek(&["bench", "take", &file, "--cold", "--warm"]);
    assert!(!conflicting.status.success());
}

#[cfg(unix)]
#[test]
fn ctrl_c_prints_the_partial_report() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let file = file_fixture("v2_2/multipage.lance");
    let mut child = Command::new(crate::suite::common::lakeseek_bin())
        .args([
            "bench",
            "take",
            &file,
            "--columns",
            "i32",
            "--rows-per-take",
            "5",
            "--takes",
            "100000",
            "--latency-ms",
            "20",
            "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn lakeseek");
    // The start line is printed after the Ctrl-C handler is installed.
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    loop {
        line.clear();
        let n = stderr.read_line(&mut line).expect("read stderr");
        assert!(n > 0, "lakeseek exited before starting");
        if line.contains("Ctrl-C") {
            break;
        }
    }
    let pid = child.id().to_string();
    let killed = Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .expect("kill");
    assert!(killed.success());
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success(), "exit {:?}", out.status);
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("a JSON report after Ctrl-C");
    assert_eq!(report["interrupted"], true);
    assert_eq!(report["operations_requested"], 100000);
    let done = report["operations_completed"].as_u64().unwrap();
    assert!(done < 100000);
    assert_eq!(report["operations"].as_array().unwrap().len() as u64, done);
}
