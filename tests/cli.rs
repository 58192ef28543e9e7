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
        "demo", "inspect", "read", "query", "take", "prewarm", "ecp", "bench",
    ] {
        assert!(text.contains(command), "--help lists {command}: {text}");
    }
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
