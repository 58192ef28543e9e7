//! The latest version of every fixture dataset (pylance 14.0.2's and the old releases'),
//! found through the version hint where there is one: the same version pylance 14.0.2
//! chooses on a local disk (it reads `_versions/` and takes the newest manifest), with no
//! LIST when the dataset has a hint, and a LIST when it has none; a warm open finds it again
//! without a LIST. (Over S3, counted at the HTTP layer: `dataset_s3`.)

use std::path::{Path as FsPath, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use object_store::path::Path;

use crate::io::list::{ListControl, ListedObject, ObjectLister, ObjectStoreLister};
use crate::io::{open_url, IoStats};
use crate::lance::dataset::versions::parse_manifest_name;
use crate::lance::dataset::{DatasetSession, DatasetStore, DatasetVersion};

/// Counts the LISTs of `_versions/`.
#[derive(Debug)]
struct CountingLister {
    inner: ObjectStoreLister,
    lists: AtomicUsize,
}

#[async_trait]
impl ObjectLister for CountingLister {
    async fn list(
        &self,
        prefix: &Path,
        stats: &IoStats,
        visit: &mut (dyn FnMut(ListedObject) -> ListControl + Send),
    ) -> crate::Result<()> {
        // Only the listings that find the latest version (the earliest releases' opens
        // also list data directories for what their manifests lack).
        if prefix.as_ref().ends_with("_versions") {
            self.lists.fetch_add(1, Ordering::SeqCst);
        }
        self.inner.list(prefix, stats, visit).await
    }
    fn lexically_ordered(&self) -> bool {
        self.inner.lexically_ordered()
    }
}

fn fixture_datasets() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/datasets");
    let mut out = Vec::new();
    for dir in [root.clone(), root.join("take"), root.join("old")] {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "lance") && path.join("_versions").is_dir() {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// What pylance 14.0.2 does on a local disk: the newest manifest in `_versions/`.
fn newest_manifest(dataset: &FsPath) -> u64 {
    std::fs::read_dir(dataset.join("_versions"))
        .unwrap()
        .filter_map(|e| parse_manifest_name(e.unwrap().file_name().to_str()?).map(|v| v.0))
        .max()
        .expect("a manifest")
}

async fn open_latest(dataset: &FsPath, session: &Arc<DatasetSession>) -> (u64, usize) {
    let opened = open_url(dataset.to_str().unwrap(), &[]).unwrap();
    let lister = Arc::new(CountingLister {
        inner: ObjectStoreLister::for_scheme(Arc::clone(&opened.store), &opened.scheme),
        lists: AtomicUsize::new(0),
    });
    let store = DatasetStore::new(Arc::clone(&opened.source), Arc::clone(&lister) as _);
    let ds = DatasetVersion::open(
        store,
        opened.path.clone(),
        None,
        Arc::clone(session),
        &IoStats::new(),
    )
    .await
    .unwrap_or_else(|e| panic!("{}: {e}", dataset.display()));
    (ds.version(), lister.lists.load(Ordering::SeqCst))
}

#[tokio::test]
async fn every_fixture_opens_at_pylances_latest_version_without_list_when_hinted() {
    let datasets = fixture_datasets();
    assert!(datasets.len() > 30, "{datasets:?}");
    let mut hinted = 0;
    for dataset in datasets {
        let name = dataset.display();
        let has_hint = dataset.join("_versions/latest_version_hint.json").exists();
        let session = Arc::new(DatasetSession::default());
        let (version, lists) = open_latest(&dataset, &session).await;
        assert_eq!(version, newest_manifest(&dataset), "{name}");
        assert_eq!(
            lists,
            usize::from(!has_hint),
            "{name}: LISTs of a cold open"
        );
        // Warm (same session): found again, no LIST when hinted.
        let (again, lists) = open_latest(&dataset, &session).await;
        assert_eq!(again, version, "{name}");
        assert_eq!(
            lists,
            usize::from(!has_hint),
            "{name}: LISTs of a warm open"
        );
        hinted += usize::from(has_hint);
    }
    assert!(hinted >= 20, "{hinted} fixtures with a hint");
}
