use arrow_array::{Array, FixedSizeBinaryArray, LargeBinaryArray};

use super::descriptor::{v2_row_bytes, BlobLocation};
use super::*;
use crate::error::Error;

fn v1_raw(rows: &[Option<(u64, u64)>]) -> FixedSizeBinaryArray {
    let values: Vec<Option<Vec<u8>>> = rows
        .iter()
        .map(|r| {
            r.map(|(p, s)| {
                let mut v = p.to_le_bytes().to_vec();
                v.extend_from_slice(&s.to_le_bytes());
                v
            })
        })
        .collect();
    FixedSizeBinaryArray::try_from_sparse_iter_with_size(values.into_iter(), 16).unwrap()
}

#[test]
fn sidecar_names_are_the_ids_bits_least_significant_first() {
    assert_eq!(sidecar_name(1), format!("1{}.blob", "0".repeat(31)));
    assert_eq!(sidecar_name(2), format!("01{}.blob", "0".repeat(30)));
    assert_eq!(sidecar_name(3), format!("11{}.blob", "0".repeat(30)));
    assert_eq!(sidecar_dir("abc.lance"), "abc");
}

#[test]
fn v1_descriptors_and_their_nulls() {
    let raw = v1_raw(&[Some((0, 0)), Some((64, 10)), Some((1, 0)), None]);
    let with_rule = descriptors_from_raw(&raw, BlobFormat::V1, true).unwrap();
    assert_eq!(with_rule.data_type(), &BlobFormat::V1.descriptor_type());
    assert_eq!(
        (0..4).map(|i| with_rule.is_valid(i)).collect::<Vec<_>>(),
        [true, true, false, false]
    );
    let without = descriptors_from_raw(&raw, BlobFormat::V1, false).unwrap();
    assert!(without.is_valid(2));
    let locs = locations(without.as_ref(), BlobFormat::V1).unwrap();
    assert_eq!(
        locs,
        vec![
            Some(BlobLocation {
                source: BlobSource::DataFile,
                position: 0,
                size: 0
            }),
            Some(BlobLocation {
                source: BlobSource::DataFile,
                position: 64,
                size: 10
            }),
            None,
            None,
        ]
    );
}

#[test]
fn v2_descriptors_every_kind() {
    let rows: Vec<Option<Vec<u8>>> = vec![
        Some(v2_row_bytes(0, 128, 5, 0, "")),
        Some(v2_row_bytes(1, 3000, 7, 1, "")),
        Some(v2_row_bytes(2, 0, 9, 3, "")),
        Some(v2_row_bytes(3, 4, 2, 0, "s3://b/x.bin")),
        None,
    ];
    let raw = LargeBinaryArray::from(rows.iter().map(|r| r.as_deref()).collect::<Vec<_>>());
    let d = descriptors_from_raw(&raw, BlobFormat::V2, true).unwrap();
    let locs = locations(d.as_ref(), BlobFormat::V2).unwrap();
    let sidecar = |blob_id, dedicated| BlobSource::Sidecar { blob_id, dedicated };
    assert_eq!(locs[0].as_ref().unwrap().source, BlobSource::DataFile);
    assert_eq!(locs[1].as_ref().unwrap().source, sidecar(1, false));
    assert_eq!(locs[1].as_ref().unwrap().range().unwrap(), 3000..3007);
    assert_eq!(locs[2].as_ref().unwrap().source, sidecar(3, true));
    assert_eq!(
        locs[3].as_ref().unwrap().source,
        BlobSource::External {
            uri: "s3://b/x.bin".into()
        }
    );
    assert_eq!(locs[4], None);
}

#[test]
fn malformed_v2_rows_are_corrupt() {
    let mut long_uri = v2_row_bytes(3, 0, 1, 0, "abc");
    long_uri.pop();
    let mut bad_utf8 = v2_row_bytes(3, 0, 1, 0, "a");
    *bad_utf8.last_mut().unwrap() = 0xff;
    for row in [
        vec![0u8; 24],
        long_uri,
        bad_utf8,
        v2_row_bytes(9, 0, 1, 0, ""),
    ] {
        let raw = LargeBinaryArray::from(vec![Some(row.as_slice())]);
        let err = descriptors_from_raw(&raw, BlobFormat::V2, true)
            .and_then(|d| locations(d.as_ref(), BlobFormat::V2).map(|_| ()))
            .unwrap_err();
        assert!(matches!(err, Error::Corrupt { .. }), "{err}");
    }
    let dedicated_offset =
        LargeBinaryArray::from(vec![Some(v2_row_bytes(2, 5, 1, 1, "").as_slice())]);
    let d = descriptors_from_raw(&dedicated_offset, BlobFormat::V2, true).unwrap();
    assert!(matches!(
        locations(d.as_ref(), BlobFormat::V2),
        Err(Error::Corrupt { .. })
    ));
    // A raw array of the wrong type is refused, not misread.
    let wrong = descriptors_from_raw(&raw_v1_as_v2(), BlobFormat::V2, true);
    assert!(matches!(wrong, Err(Error::Corrupt { .. })));
}

fn raw_v1_as_v2() -> FixedSizeBinaryArray {
    v1_raw(&[Some((1, 2))])
}

#[test]
fn locations_past_their_object_are_corrupt_naming_it() {
    let loc = BlobLocation {
        source: BlobSource::DataFile,
        position: 90,
        size: 20,
    };
    loc.check_inside("data/a.lance", 110).unwrap();
    let err = loc.check_inside("data/a.lance", 100).unwrap_err();
    match err {
        Error::Corrupt { path, range, .. } => {
            assert_eq!(path, "data/a.lance");
            assert_eq!(range, Some(90..110));
        }
        other => panic!("{other}"),
    }
    let overflow = BlobLocation {
        source: BlobSource::DataFile,
        position: u64::MAX,
        size: 2,
    };
    assert!(matches!(
        overflow.check_inside("x", u64::MAX),
        Err(Error::Corrupt { .. })
    ));
}
