//! Every row of every column of every dataset written by an old pylance release that pylance
//! 14.0.2 reads (`tests/fixtures/datasets/old/`, catalog entries with an `oracle`), taken by
//! row address through the public [`Dataset::take`] (what `lakeseek take` runs), equals
//! pylance 14.0.2's `to_table(with_row_address=True)`; so does a take of every seventh row
//! in reverse order, one column at a time (random access, no sequential luck). The same
//! checks run on the in-process S3 server in `old_datasets_s3`.

use arrow_array::{Array, ArrayRef, RecordBatch, UInt64Array};
use serde_json::Value;

use super::old_datasets::{catalog, old_dir};
use crate::suite::read_support as support;
use crate::Dataset;

/// Catalog datasets with an oracle whose take does not yet give pylance's rows. Empty: every
/// one does; a dataset added here must say why.
pub(super) const TAKE_GAPS: &[&str] = &[];

/// Catalog entries of the datasets pylance 14.0.2 reads (those with an oracle).
pub(super) fn oracle_datasets(catalog: &Value) -> Vec<Value> {
    catalog["datasets"]
        .as_array()
        .expect("datasets")
        .iter()
        .filter(|d| d["oracle"].is_string())
        .cloned()
        .collect()
}

/// pylance 14.0.2's read of every row of `entry`'s dataset, as one batch.
fn oracle(entry: &Value) -> RecordBatch {
    let batches = support::read_ipc(&old_dir().join(entry["oracle"].as_str().expect("oracle")));
    arrow_select::concat::concat_batches(&batches[0].schema(), &batches).expect("concat")
}

/// How `ours` differs from `theirs` (same type, length, nulls and valid values), if it does.
fn difference(ours: &ArrayRef, theirs: &ArrayRef) -> Option<String> {
    if ours.data_type() != theirs.data_type() {
        return Some(format!(
            "type {} vs pylance {}",
            ours.data_type(),
            theirs.data_type()
        ));
    }
    if ours.len() != theirs.len() {
        return Some(format!("{} rows vs pylance {}", ours.len(), theirs.len()));
    }
    if ours.logical_null_count() != theirs.logical_null_count() {
        return Some(format!(
            "{} nulls vs pylance {}",
            ours.logical_null_count(),
            theirs.logical_null_count()
        ));
    }
    if ours.to_data() == theirs.to_data() {
        return None;
    }
    let row = (0..ours.len()).find(|&i| ours.slice(i, 1).to_data() != theirs.slice(i, 1).to_data());
    Some(match row {
        Some(i) => format!(
            "first difference at row {i}: ours {:?} vs pylance {:?}",
            ours.slice(i, 1),
            theirs.slice(i, 1)
        ),
        None => "arrays differ".to_string(),
    })
}

/// Compare the `columns` of `batch` (a take of `positions` of the oracle) with the oracle.
fn batch_mismatches(
    what: &str,
    batch: &RecordBatch,
    oracle: &RecordBatch,
    positions: &[u64],
    columns: &[&str],
) -> Vec<String> {
    let indices = UInt64Array::from(positions.to_vec());
    let mut bad = Vec::new();
    for column in std::iter::once(&"_rowaddr").chain(columns) {
        let Some(ours) = batch.column_by_name(column) else {
            bad.push(format!("{what}: no column {column} in the take"));
            continue;
        };
        let theirs = oracle.column_by_name(column).expect("oracle column");
        let theirs = arrow_select::take::take(theirs.as_ref(), &indices, None).expect("take");
        if let Some(d) = difference(ours, &theirs) {
            bad.push(format!("{what} column {column}: {d}"));
        }
    }
    bad
}

/// The oracle's row addresses (`_rowaddr`) and its other columns' names.
pub(super) fn addresses_and_columns(oracle: &arrow_array::RecordBatch) -> (Vec<u64>, Vec<String>) {
    let rowaddr = oracle
        .column_by_name("_rowaddr")
        .and_then(|c| c.as_any().downcast_ref::<UInt64Array>())
        .expect("u64 _rowaddr")
        .values()
        .to_vec();
    let names = oracle
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .filter(|n| n != "_rowaddr")
        .collect();
    (rowaddr, names)
}

/// Take every row of every column of `entry`'s dataset, opened as `dataset` (local or on
/// S3), then every seventh row in reverse one column at a time; the mismatches with the
/// oracle, as text.
pub(super) async fn take_mismatches(dataset: &Dataset, entry: &Value) -> Vec<String> {
    let name = entry["name"].as_str().expect("name");
    let oracle = oracle(entry);
    let (rowaddr, names) = addresses_and_columns(&oracle);
    let columns: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
    let all: Vec<u64> = (0..rowaddr.len() as u64).collect();
    let mut bad = match dataset.take(&rowaddr, &columns).await {
        Ok(batch) => batch_mismatches(name, &batch, &oracle, &all, &columns),
        Err(e) => return vec![format!("{name}: take of every row: {e}")],
    };
    let positions: Vec<u64> = (0..rowaddr.len() as u64).rev().step_by(7).collect();
    let addresses: Vec<u64> = positions.iter().map(|&p| rowaddr[p as usize]).collect();
    for column in &columns {
        let what = format!("{name} (reversed)");
        match dataset.take(&addresses, &[column]).await {
            Ok(batch) => bad.extend(batch_mismatches(
                &what,
                &batch,
                &oracle,
                &positions,
                &[column],
            )),
            Err(e) => bad.push(format!("{what} column {column}: {e}")),
        }
    }
    bad
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_row_of_every_old_dataset_matches_pylance() {
    let catalog = catalog();
    let datasets = oracle_datasets(&catalog);
    assert!(datasets.len() >= 22, "only {} datasets", datasets.len());
    let mut bad = Vec::new();
    for entry in &datasets {
        let name = entry["name"].as_str().expect("name");
        let path = old_dir().join(entry["path"].as_str().expect("path"));
        let found = match Dataset::open(path.to_str().expect("utf-8")).await {
            Ok(dataset) => take_mismatches(&dataset, entry).await,
            Err(e) => vec![format!("{name}: open: {e}")],
        };
        println!("{name}: {} mismatches", found.len());
        match (TAKE_GAPS.contains(&name), found.is_empty()) {
            (true, true) => bad.push(format!("{name} now matches: remove it from TAKE_GAPS")),
            (true, false) => {}
            (false, _) => bad.extend(found),
        }
    }
    assert!(
        bad.is_empty(),
        "{} mismatches:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
