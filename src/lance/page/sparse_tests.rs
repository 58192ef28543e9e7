//! Unit tests of flat 2.3 sparse pages (hand-built pages).
#![allow(clippy::single_range_in_vec_init)]
use super::*;
use crate::lance::page::sparse_plan::SlotValidity;
use arrow_array::{Array, Int32Array};
use pb::compressive_encoding::Compression;

fn flat(bits: u64) -> CompressiveEncoding {
    CompressiveEncoding {
        compression: Some(Compression::Flat(pb::Flat {
            bits_per_value: bits,
            data: None,
        })),
    }
}

fn validity_layer(meaning: Meaning, positions: CompressiveEncoding, n: u64) -> pb::SparseStructure {
    pb::SparseStructure {
        layers: vec![pb::SparseStructuralLayer {
            layer: Some(Layer::Validity(pb::SparseValiditySet {
                meaning: meaning as i32,
                positions: Some(positions),
                num_positions: n,
            })),
        }],
    }
}

/// Read `rows` of a flat sparse page whose buffers live in `file`.
fn read(page: &SparsePage, file: &[u8], rows: &RowRanges) -> Vec<Option<i32>> {
    let slice = |r: &Range<u64>| Bytes::copy_from_slice(&file[r.start as usize..r.end as usize]);
    let init_bytes: Vec<Bytes> = page.init_ranges().iter().map(slice).collect();
    let init = page.decode_init(&init_bytes).unwrap();
    let plan = page.plan(&init, rows).unwrap();
    let bytes: Vec<Bytes> = plan.ranges.iter().map(slice).collect();
    let array = page
        .decode(&init, rows, &plan, &bytes, &DataType::Int32)
        .unwrap();
    array
        .as_any()
        .downcast_ref::<Int32Array>()
        .unwrap()
        .iter()
        .collect()
}

#[test]
fn chunked_values_cover_every_row_and_nulls_come_from_the_positions() {
    // Rows 0..5, nulls at 1 and 3 (Flat(64) positions payload); one chunk of 5 Flat(32)
    // values with placeholders at the null rows.
    let mut file = vec![0u8; 144];
    file[0..4].copy_from_slice(&(3u32 << 4).to_le_bytes()); // 32-byte chunk, last
    file[64..66].copy_from_slice(&0u16.to_le_bytes());
    file[66..70].copy_from_slice(&20u32.to_le_bytes());
    for (i, v) in [10i32, 0, 12, 0, 14].iter().enumerate() {
        file[72 + 4 * i..76 + 4 * i].copy_from_slice(&v.to_le_bytes());
    }
    file[128..136].copy_from_slice(&1u64.to_le_bytes());
    file[136..144].copy_from_slice(&3u64.to_le_bytes());
    let values = pb::value_plane::Codec::Chunked(pb::ChunkedValues {
        compression: Some(flat(32)),
        num_buffers: 1,
        ..Default::default()
    });
    let structure = validity_layer(Meaning::SparseValidityNullPositions, flat(64), 2);
    let page = SparsePage::new(structure, values, &[0..4, 64..96, 128..144])
        .unwrap()
        .with_rows(5)
        .unwrap();
    assert_eq!(
        read(&page, &file, &[0..5]),
        vec![Some(10), None, Some(12), None, Some(14)]
    );
    assert_eq!(read(&page, &file, &[1..2, 4..5]), vec![None, Some(14)]);
}

#[test]
fn zipped_values_hold_only_the_valid_rows() {
    // Rows 0..5, valid at 0, 2, 4 (Range positions, no payload); 3 zipped Flat(32) values.
    let mut file = vec![0u8; 12];
    for (i, v) in [7i32, 8, 9].iter().enumerate() {
        file[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
    }
    let values = pb::value_plane::Codec::Zipped(pb::ZippedValues {
        compression: Some(flat(32)),
        levels: None,
        addressing: Some(pb::zipped_values::Addressing::BitsPerValue(32)),
        num_items: 3,
        num_visible_items: 3,
    });
    let range = CompressiveEncoding {
        compression: Some(Compression::Range(pb::Range {
            uncompressed_bits_per_value: 64,
            start: 0,
            step: 2,
        })),
    };
    let structure = validity_layer(Meaning::SparseValidityValidPositions, range, 3);
    let page = SparsePage::new(structure, values, &[0..12])
        .unwrap()
        .with_rows(5)
        .unwrap();
    assert_eq!(
        read(&page, &file, &[0..5]),
        vec![Some(7), None, Some(8), None, Some(9)]
    );
    assert_eq!(read(&page, &file, &[3..5]), vec![None, Some(9)]);
    let plan = page.plan(&page.decode_init(&[]).unwrap(), &[3..5]).unwrap();
    assert_eq!(
        plan.ranges,
        vec![8..12],
        "only the one materialized value of rows 3..5"
    );
}

#[test]
fn flat_validity_maps_rows_to_materialized_ordinals() {
    let nulls = SlotValidity {
        null_positions: true,
        positions: vec![1, 4, 5],
    };
    assert_eq!(
        nulls.row_validity(&[0..3, 5..7]),
        vec![true, false, true, false, true]
    );
    assert_eq!(nulls.valid_ordinal_ranges(&[0..3, 5..7]), vec![0..2, 3..4]);
    let valid = SlotValidity {
        null_positions: false,
        positions: vec![2, 3],
    };
    assert_eq!(valid.row_validity(&[1..4]), vec![false, true, true]);
    assert_eq!(valid.valid_ordinal_ranges(&[0..2, 3..10]), vec![1..2]);
}
