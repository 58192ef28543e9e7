//! The repository's committed test fixtures (`tests/fixtures/`) and the answers recorded
//! with them.

use std::path::{Path, PathBuf};

/// `tests/fixtures/<rel>` of the repository (the workspace root, this crate's parent
/// directory; the same path as the root crate's `CARGO_MANIFEST_DIR/tests/fixtures`).
pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("lakeseek-testing sits in the workspace root")
        .join("tests/fixtures")
        .join(rel)
}

/// Row addresses of a recorded answer stored delta-encoded (`addr_deltas`: the first
/// address, then the differences to the one before).
pub fn undelta(deltas: &serde_json::Value) -> Vec<u64> {
    let mut acc = 0u64;
    deltas
        .as_array()
        .expect("addr_deltas is an array")
        .iter()
        .map(|d| {
            acc += d.as_u64().expect("u64 delta");
            acc
        })
        .collect()
}
