//! Shared helpers of the ecp integration tests: fixture paths, expected results, stores.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;

use crate::ecp::{EcpIndex, EcpQuery, QueryOptions, SearchParams};
use crate::io::IoStats;

use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use serde::Deserialize;

pub(super) const FIXTURES: [&str; 5] = [
    "l1_ip_f32",
    "l2_l2_f32",
    "l3_l2n_f16",
    "l2_ip_u8",
    "l3_l2_i8",
];

#[derive(Debug, Deserialize)]
pub(super) struct Page {
    pub k: usize,
    pub ids: Vec<u32>,
    pub scores: Vec<f64>,
    pub visited: Vec<(u32, u32)>,
}

#[derive(Debug, Deserialize)]
pub(super) struct Case {
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

impl Case {
    /// The fixture's search parameters for this case.
    pub(super) fn params(&self) -> SearchParams {
        SearchParams {
            search_exp: self.search_exp,
            max_increments: self.max_increments,
        }
    }

    /// Start this case's query on `index`: its parameters and exclude set, `prefetch`.
    pub(super) fn start(
        &self,
        index: &EcpIndex,
        prefetch: Option<usize>,
    ) -> crate::Result<EcpQuery> {
        index.query(
            self.query.clone(),
            QueryOptions {
                params: self.params(),
                exclude: self.exclude.clone(),
                prefetch,
            },
        )
    }
}

#[derive(Debug, Deserialize)]
pub(super) struct Saved {
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
pub(super) struct Expected {
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

pub(super) fn fixture_dir(name: &str) -> PathBuf {
    crate::suite::common::fixture("ecp").join(name)
}

pub(super) fn expected(name: &str) -> Expected {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/fixtures/ecp/expected/{name}.json"));
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// Scores agree within float32 noise (the reference computes in float64; sqrt near 0
/// amplifies the expanded-form error, hence the absolute term).
pub(super) fn assert_scores_close(what: &str, got: &[f32], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: score count");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let tol = 3e-3 + 1e-4 * w.abs();
        assert!(
            (*g as f64 - w).abs() <= tol,
            "{what}: score {i}: got {g}, want {w}"
        );
    }
}

/// Every file under `dir`, as (relative key, bytes).
pub(super) fn files_under(dir: &FsPath) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out
}

/// Upload a fixture into `store` under `prefix`.
pub(super) async fn upload(store: &Arc<dyn ObjectStore>, prefix: &str, dir: &FsPath) {
    for (rel, bytes) in files_under(dir) {
        let key = if prefix.is_empty() {
            rel
        } else {
            format!("{prefix}/{rel}")
        };
        store
            .put(&Path::from(key), PutPayload::from(bytes))
            .await
            .unwrap();
    }
}

/// A fixture copied into an InMemory store under `idx/<name>`.
pub(super) async fn in_memory(name: &str) -> (Arc<dyn ObjectStore>, Path) {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let prefix = format!("idx/{name}");
    upload(&store, &prefix, &fixture_dir(name)).await;
    (store, Path::from(prefix))
}

/// Copy a fixture to a fresh temp dir (for tests that write or corrupt it).
pub(super) fn temp_copy(name: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for (rel, bytes) in files_under(&fixture_dir(name)) {
        let p = tmp.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    tmp
}

pub(super) fn node_of(path: &str) -> Option<(u32, u32)> {
    let mut parts = path.split('/');
    let lvl = parts.next()?.strip_prefix("lvl_")?.parse::<u32>().ok()?;
    let node = parts.next()?.strip_prefix("node_")?.parse::<u32>().ok()?;
    Some((lvl - 1, node))
}

pub(super) async fn check_info(index: &EcpIndex, exp: &Expected) {
    let info = index.info();
    assert_eq!(info.levels, exp.levels);
    assert_eq!(format!("{:?}", info.metric), exp.metric);
    assert_eq!(info.is_normalized, exp.is_normalized);
    assert_eq!(info.dim, exp.dim);
    assert_eq!(info.node_size, exp.node_size);
    assert_eq!(info.total_items, exp.total_items);
    assert_eq!(info.next_item_id, exp.next_item_id);
    assert_eq!(info.format_version, 1);
    assert_eq!(info.format_version_present, exp.format_version_written);
    assert_eq!(
        format!("{:?}", info.embedding_dtype).to_lowercase(),
        exp.dtype
    );
}

pub(super) async fn check_cases(index: &EcpIndex, exp: &Expected, check_requests: bool) {
    for case in &exp.cases {
        let what = format!("{} {}", exp.name, case.name);
        index.clear_cache();
        let mut q = case.start(index, None).unwrap();
        for (p, page) in case.pages.iter().enumerate() {
            index.store_probe().start_log();
            let got = q.next_k(page.k).await.unwrap();
            let log = index.store_probe().take_log();
            assert_eq!(got.ids, page.ids, "{what} page {p}: ids");
            assert_scores_close(&format!("{what} page {p}"), &got.scores, &page.scores);
            assert_eq!(
                q.visited(),
                page.visited.as_slice(),
                "{what} page {p}: visiting order"
            );
            if check_requests {
                // No prefetch and a cold cache on page 0: exactly the visited nodes were fetched.
                let fetched: BTreeSet<(u32, u32)> = log.iter().filter_map(|l| node_of(l)).collect();
                let visited: BTreeSet<(u32, u32)> = page.visited.iter().copied().collect();
                if p == 0 {
                    assert_eq!(fetched, visited, "{what} page {p}: nodes fetched");
                } else {
                    assert!(
                        fetched.is_subset(&visited),
                        "{what} page {p}: fetched beyond visited"
                    );
                }
                assert!(
                    log.iter().all(|l| l.starts_with("lvl_")),
                    "{what}: unexpected requests {log:?}"
                );
            }
        }
    }
    // Reads go through lakeseek's RangeSource (no HEAD or LIST exists there); nothing written.
    let kinds = index.store_probe().kinds();
    assert!(kinds.gets > 0, "{}: {kinds:?}", exp.name);
    assert_eq!(kinds.writes, 0, "{}: no writes", exp.name);
}

pub(super) async fn check_saved(index: &EcpIndex, exp: &Expected) {
    for saved in &exp.saved {
        let what = format!("{} saved query {}", exp.name, saved.query_id);
        let params = SearchParams {
            search_exp: saved.search_exp,
            max_increments: saved.max_increments,
        };
        let mut q = index
            .load_query(
                saved.query_id,
                QueryOptions {
                    params,
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        for (p, page) in saved.pages.iter().enumerate() {
            let got = q.next_k(page.k).await.unwrap();
            assert_eq!(got.ids, page.ids, "{what} page {p}");
            assert_scores_close(&what, &got.scores, &page.scores);
        }
        // The uninterrupted search gives the same pages after the first.
        let mut fresh = index
            .query(
                saved.query.clone(),
                QueryOptions {
                    params,
                    exclude: saved.exclude.clone(),
                    prefetch: None,
                },
            )
            .unwrap();
        let first = fresh.next_k(saved.first_page.k).await.unwrap();
        assert_eq!(first.ids, saved.first_page.ids, "{what} first page");
        for page in &saved.pages {
            assert_eq!(
                fresh.next_k(page.k).await.unwrap().ids,
                page.ids,
                "{what} uninterrupted"
            );
        }
    }
}

pub(super) async fn check_exhaustive(index: &EcpIndex, exp: &Expected) {
    for case in &exp.cases {
        let stats = Arc::new(IoStats::new());
        let got = index
            .exhaustive_search(case.query.clone(), 10, &[], 8, Arc::clone(&stats))
            .await
            .unwrap();
        assert_eq!(
            got.ids, case.brute_force_ids,
            "{} {} exhaustive",
            exp.name, case.name
        );
        assert_scores_close("exhaustive", &got.scores, &case.brute_force_scores);
        assert!(stats.snapshot().requests > 0);
    }
}
