//! Bad input gives a clear error (NotFound / Corrupt / Unsupported / InvalidArgument) that
//! names what and where — never a panic, never a wrong answer.

use crate::suite::common::{copy_dir, dataset_fixture, latest_manifest};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::io::IoStats;
use crate::lance::dataset::{DatasetSession, DatasetVersion};
use crate::lance::proto::table as pb;
use crate::suite::common::btree_query::{query_row_addresses, QueryOptions};
use crate::{Error, Result};
use prost::Message;

/// A private copy of a fixture dataset.
fn scratch(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join(format!("{name}.lance"));
    copy_dir(&dataset_fixture(name), &root);
    (dir, root)
}

/// Decode, edit and re-frame the latest manifest (index section first, as lance writes).
fn edit_manifest(root: &Path, edit: impl FnOnce(&mut pb::Manifest, &mut pb::IndexSection)) {
    let path = latest_manifest(root);
    let bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    let pos = i64::from_le_bytes(bytes[n - 16..n - 8].try_into().unwrap()) as usize;
    let mut manifest = pb::Manifest::decode(&bytes[pos + 4..n - 16]).unwrap();
    let at = manifest.index_section.unwrap() as usize;
    let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let mut section = pb::IndexSection::decode(&bytes[at + 4..at + 4 + len]).unwrap();
    edit(&mut manifest, &mut section);
    let mut out = Vec::new();
    let s = section.encode_to_vec();
    manifest.index_section = Some(0);
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(&s);
    let m_pos = out.len() as i64;
    let m = manifest.encode_to_vec();
    out.extend_from_slice(&(m.len() as u32).to_le_bytes());
    out.extend_from_slice(&m);
    out.extend_from_slice(&m_pos.to_le_bytes());
    out.extend_from_slice(&bytes[n - 8..]);
    std::fs::write(&path, out).unwrap();
}

async fn query(root: &Path, filter: &str, allow_scan: bool) -> Result<Vec<u64>> {
    let stats = IoStats::new();
    let ds = DatasetVersion::open_url(
        root.to_str().unwrap(),
        &[],
        None,
        Arc::new(DatasetSession::default()),
        &stats,
    )
    .await?;
    let a = query_row_addresses(&ds, filter, QueryOptions { allow_scan }, &stats).await?;
    Ok(a.row_addresses.iter().collect())
}

fn index_file(root: &Path, column: &str, file: &str) -> PathBuf {
    let bytes = std::fs::read(latest_manifest(root)).unwrap();
    let n = bytes.len();
    let pos = i64::from_le_bytes(bytes[n - 16..n - 8].try_into().unwrap()) as usize;
    let manifest = pb::Manifest::decode(&bytes[pos + 4..n - 16]).unwrap();
    let field = manifest
        .fields
        .iter()
        .find(|f| f.name == column)
        .unwrap()
        .id;
    let at = manifest.index_section.unwrap() as usize;
    let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let section = pb::IndexSection::decode(&bytes[at + 4..at + 4 + len]).unwrap();
    let seg = section
        .indices
        .iter()
        .find(|i| i.fields == [field])
        .unwrap();
    let u = &seg.uuid.as_ref().unwrap().uuid;
    let h: String = u.iter().map(|b| format!("{b:02x}")).collect();
    let uuid = format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    );
    root.join("_indices").join(uuid).join(file)
}

fn assert_mentions(e: &Error, needle: &str) {
    assert!(
        e.to_string().contains(needle),
        "error {e} should mention {needle:?}"
    );
}

#[tokio::test]
async fn missing_dataset_and_missing_version_are_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let e = query(&dir.path().join("nothing.lance"), "i = 1", false)
        .await
        .unwrap_err();
    assert!(matches!(e, Error::NotFound { .. }), "{e}");
    assert_mentions(&e, "_versions");
    let stats = IoStats::new();
    let e = DatasetVersion::open_url(
        dataset_fixture("types").to_str().unwrap(),
        &[],
        Some(999),
        Arc::new(DatasetSession::default()),
        &stats,
    )
    .await
    .unwrap_err();
    assert!(matches!(e, Error::NotFound { .. }), "{e}");
    assert_mentions(&e, "version 999");
}

#[tokio::test]
async fn corrupt_and_truncated_manifests_are_corrupt_with_their_path() {
    let (_d, root) = scratch("v1_names");
    let names: Vec<PathBuf> = std::fs::read_dir(root.join("_versions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    // V1 naming: the latest is the highest number.
    let latest = names
        .iter()
        .max_by_key(|p| {
            p.file_stem()
                .unwrap()
                .to_str()
                .unwrap()
                .parse::<u64>()
                .unwrap_or(0)
        })
        .unwrap()
        .clone();
    let good = std::fs::read(&latest).unwrap();
    std::fs::write(&latest, &good[..good.len() - 5]).unwrap();
    let e = query(&root, "s = 'w005'", false).await.unwrap_err();
    assert!(matches!(e, Error::Corrupt { .. }), "{e}");
    assert_mentions(&e, latest.file_name().unwrap().to_str().unwrap());
    let mut garbage = good.clone();
    let n = garbage.len();
    for b in &mut garbage[n / 2..n - 16] {
        *b = 0xEE;
    }
    std::fs::write(&latest, &garbage).unwrap();
    let e = query(&root, "s = 'w005'", false).await.unwrap_err();
    assert!(matches!(e, Error::Corrupt { .. }), "{e}");
    std::fs::write(&latest, b"tiny").unwrap();
    assert!(matches!(
        query(&root, "s = 'w005'", false).await.unwrap_err(),
        Error::Corrupt { .. }
    ));
}

#[tokio::test]
async fn missing_or_truncated_index_files_are_reported() {
    for (file, truncate) in [
        ("page_lookup.lance", false),
        ("page_data.lance", false),
        ("page_lookup.lance", true),
        ("page_data.lance", true),
    ] {
        let (_d, root) = scratch("fmt_v21");
        let path = index_file(&root, "k", file);
        if truncate {
            let bytes = std::fs::read(&path).unwrap();
            std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        } else {
            std::fs::remove_file(&path).unwrap();
        }
        let e = query(&root, "k = 5", false).await.unwrap_err();
        if truncate {
            assert!(matches!(e, Error::Corrupt { .. }), "{file} truncated: {e}");
        } else {
            assert!(matches!(e, Error::NotFound { .. }), "{file} missing: {e}");
        }
        assert_mentions(&e, file);
    }
}

#[tokio::test]
async fn unknown_index_types_and_versions_are_refused_clearly() {
    let (_d, root) = scratch("fmt_v21");
    edit_manifest(&root, |_, s| {
        for i in &mut s.indices {
            i.index_details.as_mut().unwrap().type_url = "/lance.index.FancyNewIndexDetails".into();
        }
    });
    let e = query(&root, "k = 5", false).await.unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    assert_mentions(&e, "FancyNewIndexDetails");
    // With --allow-scan the answer is still exact.
    let want = query(&dataset_fixture("fmt_v21"), "k = 5", false)
        .await
        .unwrap();
    assert_eq!(query(&root, "k = 5", true).await.unwrap(), want);

    let (_d, root) = scratch("fmt_v21");
    edit_manifest(&root, |_, s| {
        s.indices.iter_mut().for_each(|i| i.index_version = Some(7))
    });
    let e = query(&root, "k = 5", false).await.unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    assert_mentions(&e, "version 7");

    // A BTree of version 0 on a dataset with stable row ids holds row ids: it answers
    // (resolved through the fragments' sequences; `suite::rowids_filters` checks a real
    // one against pylance), it is not refused.
    let (_d, root) = scratch("stable_ids");
    edit_manifest(&root, |_, s| {
        s.indices.iter_mut().for_each(|i| i.index_version = Some(0))
    });
    query(&root, "k = 5", false).await.unwrap();
}

#[tokio::test]
async fn unsupported_reader_features_are_refused() {
    let (_d, root) = scratch("fmt_v21");
    edit_manifest(&root, |m, _| m.reader_feature_flags |= 1 << 6);
    let e = query(&root, "k = 5", false).await.unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    assert_mentions(&e, "6");
}

#[tokio::test]
async fn unindexed_columns_need_allow_scan_and_bad_literals_are_invalid() {
    let root = dataset_fixture("types");
    let e = query(&root, "id < 10", false).await.unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    assert_mentions(&e, "allow_scan");
    assert_eq!(query(&root, "id < 10", true).await.unwrap().len(), 9);
    for (filter, needle) in [
        ("i = 'x'", "cannot be compared"),
        ("nope = 1", "no column"),
        ("i = 1 OR id = 5", "allow_scan"),
        ("i +", "filter"),
    ] {
        let e = query(&root, filter, false).await.unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{filter}: {e}");
        assert_mentions(&e, needle);
    }
}

#[tokio::test]
async fn broken_deletion_files_are_reported() {
    let (_d, root) = scratch("bitmap_del");
    let files: Vec<PathBuf> = std::fs::read_dir(root.join("_deletions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    for f in &files {
        std::fs::write(f, b"garbage garbage garbage").unwrap();
    }
    let e = query(&root, "k = 7", false).await.unwrap_err();
    assert!(matches!(e, Error::Corrupt { .. }), "{e}");
    assert_mentions(&e, "_deletions");
    for f in &files {
        std::fs::remove_file(f).unwrap();
    }
    let e = query(&root, "k = 7", false).await.unwrap_err();
    assert!(matches!(e, Error::NotFound { .. }), "{e}");
}

#[tokio::test]
async fn corrupt_lookup_contents_are_corrupt_not_wrong() {
    let (_d, root) = scratch("fmt_v21");
    let path = index_file(&root, "k", "page_lookup.lance");
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    // Break the footer magic while keeping the size the manifest records.
    bytes[n - 1] = b'X';
    std::fs::write(&path, &bytes).unwrap();
    let e = query(&root, "k = 5", false).await.unwrap_err();
    assert!(matches!(e, Error::Corrupt { .. }), "{e}");
    assert_mentions(&e, "page_lookup.lance");
}
