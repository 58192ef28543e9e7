//! Memory under load: however many queries fetch at once, the bytes their waves hold stay
//! within the store's bytes bound (measured on the response buffers themselves, not on the
//! admission counters; no timing).

use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;

use super::*;
use crate::io::admission::Admission;

/// Response buffers alive now and at most, in bytes.
#[derive(Debug, Default)]
struct Live {
    now: AtomicU64,
    peak: AtomicU64,
}

/// A response buffer that counts itself in [`Live`] while any slice of it is alive.
struct Counted {
    data: Vec<u8>,
    live: Arc<Live>,
}

impl AsRef<[u8]> for Counted {
    fn as_ref(&self) -> &[u8] {
        &self.data
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.live
            .now
            .fetch_sub(self.data.len() as u64, Ordering::SeqCst);
    }
}

/// Serves any range of any object (byte `i` is `i % 251`) after a few yields, as counted
/// buffers.
#[derive(Debug)]
struct CountingSource {
    live: Arc<Live>,
}

#[async_trait]
impl RangeSource for CountingSource {
    async fn get_range(
        &self,
        _path: &Path,
        range: Range<u64>,
        _expected: Option<&ObjectVersion>,
    ) -> Result<Bytes> {
        for _ in 0..3 {
            tokio::task::yield_now().await;
        }
        let data: Vec<u8> = range.map(|i| (i % 251) as u8).collect();
        let now = self.live.now.fetch_add(data.len() as u64, Ordering::SeqCst) + data.len() as u64;
        self.live.peak.fetch_max(now, Ordering::SeqCst);
        let live = Arc::clone(&self.live);
        Ok(Bytes::from_owner(Counted { data, live }))
    }
    async fn get_suffix(&self, _path: &Path, _n: u64) -> Result<(Bytes, ObjectVersion)> {
        Err(Error::unsupported("ranged reads only"))
    }
    async fn get_all(&self, _path: &Path) -> Result<(Bytes, ObjectVersion)> {
        Err(Error::unsupported("ranged reads only"))
    }
    fn coalesce_gap(&self) -> u64 {
        0
    }
    fn describe(&self) -> String {
        "counting".into()
    }
}

const RANGE: u64 = 4 << 10;
const RANGES_PER_WAVE: u64 = 8;
const QUERIES: usize = 64;

/// `QUERIES` concurrent queries, each one wave of `RANGES_PER_WAVE` separate 4 KiB ranges
/// (which the fair slot queue serves one query after another), through an admission of 8
/// slots and `max_bytes`; returns the most response bytes alive at once.
fn peak_live_bytes(max_bytes: u64) -> u64 {
    let live = Arc::new(Live::default());
    let source: Arc<dyn RangeSource> = Arc::new(CountingSource {
        live: Arc::clone(&live),
    });
    let admission = Admission::new(8, max_bytes);
    let fetcher = RangeFetcher::new(source, FetchOptions::default())
        .with_admission(Some(Arc::clone(&admission)));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    runtime.block_on(async {
        let queries = (0..QUERIES).map(|q| {
            let fetcher = fetcher.clone();
            tokio::spawn(async move {
                let stats = IoStats::new();
                let wave: Vec<ReadRequest> = (0..RANGES_PER_WAVE)
                    .map(|i| {
                        let start = i * 3 * RANGE;
                        ReadRequest::new(Path::from(format!("q{q}")), start..start + RANGE)
                    })
                    .collect();
                let got = fetcher.fetch(&wave, &stats).await.unwrap();
                assert_eq!(got.len() as u64, RANGES_PER_WAVE);
                assert!(got.iter().all(|b| b.len() as u64 == RANGE));
            })
        });
        for q in futures::future::join_all(queries).await {
            q.unwrap();
        }
    });
    assert_eq!(live.now.load(Ordering::SeqCst), 0, "every buffer was freed");
    assert_eq!(admission.snapshot().held_bytes, 0);
    live.peak.load(Ordering::SeqCst)
}

#[test]
fn concurrent_waves_hold_at_most_the_bytes_bound() {
    let wave = RANGE * RANGES_PER_WAVE;
    let bound = 2 * wave;
    let peak = peak_live_bytes(bound);
    // A completed wave's buffers live until its query has taken them (another wave may be
    // admitted meanwhile on the other worker): at most one wave per worker beyond the bound.
    assert!(
        peak <= bound + 2 * wave,
        "{QUERIES} queries held {peak} bytes at once; the bound is {bound}"
    );
    // Without a bytes bound the same queries hold part of every wave at once.
    let unbounded = peak_live_bytes(u64::MAX);
    assert!(
        unbounded > bound + 2 * wave,
        "the load is too light to test the bound: {unbounded} bytes without it"
    );
}
