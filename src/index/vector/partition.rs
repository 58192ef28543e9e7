//! One IVF partition of `auxiliary.idx`, decoded: its row ids and its codes (raw vectors,
//! PQ codes un-transposed and unpacked, SQ codes), validated against the quantizer; and
//! scoring a partition's rows against a query.

use arrow_array::cast::AsArray;
use arrow_array::types::{Float16Type, Float32Type, Float64Type, UInt64Type, UInt8Type};
use arrow_array::{Array, FixedSizeListArray, RecordBatch};
use arrow_schema::DataType;

use super::distance;
use super::format::{Metric, ProductQuantizer, Quantizer};
use crate::error::{Error, Result};

/// Row id column of `auxiliary.idx`.
pub(crate) const ROW_ID_COLUMN: &str = "_rowid";

/// A decoded partition.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Partition {
    /// Row id (a row address unless the dataset uses stable row ids) of each row.
    pub row_ids: Vec<u64>,
    /// The rows' codes.
    pub codes: Codes,
    /// The partition's HNSW graph (HNSW sub-indices only).
    pub graph: Option<std::sync::Arc<super::hnsw::graph::HnswGraph>>,
}

/// A partition's codes, row-major.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Codes {
    /// Raw vectors, `dim` values per row.
    Flat(Vec<f32>),
    /// One code per sub-vector per row (4-bit codes unpacked).
    Pq(Vec<u8>),
    /// One u8 per dimension per row.
    Sq(Vec<u8>),
    /// RaBitQ codes and factors.
    Rq(super::rq::RabitCodes),
}

impl Partition {
    /// Bytes held (for the cache weigher).
    pub(crate) fn size_bytes(&self) -> usize {
        let codes = match &self.codes {
            Codes::Flat(v) => v.len() * 4,
            Codes::Pq(v) | Codes::Sq(v) => v.len(),
            Codes::Rq(c) => c.size_bytes(),
        };
        let graph = self.graph.as_ref().map_or(0, |g| g.size_bytes());
        self.row_ids.len() * 8 + codes + graph + 64
    }
}

/// Decode rows `batch` (the partition's rows of `_rowid` and the quantizer column, in that
/// order; RaBitQ: its code and factor columns) with `quantizer`.
pub(crate) fn decode_partition(batch: &RecordBatch, quantizer: &Quantizer) -> Result<Partition> {
    if let Quantizer::Rq(rq) = quantizer {
        let row_ids = row_ids_of(batch)?;
        let codes = super::rq::decode_codes(batch, rq, row_ids.len())?;
        return Ok(Partition {
            row_ids,
            codes: Codes::Rq(codes),
            graph: None,
        });
    }
    if batch.num_columns() != 2 {
        return Err(Error::corrupt("partition batch without its two columns"));
    }
    let row_ids = batch
        .column(0)
        .as_primitive_opt::<UInt64Type>()
        .ok_or_else(|| {
            Error::corrupt(format!(
                "{ROW_ID_COLUMN:?} is {}, uint64 expected",
                batch.column(0).data_type()
            ))
        })?;
    if row_ids.null_count() > 0 {
        return Err(Error::corrupt(format!("{ROW_ID_COLUMN:?} holds nulls")));
    }
    let n = row_ids.len();
    let list = batch.column(1).as_fixed_size_list_opt().ok_or_else(|| {
        Error::corrupt(format!(
            "quantizer column is {}, a fixed-size list expected",
            batch.column(1).data_type()
        ))
    })?;
    let codes = match quantizer {
        Quantizer::Flat { dim } => Codes::Flat(float_values(list, *dim, n)?),
        Quantizer::Sq { dim, .. } => Codes::Sq(byte_values(list, *dim, n)?.to_vec()),
        Quantizer::Pq(pq) => Codes::Pq(pq_codes(pq, byte_values(list, pq.code_bytes(), n)?)),
        Quantizer::Rq(_) => unreachable_rq()?,
    };
    Ok(Partition {
        row_ids: row_ids.values().to_vec(),
        codes,
        graph: None,
    })
}

fn unreachable_rq() -> Result<Codes> {
    Err(Error::corrupt(
        "internal: RaBitQ partition decoded as a one-column quantizer",
    ))
}

/// The `_rowid` column (column 0) of a partition batch.
fn row_ids_of(batch: &RecordBatch) -> Result<Vec<u64>> {
    let ids = batch
        .columns()
        .first()
        .and_then(|c| c.as_primitive_opt::<UInt64Type>())
        .ok_or_else(|| Error::corrupt(format!("{ROW_ID_COLUMN:?} missing or not uint64")))?;
    if ids.null_count() > 0 {
        return Err(Error::corrupt(format!("{ROW_ID_COLUMN:?} holds nulls")));
    }
    Ok(ids.values().to_vec())
}

fn check_width(list: &FixedSizeListArray, width: usize, rows: usize) -> Result<()> {
    if list.value_length() as usize != width || list.len() != rows || list.null_count() > 0 {
        return Err(Error::corrupt(format!(
            "quantizer column: {} rows of {} values ({} nulls), {rows} rows of {width} expected",
            list.len(),
            list.value_length(),
            list.null_count()
        )));
    }
    Ok(())
}

fn byte_values(list: &FixedSizeListArray, width: usize, rows: usize) -> Result<&[u8]> {
    check_width(list, width, rows)?;
    let values = list
        .values()
        .as_primitive_opt::<UInt8Type>()
        .ok_or_else(|| Error::corrupt("quantizer codes are not uint8"))?;
    let start = list.offset() * width;
    values
        .values()
        .get(start..start + rows * width)
        .ok_or_else(|| Error::corrupt("quantizer codes shorter than their rows"))
}

fn float_values(list: &FixedSizeListArray, dim: usize, rows: usize) -> Result<Vec<f32>> {
    check_width(list, dim, rows)?;
    let start = list.offset() * dim;
    let range = start..start + rows * dim;
    let short = || Error::corrupt("flat vectors shorter than their rows");
    let values = list.values();
    Ok(match values.data_type() {
        DataType::Float32 => values
            .as_primitive::<Float32Type>()
            .values()
            .get(range)
            .ok_or_else(short)?
            .to_vec(),
        DataType::Float16 => values
            .as_primitive::<Float16Type>()
            .values()
            .get(range)
            .ok_or_else(short)?
            .iter()
            .map(|v| v.to_f32())
            .collect(),
        DataType::Float64 => values
            .as_primitive::<Float64Type>()
            .values()
            .get(range)
            .ok_or_else(short)?
            .iter()
            .map(|&v| v as f32)
            .collect(),
        // Binary vectors of a hamming index.
        DataType::UInt8 => values
            .as_primitive::<UInt8Type>()
            .values()
            .get(range)
            .ok_or_else(short)?
            .iter()
            .map(|&v| f32::from(v))
            .collect(),
        other => return Err(Error::unsupported(format!("flat vectors of {other}"))),
    })
}

/// Row-major, unpacked PQ codes from the stored bytes (`code_bytes` per row, transposed
/// per partition when the quantizer says so; 4-bit codes packed two per byte, low nibble
/// first).
fn pq_codes(pq: &ProductQuantizer, stored: &[u8]) -> Vec<u8> {
    let width = pq.code_bytes();
    let rows = stored.len().checked_div(width).unwrap_or(0);
    let byte_at = |i: usize, b: usize| {
        if pq.transposed {
            stored[b * rows + i]
        } else {
            stored[i * width + b]
        }
    };
    let m = pq.num_sub_vectors;
    let mut out = Vec::with_capacity(rows * m);
    for i in 0..rows {
        for j in 0..m {
            out.push(if pq.num_bits == 4 {
                let byte = byte_at(i, j / 2);
                if j % 2 == 0 {
                    byte & 0x0f
                } else {
                    byte >> 4
                }
            } else {
                byte_at(i, j)
            });
        }
    }
    out
}

/// The query as the index sees it: normalized for cosine.
pub(crate) fn index_query(metric: Metric, query: &[f32]) -> Vec<f32> {
    if metric == Metric::Cosine {
        distance::normalized(query)
    } else {
        query.to_vec()
    }
}

/// Approximate distances of every row of partition `part` to `query` (already the index
/// query: normalized for cosine), as lance's flat sub-index computes them.
pub(crate) fn score(
    part: &Partition,
    quantizer: &Quantizer,
    metric: Metric,
    query: &[f32],
    centroid: &[f32],
    half_precision: bool,
) -> Result<Vec<f32>> {
    let n = part.row_ids.len();
    Ok(match (&part.codes, quantizer) {
        (Codes::Flat(v), Quantizer::Flat { dim }) => v
            .chunks_exact(*dim)
            .map(|row| match metric {
                // Stored vectors of a cosine index are normalized, as the query is.
                Metric::Cosine => 1.0 - distance::dot(query, row),
                other => distance::exact(other, query, row),
            })
            .collect(),
        (Codes::Pq(codes), Quantizer::Pq(pq)) => {
            let residual: Vec<f32> = if metric == Metric::Dot {
                query.to_vec()
            } else {
                let round = |v: f32| {
                    if half_precision {
                        half::f16::from_f32(v).to_f32()
                    } else {
                        v
                    }
                };
                query
                    .iter()
                    .zip(centroid)
                    .map(|(q, c)| round(q - c))
                    .collect()
            };
            let table = distance::pq_table(pq, metric, &residual);
            let (m, c) = (pq.num_sub_vectors, pq.num_centroids());
            let base = if metric == Metric::Dot { 1.0 } else { 0.0 };
            distance::pq_distances(codes, m, c, &table, base)
        }
        (Codes::Sq(codes), Quantizer::Sq { dim, bounds }) => {
            let (start, end) = (bounds.start, bounds.end);
            if metric == Metric::Dot {
                let step = (end - start) / 255.0;
                codes
                    .chunks_exact(*dim)
                    .map(|row| distance::sq_dot(row, query, start, step))
                    .collect()
            } else {
                let q = distance::sq_query_codes(query, start, end);
                let range = (end - start) as f32;
                let scale = range * range / (255.0 * 255.0);
                codes
                    .chunks_exact(*dim)
                    .map(|row| distance::sq_l2(row, &q, scale))
                    .collect()
            }
        }
        (Codes::Rq(_), Quantizer::Rq(_)) => {
            return Err(Error::corrupt(
                "internal: RaBitQ partitions are scored by rq::score",
            ))
        }
        _ => return Err(Error::corrupt("partition codes do not match the quantizer")),
    })
    .and_then(|d: Vec<f32>| {
        if d.len() == n {
            Ok(d)
        } else {
            Err(Error::corrupt(format!(
                "{} distances for {n} rows",
                d.len()
            )))
        }
    })
}
