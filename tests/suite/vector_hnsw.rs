//! HNSW sub-indices beyond the recorded answers: `ef` takes effect (wider beams compute
//! more distances; an `ef` below `k` is refused as pylance refuses it), and garbled graph
//! metadata or graph rows in `index.idx` are `Corrupt` naming that file, never a panic.

use std::path::Path;

use crate::suite::common::copy_dir;
use crate::suite::vector_catalog::{catalog, vector_fixture};
use crate::{Dataset, Error};

/// The first query vector of `name`.
fn query_of(name: &str) -> Vec<f32> {
    catalog()["datasets"][name]["query_vectors"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() as f32)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ef_widens_the_beam_and_must_cover_k() {
    for name in ["ivf_hnsw_flat_l2", "ivf_hnsw_sq_l2", "ivf_hnsw_pq_l2"] {
        let path = vector_fixture(&format!("datasets/{name}"));
        let dataset = Dataset::open(path.to_str().unwrap()).await.unwrap();
        let q = query_of(name);
        let scored = |ef: Option<u32>| {
            let mut n = dataset.nearest("vec", &q).k(10).nprobes(2);
            if let Some(ef) = ef {
                n = n.ef(ef);
            }
            async move { n.explain().await.unwrap() }
        };
        let default = scored(None).await;
        assert_eq!(default["ef"], 15, "{name}: {default}");
        let narrow = scored(Some(10)).await;
        let wide = scored(Some(200)).await;
        assert_eq!(
            (narrow["ef"].as_u64(), wide["ef"].as_u64()),
            (Some(10), Some(200))
        );
        let (n, w) = (
            narrow["rows_scored"].as_u64().unwrap(),
            wide["rows_scored"].as_u64().unwrap(),
        );
        assert!(n < w, "{name}: ef 10 scored {n}, ef 200 {w}");
        // The refine factor multiplies k, as in lance: ef 15 < 10 * 2.
        let err = dataset
            .nearest("vec", &q)
            .k(10)
            .ef(15)
            .refine(2)
            .execute()
            .await;
        assert!(
            matches!(err, Err(Error::InvalidArgument(_))),
            "{name}: {err:?}"
        );
        let err = dataset.nearest("vec", &q).k(10).ef(5).execute().await;
        assert!(
            matches!(err, Err(Error::InvalidArgument(_))),
            "{name}: {err:?}"
        );
    }
}

/// A copy of `name` whose every `index.idx` went through `edit`.
fn edited(name: &str, edit: impl Fn(&mut Vec<u8>)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&vector_fixture(&format!("datasets/{name}")), dir.path());
    for entry in std::fs::read_dir(dir.path().join("_indices")).unwrap() {
        let file = entry.unwrap().path().join("index.idx");
        let mut bytes = std::fs::read(&file).unwrap();
        edit(&mut bytes);
        std::fs::write(&file, bytes).unwrap();
    }
    dir
}

fn find(bytes: &[u8], what: &[u8]) -> usize {
    bytes
        .windows(what.len())
        .position(|w| w == what)
        .unwrap_or_else(|| panic!("{:?} not in the file", String::from_utf8_lossy(what)))
}

async fn corrupt_naming_index_file(root: &Path, name: &str) {
    let dataset = Dataset::open(root.to_str().unwrap()).await.unwrap();
    let got = dataset
        .nearest("vec", &query_of(name))
        .k(10)
        .nprobes(2)
        .execute()
        .await;
    match got {
        Err(e @ Error::Corrupt { .. }) => {
            assert!(e.to_string().contains("index.idx"), "{name}: {e}");
            eprintln!("{name}: {e}");
        }
        other => panic!("{name}: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbled_hnsw_metadata_is_corrupt_naming_the_index_file() {
    let name = "ivf_hnsw_sq_l2";
    // Level offsets not starting at 0 (same length, so the file stays well-formed).
    let dir = edited(name, |b| {
        let at = find(b, br#"level_offsets\":[0,"#) + br#"level_offsets\":["#.len();
        b[at] = b'1';
    });
    corrupt_naming_index_file(dir.path(), name).await;
    // Level offsets ending past the partition's graph rows.
    let dir = edited(name, |b| {
        let start = find(b, br#"level_offsets\":["#);
        let end = start + find(&b[start..], b"]") - 1;
        b[end] = if b[end] == b'9' { b'8' } else { b[end] + 1 };
    });
    corrupt_naming_index_file(dir.path(), name).await;
    // An entry point past the nodes.
    let dir = edited(name, |b| {
        let at = find(b, br#"entry_point\":"#) + br#"entry_point\":"#.len();
        let digits = b[at..].iter().take_while(|c| c.is_ascii_digit()).count();
        b[at..at + digits].fill(b'9');
        b[at] = b'8';
    });
    corrupt_naming_index_file(dir.path(), name).await;
    // The `__neighbors` page (bytes 1536..10352 of this fixture's index.idx) overwritten
    // with all-ones bits: the page decoder refuses it (neighbour ids out of range in a
    // well-formed page are the graph decoder's, unit-tested in index::vector::hnsw).
    let dir = edited(name, |b| b[2000..9000].fill(0xff));
    corrupt_naming_index_file(dir.path(), name).await;
}
