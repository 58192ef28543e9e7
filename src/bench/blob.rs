//! `lakeseek bench blob`: random blob takes from a blob column (issue 35's benchmark).
//! Each operation picks `--blobs-per-take` random rows (seeded, over all fragments' physical
//! rows, as `bench take` picks them), and reads their blobs' bytes with
//! [`Dataset::read_blobs`]: the descriptors first, then every blob in one wave (small
//! blobs lying close together merged into few requests, large ones in bounded ranges).
//! The report's `rows` is the number of blobs read (non-null), its `bytes` every body byte
//! received (descriptors and the open included), so `bytes` over the blobs' own size is
//! the take's overhead.
//!
//! Cold operation: fresh session, open (find + read the manifest) + the take. Warm: the
//! dataset opened before measuring and its session (its caches hold the descriptors'
//! pages' metadata, never blob bytes).

use std::time::Instant;

use crate::bench::report::{BenchReport, BenchSettings, OperationRecord, PhaseRecord};
use crate::bench::take::{add, open_dataset, row_addresses};
use crate::bench::{
    drive_operations, elapsed_ms, operation_seed, random_rows, warmup_seed, BenchStore,
    CommonBenchArgs,
};
use crate::{Dataset, Error, IoStats, IoStatsSnapshot, Result, Session};

/// `lakeseek bench blob`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct BlobBenchArgs {
    /// Dataset URL or path.
    pub(crate) dataset: String,
    /// The blob column.
    #[arg(long)]
    pub(crate) column: String,
    /// Random blobs per take.
    #[arg(long = "blobs-per-take", default_value_t = 32)]
    pub(crate) blobs_per_take: u64,
    /// Takes to measure.
    #[arg(long, default_value_t = 100)]
    pub(crate) takes: u64,
    /// Dataset version (default: latest).
    #[arg(long)]
    pub(crate) version: Option<u64>,
    /// Shared benchmark flags.
    #[command(flatten)]
    pub(crate) common: CommonBenchArgs,
}

/// The dataset opened before measuring.
struct BlobTarget {
    store: BenchStore,
    dataset: Dataset,
    /// `(fragment id, physical rows)` in manifest order.
    fragments: Vec<(u64, u64)>,
}

/// Run the blob benchmark and build its report (nothing printed).
pub(crate) async fn run_blob_bench(args: &BlobBenchArgs) -> Result<BenchReport> {
    let common = &args.common;
    common.validate()?;
    if args.takes == 0 || args.blobs_per_take == 0 {
        return Err(Error::InvalidArgument(
            "--takes and --blobs-per-take must be at least 1".into(),
        ));
    }
    let store = BenchStore::open(&args.dataset, &common.storage_options, common.latency_ms)?;
    let setup = IoStats::new();
    let dataset = open_dataset(&store, args.version, &Session::default(), &setup).await?;
    if dataset.column_info(&args.column).is_none() {
        return Err(Error::InvalidArgument(format!(
            "no column named {:?} in {} (columns: {})",
            args.column,
            args.dataset,
            dataset.column_names().join(", ")
        )));
    }
    let fragments: Vec<(u64, u64)> = dataset
        .fragments()
        .iter()
        .map(|f| (f.id, f.physical_rows))
        .collect();
    let total: u64 = fragments.iter().map(|(_, n)| n).sum();
    if args.blobs_per_take > total {
        return Err(Error::InvalidArgument(format!(
            "--blobs-per-take {} is larger than the {total} rows of {}",
            args.blobs_per_take, args.dataset
        )));
    }
    let target = BlobTarget {
        store,
        dataset,
        fragments,
    };
    let mut warmup_cost = IoStatsSnapshot::default();
    for j in 0..common.warmup {
        let seed = warmup_seed(common.seed, common.warmup, j);
        let record = blob_take_once(&target, args, seed, j).await?;
        warmup_cost = add(warmup_cost, record.io());
    }
    let driven = drive_operations(args.takes, common.concurrency, common.keep_going, |i| {
        let target = &target;
        async move { blob_take_once(target, args, operation_seed(common.seed, i), i).await }
    })
    .await?;
    Ok(BenchReport::new(
        settings(args, &target.store),
        args.takes,
        driven.records,
        driven.interrupted,
        driven.wall_seconds,
        add(setup.snapshot(), warmup_cost),
    )
    .with_errors(driven.errors, driven.error_messages))
}

fn settings(args: &BlobBenchArgs, store: &BenchStore) -> BenchSettings {
    let common = &args.common;
    BenchSettings {
        columns: vec![args.column.clone()],
        rows_per_take: Some(args.blobs_per_take),
        filter_template: None,
        values_from: None,
        ..common.settings("blob", &args.dataset, store, "dataset")
    }
}

/// One blob take (cold: open included) of the rows of `seed`.
async fn blob_take_once(
    target: &BlobTarget,
    args: &BlobBenchArgs,
    seed: u64,
    index: u64,
) -> Result<OperationRecord> {
    let total = target.fragments.iter().map(|(_, n)| n).sum();
    let rows = random_rows(seed, args.blobs_per_take, total)?;
    let addresses = row_addresses(&rows, &target.fragments);
    let started = Instant::now();
    let open_stats = IoStats::new();
    let take_stats = IoStats::new();
    let mut open = None;
    let fresh;
    let dataset = if args.common.warm {
        &target.dataset
    } else {
        let session = Session::default();
        fresh = open_dataset(&target.store, args.version, &session, &open_stats).await?;
        open = Some(PhaseRecord::new(elapsed_ms(started), open_stats.snapshot()));
        &fresh
    };
    let blobs = dataset
        .with_stats(&take_stats)
        .read_blobs(&args.column, &addresses)
        .await?;
    let latency_ms = elapsed_ms(started);
    let total = add(open_stats.snapshot(), take_stats.snapshot());
    Ok(OperationRecord {
        index,
        latency_ms,
        requests: total.requests,
        bytes: total.bytes,
        round_trips: total.round_trips,
        rows: blobs.iter().flatten().count() as u64,
        open,
        recall: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Per row address of the v22 fixture: `Some(size)` or `None` (a null blob), as pylance
    /// answered it; and the deleted addresses.
    fn answers() -> (HashMap<u64, Option<u64>>, Vec<u64>) {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/blobs");
        let text = std::fs::read_to_string(dir.join("answers.json")).unwrap();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        let v22 = &json["datasets"]["v22"];
        let rows = v22["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["address"].as_u64().unwrap(), r["blob"]["size"].as_u64()));
        let deleted = v22["deleted"].as_array().unwrap().iter();
        (
            rows.collect(),
            deleted.map(|d| d.as_u64().unwrap()).collect(),
        )
    }

    #[tokio::test]
    async fn a_blob_take_reads_the_picked_blobs_cold_and_warm() {
        let (sizes, deleted) = answers();
        let fragments = [(0, 20), (1, 10)];
        // A seed whose four rows are all live (the bench takes live rows; the fixture has
        // two deletions).
        let (seed, addresses) = (1..)
            .map(|s| {
                (
                    s,
                    row_addresses(&random_rows(s, 4, 30).unwrap(), &fragments),
                )
            })
            .find(|(_, a)| a.iter().all(|x| !deleted.contains(x)))
            .unwrap();
        let blobs: Vec<u64> = addresses.iter().filter_map(|a| sizes[a]).collect();
        let url = format!("{}/tests/fixtures/blobs/v22", env!("CARGO_MANIFEST_DIR"));
        for warm in [false, true] {
            let args = BlobBenchArgs {
                dataset: url.clone(),
                column: "img".into(),
                blobs_per_take: 4,
                takes: 1,
                version: None,
                common: CommonBenchArgs {
                    seed,
                    warm,
                    cold: !warm,
                    ..CommonBenchArgs::default()
                },
            };
            let report = run_blob_bench(&args).await.unwrap();
            let op = &report.operations[0];
            assert_eq!(op.rows, blobs.len() as u64, "{addresses:?}: {op:?}");
            assert!(op.bytes >= blobs.iter().sum::<u64>(), "{op:?}");
            assert_eq!(op.open.is_some(), !warm, "{op:?}");
            assert_eq!(report.settings.command, "blob");
        }
        let too_many = BlobBenchArgs {
            dataset: url,
            column: "img".into(),
            blobs_per_take: 31,
            takes: 1,
            version: None,
            common: CommonBenchArgs::default(),
        };
        assert!(matches!(
            run_blob_bench(&too_many).await,
            Err(Error::InvalidArgument(_))
        ));
    }
}
