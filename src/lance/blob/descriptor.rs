//! Blob descriptors: decoded from a blob column's raw page values, turned into locations.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::builder::{StringBuilder, UInt32Builder, UInt64Builder, UInt8Builder};
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, StructArray};
use arrow_buffer::NullBuffer;
use arrow_schema::DataType;

use super::BlobFormat;
use crate::error::{Error, Result};

/// Bytes of a v2 descriptor row before its URI: kind, position, size, blob id, URI length.
const V2_FIXED_BYTES: usize = 1 + 8 + 8 + 4 + 4;

/// Where a blob's bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BlobSource {
    /// A range of the row's data file (blob v1; blob v2 inline).
    DataFile,
    /// A range of the sidecar file `blob_id` next to the row's data file (packed, or the
    /// whole file for a dedicated blob).
    Sidecar {
        /// The blob id the sidecar file is named by.
        blob_id: u32,
        /// True for a dedicated blob (the whole file), false for a packed one.
        dedicated: bool,
    },
    /// A range of an object outside the dataset.
    External {
        /// The object's URI.
        uri: String,
    },
}

/// One non-null blob: where it is, its range there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BlobLocation {
    /// The object holding the bytes.
    pub source: BlobSource,
    /// First byte in that object.
    pub position: u64,
    /// Length in bytes.
    pub size: u64,
}

impl BlobLocation {
    /// The blob's byte range in its object (`Corrupt` when it overflows u64).
    pub(crate) fn range(&self) -> Result<Range<u64>> {
        let end = self.position.checked_add(self.size).ok_or_else(|| {
            Error::corrupt(format!(
                "blob descriptor position {} + size {} overflows",
                self.position, self.size
            ))
        })?;
        Ok(self.position..end)
    }

    /// Check the blob lies inside an object of `object_size` bytes: `Corrupt` naming
    /// `object` and the range otherwise.
    pub(crate) fn check_inside(&self, object: &str, object_size: u64) -> Result<()> {
        let range = self.range().map_err(|e| e.at(object, None))?;
        if range.end > object_size {
            return Err(Error::corrupt(format!(
                "blob descriptor points past the end of the {object_size}-byte object"
            ))
            .at(object, Some(range)));
        }
        Ok(())
    }
}

/// The descriptor struct of `raw` (a blob column's decoded page values, of
/// [`BlobFormat::raw_type`]). `v1_nulls`: a v1 `(position != 0, size 0)` is null (2.1+
/// `BlobLayout` pages; 2.0 pages keep it, as pylance reads them).
pub(crate) fn descriptors_from_raw(
    raw: &dyn Array,
    format: BlobFormat,
    v1_nulls: bool,
) -> Result<ArrayRef> {
    match (format, raw.data_type()) {
        (BlobFormat::V1, DataType::FixedSizeBinary(16)) => v1_descriptors(raw, v1_nulls),
        (BlobFormat::V2, DataType::LargeBinary) => v2_descriptors(raw),
        (_, other) => Err(Error::corrupt(format!(
            "blob {format:?} descriptors decoded as {other}"
        ))),
    }
}

fn v1_descriptors(raw: &dyn Array, v1_nulls: bool) -> Result<ArrayRef> {
    let values = raw.as_fixed_size_binary();
    let mut positions = UInt64Builder::with_capacity(values.len());
    let mut sizes = UInt64Builder::with_capacity(values.len());
    let mut valid = Vec::with_capacity(values.len());
    for i in 0..values.len() {
        let (position, size) = if values.is_null(i) {
            (0, 0)
        } else {
            let v = values.value(i);
            (le_u64(&v[..8]), le_u64(&v[8..16]))
        };
        valid.push(values.is_valid(i) && !(v1_nulls && size == 0 && position != 0));
        positions.append_value(position);
        sizes.append_value(size);
    }
    let columns: Vec<ArrayRef> = vec![Arc::new(positions.finish()), Arc::new(sizes.finish())];
    struct_of(BlobFormat::V1, columns, valid)
}

fn v2_descriptors(raw: &dyn Array) -> Result<ArrayRef> {
    let rows = raw.as_binary::<i64>();
    let n = rows.len();
    let mut kinds = UInt8Builder::with_capacity(n);
    let mut positions = UInt64Builder::with_capacity(n);
    let mut sizes = UInt64Builder::with_capacity(n);
    let mut ids = UInt32Builder::with_capacity(n);
    let mut uris = StringBuilder::new();
    let mut valid = Vec::with_capacity(n);
    for i in 0..n {
        let row = if rows.is_null(i) {
            V2Row::default()
        } else {
            V2Row::parse(rows.value(i)).map_err(|e| e.context(format!("blob descriptor {i}")))?
        };
        valid.push(rows.is_valid(i));
        kinds.append_value(row.kind);
        positions.append_value(row.position);
        sizes.append_value(row.size);
        ids.append_value(row.blob_id);
        uris.append_value(row.uri);
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(kinds.finish()),
        Arc::new(positions.finish()),
        Arc::new(sizes.finish()),
        Arc::new(ids.finish()),
        Arc::new(uris.finish()),
    ];
    struct_of(BlobFormat::V2, columns, valid)
}

fn struct_of(format: BlobFormat, columns: Vec<ArrayRef>, valid: Vec<bool>) -> Result<ArrayRef> {
    let DataType::Struct(fields) = format.descriptor_type() else {
        return Err(Error::corrupt(
            "internal: blob descriptor type is not a struct",
        ));
    };
    let nulls = NullBuffer::from(valid);
    let nulls = (nulls.null_count() > 0).then_some(nulls);
    Ok(Arc::new(StructArray::try_new(fields, columns, nulls)?))
}

/// One v2 descriptor row.
#[derive(Debug, Default, PartialEq)]
struct V2Row<'a> {
    kind: u8,
    position: u64,
    size: u64,
    blob_id: u32,
    uri: &'a str,
}

impl<'a> V2Row<'a> {
    /// Parse one packed row, every length checked against the row's bytes.
    fn parse(row: &'a [u8]) -> Result<Self> {
        crate::ensure_corrupt!(
            row.len() >= V2_FIXED_BYTES,
            "a {}-byte row, shorter than the {V2_FIXED_BYTES} fixed bytes",
            row.len()
        );
        let uri_len = u32::from_le_bytes([row[21], row[22], row[23], row[24]]) as usize;
        crate::ensure_corrupt!(
            row.len() - V2_FIXED_BYTES == uri_len,
            "a {}-byte row with a {uri_len}-byte URI",
            row.len()
        );
        let uri = std::str::from_utf8(&row[V2_FIXED_BYTES..])
            .map_err(|e| Error::corrupt("blob URI is not UTF-8").with_source(e))?;
        Ok(Self {
            kind: row[0],
            position: le_u64(&row[1..9]),
            size: le_u64(&row[9..17]),
            blob_id: u32::from_le_bytes([row[17], row[18], row[19], row[20]]),
            uri,
        })
    }
}

fn le_u64(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(b)
}

/// Where each row's blob is (`None`: a null blob), from a descriptor struct of `format`.
/// A v1 `(position != 0, size 0)` is null (how 2.0 pages store nulls); an unknown v2 kind
/// is `Corrupt`; a dedicated blob must start at 0.
pub(crate) fn locations(
    descriptors: &dyn Array,
    format: BlobFormat,
) -> Result<Vec<Option<BlobLocation>>> {
    crate::ensure_corrupt!(
        descriptors.data_type() == &format.descriptor_type(),
        "blob descriptors of type {}",
        descriptors.data_type()
    );
    let s = descriptors.as_struct();
    let u64s = |i: usize| s.column(i).as_primitive::<arrow_array::types::UInt64Type>();
    (0..s.len())
        .map(|row| {
            if s.is_null(row) {
                return Ok(None);
            }
            match format {
                BlobFormat::V1 => {
                    let (position, size) = (u64s(0).value(row), u64s(1).value(row));
                    Ok((size > 0 || position == 0).then_some(BlobLocation {
                        source: BlobSource::DataFile,
                        position,
                        size,
                    }))
                }
                BlobFormat::V2 => v2_location(s, row).map(Some),
            }
        })
        .collect()
}

fn v2_location(s: &StructArray, row: usize) -> Result<BlobLocation> {
    use arrow_array::types::{UInt32Type, UInt64Type, UInt8Type};
    let kind = s.column(0).as_primitive::<UInt8Type>().value(row);
    let position = s.column(1).as_primitive::<UInt64Type>().value(row);
    let size = s.column(2).as_primitive::<UInt64Type>().value(row);
    let blob_id = s.column(3).as_primitive::<UInt32Type>().value(row);
    let source = match kind {
        0 => BlobSource::DataFile,
        1 | 2 => BlobSource::Sidecar {
            blob_id,
            dedicated: kind == 2,
        },
        3 => BlobSource::External {
            uri: s.column(4).as_string::<i32>().value(row).to_string(),
        },
        other => {
            return Err(Error::corrupt(format!(
            "blob descriptor {row} has kind {other} (0 inline, 1 packed, 2 dedicated, 3 external)"
        )))
        }
    };
    crate::ensure_corrupt!(
        kind != 2 || position == 0,
        "dedicated blob descriptor {row} starts at {position}, not 0"
    );
    Ok(BlobLocation {
        source,
        position,
        size,
    })
}

#[cfg(test)]
pub(super) fn v2_row_bytes(kind: u8, position: u64, size: u64, blob_id: u32, uri: &str) -> Vec<u8> {
    let mut out = vec![kind];
    out.extend_from_slice(&position.to_le_bytes());
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&blob_id.to_le_bytes());
    out.extend_from_slice(&(uri.len() as u32).to_le_bytes());
    out.extend_from_slice(uri.as_bytes());
    out
}
