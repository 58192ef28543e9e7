//! How many IVF partitions a query probes first, as pylance 14.0.2 decides it when the
//! caller does not fix the count (`nprobes` sets minimum = maximum: exactly that many).
//!
//! Without a fixed count lance widens the caller's minimum from the sorted centroid
//! distances: for float32 IVF_FLAT indices (L2, cosine, dot; `k <= 1000`, no refine factor
//! above 1, no maximum) with its calibrated profile — the partitions within a relative
//! margin of the nearest, at least a floor and at most a cap per metric and `k`; for every
//! other index (quantized, legacy, other vector types, or a caller maximum) with its older
//! rule — the partitions within a factor (0.6, 7 or 81 by `k`) of the nearest distance.
//! The search then probes further partitions (up to the maximum) only while fewer than
//! `k` rows are found.

use super::format::Metric;

/// What the choice depends on besides the distances.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ProbeRequest {
    /// Rows asked.
    pub k: usize,
    /// The caller's minimum.
    pub minimum: usize,
    /// The caller's maximum.
    pub maximum: Option<usize>,
    /// The refine factor.
    pub refine_factor: Option<u32>,
    /// The index's metric.
    pub metric: Metric,
    /// A v3 IVF_FLAT index on float32 vectors (the calibrated profile's domain).
    pub flat_f32: bool,
}

/// Partitions probed first, given the centroid distances sorted nearest first (L2 of the
/// normalized query for cosine, `1 - q·c` for dot) and, for a dot index, the sorted L2
/// distances (pylance's older rule widens a dot index's probes by those).
pub(crate) fn initial_probes(r: &ProbeRequest, sorted: &[f32], dot_l2: Option<&[f32]>) -> usize {
    let n = sorted.len();
    if r.maximum == Some(r.minimum) {
        return r.minimum.min(n);
    }
    let profile = r.maximum.is_none()
        && r.flat_f32
        && matches!(r.metric, Metric::L2 | Metric::Cosine | Metric::Dot)
        && r.k <= 1000
        && r.refine_factor.is_none_or(|f| f <= 1);
    let minimum = if profile {
        profiled(r, sorted)
    } else {
        older_rule(r, dot_l2.unwrap_or(sorted))
    };
    minimum.min(r.maximum.unwrap_or(n)).min(n)
}

/// The older rule: partitions within a factor of the nearest distance.
fn older_rule(r: &ProbeRequest, sorted: &[f32]) -> usize {
    let selected = sorted.first().map_or(0, |&nearest| {
        let factor = match r.k {
            ..=1 => 0.6,
            2..=10 => 7.0,
            _ => 81.0,
        };
        let threshold = nearest * factor;
        sorted.partition_point(|&d| d <= threshold)
    });
    r.minimum.max(selected)
}

/// The calibrated profile: partitions within a relative margin of the nearest, between a
/// floor and a cap that depend on the metric and `k`.
fn profiled(r: &ProbeRequest, sorted: &[f32]) -> usize {
    let bucket = match r.k {
        ..=1 => 0,
        2..=10 => 1,
        11..=100 => 2,
        101..=200 => 3,
        201..=500 => 4,
        _ => 5,
    };
    let (margin, floor, cap) = match r.metric {
        Metric::L2 => (
            [0.2175, 0.265, 0.33, 0.375, 0.3725, 0.4175][bucket],
            [5, 6, 11, 15, 22, 29][bucket],
            [19, 24, 38, 56, 81, 93][bucket],
        ),
        Metric::Cosine => (
            [0.235, 0.2875, 0.38, 0.415, 0.45, 0.47][bucket],
            [3, 8, 7, 18, 28, 34][bucket],
            [50, 77, 106, 156, 192, 248][bucket],
        ),
        _ => (
            [0.14, 0.055, 0.0625, 0.0675, 0.07, 0.0725][bucket],
            [56, 144, 200, 211, 244, 279][bucket],
            [112, 432, 768, 833, 971, 1092][bucket],
        ),
    };
    let selected = match sorted.first() {
        Some(&nearest) if nearest.is_finite() => {
            let nearest = f64::from(nearest);
            let scale = if r.metric == Metric::Dot {
                (1.0 - nearest).abs()
            } else {
                nearest
            };
            let gap = f64::from(margin as f32) * scale;
            sorted.partition_point(|&d| d.is_finite() && f64::from(d) - nearest <= gap)
        }
        Some(_) => sorted.len(),
        None => 0,
    };
    r.minimum.max(selected.max(floor).min(cap))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(k: usize, minimum: usize, maximum: Option<usize>, flat_f32: bool) -> ProbeRequest {
        ProbeRequest {
            k,
            minimum,
            maximum,
            refine_factor: None,
            metric: Metric::L2,
            flat_f32,
        }
    }

    #[test]
    fn a_fixed_count_is_kept() {
        let d = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(initial_probes(&request(10, 2, Some(2), true), &d, None), 2);
        assert_eq!(initial_probes(&request(10, 9, Some(9), false), &d, None), 4);
    }

    #[test]
    fn the_older_rule_takes_partitions_within_a_factor_of_the_nearest() {
        let d = [1.0, 5.0, 7.0, 7.5, 100.0];
        // k 10: within 7x of the nearest.
        assert_eq!(initial_probes(&request(10, 1, None, false), &d, None), 3);
        // k 1: within 0.6x: only the caller's minimum.
        assert_eq!(initial_probes(&request(1, 1, None, false), &d, None), 1);
        assert_eq!(initial_probes(&request(1, 2, None, false), &d, None), 2);
        // k 50: within 81x; a maximum caps it.
        assert_eq!(initial_probes(&request(50, 1, None, false), &d, None), 4);
        assert_eq!(initial_probes(&request(50, 1, Some(2), false), &d, None), 2);
    }

    #[test]
    fn the_profile_has_a_floor_and_a_cap() {
        let d: Vec<f32> = (0..40).map(|i| 10.0 + i as f32).collect();
        // L2, k 10: margin 0.265 of 10 → 3 partitions, floor 6.
        assert_eq!(initial_probes(&request(10, 1, None, true), &d, None), 6);
        let close: Vec<f32> = (0..40).map(|i| 10.0 + i as f32 * 0.01).collect();
        // All within the margin, capped at 24.
        assert_eq!(
            initial_probes(&request(10, 1, None, true), &close, None),
            24
        );
        // The caller's minimum wins over the cap.
        assert_eq!(
            initial_probes(&request(10, 30, None, true), &close, None),
            30
        );
    }
}
