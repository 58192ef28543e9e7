//! Fuzz body `vector_index`: the vector index decoders on arbitrary bytes — the metadata
//! of v3 files (`lance:index`, the IVF message, partition row ranges, `storage_metadata`
//! of every quantizer, the PQ codebook), legacy v1 `index.idx` files (footer, `Index`
//! message, partition layout, partition bytes) and partition decoding and scoring (PQ,
//! flat, SQ and RaBitQ codes built from the bytes).
//!
//! Input: byte 0 picks the mode (`% 5`), the rest is the mode's input:
//! 0. a whole legacy `index.idx`; a decoded index's partitions are then decoded from the
//!    same bytes and scored;
//! 1. `[u32 file rows][IVF message]`: partition ranges and the `index.idx` header;
//! 2. `[code column selector][u8 code width][u16 JSON length][storage JSON][codebook]`;
//! 3. `[u8 rows][u8 bits][u16 code dim / 8][signs + codes + factors...]`: RaBitQ
//!    metadata, codes and the scan;
//! 4. `[u8 rows][u8 sub-vectors][u8 dim][codes + row ids + codebook]`: a legacy partition
//!    and PQ scoring.
//!
//! Successful decodes are checked: partition ranges adjacent and inside the file, one
//! distance per row.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, FixedSizeListArray, Float32Array, RecordBatch, UInt64Array, UInt8Array,
};
use arrow_schema::{DataType, Field};

use super::Input;
use crate::index::vector::format::{
    decode_index_header, decode_ivf, decode_storage_spec, partition_ranges, quantizer_of, Metric,
    ProductQuantizer, Quantizer, TensorProto,
};
use crate::index::vector::{legacy, partition, rq};

/// Decode `data` as described in the module docs; never panics.
pub fn vector_index(data: &[u8]) {
    let mut input = Input(data);
    match input.byte() % 5 {
        0 => legacy_file(input.0),
        1 => ivf(&mut input),
        2 => storage(&mut input),
        3 => rabit(&mut input),
        _ => legacy_partition(&mut input),
    }
}

fn legacy_file(bytes: &[u8]) {
    let size = bytes.len() as u64;
    let Ok(legacy::Footer::Legacy { metadata_pos }) = legacy::footer(bytes, size) else {
        return;
    };
    let start = metadata_pos as usize + 4;
    let Some(msg) = bytes.get(start..bytes.len() - 16) else {
        return;
    };
    let Ok(index) = legacy::decode_index(msg, metadata_pos) else {
        return;
    };
    let quantizer = Quantizer::Pq(index.pq.clone());
    let query = vec![0.5f32; index.pq.dim];
    for (p, (range, rows)) in index.byte_ranges.iter().zip(&index.rows).enumerate() {
        assert!(range.end <= metadata_pos);
        let part_bytes = &bytes[range.start as usize..range.end as usize];
        let n = (rows.end - rows.start) as usize;
        if let Ok(part) = legacy::decode_partition(part_bytes, n, &index.pq) {
            assert_eq!(part.row_ids.len(), n);
            let centroid = index.header.centroids.row(p);
            let d = partition::score(
                &part,
                &quantizer,
                index.header.metric,
                &query,
                centroid,
                false,
            );
            assert!(d.is_ok_and(|d| d.len() == n));
        }
    }
}

fn ivf(input: &mut Input<'_>) {
    let rows = u64::from(input.u32());
    let bytes = input.0;
    if let Ok(ivf) = decode_ivf(bytes) {
        if let Ok(ranges) = partition_ranges(&ivf, rows) {
            assert!(ranges.windows(2).all(|w| w[0].end == w[1].start));
            assert_eq!(ranges.last().map(|r| r.end), Some(rows));
        }
    }
    let mut metadata = HashMap::new();
    metadata.insert(
        "lance:index".to_string(),
        r#"{"type":"IVF_PQ","distance_type":"l2"}"#.to_string(),
    );
    metadata.insert("lance:flat".to_string(), r#"["",""]"#.to_string());
    let _ = decode_index_header(&metadata, bytes);
}

fn storage(input: &mut Input<'_>) {
    let column =
        ["flat", "__pq_code", "__sq_code", rq::CODE_COLUMN, "other"][usize::from(input.byte()) % 5];
    let width = usize::from(input.byte());
    let len = usize::from(input.u16());
    let json = String::from_utf8_lossy(input.take(len)).into_owned();
    let mut metadata = HashMap::new();
    metadata.insert("storage_metadata".to_string(), json);
    if let Ok(spec) = decode_storage_spec(&metadata, column, width) {
        let _ = quantizer_of(&spec, Some(input.0));
        let _ = quantizer_of(&spec, None);
    }
}

fn list(values: Vec<u8>, width: usize) -> ArrayRef {
    let field = Arc::new(Field::new("item", DataType::UInt8, true));
    Arc::new(FixedSizeListArray::new(
        field,
        width as i32,
        Arc::new(UInt8Array::from(values)),
        None,
    ))
}

fn floats(input: &mut Input<'_>, n: usize) -> ArrayRef {
    Arc::new(Float32Array::from(
        (0..n).map(|_| input.f32()).collect::<Vec<_>>(),
    ))
}

fn rabit(input: &mut Input<'_>) {
    let rows = usize::from(input.byte());
    let bits = input.byte() % 10;
    let code_dim = 8 * usize::from(input.u16() % 64);
    let signs: Vec<u8> = input.take(4 * code_dim.div_ceil(8)).to_vec();
    let json = format!(
        r#"{{"fast_rotation_signs":{signs:?},"rotation_type":"fast","code_dim":{code_dim},"num_bits":{bits},"packed":true,"query_estimator":"raw_query"}}"#
    );
    let Ok(q) = rq::decode_metadata(&json, code_dim / 8) else {
        return;
    };
    let mut columns: Vec<ArrayRef> = vec![Arc::new(UInt64Array::from_iter_values(0..rows as u64))];
    let binary = input.take(rows * q.code_bytes()).to_vec();
    if binary.len() != rows * q.code_bytes() {
        return;
    }
    columns.push(list(binary, q.code_bytes()));
    for _ in 0..3 {
        columns.push(floats(input, rows));
    }
    if q.num_bits > 1 {
        let width = q.ex_code_bytes();
        let mut ex = input.take(rows * width).to_vec();
        ex.resize(rows * width, 0);
        columns.push(list(ex, width));
        columns.push(floats(input, rows));
        columns.push(floats(input, rows));
    }
    let Ok(batch) = RecordBatch::try_from_iter(
        columns
            .into_iter()
            .enumerate()
            .map(|(i, c)| (format!("c{i}"), c)),
    ) else {
        return;
    };
    let Ok(codes) = rq::decode_codes(&batch, &q, rows) else {
        return;
    };
    let query: Vec<f32> = (0..code_dim).map(|i| i as f32 - 1.5).collect();
    let prepared = rq::prepare(&q, &query);
    for metric in [Metric::L2, Metric::Dot] {
        let terms = rq::partition_terms(&q, &prepared, metric, &query, &query);
        let mut top = rq::TopK::new(3);
        let d = rq::score(&codes, &q, &prepared, terms, (None, None), &mut top, |i| {
            i % 2 == 0
        });
        assert_eq!(d.len(), rows);
    }
}

fn legacy_partition(input: &mut Input<'_>) {
    let rows = usize::from(input.byte());
    let m = usize::from(input.byte() % 9).max(1);
    let dim = m * usize::from(input.byte() % 5).max(1);
    let bytes = input.take(rows * (m + 8)).to_vec();
    let pq = ProductQuantizer {
        dim,
        num_sub_vectors: m,
        num_bits: 8,
        transposed: false,
        codebook: (0..256 * dim).map(|i| (i % 17) as f32).collect(),
    };
    let _ = TensorProto::default();
    if let Ok(part) = legacy::decode_partition(&bytes, rows, &pq) {
        let q = Quantizer::Pq(pq);
        let query = vec![1.0f32; dim];
        let d = partition::score(&part, &q, Metric::L2, &query, &query, false);
        assert!(d.is_ok_and(|d| d.len() == rows));
    }
}
