//! Distances of single rows of a partition to the query, as lance's storages compute
//! them for a graph search (`DistCalculator::distance(id)`): the same arithmetic as the
//! flat sub-index's scan ([`crate::index::vector::partition::score`]), prepared once per
//! partition (PQ lookup table, SQ query codes) and evaluated per visited node.

use crate::error::{Error, Result};
use crate::index::vector::distance;
use crate::index::vector::format::{Metric, Quantizer};
use crate::index::vector::partition::{Codes, Partition};

/// A prepared distance calculator over one partition.
#[derive(Debug)]
pub(crate) enum Scorer<'a> {
    /// Raw vectors.
    Flat {
        /// Row-major vectors.
        vectors: &'a [f32],
        /// Dimension.
        dim: usize,
        /// Metric.
        metric: Metric,
        /// The index query (normalized for cosine).
        query: &'a [f32],
    },
    /// PQ codes and the query's lookup table.
    Pq {
        /// Unpacked codes, `m` per row.
        codes: &'a [u8],
        /// Sub-vectors.
        m: usize,
        /// Codewords per sub-vector.
        c: usize,
        /// `[m][c]` table.
        table: Vec<f32>,
        /// Added to every sum (1 for dot).
        base: f32,
    },
    /// SQ codes against the query's codes (L2, cosine).
    SqL2 {
        /// Codes, `dim` per row.
        codes: &'a [u8],
        /// Query codes.
        query: Vec<u8>,
        /// `range² / 255²`.
        scale: f32,
    },
    /// SQ codes dequantized against the query (dot).
    SqDot {
        /// Codes, `dim` per row.
        codes: &'a [u8],
        /// The query.
        query: &'a [f32],
        /// Lower bound.
        start: f64,
        /// `range / 255`.
        step: f64,
    },
}

impl<'a> Scorer<'a> {
    /// Prepare the distances of `part` to `query` (the index query), `centroid` its
    /// partition's centroid (PQ residuals), `half_precision` for f16 columns.
    pub(crate) fn new(
        part: &'a Partition,
        quantizer: &Quantizer,
        metric: Metric,
        query: &'a [f32],
        centroid: &[f32],
        half_precision: bool,
    ) -> Result<Self> {
        Ok(match (&part.codes, quantizer) {
            (Codes::Flat(v), Quantizer::Flat { dim }) => Self::Flat {
                vectors: v,
                dim: *dim,
                metric,
                query,
            },
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
                Self::Pq {
                    codes,
                    m: pq.num_sub_vectors,
                    c: pq.num_centroids(),
                    table: distance::pq_table(pq, metric, &residual),
                    base: if metric == Metric::Dot { 1.0 } else { 0.0 },
                }
            }
            (Codes::Sq(codes), Quantizer::Sq { bounds, .. }) => {
                let (start, end) = (bounds.start, bounds.end);
                if metric == Metric::Dot {
                    Self::SqDot {
                        codes,
                        query,
                        start,
                        step: (end - start) / 255.0,
                    }
                } else {
                    let range = (end - start) as f32;
                    Self::SqL2 {
                        codes,
                        query: distance::sq_query_codes(query, start, end),
                        scale: range * range / (255.0 * 255.0),
                    }
                }
            }
            _ => return Err(Error::corrupt("partition codes do not match the quantizer")),
        })
    }

    /// The distance of row `id` (the caller checked `id` against the partition's rows;
    /// an id past them scores `+inf`).
    pub(crate) fn distance(&self, id: u32) -> f32 {
        let i = id as usize;
        let row = |data: &'a [u8], width: usize| data.get(i * width..(i + 1) * width);
        match self {
            Self::Flat {
                vectors,
                dim,
                metric,
                query,
            } => match vectors.get(i * dim..(i + 1) * dim) {
                Some(v) if *metric == Metric::Cosine => 1.0 - distance::dot(query, v),
                Some(v) => distance::exact(*metric, query, v),
                None => f32::INFINITY,
            },
            Self::Pq {
                codes,
                m,
                c,
                table,
                base,
            } => match row(codes, *m) {
                Some(r) => {
                    base + r
                        .iter()
                        .enumerate()
                        .map(|(j, &code)| table[j * c + usize::from(code)])
                        .sum::<f32>()
                }
                None => f32::INFINITY,
            },
            Self::SqL2 {
                codes,
                query,
                scale,
            } => {
                row(codes, query.len()).map_or(f32::INFINITY, |r| distance::sq_l2(r, query, *scale))
            }
            Self::SqDot {
                codes,
                query,
                start,
                step,
            } => row(codes, query.len())
                .map_or(f32::INFINITY, |r| distance::sq_dot(r, query, *start, *step)),
        }
    }
}
