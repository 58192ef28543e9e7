//! The `lakeseek` binary as a user runs it (the rest of the suite lives in `tests/suite/`,
//! compiled into the library's test binary; this integration test also makes `cargo test`
//! build the binary those tests start).

use std::process::Command;

#[test]
fn the_binary_prints_its_version_and_usage() {
    let bin = env!("CARGO_BIN_EXE_lakeseek");
    let version = Command::new(bin)
        .arg("--version")
        .output()
        .expect("run lakeseek");
    assert!(version.status.success());
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("lakeseek "));
    let help = Command::new(bin)
        .arg("--help")
        .output()
        .expect("run lakeseek");
    let text = String::from_utf8_lossy(&help.stdout);
    for command in [
        "demo", "inspect", "read", "query", "take", "prewarm", "ecp", "bench", "sql", "worker",
    ] {
        assert!(text.contains(command), "--help lists {command}: {text}");
    }
}

#[test]
fn read_takes_columns_spelled_as_take_and_query_spell_them() {
    let bin = env!("CARGO_BIN_EXE_lakeseek");
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/files/v2_2/ints.lance"
    );
    let run = |flag: &str| {
        let out = Command::new(bin)
            .args(["read", file, "--rows", "0,2", flag, "i64_small"])
            .output()
            .expect("run lakeseek");
        assert!(
            out.status.success(),
            "{flag}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let singular = run("--column");
    assert_eq!(singular.lines().count(), 2, "{singular}");
    assert!(singular.contains("i64_small"), "{singular}");
    assert_eq!(run("--columns"), singular);
}

#[test]
fn an_unknown_dataset_is_a_clear_error_not_a_panic() {
    let bin = env!("CARGO_BIN_EXE_lakeseek");
    let out = Command::new(bin)
        .args(["query", "/nonexistent/table.lance", "--filter", "k = 1"])
        .output()
        .expect("run lakeseek");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not found"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// `lakeseek sql` / `lakeseek worker` run the `lakeseek-sql` companion (the
/// lakeseek-datafusion workspace member's binary, built next to this one by `cargo build` or
/// `cargo test` at the root); without it they say how to build it.
#[test]
fn sql_and_worker_run_the_companion_or_say_how_to_build_it() {
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_lakeseek"));
    let companion = bin.with_file_name(format!("lakeseek-sql{}", std::env::consts::EXE_SUFFIX));
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/datasets/scalar_indices.lance"
    );
    let out = Command::new(bin)
        .env("PATH", "")
        .args(["sql", "--table", &format!("t={fixture}")])
        .arg("SELECT count(*) AS n FROM t WHERE _rowaddr IN (0, 1, 8589934594)")
        .output()
        .expect("run lakeseek sql");
    let err = String::from_utf8_lossy(&out.stderr);
    if companion.is_file() {
        assert!(out.status.success(), "{err}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "{\"n\":3}\n");
        let help = Command::new(bin)
            .args(["worker", "--help"])
            .output()
            .expect("run lakeseek worker --help");
        assert!(help.status.success());
        assert!(String::from_utf8_lossy(&help.stdout).contains("--listen"));
        let bad = Command::new(bin)
            .args(["sql", "--table", "t=/nonexistent/t.lance", "SELECT 1"])
            .output()
            .expect("run lakeseek sql");
        assert_eq!(bad.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&bad.stderr).contains("not found"));
    } else {
        assert!(!out.status.success());
        assert!(
            err.contains("lakeseek-sql") && err.contains("cargo build --release"),
            "{err}"
        );
    }
}

// Every kind of user input of issue 24 item 5, as a user hands it to the binary: a right
// answer or a clear error (exit code 1, an `error:` line, no panic, no stack overflow).

const SCALAR_DATASET: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/datasets/scalar_indices.lance"
);
const INTS_FILE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/files/v2_2/ints.lance"
);

/// Run `lakeseek args...`: (exit code, stdout, stderr).
fn lakeseek(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lakeseek"))
        .env_remove("LAKESEEK_CACHE_DIR")
        .args(args)
        .output()
        .expect("run lakeseek");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `args` succeed; their stdout.
fn answer(args: &[&str]) -> String {
    let (code, out, err) = lakeseek(args);
    assert_eq!(code, Some(0), "{args:?}: {err}");
    out
}

/// `args` fail with an error (clap's usage errors exit 2, lakeseek's own 1) whose text
/// contains every one of `needles`; never a panic.
fn clear_error(args: &[&str], needles: &[&str]) {
    let (code, out, err) = lakeseek(args);
    let shown: Vec<&str> = args.iter().map(|a| &a[..a.len().min(80)]).collect();
    assert!(matches!(code, Some(1 | 2)), "{shown:?}: {code:?} {err}");
    assert!(err.starts_with("error: "), "{shown:?}: {err}");
    assert!(!err.contains("panicked"), "{shown:?}: {err}");
    for needle in needles {
        assert!(err.contains(needle), "{shown:?}: {needle:?} not in {err}");
    }
    assert!(out.is_empty(), "{shown:?}: printed {out}");
}

fn temp_file(dir: &tempfile::TempDir, name: &str, contents: &[u8]) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, contents).expect("write a temp file");
    path.to_string_lossy().into_owned()
}

/// A million row addresses through `--rows-file` (far past Linux's 128 KiB argument cap):
/// `take` answers each in the order given (duplicates included; deleted rows dropped) as
/// the same take of one cycle does, and `read` of a file likewise.
#[test]
fn a_million_row_addresses_from_a_file_answer_right() {
    let dir = tempfile::tempdir().unwrap();
    let cycle: Vec<u64> = (0..300).collect();
    let rows: Vec<u64> = (0..1_000_000).map(|i| cycle[i % cycle.len()]).collect();
    let text: Vec<String> = rows.iter().map(u64::to_string).collect();
    let file = temp_file(&dir, "rows.txt", text.join("\n").as_bytes());
    let one_cycle: Vec<String> = cycle.iter().map(u64::to_string).collect();
    let small = answer(&[
        "take",
        SCALAR_DATASET,
        "--rows",
        &one_cycle.join(","),
        "--columns",
        "id",
    ]);
    let by_address: std::collections::HashMap<u64, &str> = small
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            (v["_rowaddr"].as_u64().unwrap(), line)
        })
        .collect();
    assert!(by_address.len() > 250, "most of the cycle is live: {small}");
    let big = answer(&[
        "take",
        SCALAR_DATASET,
        "--rows-file",
        &file,
        "--columns",
        "id",
    ]);
    let want = rows.iter().filter_map(|r| by_address.get(r).copied());
    assert!(big.lines().eq(want), "the million-row take differs");

    let rows: Vec<String> = (0..1_000_000).map(|i| (i % 1500).to_string()).collect();
    let file = temp_file(&dir, "file_rows.txt", rows.join(",").as_bytes());
    let small = answer(&[
        "read",
        INTS_FILE,
        "--rows",
        "0..1500",
        "--columns",
        "i64_seq",
    ]);
    let small: Vec<&str> = small.lines().collect();
    assert_eq!(small.len(), 1500);
    let big = answer(&[
        "read",
        INTS_FILE,
        "--rows-file",
        &file,
        "--columns",
        "i64_seq",
    ]);
    assert!(big.lines().eq((0..1_000_000).map(|i| small[i % 1500])));
}

/// A filter file holding a 1 MB `IN` list answers as the equivalent range does.
#[test]
fn a_one_megabyte_in_list_from_a_file_answers_right() {
    let dir = tempfile::tempdir().unwrap();
    let values: Vec<String> = (-90_000..90_000).map(|v: i32| v.to_string()).collect();
    let filter = format!("b_i IN ({})", values.join(", "));
    assert!(filter.len() >= 1 << 20, "{} bytes", filter.len());
    let file = temp_file(&dir, "in.sql", filter.as_bytes());
    let got = answer(&["query", SCALAR_DATASET, "--filter-file", &file]);
    let range = "b_i >= -90000 AND b_i < 90000";
    assert_eq!(got, answer(&["query", SCALAR_DATASET, "--filter", range]));
    assert!(got.contains("\"row_addresses\":[0,"), "{got}");
}

/// 10,000 nested parentheses, a 10,000-long `NOT` chain, a 100,000-digit number: clear
/// errors, no stack overflow; a 1 MiB string literal is a right (empty) answer.
#[test]
fn extreme_filters_are_clear_errors_or_right_answers() {
    let dir = tempfile::tempdir().unwrap();
    let nested = format!("{}b_i = 1{}", "(".repeat(10_000), ")".repeat(10_000));
    let nested = temp_file(&dir, "nested.sql", nested.as_bytes());
    clear_error(
        &["query", SCALAR_DATASET, "--filter-file", &nested],
        &["nests deeper"],
    );
    let nots = format!("{}b_i = 1", "NOT ".repeat(10_000));
    let nots = temp_file(&dir, "nots.sql", nots.as_bytes());
    clear_error(
        &["query", SCALAR_DATASET, "--filter-file", &nots],
        &["nests deeper"],
    );
    let number = format!("b_i = {}", "9".repeat(100_000));
    let number = temp_file(&dir, "number.sql", number.as_bytes());
    clear_error(
        &["query", SCALAR_DATASET, "--filter-file", &number],
        &["b_i"],
    );
    let literal = format!("b_s = '{}'", "x".repeat(1 << 20));
    let literal = temp_file(&dir, "literal.sql", literal.as_bytes());
    let got = answer(&["query", SCALAR_DATASET, "--filter-file", &literal]);
    assert_eq!(got.trim(), "{\"row_addresses\":[]}");
    let empty = temp_file(&dir, "empty.sql", b"  \n");
    clear_error(
        &["query", SCALAR_DATASET, "--filter-file", &empty],
        &["no filter"],
    );
    clear_error(
        &[
            "take",
            SCALAR_DATASET,
            "--rows-file",
            &empty,
            "--columns",
            "id",
        ],
        &["no rows"],
    );
}

/// `--columns ""` and prewarm lists naming nothing are clear errors naming the empty name.
#[test]
fn column_and_index_lists_naming_nothing_are_clear_errors() {
    let d = SCALAR_DATASET;
    clear_error(
        &["take", d, "--rows", "0,1", "--columns", ""],
        &["column", "\"\""],
    );
    clear_error(
        &["query", d, "--filter", "b_i = 1", "--columns", ""],
        &["column", "\"\""],
    );
    clear_error(
        &["read", INTS_FILE, "--rows", "0", "--columns", ""],
        &["column", "\"\""],
    );
    clear_error(
        &["read", INTS_FILE, "--rows", "0", "--columns", ","],
        &["column", "\"\""],
    );
    clear_error(&["prewarm", d, "--columns", ""], &["column", "\"\""]);
    clear_error(&["prewarm", d, "--columns", ","], &["column", "\"\""]);
    clear_error(&["prewarm", d, "--index", ""], &["no index named \"\""]);
}

/// Malformed storage options and store URLs: clear errors before any request.
#[test]
fn malformed_storage_options_and_urls_are_clear_errors() {
    let read = |url: &'static str, option: &'static str| {
        ["read", url, "--rows", "0", "--storage-option", option]
    };
    clear_error(&read(INTS_FILE, "novalue"), &["KEY=VALUE"]);
    clear_error(&read(INTS_FILE, "=x"), &["empty key"]);
    clear_error(&read(INTS_FILE, "max_retries=-1"), &["max_retries"]);
    clear_error(&read(INTS_FILE, "hedge_fraction=2"), &["hedge_fraction"]);
    clear_error(&read("s3://bucket/x.lance", "bogus_key=1"), &["bogus_key"]);
    clear_error(&read("gs://bucket/x.lance", "bogus_key=1"), &["bogus_key"]);
    for url in [
        "s3://",
        "gs://",
        "s3:///x.lance",
        "http://[::1",
        "ftp://host/x",
    ] {
        clear_error(&["read", url, "--rows", "0"], &["URL"]);
        clear_error(&["query", url, "--filter", "a = 1"], &["URL"]);
        clear_error(&["take", url, "--rows", "1", "--columns", "a"], &["URL"]);
        clear_error(&["ecp", "info", url], &["URL"]);
    }
}

/// A `.npy` query file whose header claims 10^18 vectors of 0 dimensions (once a
/// `capacity overflow` abort), a truncated one and one of the wrong dimension.
#[test]
fn crafted_npy_query_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let index = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/ecp/l3_l2_i8");
    let npy = |shape: &str, payload: &[u8]| {
        let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}");
        header.push_str(&" ".repeat(63 - header.len() % 64));
        header.push('\n');
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(payload);
        bytes
    };
    let search = |file: &str, needles: &[&str]| {
        clear_error(&["ecp", "search", index, "--query-file", file], needles);
    };
    let huge = temp_file(&dir, "huge.npy", &npy("(1000000000000000000, 0)", &[]));
    search(&huge, &["query file", "0 dimensions"]);
    let short = temp_file(&dir, "short.npy", &npy("(1, 1000000)", &[0; 16]));
    search(&short, &["query file"]);
    let wrong = temp_file(&dir, "wrong.npy", &npy("(3,)", &[0; 12]));
    search(&wrong, &["dim"]);
    let garbage = temp_file(&dir, "garbage.npy", b"not an npy file");
    search(&garbage, &["query file"]);
}
