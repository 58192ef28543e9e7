//! Shared helpers of the ecp integration tests: fixture paths, expected results, stores.
#![allow(dead_code)]

use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;

use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use serde::Deserialize;

pub const FIXTURES: [&str; 5] = ["l1_ip_f32", "l2_l2_f32", "l3_l2n_f16", "l2_ip_u8", "l3_l2_i8"];

#[derive(Debug, Deserialize)]
pub struct Page {
    pub k: usize,
    pub ids: Vec<u32>,
    pub scores: Vec<f64>,
    pub visited: Vec<(u32, u32)>,
}

#[derive(Debug, Deserialize)]
pub struct Case {
    pub name: String,
    pub query: Vec<f32>,
    pub k: usize,
    pub search_exp: u32,
    pub max_increments: i64,
    pub exclude: Vec<u32>,
    pub pages: Vec<Page>,
    pub brute_force_ids: Vec<u32>,
    pub brute_force_scores: Vec<f64>,
}

#[derive(Debug, Deserialize)]
pub struct Saved {
    pub query_id: u64,
    pub query: Vec<f32>,
    pub exclude: Vec<u32>,
    pub k: usize,
    pub search_exp: u32,
    pub max_increments: i64,
    pub first_page: Page,
    pub pages: Vec<Page>,
}

#[derive(Debug, Deserialize)]
pub struct Expected {
    pub name: String,
    pub levels: u32,
    pub metric: String,
    pub is_normalized: bool,
    pub dtype: String,
    pub dim: usize,
    pub total_items: u32,
    pub next_item_id: u32,
    pub node_size: usize,
    pub format_version_written: bool,
    pub gaps_visited: Vec<(u32, u32)>,
    pub cases: Vec<Case>,
    pub saved: Vec<Saved>,
}

pub fn fixture_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ecp").join(name)
}

pub fn expected(name: &str) -> Expected {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/ecp/expected/{name}.json"));
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// Scores agree within float32 noise (the reference computes in float64; sqrt near 0
/// amplifies the expanded-form error, hence the absolute term).
pub fn assert_scores_close(what: &str, got: &[f32], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: score count");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let tol = 3e-3 + 1e-4 * w.abs();
        assert!((*g as f64 - w).abs() <= tol, "{what}: score {i}: got {g}, want {w}");
    }
}

/// Every file under `dir`, as (relative key, bytes).
pub fn files_under(dir: &FsPath) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/");
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out
}

/// Upload a fixture into `store` under `prefix`.
pub async fn upload(store: &Arc<dyn ObjectStore>, prefix: &str, dir: &FsPath) {
    for (rel, bytes) in files_under(dir) {
        let key = if prefix.is_empty() { rel } else { format!("{prefix}/{rel}") };
        store.put(&Path::from(key), PutPayload::from(bytes)).await.unwrap();
    }
}

/// A fixture copied into an InMemory store under `idx/<name>`.
pub async fn in_memory(name: &str) -> (Arc<dyn ObjectStore>, Path) {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let prefix = format!("idx/{name}");
    upload(&store, &prefix, &fixture_dir(name)).await;
    (store, Path::from(prefix))
}

/// Copy a fixture to a fresh temp dir (for tests that write or corrupt it).
pub fn temp_copy(name: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for (rel, bytes) in files_under(&fixture_dir(name)) {
        let p = tmp.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    tmp
}
