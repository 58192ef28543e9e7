//! Untrusted sizes: property tests over the planners and decoders with random metadata
//! numbers (counts, offsets, widths, sizes up to `u64::MAX`).
//!
//! Every property asserts: no panic, failures are `Error` values of the "bad input" kinds
//! (Corrupt / Unsupported / InvalidArgument / NotFound), and — measured with the counting
//! global allocator below, per thread — the peak heap growth during the call stays within
//! `c × (bytes of input) + constant`. The bounds are stated per test; for codecs that
//! legitimately expand (constant, range, RLE, zstd) lakeseek's limit is
//! `compression::MAX_DECODED_BYTES` (1 GiB) per decode, not the object size, so those
//! encodings are left out of the allocation bounds here (and covered for panics by the
//! fuzz targets and the whole-file mutations below, which read at most 64 rows).

use crate::fuzzing as harness;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ops::Range;

use crate::io::fetch::{merge_ranges, plan_fetch, ReadRequest};
use crate::lance::compression::{decode_block, decode_miniblock, decode_u64_sequence};
use crate::lance::dataset::manifest::{decode_manifest_file, KnownBytes, ManifestStep};
use crate::lance::file::{parse_file_metadata, MetadataParse};
use crate::lance::proto::encodings::compressive_encoding::Compression;
use crate::lance::proto::encodings::*;
use crate::suite::common::{file_fixture, fixture};
use crate::Error;
use bytes::Bytes;
use object_store::path::Path;
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------
// A global allocator that tracks, per thread, the bytes currently allocated and the peak.

struct Counting;

thread_local! {
    static CURRENT: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn note(delta: isize) {
    let _ = CURRENT.try_with(|c| {
        let now = c.get() + delta;
        c.set(now);
        let _ = PEAK.try_with(|p| {
            if now > p.get() {
                p.set(now)
            }
        });
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        note(-(layout.size() as isize));
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            note(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Run `f` and return its result with the peak heap growth (bytes) of this thread during it.
fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let start = CURRENT.with(|c| c.get());
    PEAK.with(|p| p.set(start));
    let out = f();
    let peak = PEAK.with(|p| p.get());
    (out, (peak - start).max(0) as usize)
}

fn assert_input_error(e: &Error) {
    assert!(
        matches!(
            e,
            Error::Corrupt { .. }
                | Error::Unsupported { .. }
                | Error::InvalidArgument(_)
                | Error::NotFound { .. }
        ),
        "unexpected error kind: {e:?}"
    );
}

const MIB: usize = 1 << 20;

/// Overwrite `value` (little-endian, `width` bytes) at `at` (taken modulo the length).
fn overwrite(bytes: &mut [u8], at: usize, value: u64, width: usize) {
    if bytes.len() < width {
        return;
    }
    let at = at % (bytes.len() - width + 1);
    bytes[at..at + width].copy_from_slice(&value.to_le_bytes()[..width]);
}

/// Numbers that matter: small, boundaries, and anything up to u64::MAX.
fn number() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..300,
        Just(u64::MAX),
        Just(u64::MAX - 1),
        Just(i64::MAX as u64),
        Just(u32::MAX as u64),
        Just(u32::MAX as u64 + 1),
        Just(1 << 40),
        any::<u64>(),
    ]
}

// ---------------------------------------------------------------------------------------
// Fetch planning (pure).

fn range_strategy() -> impl Strategy<Value = Range<u64>> {
    (number(), number()).prop_map(|(a, b)| a.min(b)..a.max(b))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn merge_ranges_covers_every_range_with_sorted_disjoint_requests(
        ranges in prop::collection::vec(range_strategy(), 0..40),
        gap in number(),
        max_merged in number(),
    ) {
        let merged = merge_ranges(&ranges, gap, max_merged);
        for w in merged.windows(2) {
            prop_assert!(w[0].end <= w[1].start, "sorted, disjoint: {merged:?}");
            prop_assert!(w[0].start < w[1].start);
        }
        for r in ranges.iter().filter(|r| r.start < r.end) {
            prop_assert!(merged.iter().any(|m| m.start <= r.start && r.end <= m.end), "{r:?} covered by {merged:?}");
        }
        prop_assert!(merged.len() <= ranges.len());
        prop_assert!(merged.iter().all(|m| m.start < m.end));
    }

    #[test]
    fn plan_fetch_validates_then_covers_every_request(
        requests in prop::collection::vec((0u8..3, range_strategy(), prop::option::of(number())), 0..20),
        gap in number(),
        max_merged in number(),
    ) {
        let requests: Vec<ReadRequest> = requests
            .into_iter()
            .map(|(p, range, object_size)| ReadRequest {
                path: Path::from(format!("o{p}")),
                range,
                object_size,
            })
            .collect();
        match plan_fetch(&requests, gap, max_merged) {
            Ok(plan) => {
                for r in &requests {
                    prop_assert!(r.range.start < r.range.end);
                    prop_assert!(r.object_size.is_none_or(|s| r.range.end <= s));
                    prop_assert!(plan.iter().any(|p| p.path == r.path
                        && p.range.start <= r.range.start
                        && r.range.end <= p.range.end));
                }
            }
            Err(e) => {
                assert_input_error(&e);
                prop_assert!(requests.iter().any(|r| r.validate().is_err()));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Lance file metadata: a real file with random numbers written into its metadata region.

/// Under `tests/fixtures/files/`.
const FILES: &[&str] = &[
    "v2_1/ints.lance",
    "v2_2/strings.lance",
    "v2_3/nulls_constants.lance",
    "nested/v2_3_sparse/detections.lance",
    "nested/v2_3/detections.lance",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn file_metadata_with_random_numbers_errors_within_bounded_memory(
        file in 0..FILES.len(),
        edits in prop::collection::vec((any::<usize>(), number(), 1usize..=8, any::<bool>()), 1..6),
        tail_fraction in 0u8..=4,
    ) {
        let mut bytes = file_fixture(FILES[file]);
        let len = bytes.len();
        for (at, value, width, near_end) in edits {
            // Mostly inside the metadata region (the last ~1.5 KiB holds footer, tables,
            // column metadata and schema of these files).
            if near_end {
                let window = 1536.min(len);
                let mut tail = bytes[len - window..].to_vec();
                overwrite(&mut tail, at, value, width);
                bytes[len - window..].copy_from_slice(&tail);
            } else {
                overwrite(&mut bytes, at, value, width);
            }
        }
        let suffix = if tail_fraction == 0 { len } else { (len / tail_fraction as usize).max(1) };
        let tail = Bytes::copy_from_slice(&bytes[len - suffix..]);
        let (result, peak) =
            peak_during(|| parse_file_metadata(&tail, (len - suffix) as u64, len as u64));
        match &result {
            Ok(MetadataParse::Parsed(m)) => prop_assert_eq!(m.object_size, len as u64),
            Ok(MetadataParse::NeedMore(r)) => prop_assert!(r.end <= (len - suffix) as u64 + 1),
            Err(e) => assert_input_error(e),
        }
        prop_assert!(peak <= 64 * len + MIB, "metadata of a {len}-byte file took {peak} bytes");
        drop(result);
        // The whole reader (metadata, page init, plans, decoders) on at most 64 rows.
        let ((), peak) = peak_during(|| harness::read_file(&bytes));
        prop_assert!(peak <= 256 * len + 16 * MIB, "reading 64 rows of a {len}-byte file took {peak} bytes");
    }
}

// ---------------------------------------------------------------------------------------
// Manifests (framing, protobuf, index section, fragments, index metadata).

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn manifest_with_random_numbers_errors_within_bounded_memory(
        which in 0usize..3,
        edits in prop::collection::vec((any::<usize>(), number(), 1usize..=8), 1..6),
    ) {
        let dir = ["datasets/types.lance/_versions",
                   "datasets/bitmap_del.lance/_versions",
                   "list_element/datasets/detections.lance/_versions"][which];
        let path = std::fs::read_dir(fixture(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "manifest"))
            .min()
            .unwrap();
        let mut bytes = std::fs::read(path).unwrap();
        for (at, value, width) in edits {
            overwrite(&mut bytes, at, value, width);
        }
        let len = bytes.len();
        let bytes = Bytes::from(bytes);
        let (result, peak) = peak_during(|| {
            let mut known = KnownBytes::new(len as u64);
            known.add(0, bytes.clone());
            decode_manifest_file(&known)
        });
        match &result {
            Ok(ManifestStep::Done(_)) => {}
            Ok(ManifestStep::NeedRange(r)) => prop_assert!(r.end <= len as u64),
            Err(e) => assert_input_error(e),
        }
        prop_assert!(peak <= 64 * len + MIB, "a {len}-byte manifest took {peak} bytes");
    }
}

// ---------------------------------------------------------------------------------------
// Compression decoders that cannot expand: output is bounded by the payload.

fn flat(bits: u64) -> CompressiveEncoding {
    CompressiveEncoding {
        compression: Some(Compression::Flat(Flat {
            bits_per_value: bits,
            data: None,
        })),
    }
}

fn non_expanding(kind: u8, bits: u64, inner_bits: u64) -> CompressiveEncoding {
    let compression = match kind % 5 {
        0 => Compression::Flat(Flat {
            bits_per_value: bits,
            data: None,
        }),
        1 => Compression::InlineBitpacking(InlineBitpacking {
            uncompressed_bits_per_value: bits,
            values: None,
        }),
        2 => Compression::OutOfLineBitpacking(OutOfLineBitpacking {
            uncompressed_bits_per_value: bits,
            values: Some(Box::new(flat(inner_bits))),
        }),
        3 => Compression::Variable(Variable {
            offsets: Some(Box::new(flat(inner_bits))),
            values: None,
        }),
        _ => Compression::ByteStreamSplit(ByteStreamSplit {
            values: Some(Box::new(flat(bits))),
        }),
    };
    CompressiveEncoding {
        compression: Some(compression),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn non_expanding_decoders_allocate_at_most_a_multiple_of_their_payload(
        kind in any::<u8>(),
        bits in prop_oneof![Just(1u64), Just(8), Just(16), Just(32), Just(64), number()],
        inner_bits in prop_oneof![Just(32u64), Just(64), number()],
        count in number(),
        payload in prop::collection::vec(any::<u8>(), 0..2048),
        mode in 0u8..3,
    ) {
        let encoding = non_expanding(kind, bits, inner_bits);
        let n = usize::try_from(count).unwrap_or(usize::MAX);
        let len = payload.len();
        let payload = Bytes::from(payload);
        let (result, peak) = peak_during(|| match mode {
            0 => decode_block(&encoding, Some(payload.clone()), n).map(|v| v.num_values()),
            1 => decode_miniblock(&encoding, std::slice::from_ref(&payload), n).map(|v| v.num_values()),
            _ => decode_u64_sequence(&encoding, Some(payload.clone()), n).map(|v| v.len()),
        });
        match result {
            Ok(values) => prop_assert_eq!(values, n),
            Err(e) => assert_input_error(&e),
        }
        // Outputs are at most 64-bit widened values per payload bit... (1-bit flat → u64
        // sequences are 64x), plus offsets for variable values.
        prop_assert!(peak <= 1024 * len + 64 * 1024, "{len}-byte payload, {n} values: {peak} bytes");
    }
}

// ---------------------------------------------------------------------------------------
// BTree page lookups (a Lance file) with random numbers, then page selection.

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn btree_lookup_with_random_numbers_selects_or_errors_within_bounded_memory(
        edits in prop::collection::vec((any::<usize>(), number(), 1usize..=8), 1..5),
        probe in prop::collection::vec(any::<u8>(), 16),
    ) {
        let root = fixture("datasets/types.lance/_indices");
        let mut lookups: Vec<_> = std::fs::read_dir(root)
            .unwrap()
            .map(|e| e.unwrap().path().join("page_lookup.lance"))
            .filter(|p| p.exists())
            .collect();
        lookups.sort();
        let pick = probe[0] as usize % lookups.len();
        let mut bytes = std::fs::read(&lookups[pick]).unwrap();
        let len = bytes.len();
        for (at, value, width) in edits {
            let window = 1024.min(len);
            let mut tail = bytes[len - window..].to_vec();
            overwrite(&mut tail, at, value, width);
            bytes[len - window..].copy_from_slice(&tail);
        }
        let mut input = probe.clone();
        input.extend(bytes);
        let ((), peak) = peak_during(|| harness::btree_lookup(&input));
        prop_assert!(peak <= 256 * len + 16 * MIB, "{len}-byte lookup took {peak} bytes");
    }
}

// ---------------------------------------------------------------------------------------
// ecp: nodes and .npy query files with random shapes.

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn npy_with_random_shapes_errors_within_bounded_memory(
        dims in prop::collection::vec(number(), 1..3),
        descr in prop_oneof![Just("<f4"), Just("<f8"), Just("<f2"), Just(">f4"), Just("|u1")],
        body in prop::collection::vec(any::<u8>(), 0..512),
    ) {
        let shape = dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ");
        let header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({shape},), }}\n");
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend((header.len() as u16).to_le_bytes());
        bytes.extend(header.as_bytes());
        bytes.extend(&body);
        let len = bytes.len();
        let (result, peak) = peak_during(|| crate::ecp::npy::parse_npy(&bytes));
        match result {
            Ok(rows) => {
                let values: usize = rows.iter().map(|r| r.len()).sum();
                prop_assert!(values * 2 <= body.len() + 8);
            }
            Err(e) => assert_input_error(&e),
        }
        prop_assert!(peak <= 64 * len + 64 * 1024, "{len}-byte npy took {peak} bytes");
    }

    #[test]
    fn ecp_nodes_accept_only_consistent_shapes(
        dim in 0usize..10,
        rows in 0usize..20,
        extra in 0usize..3,
        ids in 0usize..25,
    ) {
        let embeddings = vec![0.5f32; rows * dim + extra];
        let children: Vec<u32> = (0..ids as u32).collect();
        match crate::ecp::Node::new(dim, embeddings, children) {
            Ok(node) => {
                prop_assert!(dim > 0 && extra % dim == 0);
                prop_assert!(node.children().is_empty() || node.children().len() == node.len());
            }
            Err(e) => assert_input_error(&e),
        }
    }

    #[test]
    fn ecp_search_over_random_trees_never_panics(data in prop::collection::vec(any::<u8>(), 1..400)) {
        let mut input = vec![1u8];
        input.extend(data);
        harness::ecp_node(&input);
    }

    #[test]
    fn filters_of_random_text_parse_or_error(text in "[a-z_ ()'=<>!0-9.,-]{0,80}|any_element\\(det, '[a-z_ ()=<>0-9.]{0,40}'\\)") {
        harness::predicate(text.as_bytes());
    }
}

#[test]
fn the_allocation_counter_sees_allocations() {
    let (v, peak) = peak_during(|| vec![0u8; 3 * MIB]);
    assert!(peak >= 3 * MIB, "{peak}");
    drop(v);
}
