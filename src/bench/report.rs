//! The benchmark report: per-operation records, distributions (percentiles), the JSON shape
//! `--json` prints and `--compare` reads back, and the text table. Everything here is pure
//! (no I/O besides writing to a `dyn Write`).

use std::io::Write;

use serde::{Deserialize, Serialize};

use crate::{Error, IoStatsSnapshot, Result};

/// Version of the JSON report shape (bumped when a field changes meaning).
pub(crate) const REPORT_FORMAT_VERSION: u32 = 1;

/// Cost of one phase of an operation (the open of a cold operation).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct PhaseRecord {
    /// Wall time of the phase in milliseconds.
    pub(crate) latency_ms: f64,
    /// GET/LIST requests of the phase.
    pub(crate) requests: u64,
    /// Body bytes received in the phase.
    pub(crate) bytes: u64,
    /// Sequential waves of requests in the phase.
    pub(crate) round_trips: u64,
}

impl PhaseRecord {
    /// A phase of `latency_ms` that spent `stats`.
    pub(crate) fn new(latency_ms: f64, stats: IoStatsSnapshot) -> Self {
        Self {
            latency_ms,
            requests: stats.requests,
            bytes: stats.bytes,
            round_trips: stats.round_trips,
        }
    }
}

/// One finished operation (a take or a query).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct OperationRecord {
    /// Operation number (0-based; its seed is `seed + index`).
    pub(crate) index: u64,
    /// Wall time in milliseconds, open included for cold operations.
    pub(crate) latency_ms: f64,
    /// Requests, open included.
    pub(crate) requests: u64,
    /// Body bytes, open included.
    pub(crate) bytes: u64,
    /// Round trips, open included.
    pub(crate) round_trips: u64,
    /// Rows the operation returned (a take: rows read; a query: matching rows).
    pub(crate) rows: u64,
    /// The open's share of a cold operation (`None` when warm).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) open: Option<PhaseRecord>,
    /// Recall@k of a nearest query against the `--ground-truth` answer (0..=1; `None`
    /// without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) recall: Option<f64>,
}

impl OperationRecord {
    /// The operation's counters.
    pub(crate) fn io(&self) -> IoStatsSnapshot {
        IoStatsSnapshot {
            requests: self.requests,
            bytes: self.bytes,
            round_trips: self.round_trips,
            ..IoStatsSnapshot::default()
        }
    }
}

/// Summary statistics of one quantity over the operations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Distribution {
    /// Smallest value.
    pub(crate) min: f64,
    /// Arithmetic mean.
    pub(crate) mean: f64,
    /// Median (nearest rank).
    pub(crate) p50: f64,
    /// 90th percentile (nearest rank).
    pub(crate) p90: f64,
    /// 99th percentile (nearest rank).
    pub(crate) p99: f64,
    /// Largest value.
    pub(crate) max: f64,
}

impl Distribution {
    /// Statistics of `values` (all zero when empty).
    pub(crate) fn of(values: &[f64]) -> Self {
        let mut sorted: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
        sorted.sort_by(f64::total_cmp);
        if sorted.is_empty() {
            return Self::default();
        }
        let mean = sorted.iter().sum::<f64>() / sorted.len() as f64;
        Self {
            min: sorted[0],
            mean,
            p50: percentile_of_sorted(&sorted, 50.0),
            p90: percentile_of_sorted(&sorted, 90.0),
            p99: percentile_of_sorted(&sorted, 99.0),
            max: sorted[sorted.len() - 1],
        }
    }
}

/// The header's description of a nearest or search run: column, k and the search knobs.
fn search_description(s: &BenchSettings) -> String {
    let mut parts = vec![format!(
        "column {}",
        s.search_column.as_deref().unwrap_or("?")
    )];
    let knobs = [
        ("k", s.k.map(|v| v.to_string())),
        ("nprobes", s.nprobes.map(|v| v.to_string())),
        ("refine", s.refine.map(|v| v.to_string())),
        ("ef", s.ef.map(|v| v.to_string())),
        ("operator", s.operator.clone()),
        ("budget", s.budget_bytes.map(|b| format!("{b} B"))),
        ("prewarmed", s.prewarm.then(|| "indices".to_string())),
        ("queries from", s.queries_from.clone()),
    ];
    for (name, value) in knobs {
        if let Some(v) = value {
            parts.push(format!("{name} {v}"));
        }
    }
    parts.join(", ")
}

/// Nearest-rank percentile `p` (0..=100) of ascending `sorted` values: the smallest value
/// with at least `p`% of the values at or below it. 0 for an empty slice.
pub(crate) fn percentile_of_sorted(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let p = p.clamp(0.0, 100.0);
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Points of the empirical CDF of `values`: `(value, fraction of values <= value)`, ascending,
/// one point per value.
pub(crate) fn cdf_points(values: &[f64]) -> Vec<(f64, f64)> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len() as f64;
    sorted
        .into_iter()
        .enumerate()
        .map(|(i, v)| (v, (i + 1) as f64 / n))
        .collect()
}

/// Counts of `values` in `bins` equal-width bins over `[min, max]` of the values, as
/// `(bin start, bin end, count)`. Empty when there are no finite values or `bins == 0`.
#[cfg(test)]
pub(crate) fn histogram(values: &[f64], bins: usize) -> Vec<(f64, f64, u64)> {
    let finite = values.iter().copied().filter(|v| v.is_finite());
    let lo = finite.clone().fold(f64::INFINITY, f64::min);
    let hi = finite.fold(f64::NEG_INFINITY, f64::max);
    histogram_in(values, lo, hi, bins)
}

/// Counts of `values` in `bins` equal-width bins over `[lo, hi]` (values outside are
/// clamped into the first / last bin), as `(bin start, bin end, count)`. Empty when
/// `bins == 0`, the bounds are not finite or there are no finite values.
pub(crate) fn histogram_in(values: &[f64], lo: f64, hi: f64, bins: usize) -> Vec<(f64, f64, u64)> {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if finite.is_empty() || bins == 0 || !lo.is_finite() || !hi.is_finite() || hi < lo {
        return Vec::new();
    }
    let width = if hi > lo {
        (hi - lo) / bins as f64
    } else {
        1.0
    };
    let mut counts = vec![0u64; bins];
    for v in finite {
        let bin = (((v - lo) / width).max(0.0) as usize).min(bins - 1);
        counts[bin] += 1;
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(i, c)| (lo + i as f64 * width, lo + (i + 1) as f64 * width, c))
        .collect()
}

/// Per-operation distributions of the I/O counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct PerOperation {
    /// Requests per operation.
    pub(crate) requests: Distribution,
    /// Bytes per operation.
    pub(crate) bytes: Distribution,
    /// Round trips per operation.
    pub(crate) round_trips: Distribution,
    /// Rows per operation.
    pub(crate) rows: Distribution,
}

/// What was benchmarked and how (echoed in the report so a run is self-describing).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct BenchSettings {
    /// `take` or `query`.
    pub(crate) command: String,
    /// Legend label for plots (`--label`, default: command, mode and URL).
    pub(crate) label: String,
    /// The URL as given.
    pub(crate) url: String,
    /// The store as lakeseek opened it (backend, bucket, injected latency).
    pub(crate) store: String,
    /// `file` (one Lance file) or `dataset`.
    pub(crate) target: String,
    /// `cold` (fresh caches and open per operation) or `warm` (shared caches).
    pub(crate) mode: String,
    /// Delay added to every request by `--latency-ms` (0: none; the numbers are the
    /// store's own latency).
    pub(crate) injected_latency_ms: u64,
    /// Operations in flight at once.
    pub(crate) concurrency: usize,
    /// Seed of operation 0 (operation i uses `seed + i`).
    pub(crate) seed: u64,
    /// Columns read.
    pub(crate) columns: Vec<String>,
    /// Rows per take (take only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) rows_per_take: Option<u64>,
    /// Filter template (query only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) filter_template: Option<String>,
    /// Column the query values were sampled from (query only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) values_from: Option<String>,
    /// Unmeasured warm-up operations before the measured ones.
    pub(crate) warmup: u64,
    /// Searched column (nearest: the vector column; search: the text column).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) search_column: Option<String>,
    /// Where the queries come from (a file, or random rows of the vector column).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) queries_from: Option<String>,
    /// Rows asked per nearest or search query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) k: Option<usize>,
    /// IVF partitions probed (nearest only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) nprobes: Option<usize>,
    /// Refine factor (nearest only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) refine: Option<u32>,
    /// HNSW ef (nearest only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ef: Option<u32>,
    /// How a search's tokens combine: `or` or `and` (search only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) operator: Option<String>,
    /// The memory budget of the sessions the run opened (nearest only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) budget_bytes: Option<u64>,
    /// The indices were prewarmed before measuring (nearest only).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) prewarm: bool,
}

/// The whole report (`--json` prints it as one object).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct BenchReport {
    /// [`REPORT_FORMAT_VERSION`].
    pub(crate) format_version: u32,
    /// lakeseek version that produced the report.
    pub(crate) lakeseek_version: String,
    /// What was run.
    pub(crate) settings: BenchSettings,
    /// Operations asked for.
    pub(crate) operations_requested: u64,
    /// Operations that finished (fewer when interrupted).
    pub(crate) operations_completed: u64,
    /// True when Ctrl-C stopped the run early.
    pub(crate) interrupted: bool,
    /// Wall time of the measured phase in seconds.
    pub(crate) wall_seconds: f64,
    /// Completed operations per second of wall time.
    pub(crate) throughput_ops_per_sec: f64,
    /// Latency per operation in milliseconds.
    pub(crate) latency_ms: Distribution,
    /// I/O per operation.
    pub(crate) per_operation: PerOperation,
    /// I/O of all measured operations.
    pub(crate) totals: IoStatsSnapshot,
    /// I/O spent outside the measured operations (probing the target, warm open, warm-up
    /// operations, sampling query values).
    pub(crate) setup: IoStatsSnapshot,
    /// Every finished operation, by index.
    pub(crate) operations: Vec<OperationRecord>,
    /// Operations that failed (`--keep-going`; without it the first failure stops the run).
    #[serde(default)]
    pub(crate) errors: u64,
    /// The first distinct messages of those failures.
    #[serde(default)]
    pub(crate) error_messages: Vec<String>,
    /// Recall@k per operation (nearest with `--ground-truth`; `None` otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) recall: Option<Distribution>,
}

impl BenchReport {
    /// Build the report from finished operations.
    pub(crate) fn new(
        settings: BenchSettings,
        operations_requested: u64,
        mut operations: Vec<OperationRecord>,
        interrupted: bool,
        wall_seconds: f64,
        setup: IoStatsSnapshot,
    ) -> Self {
        operations.sort_by_key(|o| o.index);
        let column = |f: &dyn Fn(&OperationRecord) -> f64| -> Distribution {
            Distribution::of(&operations.iter().map(f).collect::<Vec<f64>>())
        };
        let per_operation = PerOperation {
            requests: column(&|o| o.requests as f64),
            bytes: column(&|o| o.bytes as f64),
            round_trips: column(&|o| o.round_trips as f64),
            rows: column(&|o| o.rows as f64),
        };
        let totals = operations
            .iter()
            .fold(IoStatsSnapshot::default(), |t, o| IoStatsSnapshot {
                requests: t.requests + o.requests,
                bytes: t.bytes + o.bytes,
                round_trips: t.round_trips + o.round_trips,
                ..t
            });
        let recalls: Vec<f64> = operations.iter().filter_map(|o| o.recall).collect();
        let recall = (!recalls.is_empty()).then(|| Distribution::of(&recalls));
        let completed = operations.len() as u64;
        let throughput_ops_per_sec = if wall_seconds > 0.0 {
            completed as f64 / wall_seconds
        } else {
            0.0
        };
        Self {
            format_version: REPORT_FORMAT_VERSION,
            lakeseek_version: env!("CARGO_PKG_VERSION").to_string(),
            latency_ms: column(&|o| o.latency_ms),
            settings,
            operations_requested,
            operations_completed: completed,
            interrupted,
            wall_seconds,
            throughput_ops_per_sec,
            per_operation,
            totals,
            setup,
            operations,
            errors: 0,
            error_messages: Vec::new(),
            recall,
        }
    }

    /// The same report with `errors` failed operations and their first distinct messages.
    pub(crate) fn with_errors(mut self, errors: u64, messages: Vec<String>) -> Self {
        self.errors = errors;
        self.error_messages = messages;
        self
    }

    /// Latencies of the finished operations in milliseconds.
    pub(crate) fn latencies_ms(&self) -> Vec<f64> {
        self.operations.iter().map(|o| o.latency_ms).collect()
    }

    /// Parse a report written by `--json` (for `--compare`). Also accepts a minimal
    /// `{"label": "...", "latencies_ms": [...]}` object written by another tool.
    pub(crate) fn from_json(text: &str, origin: &str) -> Result<Self> {
        let bad = |e: serde_json::Error| {
            Error::InvalidArgument(format!("{origin} is not a lakeseek bench JSON report: {e}"))
        };
        let value: serde_json::Value = serde_json::from_str(text).map_err(bad)?;
        if let Some(latencies) = value.get("latencies_ms").and_then(|v| v.as_array()) {
            let label = value
                .get("label")
                .and_then(|l| l.as_str())
                .unwrap_or(origin)
                .to_string();
            let operations = latencies
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let latency_ms = v.as_f64().ok_or_else(|| {
                        Error::InvalidArgument(format!(
                            "{origin}: latencies_ms[{i}] is not a number"
                        ))
                    })?;
                    Ok(OperationRecord {
                        index: i as u64,
                        latency_ms,
                        requests: 0,
                        bytes: 0,
                        round_trips: 0,
                        rows: 0,
                        open: None,
                        recall: None,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            let settings = BenchSettings {
                label,
                ..BenchSettings::default()
            };
            let n = operations.len() as u64;
            return Ok(Self::new(
                settings,
                n,
                operations,
                false,
                0.0,
                IoStatsSnapshot::default(),
            ));
        }
        serde_json::from_value(value).map_err(bad)
    }

    /// Write the human-readable table: the run's header lines, then the per-operation
    /// distributions and the totals.
    pub(crate) fn write_table(&self, out: &mut dyn Write) -> Result<()> {
        self.write_header(out)?;
        self.write_distributions(out)
    }

    /// The table's lines about the run: what was measured, the store, injected latency,
    /// operations and errors.
    fn write_header(&self, out: &mut dyn Write) -> Result<()> {
        let s = &self.settings;
        let what = match (&s.rows_per_take, &s.filter_template) {
            _ if s.search_column.is_some() => search_description(s),
            (Some(n), _) => format!("{n} rows/take, columns {}", s.columns.join(",")),
            (None, Some(t)) => format!(
                "filter {t:?}, values from {}",
                s.values_from.as_deref().unwrap_or("?")
            ),
            _ => String::new(),
        };
        writeln!(
            out,
            "lakeseek bench {} {} ({}, {}, {what})",
            s.command, s.url, s.target, s.mode
        )?;
        writeln!(out, "store: {}", s.store)?;
        if s.injected_latency_ms > 0 {
            writeln!(
                out,
                "injected latency: {} ms per request (--latency-ms): simulated, not a measurement of a real object store",
                s.injected_latency_ms
            )?;
        } else {
            writeln!(
                out,
                "injected latency: none (times are this store's own latency)"
            )?;
        }
        let status = if self.interrupted {
            " (interrupted by Ctrl-C: partial report)"
        } else {
            ""
        };
        writeln!(
            out,
            "operations: {} of {} in {:.2} s, concurrency {}, seed {} -> {:.1} ops/s{status}",
            self.operations_completed,
            self.operations_requested,
            self.wall_seconds,
            s.concurrency,
            s.seed,
            self.throughput_ops_per_sec
        )?;
        if self.errors > 0 {
            writeln!(out, "errors: {} operations failed", self.errors)?;
            for message in &self.error_messages {
                writeln!(out, "  error: {message}")?;
            }
        }
        Ok(())
    }

    /// The table's per-operation distributions (p50 ... mean) and its totals line.
    fn write_distributions(&self, out: &mut dyn Write) -> Result<()> {
        writeln!(
            out,
            "{:<16}{:>10}{:>10}{:>10}{:>10}{:>10}",
            "per operation", "p50", "p90", "p99", "max", "mean"
        )?;
        let kib = |d: Distribution| Distribution {
            min: d.min / 1024.0,
            mean: d.mean / 1024.0,
            p50: d.p50 / 1024.0,
            p90: d.p90 / 1024.0,
            p99: d.p99 / 1024.0,
            max: d.max / 1024.0,
        };
        let rows: [(&str, Distribution); 5] = [
            ("latency ms", self.latency_ms),
            ("requests", self.per_operation.requests),
            ("KiB", kib(self.per_operation.bytes)),
            ("round trips", self.per_operation.round_trips),
            ("rows", self.per_operation.rows),
        ];
        let recall = self.recall.map(|r| ("recall@k", r));
        for (name, d) in rows.into_iter().chain(recall) {
            writeln!(
                out,
                "{name:<16}{:>10}{:>10}{:>10}{:>10}{:>10}",
                short(d.p50),
                short(d.p90),
                short(d.p99),
                short(d.max),
                short(d.mean)
            )?;
        }
        writeln!(
            out,
            "totals: {} requests, {:.1} KiB, {} round trips; setup (not measured): {} requests, {:.1} KiB",
            self.totals.requests,
            self.totals.bytes as f64 / 1024.0,
            self.totals.round_trips,
            self.setup.requests,
            self.setup.bytes as f64 / 1024.0
        )?;
        Ok(())
    }
}

/// A number in at most ~6 characters: integers as such, others with 1-2 decimals.
fn short(v: f64) -> String {
    let whole = v.fract() == 0.0 && v.abs() < 1e9;
    if whole || v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(index: u64, latency_ms: f64, requests: u64) -> OperationRecord {
        OperationRecord {
            index,
            latency_ms,
            requests,
            bytes: requests * 100,
            round_trips: 1,
            rows: 10,
            open: None,
            recall: None,
        }
    }

    #[test]
    fn nearest_rank_percentiles() {
        let xs: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile_of_sorted(&xs, 50.0), 50.0);
        assert_eq!(percentile_of_sorted(&xs, 90.0), 90.0);
        assert_eq!(percentile_of_sorted(&xs, 99.0), 99.0);
        assert_eq!(percentile_of_sorted(&xs, 100.0), 100.0);
        assert_eq!(percentile_of_sorted(&xs, 0.0), 1.0);
        assert_eq!(percentile_of_sorted(&[7.0], 99.0), 7.0);
        assert_eq!(percentile_of_sorted(&[], 50.0), 0.0);
        // 3 values: the median is the second, p90 and p99 the third.
        let d = Distribution::of(&[30.0, 10.0, 20.0]);
        assert_eq!(
            (d.min, d.p50, d.p90, d.p99, d.max),
            (10.0, 20.0, 30.0, 30.0, 30.0)
        );
        assert_eq!(d.mean, 20.0);
    }

    #[test]
    fn distribution_ignores_nan_and_empty_is_zero() {
        let d = Distribution::of(&[f64::NAN, 4.0]);
        assert_eq!((d.min, d.max, d.mean), (4.0, 4.0, 4.0));
        assert_eq!(Distribution::of(&[]), Distribution::default());
    }

    #[test]
    fn cdf_reaches_one_at_the_largest_value() {
        let pts = cdf_points(&[3.0, 1.0, 2.0, 2.0]);
        assert_eq!(pts, vec![(1.0, 0.25), (2.0, 0.5), (2.0, 0.75), (3.0, 1.0)]);
        assert!(cdf_points(&[]).is_empty());
    }

    #[test]
    fn histogram_counts_every_value_once() {
        let h = histogram(&[0.0, 1.0, 2.0, 3.0, 4.0, 10.0], 5);
        assert_eq!(h.len(), 5);
        assert_eq!(h.iter().map(|b| b.2).sum::<u64>(), 6);
        assert_eq!(h[0], (0.0, 2.0, 2));
        assert_eq!(h[4].2, 1, "the maximum falls in the last bin");
        let same = histogram(&[5.0, 5.0], 3);
        assert_eq!(same[0].2, 2);
        assert!(histogram(&[], 3).is_empty());
        assert!(histogram(&[1.0], 0).is_empty());
        let clamped = histogram_in(&[-1.0, 0.5, 9.0], 0.0, 2.0, 2);
        assert_eq!(clamped, vec![(0.0, 1.0, 2), (1.0, 2.0, 1)]);
        assert!(histogram_in(&[1.0], 2.0, 1.0, 2).is_empty());
    }

    #[test]
    fn report_sums_and_sorts_operations() {
        let ops = vec![op(2, 30.0, 3), op(0, 10.0, 1), op(1, 20.0, 2)];
        let r = BenchReport::new(
            BenchSettings::default(),
            5,
            ops,
            true,
            2.0,
            IoStatsSnapshot::default(),
        );
        assert_eq!(
            r.operations.iter().map(|o| o.index).collect::<Vec<_>>(),
            [0, 1, 2]
        );
        assert_eq!(
            (r.totals.requests, r.totals.bytes, r.totals.round_trips),
            (6, 600, 3)
        );
        assert_eq!(r.operations_completed, 3);
        assert_eq!(r.throughput_ops_per_sec, 1.5);
        assert_eq!(r.latency_ms.p50, 20.0);
        assert_eq!(r.per_operation.requests.max, 3.0);
        let mut table = Vec::new();
        r.write_table(&mut table).unwrap();
        let text = String::from_utf8(table).unwrap();
        assert!(text.contains("3 of 5"), "{text}");
        assert!(text.contains("interrupted"), "{text}");
        assert!(text.contains("injected latency: none"), "{text}");
    }

    #[test]
    fn json_round_trips_and_minimal_form_is_accepted() {
        let r = BenchReport::new(
            BenchSettings {
                label: "x".into(),
                ..BenchSettings::default()
            },
            1,
            vec![op(0, 5.0, 1)],
            false,
            1.0,
            IoStatsSnapshot::default(),
        );
        let text = serde_json::to_string(&r).unwrap();
        assert_eq!(BenchReport::from_json(&text, "a.json").unwrap(), r);
        let minimal =
            BenchReport::from_json(r#"{"label":"pylance","latencies_ms":[3,1,2]}"#, "p.json")
                .unwrap();
        assert_eq!(minimal.settings.label, "pylance");
        assert_eq!(minimal.latency_ms.p50, 2.0);
        assert!(BenchReport::from_json("{}", "e.json").is_err());
        assert!(BenchReport::from_json(r#"{"latencies_ms":["a"]}"#, "e.json").is_err());
        assert!(BenchReport::from_json("not json", "e.json").is_err());
    }
}
