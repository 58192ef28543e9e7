//! Unit tests of the pure decoders: malformed metadata, IVF messages and codebooks are
//! `Corrupt`, never a panic; distances as lance computes them.

use std::collections::HashMap;

use prost::Message;

use super::distance::sq_query_codes;
use super::format::*;

fn ivf(lengths: &[u32], offsets: &[u64]) -> IvfProto {
    IvfProto {
        lengths: lengths.to_vec(),
        offsets: offsets.to_vec(),
        ..Default::default()
    }
}

#[test]
fn partition_ranges_are_checked_against_the_file() {
    assert_eq!(
        partition_ranges(&ivf(&[2, 3], &[]), 5).unwrap(),
        vec![0..2, 2..5]
    );
    assert_eq!(
        partition_ranges(&ivf(&[2, 3], &[0, 2]), 5).unwrap(),
        vec![0..2, 2..5]
    );
    // Past the end, gaps, too few rows, mismatched offsets, no partitions.
    for (lengths, offsets, rows) in [
        (vec![2, 4], vec![], 5),
        (vec![2, 3], vec![0, 3], 6),
        (vec![2, 2], vec![], 5),
        (vec![2, 3], vec![0], 5),
        (vec![], vec![], 0),
        (vec![u32::MAX, u32::MAX], vec![], 10),
    ] {
        let err = partition_ranges(&ivf(&lengths, &offsets), rows).unwrap_err();
        assert!(matches!(err, crate::Error::Corrupt { .. }), "{err}");
    }
}

fn tensor(data_type: i32, shape: &[u32], bytes: usize) -> TensorProto {
    TensorProto {
        data_type,
        shape: shape.to_vec(),
        data: vec![0; bytes],
    }
}

#[test]
fn tensors_of_the_wrong_size_or_type_are_corrupt() {
    assert!(decode_matrix(&tensor(2, &[4, 2], 32), "t").is_ok());
    assert!(decode_matrix(&tensor(1, &[4, 2], 16), "t").is_ok());
    for t in [
        tensor(2, &[4, 2], 31),
        tensor(2, &[4], 16),
        tensor(5, &[4, 2], 16),
        tensor(2, &[u32::MAX, u32::MAX], 8),
        tensor(2, &[1, 0], 0),
    ] {
        assert!(
            matches!(decode_matrix(&t, "t"), Err(crate::Error::Corrupt { .. })),
            "{t:?}"
        );
    }
}

fn pq_metadata(nbits: u32, m: usize, dim: usize) -> HashMap<String, String> {
    let inner = format!(
        r#"{{"codebook_position":2,"nbits":{nbits},"num_sub_vectors":{m},"dimension":{dim},"codebook_tensor":[],"transposed":true}}"#
    );
    HashMap::from([(
        STORAGE_METADATA_KEY.to_string(),
        serde_json::to_string(&vec![inner]).unwrap(),
    )])
}

#[test]
fn storage_metadata_and_codebooks_are_validated() {
    let spec = decode_storage_spec(&pq_metadata(8, 4, 16), "__pq_code", 4).unwrap();
    // The right codebook: [256, 16] f32.
    let good = tensor(2, &[256, 16], 256 * 16 * 4).encode_to_vec();
    assert!(quantizer_of(&spec, Some(&good)).is_ok());
    // A codebook of the wrong size, or not a tensor.
    let small = tensor(2, &[16, 16], 16 * 16 * 4).encode_to_vec();
    assert!(matches!(
        quantizer_of(&spec, Some(&small)),
        Err(crate::Error::Corrupt { .. })
    ));
    assert!(quantizer_of(&spec, Some(&[0xff, 0xff, 0xff])).is_err());
    // Code width disagreeing with the metadata; sub-vectors not dividing the dimension;
    // 4-bit codes packed two per byte.
    assert!(decode_storage_spec(&pq_metadata(8, 4, 16), "__pq_code", 5).is_err());
    assert!(decode_storage_spec(&pq_metadata(8, 5, 16), "__pq_code", 5).is_err());
    assert!(decode_storage_spec(&pq_metadata(4, 4, 16), "__pq_code", 2).is_ok());
    assert!(decode_storage_spec(&pq_metadata(7, 4, 16), "__pq_code", 4).is_err());
    // Not JSON, two entries.
    let bad = HashMap::from([(STORAGE_METADATA_KEY.to_string(), "{".to_string())]);
    assert!(decode_storage_spec(&bad, "flat", 16).is_err());
    let two = HashMap::from([(
        STORAGE_METADATA_KEY.to_string(),
        r#"["{}","{}"]"#.to_string(),
    )]);
    assert!(decode_storage_spec(&two, "flat", 16).is_err());
}

#[test]
fn index_headers_need_their_metadata_and_centroids() {
    let centroids = IvfProto {
        centroids_tensor: Some(tensor(2, &[2, 4], 32)),
        ..Default::default()
    }
    .encode_to_vec();
    let meta = |flat: &str| {
        HashMap::from([
            (
                INDEX_METADATA_KEY.to_string(),
                r#"{"type":"IVF_PQ","distance_type":"l2"}"#.to_string(),
            ),
            ("lance:flat".to_string(), flat.to_string()),
        ])
    };
    let header = decode_index_header(&meta(r#"["",""]"#), &centroids).unwrap();
    assert_eq!((header.metric, header.centroids.rows), (Metric::L2, 2));
    // Three partitions listed for two centroids; no centroids; garbage.
    assert!(decode_index_header(&meta(r#"["","",""]"#), &centroids).is_err());
    assert!(
        decode_index_header(&meta(r#"["",""]"#), &IvfProto::default().encode_to_vec()).is_err()
    );
    assert!(decode_index_header(&meta(r#"["",""]"#), &[0xff; 7]).is_err());
    assert!(decode_index_header(&HashMap::new(), &centroids).is_err());
}

#[test]
fn sq_query_codes_truncate_and_saturate_as_lance() {
    assert_eq!(
        sq_query_codes(&[-1.0, 0.0, 0.5, 1.0, 2.0], 0.0, 1.0),
        vec![0, 0, 127, 255, 255]
    );
    assert_eq!(sq_query_codes(&[3.0], 1.0, 1.0), vec![0]);
}

#[test]
fn blocked_pq_distances_equal_the_row_by_row_sums() {
    // Rows in and past whole blocks of 8, 8-bit (256 codewords) and 4-bit (16) tables.
    for (m, c) in [(3usize, 256usize), (5, 16)] {
        let table: Vec<f32> = (0..m * c)
            .map(|i| ((i * 37) % 101) as f32 * 0.37 - 9.1)
            .collect();
        for rows in [0usize, 1, 7, 8, 9, 23] {
            let codes: Vec<u8> = (0..rows * m).map(|i| ((i * 13 + 5) % c) as u8).collect();
            for base in [0.0f32, 1.0] {
                let naive: Vec<f32> = codes
                    .chunks_exact(m)
                    .map(|row| {
                        base + row
                            .iter()
                            .enumerate()
                            .map(|(j, &code)| table[j * c + usize::from(code)])
                            .sum::<f32>()
                    })
                    .collect();
                let blocked = super::distance::pq_distances(&codes, m, c, &table, base);
                // Bit for bit: each row still sums its sub-vectors in order.
                let bits = |v: &[f32]| v.iter().map(|d| d.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&blocked), bits(&naive), "m {m} c {c} rows {rows}");
            }
        }
    }
}

#[test]
fn top_selects_the_nearest_as_a_full_sort_does() {
    use super::search::{top, Hit};
    let hit = |row: u64, distance: f32| Hit { row, distance };
    let full = |mut hits: Vec<Hit>, n: usize| {
        hits.sort_by(|a, b| a.distance.total_cmp(&b.distance).then(a.row.cmp(&b.row)));
        hits.dedup_by_key(|h| h.row);
        hits.truncate(n);
        hits
    };
    // Many hits, ties on distance broken by row, and a row listed twice at the same
    // distance among the nearest (the selection must not return fewer than n).
    let mut hits: Vec<Hit> = (0..500u64)
        .map(|r| hit(r, ((r * 7919) % 211) as f32 / 4.0))
        .collect();
    for n in [1usize, 3, 10, 100, 499, 500, 600] {
        assert_eq!(top(hits.clone(), n), full(hits.clone(), n), "n {n}");
    }
    hits.push(hit(211, 0.0));
    hits.push(hit(0, 0.0));
    for n in [1usize, 2, 3, 10] {
        let got = top(hits.clone(), n);
        assert_eq!(got, full(hits.clone(), n), "n {n}");
        assert_eq!(got.len(), n);
    }
    assert!(top(hits, 0).is_empty());
}
