//! Shared support for lakeseek's integration tests. Use it with `mod common;` at the top of
//! a file in `tests/`.
//!
//! * [`S3TestServer`]: the workspace's S3 test server (`lakeseek-testing`: s3s + s3s-fs,
//!   SigV4 checked, server-side faults) started in-process on 127.0.0.1 for one test:
//!   `start().await`, `put`, `upload_dir`, `storage_options`,
//!   `open(key)` through a [`CountingConnector`](crate::io::wrappers::CountingConnector)
//!   (`counting()`, `http_counts()`), `fail_next_server_requests(n)` for retry tests.
//! * [`GcsTestServer`]: fake-gcs-server (reads only, seeded from a directory), when its
//!   binary is installed by `localstack/install.sh`; see [`emulator_missing`].
//! * Fixtures: [`fixture`] (a path under the repository's `tests/fixtures/`), [`file_fixture`]
//!   (the bytes of a Lance file under `tests/fixtures/files/`), [`dataset_fixture`] (a
//!   dataset under `tests/fixtures/datasets/`); [`undelta`] decodes the row addresses of a
//!   recorded answer (`addr_deltas`); [`json_fixture`] parses a recorded JSON file,
//!   [`u64_set`] reads one of its arrays as a set; [`latest_manifest`] of a dataset copy. The first and the last are `lakeseek-testing`'s, shared
//!   with `lakeseek-datafusion`'s tests.
//!
//! Nothing here is timed; every server binds 127.0.0.1 on a random port.
#![allow(dead_code, unused_imports)]

pub(super) mod any_element;
pub(super) mod btree_query;
pub(super) mod gcs;
pub(super) mod recorded;
pub(super) mod s3;

pub(super) use gcs::GcsTestServer;
pub(super) use lakeseek_testing::{fixture, undelta};
pub(super) use s3::S3TestServer;

/// The bytes of the Lance file fixture `tests/fixtures/files/<rel>`.
pub(super) fn file_fixture(rel: &str) -> Vec<u8> {
    let path = fixture("files").join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()))
}

/// The JSON fixture `tests/fixtures/<rel>` (recorded answers, catalogs), parsed.
pub(super) fn json_fixture(rel: &str) -> serde_json::Value {
    let path = fixture(rel);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()))
}

/// A recorded JSON array of row numbers or addresses, as a set.
pub(super) fn u64_set(v: &serde_json::Value) -> std::collections::BTreeSet<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

/// The newest manifest of the dataset at `root` (`_versions/`, V2 names: the zero-padded
/// inverted version sorts first).
pub(super) fn latest_manifest(root: &std::path::Path) -> std::path::PathBuf {
    let mut names: Vec<String> = std::fs::read_dir(root.join("_versions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.len() == 29 && n.ends_with(".manifest"))
        .collect();
    names.sort();
    root.join("_versions").join(&names[0])
}

/// The fixture dataset `tests/fixtures/datasets/<name>.lance`.
pub(super) fn dataset_fixture(name: &str) -> std::path::PathBuf {
    fixture("datasets").join(format!("{name}.lance"))
}

/// Environment variable: when set to `1`, tests that need an external emulator binary
/// (fake-gcs-server) fail instead of skipping when it is missing. `.ci/run` sets it after
/// `localstack/install.sh`.
pub(super) const REQUIRE_EMULATORS_ENV: &str = "LAKESEEK_REQUIRE_EMULATORS";

/// Call when an emulator binary is missing: panics if [`REQUIRE_EMULATORS_ENV`] is `1` or
/// `CI=true` (as CI sets it),
/// otherwise prints a loud skip notice (so a local `cargo test` without the emulator
/// still passes, and CI cannot skip silently).
pub(super) fn emulator_missing(what: &str) {
    let required = std::env::var(REQUIRE_EMULATORS_ENV).is_ok_and(|v| v == "1")
        || std::env::var("CI").is_ok_and(|v| v == "true");
    if required {
        panic!("{what} is not installed but {REQUIRE_EMULATORS_ENV}=1; run localstack/install.sh");
    }
    eprintln!("SKIPPED: {what} is not installed (run localstack/install.sh; set {REQUIRE_EMULATORS_ENV}=1 to make this a failure)");
}

/// Deterministic test bytes: `len` bytes that differ at every offset modulo 251.
pub(super) fn pattern(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i % 251) as u8 ^ ((i / 251) as u8).wrapping_mul(31))
        .collect()
}

/// The `lakeseek` binary of this build (`target/<profile>/lakeseek`, next to the `deps/`
/// directory holding this test binary); `tests/cli.rs` makes `cargo test` build it.
pub(super) fn lakeseek_bin() -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("path of the test binary");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("test binary lives in target/<profile>/deps");
    profile_dir.join(format!("lakeseek{}", std::env::consts::EXE_SUFFIX))
}

/// Copy the directory tree `from` to `to` (fixture datasets a test edits or serves).
pub(super) fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// Wait (bounded) until `done` holds; a hang guard, not a timing assertion.
pub(super) async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..12_000 {
        if done() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    panic!("never reached: {what}");
}

/// Every `kind` named anywhere in an explain (the kinds that answered, nested in AND/OR/NOT).
pub(super) fn explain_kinds(v: &serde_json::Value, out: &mut Vec<String>) {
    use serde_json::Value;
    match v {
        Value::Object(m) => {
            if let Some(Value::String(k)) = m.get("kind") {
                out.push(k.clone());
            }
            m.values().for_each(|x| explain_kinds(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| explain_kinds(x, out)),
        _ => {}
    }
}
