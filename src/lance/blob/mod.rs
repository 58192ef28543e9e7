//! Blob columns: what their pages hold and where their bytes live.
//!
//! A blob column (a `large_binary` field with metadata `lance-encoding:blob`, or a field of
//! the `lance.blob.v2` extension type) stores one *descriptor* per row; the bytes live out of
//! line. Two formats exist:
//!
//! * **blob v1** (2.0, 2.1 files, and 2.2 files written with blob v1): a `(position, size)`
//!   pair of u64s; the bytes are `position .. position + size` of the row's data file. In
//!   2.1+ pages (`BlobLayout`) a null row is `size == 0 && position != 0` (the position holds
//!   the definition level); 2.0 pages (a packed struct of two u64s) write a null as
//!   `(1, 0)` too, which pylance reads back as a descriptor and `take_blobs` as `None`.
//! * **blob v2** (2.2 files): a row of a variable packed struct `kind: u8, position: u64,
//!   size: u64, blob_id: u32, blob_uri: utf8` (the string with a u32 length prefix), nulls
//!   in the page's definition levels. `kind` says where the bytes are: 0 inline (a range of
//!   the data file), 1 packed (a range of the sidecar file `blob_id`), 2 dedicated (all of
//!   the sidecar file `blob_id`), 3 external (a range of `blob_uri`). Sidecar files sit in a
//!   directory named after the data file (without `.lance`), named by the blob id's 32 bits
//!   least significant first, `.blob` ([`sidecar_name`]).
//!
//! The reader decodes a blob column's pages to a *raw* array ([`BlobFormat::raw_type`]:
//! 16-byte values for v1, the packed row bytes for v2); [`descriptors_from_raw`] turns it
//! into the descriptor struct ([`BlobFormat::descriptor_type`], the columns pylance's
//! `to_table` returns); [`locations`] turns descriptors into [`BlobLocation`]s, validated.
//! All pure.

mod descriptor;

pub(crate) use descriptor::{descriptors_from_raw, locations, BlobSource};

use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields};

/// The two blob descriptor formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BlobFormat {
    /// `(position, size)` in the data file.
    V1,
    /// `(kind, position, size, blob_id, blob_uri)`.
    V2,
}

impl BlobFormat {
    /// The Arrow type a blob column's pages decode to before [`descriptors_from_raw`].
    pub(crate) fn raw_type(self) -> DataType {
        match self {
            BlobFormat::V1 => DataType::FixedSizeBinary(16),
            BlobFormat::V2 => DataType::LargeBinary,
        }
    }

    /// The descriptor struct a blob column reads as (pylance 14.0.2's field names and types).
    pub(crate) fn descriptor_type(self) -> DataType {
        let field = |name: &str, t: DataType| Arc::new(Field::new(name, t, false));
        let fields: Fields = match self {
            BlobFormat::V1 => vec![
                field("position", DataType::UInt64),
                field("size", DataType::UInt64),
            ],
            BlobFormat::V2 => vec![
                field("kind", DataType::UInt8),
                field("position", DataType::UInt64),
                field("size", DataType::UInt64),
                field("blob_id", DataType::UInt32),
                field("blob_uri", DataType::Utf8),
            ],
        }
        .into();
        DataType::Struct(fields)
    }
}

/// Name of the sidecar file of blob `blob_id` (in the directory named after its data file):
/// the id's 32 bits, least significant first, then `.blob` — `1` is
/// `10000000000000000000000000000000.blob`.
pub(crate) fn sidecar_name(blob_id: u32) -> String {
    format!("{:032b}.blob", blob_id.reverse_bits())
}

/// The sidecar directory of a data file path relative to `data/` (its name without
/// `.lance`).
pub(crate) fn sidecar_dir(data_file: &str) -> &str {
    data_file.strip_suffix(".lance").unwrap_or(data_file)
}

#[cfg(test)]
mod tests;
