//! Random take by row address: read some columns of some rows across fragments.
//!
//! Like lance's `_take_rows` (pylance 14.0.2): rows come back in the requested order
//! (repeats allowed), deleted rows are silently dropped, an address of a fragment that does
//! not exist or beyond a fragment's rows is an `InvalidArgument` naming the address. Every
//! data file involved is opened in one wave, then all rows are read (page init + chunks)
//! in two more, through the file reader and its caches: any column the file reader reads
//! (nested, 2.3 sparse, ...) is taken the same way, with the same cached page init and
//! structural plans.
//!
//! Two pylance 14.0.2 quirks are not copied (checked with its `_take_rows`): a deleted row
//! asked twice in a row panics inside arrow's take there (here it is dropped like any
//! deleted row), and an address of a fragment not in the version is an error there only
//! when the addresses are sorted ascending — unsorted, such addresses are silently dropped
//! (here it is always the error). Offsets past a fragment's rows are errors there in any
//! order, as here.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use arrow_array::make_array;
use arrow_array::{new_null_array, Array, ArrayRef, RecordBatch, UInt32Array, UInt64Array};
use arrow_schema::{DataType, Field, Schema as ArrowSchema};

use crate::error::{Error, Result};
use crate::io::IoStats;
use crate::lance::dataset::{DataFile, Dataset, SchemaField};
use crate::lance::reader::RowSelection;

/// Name of the row-address column in take and query output.
pub(crate) const ROW_ADDRESS_COLUMN: &str = "_rowaddr";

/// Read `columns` (top-level names) of the rows at `addresses`. The batch starts with a
/// `_rowaddr` UInt64 column.
pub(crate) async fn take_rows(
    dataset: &Dataset,
    addresses: &[u64],
    columns: &[String],
    stats: &IoStats,
) -> Result<RecordBatch> {
    let manifest = Arc::clone(dataset.manifest());
    let fields: Vec<(SchemaField, Field)> = columns
        .iter()
        .map(|name| {
            let f = manifest
                .schema
                .fields
                .iter()
                .find(|f| f.parent_id == -1 && &f.name == name)
                .ok_or_else(|| Error::InvalidArgument(format!("no column named {name:?}")))?;
            let arrow = manifest
                .schema
                .arrow_field(f.id)
                .map_err(|e| e.context(format!("taking column {name:?}")))?;
            Ok((f.clone(), arrow))
        })
        .collect::<Result<_>>()?;
    // The ids of each column's subtree: data files list the leaf ids of nested columns.
    let subtrees: Vec<Vec<i32>> = fields
        .iter()
        .map(|(sf, _)| manifest.schema.subtree_ids(sf.id))
        .collect();
    let holds = |d: &DataFile, sf: &SchemaField| {
        fields
            .iter()
            .position(|(f, _)| f.id == sf.id)
            .is_some_and(|i| subtrees[i].iter().any(|id| d.fields.contains(id)))
    };
    // Validate addresses, group offsets per fragment (sorted, unique).
    let mut per_fragment: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for &a in addresses {
        let (fragment, offset) = (a >> 32, a & 0xFFFF_FFFF);
        let f = manifest.fragment(fragment).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "row address {a}: fragment {fragment} does not exist in version {}",
                manifest.version
            ))
        })?;
        if offset >= f.physical_rows {
            return Err(Error::InvalidArgument(format!(
                "row address {a}: offset {offset} is beyond the {} rows of fragment {fragment}",
                f.physical_rows
            )));
        }
        per_fragment.entry(fragment).or_default().push(offset);
    }
    for offsets in per_fragment.values_mut() {
        offsets.sort_unstable();
        offsets.dedup();
    }
    let involved: Vec<&crate::lance::dataset::Fragment> = per_fragment
        .keys()
        .filter_map(|id| manifest.fragment(*id))
        .collect();
    // Wave 1: deletion files and every data file's metadata.
    let mut files: Vec<(u64, DataFile)> = Vec::new();
    for f in &involved {
        for d in &f.files {
            if fields.iter().any(|(sf, _)| holds(d, sf))
                && !files.iter().any(|(id, x)| *id == f.id && x.path == d.path)
            {
                files.push((f.id, d.clone()));
            }
        }
    }
    let opens = files.iter().map(|(_, d)| dataset.open_data_file(d, stats));
    let (readers, deletions) = futures::try_join!(
        futures::future::try_join_all(opens),
        dataset.deletion_vectors(&involved, stats)
    )?;
    // Drop deleted offsets.
    for (fragment, offsets) in per_fragment.iter_mut() {
        if let Some(d) = deletions.get(fragment) {
            offsets.retain(|o| !d.0.contains(*o as u32));
        }
    }
    // Waves 2-3: one read per (file, its requested columns), all concurrent.
    let reads = files.iter().zip(&readers).map(|((fragment, d), reader)| {
        let offsets = per_fragment.get(fragment).cloned().unwrap_or_default();
        let wanted: Vec<(usize, usize)> = fields
            .iter()
            .enumerate()
            .filter(|(_, (sf, _))| holds(d, sf))
            .filter_map(|(out, (sf, _))| {
                reader
                    .schema()
                    .fields
                    .iter()
                    .position(|x| x.id == sf.id)
                    .map(|i| (out, i))
            })
            .collect();
        async move {
            let idx: Vec<usize> = wanted.iter().map(|(_, i)| *i).collect();
            let batch = if offsets.is_empty() || idx.is_empty() {
                None
            } else {
                Some(
                    reader
                        .read_rows(&idx, &RowSelection::Rows(offsets), stats)
                        .await?,
                )
            };
            Ok::<_, Error>((*fragment, wanted, batch))
        }
    });
    let results = futures::future::try_join_all(reads).await?;
    // Assemble per fragment, per output column (null where no file holds the column).
    let mut pieces: Vec<Vec<ArrayRef>> = vec![Vec::new(); fields.len()];
    let mut kept_addresses: Vec<u64> = Vec::new();
    for (fragment, offsets) in &per_fragment {
        let n = offsets.len();
        kept_addresses.extend(offsets.iter().map(|o| (fragment << 32) | o));
        for (out, (_, field)) in fields.iter().enumerate() {
            let found = results.iter().find_map(|(fr, wanted, batch)| {
                let pos = wanted.iter().position(|(o, _)| *o == out)?;
                (fr == fragment).then(|| batch.as_ref().map(|b| Arc::clone(b.column(pos))))
            });
            let array = match found.flatten() {
                Some(a) => conform(a, field)?,
                None => new_null_array(field.data_type(), n),
            };
            pieces[out].push(array);
        }
    }
    // Restore the requested order.
    let position: HashMap<u64, u32> = kept_addresses
        .iter()
        .enumerate()
        .map(|(i, a)| (*a, i as u32))
        .collect();
    let order: Vec<u32> = addresses
        .iter()
        .filter_map(|a| position.get(a).copied())
        .collect();
    let indices = UInt32Array::from(order.clone());
    let mut arrays: Vec<ArrayRef> = vec![Arc::new(UInt64Array::from(
        order
            .iter()
            .map(|i| kept_addresses[*i as usize])
            .collect::<Vec<_>>(),
    ))];
    let mut schema_fields = vec![Field::new(ROW_ADDRESS_COLUMN, DataType::UInt64, false)];
    for ((_, field), parts) in fields.iter().zip(pieces) {
        let refs: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
        let all = if refs.is_empty() {
            arrow_array::new_empty_array(field.data_type())
        } else {
            arrow_select::concat::concat(&refs)?
        };
        arrays.push(arrow_select::take::take(all.as_ref(), &indices, None)?);
        // Nullable like the data file arrays may be (a fragment without the column reads
        // as nulls), whatever the schema says.
        schema_fields.push(field.clone().with_nullable(true));
    }
    Ok(RecordBatch::try_new(
        Arc::new(ArrowSchema::new(schema_fields)),
        arrays,
    )?)
}

/// A data file's array as the dataset schema types the column: the same array when the
/// types agree, relabelled when they differ only in nested field names, nullability or
/// metadata (same layout), else cast; `Unsupported` when neither works.
fn conform(array: ArrayRef, field: &Field) -> Result<ArrayRef> {
    let t = field.data_type();
    if array.data_type() == t {
        return Ok(array);
    }
    if array.data_type().equals_datatype(t) {
        let data = array.to_data().into_builder().data_type(t.clone()).build();
        if let Ok(data) = data {
            return Ok(make_array(data));
        }
    }
    arrow_cast::cast(array.as_ref(), t).map_err(|e| {
        Error::unsupported(format!(
            "column {:?}: a data file holds it as {}, the dataset schema says {t}: {e}",
            field.name(),
            array.data_type()
        ))
    })
}
