//! No `Corrupt` or `Unsupported` error leaves a public call without naming the object it is
//! about (issue 22): the bad-input corpora — truncated and byte-flipped Lance files of every
//! version, datasets whose manifests, data, index and deletion files are truncated or
//! flipped, ecpfs indices whose metadata and chunks are — driven through the public API only
//! (`LanceFile`, `Dataset`, `EcpIndex`), every error checked.

use std::path::{Path, PathBuf};

use crate::ecp::{EcpIndex, EcpStore, OpenOptions, QueryOptions};
use crate::suite::common::{copy_dir, dataset_fixture, file_fixture, fixture, json_fixture};
use crate::{Dataset, Error, LanceFile, Session};

/// The errors the public calls returned, each checked to name its object.
#[derive(Debug, Default)]
struct Checked {
    errors: usize,
    corrupt: usize,
}

impl Checked {
    /// `result`'s value; an error is counted, and must name its object.
    fn check<T>(&mut self, call: &str, result: crate::Result<T>) -> Option<T> {
        let e = match result {
            Ok(value) => return Some(value),
            Err(e) => e,
        };
        assert!(!e.names_no_object(), "{call}: {e:?} names no object");
        self.errors += 1;
        self.corrupt += matches!(e, Error::Corrupt { .. }) as usize;
        None
    }
}

/// The check fails on an error that names no object.
#[test]
#[should_panic(expected = "names no object")]
fn the_check_fails_on_an_error_without_its_object() {
    Checked::default().check::<()>("a decoder", Err(Error::corrupt("bad footer")));
}

/// The boundary every public call on a dataset returns through names the dataset in a
/// path-less `Corrupt` or `Unsupported` error and keeps an inner (more precise) path.
#[tokio::test]
async fn the_dataset_boundary_names_a_pathless_error() {
    let dataset = Dataset::builder(crate::sample::DATASET_URL)
        .object_store(crate::sample::store().await.unwrap())
        .open()
        .await
        .unwrap();
    let named = dataset.named(Error::corrupt("bad page"));
    assert_eq!(
        named.to_string(),
        format!("corrupt: {}: bad page", crate::sample::DATASET_URL)
    );
    let named = dataset.named(Error::unsupported("FSST v9"));
    assert!(!named.names_no_object(), "{named:?}");
    let inner = Error::corrupt("bad page").at("frames.lance/data/a.lance", Some(1..2));
    let kept = dataset.named(inner);
    assert_eq!(
        kept.to_string(),
        "corrupt: frames.lance/data/a.lance [bytes 1..2]: bad page"
    );
}

/// Deterministic mutations of `bytes`: cut in half, and three rounds of three bit flips
/// (one in the last 64 bytes, where footers and metadata live, two anywhere).
fn mutations(bytes: &[u8], seed: u64) -> Vec<Vec<u8>> {
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state as usize
    };
    let mut out = vec![bytes[..bytes.len() / 2].to_vec()];
    if bytes.is_empty() {
        return out;
    }
    for _ in 0..3 {
        let mut m = bytes.to_vec();
        let tail = m.len().saturating_sub(64);
        let at = tail + next() % (m.len() - tail);
        m[at] ^= 1 << (next() % 8);
        for _ in 0..2 {
            let at = next() % m.len();
            m[at] ^= 1 << (next() % 8);
        }
        out.push(m);
    }
    out
}

const FILES: &[&str] = &[
    "v2_0/strings.lance",
    "v2_1/ints.lance",
    "v2_2/rle.lance",
    "v2_3/vectors.lance",
    "v2_3/nulls_constants.lance",
    "nested/v2_3_sparse/nested.lance",
    "legacy/v0_17/flat.lance/data/bdfff8ad-eab4-40b5-8a33-dd4644722537.lance",
];

#[tokio::test]
async fn lance_file_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = Checked::default();
    for (i, relative) in FILES.iter().enumerate() {
        for (j, bytes) in mutations(&file_fixture(relative), i as u64 * 7919 + 1)
            .into_iter()
            .enumerate()
        {
            let path = dir.path().join(format!("{i}_{j}.lance"));
            std::fs::write(&path, bytes).unwrap();
            let call = format!("{relative} mutation {j}");
            let opened = LanceFile::open(path.to_str().unwrap()).await;
            let Some(file) = checked.check(&format!("{call}: open"), opened) else {
                continue;
            };
            let names: Vec<String> = file
                .schema()
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect();
            let columns: Vec<&str> = names.iter().map(String::as_str).collect();
            let rows = 0..file.num_rows().min(64);
            let read = file.read_range(&columns, rows).await;
            checked.check(&format!("{call}: read_range"), read);
            let taken = file
                .take(&columns, &[0, file.num_rows().saturating_sub(1)])
                .await;
            checked.check(&format!("{call}: take"), taken);
            checked.check(&format!("{call}: inspect"), file.inspect(true).await);
        }
    }
    assert!(checked.corrupt > 0, "no mutation was detected: {checked:?}");
}

/// Every file of a dataset directory, relative to it, in a stable order.
fn files_of(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                out.push(path.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// Open, describe, query (with scans allowed) and take from the dataset at `root`.
async fn drive_dataset(root: &Path, filters: &[String], call: &str, checked: &mut Checked) {
    let opened = Dataset::open(root.to_str().unwrap()).await;
    let Some(dataset) = checked.check(&format!("{call}: open"), opened) else {
        return;
    };
    checked.check(&format!("{call}: describe"), dataset.describe().await);
    checked.check(&format!("{call}: arrow_schema"), dataset.arrow_schema());
    for filter in filters {
        let query = dataset.query().filter(filter).allow_scan(true);
        checked.check(&format!("{call}: {filter}"), query.execute().await);
        checked.check(
            &format!("{call}: filter {filter}"),
            dataset.filter(filter).await,
        );
    }
    let names = dataset.column_names();
    let columns: Vec<&str> = names.iter().map(String::as_str).collect();
    let addresses: Vec<u64> = dataset
        .fragments()
        .iter()
        .flat_map(|f| [f.id << 32, (f.id << 32) | 1])
        .collect();
    checked.check(
        &format!("{call}: take"),
        dataset.take(&addresses, &columns).await,
    );
}

/// Every `step`-th recorded filter of a fixture dataset.
fn filters(answers: &str, name: &str, step: usize) -> Vec<String> {
    let answers = json_fixture(answers);
    let queries = answers["datasets"][name]["queries"].as_array().unwrap();
    let filters = queries.iter().step_by(step);
    filters
        .map(|q| q["filter"].as_str().unwrap().to_string())
        .collect()
}

/// The filters recorded for a legacy dataset (`<name>.filters.json`: filter -> rows).
fn legacy_filters(name: &str) -> Vec<String> {
    let recorded = json_fixture(&format!("files/{name}.filters.json"));
    recorded.as_object().unwrap().keys().cloned().collect()
}

#[tokio::test]
async fn dataset_errors_name_the_dataset() {
    let datasets = [
        (
            dataset_fixture("bitmap_del"),
            filters("datasets/answers.json", "bitmap_del", 2),
        ),
        (
            dataset_fixture("scalar_indices"),
            filters("datasets/scalar_answers.json", "scalar_indices", 15),
        ),
        (
            fixture("files").join("legacy/v0_17/flat.lance"),
            legacy_filters("legacy/v0_17/flat"),
        ),
    ];
    let mut checked = Checked::default();
    for (fixture_root, filters) in datasets {
        let name = fixture_root
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join(&name);
        copy_dir(&fixture_root, &root);
        for (i, relative) in files_of(&root).iter().enumerate() {
            let bytes = std::fs::read(root.join(relative)).unwrap();
            // The cut and one round of flips per file (a dataset has many files).
            let seed = i as u64 * 104_729 + 3;
            for (j, mutated) in mutations(&bytes, seed).into_iter().take(2).enumerate() {
                std::fs::write(root.join(relative), mutated).unwrap();
                let call = format!("{name}: {} mutation {j}", relative.display());
                drive_dataset(&root, &filters, &call, &mut checked).await;
            }
            std::fs::write(root.join(relative), bytes).unwrap();
        }
    }
    assert!(checked.corrupt > 0, "no mutation was detected: {checked:?}");
}

#[tokio::test]
async fn ecp_errors_name_the_index() {
    const NAME: &str = "l2_l2_f32";
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join(NAME);
    copy_dir(&fixture("ecp").join(NAME), &root);
    let url = root.to_str().unwrap();
    // The arrays an open and a search from the root read: `info/*`, the root, and the
    // first node of each level.
    let files = files_of(&root);
    let chosen = files.iter().filter(|f| {
        let f = f.to_string_lossy();
        f.starts_with("info") || f.starts_with("index_root") || f.contains("node_1/")
    });
    let mut checked = Checked::default();
    for (i, relative) in chosen.enumerate() {
        let bytes = std::fs::read(root.join(relative)).unwrap();
        let seed = i as u64 * 15_485_863 + 5;
        for (j, mutated) in mutations(&bytes, seed).into_iter().enumerate() {
            std::fs::write(root.join(relative), mutated).unwrap();
            let call = format!("{NAME}: {} mutation {j}", relative.display());
            let (options, session) = (OpenOptions::default(), Session::default());
            let opened = EcpIndex::open(url, EcpStore::default(), options, &session).await;
            let Some(index) = checked.check(&format!("{call}: open"), opened) else {
                continue;
            };
            let query = vec![0.5_f32; index.info().dim];
            let search = index.search(query, 10, QueryOptions::default()).await;
            checked.check(&format!("{call}: search"), search);
        }
        std::fs::write(root.join(relative), bytes).unwrap();
    }
    assert!(checked.corrupt > 0, "no mutation was detected: {checked:?}");
}
