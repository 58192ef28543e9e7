//! Legacy v1 datasets (`tests/fixtures/files/legacy/gen_legacy.py`): written by pylance
//! 0.17.0 (its default) and by pylance 14.0.2 with `data_storage_version="legacy"`, three
//! fragments of 16-row batches, deletions, a BTREE index. Every row of every column taken
//! through the dataset equals pylance 14.0.2's `to_table(with_row_address=True)`; filters on
//! the indexed column give pylance's row addresses.

use crate::suite::read_support as support;

use std::path::PathBuf;

use crate::Dataset;
use arrow_array::{Array, RecordBatch, UInt64Array};
use serde_json::Value;

pub(super) const LABELS: [&str; 2] = ["v0_17", "v14"];
pub(super) const NAMES: [&str; 2] = ["flat", "nested"];

pub(super) fn dir() -> PathBuf {
    crate::suite::common::fixture("files/legacy")
}

/// pylance 14.0.2's read of every row (first column `_rowaddr`... last: pylance puts it last).
pub(super) fn oracle(label: &str, name: &str) -> RecordBatch {
    let batches = support::read_ipc(&dir().join(label).join(format!("{name}.arrow")));
    arrow_select::concat::concat_batches(&batches[0].schema(), &batches).expect("concat")
}

pub(super) fn filters(label: &str, name: &str) -> Vec<(String, Vec<u64>)> {
    let path = dir().join(label).join(format!("{name}.filters.json"));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    doc.as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            let rows = v
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap())
                .collect();
            (k.clone(), rows)
        })
        .collect()
}

/// Compare `got` (`_rowaddr` first, then `columns`) with the oracle's rows at the same
/// addresses, column by column.
pub(super) fn assert_same_rows(got: &RecordBatch, want: &RecordBatch, what: &str) {
    let addresses = got
        .column(0)
        .as_any()
        .downcast_ref::<UInt64Array>()
        .expect("_rowaddr");
    let want_addresses = want
        .column_by_name("_rowaddr")
        .unwrap()
        .as_any()
        .downcast_ref::<UInt64Array>()
        .unwrap()
        .clone();
    let positions: Vec<u32> = addresses
        .values()
        .iter()
        .map(|a| {
            want_addresses
                .values()
                .iter()
                .position(|w| w == a)
                .unwrap_or_else(|| panic!("{what}: address {a} not in the oracle"))
                as u32
        })
        .collect();
    let indices = arrow_array::UInt32Array::from(positions);
    for (i, field) in got.schema().fields().iter().enumerate().skip(1) {
        let expected = want.column_by_name(field.name()).expect("oracle column");
        let expected = arrow_select::take::take(expected.as_ref(), &indices, None).unwrap();
        let got_column = got.column(i);
        assert_eq!(
            got_column.to_data(),
            expected.to_data(),
            "{what}: column {} differs:\n got {:?}\nwant {:?}",
            field.name(),
            got_column,
            expected
        );
    }
}

pub(super) fn columns_of(want: &RecordBatch) -> Vec<String> {
    want.schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .filter(|n| n != "_rowaddr")
        .collect()
}

pub(super) async fn check_dataset(ds: &Dataset, label: &str, name: &str) {
    let want = oracle(label, name);
    let columns = columns_of(&want);
    let names: Vec<&str> = columns.iter().map(String::as_str).collect();
    let addresses = want
        .column_by_name("_rowaddr")
        .unwrap()
        .as_any()
        .downcast_ref::<UInt64Array>()
        .unwrap()
        .values()
        .to_vec();
    let what = format!("{label}/{name}");
    // Every row in order, then a shuffled subset with repeats.
    let got = ds.take(&addresses, &names).await.expect("take every row");
    assert_eq!(got.num_rows(), addresses.len(), "{what}");
    assert_same_rows(&got, &want, &what);
    let mut some: Vec<u64> = addresses.iter().rev().step_by(3).copied().collect();
    some.push(addresses[5]);
    some.push(addresses[5]);
    let got = ds.take(&some, &names).await.expect("take some rows");
    assert_eq!(got.num_rows(), some.len(), "{what}");
    assert_same_rows(&got, &want, &format!("{what} (some rows)"));
    for (filter, rows) in filters(label, name) {
        // From the index where lakeseek reads it, else by scanning the legacy data files.
        let result = ds.query().filter(&filter).allow_scan(true).execute().await;
        let result = match result {
            // pylance 14's legacy datasets keep 2.0 index files: read once the Lance 2.0
            // reader (issue 25) lands; nothing of the legacy data files is involved.
            Err(crate::Error::Unsupported { path, what, .. })
                if path.contains("/_indices/") && what.contains("Lance 2.0 page encodings") =>
            {
                eprintln!("{what}: {filter}: index file {path} is a 2.0 file, skipped");
                continue;
            }
            other => other.unwrap_or_else(|e| panic!("{what}: {filter}: {e}")),
        };
        assert_eq!(result.row_addresses, rows, "{what}: {filter}");
    }
}

#[tokio::test]
async fn every_row_of_every_legacy_dataset_reads_as_pylance_reads_it() {
    for label in LABELS {
        for name in NAMES {
            let path = dir().join(label).join(format!("{name}.lance"));
            let ds = Dataset::open(path.to_str().unwrap()).await.expect("open");
            check_dataset(&ds, label, name).await;
        }
    }
}
