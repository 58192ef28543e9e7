//! Bloom-filter tests: pylance's answers on the fixture, hash compatibility, bad filters.

use std::sync::Arc;

use arrow_array::{ArrayRef, BinaryArray, BooleanArray, RecordBatch, UInt64Array};
use arrow_schema::DataType;

use super::exec::load_bloom;
use super::*;
use crate::index::bitmap::tests::fixture;
use crate::io::IoStats;

#[tokio::test]
async fn every_stored_value_is_in_its_zone_filter() {
    // Hash compatibility: each existing value's zone must pass its filter.
    let dataset = fixture::open().await;
    let segment = fixture::segment(&dataset, "f_i");
    let (_, index) = load_bloom(&dataset, &segment, &IoStats::new())
        .await
        .unwrap();
    let frag = &dataset.manifest().fragments[0];
    let field = segment.fields[0];
    let file = frag
        .files
        .iter()
        .find(|f| f.fields.contains(&field))
        .unwrap();
    let reader = crate::lance::reader::LanceFileReader::open(
        dataset.store().fetcher.clone(),
        dataset.data_file_path(file),
        file.size_bytes,
        Arc::clone(&dataset.session().reader_caches),
        &IoStats::new(),
    )
    .await
    .unwrap();
    let col = reader
        .schema()
        .fields
        .iter()
        .position(|f| f.id == field)
        .unwrap();
    let batch = reader
        .read_rows(
            &[col],
            &crate::lance::reader::RowSelection::Range(0..400),
            &IoStats::new(),
        )
        .await
        .unwrap();
    let keys = crate::index::key::KeyColumn::new(batch.column(0)).unwrap();
    let mut hits = 0;
    for row in 0..keys.len() {
        let Some(k) = keys.get(row) else { continue };
        let zone = index
            .zones
            .iter()
            .find(|z| z.bound.fragment == 0 && z.bound.rows().contains(&(row as u64)))
            .unwrap();
        let bytes = value_bytes(&k.to_key(), &DataType::Int32).unwrap();
        assert!(zone.filter.check_hash(sbbf::hash(&bytes)), "row {row}");
        hits += 1;
    }
    assert!(hits > 300);
}

fn batch(sizes: &[usize]) -> RecordBatch {
    let n = sizes.len();
    let data: Vec<Vec<u8>> = sizes.iter().map(|s| vec![0u8; *s]).collect();
    let cols: Vec<(&str, ArrayRef)> = vec![
        ("fragment_id", Arc::new(UInt64Array::from(vec![0u64; n]))),
        (
            "zone_start",
            Arc::new(UInt64Array::from(
                (0..n as u64).map(|i| i * 10).collect::<Vec<_>>(),
            )),
        ),
        ("zone_length", Arc::new(UInt64Array::from(vec![10u64; n]))),
        ("has_null", Arc::new(BooleanArray::from(vec![false; n]))),
        (
            "bloom_filter_data",
            Arc::new(BinaryArray::from_iter_values(
                data.iter().map(|d| d.as_slice()),
            )),
        ),
    ];
    RecordBatch::try_from_iter(cols).unwrap()
}

#[test]
fn wrong_sized_filters_are_corrupt() {
    assert!(BloomIndex::decode(&batch(&[64, 64]), None).is_ok());
    for sizes in [&[33usize][..], &[0], &[64, 32]] {
        match BloomIndex::decode(&batch(sizes), None) {
            Err(crate::error::Error::Corrupt { what, .. }) => {
                assert!(what.contains("bytes"), "{what}")
            }
            other => panic!("{sizes:?}: {other:?}"),
        }
    }
}

#[test]
fn inserted_hashes_are_found() {
    let mut f = sbbf::Sbbf::new(&[0u8; 256]).unwrap();
    for v in 0..20i32 {
        f.insert_hash(sbbf::hash(&v.to_le_bytes()));
    }
    for v in 0..20i32 {
        assert!(f.check_hash(sbbf::hash(&v.to_le_bytes())));
    }
    let misses = (1000..2000i32)
        .filter(|v| f.check_hash(sbbf::hash(&v.to_le_bytes())))
        .count();
    assert!(misses < 200, "{misses}");
}
