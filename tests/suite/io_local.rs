//! The I/O layer over local files (`file://` URLs and plain paths) and `memory://`.

use crate::suite::common;

use crate::io::wrappers::{ReadKind, RecordingSource};
use crate::io::{open_url, FetchOptions, IoStats, RangeFetcher, ReadRequest};
use crate::Error;
use common::pattern;
use std::sync::Arc;

#[tokio::test]
async fn local_files_read_by_path_and_file_url() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sub dir").join("f.lance");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let data = pattern(50_000);
    std::fs::write(&file, &data).unwrap();

    for url in [
        file.to_str().unwrap().to_string(),
        url::Url::from_file_path(&file).unwrap().to_string(),
    ] {
        let opened = open_url(&url, &[]).unwrap();
        assert_eq!(
            opened.source.coalesce_gap(),
            0,
            "no gap bytes for local files"
        );
        let rec = Arc::new(RecordingSource::new(Arc::clone(&opened.source)));
        let f = RangeFetcher::new(Arc::<RecordingSource>::clone(&rec), FetchOptions::default());
        let stats = IoStats::new();
        let tail = f.tail(&opened.path, 1000, &stats).await.unwrap();
        assert_eq!(
            (tail.version.size, tail.bytes.as_ref()),
            (50_000, &data[49_000..])
        );
        let reqs = [
            ReadRequest::sized(opened.path.clone(), 0..10, 50_000),
            ReadRequest::sized(opened.path.clone(), 10..30, 50_000),
            ReadRequest::sized(opened.path.clone(), 100..200, 50_000),
        ];
        let out = f.fetch(&reqs, &stats).await.unwrap();
        assert_eq!(out[1].as_ref(), &data[10..30]);
        assert_eq!(out[2].as_ref(), &data[100..200]);
        // Adjacent ranges merge even with gap 0; the 70-byte hole is not read.
        let reads = rec.reads();
        assert_eq!(reads[0].kind, ReadKind::Suffix(1000));
        assert_eq!(rec.ranges_of(opened.path.as_ref()).len(), 3);
        assert!(!rec.touched(opened.path.as_ref(), 30..100));
        // Missing local file.
        let missing = open_url(dir.path().join("nope").to_str().unwrap(), &[]).unwrap();
        let err = f.tail(&missing.path, 10, &stats).await.unwrap_err();
        assert!(matches!(err, Error::NotFound { .. }), "{err}");
    }
}
