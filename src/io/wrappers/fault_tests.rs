use super::*;
use crate::io::fetch::{FetchOptions, RangeFetcher, ReadRequest};
use crate::io::source::{is_object_changed, ObjectStoreSource};
use crate::io::stats::IoStats;
use object_store::memory::InMemory;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use std::sync::Arc;

const SIZE: u64 = 10_000;

async fn memory() -> (Arc<InMemory>, Arc<dyn RangeSource>) {
    let store = Arc::new(InMemory::new());
    let data: Vec<u8> = (0..SIZE).map(|i| (i * 7 % 251) as u8).collect();
    for name in ["a.bin", "b.bin"] {
        store
            .put(&Path::from(name), PutPayload::from(data.clone()))
            .await
            .unwrap();
    }
    let dyn_store: Arc<dyn ObjectStore> = Arc::<InMemory>::clone(&store);
    (
        store,
        Arc::new(ObjectStoreSource::new(dyn_store, 0, "memory")),
    )
}

fn fast_retries(max_retries: usize) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        init_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(2),
        ..RetryPolicy::default()
    }
}

fn requests(size: u64) -> Vec<ReadRequest> {
    (0..40u64)
        .map(|i| {
            let path = Path::from(if i % 2 == 0 { "a.bin" } else { "b.bin" });
            ReadRequest::sized(path, i * 200..i * 200 + 150, size)
        })
        .collect()
}

/// Tail + one wave of 40 ranges through `faults`, returning all bytes read.
async fn read_all(faults: &FaultSource, stats: &IoStats) -> Result<Vec<Bytes>> {
    let f = RangeFetcher::new(Arc::new(faults.clone()), FetchOptions::default());
    let tail = f.tail(&Path::from("a.bin"), 100, stats).await?;
    let mut out = vec![tail.bytes];
    out.extend(f.fetch(&requests(tail.version.size), stats).await?);
    Ok(out)
}

fn transient_config(seed: u64) -> FaultConfig {
    FaultConfig::seeded(seed)
        .with(FaultKind::ServerError, 0.2)
        .with(FaultKind::Timeout, 0.1)
        .with(FaultKind::Stall, 0.1)
        .with(FaultKind::Truncate, 0.2)
}

#[tokio::test]
async fn transient_faults_are_retried_to_the_exact_answer() {
    let (_, inner) = memory().await;
    let clean = read_all(
        &FaultSource::new(Arc::clone(&inner), FaultConfig::seeded(1)),
        &IoStats::new(),
    )
    .await
    .unwrap();
    let faults = FaultSource::new(inner, transient_config(7)).with_retry_policy(fast_retries(2));
    let stats = IoStats::new();
    let got = read_all(&faults, &stats).await.unwrap();
    assert_eq!(got, clean);
    let counts = faults.counts();
    assert!(counts.failing() > 0, "{counts:?}");
    // Every failing attempt was retried once, nothing else was.
    assert_eq!(stats.snapshot().retries, counts.failing(), "{counts:?}");
}

#[tokio::test]
async fn decisions_depend_only_on_the_seed() {
    let (_, inner) = memory().await;
    let run = |seed| {
        let inner = Arc::clone(&inner);
        async move {
            let faults =
                FaultSource::new(inner, transient_config(seed)).with_retry_policy(fast_retries(2));
            read_all(&faults, &IoStats::new()).await.unwrap();
            faults.counts()
        }
    };
    assert_eq!(run(3).await, run(3).await);
    assert_ne!(run(3).await, run(4).await);
}

#[tokio::test]
async fn persistent_faults_name_path_and_range() {
    let (_, inner) = memory().await;
    for kind in [FaultKind::ServerError, FaultKind::Timeout] {
        let faults = FaultSource::new(
            Arc::clone(&inner),
            FaultConfig::seeded(1).failing_path("b.bin", kind),
        )
        .with_retry_policy(fast_retries(2));
        let stats = IoStats::new();
        let err = read_all(&faults, &stats).await.unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("b.bin") && msg.contains("[bytes "), "{msg}");
        assert!(msg.contains("gave up on the range read of bytes"), "{msg}");
        assert!(msg.contains("after 3 attempts"), "{msg}");
        assert!(faults.counts().persistent >= 3);
    }
}

#[tokio::test]
async fn truncated_bodies_are_never_returned() {
    let (_, inner) = memory().await;
    let faults = FaultSource::new(inner, FaultConfig::seeded(5).with(FaultKind::Truncate, 1.0))
        .with_retry_policy(RetryPolicy::none());
    let err = read_all(&faults, &IoStats::new()).await.unwrap_err();
    assert!(err.to_string().contains("short read"), "{err}");
    assert!(crate::io::retry::is_transient(&err));
}

#[tokio::test]
async fn a_replaced_object_is_detected_not_mixed() {
    let (store, inner) = memory().await;
    let f = RangeFetcher::new(Arc::clone(&inner), FetchOptions::default());
    let stats = IoStats::new();
    let path = Path::from("a.bin");
    let tail = f.tail(&path, 100, &stats).await.unwrap();
    assert!(tail.version.etag.is_some());
    // Same size, new content: only the etag tells.
    store
        .put(&path, PutPayload::from(vec![1u8; SIZE as usize]))
        .await
        .unwrap();
    let req = [ReadRequest::sized(path.clone(), 0..10, tail.version.size)];
    let err = f.fetch(&req, &stats).await.unwrap_err();
    assert!(is_object_changed(&err), "{err}");
    assert!(err.to_string().contains("object changed") || err.to_string().contains("precondition"));
    // A different size is detected by the size alone (no etag known to a fresh fetcher).
    store
        .put(&path, PutPayload::from(vec![1u8; SIZE as usize + 5]))
        .await
        .unwrap();
    let fresh = RangeFetcher::new(Arc::clone(&inner), FetchOptions::default());
    let err = fresh.fetch(&req, &stats).await.unwrap_err();
    assert!(is_object_changed(&err), "{err}");
    assert!(err.to_string().contains("10000 bytes"), "{err}");
    assert_eq!(
        stats.snapshot().retries,
        0,
        "a changed object is not retried"
    );

    // Injected drift: the suffix read reports another etag than the store has.
    let (_, inner) = memory().await;
    let faults = FaultSource::new(
        inner,
        FaultConfig::seeded(2).with(FaultKind::VersionDrift, 1.0),
    );
    let err = read_all(&faults, &IoStats::new()).await.unwrap_err();
    assert!(is_object_changed(&err), "{err}");
    assert!(faults.counts().version_drifts >= 1);
}
