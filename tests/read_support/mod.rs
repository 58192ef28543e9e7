//! Shared helpers of the `read_*` and `bad_input_*` tests: fixture catalog, readers over
//! local files and the in-memory store, oracle loading and array comparison.
#![allow(dead_code)]

use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch};
use lakeseek::io::wrappers::RecordingSource;
use lakeseek::io::{FetchOptions, IoStats, ObjectStoreSource, RangeFetcher, RangeSource};
use lakeseek::lance::reader::{LanceFileReader, ReaderCaches};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStoreExt, PutPayload};

/// `tests/fixtures/files`.
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/files")
}

/// One file of the catalog.
#[derive(Debug, Clone)]
pub struct FixtureFile {
    /// Data set name.
    pub name: String,
    /// Path relative to `files/`.
    pub path: String,
    /// "2.1" .. "2.3".
    pub version: String,
    /// Rows.
    pub rows: u64,
    /// Oracle of the full read, relative to `files/`.
    pub oracle_full: String,
    /// Oracle of the take lists.
    pub oracle_take: String,
    /// Take row lists.
    pub take_row_lists: Vec<Vec<u64>>,
}

/// Every file in `catalog.json`.
pub fn catalog() -> Vec<FixtureFile> {
    let text = std::fs::read_to_string(fixtures_dir().join("catalog.json")).expect("catalog.json");
    let json: serde_json::Value = serde_json::from_str(&text).expect("catalog parses");
    json["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| FixtureFile {
            name: f["name"].as_str().expect("name").to_string(),
            path: f["path"].as_str().expect("path").to_string(),
            version: f["version"].as_str().expect("version").to_string(),
            rows: f["rows"].as_u64().expect("rows"),
            oracle_full: f["oracle_full"].as_str().expect("oracle_full").to_string(),
            oracle_take: f["oracle_take"].as_str().expect("oracle_take").to_string(),
            take_row_lists: f["take_row_lists"]
                .as_array()
                .expect("take lists")
                .iter()
                .map(|l| l.as_array().expect("list").iter().map(|v| v.as_u64().expect("row")).collect())
                .collect(),
        })
        .collect()
}

/// Record batches of an Arrow IPC file.
pub fn read_ipc(path: &FsPath) -> Vec<RecordBatch> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    let reader = arrow_ipc::reader::FileReader::try_new(file, None).expect("ipc file");
    reader.map(|b| b.expect("ipc batch")).collect()
}

/// The single batch of a full-read oracle.
pub fn oracle_full(file: &FixtureFile) -> RecordBatch {
    let mut batches = read_ipc(&fixtures_dir().join(&file.oracle_full));
    assert_eq!(batches.len(), 1, "{} holds one batch", file.oracle_full);
    batches.remove(0)
}

/// Where a test reads from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// `LocalFileSystem` on the fixture directory.
    Local,
    /// object_store `InMemory` holding a copy of the file.
    Memory,
}

/// A source over `backend` holding the fixture at `relative` (relative to `files/`), and
/// the object path to read.
pub async fn source_for(backend: Backend, relative: &str) -> (Arc<dyn RangeSource>, Path) {
    match backend {
        Backend::Local => {
            let store = Arc::new(object_store::local::LocalFileSystem::new_with_prefix(fixtures_dir()).expect("local store"));
            (Arc::new(ObjectStoreSource::new(store, 0, "file")), Path::from(relative))
        }
        Backend::Memory => {
            let bytes = std::fs::read(fixtures_dir().join(relative)).expect("fixture bytes");
            memory_source(relative, bytes).await
        }
    }
}

/// An in-memory source holding `bytes` at `name`.
pub async fn memory_source(name: &str, bytes: Vec<u8>) -> (Arc<dyn RangeSource>, Path) {
    let store = Arc::new(InMemory::new());
    let path = Path::from(name);
    store.put(&path, PutPayload::from(bytes)).await.expect("put");
    (Arc::new(ObjectStoreSource::new(store, 0, "memory")), path)
}

/// Open a reader over `source`.
pub async fn open(source: Arc<dyn RangeSource>, path: Path) -> lakeseek::Result<LanceFileReader> {
    let fetcher = RangeFetcher::new(source, FetchOptions::default());
    LanceFileReader::open(fetcher, path, None, Arc::new(ReaderCaches::default()), &IoStats::new()).await
}

/// A recording source over `backend` for `relative`.
pub async fn recording(backend: Backend, relative: &str) -> (Arc<RecordingSource>, Path) {
    let (inner, path) = source_for(backend, relative).await;
    (Arc::new(RecordingSource::new(inner)), path)
}

/// Assert two arrays are equal: same type and length, same nulls, same valid values
/// (Arrow `equals`: floats by bit pattern, null slots ignored).
pub fn assert_same(ours: &ArrayRef, oracle: &ArrayRef, what: &str) {
    assert_eq!(ours.data_type(), oracle.data_type(), "{what}: data type");
    assert_eq!(ours.len(), oracle.len(), "{what}: length");
    assert_eq!(ours.logical_null_count(), oracle.logical_null_count(), "{what}: null count");
    if ours.to_data() != oracle.to_data() {
        for i in 0..ours.len() {
            let a = ours.slice(i, 1);
            let b = oracle.slice(i, 1);
            if a.to_data() != b.to_data() {
                panic!("{what}: first difference at row {i}: ours {a:?} vs pylance {b:?}");
            }
        }
        panic!("{what}: arrays differ");
    }
}

/// Deterministic pseudo-random sorted unique rows (`count` of `0..rows`).
pub fn random_rows(seed: u64, rows: u64, count: usize) -> Vec<u64> {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut out: Vec<u64> = (0..count)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) % rows.max(1)
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}
