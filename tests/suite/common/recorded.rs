//! A dataset opened through a [`RecordingSource`], so a test can see every read it made.

use std::path::Path;
use std::sync::Arc;

use crate::io::list::{ObjectLister, ObjectStoreLister};
use crate::io::wrappers::RecordingSource;
use crate::io::{open_url, IoStats, RangeSource};
use crate::lance::dataset::{DatasetSession, DatasetStore, DatasetVersion};

/// An open dataset and the recorder of its reads.
pub(crate) struct Recorded {
    pub(crate) dataset: DatasetVersion,
    pub(crate) recorder: Arc<RecordingSource>,
}

/// Open the dataset at `root` in `session`; `wrap` puts layers (latency, faults) between
/// the recorder and the store. The open is counted in `stats`.
pub(crate) async fn open_recorded(
    root: &Path,
    session: Arc<DatasetSession>,
    stats: &IoStats,
    wrap: impl FnOnce(Arc<dyn RangeSource>) -> Arc<dyn RangeSource>,
) -> crate::Result<Recorded> {
    let opened = open_url(root.to_str().expect("utf-8 path"), &[])?;
    let recorder = Arc::new(RecordingSource::new(wrap(Arc::clone(&opened.source))));
    let lister: Arc<dyn ObjectLister> = Arc::new(ObjectStoreLister::for_scheme(
        Arc::clone(&opened.store),
        &opened.scheme,
    ));
    let store = DatasetStore::new(Arc::clone(&recorder) as Arc<dyn RangeSource>, lister);
    let dataset = DatasetVersion::open(store, opened.path.clone(), None, session, stats).await?;
    Ok(Recorded { dataset, recorder })
}
