use std::sync::Arc;

use object_store::memory::InMemory;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use zarrs::storage::byte_range::ByteRange;
use zarrs::storage::{AsyncReadableStorageTraits, AsyncWritableStorageTraits, StoreKey};

use super::*;
use crate::io::source::{is_object_changed, ObjectStoreSource, RangeSource};
use crate::io::wrappers::{ReadKind, RecordingSource};
use crate::io::FetchOptions;

async fn setup() -> (Arc<dyn ObjectStore>, Arc<RecordingSource>, FetcherStorage) {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let data: Vec<u8> = (0..100u8).collect();
    store
        .put(&Path::from("root/a/obj"), PutPayload::from(data))
        .await
        .unwrap();
    store
        .put(&Path::from("root/q/state"), PutPayload::from(vec![1u8; 10]))
        .await
        .unwrap();
    let source: Arc<dyn RangeSource> =
        Arc::new(ObjectStoreSource::new(Arc::clone(&store), 0, "mem"));
    let recording = Arc::new(RecordingSource::new(source));
    let fetcher = RangeFetcher::new(
        Arc::<RecordingSource>::clone(&recording),
        FetchOptions::default(),
    );
    let storage = FetcherStorage::new(
        fetcher,
        Path::from("root"),
        "memory:///root/",
        Arc::new(IoStats::new()),
    )
    .with_unpinned_prefix("q/");
    (store, recording, storage)
}

fn kinds(rec: &RecordingSource) -> Vec<(String, ReadKind)> {
    rec.reads().into_iter().map(|r| (r.path, r.kind)).collect()
}

#[tokio::test]
async fn whole_get_then_pinned_range_reread() {
    let (_store, rec, storage) = setup().await;
    let key = StoreKey::new("a/obj").unwrap();
    let first = storage.get(&key).await.unwrap().unwrap();
    let again = storage.get(&key).await.unwrap().unwrap();
    assert_eq!(first, again);
    assert_eq!(first.len(), 100);
    assert_eq!(
        kinds(&rec),
        vec![
            ("root/a/obj".to_string(), ReadKind::Whole),
            ("root/a/obj".to_string(), ReadKind::Range(0..100)),
        ]
    );
    let s = storage.stats().snapshot();
    assert_eq!((s.requests, s.round_trips, s.bytes), (2, 2, 200));
    assert_eq!(storage.probe().kinds().gets, 2);
}

#[tokio::test]
async fn missing_object_is_none_and_query_stats_count_too() {
    let (_store, _rec, storage) = setup().await;
    let query = Arc::new(IoStats::new());
    let got = with_query_stats(Arc::clone(&query), storage.get_object("a/missing"))
        .await
        .unwrap();
    assert!(got.is_none());
    assert_eq!(query.snapshot().requests, 1);
    assert_eq!(storage.stats().snapshot().requests, 1);
}

#[tokio::test]
async fn same_size_replacement_after_first_read_is_object_changed() {
    let (store, _rec, storage) = setup().await;
    storage.get_object("a/obj").await.unwrap().unwrap();
    store
        .put(&Path::from("root/a/obj"), PutPayload::from(vec![9u8; 100]))
        .await
        .unwrap();
    let err = storage.get_object("a/obj").await.unwrap_err();
    assert!(is_object_changed(&err), "{err}");
    assert!(err.to_string().contains("memory:///root/a/obj"), "{err}");
    // A deleted object is a change too, not a fill value.
    store.delete(&Path::from("root/a/obj")).await.unwrap();
    let err = storage.get_object("a/obj").await.unwrap_err();
    assert!(is_object_changed(&err), "{err}");
}

#[tokio::test]
async fn unpinned_keys_read_the_new_version() {
    let (store, rec, storage) = setup().await;
    assert_eq!(storage.get_object("q/state").await.unwrap().unwrap()[0], 1);
    store
        .put(&Path::from("root/q/state"), PutPayload::from(vec![2u8; 10]))
        .await
        .unwrap();
    assert_eq!(storage.get_object("q/state").await.unwrap().unwrap()[0], 2);
    assert!(kinds(&rec).iter().all(|(_, k)| *k == ReadKind::Whole));
}

#[tokio::test]
async fn partial_reads_bounded_suffix_and_open_ended() {
    let (_store, rec, storage) = setup().await;
    let key = StoreKey::new("a/obj").unwrap();
    // Bounded ranges of an unknown size: one coalesced wave, no size probe.
    let parts = storage
        .get_ranges(
            "a/obj",
            &[
                ByteRange::FromStart(2, Some(3)),
                ByteRange::FromStart(5, Some(2)),
            ],
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(parts[0].as_ref(), &[2, 3, 4]);
    assert_eq!(parts[1].as_ref(), &[5, 6]);
    assert_eq!(
        kinds(&rec),
        vec![("root/a/obj".into(), ReadKind::Range(2..7))]
    );
    // Suffix + open-ended: a suffix read learns the size, the rest is one sized wave.
    let parts = storage
        .get_ranges(
            "a/obj",
            &[ByteRange::Suffix(4), ByteRange::FromStart(10, None)],
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(parts[0].as_ref(), &[96, 97, 98, 99]);
    assert_eq!(parts[1].len(), 90);
    assert_eq!(parts[1][0], 10);
    // The size is pinned now: zarrs' size_key needs no request.
    let before = rec.reads().len();
    assert_eq!(storage.size_key(&key).await.unwrap(), Some(100));
    assert_eq!(rec.reads().len(), before);
    // Past the end of a known size: refused before anything is sent.
    let err = storage
        .get_ranges("a/obj", &[ByteRange::FromStart(90, Some(20))])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("memory:///root/a/obj"), "{err}");
    assert_eq!(rec.reads().len(), before);
    // Missing objects are None.
    assert!(storage
        .get_ranges("a/none", &[ByteRange::Suffix(3)])
        .await
        .unwrap()
        .is_none());
}

#[tokio::test]
async fn writes_need_a_writer_and_unpin() {
    let (store, _rec, storage) = setup().await;
    let key = StoreKey::new("a/obj").unwrap();
    let err = storage
        .set(&key, Bytes::from_static(b"x"))
        .await
        .unwrap_err();
    assert!(matches!(err, StorageError::ReadOnly), "{err}");
    let storage = storage.with_object_store_writes(Arc::clone(&store));
    storage.get_object("a/obj").await.unwrap();
    storage.set(&key, Bytes::from_static(b"new")).await.unwrap();
    // Our own write is not a foreign replacement.
    assert_eq!(
        storage.get_object("a/obj").await.unwrap().unwrap().as_ref(),
        b"new"
    );
    storage.erase(&key).await.unwrap();
    assert!(storage.get_object("a/obj").await.unwrap().is_none());
    assert_eq!(storage.probe().kinds().writes, 2);
}
