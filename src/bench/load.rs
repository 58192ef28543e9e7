//! `lakeseek bench load`: issue 36's load scenario as anyone can run it against their own
//! bucket. `--queries` filter queries run at once (`--concurrency`, default all of them) as
//! tokio tasks through **one** [`Session`] (`--budget-bytes`, default 16 MiB; the global
//! `--max-requests` pins its in-flight limit, else it adapts), over `--datasets` datasets
//! named by a URL template (`s3://bucket/t{}.lance`, `{}` = 0, 1, ...). Of every
//! `--shared-every` queries one answers from dataset 0, opened once before measuring, and the
//! others open their own [`Dataset`] (query `q` opens dataset `q % datasets`, by URL with the
//! storage options, as a service handling a request would). Every query answers `--filter`
//! from the dataset's indices; `--expect-rows` makes another row count a wrong answer.
//!
//! Errors never stop the run: the report counts them (first messages kept), with
//! throughput, latency percentiles, the requests all queries sent and the in-flight limit
//! they saw (its lowest, highest and last value, and how often it moved).

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use crate::bench::query::TEMPLATE_PLACEHOLDER;
use crate::bench::report::percentile_of_sorted as percentile;
use crate::bench::take::add;
use crate::bench::MAX_ERROR_MESSAGES;
use crate::{Dataset, Error, IoStats, IoStatsSnapshot, Result, Session};

/// `lakeseek bench load`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct LoadBenchArgs {
    /// Dataset URL with `{}` where the dataset number goes, e.g. `s3://bucket/t{}.lance`.
    pub(crate) dataset_template: String,
    /// Datasets: the numbers 0..N fill the template.
    #[arg(long, default_value_t = 120)]
    pub(crate) datasets: u64,
    /// The filter every query answers, e.g. `key = 4242`.
    #[arg(long)]
    pub(crate) filter: String,
    /// Rows every answer must have; another count is a wrong answer (counted as an error).
    #[arg(long)]
    pub(crate) expect_rows: Option<u64>,
    /// Queries to run.
    #[arg(long, default_value_t = 300)]
    pub(crate) queries: u64,
    /// Queries in flight at once (default: all of them).
    #[arg(long)]
    pub(crate) concurrency: Option<usize>,
    /// One query in this many answers from the shared dataset 0 (opened before measuring);
    /// the others open their own (3: two thirds open their own; 1: none does).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) shared_every: u64,
    /// Memory budget of the one session every query shares.
    #[arg(long, default_value_t = 16 << 20)]
    pub(crate) budget_bytes: u64,
    /// Storage option `key=value` (repeatable), e.g. `timeout=5s`.
    #[arg(long = "storage-option", value_name = "KEY=VALUE", value_parser = crate::args::parse_key_value)]
    pub(crate) storage_options: Vec<(String, String)>,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub(crate) json: bool,
}

/// What a load run measured (`--json` prints it).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct LoadReport {
    /// Queries launched.
    pub(crate) queries: u64,
    /// Queries in flight at once.
    pub(crate) concurrency: usize,
    /// Queries that opened their own dataset.
    pub(crate) own_opens: u64,
    /// Datasets the template names.
    pub(crate) datasets: u64,
    /// The session's starting in-flight limit per store.
    pub(crate) max_requests: usize,
    /// Whether that limit was pinned (`--max-requests`) rather than adaptive.
    pub(crate) pinned: bool,
    /// Queries answered right.
    pub(crate) completed: u64,
    /// Queries that failed or answered a wrong row count.
    pub(crate) errors: u64,
    /// Of `errors`, answers with a row count other than `--expect-rows`.
    pub(crate) wrong_answers: u64,
    /// The first distinct error messages.
    pub(crate) error_messages: Vec<String>,
    /// From the first launch to the last completion.
    pub(crate) wall_seconds: f64,
    /// Completed queries per second of wall time.
    pub(crate) throughput_qps: f64,
    /// Latency of completed queries, from launch (open included) to answer.
    pub(crate) latency_ms: LatencySummary,
    /// Every query's I/O summed (`limit*` fields: see [`LimitSummary`]).
    pub(crate) io: IoStatsSnapshot,
    /// The in-flight limit as the queries saw it.
    pub(crate) limit: LimitSummary,
}

/// Latency percentiles in milliseconds.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct LatencySummary {
    pub(crate) p50: f64,
    pub(crate) p90: f64,
    pub(crate) p99: f64,
    pub(crate) max: f64,
}

/// The store's in-flight limit as the queries' stats saw it.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct LimitSummary {
    /// The limit at the last request of the last-launched query that sent one.
    pub(crate) last: u64,
    /// The lowest limit any query saw.
    pub(crate) min: u64,
    /// The highest limit any query saw.
    pub(crate) max: u64,
    /// Times the limit was lowered during the run (as of the latest query).
    pub(crate) decreases: u64,
    /// Times the limit was raised during the run.
    pub(crate) increases: u64,
}

/// How one query ended.
enum Outcome {
    Answered {
        latency_ms: f64,
        io: IoStatsSnapshot,
    },
    Wrong {
        rows: u64,
        io: IoStatsSnapshot,
    },
    Failed(Error),
}

/// Run the load benchmark with the admission settings of `flags` (the process session
/// the global `--max-requests` / `--max-in-flight-bytes` built); print the report.
pub(crate) async fn run_load_bench(
    args: &LoadBenchArgs,
    flags: &Session,
    out: &mut dyn std::io::Write,
) -> Result<LoadReport> {
    let session = load_session(args.budget_bytes, flags)?;
    let report = run_load(args, &session).await?;
    if args.json {
        serde_json::to_writer(&mut *out, &report)
            .map_err(|e| Error::from(std::io::Error::other(e)))?;
        writeln!(out)?;
    } else {
        write_text(&report, out)?;
    }
    Ok(report)
}

/// A session with `budget_bytes` and the admission settings of `flags` (the global
/// `--max-requests` / `--max-in-flight-bytes`).
fn load_session(budget_bytes: u64, flags: &Session) -> Result<Session> {
    let builder = Session::builder()
        .budget_bytes(budget_bytes)
        .max_in_flight_bytes(flags.max_in_flight_bytes());
    if flags.max_requests_pinned() {
        builder.max_requests(flags.max_requests()).build()
    } else {
        builder.build()
    }
}

/// Check the arguments, open the shared dataset, run the queries and sum them up.
pub(crate) async fn run_load(args: &LoadBenchArgs, session: &Session) -> Result<LoadReport> {
    validate(args)?;
    let url = |d: u64| {
        args.dataset_template
            .replace(TEMPLATE_PLACEHOLDER, &d.to_string())
    };
    let open = |d: u64, stats: &IoStats| {
        Dataset::builder(&url(d))
            .storage_options(args.storage_options.iter().cloned())
            .session(session)
            .stats(stats)
            .open()
    };
    let shared = open(0, &IoStats::new()).await?;
    let concurrency = args.concurrency.unwrap_or(args.queries as usize).max(1);
    let slots = Arc::new(tokio::sync::Semaphore::new(concurrency));
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(args.queries as usize);
    let mut own_opens = 0;
    for q in 0..args.queries {
        let own = q % args.shared_every != 0;
        own_opens += u64::from(own);
        let stats = IoStats::new();
        let opening = own.then(|| open(q % args.datasets, &stats));
        let (shared, slots, filter) = (shared.clone(), Arc::clone(&slots), args.filter.clone());
        let expect = args.expect_rows;
        tasks.push(tokio::spawn(async move {
            let _slot = slots.acquire_owned().await;
            let t = Instant::now();
            let answer = async {
                let dataset = match opening {
                    Some(opening) => opening.await?,
                    None => shared.with_stats(&stats),
                };
                dataset.filter(&filter).await
            };
            match answer.await {
                Err(e) => Outcome::Failed(e),
                Ok(rows) if expect.is_some_and(|n| n != rows.len() as u64) => Outcome::Wrong {
                    rows: rows.len() as u64,
                    io: stats.snapshot(),
                },
                Ok(_) => Outcome::Answered {
                    latency_ms: t.elapsed().as_secs_f64() * 1e3,
                    io: stats.snapshot(),
                },
            }
        }));
    }
    let mut outcomes = Vec::with_capacity(tasks.len());
    for task in tasks {
        outcomes.push(
            task.await
                .map_err(|e| Error::from(std::io::Error::other(e)))?,
        );
    }
    let wall_seconds = started.elapsed().as_secs_f64();
    let mut report = summarize(&outcomes, args, wall_seconds);
    report.concurrency = concurrency;
    report.own_opens = own_opens;
    report.max_requests = session.max_requests();
    report.pinned = session.max_requests_pinned();
    Ok(report)
}

fn validate(args: &LoadBenchArgs) -> Result<()> {
    if !args.dataset_template.contains(TEMPLATE_PLACEHOLDER) {
        return Err(Error::InvalidArgument(format!(
            "the dataset template {:?} has no {TEMPLATE_PLACEHOLDER} for the dataset number",
            args.dataset_template
        )));
    }
    if args.datasets == 0 || args.queries == 0 {
        return Err(Error::InvalidArgument(
            "--datasets and --queries must be at least 1".into(),
        ));
    }
    Ok(())
}

/// Sum the outcomes up (in launch order: the last one's limit is the latest seen).
fn summarize(outcomes: &[Outcome], args: &LoadBenchArgs, wall_seconds: f64) -> LoadReport {
    let mut latencies = Vec::new();
    let (mut errors, mut wrong) = (0, 0);
    let mut messages: Vec<String> = Vec::new();
    let mut io = IoStatsSnapshot::default();
    let mut keep = |m: String| {
        if messages.len() < MAX_ERROR_MESSAGES && !messages.contains(&m) {
            messages.push(m);
        }
    };
    for outcome in outcomes {
        let seen = match outcome {
            Outcome::Answered { latency_ms, io } => {
                latencies.push(*latency_ms);
                Some(io)
            }
            Outcome::Wrong { rows, io } => {
                (errors, wrong) = (errors + 1, wrong + 1);
                keep(format!("wrong answer: {rows} rows"));
                Some(io)
            }
            Outcome::Failed(e) => {
                errors += 1;
                keep(e.to_string());
                None
            }
        };
        if let Some(s) = seen {
            let latest = io.limit;
            io = add(io, *s);
            if s.limit == 0 {
                io.limit = latest; // a query that sent no request saw no limit
            }
        }
    }
    latencies.sort_by(f64::total_cmp);
    let completed = latencies.len() as u64;
    LoadReport {
        queries: args.queries,
        concurrency: 0,
        own_opens: 0,
        datasets: args.datasets,
        max_requests: 0,
        pinned: false,
        completed,
        errors,
        wrong_answers: wrong,
        error_messages: messages,
        wall_seconds,
        throughput_qps: completed as f64 / wall_seconds.max(1e-9),
        latency_ms: LatencySummary {
            p50: percentile(&latencies, 50.0),
            p90: percentile(&latencies, 90.0),
            p99: percentile(&latencies, 99.0),
            max: latencies.last().copied().unwrap_or(0.0),
        },
        limit: limit_of(&io),
        io,
    }
}

/// The limit as the summed stats saw it (`add` keeps the latest value and the extremes).
fn limit_of(io: &IoStatsSnapshot) -> LimitSummary {
    LimitSummary {
        last: io.limit,
        min: io.limit_min,
        max: io.limit_max,
        decreases: io.limit_decreases,
        increases: io.limit_increases,
    }
}

/// The report as a few lines of text.
fn write_text(r: &LoadReport, out: &mut dyn std::io::Write) -> Result<()> {
    let limit = if r.pinned { "pinned" } else { "adaptive" };
    writeln!(
        out,
        "{} queries ({} opening their own of {} datasets), {} at once; limit {} ({limit})",
        r.queries, r.own_opens, r.datasets, r.concurrency, r.max_requests
    )?;
    writeln!(
        out,
        "completed {}, errors {} (wrong answers {}), {:.1} q/s, wall {:.1} s",
        r.completed, r.errors, r.wrong_answers, r.throughput_qps, r.wall_seconds
    )?;
    let l = &r.latency_ms;
    writeln!(
        out,
        "latency ms: p50 {:.1}, p90 {:.1}, p99 {:.1}, max {:.1}",
        l.p50, l.p90, l.p99, l.max
    )?;
    writeln!(
        out,
        "requests {}, bytes {}, retries {}, queued {:.1} s in all",
        r.io.requests,
        r.io.bytes,
        r.io.retries,
        r.io.queued_micros as f64 / 1e6
    )?;
    let m = &r.limit;
    writeln!(
        out,
        "limit: last {}, min {}, max {}, {} decreases, {} increases",
        m.last, m.min, m.max, m.decreases, m.increases
    )?;
    for e in &r.error_messages {
        writeln!(out, "error: {e}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let dst = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                copy_dir(&entry.path(), &dst);
            } else {
                std::fs::copy(entry.path(), dst).unwrap();
            }
        }
    }

    fn args(template: String, datasets: u64, expect: Option<u64>) -> LoadBenchArgs {
        LoadBenchArgs {
            dataset_template: template,
            datasets,
            filter: "key = 479478".into(),
            expect_rows: expect,
            queries: 30,
            concurrency: Some(8),
            shared_every: 3,
            budget_bytes: 16 << 20,
            storage_options: Vec::new(),
            json: true,
        }
    }

    #[tokio::test]
    async fn queries_open_their_own_datasets_and_every_failure_is_counted() {
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/datasets/wide.lance");
        let dir = tempfile::tempdir().unwrap();
        for d in 0..3 {
            copy_dir(&fixture, &dir.path().join(format!("t{d}.lance")));
        }
        let template = format!("{}/t{{}}.lance", dir.path().display());
        let session = Session::builder().max_requests(4).build().unwrap();

        let report = run_load(&args(template.clone(), 3, Some(1)), &session)
            .await
            .unwrap();
        assert_eq!((report.completed, report.errors), (30, 0), "{report:?}");
        assert_eq!(report.own_opens, 20);
        assert_eq!((report.concurrency, report.max_requests), (8, 4));
        assert!(report.pinned);
        assert!(report.io.requests > 0 && report.latency_ms.p99 >= report.latency_ms.p50);
        assert_eq!(
            (report.limit.min, report.limit.max),
            (4, 4),
            "{:?}",
            report.limit
        );

        // A wrong row count is an error, not an answer.
        let wrong = run_load(&args(template.clone(), 3, Some(2)), &session)
            .await
            .unwrap();
        assert_eq!(
            (wrong.completed, wrong.errors, wrong.wrong_answers),
            (0, 30, 30)
        );
        assert_eq!(
            wrong.error_messages,
            vec!["wrong answer: 1 rows".to_string()]
        );

        // Datasets 3 and 4 do not exist: their opens fail (counted), the rest answer.
        let missing = run_load(&args(template, 5, Some(1)), &session)
            .await
            .unwrap();
        // Queries q with q % 3 != 0 and q % 5 in {3, 4}: 8 of 30.
        assert_eq!((missing.completed, missing.errors), (22, 8), "{missing:?}");
        assert!(
            missing
                .error_messages
                .iter()
                .all(|m| m.contains("t3.lance") || m.contains("t4.lance")),
            "{:?}",
            missing.error_messages
        );

        let no_placeholder = args(format!("{}/t0.lance", dir.path().display()), 1, None);
        assert!(matches!(
            run_load(&no_placeholder, &session).await,
            Err(Error::InvalidArgument(_))
        ));
    }

    #[test]
    fn the_text_report_names_errors_and_the_limit() {
        let report = summarize(
            &[Outcome::Failed(Error::InvalidArgument("boom".into()))],
            &args("t{}".into(), 1, None),
            1.0,
        );
        let mut out = Vec::new();
        write_text(&report, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("errors 1") && text.contains("error: invalid argument: boom"),
            "{text}"
        );
        assert!(text.contains("limit: last 0"), "{text}");
    }
}
