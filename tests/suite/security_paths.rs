//! Object paths named by a manifest never leave the dataset root: data files and index
//! files with `..`, absolute paths, other buckets or schemes are refused with a clear
//! error (and over S3 no request is made outside the root); files under another base path
//! (data, deletion, BTree and list-element index segments) are refused as unsupported.

use crate::suite::common;
use crate::suite::common::{copy_dir, latest_manifest};

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::index::list_element::parse_any_element_filter;
use crate::index::list_element::query::{plan_any_element_query, AnyElementOptions};
use crate::index::list_element::CallStrategy;
use crate::io::IoStats;
use crate::lance::dataset::manifest::reader_flags;
use crate::lance::dataset::{DatasetSession, DatasetVersion};
use crate::lance::proto::table as pb;
use crate::suite::common::any_element::execute_any_element_query;
use crate::suite::common::btree_query::{query_row_addresses, QueryOptions};
use crate::Error;
use common::S3TestServer;
use prost::Message;
use serde_json::Value;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A private copy of a fixture dataset (`rel` under tests/fixtures).
fn scratch(rel: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("t.lance");
    copy_dir(&fixtures().join(rel), &root);
    (dir, root)
}

/// Decode, edit and re-frame the latest manifest (index section first, as lance writes).
fn edit_manifest(root: &Path, edit: impl FnOnce(&mut pb::Manifest, &mut pb::IndexSection)) {
    let path = latest_manifest(root);
    let bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    let pos = i64::from_le_bytes(bytes[n - 16..n - 8].try_into().unwrap()) as usize;
    let mut manifest = pb::Manifest::decode(&bytes[pos + 4..n - 16]).unwrap();
    let mut section = match manifest.index_section {
        Some(at) => {
            let at = at as usize;
            let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
            pb::IndexSection::decode(&bytes[at + 4..at + 4 + len]).unwrap()
        }
        None => pb::IndexSection::default(),
    };
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

async fn open(root: &Path) -> crate::Result<DatasetVersion> {
    DatasetVersion::open_url(
        root.to_str().unwrap(),
        &[],
        None,
        Arc::new(DatasetSession::default()),
        &IoStats::new(),
    )
    .await
}

async fn query(root: &Path, filter: &str) -> crate::Result<Vec<u64>> {
    let stats = IoStats::new();
    let ds = open(root).await?;
    let a = query_row_addresses(&ds, filter, QueryOptions::default(), &stats).await?;
    Ok(a.row_addresses.iter().collect())
}

const ESCAPES: &[&str] = &[
    "../../outside.lance",
    "../t.lance/data/x.lance",
    "/etc/passwd",
    "s3://other-bucket/data/x.lance",
    "gs://other/x.lance",
    "file:///etc/passwd",
    "C:\\Windows\\x.lance",
    "ok/../../x.lance",
    "%2e%2e/x.lance",
    "",
];

fn assert_refused(e: &Error, needle: &str, manifest: &Path) {
    let text = e.to_string();
    assert!(matches!(e, Error::Corrupt { .. }), "{text}");
    assert!(text.contains("outside the dataset root"), "{text}");
    assert!(text.contains(needle), "{text} should name {needle:?}");
    let name = manifest.file_name().unwrap().to_str().unwrap();
    assert!(text.contains(name), "{text} should name the manifest");
}

#[tokio::test]
async fn data_file_paths_that_escape_the_root_are_refused() {
    for bad in ESCAPES {
        let (_d, root) = scratch("datasets/types.lance");
        edit_manifest(&root, |m, _| m.fragments[0].files[0].path = bad.to_string());
        let e = open(&root).await.expect_err(bad);
        assert_refused(&e, "data file of fragment", &latest_manifest(&root));
    }
}

#[tokio::test]
async fn index_file_names_that_escape_the_root_are_refused() {
    for bad in [
        "part_0/../../../x_page_lookup.lance",
        "../page_lookup.lance",
        "/page_data.lance",
        "s3://b/page_data.lance",
    ] {
        let (_d, root) = scratch("datasets/types.lance");
        edit_manifest(&root, |_, s| {
            s.indices[0].files.push(pb::IndexFile {
                path: bad.to_string(),
                size_bytes: 10,
            })
        });
        let e = open(&root).await.expect_err(bad);
        assert_refused(&e, "file of index", &latest_manifest(&root));
    }
}

#[tokio::test]
async fn files_under_other_base_paths_are_unsupported() {
    // Data file and deletion file with a base id.
    let (_d, root) = scratch("datasets/types.lance");
    edit_manifest(&root, |m, _| m.fragments[0].files[0].base_id = Some(1));
    let e = open(&root).await.unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    assert!(e.to_string().contains("another base path"), "{e}");

    let (_d, root) = scratch("datasets/bitmap_del.lance");
    edit_manifest(&root, |m, _| {
        m.fragments[0].deletion_file.as_mut().unwrap().base_id = Some(2)
    });
    let e = open(&root).await.unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    assert!(e.to_string().contains("another base path"), "{e}");

    // The manifest-level base paths feature.
    let (_d, root) = scratch("datasets/types.lance");
    edit_manifest(&root, |m, _| {
        m.reader_feature_flags |= reader_flags::BASE_PATHS;
        m.base_paths.push(pb::BasePath {
            id: 1,
            path: "s3://other-bucket/elsewhere".into(),
            ..Default::default()
        });
    });
    let e = open(&root).await.unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");

    // A BTree segment under another base path: the query says so instead of reading.
    let (_d, root) = scratch("datasets/types.lance");
    assert!(!query(&root, "i = 7").await.unwrap().is_empty());
    edit_manifest(&root, |_, s| {
        for i in &mut s.indices {
            i.base_id = Some(1);
        }
    });
    let e = query(&root, "i = 7").await.unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    assert!(e.to_string().contains("another base path"), "{e}");
}

#[tokio::test]
async fn list_element_segment_under_another_base_path_is_refused_and_data_answers() {
    let answers: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("list_element/answers.json")).unwrap(),
    )
    .unwrap();
    let q = &answers["datasets"]["detections"]["queries"][0];
    let filter = q["filter"].as_str().unwrap();
    let want: BTreeSet<u64> = q["true"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    let (_d, root) = scratch("list_element/datasets/detections.lance");
    let call = parse_any_element_filter(filter).unwrap();
    let stats = IoStats::new();

    // Untouched: the index answers exactly.
    let ds = open(&root).await.unwrap();
    let plan = plan_any_element_query(&ds, &call, AnyElementOptions::default(), &stats)
        .await
        .unwrap();
    assert!(
        matches!(plan.strategy, CallStrategy::IndexExact),
        "{plan:?}"
    );

    edit_manifest(&root, |_, s| {
        for i in &mut s.indices {
            i.base_id = Some(3);
        }
    });
    let ds = open(&root).await.unwrap();
    let plan = plan_any_element_query(&ds, &call, AnyElementOptions::default(), &stats)
        .await
        .unwrap();
    assert!(
        matches!(plan.strategy, CallStrategy::EvaluateOnData { .. }),
        "{:?}",
        plan.strategy
    );
    assert!(plan.chosen.is_none());
    assert!(
        plan.indices
            .iter()
            .any(|l| l.contains("not used") && l.contains("another base path")),
        "refusal reported: {:?}",
        plan.indices
    );
    let got: BTreeSet<u64> = execute_any_element_query(&ds, &plan, &stats)
        .await
        .unwrap()
        .row_addresses
        .iter()
        .collect();
    assert_eq!(got, want, "answered on the data instead");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_s3_an_escaping_data_file_is_refused_before_any_request_outside_the_root() {
    let (_d, root) = scratch("datasets/types.lance");
    edit_manifest(&root, |m, _| {
        m.fragments[0].files[0].path = "../../../secret/x.lance".to_string()
    });
    let s3 = S3TestServer::start().await;
    s3.upload_dir(&root, "ds/t.lance").await;
    s3.put("secret/x.lance", b"not a lance file".to_vec()).await;
    s3.counting().counters().reset_log_and_peak();
    let opened = s3.open("ds/t.lance");
    let e = DatasetVersion::open_opened(
        &opened,
        None,
        Arc::new(DatasetSession::default()),
        &IoStats::new(),
    )
    .await
    .unwrap_err();
    assert!(e.to_string().contains("outside the dataset root"), "{e}");
    let log = s3.counting().counters().log();
    assert!(!log.is_empty());
    assert!(
        log.iter().all(|r| !r.path.contains("secret")),
        "requests outside the root: {log:?}"
    );
}
