//! Unit tests of the HNSW decoders and search: malformed metadata and graph rows are
//! `Corrupt`, never a panic; the traversal finds what a scan finds on a small graph, and
//! `ef` bounds it.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::{ListBuilder, UInt32Builder};
use arrow_array::{RecordBatch, UInt32Array};

use super::effective_ef;
use super::graph::{decode_graph, decode_hnsw_meta, HnswMeta, HNSW_METADATA_KEY};
use super::traverse::{search, HnswQuery};
use crate::Error;

fn corrupt<T: std::fmt::Debug>(r: crate::Result<T>) -> bool {
    matches!(r, Err(Error::Corrupt { .. }))
}

fn metadata(parts: &[&str]) -> HashMap<String, String> {
    let inner: Vec<String> = parts.iter().map(|s| s.to_string()).collect();
    HashMap::from([(
        HNSW_METADATA_KEY.to_string(),
        serde_json::to_string(&inner).unwrap(),
    )])
}

#[test]
fn hnsw_metadata_must_add_up_to_the_partition_rows() {
    let good = r#"{"entry_point":1,"params":{"max_level":7,"m":8},"level_offsets":[0,4,6,6]}"#;
    let meta = decode_hnsw_meta(&metadata(&[good]), &[0..6]).unwrap();
    assert_eq!(meta[0].entry_point, 1);
    assert_eq!(meta[0].rows(), 6);
    for (json, rows) in [
        (good, 0..7),                                             // rows disagree
        (r#"{"entry_point":0,"level_offsets":[1,4,6]}"#, 0..6),   // not from 0
        (r#"{"entry_point":0,"level_offsets":[0,5,4,6]}"#, 0..6), // decreasing
        (r#"{"entry_point":0,"level_offsets":[0]}"#, 0..6),       // no level
        (r#"{"entry_point":-1,"level_offsets":[0,6]}"#, 0..6),    // bad JSON
        ("not json", 0..6),
    ] {
        assert!(
            corrupt(decode_hnsw_meta(&metadata(&[json]), &[rows])),
            "{json}"
        );
    }
    // One document per partition, and the key must be there.
    assert!(corrupt(decode_hnsw_meta(&metadata(&[good, good]), &[0..6])));
    assert!(corrupt(decode_hnsw_meta(&HashMap::new(), &[0..6])));
}

/// A graph batch: `(node id, neighbours)` rows, level 0 first.
fn batch(rows: &[(u32, &[u32])]) -> RecordBatch {
    let ids = UInt32Array::from(rows.iter().map(|r| r.0).collect::<Vec<_>>());
    let mut lists = ListBuilder::new(UInt32Builder::new());
    for (_, n) in rows {
        lists.values().append_slice(n);
        lists.append(true);
    }
    RecordBatch::try_from_iter(vec![
        ("__vector_id", Arc::new(ids) as _),
        ("__neighbors", Arc::new(lists.finish()) as _),
    ])
    .unwrap()
}

fn meta(entry_point: u32, level_offsets: &[u64]) -> HnswMeta {
    HnswMeta {
        entry_point,
        level_offsets: level_offsets.to_vec(),
    }
}

/// A line 0 - 1 - 2 - 3 - 4 - 5 on level 0, nodes 0 and 5 on level 1.
fn line() -> (RecordBatch, HnswMeta) {
    let rows: Vec<(u32, &[u32])> = vec![
        (0, &[1]),
        (1, &[0, 2]),
        (2, &[1, 3]),
        (3, &[2, 4]),
        (4, &[3, 5]),
        (5, &[4]),
        (0, &[5]),
        (5, &[0]),
    ];
    (batch(&rows), meta(0, &[0, 6, 8]))
}

#[test]
fn graph_rows_are_validated() {
    let (b, m) = line();
    let g = decode_graph(&b, &m, 6).unwrap();
    assert_eq!((g.nodes(), g.max_level(), g.entry_point()), (6, 2, 0));
    assert_eq!(g.neighbors(1, 5), &[0]);
    assert_eq!(g.neighbors(1, 3), &[] as &[u32]);
    assert_eq!(g.neighbors(0, 3), &[2, 4]);
    // More nodes than stored vectors; rows disagreeing with the metadata.
    assert!(corrupt(decode_graph(&b, &m, 5)));
    assert!(corrupt(decode_graph(&b, &meta(0, &[0, 6, 9]), 6)));
    // A neighbour out of range, a level-0 id that is not its row, an upper-level node the
    // graph lacks, an entry point past the nodes.
    let bad: [(Vec<(u32, &[u32])>, HnswMeta); 4] = [
        (vec![(0, &[1]), (1, &[2])], meta(0, &[0, 2])),
        (vec![(0, &[1]), (0, &[0])], meta(0, &[0, 2])),
        (vec![(0, &[1]), (1, &[0]), (7, &[])], meta(0, &[0, 2, 3])),
        (vec![(0, &[1]), (1, &[0])], meta(2, &[0, 2])),
    ];
    for (rows, m) in bad {
        let err = decode_graph(&batch(&rows), &m, 10);
        assert!(corrupt(err), "{rows:?} {m:?}");
    }
}

/// Distances of node `i`: `|i - target|`.
fn towards(target: f32) -> impl FnMut(u32) -> f32 {
    move |i| (i as f32 - target).abs()
}

#[test]
fn the_search_descends_then_walks_the_beam() {
    let (b, m) = line();
    let g = decode_graph(&b, &m, 6).unwrap();
    let q = HnswQuery {
        k: 2,
        ef: 3,
        range: (None, None),
    };
    let found = search(&g, &q, None, &mut towards(4.2));
    let ids: Vec<u32> = found.iter().map(|n| n.id).collect();
    assert_eq!(ids, vec![4, 5]);
    // A mask keeps rows out without stopping the walk through them.
    let mask = [true, true, true, true, false, true];
    let found = search(&g, &q, Some(&mask), &mut towards(4.2));
    assert_eq!(found.iter().map(|n| n.id).collect::<Vec<_>>(), vec![5, 3]);
    // A distance range drops rows outside it.
    let ranged = HnswQuery {
        range: (Some(0.5), Some(1.0)),
        ..q
    };
    let found = search(&g, &ranged, None, &mut towards(4.2));
    assert_eq!(found.iter().map(|n| n.id).collect::<Vec<_>>(), vec![5]);
}

#[test]
fn ef_bounds_the_beam() {
    // A line 0 - 1 - 2 - 3 - 4 - 5 with a local minimum at 1 and the nearest node at 5: a
    // beam of 1 stops at 1, a beam of 4 climbs over 2 and 3 to reach 5.
    let rows: Vec<(u32, &[u32])> = vec![
        (0, &[1]),
        (1, &[0, 2]),
        (2, &[1, 3]),
        (3, &[2, 4]),
        (4, &[3, 5]),
        (5, &[4]),
    ];
    let g = decode_graph(&batch(&rows), &meta(0, &[0, 6]), 6).unwrap();
    let dist = [5.0f32, 3.0, 4.0, 6.0, 1.0, 0.0];
    let best = |ef: usize| {
        let q = HnswQuery {
            k: 1,
            ef,
            range: (None, None),
        };
        search(&g, &q, None, &mut |i| dist[i as usize])[0].id
    };
    assert_eq!(best(1), 1);
    assert_eq!(best(3), 1);
    assert_eq!(best(4), 5);
    assert_eq!(effective_ef(None, 10).unwrap(), 15);
    assert_eq!(effective_ef(Some(10), 10).unwrap(), 10);
    assert!(matches!(
        effective_ef(Some(5), 10),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn a_sparse_mask_scans_the_admitted_rows() {
    // Fewer than a tenth admitted: an exact scan, even of rows the graph cannot reach.
    let mut rows: Vec<(u32, Vec<u32>)> = (0..30).map(|i| (i, vec![])).collect();
    rows[0].1 = vec![1];
    rows[1].1 = vec![0];
    let refs: Vec<(u32, &[u32])> = rows.iter().map(|(i, n)| (*i, n.as_slice())).collect();
    let g = decode_graph(&batch(&refs), &meta(0, &[0, 30]), 30).unwrap();
    let mut mask = vec![false; 30];
    mask[25] = true;
    mask[7] = true;
    let q = HnswQuery {
        k: 5,
        ef: 5,
        range: (None, None),
    };
    let found = search(&g, &q, Some(&mask), &mut towards(20.0));
    assert_eq!(found.iter().map(|n| n.id).collect::<Vec<_>>(), vec![25, 7]);
    // Without the mask the walk cannot leave nodes 0 and 1.
    let found = search(&g, &q, None, &mut towards(20.0));
    assert_eq!(found.iter().map(|n| n.id).collect::<Vec<_>>(), vec![1, 0]);
}
