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
use crate::lance::data_file::DataFileReader;
use crate::lance::dataset::{
    DataFile, DatasetVersion, DeletionVector, Fragment, Manifest, Schema, SchemaField,
};
use crate::lance::reader::RowSelection;

/// Name of the row-address column in take and query output.
pub(crate) const ROW_ADDRESS_COLUMN: &str = "_rowaddr";

/// Read `columns` (top-level names) of the rows at `addresses`. The batch starts with a
/// `_rowaddr` UInt64 column.
///
/// Decide (which columns, which offsets of which fragments, which files), then drive the
/// waves: open every file and read the deletion vectors, then read every file's rows;
/// finally assemble the pieces in the requested order.
pub(crate) async fn take_rows(
    dataset: &DatasetVersion,
    addresses: &[u64],
    columns: &[String],
    stats: &IoStats,
) -> Result<RecordBatch> {
    take_rows_with(dataset, addresses, columns, TakeOptions::default(), stats).await
}

/// How a take reads what is not cached.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct TakeOptions {
    /// Few rows of small values (blob descriptors): open each data file with a suffix read
    /// of this many bytes (`tail_bytes(file)`; the metadata region, about) instead of the
    /// default, and read its pages the few-row way
    /// ([`DataFileReader::read_few_rows`]).
    pub few_rows: Option<fn(&DataFile) -> u64>,
}

/// [`take_rows`] with `options`.
pub(crate) async fn take_rows_with(
    dataset: &DatasetVersion,
    addresses: &[u64],
    columns: &[String],
    options: TakeOptions,
    stats: &IoStats,
) -> Result<RecordBatch> {
    let manifest = Arc::clone(dataset.manifest());
    let columns = TakeColumns::resolve(&manifest.schema, columns)?;
    let mut per_fragment = group_by_fragment(&manifest, addresses)?;
    let involved: Vec<&Fragment> = per_fragment
        .keys()
        .filter_map(|id| manifest.fragment(*id))
        .collect();
    // Wave 1: deletion files and every data file's metadata.
    let files = files_to_read(&involved, &columns);
    let opens = files.iter().map(|(_, d)| async move {
        match options.few_rows {
            Some(tail_bytes) => {
                let tail = tail_bytes(d);
                dataset.open_data_file_with_tail(d, tail, stats).await
            }
            None => dataset.open_data_file(d, stats).await,
        }
    });
    let (readers, deletions) = futures::try_join!(
        futures::future::try_join_all(opens),
        dataset.deletion_vectors(&involved, stats)
    )?;
    drop_deleted(&mut per_fragment, &deletions);
    // Waves 2-3: one read per (file, its requested columns), all concurrent.
    let reads = files.iter().zip(&readers).map(|((fragment, d), reader)| {
        let offsets = per_fragment.get(fragment).cloned().unwrap_or_default();
        let few_rows = options.few_rows.is_some();
        read_file(
            *fragment,
            columns.wanted(d, reader),
            reader,
            offsets,
            few_rows,
            stats,
        )
    });
    let results = futures::future::try_join_all(reads).await?;
    let (kept_addresses, pieces) = assemble(&per_fragment, &columns, &results)?;
    in_requested_order(addresses, &kept_addresses, pieces, &columns)
}

/// The columns a take reads: each top-level field with its Arrow field, and the field ids
/// of its subtree (data files list the leaf ids of nested columns).
struct TakeColumns {
    fields: Vec<(SchemaField, Field)>,
    subtrees: Vec<Vec<i32>>,
}

impl TakeColumns {
    /// The top-level fields named `columns` (`InvalidArgument` for an unknown name).
    fn resolve(schema: &Schema, columns: &[String]) -> Result<Self> {
        let fields: Vec<(SchemaField, Field)> = columns
            .iter()
            .map(|name| {
                let f = schema
                    .fields
                    .iter()
                    .find(|f| f.parent_id == -1 && &f.name == name)
                    .ok_or_else(|| Error::InvalidArgument(format!("no column named {name:?}")))?;
                let arrow = schema
                    .arrow_field(f.id)
                    .map_err(|e| e.context(format!("taking column {name:?}")))?;
                Ok((f.clone(), arrow))
            })
            .collect::<Result<_>>()?;
        let subtrees = fields
            .iter()
            .map(|(sf, _)| schema.subtree_ids(sf.id))
            .collect();
        Ok(Self { fields, subtrees })
    }

    /// Whether data file `d` holds (part of) output column `out`.
    fn holds(&self, d: &DataFile, out: usize) -> bool {
        self.subtrees
            .get(out)
            .is_some_and(|ids| ids.iter().any(|id| d.fields.contains(id)))
    }

    /// The output columns `reader` (of data file `d`) serves: (output column, field index
    /// in the reader's schema).
    fn wanted(&self, d: &DataFile, reader: &DataFileReader) -> Vec<(usize, usize)> {
        self.fields
            .iter()
            .enumerate()
            .filter(|(out, _)| self.holds(d, *out))
            .filter_map(|(out, (sf, _))| {
                reader
                    .schema()
                    .fields
                    .iter()
                    .position(|x| x.id == sf.id)
                    .map(|i| (out, i))
            })
            .collect()
    }
}

/// The offsets of `addresses` per fragment (sorted, unique); an address of a fragment not in
/// the version or beyond its rows is `InvalidArgument`.
fn group_by_fragment(manifest: &Manifest, addresses: &[u64]) -> Result<BTreeMap<u64, Vec<u64>>> {
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
    Ok(per_fragment)
}

/// The data files of `involved` that hold any of `columns`, each once, with its fragment.
fn files_to_read(involved: &[&Fragment], columns: &TakeColumns) -> Vec<(u64, DataFile)> {
    let mut files: Vec<(u64, DataFile)> = Vec::new();
    for f in involved {
        for d in &f.files {
            if (0..columns.fields.len()).any(|out| columns.holds(d, out))
                && !files.iter().any(|(id, x)| *id == f.id && x.path == d.path)
            {
                files.push((f.id, d.clone()));
            }
        }
    }
    files
}

/// Drop the deleted offsets.
fn drop_deleted(
    per_fragment: &mut BTreeMap<u64, Vec<u64>>,
    deletions: &HashMap<u64, Arc<DeletionVector>>,
) {
    for (fragment, offsets) in per_fragment.iter_mut() {
        if let Some(d) = deletions.get(fragment) {
            offsets.retain(|o| !d.0.contains(*o as u32));
        }
    }
}

/// What one data file gave a take.
struct FileRead {
    fragment: u64,
    /// (output column, field index in the file's schema).
    wanted: Vec<(usize, usize)>,
    /// The rows read, one column per `wanted` entry; `None` when nothing was to be read.
    batch: Option<RecordBatch>,
}

/// Read `offsets` of the `wanted` columns of one data file.
async fn read_file(
    fragment: u64,
    wanted: Vec<(usize, usize)>,
    reader: &DataFileReader,
    offsets: Vec<u64>,
    few_rows: bool,
    stats: &IoStats,
) -> Result<FileRead> {
    let idx: Vec<usize> = wanted.iter().map(|(_, i)| *i).collect();
    let selection = RowSelection::Rows(offsets);
    let batch = match &selection {
        RowSelection::Rows(o) if o.is_empty() || idx.is_empty() => None,
        _ if few_rows => Some(reader.read_few_rows(&idx, &selection, stats).await?),
        _ => Some(reader.read_rows(&idx, &selection, stats).await?),
    };
    Ok(FileRead {
        fragment,
        wanted,
        batch,
    })
}

/// The kept addresses in fragment order, and per output column its arrays in that order
/// (nulls where no file of a fragment holds the column).
fn assemble(
    per_fragment: &BTreeMap<u64, Vec<u64>>,
    columns: &TakeColumns,
    results: &[FileRead],
) -> Result<(Vec<u64>, Vec<Vec<ArrayRef>>)> {
    let mut pieces: Vec<Vec<ArrayRef>> = vec![Vec::new(); columns.fields.len()];
    let mut kept_addresses: Vec<u64> = Vec::new();
    for (fragment, offsets) in per_fragment {
        let n = offsets.len();
        kept_addresses.extend(offsets.iter().map(|o| (fragment << 32) | o));
        for (out, (_, field)) in columns.fields.iter().enumerate() {
            let found = results.iter().find_map(|r| {
                let pos = r.wanted.iter().position(|(o, _)| *o == out)?;
                (r.fragment == *fragment)
                    .then(|| r.batch.as_ref().map(|b| Arc::clone(b.column(pos))))
            });
            let array = match found.flatten() {
                Some(a) => conform(a, field)?,
                None => new_null_array(field.data_type(), n),
            };
            pieces[out].push(array);
        }
    }
    Ok((kept_addresses, pieces))
}

/// The take's batch: `_rowaddr`, then each column, rows in the order of `addresses`
/// (deleted ones left out).
fn in_requested_order(
    addresses: &[u64],
    kept_addresses: &[u64],
    pieces: Vec<Vec<ArrayRef>>,
    columns: &TakeColumns,
) -> Result<RecordBatch> {
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
    for ((_, field), parts) in columns.fields.iter().zip(pieces) {
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
        .with_source(e)
    })
}
