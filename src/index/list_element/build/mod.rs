//! Building a list element index (spec: "Storage Layout") and committing it.
//!
//! 1. [`resolve_build_keys`](keys): the column and its key fields (direct children of
//!    the element struct, allowed types), resolved by name and recorded by field id.
//! 2. Read the column through lakeseek's own reader, fragment by fragment and
//!    [`ROWS_PER_READ`] rows at a time (bounded memory), encode each element's key tuple
//!    with `ARROW_ROW_V1` ([`KeyEncoder::encode_entries`], the encoder the reader uses):
//!    one entry per element, a null list one null entry, an empty list none, a null
//!    element a tuple of null keys; each posts its row address. Rows deleted at the
//!    version read are skipped.
//! 3. [`sort`]: external merge sort past a memory budget; [`target`]: pages of exactly
//!    `page_rows` rows, `page_data.lance` and `page_lookup.lance` written with
//!    lakeseek's Lance writer, uploaded to `_indices/<uuid>/`.
//! 4. Commit a new version adding the `IndexMetadata` (see
//!    [`crate::lance::dataset`]'s commit module): put-if-absent manifests, rebased onto
//!    concurrent versions when they keep every indexed fragment unchanged, the name free
//!    and the key fields as they were; otherwise [`Error::Conflict`] and nothing committed
//!    (the uploaded files are removed).
//!
//! Left out: deleting an index, and building segments for fragments appended later (they
//! are evaluated on the data by the reader).

mod keys;
mod sort;
mod target;

use std::sync::Arc;

use prost::Message;
use roaring::RoaringBitmap;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::index::list_data::{open_list_files, read_list_files};
use crate::index::list_element::key_encoding::KeyEncoder;
use crate::io::write::ObjectWriter;
use crate::io::{open_url, IoStats, OpenedUrl};
use crate::lance::dataset::commit::{
    commit_index, CommitOptions, IndexCommit, MAX_COMMIT_ATTEMPTS,
};
use crate::lance::dataset::{DatasetSession, DatasetVersion, Fragment, Manifest};
use crate::lance::proto::list_element::{
    ListElementIndexDetails, ListElementKeyEncoding, LIST_ELEMENT_DETAILS_TYPE_URL,
};
use crate::lance::proto::table as pb;
use crate::lance::reader::RowSelection;
use crate::lance::writer::WriteVersion;
use object_store::ObjectStoreScheme;

pub(crate) use keys::{resolve_build_keys, BuildKeys};

/// Rows per BTree page when none is given (lance's BTree default `zone_size`).
pub(crate) const DEFAULT_PAGE_ROWS: u32 = 4096;

/// Memory the sort keeps before spilling runs to temporary files.
pub(crate) const DEFAULT_SORT_MEMORY_BYTES: usize = 256 << 20;

/// Rows of a fragment read at a time.
pub(crate) const ROWS_PER_READ: u64 = 16 * 1024;

/// The BTree format version of the target (row addresses; spec: 1 or greater).
const TARGET_INDEX_VERSION: u32 = 1;

/// What to build.
#[derive(Debug, Clone)]
pub(crate) struct ListElementIndexOptions {
    /// The list<struct> column (top-level name or struct path).
    pub(crate) column: String,
    /// Key fields: names of direct children of the element struct, in key order.
    pub(crate) keys: Vec<String>,
    /// Index name (must not exist yet).
    pub(crate) name: String,
    /// Rows per BTree page.
    pub(crate) page_rows: u32,
    /// Sort memory budget in bytes.
    pub(crate) sort_memory_bytes: usize,
}

impl ListElementIndexOptions {
    /// Options with the default page size and sort budget.
    pub(crate) fn new(column: &str, keys: &[&str], name: &str) -> Self {
        Self {
            column: column.to_string(),
            keys: keys.iter().map(|k| k.to_string()).collect(),
            name: name.to_string(),
            page_rows: DEFAULT_PAGE_ROWS,
            sort_memory_bytes: DEFAULT_SORT_MEMORY_BYTES,
        }
    }
}

/// An index whose files are written but not committed yet.
#[derive(Debug, Clone)]
pub(crate) struct BuiltListElementIndex {
    /// The segment to commit.
    index: pb::IndexMetadata,
    keys: BuildKeys,
    /// Covered fragment ids.
    pub(crate) fragments: Vec<u64>,
    /// Index entries written.
    pub(crate) entries: u64,
    /// BTree pages.
    pub(crate) pages: u32,
    /// Sorted runs the sort spilled to temporary files (0: it fit in memory).
    pub(crate) sort_runs: usize,
    /// Version the index was built from.
    pub(crate) read_version: u64,
}

impl BuiltListElementIndex {
    /// The segment uuid (its directory under `_indices/`).
    pub(crate) fn uuid(&self) -> String {
        let bytes = self
            .index
            .uuid
            .as_ref()
            .map(|u| u.uuid.clone())
            .unwrap_or_default();
        uuid::Uuid::from_slice(&bytes)
            .map(|u| u.to_string())
            .unwrap_or_default()
    }
}

/// A committed index.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CreatedIndex {
    /// Index name.
    pub(crate) name: String,
    /// Segment uuid.
    pub(crate) uuid: String,
    /// The dataset version that adds the index.
    pub(crate) version: u64,
    /// Its manifest (object path).
    pub(crate) manifest: String,
    /// The version it was built from.
    pub(crate) read_version: u64,
    /// Index entries (elements, plus one per null list).
    pub(crate) entries: u64,
    /// BTree pages.
    pub(crate) pages: u32,
    /// Fragments it covers.
    pub(crate) fragments: Vec<u64>,
    /// Its files and sizes.
    pub(crate) files: Vec<(String, u64)>,
    /// Sorted runs spilled to temporary files during the build.
    pub(crate) sort_runs: usize,
    /// Commit attempts (more than 1 when concurrent commits were rebased over).
    pub(crate) commit_attempts: usize,
}

/// Build and commit a list element index on the latest version of the dataset at `url`.
#[cfg_attr(not(test), allow(dead_code))] // the suite's; the API builds through `api`
pub(crate) async fn create_list_element_index(
    url: &str,
    storage_options: &[(String, String)],
    options: &ListElementIndexOptions,
    stats: &IoStats,
) -> Result<CreatedIndex> {
    let opened = open_url(url, storage_options)?;
    let dataset =
        DatasetVersion::open_opened(&opened, None, Arc::new(DatasetSession::default()), stats)
            .await?;
    let built = build_list_element_index(&opened, &dataset, options, stats).await?;
    commit_list_element_index(&opened, &dataset, &built, stats).await
}

/// Build the index files of `options` on `dataset` (opened from `opened`) and upload them,
/// without committing.
pub(crate) async fn build_list_element_index(
    opened: &OpenedUrl,
    dataset: &DatasetVersion,
    options: &ListElementIndexOptions,
    stats: &IoStats,
) -> Result<BuiltListElementIndex> {
    let manifest = dataset.manifest();
    if manifest.indices.iter().any(|s| s.name == options.name) {
        return Err(Error::InvalidArgument(format!(
            "an index named {:?} already exists (version {})",
            options.name,
            dataset.version()
        )));
    }
    if options.page_rows == 0 {
        return Err(Error::InvalidArgument(
            "--page-rows must be at least 1".into(),
        ));
    }
    let keys = resolve_build_keys(&manifest.schema, &options.column, &options.keys)?;
    let encoder = KeyEncoder::new(keys.types.clone())?;
    let mut sorter = sort::ExternalSorter::new(options.sort_memory_bytes)?;
    let mut fragments = Vec::new();
    for fragment in &manifest.fragments {
        u32::try_from(fragment.id).map_err(|_| {
            Error::unsupported(format!("fragment id {} does not fit 32 bits", fragment.id))
        })?;
        index_fragment(dataset, fragment, &keys, &encoder, &mut sorter, stats).await?;
        fragments.push(fragment.id);
    }
    let version = WriteVersion::for_dataset(&manifest.data_storage_version);
    let sort_runs = sorter.runs();
    let sorted = sorter.finish()?;
    let files = target::write_target(sorted, options.page_rows, version)?;
    let uuid = uuid::Uuid::new_v4();
    let writer = ObjectWriter::new(Arc::clone(&opened.store));
    let mut index_files = Vec::new();
    for name in [target::PAGE_DATA, target::PAGE_LOOKUP] {
        let path = dataset.child(&format!("_indices/{uuid}/{name}"));
        let size = writer
            .upload_file(&files.dir.path().join(name), &path)
            .await?;
        index_files.push(pb::IndexFile {
            path: name.to_string(),
            size_bytes: size,
        });
    }
    let index = index_metadata(
        options,
        &keys,
        &fragments,
        uuid,
        dataset.version(),
        index_files,
    )?;
    Ok(BuiltListElementIndex {
        index,
        keys,
        fragments,
        entries: files.entries,
        pages: files.pages,
        sort_runs,
        read_version: dataset.version(),
    })
}

/// Commit `built` (built from `dataset`): a new version adding the index, rebased over
/// concurrent commits that keep it valid. On failure the uploaded files are removed.
pub(crate) async fn commit_list_element_index(
    opened: &OpenedUrl,
    dataset: &DatasetVersion,
    built: &BuiltListElementIndex,
    stats: &IoStats,
) -> Result<CreatedIndex> {
    let writer = ObjectWriter::new(Arc::clone(&opened.store));
    let options = CommitOptions {
        version_hint: opened.scheme == ObjectStoreScheme::Local,
        max_attempts: MAX_COMMIT_ATTEMPTS,
    };
    let commit = IndexCommit {
        index: built.index.clone(),
        read_version: built.read_version,
    };
    let check = |latest: &Manifest| rebase_check(latest, built, dataset);
    let result = commit_index(&writer, dataset, &commit, check, options, stats).await;
    let committed = match result {
        Ok(c) => c,
        Err(e) => {
            for f in &built.index.files {
                let path = dataset.child(&format!("_indices/{}/{}", built.uuid(), f.path));
                writer.delete_quietly(&path).await;
            }
            return Err(e);
        }
    };
    Ok(CreatedIndex {
        name: built.index.name.clone(),
        uuid: built.uuid(),
        version: committed.version,
        manifest: committed.manifest_path.to_string(),
        read_version: built.read_version,
        entries: built.entries,
        pages: built.pages,
        fragments: built.fragments.clone(),
        files: built
            .index
            .files
            .iter()
            .map(|f| (f.path.clone(), f.size_bytes))
            .collect(),
        sort_runs: built.sort_runs,
        commit_attempts: committed.attempts,
    })
}

/// Whether `built` still fits the `latest` manifest: its name is free, every fragment it
/// covers is unchanged (same data files and rows: deletions are fine, the reader applies
/// them) and its key fields resolve as they did.
fn rebase_check(
    latest: &Manifest,
    built: &BuiltListElementIndex,
    read: &DatasetVersion,
) -> Result<()> {
    let conflict = |what: String| Error::Conflict {
        path: read.root().to_string(),
        what,
    };
    if latest.indices.iter().any(|s| s.name == built.index.name) {
        return Err(conflict(format!(
            "an index named {:?} was committed concurrently (version {}); nothing committed",
            built.index.name, latest.version
        )));
    }
    let original = read.manifest();
    for id in &built.fragments {
        let before = original.fragment(*id);
        let now = latest.fragment(*id);
        let same = match (before, now) {
            (Some(b), Some(n)) => {
                b.physical_rows == n.physical_rows
                    && b.files
                        .iter()
                        .map(|f| &f.path)
                        .eq(n.files.iter().map(|f| &f.path))
            }
            _ => false,
        };
        if !same {
            return Err(conflict(format!(
                "fragment {id} was rewritten or removed by version {} while the index was built from version {}; rebuild the index",
                latest.version, built.read_version
            )));
        }
    }
    if !keys::still_valid(&latest.schema, &built.keys) {
        return Err(conflict(format!(
            "the key fields changed in version {}; rebuild the index",
            latest.version
        )));
    }
    Ok(())
}

/// Entries of one fragment, read `ROWS_PER_READ` rows at a time.
async fn index_fragment(
    dataset: &DatasetVersion,
    fragment: &Fragment,
    keys: &BuildKeys,
    encoder: &KeyEncoder,
    sorter: &mut sort::ExternalSorter,
    stats: &IoStats,
) -> Result<()> {
    let files = open_list_files(dataset, fragment, keys.column_id, &keys.fields, stats).await?;
    let deletions = dataset.deletion_vectors(&[fragment], stats).await?;
    let deleted = deletions.get(&fragment.id);
    let key_children: Vec<usize> = (0..keys.fields.len()).collect();
    let mut start = 0;
    while start < fragment.physical_rows {
        let end = (start + ROWS_PER_READ).min(fragment.physical_rows);
        let selection = RowSelection::Range(start..end);
        let list = read_list_files(
            &files,
            &keys.fields,
            &selection,
            (end - start) as usize,
            stats,
        )
        .await?;
        let entries = encoder.encode_entries(list.as_ref(), &key_children)?;
        for (i, row) in entries.rows.iter().enumerate() {
            let offset = start + *row as u64;
            if deleted.is_some_and(|d| d.0.contains(offset as u32)) {
                continue;
            }
            let value =
                arrow_array::Array::is_valid(&entries.values, i).then(|| entries.values.value(i));
            sorter.push(value, fragment.id << 32 | offset)?;
        }
        start = end;
    }
    Ok(())
}

/// The `IndexMetadata` of the new segment.
fn index_metadata(
    options: &ListElementIndexOptions,
    keys: &BuildKeys,
    fragments: &[u64],
    uuid: uuid::Uuid,
    dataset_version: u64,
    files: Vec<pb::IndexFile>,
) -> Result<pb::IndexMetadata> {
    let details = ListElementIndexDetails {
        key_field_ids: keys.fields.iter().map(|f| f.id).collect(),
        keys: keys.fields.iter().map(|f| f.name.clone()).collect(),
        key_types: keys.logical_types.clone(),
        key_encoding: ListElementKeyEncoding::ArrowRowV1 as i32,
        target_details: Some(prost_types::Any {
            type_url: "/lance.table.BTreeIndexDetails".into(),
            value: vec![],
        }),
        target_index_version: TARGET_INDEX_VERSION,
    };
    let bitmap: RoaringBitmap = fragments.iter().map(|f| *f as u32).collect();
    let mut fragment_bitmap = Vec::new();
    bitmap.serialize_into(&mut fragment_bitmap)?;
    let created_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default();
    Ok(pb::IndexMetadata {
        uuid: Some(pb::Uuid {
            uuid: uuid.as_bytes().to_vec(),
        }),
        fields: vec![keys.column_id],
        name: options.name.clone(),
        dataset_version,
        fragment_bitmap,
        index_details: Some(prost_types::Any {
            type_url: LIST_ELEMENT_DETAILS_TYPE_URL.into(),
            value: details.encode_to_vec(),
        }),
        index_version: Some(0),
        created_at: Some(created_at),
        base_id: None,
        files,
        covering_fields: vec![],
    })
}
