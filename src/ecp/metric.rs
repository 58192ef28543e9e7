//! Distances and scores of the eCP search (pure, float32 like ecp-core).
//!
//! * `dist` per row: IP → `e·q`; L2 → `sqrt(max(0, ‖e‖² − 2 e·q + ‖q‖²))`, with `‖e‖²` taken
//!   as 1 when the index says it is normalized (ecp-core's shortcut).
//! * heap score (higher is better) = `sign · dist`, item score (lower is better) = `−sign · dist`,
//!   with `sign = −1` for L2 and `+1` for IP. So L2 items score their distance, IP items `−dot`.
//! * A NaN (only possible from non-finite stored embeddings) ranks last: heap score −∞,
//!   item score +∞.

use crate::error::{Error, Result};

/// The index's metric (`info/metric`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Metric {
    /// Euclidean distance.
    L2,
    /// Inner product (higher is more similar).
    IP,
}

impl Metric {
    /// Parse the stored string (`"L2"` or `"IP"`).
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "L2" => Ok(Metric::L2),
            "IP" => Ok(Metric::IP),
            other => Err(Error::unsupported(format!(
                "unknown metric {other:?} (expected \"L2\" or \"IP\")"
            ))),
        }
    }

    fn sign(self) -> f32 {
        match self {
            Metric::L2 => -1.0,
            Metric::IP => 1.0,
        }
    }
}

/// Scores rows of node embeddings against one query.
#[derive(Debug, Clone)]
pub(crate) struct Scorer {
    metric: Metric,
    normalized: bool,
    query: Vec<f32>,
    query_norm_sq: f32,
}

/// Dot product with 8 independent accumulators (lets the compiler vectorize).
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let chunks_a = a.chunks_exact(8);
    let chunks_b = b.chunks_exact(8);
    let (rest_a, rest_b) = (chunks_a.remainder(), chunks_b.remainder());
    for (x, y) in chunks_a.zip(chunks_b) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let mut sum = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (x, y) in rest_a.iter().zip(rest_b) {
        sum += x * y;
    }
    sum
}

impl Scorer {
    /// A scorer for `query`; rejects an empty query and non-finite components.
    pub(crate) fn new(metric: Metric, normalized: bool, query: Vec<f32>) -> Result<Self> {
        if query.is_empty() {
            return Err(Error::InvalidArgument("empty query vector".into()));
        }
        if let Some(pos) = query.iter().position(|v| !v.is_finite()) {
            return Err(Error::InvalidArgument(format!(
                "query component {pos} is not finite ({})",
                query[pos]
            )));
        }
        let query_norm_sq = dot(&query, &query);
        Ok(Self {
            metric,
            normalized,
            query,
            query_norm_sq,
        })
    }

    /// The query vector.
    pub(crate) fn query(&self) -> &[f32] {
        &self.query
    }

    /// The metric's distance of one row (IP: the dot product).
    #[cfg(test)]
    pub(crate) fn dist(&self, row: &[f32]) -> f32 {
        self.dist_with_norm(row, dot(row, row))
    }

    /// [`Scorer::dist`] with the row's squared norm precomputed (`dot(row, row)`).
    pub(crate) fn dist_with_norm(&self, row: &[f32], row_norm_sq: f32) -> f32 {
        let d = dot(row, &self.query);
        match self.metric {
            Metric::IP => d,
            Metric::L2 => {
                let row_norm_sq = if self.normalized { 1.0 } else { row_norm_sq };
                (row_norm_sq - 2.0 * d + self.query_norm_sq).max(0.0).sqrt()
            }
        }
    }

    /// Heap score (higher is better) of a node whose representative is `row`.
    #[cfg(test)]
    pub(crate) fn heap_score(&self, row: &[f32]) -> f32 {
        self.heap_score_with_norm(row, dot(row, row))
    }

    /// [`Scorer::heap_score`] with the row's squared norm precomputed.
    pub(crate) fn heap_score_with_norm(&self, row: &[f32], row_norm_sq: f32) -> f32 {
        let s = self.metric.sign() * self.dist_with_norm(row, row_norm_sq);
        if s.is_nan() {
            f32::NEG_INFINITY
        } else {
            s
        }
    }

    /// Item score (lower is better) of an item with embedding `row`.
    #[cfg(test)]
    pub(crate) fn item_score(&self, row: &[f32]) -> f32 {
        self.item_score_with_norm(row, dot(row, row))
    }

    /// [`Scorer::item_score`] with the row's squared norm precomputed.
    pub(crate) fn item_score_with_norm(&self, row: &[f32], row_norm_sq: f32) -> f32 {
        let s = -self.metric.sign() * self.dist_with_norm(row, row_norm_sq);
        if s.is_nan() {
            f32::INFINITY
        } else {
            s
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn l2_is_euclidean_and_ip_is_negated_dot() {
        let l2 = Scorer::new(Metric::L2, false, vec![1.0, 0.0, 0.0]).unwrap();
        assert!((l2.item_score(&[4.0, 4.0, 0.0]) - 5.0).abs() < 1e-6);
        assert!((l2.heap_score(&[4.0, 4.0, 0.0]) + 5.0).abs() < 1e-6);
        assert_eq!(l2.item_score(&[1.0, 0.0, 0.0]), 0.0); // clamped, no NaN
        let ip = Scorer::new(Metric::IP, false, vec![1.0, 2.0]).unwrap();
        assert_eq!(ip.item_score(&[3.0, 1.0]), -5.0);
        assert_eq!(ip.heap_score(&[3.0, 1.0]), 5.0);
    }

    #[test]
    fn normalized_l2_uses_unit_row_norm() {
        let s = Scorer::new(Metric::L2, true, vec![0.0, 1.0]).unwrap();
        // row norm is taken as 1 even though the row is [2,0]: sqrt(1 - 0 + 1)
        assert!((s.dist(&[2.0, 0.0]) - 2f32.sqrt()).abs() < 1e-6);
    }

    #[test]
    fn bad_queries_and_metrics_are_errors() {
        assert!(Scorer::new(Metric::L2, false, vec![f32::NAN]).is_err());
        assert!(Scorer::new(Metric::L2, false, vec![]).is_err());
        assert!(Metric::parse("COS").is_err());
    }

    #[test]
    fn nan_rows_rank_last() {
        let s = Scorer::new(Metric::IP, false, vec![1.0]).unwrap();
        assert_eq!(s.heap_score(&[f32::NAN]), f32::NEG_INFINITY);
        assert_eq!(s.item_score(&[f32::NAN]), f32::INFINITY);
    }

    #[test]
    fn dot_matches_naive_sum_for_odd_lengths() {
        let a: Vec<f32> = (0..19).map(|i| i as f32 * 0.5).collect();
        let b: Vec<f32> = (0..19).map(|i| 1.0 - i as f32 * 0.1).collect();
        let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - naive).abs() < 1e-3);
    }
}
