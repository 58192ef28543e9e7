//! Hand-run measurement (`#[ignore]`): the request trace of one cold nearest query (dataset
//! open included) over the in-process S3 server, request by request with its wave, for a
//! dataset too large to commit:
//!
//! ```sh
//! LAKESEEK_TRACE_DATASET=/path/to/table.lance LAKESEEK_TRACE_QUERY=/path/q.npy \
//!   cargo test --lib suite::vector_cold_trace -- --ignored --nocapture
//! ```
//!
//! Optional: `LAKESEEK_TRACE_NPROBES` (default 20), `LAKESEEK_TRACE_K` (default 10).

use std::ops::Range;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::Bytes;
use object_store::path::Path;

use crate::error::Result;
use crate::index::vector::caches::vector_cache;
use crate::index::vector::search::{nearest, NearestParams};
use crate::io::source::{ObjectVersion, RangeSource};
use crate::io::IoStats;
use crate::lance::dataset::{DatasetSession, DatasetVersion};
use crate::suite::common::S3TestServer;

/// One request: object, what was returned, when it ran.
#[derive(Debug, Clone)]
struct Traced {
    path: String,
    kind: String,
    bytes: Option<Range<u64>>,
    start: Duration,
    end: Option<Duration>,
}

/// A source recording each request with its start and end times.
#[derive(Debug)]
struct TimedSource {
    inner: Arc<dyn RangeSource>,
    epoch: Instant,
    log: Mutex<Vec<Traced>>,
}

impl TimedSource {
    fn begin(&self, path: &Path, kind: String) -> usize {
        let mut log = self.log.lock().unwrap();
        log.push(Traced {
            path: path.to_string(),
            kind,
            bytes: None,
            start: self.epoch.elapsed(),
            end: None,
        });
        log.len() - 1
    }

    fn done(&self, i: usize, bytes: Range<u64>) {
        let mut log = self.log.lock().unwrap();
        log[i].bytes = Some(bytes);
        log[i].end = Some(self.epoch.elapsed());
    }
}

#[async_trait]
impl RangeSource for TimedSource {
    async fn get_range(
        &self,
        path: &Path,
        range: Range<u64>,
        expected: Option<&ObjectVersion>,
    ) -> Result<Bytes> {
        let i = self.begin(path, "range".into());
        let b = self.inner.get_range(path, range.clone(), expected).await?;
        self.done(i, range.start..range.start + b.len() as u64);
        Ok(b)
    }

    async fn get_suffix(&self, path: &Path, n: u64) -> Result<(Bytes, ObjectVersion)> {
        let i = self.begin(path, format!("suffix {n}"));
        let (b, v) = self.inner.get_suffix(path, n).await?;
        self.done(i, v.size.saturating_sub(b.len() as u64)..v.size);
        Ok((b, v))
    }

    async fn get_all(&self, path: &Path) -> Result<(Bytes, ObjectVersion)> {
        let i = self.begin(path, "whole".into());
        let (b, v) = self.inner.get_all(path).await?;
        self.done(i, 0..b.len() as u64);
        Ok((b, v))
    }

    fn coalesce_gap(&self) -> u64 {
        self.inner.coalesce_gap()
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn coalesce_waste(&self) -> Option<f64> {
        self.inner.coalesce_waste()
    }
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The first vector of a little-endian f32 `.npy` file (1-d or 2-d).
fn first_vector(npy: &std::path::Path, dim: usize) -> Vec<f32> {
    let raw = std::fs::read(npy).unwrap();
    let header_len = u16::from_le_bytes([raw[8], raw[9]]) as usize;
    let data = &raw[10 + header_len..];
    data.chunks_exact(4)
        .take(dim)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[tokio::test(flavor = "current_thread")]
#[ignore = "hand-run measurement: needs LAKESEEK_TRACE_DATASET"]
async fn trace_a_cold_nearest_query() {
    let Ok(local) = std::env::var("LAKESEEK_TRACE_DATASET") else {
        panic!("set LAKESEEK_TRACE_DATASET to a local dataset directory");
    };
    let s3 = S3TestServer::start().await;
    std::os::unix::fs::symlink(&local, s3.bucket_dir().join("traced")).unwrap();
    // LAKESEEK_TRACE_LOCAL=1: the local file system (no coalescing) instead of S3.
    let opened = if std::env::var("LAKESEEK_TRACE_LOCAL").is_ok() {
        crate::io::open_url(&local, &[]).unwrap()
    } else {
        s3.open("traced")
    };
    let source = Arc::new(TimedSource {
        inner: Arc::clone(&opened.source),
        epoch: Instant::now(),
        log: Mutex::new(Vec::new()),
    });
    let mut traced = opened.clone();
    traced.source = Arc::clone(&source) as Arc<dyn RangeSource>;
    let stats = IoStats::new();
    let session = Arc::new(DatasetSession::new(256 << 20));
    let dataset = DatasetVersion::open_opened(&traced, None, session, &stats)
        .await
        .unwrap();
    let dim = 768;
    let query = match std::env::var("LAKESEEK_TRACE_QUERY") {
        Ok(q) => first_vector(std::path::Path::new(&q), dim),
        Err(_) => vec![0.0; dim],
    };
    let nprobes = env_usize("LAKESEEK_TRACE_NPROBES", 20);
    let params = NearestParams {
        column: "vec".into(),
        query,
        k: env_usize("LAKESEEK_TRACE_K", 10),
        minimum_nprobes: nprobes,
        maximum_nprobes: Some(nprobes),
        refine_factor: None,
        fast_search: false,
        use_index: true,
        allow_scan: false,
        distance_range: (None, None),
        metric: None,
        half_precision: false,
        ef: None,
        float32: true,
    };
    let caches = vector_cache(&dataset);
    let answer = nearest(&dataset, &params, None, &caches, &stats)
        .await
        .unwrap();
    let log = source.log.lock().unwrap().clone();
    let mut wave = 0;
    let mut busy_until = Duration::ZERO;
    let mut total = 0;
    for (i, t) in log.iter().enumerate() {
        if i == 0 || t.start > busy_until {
            wave += 1;
        }
        busy_until = busy_until.max(t.end.unwrap_or(t.start));
        let r = t.bytes.clone().unwrap_or(0..0);
        total += r.end - r.start;
        eprintln!(
            "wave {wave} #{i:3} {:>8.1} ms {:<60} {:<14} {:>10}..{:<10} {:>9} B",
            t.start.as_secs_f64() * 1e3,
            t.path,
            t.kind,
            r.start,
            r.end,
            r.end - r.start
        );
    }
    eprintln!(
        "{} requests, {total} bytes, {wave} waves; stats {:?}; hits {:?}",
        log.len(),
        stats.snapshot(),
        answer.hits.iter().map(|h| h.row).collect::<Vec<_>>()
    );
}
