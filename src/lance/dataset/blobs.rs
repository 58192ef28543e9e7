//! Blob takes: which object and which byte range hold each requested row's blob.
//!
//! The descriptors are read by an ordinary take of the blob column (one wave for the data
//! files' metadata and deletion files, then the descriptor pages); [`crate::lance::blob`]
//! turns them into locations, resolved here against each row's data file: the data file
//! itself (blob v1, v2 inline), a sidecar `.blob` file next to it (v2 packed, dedicated),
//! or an object outside the dataset named by its URI (v2 external, opened by the API layer).
//! Nothing is read of the blobs themselves: the caller fetches the ranges.

use std::ops::Range;

use object_store::path::Path;

use crate::error::{Error, Result};
use crate::io::IoStats;
use crate::lance::blob::{locations, sidecar_dir, sidecar_name, BlobFormat, BlobSource};
use crate::lance::dataset::take::{take_rows_with, TakeOptions};
use crate::lance::dataset::{DataFile, DatasetVersion, SchemaField};
use crate::lance::file::DEFAULT_TAIL_BYTES;

/// Where one non-null blob is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BlobRange {
    /// The object holding it.
    pub path: Path,
    /// Its bytes in that object (empty for an empty blob).
    pub range: Range<u64>,
    /// The object's size when known (the manifest records data file sizes).
    pub object_size: Option<u64>,
    /// An external blob's object (blob v2 kind 3): `path` and `object_size` are then to be
    /// resolved by the caller in the URI's own store.
    pub external: Option<ExternalObject>,
}

/// The object outside the dataset holding an external blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExternalObject {
    /// Its URI, as the descriptor stores it.
    pub uri: String,
    /// The blob is the whole object (a descriptor of position 0 and size 0: pylance never
    /// writes an empty external range): its size is the object's.
    pub whole: bool,
}

/// The blob of `column` at each of `addresses` (in order): `None` for a null blob. A
/// deleted address, an address outside the version, or a column that is not a blob column
/// is `InvalidArgument`; a descriptor pointing outside its data file is `Corrupt` naming
/// the file.
pub(crate) async fn blob_ranges(
    dataset: &DatasetVersion,
    column: &str,
    addresses: &[u64],
    stats: &IoStats,
) -> Result<Vec<Option<BlobRange>>> {
    let (field, format) = blob_field(dataset, column)?;
    let options = TakeOptions {
        few_rows: Some(metadata_tail_bytes),
    };
    let columns = [column.to_string()];
    let batch = take_rows_with(dataset, addresses, &columns, options, stats).await?;
    if batch.num_rows() != addresses.len() {
        return Err(deleted_address(addresses, batch.column(0).as_ref()));
    }
    let found = locations(batch.column(1).as_ref(), format)
        .map_err(|e| e.context(format!("blob column {column:?}")))?;
    addresses
        .iter()
        .zip(found)
        .map(|(&address, location)| {
            let Some(location) = location else {
                return Ok(None);
            };
            let file = data_file_of(dataset, &field, address)?;
            let data_path = dataset.data_file_path(file);
            let (path, object_size) = match &location.source {
                BlobSource::DataFile => {
                    if let Some(size) = file.size_bytes {
                        location.check_inside(data_path.as_ref(), size)?;
                    }
                    (data_path, file.size_bytes)
                }
                BlobSource::Sidecar { blob_id, .. } => {
                    let name = format!(
                        "data/{}/{}",
                        sidecar_dir(&file.path),
                        sidecar_name(*blob_id)
                    );
                    (dataset.child(&name), None)
                }
                BlobSource::External { uri } => {
                    let range = location.range().map_err(|e| e.at(uri, None))?;
                    let whole = range == (0..0);
                    return Ok(Some(BlobRange {
                        path: Path::default(),
                        range,
                        object_size: None,
                        external: Some(ExternalObject {
                            uri: uri.clone(),
                            whole,
                        }),
                    }));
                }
            };
            let range = location.range().map_err(|e| e.at(path.as_ref(), None))?;
            Ok(Some(BlobRange {
                path,
                range,
                object_size,
                external: None,
            }))
        })
        .collect()
}

/// Bytes of a blob take's suffix read of data file `file`: the whole file when it is
/// small (at most the default suffix read), else about its metadata region — a footer,
/// the column metadata (a few pages per column) and the schema — sized by the number of
/// fields it holds, so a take of one blob does not read 64 KiB of the file's last pages.
/// A larger metadata region costs one more read, of exactly what is missing.
fn metadata_tail_bytes(file: &DataFile) -> u64 {
    let estimate = 2048 + 1024 * file.fields.len() as u64;
    match file.size_bytes {
        Some(size) if size <= DEFAULT_TAIL_BYTES => DEFAULT_TAIL_BYTES,
        _ => estimate.min(DEFAULT_TAIL_BYTES),
    }
}

/// The top-level field `column` and its blob format (`InvalidArgument` when there is no such
/// column or it is not a blob column).
fn blob_field(dataset: &DatasetVersion, column: &str) -> Result<(SchemaField, BlobFormat)> {
    let schema = &dataset.manifest().schema;
    let field = schema
        .fields
        .iter()
        .find(|f| f.parent_id == -1 && f.name == column)
        .ok_or_else(|| Error::InvalidArgument(format!("no column named {column:?}")))?;
    let arrow = schema.arrow_type(field.id)?;
    let format = [BlobFormat::V1, BlobFormat::V2]
        .into_iter()
        .find(|f| f.descriptor_type() == arrow)
        .ok_or_else(|| {
            Error::InvalidArgument(format!("column {column:?} is not a blob column ({arrow})"))
        })?;
    Ok((field.clone(), format))
}

/// The data file of `address`'s fragment holding `field`.
fn data_file_of<'d>(
    dataset: &'d DatasetVersion,
    field: &SchemaField,
    address: u64,
) -> Result<&'d DataFile> {
    dataset
        .manifest()
        .fragment(address >> 32)
        .and_then(|f| f.files.iter().find(|d| d.fields.contains(&field.id)))
        .ok_or_else(|| {
            Error::corrupt(format!(
                "row address {address} has a blob of {:?} but no data file holding it",
                field.name
            ))
        })
}

/// The error for a take that lost rows: the first requested address not returned.
fn deleted_address(addresses: &[u64], returned: &dyn arrow_array::Array) -> Error {
    use arrow_array::cast::AsArray;
    let returned = returned.as_primitive::<arrow_array::types::UInt64Type>();
    let kept: std::collections::HashSet<u64> = returned.values().iter().copied().collect();
    match addresses.iter().find(|a| !kept.contains(a)) {
        Some(a) => Error::InvalidArgument(format!(
            "row address {a} (fragment {}, offset {}) is deleted",
            a >> 32,
            a & 0xffff_ffff
        )),
        None => Error::InvalidArgument("a requested row address is deleted".into()),
    }
}
