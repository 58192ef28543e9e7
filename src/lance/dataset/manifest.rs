//! Manifest files: byte framing (pure planner over the bytes read so far) and the decoded
//! model (schema, fragments, data files, deletion files, index segments).
//!
//! Layout (lance-table 14.0.2): the last 16 bytes are `i64 LE position P, u16 major,
//! u16 minor, "LANC"`; at P a `u32 LE` length L and L bytes of `lance.table.Manifest`, with
//! `P + 4 + L == size - 16`. Other sections (the `IndexSection` at `Manifest.index_section`,
//! the transaction) precede P, each a u32 length + protobuf. pylance writes the index
//! section first, at offset 0.

use std::ops::Range;

use bytes::Bytes;
use prost::Message;
use roaring::RoaringBitmap;

use crate::error::{Error, Result};
use crate::io::cache::DeepSize;
use crate::lance::dataset::paths::check_relative_path;
use crate::lance::dataset::schema::Schema;
use crate::lance::proto::table as pb;

/// Bytes read from the end of a manifest on the first request (lance reads 64 KiB too):
/// small manifests (the common case) arrive whole, index section included.
pub(crate) const MANIFEST_TAIL_BYTES: u64 = 64 * 1024;
/// Length of the manifest footer.
pub(crate) const MANIFEST_FOOTER_LEN: u64 = 16;
const MAGIC: &[u8; 4] = b"LANC";

/// Reader feature flag bits (Manifest.reader_feature_flags).
pub(crate) mod reader_flags {
    /// Deletion files are present.
    pub(crate) const DELETION_FILES: u64 = 1 << 0;
    /// Stable row ids.
    pub(crate) const STABLE_ROW_IDS: u64 = 1 << 1;
    /// Deprecated "use v2 format" flag.
    pub(crate) const USE_V2_FORMAT_DEPRECATED: u64 = 1 << 2;
    /// Table config present.
    pub(crate) const TABLE_CONFIG: u64 = 1 << 3;
    /// Multiple base paths.
    #[cfg(test)]
    pub(crate) const BASE_PATHS: u64 = 1 << 4;
    /// Transaction files disabled.
    pub(crate) const NO_TRANSACTION_FILES: u64 = 1 << 5;
    /// Some index declares covering fields.
    pub(crate) const COVERING_INDEX_FIELDS: u64 = 1 << 7;
    /// Data files may have different exact versions.
    pub(crate) const MIXED_DATA_FILE_VERSIONS: u64 = 1 << 8;
    /// Fragment reuse index present.
    pub(crate) const FRAGMENT_REUSE_INDEX: u64 = 1 << 10;
    /// IndexMetadata.fields and covering_fields are independent declarations.
    pub(crate) const INDEPENDENT_COVERING_FIELDS: u64 = 1 << 13;

    /// Every bit lakeseek can read a dataset with. Deletion files, stable row ids and
    /// fragment reuse are handled by the reader; covering fields are safe because an index
    /// is only used when its `fields` are exactly one key; mixed data-file versions are
    /// safe because each data file's own version is used. Everything else (overlays,
    /// base paths, fragment trees, spilled lineage, managed blobs, zone seeds, unknown
    /// bits) is refused.
    pub(crate) const SUPPORTED: u64 = DELETION_FILES
        | STABLE_ROW_IDS
        | USE_V2_FORMAT_DEPRECATED
        | TABLE_CONFIG
        | NO_TRANSACTION_FILES
        | COVERING_INDEX_FIELDS
        | MIXED_DATA_FILE_VERSIONS
        | FRAGMENT_REUSE_INDEX
        | INDEPENDENT_COVERING_FIELDS;
}

/// Bytes of one object known so far, as absolute-offset chunks.
#[derive(Debug, Clone, Default)]
pub(crate) struct KnownBytes {
    size: u64,
    chunks: Vec<(u64, Bytes)>,
}

impl KnownBytes {
    /// Nothing known yet about an object of `size` bytes.
    pub(crate) fn new(size: u64) -> Self {
        Self {
            size,
            chunks: Vec::new(),
        }
    }

    /// Object size.
    pub(crate) fn size(&self) -> u64 {
        self.size
    }

    /// Record bytes read at absolute offset `start`.
    pub(crate) fn add(&mut self, start: u64, bytes: Bytes) {
        self.chunks.push((start, bytes));
    }

    /// The bytes of `range` if one chunk covers it.
    pub(crate) fn slice(&self, range: Range<u64>) -> Option<Bytes> {
        self.chunks.iter().find_map(|(start, b)| {
            let end = start + b.len() as u64;
            (range.start >= *start && range.end <= end && range.start <= range.end)
                .then(|| b.slice((range.start - start) as usize..(range.end - start) as usize))
        })
    }
}

/// Next step of decoding a manifest file.
#[derive(Debug)]
pub(crate) enum ManifestStep {
    /// Read this absolute range and call [`decode_manifest_file`] again.
    NeedRange(Range<u64>),
    /// Fully decoded.
    Done(Box<Manifest>),
}

/// Decode a manifest file from the bytes known so far (pure). Asks for at most two more
/// ranges: the rest of an oversized manifest, then an index section outside the tail.
pub(crate) fn decode_manifest_file(known: &KnownBytes) -> Result<ManifestStep> {
    let size = known.size();
    if size < MANIFEST_FOOTER_LEN + 4 {
        return Err(Error::corrupt(format!(
            "manifest file of {size} bytes is too small"
        )));
    }
    let footer_range = size - MANIFEST_FOOTER_LEN..size;
    let Some(footer) = known.slice(footer_range.clone()) else {
        return Ok(ManifestStep::NeedRange(footer_range));
    };
    if &footer[12..16] != MAGIC {
        return Err(Error::Corrupt {
            path: String::new(),
            range: Some(footer_range),
            what: "manifest footer does not end in LANC".into(),
            source: None,
        });
    }
    let position = i64::from_le_bytes(footer[0..8].try_into().expect("8 bytes"));
    let message_end = size - MANIFEST_FOOTER_LEN;
    let position = u64::try_from(position)
        .ok()
        .filter(|p| p.checked_add(4).is_some_and(|e| e <= message_end))
        .ok_or_else(|| Error::Corrupt {
            path: String::new(),
            range: Some(footer_range.clone()),
            what: format!("manifest position {position} outside the {size}-byte file"),
            source: None,
        })?;
    let Some(message) = known.slice(position..message_end) else {
        return Ok(ManifestStep::NeedRange(position..message_end));
    };
    let declared = u32::from_le_bytes(message[0..4].try_into().expect("4 bytes")) as u64;
    if declared != message_end - position - 4 {
        return Err(Error::Corrupt {
            path: String::new(),
            range: Some(position..position + 4),
            what: format!(
                "manifest length {declared} does not reach the footer ({} bytes before it)",
                message_end - position - 4
            ),
            source: None,
        });
    }
    let proto = pb::Manifest::decode(&message[4..]).map_err(|e| {
        Error::corrupt(format!("manifest protobuf: {e}"))
            .with_source(e)
            .at("", Some(position..message_end))
    })?;
    let section = match proto.index_section {
        None => None,
        Some(offset) => match decode_index_section(known, offset, position)? {
            Ok(section) => Some(section),
            Err(range) => return Ok(ManifestStep::NeedRange(range)),
        },
    };
    Manifest::from_proto(proto, section).map(|m| ManifestStep::Done(Box::new(m)))
}

/// The index section at `offset` (it must end before the manifest at `limit`), or the
/// range to read first.
fn decode_index_section(
    known: &KnownBytes,
    offset: u64,
    limit: u64,
) -> Result<std::result::Result<pb::IndexSection, Range<u64>>> {
    let bad = |what: String| Error::Corrupt {
        path: String::new(),
        range: Some(offset..limit),
        what,
        source: None,
    };
    if offset.checked_add(4).is_none_or(|e| e > limit) {
        return Err(bad(format!(
            "index section offset {offset} is not before the manifest"
        )));
    }
    let Some(len_bytes) = known.slice(offset..offset + 4) else {
        return Ok(Err(offset..limit));
    };
    let len = u32::from_le_bytes(len_bytes[..].try_into().expect("4 bytes")) as u64;
    let end = offset + 4 + len;
    if end > limit {
        return Err(bad(format!(
            "index section of {len} bytes overlaps the manifest"
        )));
    }
    let Some(body) = known.slice(offset + 4..end) else {
        return Ok(Err(offset..limit));
    };
    pb::IndexSection::decode(&body[..])
        .map(Ok)
        .map_err(|e| bad(format!("index section protobuf: {e}")).with_source(e))
}

/// A decoded manifest: one version of a dataset.
#[derive(Debug, Clone)]
pub(crate) struct Manifest {
    /// Dataset version.
    pub version: u64,
    /// Schema with field ids.
    pub schema: Schema,
    /// Fragments of this version, in manifest order.
    pub fragments: Vec<Fragment>,
    /// Index segments (empty when the manifest has no index section).
    pub indices: Vec<IndexSegment>,
    /// Reader feature flags (all understood, see [`reader_flags::SUPPORTED`]).
    pub reader_feature_flags: u64,
    /// Default data storage version, e.g. "2.2" ("legacy" for v1 datasets).
    pub data_storage_version: String,
    /// Writer library and version, e.g. "lance 14.0.2".
    pub writer: Option<String>,
    /// Commit time (RFC 3339, UTC), when the manifest records it.
    pub timestamp: Option<String>,
    /// Next unused stable row id: every id of the version is below it.
    pub next_row_id: u64,
}

/// One fragment.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Fragment {
    /// Fragment id: the high 32 bits of its row addresses.
    pub id: u64,
    /// Rows ever written (deleted rows keep their offsets).
    pub physical_rows: u64,
    /// Data files.
    pub files: Vec<DataFile>,
    /// Deleted rows, if any.
    pub deletion: Option<DeletionFileRef>,
    /// Stable row id of each physical row (datasets with stable row ids only).
    pub row_ids: Option<std::sync::Arc<crate::lance::rowids::RowIdSequence>>,
}

/// One data file of a fragment.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DataFile {
    /// Path relative to `<root>/data/`.
    pub path: String,
    /// Field ids stored in the file.
    pub fields: Vec<i32>,
    /// Column index of each entry of `fields`.
    pub column_indices: Vec<i32>,
    /// File format version (major, minor).
    pub file_version: (u32, u32),
    /// File size when the manifest records it.
    pub size_bytes: Option<u64>,
}

impl DataFile {
    /// Column index in this file of field `id`, if the file stores it.
    #[cfg(test)]
    pub(crate) fn column_of(&self, id: i32) -> Option<u32> {
        let pos = self.fields.iter().position(|f| *f == id)?;
        self.column_indices
            .get(pos)
            .and_then(|c| u32::try_from(*c).ok())
    }
}

/// Deletion file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum DeletionKind {
    /// Arrow IPC file, one UInt32 column of deleted offsets (`.arrow`).
    Arrow,
    /// Portable roaring bitmap of deleted offsets (`.bin`).
    Bitmap,
}

/// Reference to a fragment's deletion file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DeletionFileRef {
    /// Format.
    pub kind: DeletionKind,
    /// Version the deleting transaction read.
    pub read_version: u64,
    /// Writer-chosen id.
    pub id: u64,
    /// Number of deleted rows (0 = unknown).
    pub num_deleted_rows: u64,
}

impl DeletionFileRef {
    /// Path relative to the dataset root: `_deletions/{fragment}-{read_version}-{id}.{ext}`.
    pub(crate) fn relative_path(&self, fragment_id: u64) -> String {
        let ext = match self.kind {
            DeletionKind::Arrow => "arrow",
            DeletionKind::Bitmap => "bin",
        };
        format!(
            "_deletions/{fragment_id}-{}-{}.{ext}",
            self.read_version, self.id
        )
    }
}

/// One index segment (IndexMetadata).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct IndexSegment {
    /// 16 uuid bytes.
    pub uuid: [u8; 16],
    /// Index name (shared by the segments of one logical index).
    pub name: String,
    /// Field ids (keys; see the covering-fields caution).
    pub fields: Vec<i32>,
    /// Version the segment was built at.
    pub dataset_version: u64,
    /// Covered fragment ids (`None` when the manifest does not record them).
    pub fragment_bitmap: Option<RoaringBitmap>,
    /// Type URL of the index details, e.g. "/lance.table.BTreeIndexDetails".
    pub details_type_url: Option<String>,
    /// Serialized details message.
    pub details: Vec<u8>,
    /// Whether `details_type_url` was inferred from the index's files (old releases wrote
    /// no details).
    pub details_inferred: bool,
    /// Index format version (absent = 0).
    pub index_version: i32,
    /// Files with sizes.
    pub files: Vec<IndexFileEntry>,
    /// Covering fields.
    pub covering_fields: Vec<i32>,
    /// Base path id (files outside the dataset root).
    pub base_id: Option<u32>,
}

/// One file of an index segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IndexFileEntry {
    /// Path relative to the index directory.
    pub path: String,
    /// Size in bytes.
    pub size_bytes: u64,
}

impl IndexSegment {
    /// Canonical hyphenated lowercase uuid (the directory name under `_indices/`).
    pub(crate) fn uuid_string(&self) -> String {
        let h: String = self.uuid.iter().map(|b| format!("{b:02x}")).collect();
        format!(
            "{}-{}-{}-{}-{}",
            &h[0..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..32]
        )
    }

    /// Index type name: the part of the details type URL after the last '/'.
    pub(crate) fn type_name(&self) -> Option<&str> {
        self.details_type_url
            .as_deref()
            .map(|u| u.rsplit('/').next().unwrap_or(u))
    }

    /// Recorded size of file `name`, if listed.
    pub(crate) fn file_size(&self, name: &str) -> Option<u64> {
        self.files
            .iter()
            .find(|f| f.path == name)
            .map(|f| f.size_bytes)
    }
}

impl Manifest {
    /// Validate and convert the protobufs.
    pub(crate) fn from_proto(
        proto: pb::Manifest,
        section: Option<pb::IndexSection>,
    ) -> Result<Self> {
        crate::lance::rowids::refuse_unsupported_row_id_flags(proto.reader_feature_flags)?;
        let unknown = proto.reader_feature_flags & !reader_flags::SUPPORTED;
        if unknown != 0 {
            return Err(Error::unsupported(format!(
                "manifest requires reader features lakeseek does not implement (flag bits {})",
                bit_list(unknown)
            )));
        }
        if proto.fragment_tree.is_some() {
            return Err(Error::unsupported(
                "manifest stores fragments in a fragment tree",
            ));
        }
        let schema = Schema::from_proto(&proto.fields)?;
        let mut fragments = Vec::with_capacity(proto.fragments.len());
        for f in proto.fragments {
            if !f.overlays.is_empty() {
                return Err(Error::unsupported(format!(
                    "fragment {} has data overlay files",
                    f.id
                )));
            }
            fragments.push(fragment_from_proto(f)?);
        }
        let mut seen = std::collections::HashSet::new();
        if let Some(dup) = fragments.iter().find(|f| !seen.insert(f.id)) {
            return Err(Error::corrupt(format!(
                "fragment id {} appears twice (a bug of old lance writers; the two fragments' \
                 row addresses cannot be told apart: rewrite the dataset with a current lance, \
                 e.g. by compacting it)",
                dup.id
            )));
        }
        let indices = section
            .map(|s| {
                s.indices
                    .into_iter()
                    .map(segment_from_proto)
                    .collect::<Result<Vec<_>>>()
            })
            .transpose()?
            .unwrap_or_default();
        crate::lance::rowids::check_every_fragment_has_row_ids(
            proto.reader_feature_flags & reader_flags::STABLE_ROW_IDS != 0,
            fragments.iter().map(|f| (f.id, f.row_ids.is_some())),
        )?;
        let data_storage_version = storage_version_name(proto.data_format, &fragments);
        Ok(Self {
            version: proto.version,
            schema,
            fragments,
            indices,
            reader_feature_flags: proto.reader_feature_flags,
            data_storage_version,
            writer: proto
                .writer_version
                .map(|w| format!("{} {}", w.library, w.version)),
            timestamp: proto.timestamp.and_then(rfc3339),
            next_row_id: proto.next_row_id,
        })
    }

    /// Whether the dataset uses stable row ids.
    pub(crate) fn uses_stable_row_ids(&self) -> bool {
        self.reader_feature_flags & reader_flags::STABLE_ROW_IDS != 0
    }

    /// The fragment with this id.
    pub(crate) fn fragment(&self, id: u64) -> Option<&Fragment> {
        self.fragments.iter().find(|f| f.id == id)
    }

    /// Ids of all fragments.
    pub(crate) fn fragment_ids(&self) -> RoaringBitmap {
        self.fragments
            .iter()
            .filter_map(|f| u32::try_from(f.id).ok())
            .collect()
    }
}

fn bit_list(flags: u64) -> String {
    (0..64)
        .filter(|b| flags & (1 << b) != 0)
        .map(|b| b.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn fragment_from_proto(f: pb::DataFragment) -> Result<Fragment> {
    if u32::try_from(f.id).is_err() {
        return Err(Error::corrupt(format!(
            "fragment id {} does not fit in 32 bits",
            f.id
        )));
    }
    if f.physical_rows > u32::MAX as u64 + 1 {
        return Err(Error::corrupt(format!(
            "fragment {} has {} rows",
            f.id, f.physical_rows
        )));
    }
    let row_ids = crate::lance::rowids::fragment_row_ids(&f)?;
    let mut files = Vec::with_capacity(f.files.len());
    for d in f.files {
        if d.base_id.is_some() {
            return Err(Error::unsupported(format!(
                "data file {} of fragment {} lives under another base path",
                d.path, f.id
            )));
        }
        check_relative_path(&format!("data file of fragment {}", f.id), &d.path)?;
        if d.fields.len() != d.column_indices.len() && !d.column_indices.is_empty() {
            return Err(Error::corrupt(format!(
                "data file {}: {} fields but {} column indices",
                d.path,
                d.fields.len(),
                d.column_indices.len()
            )));
        }
        files.push(DataFile {
            path: d.path,
            fields: d.fields,
            column_indices: d.column_indices,
            file_version: (d.file_major_version, d.file_minor_version),
            size_bytes: (d.file_size_bytes > 0).then_some(d.file_size_bytes),
        });
    }
    let deletion = match f.deletion_file {
        None => None,
        Some(d) => {
            if d.base_id.is_some() {
                return Err(Error::unsupported(format!(
                    "deletion file of fragment {} lives under another base path",
                    f.id
                )));
            }
            let kind = match pb::DeletionFileType::try_from(d.file_type) {
                Ok(pb::DeletionFileType::ArrowArray) => DeletionKind::Arrow,
                Ok(pb::DeletionFileType::Bitmap) => DeletionKind::Bitmap,
                Err(_) => {
                    return Err(Error::unsupported(format!(
                        "deletion file type {} of fragment {}",
                        d.file_type, f.id
                    )))
                }
            };
            Some(DeletionFileRef {
                kind,
                read_version: d.read_version,
                id: d.id,
                num_deleted_rows: d.num_deleted_rows,
            })
        }
    };
    Ok(Fragment {
        id: f.id,
        physical_rows: f.physical_rows,
        files,
        deletion,
        row_ids,
    })
}

/// The dataset's storage version as lance names it. A manifest that records none (written
/// before lance recorded it, e.g. by pylance 0.13) has the version of its first data file,
/// as lance infers it, and is `"legacy"` when no file records one; `"0.1"`/`"0.2"` are
/// `"legacy"`.
fn storage_version_name(format: Option<pb::DataStorageFormat>, fragments: &[Fragment]) -> String {
    let first_file = fragments.iter().flat_map(|f| f.files.first()).next();
    match format.map(|d| d.version) {
        None => match first_file.map(|f| f.file_version) {
            Some((0, 3) | (2, 0)) => "2.0".to_string(),
            Some((2, minor)) => format!("2.{minor}"),
            _ => "legacy".to_string(),
        },
        Some(v) if v.is_empty() || v == "0.1" || v == "0.2" || v == "legacy" => {
            "legacy".to_string()
        }
        Some(v) if v == "0.3" => "2.0".to_string(),
        Some(v) => v,
    }
}

/// A protobuf timestamp as RFC 3339 UTC (`None` when out of range).
fn rfc3339(t: prost_types::Timestamp) -> Option<String> {
    let nanos = u32::try_from(t.nanos).ok()?;
    let time = chrono::DateTime::<chrono::Utc>::from_timestamp(t.seconds, nanos)?;
    Some(time.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true))
}

fn segment_from_proto(m: pb::IndexMetadata) -> Result<IndexSegment> {
    let uuid_bytes = m.uuid.map(|u| u.uuid).unwrap_or_default();
    let uuid: [u8; 16] = uuid_bytes.as_slice().try_into().map_err(|_| {
        Error::corrupt(format!(
            "index {:?}: uuid has {} bytes, not 16",
            m.name,
            uuid_bytes.len()
        ))
    })?;
    let fragment_bitmap = if m.fragment_bitmap.is_empty() {
        None
    } else {
        Some(
            RoaringBitmap::deserialize_from(&m.fragment_bitmap[..]).map_err(|e| {
                Error::corrupt(format!("index {:?}: fragment bitmap: {e}", m.name)).with_source(e)
            })?,
        )
    };
    for file in &m.files {
        check_relative_path(&format!("file of index {:?}", m.name), &file.path)?;
    }
    let (details_type_url, details) = match m.index_details {
        Some(any) => (Some(any.type_url), any.value),
        None => (None, Vec::new()),
    };
    Ok(IndexSegment {
        uuid,
        name: m.name,
        fields: m.fields,
        dataset_version: m.dataset_version,
        fragment_bitmap,
        details_type_url,
        details,
        details_inferred: false,
        index_version: m.index_version.unwrap_or(0),
        files: m
            .files
            .into_iter()
            .map(|f| IndexFileEntry {
                path: f.path,
                size_bytes: f.size_bytes,
            })
            .collect(),
        covering_fields: m.covering_fields,
        base_id: m.base_id,
    })
}

impl DeepSize for Manifest {
    fn deep_size(&self) -> usize {
        let fields: usize = self
            .schema
            .fields
            .iter()
            .map(|f| 64 + f.name.len() + f.logical_type.len())
            .sum();
        let frags: usize = self
            .fragments
            .iter()
            .map(|f| {
                96 + f.row_ids.as_ref().map_or(0, |r| r.approx_bytes())
                    + f.files
                        .iter()
                        .map(|d| 64 + d.path.len() + 8 * d.fields.len())
                        .sum::<usize>()
            })
            .sum();
        let indices: usize = self
            .indices
            .iter()
            .map(|i| {
                128 + i.name.len()
                    + i.details.len()
                    + i.fragment_bitmap
                        .as_ref()
                        .map_or(0, |b| b.serialized_size())
            })
            .sum();
        256 + fields + frags + indices
    }
}

#[cfg(test)]
mod tests;
