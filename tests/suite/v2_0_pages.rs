//! Lance 2.0 pages: read plans (a take reads only its rows' byte ranges, in the waves the
//! dependencies force), bad input (garbled or truncated pages give `Corrupt`, never a panic
//! or garbage), and the raw-page seeds of the `v2_0_page` fuzz target.
#![allow(clippy::single_range_in_vec_init)] // row ranges: one range of rows is meant

use crate::suite::read_support as support;

use std::ops::Range;

use crate::io::IoStats;
use crate::lance::page::array_encoding::Node;
use crate::lance::proto::encodings_v2_0 as pb;
use crate::lance::reader::RowSelection;
use crate::lance::v2_0::{decode_page_in_memory, decode_page_waves};
use crate::Error;
use arrow_array::{Array, StringArray};
use arrow_schema::DataType;
use pb::array_encoding::ArrayEncoding as E;
use prost::Message;
use support::Backend;

fn flat(bits: u64, buffer: u32) -> pb::ArrayEncoding {
    pb::ArrayEncoding {
        array_encoding: Some(E::Flat(pb::Flat {
            bits_per_value: bits,
            buffer: Some(pb::Buffer {
                buffer_index: buffer,
                buffer_type: pb::BufferType::Page as i32,
            }),
            compression: None,
        })),
    }
}

fn no_null(values: pb::ArrayEncoding) -> pb::ArrayEncoding {
    pb::ArrayEncoding {
        array_encoding: Some(E::Nullable(Box::new(pb::Nullable {
            nullability: Some(pb::nullable::Nullability::NoNulls(Box::new(
                pb::nullable::NoNull {
                    values: Some(Box::new(values)),
                },
            ))),
        }))),
    }
}

fn some_null(validity: pb::ArrayEncoding, values: pb::ArrayEncoding) -> pb::ArrayEncoding {
    pb::ArrayEncoding {
        array_encoding: Some(E::Nullable(Box::new(pb::Nullable {
            nullability: Some(pb::nullable::Nullability::SomeNulls(Box::new(
                pb::nullable::SomeNull {
                    validity: Some(Box::new(validity)),
                    values: Some(Box::new(values)),
                },
            ))),
        }))),
    }
}

fn binary(indices: u32, bytes: u32, null_adjustment: u64) -> pb::ArrayEncoding {
    pb::ArrayEncoding {
        array_encoding: Some(E::Binary(Box::new(pb::Binary {
            indices: Some(Box::new(no_null(flat(64, indices)))),
            bytes: Some(Box::new(flat(8, bytes))),
            null_adjustment,
        }))),
    }
}

fn dictionary(num_items: u32) -> pb::ArrayEncoding {
    pb::ArrayEncoding {
        array_encoding: Some(E::Dictionary(Box::new(pb::Dictionary {
            indices: Some(Box::new(no_null(flat(8, 0)))),
            items: Some(Box::new(binary(1, 2, 100))),
            num_dictionary_items: num_items,
        }))),
    }
}

/// Page buffers laid out one after another; their ranges and the bytes.
fn layout(buffers: &[Vec<u8>]) -> (Vec<Range<u64>>, Vec<u8>) {
    let mut file = Vec::new();
    let mut ranges = Vec::new();
    for b in buffers {
        let start = file.len() as u64;
        file.extend_from_slice(b);
        ranges.push(start..file.len() as u64);
    }
    (ranges, file)
}

fn u64s(values: &[u64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Decode `rows` of a synthetic page.
fn decode(
    encoding: &pb::ArrayEncoding,
    buffers: &[Vec<u8>],
    rows: &[Range<u64>],
    data_type: &DataType,
) -> crate::Result<arrow_array::ArrayRef> {
    let (ranges, file) = layout(buffers);
    let node = Node::from_bytes(encoding.encode_to_vec().into(), &ranges)?;
    decode_page_in_memory(&node, rows, data_type, &file)
}

fn corrupt_mentioning(result: crate::Result<arrow_array::ArrayRef>, words: &str) {
    match result {
        Err(Error::Corrupt { what, .. }) => {
            assert!(what.contains(words), "{what:?} should mention {words:?}")
        }
        other => panic!("expected Corrupt ({words}), got {other:?}"),
    }
}

/// The strings "a", "", null, "ccc" as a binary page (null adjustment 5).
fn string_page() -> (pb::ArrayEncoding, Vec<Vec<u8>>) {
    (
        binary(0, 1, 5),
        vec![u64s(&[1, 1, 1 + 5, 4]), b"accc".to_vec()],
    )
}

#[test]
fn synthetic_binary_page_decodes_nulls_and_runs() {
    let (enc, buffers) = string_page();
    let all = decode(&enc, &buffers, &[0..4], &DataType::Utf8).expect("decode");
    let want = StringArray::from(vec![Some("a"), Some(""), None, Some("ccc")]);
    assert_eq!(all.to_data(), want.to_data());
    let some = decode(&enc, &buffers, &[0..1, 3..4], &DataType::Utf8).expect("decode");
    assert_eq!(
        some.to_data(),
        StringArray::from(vec![Some("a"), Some("ccc")]).to_data()
    );
}

#[test]
fn garbled_pages_are_corrupt_not_panics() {
    let (enc, buffers) = string_page();
    // Offsets that go backwards.
    let backwards = vec![u64s(&[3, 1, 1, 4]), b"accc".to_vec()];
    corrupt_mentioning(
        decode(&enc, &backwards, &[0..4], &DataType::Utf8),
        "decrease",
    );
    // Offsets past the bytes buffer.
    let past = vec![u64s(&[1, 1, 6, 400]), b"accc".to_vec()];
    corrupt_mentioning(decode(&enc, &past, &[0..4], &DataType::Utf8), "bytes");
    // Rows past the indices buffer.
    corrupt_mentioning(decode(&enc, &buffers, &[2..9], &DataType::Utf8), "buffer");
    // Invalid UTF-8 in a string page.
    let bad_utf8 = vec![u64s(&[1, 1, 6, 4]), vec![0xff, 0xfe, 0xfd, 0xfc]];
    corrupt_mentioning(decode(&enc, &bad_utf8, &[0..1], &DataType::Utf8), "invalid");
    // Values of the wrong width for the field.
    corrupt_mentioning(
        decode(
            &no_null(flat(32, 0)),
            &[vec![0; 16]],
            &[0..4],
            &DataType::Int64,
        ),
        "32-bit",
    );
    // A validity that is not a bitmap.
    corrupt_mentioning(
        decode(
            &some_null(flat(8, 0), flat(32, 1)),
            &[vec![0; 4], vec![0; 16]],
            &[0..4],
            &DataType::Int32,
        ),
        "1-bit",
    );
    // Dictionary indices beyond the items ("x", "yy", null).
    let items = vec![vec![1, 2, 9], u64s(&[1, 3, 3 + 100]), b"xyy".to_vec()];
    corrupt_mentioning(
        decode(&dictionary(3), &items, &[0..3], &DataType::Utf8),
        "dictionary index",
    );
    let fine = decode(
        &dictionary(3),
        &[vec![1, 2, 0], items[1].clone(), items[2].clone()],
        &[0..3],
        &DataType::Utf8,
    )
    .expect("dictionary");
    assert_eq!(
        fine.to_data(),
        StringArray::from(vec![Some("x"), Some("yy"), None]).to_data()
    );
    // A page naming a buffer it does not have, and bytes that are not a protobuf.
    assert!(matches!(
        Node::from_bytes(flat(8, 3).encode_to_vec().into(), &[0..4]),
        Err(Error::Corrupt { .. })
    ));
    assert!(matches!(
        Node::from_bytes(bytes::Bytes::from_static(&[0xff, 0xff, 0xff]), &[]),
        Err(Error::Corrupt { .. })
    ));
}

#[test]
fn truncated_pages_are_corrupt() {
    let (enc, mut buffers) = string_page();
    buffers[1].truncate(2);
    corrupt_mentioning(decode(&enc, &buffers, &[0..4], &DataType::Utf8), "bytes");
    let ints = no_null(flat(64, 0));
    corrupt_mentioning(
        decode(&ints, &[vec![0; 20]], &[0..3], &DataType::Int64),
        "buffer",
    );
}

/// A real 2.0 file with its data region overwritten: every read is an error or the right
/// number of rows, never a panic.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_garbled_data_region_gives_errors_not_panics() {
    for rel in ["v2_0/strings.lance", "nested/v2_0/nested.lance"] {
        let mut bytes = std::fs::read(support::fixtures_dir().join(rel)).expect("bytes");
        let (source, path) = support::memory_source("x.lance", bytes.clone()).await;
        let reader = support::open(source, path).await.expect("open");
        let data_end = reader.metadata().metadata_start as usize;
        for b in bytes[..data_end].iter_mut() {
            *b = 0xff;
        }
        let (source, path) = support::memory_source("y.lance", bytes).await;
        let reader = support::open(source, path).await.expect("open");
        let mut errors = 0;
        for field in 0..reader.schema().fields.len() {
            match reader
                .read_rows(
                    &[field],
                    &RowSelection::Rows(vec![0, 7, 100]),
                    &IoStats::new(),
                )
                .await
            {
                Ok(batch) => assert_eq!(batch.num_rows(), 3, "{rel} field {field}"),
                Err(Error::Corrupt { path, .. }) => {
                    assert!(!path.is_empty(), "{rel}: errors name the file");
                    errors += 1
                }
                Err(e) => panic!("{rel} field {field}: {e}"),
            }
        }
        assert!(errors > 0, "{rel}: garbled offsets are noticed");
    }
}

/// Rows 5 and 500 of the 2.0 string column `s_short` (indices buffer 0..16000, bytes
/// 16000..): wave 1 reads the 16 offset bytes around each row, wave 2 exactly the rows'
/// bytes.
#[test]
fn a_string_take_reads_only_its_offsets_then_its_bytes() {
    let file = std::fs::read(support::fixtures_dir().join("v2_0/strings.lance")).expect("bytes");
    let tail = bytes::Bytes::copy_from_slice(&file);
    let crate::lance::file::MetadataParse::Parsed(metadata) =
        crate::lance::file::parse_file_metadata(&tail, 0, file.len() as u64).expect("parse")
    else {
        panic!("whole file parses");
    };
    let page = &metadata.columns[0].pages[0];
    let crate::lance::page::PageLayout::V2_0(node) = &page.layout else {
        panic!("2.0 page");
    };
    let rows = [5..6, 500..501];
    let (array, waves) = decode_page_waves(node, &rows, &DataType::Utf8, &file).expect("take");
    assert_eq!(array.len(), 2);
    assert_eq!(waves.len(), 2, "offsets, then bytes: {waves:?}");
    assert_eq!(waves[0], vec![32..48, 3992..4008]);
    let values = array
        .as_any()
        .downcast_ref::<StringArray>()
        .expect("strings");
    let lengths = [values.value(0).len() as u64, values.value(1).len() as u64];
    let spans: Vec<u64> = waves[1].iter().map(|r| r.end - r.start).collect();
    assert_eq!(
        spans,
        lengths
            .iter()
            .copied()
            .filter(|l| *l > 0)
            .collect::<Vec<_>>()
    );
    assert!(waves[1].iter().all(|r| r.start >= 16000 && r.end <= 20014));
    // The oracle agrees.
    let oracle = support::read_ipc(&support::fixtures_dir().join("oracle/strings.arrow"));
    let column = oracle[0].column_by_name("s_short").expect("s_short");
    let column = column
        .as_any()
        .downcast_ref::<StringArray>()
        .expect("strings");
    assert_eq!(values.value(0), column.value(5));
    assert_eq!(values.value(1), column.value(500));
}

/// Through the reader (metadata cached, no suffix bytes): a two-row take of a string
/// column is two waves and a few hundred bytes; of an int64 column one wave of 16 bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reader_takes_of_2_0_columns_fetch_only_their_rows() {
    let rel = "v2_0/strings.lance";
    let size = std::fs::metadata(support::fixtures_dir().join(rel))
        .expect("size")
        .len();
    let (recording, path) = support::recording(Backend::Local, rel).await;
    let reader = support::open_with_cached_metadata(&recording, path, size).await;
    let stats = IoStats::new();
    let batch = reader
        .read_rows(&[0], &RowSelection::Rows(vec![5, 500]), &stats)
        .await
        .expect("take");
    assert_eq!(batch.num_rows(), 2);
    let s = stats.snapshot();
    assert_eq!(s.round_trips, 2, "{s:?}");
    assert!(s.bytes <= 32 + 64, "{s:?}");

    let rel = "v2_0/ints.lance";
    let size = std::fs::metadata(support::fixtures_dir().join(rel))
        .expect("size")
        .len();
    let (recording, path) = support::recording(Backend::Local, rel).await;
    let reader = support::open_with_cached_metadata(&recording, path, size).await;
    let stats = IoStats::new();
    let field = reader.field_indices(&["i64_full"]).expect("field")[0];
    reader
        .read_rows(&[field], &RowSelection::Rows(vec![3, 1200]), &stats)
        .await
        .expect("take");
    let s = stats.snapshot();
    assert_eq!((s.round_trips, s.bytes), (1, 16), "{s:?}");
}

/// Raw-page inputs of the `v2_0_page` fuzz target (see `src/fuzzing/v2_0.rs`).
pub(super) fn raw_page_seeds() -> Vec<(&'static str, Vec<u8>)> {
    let (strings, string_buffers) = string_page();
    let pages: Vec<(pb::ArrayEncoding, u8, Vec<Vec<u8>>)> = vec![
        (strings, 2, string_buffers),
        (
            some_null(flat(1, 0), flat(32, 1)),
            0,
            vec![vec![0b1011_0110, 0xff], (0..64).collect()],
        ),
        (
            dictionary(3),
            2,
            vec![vec![1, 2, 0, 3], u64s(&[1, 3, 103]), b"xyy".to_vec()],
        ),
        (no_null(flat(64, 0)), 1, vec![(0..128).collect()]),
    ];
    pages
        .into_iter()
        .map(|(encoding, type_selector, buffers)| {
            let encoding = encoding.encode_to_vec();
            let mut input = vec![1u8];
            input.extend((encoding.len() as u16).to_le_bytes());
            input.extend(&encoding);
            input.push(type_selector);
            input.push(buffers.len() as u8);
            for b in &buffers {
                input.extend((b.len() as u16).to_le_bytes());
            }
            input.push(2);
            input.extend([0u8, 0, 1, 1, 0, 1]);
            for b in &buffers {
                input.extend(b);
            }
            ("v2_0_page", input)
        })
        .collect()
}
