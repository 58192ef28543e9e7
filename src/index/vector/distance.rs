//! Distances as lance computes them: exact distances between vectors, distances from a
//! query to the IVF centroids, and the quantizers' approximate distances (PQ lookup
//! tables, SQ codes).

use super::format::{Matrix, Metric, ProductQuantizer};

/// Squared Euclidean distance.
pub(crate) fn l2(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// Dot product.
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `v / |v|` (a zero vector stays zero).
pub(crate) fn normalized(v: &[f32]) -> Vec<f32> {
    let norm = dot(v, v).sqrt();
    if norm > 0.0 {
        v.iter().map(|x| x / norm).collect()
    } else {
        v.to_vec()
    }
}

/// The exact distance of `metric` (lance's `_distance` of a flat search or a refine).
pub(crate) fn exact(metric: Metric, query: &[f32], v: &[f32]) -> f32 {
    match metric {
        Metric::L2 => l2(query, v),
        Metric::Dot => 1.0 - dot(query, v),
        Metric::Cosine => {
            let denom = (dot(query, query) * dot(v, v)).sqrt();
            if denom > 0.0 {
                1.0 - dot(query, v) / denom
            } else {
                1.0
            }
        }
        Metric::Hamming => hamming(query, v),
    }
}

/// Differing bits of two packed binary vectors, one byte per value (values outside
/// 0..=255 saturate; the caller checks queries).
pub(crate) fn hamming(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| ((x as u8) ^ (y as u8)).count_ones())
        .sum::<u32>() as f32
}

/// The distance used to rank partitions: L2 for L2 and cosine (cosine indices are trained
/// on normalized vectors; the caller normalizes the query), `1 - q·c` for dot, bit
/// differences for hamming.
pub(crate) fn to_centroid(metric: Metric, query: &[f32], centroid: &[f32]) -> f32 {
    match metric {
        Metric::Dot => 1.0 - dot(query, centroid),
        Metric::Hamming => hamming(query, centroid),
        _ => l2(query, centroid),
    }
}

/// Partition ids nearest first (ties by id), with their distances.
pub(crate) fn rank_partitions(
    metric: Metric,
    query: &[f32],
    centroids: &Matrix,
) -> Vec<(f32, usize)> {
    let mut scored: Vec<(f32, usize)> = (0..centroids.rows)
        .map(|p| (to_centroid(metric, query, centroids.row(p)), p))
        .collect();
    scored.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    scored
}

/// The PQ lookup table `[sub-vector][codeword]` for `query` (already the residual where
/// the index uses residuals): squared L2 per sub-vector, or `-dot` for dot (the caller adds
/// 1, so the sum is lance's `1 - q·x`).
pub(crate) fn pq_table(pq: &ProductQuantizer, metric: Metric, query: &[f32]) -> Vec<f32> {
    let (m, c, s) = (pq.num_sub_vectors, pq.num_centroids(), pq.sub_dim());
    let mut table = Vec::with_capacity(m * c);
    for j in 0..m {
        let sub = &query[j * s..(j + 1) * s];
        let words = &pq.codebook[j * c * s..(j + 1) * c * s];
        for w in words.chunks_exact(s) {
            table.push(match metric {
                Metric::Dot => -dot(sub, w),
                _ => l2(sub, w),
            });
        }
    }
    table
}

/// Rows scored together by [`pq_distances`].
const PQ_BLOCK: usize = 8;

/// PQ distances of row-major `codes` (`m` codes per row) with lookup `table`
/// (`[sub-vector][codeword]`, `c` codewords each): `base` plus each row's table entries
/// summed in sub-vector order (the order of lance's sum). Rows are scored [`PQ_BLOCK`] at a
/// time so that their sums, each still in that order, run side by side instead of one long
/// chain of dependent additions. A code past `c` (the caller validated the codes against the
/// quantizer) counts as 0.
pub(crate) fn pq_distances(codes: &[u8], m: usize, c: usize, table: &[f32], base: f32) -> Vec<f32> {
    if m == 0 {
        return Vec::new();
    }
    let tables: Vec<&[f32]> = table.chunks_exact(c).take(m).collect();
    let mut out = Vec::with_capacity(codes.len() / m);
    let mut blocks = codes.chunks_exact(m * PQ_BLOCK);
    for block in &mut blocks {
        let mut acc = [0.0f32; PQ_BLOCK];
        for (j, t) in tables.iter().enumerate() {
            for (r, a) in acc.iter_mut().enumerate() {
                *a += t.get(usize::from(block[r * m + j])).copied().unwrap_or(0.0);
            }
        }
        out.extend(acc.iter().map(|a| base + a));
    }
    for row in blocks.remainder().chunks_exact(m) {
        let sum: f32 = row
            .iter()
            .zip(&tables)
            .map(|(&code, t)| t.get(usize::from(code)).copied().unwrap_or(0.0))
            .sum();
        out.push(base + sum);
    }
    out
}

/// The query's SQ codes: `(v - start) * 255 / range`, truncated and saturated to u8.
pub(crate) fn sq_query_codes(query: &[f32], start: f64, end: f64) -> Vec<u8> {
    if start == end {
        return vec![0; query.len()];
    }
    let range = end - start;
    query
        .iter()
        .map(|&v| ((f64::from(v) - start) * 255.0 / range) as u8)
        .collect()
}

/// SQ distance for L2 and cosine: the u8 codes' squared distance times `range² / 255²`.
pub(crate) fn sq_l2(codes: &[u8], query_codes: &[u8], scale: f32) -> f32 {
    let sum: u32 = codes
        .iter()
        .zip(query_codes)
        .map(|(&a, &b)| {
            let d = i32::from(a) - i32::from(b);
            (d * d) as u32
        })
        .sum();
    sum as f32 * scale
}

/// SQ distance for dot: `1 - q·x` with `x` dequantized as `start + code * range / 255`.
pub(crate) fn sq_dot(codes: &[u8], query: &[f32], start: f64, step: f64) -> f32 {
    let d: f64 = codes
        .iter()
        .zip(query)
        .map(|(&c, &q)| f64::from(q) * (start + f64::from(c) * step))
        .sum();
    (1.0 - d) as f32
}
