//! Shared helpers of the `read_*` and `bad_input_*` tests: fixture catalog, readers over
//! local files and the in-memory store, oracle loading and array comparison.
#![allow(dead_code)]

use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;

use crate::io::wrappers::RecordingSource;
use crate::io::{FetchOptions, IoStats, ObjectStoreSource, RangeFetcher, RangeSource};
use crate::lance::reader::{LanceFileReader, ReaderCaches};
use arrow_array::{Array, ArrayRef, RecordBatch};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStoreExt, PutPayload};

/// `tests/fixtures/files`.
pub(super) fn fixtures_dir() -> PathBuf {
    super::common::fixture("files")
}

/// One file of the catalog.
#[derive(Debug, Clone)]
pub(super) struct FixtureFile {
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
pub(super) fn catalog() -> Vec<FixtureFile> {
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
                .map(|l| {
                    l.as_array()
                        .expect("list")
                        .iter()
                        .map(|v| v.as_u64().expect("row"))
                        .collect()
                })
                .collect(),
        })
        .collect()
}

/// Record batches of an Arrow IPC file.
pub(super) fn read_ipc(path: &FsPath) -> Vec<RecordBatch> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    let reader = arrow_ipc::reader::FileReader::try_new(file, None).expect("ipc file");
    reader.map(|b| b.expect("ipc batch")).collect()
}

/// The single batch of a full-read oracle.
pub(super) fn oracle_full(file: &FixtureFile) -> RecordBatch {
    let mut batches = read_ipc(&fixtures_dir().join(&file.oracle_full));
    assert_eq!(batches.len(), 1, "{} holds one batch", file.oracle_full);
    batches.remove(0)
}

/// Where a test reads from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Backend {
    /// `LocalFileSystem` on the fixture directory.
    Local,
    /// object_store `InMemory` holding a copy of the file.
    Memory,
}

/// A source over `backend` holding the fixture at `relative` (relative to `files/`), and
/// the object path to read.
pub(super) async fn source_for(backend: Backend, relative: &str) -> (Arc<dyn RangeSource>, Path) {
    match backend {
        Backend::Local => {
            let store = Arc::new(
                object_store::local::LocalFileSystem::new_with_prefix(fixtures_dir())
                    .expect("local store"),
            );
            (
                Arc::new(ObjectStoreSource::new(store, 0, "file")),
                Path::from(relative),
            )
        }
        Backend::Memory => {
            let bytes = std::fs::read(fixtures_dir().join(relative)).expect("fixture bytes");
            memory_source(relative, bytes).await
        }
    }
}

/// An in-memory source holding `bytes` at `name`.
pub(super) async fn memory_source(name: &str, bytes: Vec<u8>) -> (Arc<dyn RangeSource>, Path) {
    let store = Arc::new(InMemory::new());
    let path = Path::from(name);
    store
        .put(&path, PutPayload::from(bytes))
        .await
        .expect("put");
    (Arc::new(ObjectStoreSource::new(store, 0, "memory")), path)
}

/// Open a reader over `source`.
pub(super) async fn open(
    source: Arc<dyn RangeSource>,
    path: Path,
) -> crate::Result<LanceFileReader> {
    let fetcher = RangeFetcher::new(source, FetchOptions::default());
    LanceFileReader::open(
        fetcher,
        path,
        None,
        Arc::new(ReaderCaches::default()),
        &IoStats::new(),
    )
    .await
}

/// A recording source over `backend` for `relative`.
pub(super) async fn recording(backend: Backend, relative: &str) -> (Arc<RecordingSource>, Path) {
    let (inner, path) = source_for(backend, relative).await;
    (Arc::new(RecordingSource::new(inner)), path)
}

/// Assert two arrays are equal: same type and length, same nulls, same valid values
/// (Arrow `equals`: floats by bit pattern, null slots ignored).
pub(super) fn assert_same(ours: &ArrayRef, oracle: &ArrayRef, what: &str) {
    assert_eq!(ours.data_type(), oracle.data_type(), "{what}: data type");
    assert_eq!(ours.len(), oracle.len(), "{what}: length");
    assert_eq!(
        ours.logical_null_count(),
        oracle.logical_null_count(),
        "{what}: null count"
    );
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
pub(super) fn random_rows(seed: u64, rows: u64, count: usize) -> Vec<u64> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut out: Vec<u64> = (0..count)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % rows.max(1)
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The footer fields of a file (little-endian, last 40 bytes).
#[derive(Debug, Clone, Copy)]
pub(super) struct RawFooter {
    /// Column metadata start.
    pub column_meta_start: u64,
    /// CMO table start.
    pub cmo_start: u64,
    /// GBO table start.
    pub gbo_start: u64,
    /// Global buffers.
    pub num_global_buffers: u32,
    /// Columns.
    pub num_columns: u32,
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Decode the footer of a well-formed file.
pub(super) fn raw_footer(file: &[u8]) -> RawFooter {
    let f = &file[file.len() - 40..];
    RawFooter {
        column_meta_start: le_u64(f, 0),
        cmo_start: le_u64(f, 8),
        gbo_start: le_u64(f, 16),
        num_global_buffers: u32::from_le_bytes(f[24..28].try_into().expect("4")),
        num_columns: u32::from_le_bytes(f[28..32].try_into().expect("4")),
    }
}

/// (position, size) entries of the CMO table of a well-formed file.
pub(super) fn cmo_entries(file: &[u8]) -> Vec<(u64, u64)> {
    let footer = raw_footer(file);
    (0..footer.num_columns as usize)
        .map(|i| {
            let at = footer.cmo_start as usize + 16 * i;
            (le_u64(file, at), le_u64(file, at + 8))
        })
        .collect()
}

/// The decoded column metadata protobufs of a well-formed file.
pub(super) fn column_protos(file: &[u8]) -> Vec<crate::lance::proto::file::ColumnMetadata> {
    use prost::Message;
    cmo_entries(file)
        .into_iter()
        .map(|(pos, size)| {
            crate::lance::proto::file::ColumnMetadata::decode(
                &file[pos as usize..(pos + size) as usize],
            )
            .expect("column metadata")
        })
        .collect()
}

/// Rewrite the column metadata region of a well-formed file with `columns` (re-encoded),
/// keeping data, schema and global buffers; rebuilds the CMO/GBO tables and the footer.
pub(super) fn with_columns(
    file: &[u8],
    columns: &[crate::lance::proto::file::ColumnMetadata],
) -> Vec<u8> {
    use prost::Message;
    let footer = raw_footer(file);
    let mut out = file[..footer.column_meta_start as usize].to_vec();
    let mut entries = Vec::new();
    for c in columns {
        let bytes = c.encode_to_vec();
        entries.push((out.len() as u64, bytes.len() as u64));
        out.extend_from_slice(&bytes);
    }
    let cmo_start = out.len() as u64;
    for (pos, size) in &entries {
        out.extend_from_slice(&pos.to_le_bytes());
        out.extend_from_slice(&size.to_le_bytes());
    }
    let gbo_start = out.len() as u64;
    let gbo = &file[footer.gbo_start as usize
        ..footer.gbo_start as usize + 16 * footer.num_global_buffers as usize];
    out.extend_from_slice(gbo);
    let mut tail = file[file.len() - 40..].to_vec();
    tail[8..16].copy_from_slice(&cmo_start.to_le_bytes());
    tail[28..32].copy_from_slice(&(columns.len() as u32).to_le_bytes());
    tail[16..24].copy_from_slice(&gbo_start.to_le_bytes());
    out.extend_from_slice(&tail);
    out
}

/// Open `bytes` from the in-memory store and read every field fully; the first error.
pub(super) async fn open_and_read_all(name: &str, bytes: Vec<u8>) -> crate::Result<()> {
    let (source, path) = memory_source(name, bytes).await;
    let reader = open(source, path).await?;
    let stats = IoStats::new();
    for i in 0..reader.schema().fields.len() {
        reader
            .read_rows(
                &[i],
                &crate::lance::reader::RowSelection::Range(0..reader.num_rows()),
                &stats,
            )
            .await?;
    }
    Ok(())
}

/// Re-encode page 0 of `column` after `edit` on its stored 2.1+ planar layout and its page
/// record (buffer offsets/sizes); the rest of the file is kept.
#[allow(dead_code)]
pub(super) fn edit_planar_page(
    file: &[u8],
    column: usize,
    edit: impl Fn(
        &mut crate::lance::proto::encodings::PlanarLayout,
        &mut crate::lance::proto::file::column_metadata::Page,
    ),
) -> Vec<u8> {
    use crate::lance::proto::encodings as enc;
    use crate::lance::proto::file as pb;
    use prost::Message;
    let mut columns = column_protos(file);
    let page = &mut columns[column].pages[0];
    let Some(pb::encoding::Location::Direct(direct)) =
        page.encoding.as_ref().and_then(|e| e.location.clone())
    else {
        panic!("direct encoding")
    };
    let mut any = prost_types::Any::decode(direct.encoding).expect("any");
    let mut layout = enc::PlanarLayout::decode(any.value.as_slice()).expect("planar");
    edit(&mut layout, page);
    any.value = layout.encode_to_vec();
    page.encoding = Some(pb::Encoding {
        location: Some(pb::encoding::Location::Direct(pb::DirectEncoding {
            encoding: any.encode_to_vec().into(),
        })),
    });
    with_columns(file, &columns)
}

/// A reader whose file metadata comes from a warm cache (opened with the size from a
/// listing or manifest): it sends no request at open and has no suffix bytes, so every page
/// byte it needs is fetched.
pub(super) async fn open_with_cached_metadata(
    recording: &Arc<RecordingSource>,
    path: object_store::path::Path,
    size: u64,
) -> LanceFileReader {
    let fetcher = RangeFetcher::new(
        Arc::<RecordingSource>::clone(recording),
        FetchOptions::default(),
    );
    let caches = Arc::new(ReaderCaches::default().without_data_tails());
    LanceFileReader::open(
        fetcher.clone(),
        path.clone(),
        Some(size),
        Arc::clone(&caches),
        &IoStats::new(),
    )
    .await
    .expect("open");
    let stats = IoStats::new();
    let reader = LanceFileReader::open(fetcher, path, Some(size), caches, &stats)
        .await
        .expect("open from the cache");
    assert_eq!(stats.snapshot().requests, 0);
    recording.clear();
    reader
}
