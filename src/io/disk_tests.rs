use super::*;

const KEY: &str = "s3://bucket\nt.lance/data/a.lance";

fn version(size: u64, etag: Option<&str>) -> ObjectVersion {
    ObjectVersion {
        size,
        etag: etag.map(str::to_string),
    }
}

fn object_bytes(size: usize) -> Vec<u8> {
    (0..size).map(|i| (i * 7 % 251) as u8).collect()
}

fn entry_files(cache: &DiskCache) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for fan in read_dir_paths(&cache.root().join("objects")) {
        for object in read_dir_paths(&fan) {
            out.extend(read_dir_paths(&object));
        }
    }
    out.sort();
    out
}

#[test]
fn ranges_inside_a_stored_range_hit_and_others_miss() {
    let dir = tempfile::tempdir().unwrap();
    let cache = DiskCache::open(dir.path(), 1 << 20).unwrap();
    let data = object_bytes(1000);
    let v = version(1000, Some("\"e1\""));
    cache.store_blocking(KEY, &v, 100, &data[100..600]);
    let hit = cache
        .lookup_blocking(KEY, &Wanted::Range(200..300), Some(&v))
        .unwrap();
    assert_eq!(&hit.bytes[..], &data[200..300]);
    assert_eq!((hit.start, hit.version.clone()), (200, v.clone()));
    // Not contained, other size, other etag, other object: misses.
    assert!(cache
        .lookup_blocking(KEY, &Wanted::Range(50..150), Some(&v))
        .is_none());
    assert!(cache
        .lookup_blocking(KEY, &Wanted::Range(200..300), Some(&version(999, None)))
        .is_none());
    let other_etag = version(1000, Some("\"e2\""));
    assert!(cache
        .lookup_blocking(KEY, &Wanted::Range(200..300), Some(&other_etag))
        .is_none());
    assert!(cache
        .lookup_blocking(
            "s3://other\nt.lance/data/a.lance",
            &Wanted::Range(200..300),
            None
        )
        .is_none());
    // A size-only lookup accepts the entry (the etag is unknown to the caller).
    assert!(cache
        .lookup_blocking(KEY, &Wanted::Range(200..300), Some(&version(1000, None)))
        .is_some());
}

#[test]
fn suffix_and_whole_lookups_without_a_known_version() {
    let dir = tempfile::tempdir().unwrap();
    let cache = DiskCache::open(dir.path(), 1 << 20).unwrap();
    let data = object_bytes(1000);
    let v = version(1000, None);
    cache.store_blocking(KEY, &v, 400, &data[400..]);
    let tail = cache
        .lookup_blocking(KEY, &Wanted::Suffix(100), None)
        .unwrap();
    assert_eq!((&tail.bytes[..], tail.start), (&data[900..], 900));
    assert_eq!(tail.version.size, 1000);
    assert!(cache
        .lookup_blocking(KEY, &Wanted::Suffix(700), None)
        .is_none());
    assert!(cache.lookup_blocking(KEY, &Wanted::Whole, None).is_none());
    cache.store_blocking(KEY, &v, 0, &data);
    let whole = cache.lookup_blocking(KEY, &Wanted::Whole, None).unwrap();
    assert_eq!(&whole.bytes[..], &data[..]);
    // A suffix longer than the object is the whole object.
    let all = cache
        .lookup_blocking(KEY, &Wanted::Suffix(5000), None)
        .unwrap();
    assert_eq!(all.bytes.len(), 1000);
}

#[test]
fn truncated_garbled_and_foreign_entries_are_misses_and_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let cache = DiskCache::open(dir.path(), 1 << 20).unwrap();
    let data = object_bytes(4000);
    let v = version(4000, Some("\"x\""));
    let wanted = Wanted::Range(10..20);
    type Damage<'a> = &'a dyn Fn(&mut Vec<u8>);
    let damage: [Damage; 5] = [
        &|b| b.truncate(b.len() / 2),     // truncated payload
        &|b| b.truncate(3),               // truncated header
        &|b| b[100] ^= 0x40,              // flipped payload bit
        &|b| *b.last_mut().unwrap() ^= 1, // flipped checksum
        &|b| b.clear(),                   // empty file
    ];
    for (i, hurt) in damage.iter().enumerate() {
        cache.store_blocking(KEY, &v, 0, &data[..1000]);
        let files = entry_files(&cache);
        assert_eq!(files.len(), 1);
        let mut bytes = fs::read(&files[0]).unwrap();
        hurt(&mut bytes);
        fs::write(&files[0], &bytes).unwrap();
        assert!(
            cache.lookup_blocking(KEY, &wanted, Some(&v)).is_none(),
            "damage {i} must be a miss"
        );
        assert!(entry_files(&cache).is_empty(), "damage {i}: entry removed");
        // The refetch rewrites it.
        cache.store_blocking(KEY, &v, 0, &data[..1000]);
        let hit = cache.lookup_blocking(KEY, &wanted, Some(&v)).unwrap();
        assert_eq!(&hit.bytes[..], &data[10..20]);
        fs::remove_file(&entry_files(&cache)[0]).unwrap();
    }
}

#[test]
fn an_entry_under_another_key_or_name_is_a_miss() {
    let dir = tempfile::tempdir().unwrap();
    let cache = DiskCache::open(dir.path(), 1 << 20).unwrap();
    let data = object_bytes(1000);
    let v = version(1000, None);
    // Another object's (valid, checksummed) entry copied into this object's directory, as a
    // hash collision would place it.
    let other = "file://\n/elsewhere/data/b.lance";
    cache.store_blocking(other, &v, 0, &data[..500]);
    let theirs = entry_files(&cache).remove(0);
    let mine_dir = cache.object_dir(KEY);
    fs::create_dir_all(&mine_dir).unwrap();
    fs::copy(&theirs, mine_dir.join(theirs.file_name().unwrap())).unwrap();
    assert!(cache
        .lookup_blocking(KEY, &Wanted::Range(0..10), Some(&v))
        .is_none());
    // A valid entry renamed to claim another range is a miss too.
    cache.store_blocking(KEY, &v, 0, &data[..500]);
    let mine = read_dir_paths(&mine_dir).remove(0);
    let lie = EntryName {
        start: 0,
        end: 600,
        size: 1000,
        etag_hash: 0,
    };
    fs::rename(&mine, mine_dir.join(lie.file_name())).unwrap();
    assert!(cache
        .lookup_blocking(KEY, &Wanted::Range(550..560), Some(&v))
        .is_none());
    // Names that do not parse are ignored.
    fs::write(mine_dir.join("junk.bin"), b"junk").unwrap();
    fs::write(mine_dir.join("0-0-0-0.bin"), b"junk").unwrap();
    assert!(cache.lookup_blocking(KEY, &Wanted::Whole, None).is_none());
    assert_eq!(
        EntryName::parse("0000000000000005-0000000000000001-0000000000000009-0000000000000000.bin"),
        None
    );
}

#[test]
fn the_budget_evicts_least_recently_used_entries() {
    let dir = tempfile::tempdir().unwrap();
    let data = object_bytes(10_000);
    let v = version(10_000, None);
    // Each entry is 1000 payload bytes + ~80 bytes of framing; room for ~4.
    let cache = DiskCache::open(dir.path(), 4500).unwrap();
    for i in 0..4u64 {
        let s = (i * 1000) as usize;
        cache.store_blocking(KEY, &v, i * 1000, &data[s..s + 1000]);
    }
    assert_eq!(entry_files(&cache).len(), 4);
    // Make entry 0 the oldest by use order: set explicit times (no sleeping).
    let base = SystemTime::now() - Duration::from_secs(1000);
    for (i, f) in entry_files(&cache).iter().enumerate() {
        let file = fs::File::options().append(true).open(f).unwrap();
        file.set_modified(base + Duration::from_secs(i as u64 * 10))
            .unwrap();
    }
    // Use entry 0 (its time becomes now), then write a fifth: entry 1 (least recently used)
    // goes.
    assert!(cache
        .lookup_blocking(KEY, &Wanted::Range(0..10), Some(&v))
        .is_some());
    cache.store_blocking(KEY, &v, 4000, &data[4000..5000]);
    assert!(cache.measured_bytes() <= 4500);
    assert!(cache
        .lookup_blocking(KEY, &Wanted::Range(1000..1010), Some(&v))
        .is_none());
    for kept in [0u64, 4000] {
        assert!(
            cache
                .lookup_blocking(KEY, &Wanted::Range(kept..kept + 10), Some(&v))
                .is_some(),
            "entry at {kept} kept"
        );
    }
    // An entry larger than the whole budget is not written.
    cache.store_blocking(KEY, &v, 0, &data);
    assert!(cache.lookup_blocking(KEY, &Wanted::Whole, None).is_none());
    // Reopening with a smaller budget trims at once.
    let small = DiskCache::open(dir.path(), 1500).unwrap();
    assert!(small.measured_bytes() <= 1500);
}

#[test]
fn concurrent_writers_and_readers_of_one_directory_only_see_whole_entries() {
    let dir = tempfile::tempdir().unwrap();
    let data = Arc::new(object_bytes(64 * 1024));
    let v = version(64 * 1024, Some("\"v\""));
    let threads: Vec<_> = (0..4)
        .map(|t| {
            // Separate handles, as separate processes would have.
            let cache = DiskCache::open(dir.path(), 1 << 20).unwrap();
            let data = Arc::clone(&data);
            let v = v.clone();
            std::thread::spawn(move || {
                for round in 0..50u64 {
                    let start = ((round * 4096 + t * 512) % (60 * 1024)) as usize;
                    cache.store_blocking(KEY, &v, start as u64, &data[start..start + 4096]);
                    let probe = (start + 100) as u64..(start + 200) as u64;
                    if let Some(hit) =
                        cache.lookup_blocking(KEY, &Wanted::Range(probe.clone()), Some(&v))
                    {
                        assert_eq!(
                            &hit.bytes[..],
                            &data[probe.start as usize..probe.end as usize]
                        );
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let cache = DiskCache::open(dir.path(), 1 << 20).unwrap();
    for f in entry_files(&cache) {
        let name = EntryName::parse(f.file_name().unwrap().to_str().unwrap()).unwrap();
        let bytes = fs::read(&f).unwrap();
        let entry = decode_entry(&bytes, KEY, &name).expect("every entry left is valid");
        assert_eq!(
            &bytes[entry.payload.clone()],
            &data[entry.range.start as usize..entry.range.end as usize]
        );
    }
    assert!(read_dir_paths(&cache.root().join("tmp")).is_empty());
}

#[test]
fn an_unusable_directory_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-dir");
    fs::write(&file, b"x").unwrap();
    match DiskCache::open(&file, 1 << 20) {
        Err(Error::InvalidArgument(why)) => assert!(why.contains("cache directory"), "{why}"),
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

mod through_the_fetcher {
    use super::*;
    use crate::io::fetch::{DiskTier, FetchOptions, RangeFetcher, ReadRequest};
    use crate::io::source::{ObjectStoreSource, RangeSource};
    use crate::io::IoStats;
    use object_store::memory::InMemory;
    use object_store::path::Path;
    use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

    const SIZE: usize = 100_000;

    async fn fetcher(dir: &FsPath, gap: u64) -> (RangeFetcher, Vec<u8>) {
        let store = Arc::new(InMemory::new());
        let data = object_bytes(SIZE);
        store
            .put(
                &Path::from("t/data/a.lance"),
                PutPayload::from(data.clone()),
            )
            .await
            .unwrap();
        store
            .put(
                &Path::from("t/_latest.manifest"),
                PutPayload::from(data.clone()),
            )
            .await
            .unwrap();
        let source: Arc<dyn RangeSource> = Arc::new(ObjectStoreSource::new(
            store as Arc<dyn ObjectStore>,
            gap,
            "memory",
        ));
        let tier = DiskTier {
            cache: DiskCache::open(dir, 1 << 30).unwrap(),
            store: "memory://test".into(),
            immutable: |p| p.as_ref().ends_with(".lance"),
        };
        let f = RangeFetcher::new(source, FetchOptions::default()).with_disk(Some(tier));
        (f, data)
    }

    fn req(range: Range<u64>) -> ReadRequest {
        ReadRequest::sized(Path::from("t/data/a.lance"), range, SIZE as u64)
    }

    #[tokio::test]
    async fn a_new_fetcher_reads_ranges_inside_earlier_gets_from_disk() {
        let dir = tempfile::tempdir().unwrap();
        let (first, data) = fetcher(dir.path(), 1000).await;
        let stats = IoStats::new();
        // Two ranges 500 bytes apart: merged into one GET of 100..2600.
        first
            .fetch(&[req(100..600), req(1100..2600)], &stats)
            .await
            .unwrap();
        assert_eq!(stats.snapshot().requests, 1);
        // "Another process": a fresh fetcher over the same directory, ranges coalesced
        // differently (no gap), all inside the earlier GET: no request.
        let (second, _) = fetcher(dir.path(), 0).await;
        let warm = IoStats::new();
        let got = second
            .fetch(&[req(700..800), req(150..160), req(2500..2600)], &warm)
            .await
            .unwrap();
        assert_eq!(&got[0][..], &data[700..800]);
        assert_eq!(&got[1][..], &data[150..160]);
        assert_eq!(&got[2][..], &data[2500..2600]);
        let snap = warm.snapshot();
        assert_eq!(
            (snap.requests, snap.round_trips, snap.disk_hits),
            (0, 0, 3),
            "{snap:?}"
        );
        // A range crossing the end of the cached one is fetched (and correct).
        let mixed = IoStats::new();
        let got = second
            .fetch(&[req(2500..2700), req(200..300)], &mixed)
            .await
            .unwrap();
        assert_eq!(&got[0][..], &data[2500..2700]);
        assert_eq!(&got[1][..], &data[200..300]);
        assert_eq!(
            (mixed.snapshot().requests, mixed.snapshot().disk_hits),
            (1, 1)
        );
        // Tails and whole reads too.
        let tail = first
            .tail(&Path::from("t/data/a.lance"), 4096, &stats)
            .await
            .unwrap();
        let again = IoStats::new();
        let cached = second
            .tail(&Path::from("t/data/a.lance"), 1000, &again)
            .await
            .unwrap();
        assert_eq!(
            (cached.start(), &cached.bytes[..]),
            (SIZE as u64 - 1000, &data[SIZE - 1000..])
        );
        assert_eq!(cached.version, tail.version);
        assert_eq!(again.snapshot().requests, 0);
    }

    #[tokio::test]
    async fn a_garbled_entry_is_refetched_never_served() {
        let dir = tempfile::tempdir().unwrap();
        let (first, data) = fetcher(dir.path(), 0).await;
        first.fetch(&[req(0..5000)], &IoStats::new()).await.unwrap();
        let cache = DiskCache::open(dir.path(), 1 << 30).unwrap();
        let files = entry_files(&cache);
        assert_eq!(files.len(), 1);
        let mut bytes = fs::read(&files[0]).unwrap();
        let at = bytes.len() - 100;
        bytes[at] ^= 0xff;
        fs::write(&files[0], &bytes).unwrap();
        let (second, _) = fetcher(dir.path(), 0).await;
        let stats = IoStats::new();
        let got = second.fetch(&[req(4800..4950)], &stats).await.unwrap();
        assert_eq!(&got[0][..], &data[4800..4950]);
        assert_eq!(
            (stats.snapshot().requests, stats.snapshot().disk_hits),
            (1, 0)
        );
        // The refetched range was written back.
        let (third, _) = fetcher(dir.path(), 0).await;
        let warm = IoStats::new();
        let got = third.fetch(&[req(4800..4950)], &warm).await.unwrap();
        assert_eq!(&got[0][..], &data[4800..4950]);
        assert_eq!(warm.snapshot().requests, 0);
    }

    #[tokio::test]
    async fn mutable_paths_and_unknown_sizes_never_touch_the_disk() {
        let dir = tempfile::tempdir().unwrap();
        let (f, _) = fetcher(dir.path(), 0).await;
        let unsized_req = ReadRequest::new(Path::from("t/data/a.lance"), 0..10);
        f.fetch(std::slice::from_ref(&unsized_req), &IoStats::new())
            .await
            .unwrap();
        let cache = DiskCache::open(dir.path(), 1 << 30).unwrap();
        assert!(entry_files(&cache).is_empty(), "no size, no entry");
        let stats = IoStats::new();
        f.fetch(&[unsized_req], &stats).await.unwrap();
        assert_eq!(stats.snapshot().requests, 1);
        // A path the tier is told is mutable is read from the store every time.
        let latest = Path::from("t/_latest.manifest");
        let stats = IoStats::new();
        f.tail(&latest, 100, &stats).await.unwrap();
        f.whole(&latest, &stats).await.unwrap();
        f.tail(&latest, 100, &stats).await.unwrap();
        assert_eq!(
            (stats.snapshot().requests, stats.snapshot().disk_hits),
            (3, 0)
        );
        assert!(entry_files(&cache).is_empty());
    }
}
