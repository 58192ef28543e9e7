//! Zone map tests: corrupt zone maps, truth-value possibilities of zones.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, UInt32Array, UInt64Array};

use super::*;

fn batch(starts: &[u64], lengths: &[u64], fragments: &[u64]) -> RecordBatch {
    let n = starts.len();
    let cols: Vec<(&str, ArrayRef)> = vec![
        ("min", Arc::new(Int64Array::from(vec![1i64; n]))),
        ("max", Arc::new(Int64Array::from(vec![5i64; n]))),
        ("null_count", Arc::new(UInt32Array::from(vec![0u32; n]))),
        ("nan_count", Arc::new(UInt32Array::from(vec![0u32; n]))),
        (
            "fragment_id",
            Arc::new(UInt64Array::from(fragments.to_vec())),
        ),
        ("zone_start", Arc::new(UInt64Array::from(starts.to_vec()))),
        ("zone_length", Arc::new(UInt64Array::from(lengths.to_vec()))),
    ];
    RecordBatch::try_from_iter(cols).unwrap()
}

fn corrupt(b: &RecordBatch) -> String {
    match ZoneMap::decode(b, None) {
        Err(crate::error::Error::Corrupt { what, .. }) => what,
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

#[test]
fn bad_zone_maps_are_corrupt() {
    assert!(ZoneMap::decode(&batch(&[0, 50], &[50, 50], &[0, 0]), None).is_ok());
    assert!(corrupt(&batch(&[0, 40], &[50, 50], &[0, 0])).contains("overlaps"));
    assert!(corrupt(&batch(&[50, 0], &[50, 50], &[0, 0])).contains("precedes"));
    assert!(corrupt(&batch(&[0], &[0], &[0])).contains("empty"));
    assert!(corrupt(&batch(&[u64::MAX], &[2], &[0])).contains("32-bit"));
    assert!(corrupt(&batch(&[0], &[5], &[1 << 40])).contains("exceeds u32"));
    let map = ZoneMap::decode(&batch(&[0, 50], &[50, 60], &[0, 0]), None).unwrap();
    let e = map.check_fragments(&|_| Some(100)).unwrap_err();
    assert!(
        e.to_string().contains("leaves fragment 0 of 100 rows"),
        "{e}"
    );
    assert!(map.check_fragments(&|_| None).is_ok());
    // Counts beyond the zone.
    let mut cols: Vec<ArrayRef> = batch(&[0], &[5], &[0]).columns().to_vec();
    cols[2] = Arc::new(UInt32Array::from(vec![9u32]));
    let b = RecordBatch::try_new(batch(&[0], &[5], &[0]).schema(), cols).unwrap();
    assert!(corrupt(&b).contains("nulls"));
    // A wrongly typed column.
    let mut cols: Vec<ArrayRef> = batch(&[0], &[5], &[0]).columns().to_vec();
    cols[6] = Arc::new(Int64Array::from(vec![5i64]));
    let schema = arrow_schema::Schema::new(
        batch(&[0], &[5], &[0])
            .schema()
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| {
                if i == 6 {
                    arrow_schema::Field::new("zone_length", arrow_schema::DataType::Int64, false)
                } else {
                    f.as_ref().clone()
                }
            })
            .collect::<Vec<_>>(),
    );
    let b = RecordBatch::try_new(Arc::new(schema), cols).unwrap();
    assert!(corrupt(&b).contains("not UInt64"));
}
