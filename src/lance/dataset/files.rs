//! Opening a dataset's data files through its session caches, and asking whether opening a
//! data or index file needs a request.

use std::sync::Arc;

use object_store::path::Path;

use super::{DataFile, DatasetVersion, Fragment, IndexSegment, Schema};
use crate::error::{Error, Result};
use crate::io::cache::CacheKey;
use crate::io::{IoStats, ObjectVersion};
use crate::lance::data_file::DataFileReader;
use crate::lance::legacy::open::id_range;
use crate::lance::legacy::read::LegacySchemaHint;
use crate::lance::proto::file as file_pb;

/// How [`DatasetVersion::open_index_file_sized`] reads an index file whose size the manifest
/// lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IndexFileReads {
    /// Files up to this size are read whole by the open.
    pub(crate) whole: u64,
    /// Larger files: the suffix the open reads (their metadata region; a larger region costs
    /// one more read of what is missing).
    pub(crate) tail: u64,
}

impl DatasetVersion {
    /// A reader of data file `file`, v2 or legacy v1 (metadata through the session caches;
    /// the manifest's size, when it records one, saves a HEAD).
    pub(crate) async fn open_data_file(
        &self,
        file: &DataFile,
        stats: &IoStats,
    ) -> Result<DataFileReader> {
        DataFileReader::open(
            self.store().fetcher.clone(),
            self.data_file_path(file),
            file.size_bytes,
            Arc::clone(&self.session().reader_caches),
            legacy_hint(&self.manifest().schema, file),
            stats,
        )
        .await
    }

    /// [`Self::open_data_file`] whose suffix read, when the metadata is not cached, asks
    /// for `tail_bytes` (see [`DataFileReader::open_with_tail`]).
    pub(crate) async fn open_data_file_with_tail(
        &self,
        file: &DataFile,
        tail_bytes: u64,
        stats: &IoStats,
    ) -> Result<DataFileReader> {
        DataFileReader::open_with_tail(
            self.store().fetcher.clone(),
            self.data_file_path(file),
            file.size_bytes,
            Arc::clone(&self.session().reader_caches),
            legacy_hint(&self.manifest().schema, file),
            tail_bytes,
            stats,
        )
        .await
    }

    /// [`Self::open_index_file`] shaped by what the manifest lists: a file of at most
    /// `reads.whole` bytes is read whole (its pages and global buffers come with its
    /// metadata, in one request), a larger one from a suffix of `reads.tail` bytes; no
    /// request when its metadata (or its decoded legacy file) is cached; the default suffix
    /// when no size is listed.
    pub(crate) async fn open_index_file_sized(
        &self,
        segment: &IndexSegment,
        name: &str,
        reads: IndexFileReads,
        stats: &IoStats,
    ) -> Result<DataFileReader> {
        let path = self.index_file_path(segment, name)?;
        let Some(size) = segment.file_size(name) else {
            return self.open_index_file(segment, name, stats).await;
        };
        let fetcher = self.store().fetcher.clone();
        let caches = Arc::clone(&self.session().reader_caches);
        if size == 0 || size > reads.whole || self.is_index_file_cached(segment, name).await {
            let tail = reads.tail.max(1);
            return DataFileReader::open_with_tail(
                fetcher,
                path,
                Some(size),
                caches,
                None,
                tail,
                stats,
            )
            .await;
        }
        let known = ObjectVersion { size, etag: None };
        let whole = fetcher.tail_of(&path, size, Some(&known), stats).await?;
        DataFileReader::open_from_tail(fetcher, path, whole, caches, stats).await
    }

    /// A reader of index file `name` of `segment` (metadata through the session caches; the
    /// size the manifest lists for it, when it does, saves a HEAD): the one way every index
    /// kind, prewarm and `inspect` open an index file. Index files are self-describing: a v2
    /// file, or a legacy v1 file (pylance <= 0.18 wrote BTree files so) with its own schema.
    pub(crate) async fn open_index_file(
        &self,
        segment: &IndexSegment,
        name: &str,
        stats: &IoStats,
    ) -> Result<DataFileReader> {
        DataFileReader::open(
            self.store().fetcher.clone(),
            self.index_file_path(segment, name)?,
            segment.file_size(name),
            Arc::clone(&self.session().reader_caches),
            None,
            stats,
        )
        .await
    }

    /// A reader of data file `file` of `fragment` and the position of field `field_id` in
    /// its schema; an error naming the file when it does not hold the field the manifest
    /// says it does, or has another row count than the fragment.
    pub(crate) async fn open_data_field(
        &self,
        fragment: &Fragment,
        file: &DataFile,
        field_id: i32,
        stats: &IoStats,
    ) -> Result<(DataFileReader, usize)> {
        let reader = self.open_data_file(file, stats).await?;
        let at = |e: Error| e.at(reader.path().as_ref(), None);
        let position = reader.schema().fields.iter().position(|f| f.id == field_id);
        let position = position.ok_or_else(|| {
            at(Error::corrupt(format!(
                "data file does not hold field {field_id} although the manifest says so"
            )))
        })?;
        if reader.num_rows() != fragment.physical_rows {
            return Err(at(Error::corrupt(format!(
                "data file has {} rows, fragment {} has {}",
                reader.num_rows(),
                fragment.id,
                fragment.physical_rows
            ))));
        }
        Ok((reader, position))
    }

    /// Whether the metadata of the file at `path` of `size` bytes is in the session caches.
    pub(crate) async fn is_file_metadata_cached(&self, path: &Path, size: u64) -> bool {
        let key = CacheKey {
            path: path.to_string(),
            version: ObjectVersion { size, etag: None },
            item: (),
        };
        let cache = &self.session().reader_caches.file_metadata;
        cache.get(&key).await.is_some()
    }

    /// Whether opening index file `name` of `segment` needs no request
    /// (its v2 metadata, or its decoded legacy file, is cached).
    pub(crate) async fn is_index_file_cached(&self, segment: &IndexSegment, name: &str) -> bool {
        let (Ok(path), Some(size)) = (self.index_file_path(segment, name), segment.file_size(name))
        else {
            return false;
        };
        if self.is_file_metadata_cached(&path, size).await {
            return true;
        }
        let key = CacheKey {
            path: path.to_string(),
            version: ObjectVersion { size, etag: None },
            item: None,
        };
        self.session()
            .reader_caches
            .legacy
            .get(&key)
            .await
            .is_some()
    }
}

/// The schema a legacy data file is read by: the dataset fields it holds (with their
/// ancestors), and the field-id range of its page table. `None` for files the manifest
/// records as v2 (their reader needs no hint).
pub(super) fn legacy_hint(schema: &Schema, file: &DataFile) -> Option<LegacySchemaHint> {
    if file.file_version.0 >= 2 || file.file_version == (0, 3) {
        return None;
    }
    let mut wanted: std::collections::HashSet<i32> = file.fields.iter().copied().collect();
    for id in &file.fields {
        let mut parent = schema.field_by_id(*id).map(|f| f.parent_id);
        while let Some(p) = parent.filter(|p| *p >= 0 && wanted.insert(*p)) {
            parent = schema.field_by_id(p).map(|f| f.parent_id);
        }
    }
    let fields = schema
        .fields
        .iter()
        .filter(|f| wanted.contains(&f.id))
        .map(|f| file_pb::Field {
            name: f.name.clone(),
            id: f.id,
            parent_id: f.parent_id,
            logical_type: f.logical_type.clone(),
            nullable: f.nullable,
            metadata: f.metadata.clone(),
            ..Default::default()
        })
        .collect();
    let field_ids = id_range(file.fields.iter().copied()).ok()?;
    Some(LegacySchemaHint {
        schema: file_pb::Schema {
            fields,
            metadata: Default::default(),
        },
        field_ids,
    })
}
