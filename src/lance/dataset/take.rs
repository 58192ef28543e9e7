//! Random take by row address: read some columns of some rows across fragments.
//!
//! Like lance's `_take_rows`: rows come back in the requested order (repeats allowed),
//! deleted rows are silently dropped, an address of a fragment that does not exist or
//! beyond a fragment's rows is an error. Every data file involved is opened in one wave,
//! then all rows are read (page init + chunks) in two more.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use arrow_array::{new_null_array, Array, ArrayRef, RecordBatch, UInt32Array, UInt64Array};
use arrow_schema::{DataType, Field, Schema as ArrowSchema};

use crate::error::{Error, Result};
use crate::io::IoStats;
use crate::lance::dataset::schema::arrow_type_of;
use crate::lance::dataset::{DataFile, Dataset, SchemaField};
use crate::lance::reader::{LanceFileReader, RowSelection};

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
    let fields: Vec<(SchemaField, DataType)> = columns
        .iter()
        .map(|name| {
            let f = manifest
                .schema
                .fields
                .iter()
                .find(|f| f.parent_id == -1 && &f.name == name)
                .ok_or_else(|| Error::InvalidArgument(format!("no column named {name:?}")))?;
            let t = arrow_type_of(&f.logical_type).map_err(|_| {
                Error::unsupported(format!(
                    "taking column {name:?} of type {} (nested columns are not read yet)",
                    f.logical_type
                ))
            })?;
            Ok((f.clone(), t))
        })
        .collect::<Result<_>>()?;
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
            if fields.iter().any(|(sf, _)| d.fields.contains(&sf.id))
                && !files.iter().any(|(id, x)| *id == f.id && x.path == d.path)
            {
                files.push((f.id, d.clone()));
            }
        }
    }
    let opens = files.iter().map(|(_, d)| {
        let caches = Arc::clone(&dataset.session().reader_caches);
        LanceFileReader::open(
            dataset.store().fetcher.clone(),
            dataset.data_file_path(d),
            d.size_bytes,
            caches,
            stats,
        )
    });
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
            .filter(|(_, (sf, _))| d.fields.contains(&sf.id))
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
        for (out, (_, t)) in fields.iter().enumerate() {
            let found = results.iter().find_map(|(fr, wanted, batch)| {
                let pos = wanted.iter().position(|(o, _)| *o == out)?;
                (fr == fragment).then(|| batch.as_ref().map(|b| Arc::clone(b.column(pos))))
            });
            let array = match found.flatten() {
                Some(a) => a,
                None => new_null_array(t, n),
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
    for ((sf, t), parts) in fields.iter().zip(pieces) {
        let refs: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
        let all = if refs.is_empty() {
            arrow_array::new_empty_array(t)
        } else {
            arrow_select::concat::concat(&refs)?
        };
        arrays.push(arrow_select::take::take(all.as_ref(), &indices, None)?);
        schema_fields.push(Field::new(&sf.name, all.data_type().clone(), true));
    }
    Ok(RecordBatch::try_new(
        Arc::new(ArrowSchema::new(schema_fields)),
        arrays,
    )?)
}
