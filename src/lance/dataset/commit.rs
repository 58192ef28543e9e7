//! Committing a new dataset version that adds an index segment, following lance 14's
//! commit protocol (lance-table `io/commit.rs`, `ConditionalPutCommitHandler`):
//!
//! 1. write the transaction file `_transactions/{read_version}-{uuid}.txn` (a serialized
//!    `lance.table.Transaction` with a `CreateIndex` operation), unless the dataset's
//!    writer flags disable transaction files;
//! 2. build the next manifest from the latest one: every field of it is kept byte for byte
//!    (fragments, schema, feature flags, `max_fragment_id`, `next_row_id`, config, base
//!    paths, ...) except those lance resets per version (`version`, `version_aux_data`,
//!    `index_section`, `timestamp`, `tag`, `transaction_file`, `writer_version`, the
//!    transaction section offsets), which are written anew; the index section is the
//!    previous one plus the new entry, written first in the file as lance does, followed
//!    by the inline transaction and the manifest;
//! 3. create `_versions/<name of version + 1>` (V1 or V2 naming, as the dataset uses)
//!    with put-if-absent: on S3 `If-None-Match: *`, so a concurrent writer's manifest is
//!    never overwritten;
//! 4. on a conflict, re-read the latest version, ask the caller whether the index still
//!    fits it (rebase), and try again on top of it — or fail with [`Error::Conflict`].
//!
//! On stores that do not list in order (local disks) lance also writes
//! `_versions/latest_version_hint.json`; so does this module (best effort, as lance).

mod wire;

use std::sync::Arc;

use bytes::Bytes;
use object_store::path::Path;
use prost::Message;

use super::versions::VERSIONS_DIR;
use super::{DatasetVersion, Manifest};
use crate::error::{Error, Result};
use crate::io::write::{ObjectWriter, PutOutcome};
use crate::io::IoStats;
use crate::lance::file::MAGIC;
use crate::lance::proto::table as pb;

/// Attempts before a commit gives up (lance's default `num_retries` is 20).
pub(crate) const MAX_COMMIT_ATTEMPTS: usize = 20;

/// Manifest file footer version numbers (lance-file `MAJOR_VERSION`, `MINOR_VERSION`).
const MANIFEST_VERSION: (u16, u16) = (0, 2);

/// Manifest fields lance sets anew on every version (lance-table `table.proto`):
/// version 3, version_aux_data 4, index_section 6, timestamp 7, tag 8,
/// transaction_file 12, writer_version 13, transaction_section_deprecated 21,
/// transaction_section 23.
const PER_VERSION_FIELDS: &[u32] = &[3, 4, 6, 7, 8, 12, 13, 21, 23];

/// Writer feature flags this commit path keeps valid: deletion files (0), stable row ids
/// (1), the deprecated v2 flag (2), table config (3), base paths (4), no transaction files
/// (5), covering index fields (7), mixed data file versions (8), independent covering
/// fields (13), non-reusable field ids (15). Adding an index entry with no covering fields
/// changes nothing any of them governs; a dataset with another writer flag is refused.
const SUPPORTED_WRITER_FLAGS: u64 =
    0b1 | 0b10 | 0b100 | 0b1000 | 0b1_0000 | 0b10_0000 | 1 << 7 | 1 << 8 | 1 << 13 | 1 << 15;

/// Writer flag: transaction files are disabled.
const NO_TRANSACTION_FILES: u64 = 1 << 5;

/// Directory of transaction files.
const TRANSACTIONS_DIR: &str = "_transactions";

/// A new index segment to commit.
#[derive(Debug, Clone)]
pub(crate) struct IndexCommit {
    /// The segment (its `dataset_version` is the version it was built from).
    pub(crate) index: pb::IndexMetadata,
    /// The version the index was built from.
    pub(crate) read_version: u64,
}

/// A successful commit.
#[derive(Debug, Clone)]
pub(crate) struct Committed {
    /// The new version.
    pub(crate) version: u64,
    /// Its manifest.
    pub(crate) manifest_path: Path,
    /// Attempts it took (1 = no conflict).
    pub(crate) attempts: usize,
}

/// The raw parts of a manifest file.
#[derive(Debug, Clone)]
pub(crate) struct ManifestParts {
    /// The `lance.table.Manifest` protobuf.
    pub(crate) manifest: Vec<u8>,
    /// The `IndexSection` protobuf, when the manifest has one.
    pub(crate) index_section: Option<Vec<u8>>,
}

/// Split a manifest file into its manifest and index section (pure, validated).
pub(crate) fn split_manifest_file(bytes: &[u8]) -> Result<ManifestParts> {
    let size = bytes.len();
    crate::ensure_corrupt!(size >= 20, "manifest file of {size} bytes is too small");
    crate::ensure_corrupt!(&bytes[size - 4..] == MAGIC, "manifest does not end in LANC");
    let position = i64::from_le_bytes(bytes[size - 16..size - 8].try_into().expect("8 bytes"));
    let end = size - 16;
    let position = usize::try_from(position)
        .ok()
        .filter(|p| p.checked_add(4).is_some_and(|e| e <= end))
        .ok_or_else(|| Error::corrupt(format!("manifest position {position} out of range")))?;
    let len = u32::from_le_bytes(bytes[position..position + 4].try_into().expect("4")) as usize;
    crate::ensure_corrupt!(
        position + 4 + len == end,
        "manifest length {len} does not reach the footer"
    );
    let manifest = bytes[position + 4..end].to_vec();
    let proto = pb::Manifest::decode(&manifest[..])
        .map_err(|e| Error::corrupt(format!("manifest protobuf: {e}")))?;
    let index_section = match proto.index_section {
        None => None,
        Some(offset) => {
            let offset = usize::try_from(offset)
                .ok()
                .filter(|o| o.checked_add(4).is_some_and(|e| e <= position))
                .ok_or_else(|| Error::corrupt("index section offset out of range"))?;
            let len = u32::from_le_bytes(bytes[offset..offset + 4].try_into().expect("4")) as usize;
            crate::ensure_corrupt!(
                offset + 4 + len <= position,
                "index section of {len} bytes overlaps the manifest"
            );
            Some(bytes[offset + 4..offset + 4 + len].to_vec())
        }
    };
    Ok(ManifestParts {
        manifest,
        index_section,
    })
}

/// A `lance.table.Transaction` with one `CreateIndex` operation adding `index`.
pub(crate) fn encode_transaction(read_version: u64, uuid: &str, index: &[u8]) -> Vec<u8> {
    let mut create_index = Vec::new();
    wire::put_len_field(&mut create_index, 1, index);
    let mut out = Vec::new();
    wire::put_varint_field(&mut out, 1, read_version);
    wire::put_len_field(&mut out, 2, uuid.as_bytes());
    wire::put_len_field(&mut out, 103, &create_index);
    out
}

/// What a new manifest file records besides the previous manifest.
pub(crate) struct NextVersion<'a> {
    /// The new version number.
    pub(crate) version: u64,
    /// The encoded `IndexMetadata` to add.
    pub(crate) index: &'a [u8],
    /// The encoded transaction (inline copy).
    pub(crate) transaction: &'a [u8],
    /// Transaction file name relative to `_transactions/` (empty: none).
    pub(crate) transaction_file: &'a str,
    /// Commit time: seconds and nanoseconds since the epoch.
    pub(crate) timestamp: (i64, u32),
}

fn put_section(out: &mut Vec<u8>, message: &[u8]) -> Result<u64> {
    let position = out.len() as u64;
    let len = u32::try_from(message.len())
        .map_err(|_| Error::unsupported("manifest section larger than 4 GiB"))?;
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(message);
    Ok(position)
}

/// The next manifest file (pure): index section (previous entries + the new one),
/// transaction section, manifest, footer.
pub(crate) fn next_manifest_file(
    previous: &ManifestParts,
    next: &NextVersion<'_>,
) -> Result<Vec<u8>> {
    let mut section = previous.index_section.clone().unwrap_or_default();
    wire::put_len_field(&mut section, 1, next.index);
    let mut out = Vec::new();
    let index_position = put_section(&mut out, &section)?;
    let transaction_position = put_section(&mut out, next.transaction)?;
    let mut manifest = wire::without_fields(&previous.manifest, PER_VERSION_FIELDS)?;
    wire::put_varint_field(&mut manifest, 3, next.version);
    wire::put_varint_field(&mut manifest, 6, index_position);
    let mut timestamp = Vec::new();
    wire::put_varint_field(&mut timestamp, 1, next.timestamp.0 as u64);
    wire::put_varint_field(&mut timestamp, 2, u64::from(next.timestamp.1));
    wire::put_len_field(&mut manifest, 7, &timestamp);
    if !next.transaction_file.is_empty() {
        wire::put_len_field(&mut manifest, 12, next.transaction_file.as_bytes());
    }
    let mut writer_version = Vec::new();
    wire::put_len_field(&mut writer_version, 1, b"lakeseek");
    wire::put_len_field(&mut writer_version, 2, env!("CARGO_PKG_VERSION").as_bytes());
    wire::put_len_field(&mut manifest, 13, &writer_version);
    wire::put_varint_field(&mut manifest, 23, transaction_position);
    let manifest_position = put_section(&mut out, &manifest)?;
    out.extend_from_slice(&(manifest_position as i64).to_le_bytes());
    out.extend_from_slice(&MANIFEST_VERSION.0.to_le_bytes());
    out.extend_from_slice(&MANIFEST_VERSION.1.to_le_bytes());
    out.extend_from_slice(MAGIC);
    Ok(out)
}

/// How to commit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CommitOptions {
    /// Write `_versions/latest_version_hint.json` (stores that do not list in order).
    pub(crate) version_hint: bool,
    /// Attempts before giving up.
    pub(crate) max_attempts: usize,
}

fn now() -> (i64, u32) {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    (d.as_secs() as i64, d.subsec_nanos())
}

/// Read and split the manifest file of `dataset`, refusing writer flags this commit path
/// does not know. Returns the parts and the writer flags.
async fn manifest_parts(dataset: &DatasetVersion, stats: &IoStats) -> Result<(ManifestParts, u64)> {
    let path = &dataset.manifest_location().path;
    let tail = dataset.store().fetcher.whole(path, stats).await?;
    let parts = split_manifest_file(&tail.bytes).map_err(|e| e.at(path.as_ref(), None))?;
    let proto = pb::Manifest::decode(&parts.manifest[..])
        .map_err(|e| Error::corrupt(format!("manifest protobuf: {e}")).at(path.as_ref(), None))?;
    let unknown = proto.writer_feature_flags & !SUPPORTED_WRITER_FLAGS;
    if unknown != 0 {
        return Err(Error::Unsupported {
            path: path.to_string(),
            what: format!(
                "the dataset has writer feature flags {unknown:#x} that lakeseek cannot keep valid; not committing"
            ),
        });
    }
    Ok((parts, proto.writer_feature_flags))
}

/// Commit `commit` on top of `read` (the version the index was built from), retrying on
/// top of newer versions while `rebase` accepts them (it gets the latest manifest and
/// returns an error when the index no longer fits it).
pub(crate) async fn commit_index(
    writer: &ObjectWriter,
    read: &DatasetVersion,
    commit: &IndexCommit,
    rebase: impl Fn(&Manifest) -> Result<()>,
    options: CommitOptions,
    stats: &IoStats,
) -> Result<Committed> {
    let index = commit.index.encode_to_vec();
    let uuid = uuid::Uuid::new_v4().to_string();
    let transaction = encode_transaction(commit.read_version, &uuid, &index);
    let root = read.root().clone();
    let mut base = read.clone();
    let mut transaction_file = String::new();
    for attempt in 1..=options.max_attempts.max(1) {
        rebase(base.manifest())?;
        let (parts, writer_flags) = manifest_parts(&base, stats).await?;
        if attempt == 1 && writer_flags & NO_TRANSACTION_FILES == 0 {
            transaction_file = format!("{}-{uuid}.txn", commit.read_version);
            let path = base.child(&format!("{TRANSACTIONS_DIR}/{transaction_file}"));
            writer.put(&path, Bytes::from(transaction.clone())).await?;
        }
        let version = base.version() + 1;
        let file = next_manifest_file(
            &parts,
            &NextVersion {
                version,
                index: &index,
                transaction: &transaction,
                transaction_file: &transaction_file,
                timestamp: now(),
            },
        )?;
        let naming = base.manifest_location().naming;
        let path = base.child(&format!("{VERSIONS_DIR}/{}", naming.file_name(version)));
        match writer.put_if_absent(&path, Bytes::from(file)).await? {
            PutOutcome::Created => {
                if options.version_hint {
                    let hint = base.child(&format!("{VERSIONS_DIR}/latest_version_hint.json"));
                    let body = format!("{{\"version\":{version}}}");
                    let _ = writer.put(&hint, Bytes::from(body)).await;
                }
                return Ok(Committed {
                    version,
                    manifest_path: path,
                    attempts: attempt,
                });
            }
            PutOutcome::AlreadyExists => {
                // Someone else committed `version`: continue on top of the latest one.
                let session = Arc::clone(base.session());
                let store = base.store().clone();
                let mut latest = DatasetVersion::open(
                    store.clone(),
                    root.clone(),
                    None,
                    Arc::clone(&session),
                    stats,
                )
                .await?;
                if latest.version() < version {
                    latest =
                        DatasetVersion::open(store, root.clone(), Some(version), session, stats)
                            .await?;
                }
                base = latest;
            }
        }
    }
    Err(Error::Conflict {
        path: root.to_string(),
        what: format!(
            "gave up after {} attempts: other writers kept committing new versions",
            options.max_attempts
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture_manifest() -> Vec<u8> {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/list_element/datasets/detections.lance/_versions/"
        );
        std::fs::read(format!("{dir}18446744073709551612.manifest")).unwrap()
    }

    #[test]
    fn next_manifest_keeps_every_other_field_and_adds_the_index() {
        let previous = split_manifest_file(&fixture_manifest()).unwrap();
        let old = pb::Manifest::decode(&previous.manifest[..]).unwrap();
        let old_section =
            pb::IndexSection::decode(&previous.index_section.clone().unwrap()[..]).unwrap();
        let index = pb::IndexMetadata {
            name: "new_idx".into(),
            uuid: Some(pb::Uuid { uuid: vec![7; 16] }),
            fields: vec![1],
            dataset_version: old.version,
            ..Default::default()
        };
        let encoded = index.encode_to_vec();
        let txn = encode_transaction(old.version, "u-u-i-d", &encoded);
        let file = next_manifest_file(
            &previous,
            &NextVersion {
                version: old.version + 1,
                index: &encoded,
                transaction: &txn,
                transaction_file: "3-u-u-i-d.txn",
                timestamp: (1, 2),
            },
        )
        .unwrap();
        let next = split_manifest_file(&file).unwrap();
        let new = pb::Manifest::decode(&next.manifest[..]).unwrap();
        assert_eq!(new.version, old.version + 1);
        assert_eq!(new.fields, old.fields);
        assert_eq!(new.fragments, old.fragments);
        assert_eq!(new.reader_feature_flags, old.reader_feature_flags);
        assert_eq!(new.data_format, old.data_format);
        assert_eq!(new.index_section, Some(0));
        assert_eq!(new.writer_version.unwrap().library, "lakeseek");
        // Unknown-to-prost fields such as max_fragment_id (11) survive byte for byte.
        let kept = |m: &[u8]| {
            wire::fields(m)
                .unwrap()
                .into_iter()
                .filter(|(t, _)| !PER_VERSION_FIELDS.contains(t))
                .map(|(_, r)| m[r].to_vec())
                .collect::<Vec<_>>()
        };
        assert_eq!(kept(&next.manifest), kept(&previous.manifest));
        assert!(wire::fields(&previous.manifest)
            .unwrap()
            .iter()
            .any(|(t, _)| *t == 11));
        let section = pb::IndexSection::decode(&next.index_section.unwrap()[..]).unwrap();
        assert_eq!(section.indices.len(), old_section.indices.len() + 1);
        assert_eq!(
            section.indices[..old_section.indices.len()],
            old_section.indices[..]
        );
        assert_eq!(section.indices.last().unwrap(), &index);
        // It decodes with lakeseek's manifest reader as well.
        let known = {
            let mut k = super::super::manifest::KnownBytes::new(file.len() as u64);
            k.add(0, Bytes::from(file.clone()));
            k
        };
        match super::super::manifest::decode_manifest_file(&known).unwrap() {
            super::super::manifest::ManifestStep::Done(m) => {
                assert_eq!(m.version, old.version + 1);
                assert!(m.indices.iter().any(|i| i.name == "new_idx"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bad_manifest_files_are_corrupt() {
        let good = fixture_manifest();
        assert!(split_manifest_file(&good[..good.len() - 1]).is_err());
        let mut bad = good.clone();
        let n = bad.len();
        bad[n - 16..n - 8].copy_from_slice(&(n as i64).to_le_bytes());
        assert!(split_manifest_file(&bad).is_err());
        assert!(split_manifest_file(b"LANC").is_err());
    }
}
