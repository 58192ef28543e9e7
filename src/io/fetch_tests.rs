//! Unit tests and property tests of the fetch planner, slicing and Tail.
#![allow(clippy::reversed_empty_ranges, clippy::single_range_in_vec_init)] // deliberate bad inputs

use super::*;
use crate::io::source::ObjectStoreSource;
use object_store::memory::InMemory;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use proptest::prelude::*;

fn p(s: &str) -> Path {
    Path::from(s)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// An in-memory source holding `objects`, with the given coalescing gap.
async fn memory_source(objects: &[(&str, Vec<u8>)], gap: u64) -> Arc<dyn RangeSource> {
    let store = Arc::new(InMemory::new());
    for (name, data) in objects {
        store
            .put(&p(name), PutPayload::from(data.clone()))
            .await
            .unwrap();
    }
    Arc::new(ObjectStoreSource::new(
        store as Arc<dyn ObjectStore>,
        gap,
        "memory",
    ))
}

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
}

#[test]
fn merges_close_ranges_and_keeps_far_ones() {
    let m = merge_ranges(&[10..20, 0..5, 25..30, 100..110], 5, u64::MAX);
    assert_eq!(m, vec![0..30, 100..110]);
    let m = merge_ranges(&[10..20, 0..5, 25..30, 100..110], 4, u64::MAX);
    assert_eq!(m, vec![0..5, 10..20, 25..30, 100..110]);
}

#[test]
fn respects_max_merged_size_but_always_merges_overlaps() {
    assert_eq!(
        merge_ranges(&[0..10, 10..20, 20..30], 0, 20),
        vec![0..20, 20..30]
    );
    assert_eq!(merge_ranges(&[0..15, 10..30], 0, 5), vec![0..30]);
    assert_eq!(merge_ranges(&[0..100], 0, 5), vec![0..100]);
    assert_eq!(
        merge_ranges(&[5..5, 7..3], 10, 10),
        Vec::<Range<u64>>::new()
    );
}

#[test]
fn gap_edge_is_inclusive_and_saturates() {
    assert_eq!(merge_ranges(&[0..10, 15..20], 5, u64::MAX), vec![0..20]);
    assert_eq!(
        merge_ranges(&[0..10, 16..20], 5, u64::MAX),
        vec![0..10, 16..20]
    );
    assert_eq!(
        merge_ranges(&[0..10, u64::MAX - 1..u64::MAX], u64::MAX, u64::MAX),
        vec![0..u64::MAX]
    );
}

#[test]
fn check_range_rejects_empty_inverted_and_past_eof() {
    let path = p("dir/f.lance");
    assert!(check_range(&path, &(0..1), Some(1)).is_ok());
    assert!(check_range(&path, &(5..u64::MAX), None).is_ok());
    let e = check_range(&path, &(3..3), Some(10)).unwrap_err();
    assert!(
        matches!(e, Error::InvalidArgument(ref m) if m.contains("dir/f.lance")),
        "{e}"
    );
    assert!(matches!(
        check_range(&path, &(4..2), None),
        Err(Error::InvalidArgument(_))
    ));
    match check_range(&path, &(5..11), Some(10)).unwrap_err() {
        Error::Corrupt { path, range, .. } => {
            assert_eq!((path.as_str(), range), ("dir/f.lance", Some(5..11)))
        }
        other => panic!("unexpected {other}"),
    }
}

#[test]
fn clamping_cuts_to_the_object_and_rejects_outside() {
    assert_eq!(clamp_range(&(10..100), 50), Some(10..50));
    assert_eq!(clamp_range(&(10..20), 50), Some(10..20));
    assert_eq!(clamp_range(&(50..60), 50), None);
    assert_eq!(clamp_range(&(20..10), 50), None);
    let r = ReadRequest::clamped(p("a"), 40..1000, 64).unwrap();
    assert_eq!((r.range, r.object_size), (40..64, Some(64)));
    assert!(matches!(
        ReadRequest::clamped(p("a"), 64..70, 64),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn plan_groups_by_path_and_validates_first() {
    let reqs = vec![
        ReadRequest::new(p("b"), 100..200),
        ReadRequest::new(p("a"), 0..10),
        ReadRequest::new(p("b"), 0..10),
        ReadRequest::new(p("a"), 12..20),
    ];
    let plan = plan_fetch(&reqs, 4, u64::MAX).unwrap();
    let got: Vec<(&str, Range<u64>)> = plan
        .iter()
        .map(|r| (r.path.as_ref(), r.range.clone()))
        .collect();
    assert_eq!(got, vec![("a", 0..20), ("b", 0..10), ("b", 100..200)]);
    let mut bad = reqs.clone();
    bad.push(ReadRequest::sized(p("c"), 0..11, 10));
    assert!(matches!(
        plan_fetch(&bad, 4, u64::MAX),
        Err(Error::Corrupt { .. })
    ));
}

fn tail_of(data: &[u8], n: usize) -> Tail {
    let start = data.len().saturating_sub(n);
    Tail {
        bytes: Bytes::copy_from_slice(&data[start..]),
        version: ObjectVersion {
            size: data.len() as u64,
            etag: None,
        },
    }
}

#[test]
fn tail_slicing_uses_absolute_offsets() {
    let data = pattern(100);
    let t = tail_of(&data, 30);
    assert_eq!(t.start(), 70);
    assert!(!t.is_whole_object());
    assert_eq!(t.slice(70..100).unwrap().as_ref(), &data[70..100]);
    assert_eq!(t.slice(80..90).unwrap().as_ref(), &data[80..90]);
    assert_eq!(t.slice(90..90).unwrap().len(), 0);
    assert!(t.slice(69..80).is_none());
    assert!(t.slice(90..101).is_none());
    assert!(t.slice(95..90).is_none());
    let whole = tail_of(&data, 1000);
    assert!(whole.is_whole_object());
    assert_eq!(whole.start(), 0);
    assert_eq!(whole.slice(0..100).unwrap().as_ref(), &data[..]);
    // A malformed tail (more bytes than the object) never panics.
    let bogus = Tail {
        bytes: Bytes::from_static(b"abcdef"),
        version: ObjectVersion {
            size: 3,
            etag: None,
        },
    };
    assert_eq!(bogus.start(), 0);
    assert!(bogus.slice(0..3).is_some());
}

#[test]
fn fetch_returns_slices_in_request_order_and_counts_merged_requests() {
    runtime().block_on(async {
        let data = pattern(10_000);
        let source = memory_source(&[("x", data.clone()), ("y", data[..500].to_vec())], 0).await;
        let fetcher = RangeFetcher::new(
            source,
            FetchOptions {
                coalesce_gap: Some(100),
                ..Default::default()
            },
        );
        let reqs = vec![
            ReadRequest::new(p("x"), 5000..5010),
            ReadRequest::new(p("y"), 0..500),
            ReadRequest::new(p("x"), 0..10),
            ReadRequest::new(p("x"), 50..60),
            ReadRequest::new(p("x"), 5..8),
        ];
        let stats = IoStats::new();
        let out = fetcher.fetch(&reqs, &stats).await.unwrap();
        for (r, b) in reqs.iter().zip(&out) {
            let src = if r.path.as_ref() == "x" {
                &data[..]
            } else {
                &data[..500]
            };
            assert_eq!(
                b.as_ref(),
                &src[r.range.start as usize..r.range.end as usize]
            );
        }
        let s = stats.snapshot();
        assert_eq!(s.requests, 3, "x:0..60, x:5000..5010, y:0..500");
        assert_eq!(s.bytes, 60 + 10 + 500);
        assert_eq!(s.round_trips, 1);
        assert_eq!(fetcher.fetch(&[], &stats).await.unwrap().len(), 0);
        assert_eq!(stats.snapshot().requests, 3);
    });
}

#[test]
fn fetch_errors_name_path_and_range() {
    runtime().block_on(async {
        let source = memory_source(&[("x", pattern(100))], 0).await;
        let fetcher = RangeFetcher::new(source, FetchOptions::default());
        let stats = IoStats::new();
        // Past EOF with unknown size: the store answers short or refuses; never decoded.
        let e = fetcher
            .fetch(&[ReadRequest::new(p("x"), 90..110)], &stats)
            .await
            .unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains('x') && msg.contains("90..110"), "{msg}");
        // Known size: rejected before sending.
        let before = stats.snapshot().requests;
        assert!(fetcher
            .fetch(&[ReadRequest::sized(p("x"), 90..110, 100)], &stats)
            .await
            .is_err());
        assert_eq!(stats.snapshot().requests, before);
        // Missing object.
        let e = fetcher
            .fetch(&[ReadRequest::new(p("nope"), 0..1)], &stats)
            .await
            .unwrap_err();
        assert!(
            matches!(e, Error::NotFound { ref path, .. } if path == "nope"),
            "{e}"
        );
        let e = fetcher.tail(&p("nope"), 10, &stats).await.unwrap_err();
        assert!(matches!(e, Error::NotFound { .. }), "{e}");
    });
}

#[test]
fn tail_and_whole_read_size_from_the_response() {
    runtime().block_on(async {
        let data = pattern(1000);
        let source = memory_source(&[("x", data.clone())], 0).await;
        let fetcher = RangeFetcher::new(source, FetchOptions::default());
        let stats = IoStats::new();
        let t = fetcher.tail(&p("x"), 64, &stats).await.unwrap();
        assert_eq!((t.version.size, t.start()), (1000, 936));
        assert_eq!(t.bytes.as_ref(), &data[936..]);
        let t = fetcher.tail(&p("x"), 5000, &stats).await.unwrap();
        assert!(t.is_whole_object());
        let w = fetcher.whole(&p("x"), &stats).await.unwrap();
        assert_eq!(w.bytes.as_ref(), &data[..]);
        assert!(fetcher.tail(&p("x"), 0, &stats).await.is_err());
        let s = stats.snapshot();
        assert_eq!(
            (s.requests, s.bytes, s.round_trips),
            (3, 64 + 1000 + 1000, 3)
        );
    });
}

proptest! {
    #[test]
    fn merged_ranges_cover_are_disjoint_and_minimal(
        ranges in proptest::collection::vec((0u64..10_000, 0u64..500), 0..50),
        gap in 0u64..1000,
        max in 1u64..5000,
    ) {
        let ranges: Vec<Range<u64>> = ranges.into_iter().map(|(s, l)| s..s + l).collect();
        let merged = merge_ranges(&ranges, gap, max);
        let nonempty: Vec<&Range<u64>> = ranges.iter().filter(|r| r.start < r.end).collect();
        for r in &nonempty {
            prop_assert!(merged.iter().any(|m| m.start <= r.start && r.end <= m.end));
        }
        for m in &merged {
            // Merged bounds are input bounds; no hole inside a merged range exceeds `gap`.
            prop_assert!(nonempty.iter().any(|r| r.start == m.start));
            prop_assert!(nonempty.iter().any(|r| r.end == m.end));
            let mut inside: Vec<&&Range<u64>> = nonempty.iter().filter(|r| m.start <= r.start && r.end <= m.end).collect();
            inside.sort_by_key(|r| r.start);
            let mut covered_to = m.start;
            for r in inside {
                prop_assert!(r.start <= covered_to.saturating_add(gap));
                covered_to = covered_to.max(r.end);
            }
            prop_assert_eq!(covered_to, m.end);
        }
        for w in merged.windows(2) {
            prop_assert!(w[0].end <= w[1].start, "disjoint and sorted");
            // Minimal: neighbours were kept apart for a reason.
            prop_assert!(w[1].start > w[0].end + gap || w[1].end - w[0].start > max);
        }
    }

    #[test]
    fn fetch_slices_equal_the_object_bytes(
        ranges in proptest::collection::vec((0u64..4000, 1u64..300), 1..40),
        gap in 0u64..600,
        max in 1u64..3000,
        concurrency in 1usize..6,
    ) {
        let data = pattern(4300);
        let out = runtime().block_on(async {
            let source = memory_source(&[("obj", data.clone())], 0).await;
            let options = FetchOptions { coalesce_gap: Some(gap), max_merged_bytes: max, max_concurrency: concurrency };
            let fetcher = RangeFetcher::new(source, options);
            let reqs: Vec<ReadRequest> =
                ranges.iter().map(|(s, l)| ReadRequest::sized(p("obj"), *s..s + l, 4300)).collect();
            let stats = IoStats::new();
            let planned = fetcher.plan(&reqs).unwrap();
            let out = fetcher.fetch(&reqs, &stats).await.unwrap();
            let s = stats.snapshot();
            assert_eq!(s.requests, planned.len() as u64);
            assert_eq!(s.bytes, planned.iter().map(|r| r.range.end - r.range.start).sum::<u64>());
            out
        });
        for ((s, l), b) in ranges.iter().zip(&out) {
            prop_assert_eq!(b.as_ref(), &data[*s as usize..(s + l) as usize]);
        }
    }

    #[test]
    fn tail_slice_matches_the_object_or_refuses(
        len in 1usize..500, n in 1usize..600, a in 0u64..600, b in 0u64..600,
    ) {
        let data = pattern(len);
        let t = tail_of(&data, n);
        let got = t.slice(a..b);
        let start = len.saturating_sub(n) as u64;
        if a >= start && b <= len as u64 && a <= b {
            let got = got.unwrap();
            prop_assert_eq!(got.as_ref(), &data[a as usize..b as usize]);
        } else {
            prop_assert!(got.is_none());
        }
    }
}

/// A memory store holding one 64 KiB object, behind a [`LatencySource`] (1 ms per request,
/// the chosen request indices `slow` ms instead), advertising `hedge`.
async fn hedged_fixture(
    hedge: crate::io::hedge::HedgeConfig,
    slow: &[u64],
    slow_ms: u64,
) -> (Arc<crate::io::LatencySource>, Vec<u8>) {
    let store = Arc::new(InMemory::new());
    let data = pattern(64 << 10);
    store
        .put(&p("obj"), PutPayload::from(data.clone()))
        .await
        .unwrap();
    let inner =
        ObjectStoreSource::new(store as Arc<dyn ObjectStore>, 0, "memory").with_hedge(hedge);
    let latency = crate::io::LatencySource::new(Arc::new(inner), Duration::from_millis(1))
        .with_slow_requests(slow, Duration::from_millis(slow_ms));
    (Arc::new(latency), data)
}

/// Hedging that starts after 10 samples, at 200 ms at the earliest (so a fast request
/// delayed by a loaded machine does not take the wave's one hedge).
fn test_hedge() -> crate::io::hedge::HedgeConfig {
    crate::io::hedge::HedgeConfig {
        floor: Duration::from_millis(200),
        ..crate::io::hedge::HedgeConfig::remote()
    }
}

/// 8 requests 8 KiB apart (8 GETs at gap 0).
fn eight_reads(size: u64) -> Vec<ReadRequest> {
    (0..8u64)
        .map(|i| ReadRequest::sized(p("obj"), i * 8192..i * 8192 + 100, size))
        .collect()
}

use std::time::Duration;

#[test]
fn hedged_wave_finishes_at_the_fast_copy_and_cancels_the_slow_one() {
    runtime().block_on(async {
        // Requests 0..10 prime the latency history; request 10 (the wave's first GET) hangs.
        let (source, data) = hedged_fixture(test_hedge(), &[10], 600_000).await;
        let fetcher = RangeFetcher::new(
            Arc::clone(&source) as Arc<dyn RangeSource>,
            FetchOptions::default(),
        );
        let stats = IoStats::new();
        for _ in 0..10 {
            fetcher.tail(&p("obj"), 16, &stats).await.unwrap();
        }
        let reads = eight_reads(data.len() as u64);
        let got = fetcher.fetch(&reads, &stats).await.unwrap();
        for (r, b) in reads.iter().zip(&got) {
            assert_eq!(&b[..], &data[r.range.start as usize..r.range.end as usize]);
        }
        let s = stats.snapshot();
        // 10 tails + 8 GETs + 1 hedge; the hung copy was dropped unanswered.
        assert_eq!((s.requests, s.hedges), (19, 1));
        assert_eq!(source.started(), 19);
        assert_eq!(source.cancelled(), 1);
        // 10 tail waves + the hedged wave, one round trip deeper.
        assert_eq!(s.round_trips, 12);
    });
}

#[test]
fn hedges_are_capped_per_wave_and_off_without_history_or_config() {
    runtime().block_on(async {
        // Two slow GETs in a wave of 8: only ceil(10% of 8) = 1 is hedged.
        let (source, data) = hedged_fixture(test_hedge(), &[10, 11], 400).await;
        let fetcher = RangeFetcher::new(
            Arc::clone(&source) as Arc<dyn RangeSource>,
            FetchOptions::default(),
        );
        let stats = IoStats::new();
        for _ in 0..10 {
            fetcher.tail(&p("obj"), 16, &stats).await.unwrap();
        }
        fetcher
            .fetch(&eight_reads(data.len() as u64), &stats)
            .await
            .unwrap();
        let s = stats.snapshot();
        assert_eq!((s.requests, s.hedges, source.cancelled()), (19, 1, 1));

        // Too little history: no hedge, the slow GET is waited for.
        let (source, data) = hedged_fixture(test_hedge(), &[0], 400).await;
        let fetcher = RangeFetcher::new(
            Arc::clone(&source) as Arc<dyn RangeSource>,
            FetchOptions::default(),
        );
        let stats = IoStats::new();
        fetcher
            .fetch(&eight_reads(data.len() as u64), &stats)
            .await
            .unwrap();
        let s = stats.snapshot();
        assert_eq!((s.requests, s.hedges, source.cancelled()), (8, 0, 0));

        // Hedging off (local files, memory): never.
        let (source, data) = hedged_fixture(crate::io::hedge::HedgeConfig::off(), &[10], 400).await;
        let fetcher = RangeFetcher::new(
            Arc::clone(&source) as Arc<dyn RangeSource>,
            FetchOptions::default(),
        );
        let stats = IoStats::new();
        for _ in 0..10 {
            fetcher.tail(&p("obj"), 16, &stats).await.unwrap();
        }
        fetcher
            .fetch(&eight_reads(data.len() as u64), &stats)
            .await
            .unwrap();
        assert_eq!((stats.snapshot().hedges, source.cancelled()), (0, 0));
    });
}

#[test]
fn slot_waits_count_as_round_trips() {
    runtime().block_on(async {
        let data = pattern(1 << 20);
        let src = memory_source(&[("obj", data.clone())], 0).await;
        let options = FetchOptions {
            max_concurrency: 4,
            ..FetchOptions::default()
        };
        let fetcher = RangeFetcher::new(src, options);
        let stats = IoStats::new();
        let reads: Vec<ReadRequest> = (0..10u64)
            .map(|i| ReadRequest::sized(p("obj"), i * 1000..i * 1000 + 10, data.len() as u64))
            .collect();
        fetcher.fetch(&reads, &stats).await.unwrap();
        let s = stats.snapshot();
        // 10 GETs through 4 slots: 3 sequential rounds.
        assert_eq!((s.requests, s.round_trips), (10, 3));
    });
}

#[test]
fn remote_sources_bound_coalescing_by_waste_unless_the_gap_is_given() {
    let remote = |opts: &[(&str, &str)]| {
        let o: Vec<(String, String)> = [
            ("aws_region", "us-east-1"),
            ("aws_access_key_id", "a"),
            ("aws_secret_access_key", "b"),
        ]
        .iter()
        .chain(opts)
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let opened = crate::io::open_url("s3://bucket/x", &o).unwrap();
        RangeFetcher::new(opened.source, FetchOptions::default()).coalesce_policy()
    };
    let default = remote(&[]);
    assert_eq!(
        default.waste_ratio,
        Some(crate::io::coalesce::REMOTE_WASTE_RATIO)
    );
    assert_eq!(default.max_gap, crate::io::store::REMOTE_COALESCE_GAP);
    // `coalesce_gap=N` alone keeps its meaning: merge when the gap is at most N.
    let gap = remote(&[("coalesce_gap", "8192")]);
    assert_eq!((gap.max_gap, gap.waste_ratio), (8192, None));
    let both = remote(&[("coalesce_gap", "8192"), ("coalesce_waste", "0.5")]);
    assert_eq!((both.max_gap, both.waste_ratio), (8192, Some(0.5)));
    assert_eq!(remote(&[("coalesce_waste", "off")]).waste_ratio, None);
    let local = crate::io::open_url("/tmp/x", &[]).unwrap();
    let f = RangeFetcher::new(Arc::clone(&local.source), FetchOptions::default());
    assert_eq!(
        (
            f.coalesce_policy().waste_ratio,
            local.source.hedge_config().enabled()
        ),
        (None, false)
    );
    assert!(crate::io::open_url("s3://b/x", &[("hedge_fraction".into(), "2".into())]).is_err());
}
