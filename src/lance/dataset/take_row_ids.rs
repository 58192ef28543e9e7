//! Take by stable row id, and `_rowid` as a column of a take.
//!
//! Like pylance 14.0.2's `_take_rows` on a dataset with stable row ids: rows come back in
//! the order of the ids asked (repeats kept); an id whose rows are all deleted is dropped.
//! Each id is looked up in every fragment's inline sequence (no request: they are in the
//! manifest) — an id an update or a compaction copied sits in two fragments — and all its
//! rows are taken by address in the take's one wave of opens and deletion files; the
//! deletion vectors keep the live copy. An id at or past the manifest's `next_row_id` was
//! never assigned: `InvalidArgument` (pylance returns nothing for it). On a dataset without
//! stable row ids a row id is the row address.
//!
//! `_rowid` (UInt64) may be asked for as a column of any take: the stable id of each row
//! (its sequence value), or its address on a dataset without stable row ids.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch, UInt64Array};
use arrow_schema::{DataType, Field, Schema as ArrowSchema};

use super::take::{take_rows, ROW_ADDRESS_COLUMN};
use super::{DatasetVersion, Manifest};
use crate::error::{Error, Result};
use crate::io::IoStats;

/// Name of the stable row id column.
pub(crate) const ROW_ID_COLUMN: &str = "_rowid";

/// The rows whose stable row id is in `ids`, in that order: `_rowaddr`, then `columns`
/// (`_rowid` among them when asked).
pub(crate) async fn take_row_ids(
    dataset: &DatasetVersion,
    ids: &[u64],
    columns: &[String],
    stats: &IoStats,
) -> Result<RecordBatch> {
    let manifest = dataset.manifest();
    let addresses = if manifest.uses_stable_row_ids() {
        let rows = rows_of_ids(manifest, ids)?;
        ids.iter()
            .flat_map(|id| rows.get(id).into_iter().flatten().copied())
            .collect()
    } else {
        ids.to_vec()
    };
    take_with_row_ids(dataset, &addresses, columns, stats).await
}

/// Every row (address) of each of `ids`, in all fragments; `InvalidArgument` for an id at
/// or past `next_row_id`.
pub(crate) fn rows_of_ids(manifest: &Manifest, ids: &[u64]) -> Result<HashMap<u64, Vec<u64>>> {
    if let Some(bad) = ids.iter().find(|id| **id >= manifest.next_row_id) {
        return Err(Error::InvalidArgument(format!(
            "row id {bad} was never assigned: version {} has row ids below {}",
            manifest.version, manifest.next_row_id
        )));
    }
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut rows: HashMap<u64, Vec<u64>> = HashMap::new();
    for f in &manifest.fragments {
        if let Some(sequence) = &f.row_ids {
            sequence.positions_of(&sorted, &mut |id, position| {
                rows.entry(id).or_default().push((f.id << 32) | position);
            });
        }
    }
    Ok(rows)
}

/// [`take_rows`] where `columns` may name `_rowid` (when the schema has no such column).
pub(crate) async fn take_with_row_ids(
    dataset: &DatasetVersion,
    addresses: &[u64],
    columns: &[String],
    stats: &IoStats,
) -> Result<RecordBatch> {
    let manifest = dataset.manifest();
    let is_row_id =
        |c: &String| c == ROW_ID_COLUMN && manifest.schema.field_by_path(ROW_ID_COLUMN).is_none();
    if !columns.iter().any(is_row_id) {
        return take_rows(dataset, addresses, columns, stats).await;
    }
    let stored: Vec<String> = columns.iter().filter(|c| !is_row_id(c)).cloned().collect();
    let batch = take_rows(dataset, addresses, &stored, stats).await?;
    let row_ids = row_id_column(manifest, batch.column(0))?;
    let (mut fields, mut arrays) = (
        vec![batch.schema().field(0).clone()],
        vec![Arc::clone(batch.column(0))],
    );
    let mut next = 1;
    for c in columns {
        if is_row_id(c) {
            fields.push(Field::new(ROW_ID_COLUMN, DataType::UInt64, false));
            arrays.push(Arc::clone(&row_ids));
        } else {
            fields.push(batch.schema().field(next).clone());
            arrays.push(Arc::clone(batch.column(next)));
            next += 1;
        }
    }
    Ok(RecordBatch::try_new(
        Arc::new(ArrowSchema::new(fields)),
        arrays,
    )?)
}

/// The row id of each address of a take's `_rowaddr` column.
fn row_id_column(manifest: &Manifest, addresses: &ArrayRef) -> Result<ArrayRef> {
    let addresses = addresses
        .as_any()
        .downcast_ref::<UInt64Array>()
        .ok_or_else(|| Error::corrupt(format!("{ROW_ADDRESS_COLUMN} is not UInt64")))?;
    if !manifest.uses_stable_row_ids() {
        return Ok(Arc::new(addresses.clone()));
    }
    let ids = addresses
        .values()
        .iter()
        .map(|a| {
            manifest
                .fragment(a >> 32)
                .and_then(|f| f.row_ids.as_ref())
                .and_then(|s| s.get(a & 0xFFFF_FFFF))
                .ok_or_else(|| {
                    Error::corrupt(format!("row address {a} has no row id in its fragment"))
                })
        })
        .collect::<Result<Vec<u64>>>()?;
    Ok(Arc::new(UInt64Array::from(ids)))
}
