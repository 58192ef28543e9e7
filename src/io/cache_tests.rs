//! Tests of [`SizedCache`]: collapsed misses, weighing, versioned keys, errors.

use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Debug, PartialEq)]
struct Blob(Vec<u8>);

impl DeepSize for Blob {
    fn deep_size(&self) -> usize {
        self.0.len()
    }
}

fn key(path: &str, size: u64, etag: Option<&str>) -> CacheKey<u32> {
    CacheKey {
        path: path.into(),
        version: ObjectVersion {
            size,
            etag: etag.map(String::from),
        },
        item: 0,
    }
}

#[tokio::test]
async fn concurrent_misses_collapse_into_one_load() {
    let cache: SizedCache<u32, Blob> = SizedCache::new(1 << 20);
    let loads = AtomicUsize::new(0);
    let release = tokio::sync::Semaphore::new(0);
    let load = || async {
        loads.fetch_add(1, Ordering::SeqCst);
        let _permit = release.acquire().await; // held until every caller has asked
        Ok(Blob(vec![1, 2, 3]))
    };
    let callers = (0..8).map(|_| cache.get_or_try_load(key("f", 10, None), load()));
    let releaser = async {
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        release.add_permits(8); // enough for every caller, should collapsing fail
    };
    let (results, ()) = tokio::join!(futures::future::join_all(callers), releaser);
    assert_eq!(loads.load(Ordering::SeqCst), 1);
    for r in results {
        assert_eq!(*r.unwrap(), Blob(vec![1, 2, 3]));
    }
    // A later hit does not load.
    let again = cache
        .get_or_try_load(key("f", 10, None), load())
        .await
        .unwrap();
    assert_eq!(again.0, vec![1, 2, 3]);
    assert_eq!(loads.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn replaced_object_is_a_new_key() {
    let cache: SizedCache<u32, Blob> = SizedCache::new(1 << 20);
    let loads = AtomicUsize::new(0);
    let load = |v: u8| {
        let loads = &loads;
        async move {
            loads.fetch_add(1, Ordering::SeqCst);
            Ok(Blob(vec![v]))
        }
    };
    assert_eq!(
        cache
            .get_or_try_load(key("f", 10, Some("a")), load(1))
            .await
            .unwrap()
            .0,
        vec![1]
    );
    // Same path, new etag: the old decoded value must not be returned.
    assert_eq!(
        cache
            .get_or_try_load(key("f", 10, Some("b")), load(2))
            .await
            .unwrap()
            .0,
        vec![2]
    );
    // Same path, new size.
    assert_eq!(
        cache
            .get_or_try_load(key("f", 11, Some("a")), load(3))
            .await
            .unwrap()
            .0,
        vec![3]
    );
    // Same version again: hit.
    assert_eq!(
        cache
            .get_or_try_load(key("f", 10, Some("a")), load(4))
            .await
            .unwrap()
            .0,
        vec![1]
    );
    assert_eq!(loads.load(Ordering::SeqCst), 3);
    // Different item of the same object is a different entry too.
    let mut other_item = key("f", 10, Some("a"));
    other_item.item = 7;
    assert!(cache.get(&other_item).await.is_none());
}

#[tokio::test]
async fn entries_are_weighed_by_deep_size() {
    let cache: SizedCache<u32, Blob> = SizedCache::new(1000);
    for i in 0..5u32 {
        let mut k = key("f", 10, None);
        k.item = i;
        cache.insert(k, Arc::new(Blob(vec![0; 400]))).await;
    }
    cache.run_pending_tasks().await;
    assert!(
        cache.weighted_size() <= 1000,
        "weighted {}",
        cache.weighted_size()
    );
    assert!(cache.entry_count() <= 2, "entries {}", cache.entry_count());
    assert!(cache.entry_count() >= 1);
    // Something bigger than the whole capacity is not kept.
    cache.clear();
    cache.run_pending_tasks().await;
    cache
        .insert(key("big", 1, None), Arc::new(Blob(vec![0; 5000])))
        .await;
    cache.run_pending_tasks().await;
    assert!(cache.get(&key("big", 1, None)).await.is_none());
    assert_eq!(cache.weighted_size(), 0);
}

#[tokio::test]
async fn failed_loads_are_not_cached_and_keep_their_details() {
    let cache: SizedCache<u32, Blob> = SizedCache::new(1 << 20);
    let err = cache
        .get_or_try_load(key("f", 10, None), async {
            Err(Error::Corrupt {
                path: "f".into(),
                range: Some(3..9),
                what: "bad footer".into(),
                source: None,
            })
        })
        .await
        .unwrap_err();
    match err {
        Error::Corrupt {
            path, range, what, ..
        } => assert_eq!(
            (path.as_str(), range, what.as_str()),
            ("f", Some(3..9), "bad footer")
        ),
        other => panic!("unexpected {other}"),
    }
    let ok = cache
        .get_or_try_load(key("f", 10, None), async { Ok(Blob(vec![9])) })
        .await
        .unwrap();
    assert_eq!(ok.0, vec![9]);
}

#[tokio::test]
async fn a_changed_object_error_stays_recognizable_through_the_cache() {
    use crate::io::source::{is_object_changed, ObjectChanged};
    let cache: SizedCache<u32, Blob> = SizedCache::new(1 << 20);
    let path = object_store::path::Path::from("f");
    let changed = ObjectChanged {
        expected: ObjectVersion {
            size: 10,
            etag: Some("\"a\"".into()),
        },
        found: Some(ObjectVersion {
            size: 12,
            etag: Some("\"b\"".into()),
        }),
    };
    let err = cache
        .get_or_try_load(key("f", 10, Some("\"a\"")), async {
            Err(ObjectChanged::error(&path, Some(0..4), changed))
        })
        .await
        .unwrap_err();
    assert!(is_object_changed(&err), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("[bytes 0..4]") && msg.contains("12 bytes"),
        "{msg}"
    );
}
