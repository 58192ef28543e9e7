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
