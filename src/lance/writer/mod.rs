//! A small Lance v2 file writer (2.1 / 2.2 container, flat mini-block pages): enough for
//! the files lakeseek writes itself (BTree / list element index pages), readable by
//! pylance 14.0.2's `LanceFileReader` and by [`crate::lance::reader::LanceFileReader`].
//!
//! Layout as lance 14.0.2 writes it (lance-file-format.md 1.1): page buffers, each at a
//! multiple of 64; the schema (`FileDescriptor`, global buffer 0) right after the last
//! one; then the column metadata, the column metadata offset table, the global buffer
//! offset table and the 40-byte footer, without padding.
//!
//! Columns are flat (no lists or structs) of the types [`miniblock::supports`] accepts.
//! Rows are buffered per column and cut into disk pages of about `page_bytes`, so memory
//! stays bounded however many rows are written; the bytes go to any [`std::io::Write`].

pub(crate) mod miniblock;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, SchemaRef};
use prost::Message;

use crate::error::{Error, Result};
use crate::lance::file::MAGIC;
use crate::lance::proto::file::{
    column_metadata, encoding, ColumnMetadata, DirectEncoding, Encoding, Field, FileDescriptor,
    Schema,
};

/// Default bytes of buffered values per column before a disk page is cut.
pub(crate) const DEFAULT_PAGE_BYTES: usize = 8 << 20;

/// Alignment of every page and global buffer.
const BUFFER_ALIGN: u64 = 64;

/// Padding byte between buffers (lance writes 'H').
const PAD_BYTE: u8 = 0x48;

/// Which Lance file version to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WriteVersion {
    /// 2.1: u16 chunk words and buffer sizes.
    V2_1,
    /// 2.2: u32 chunk words and buffer sizes (pylance's default).
    V2_2,
}

impl WriteVersion {
    /// The version to write index files of a dataset whose data storage version is
    /// `dataset_version` ("2.1", "2.2", ...): 2.1 for 2.1, else 2.2 (lance maps 2.3 to
    /// 2.3 and 2.0 to 2.0, which this writer does not write; readers accept any 2.x).
    pub(crate) fn for_dataset(dataset_version: &str) -> Self {
        if dataset_version == "2.1" {
            WriteVersion::V2_1
        } else {
            WriteVersion::V2_2
        }
    }

    fn numbers(self) -> (u16, u16) {
        match self {
            WriteVersion::V2_1 => (2, 1),
            WriteVersion::V2_2 => (2, 2),
        }
    }
}

/// Per-column state: rows buffered for the next page and the pages written.
#[derive(Default)]
struct ColumnState {
    pending: Vec<ArrayRef>,
    pending_bytes: usize,
    pages: Vec<column_metadata::Page>,
    rows_written: u64,
}

/// Writes one Lance file to `sink`.
pub(crate) struct LanceFileWriter<W: Write> {
    sink: W,
    position: u64,
    version: WriteVersion,
    schema: SchemaRef,
    metadata: HashMap<String, Vec<u8>>,
    columns: Vec<ColumnState>,
    page_bytes: usize,
}

impl<W: Write> LanceFileWriter<W> {
    /// A writer of `schema` (flat columns of supported types) to `sink`.
    pub(crate) fn new(sink: W, schema: SchemaRef, version: WriteVersion) -> Result<Self> {
        for f in schema.fields() {
            if !miniblock::supports(f.data_type()) {
                return Err(Error::unsupported(format!(
                    "the Lance writer cannot write column {} of type {}",
                    f.name(),
                    f.data_type()
                )));
            }
        }
        Ok(Self {
            sink,
            position: 0,
            version,
            columns: schema
                .fields()
                .iter()
                .map(|_| ColumnState::default())
                .collect(),
            schema,
            metadata: HashMap::new(),
            page_bytes: DEFAULT_PAGE_BYTES,
        })
    }

    /// Cut disk pages at about `bytes` of buffered values per column.
    #[cfg(test)]
    pub(crate) fn with_page_bytes(mut self, bytes: usize) -> Self {
        self.page_bytes = bytes.max(1);
        self
    }

    /// Add a schema metadata entry (string value, as `add_schema_metadata` does).
    pub(crate) fn add_schema_metadata(&mut self, key: &str, value: &str) {
        self.metadata
            .insert(key.to_string(), value.as_bytes().to_vec());
    }

    /// Append `batch` (its columns must match the schema's types; nulls only in nullable
    /// columns).
    pub(crate) fn write_batch(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.num_columns() != self.columns.len() {
            return Err(Error::InvalidArgument(format!(
                "batch has {} columns, the file {}",
                batch.num_columns(),
                self.columns.len()
            )));
        }
        for (i, array) in batch.columns().iter().enumerate() {
            let field = self.schema.field(i);
            if array.data_type() != field.data_type() {
                return Err(Error::InvalidArgument(format!(
                    "column {} is {}, the file says {}",
                    field.name(),
                    array.data_type(),
                    field.data_type()
                )));
            }
            if !field.is_nullable() && array.null_count() > 0 {
                return Err(Error::InvalidArgument(format!(
                    "column {} is not nullable but the batch holds nulls",
                    field.name()
                )));
            }
            if array.is_empty() {
                continue;
            }
            let state = &mut self.columns[i];
            state.pending_bytes += value_bytes(array);
            state.pending.push(Arc::clone(array));
            if state.pending_bytes >= self.page_bytes {
                self.flush_column(i)?;
            }
        }
        Ok(())
    }

    /// Encode and write the buffered rows of column `i` as one page.
    fn flush_column(&mut self, i: usize) -> Result<()> {
        let pending = std::mem::take(&mut self.columns[i].pending);
        self.columns[i].pending_bytes = 0;
        if pending.is_empty() {
            return Ok(());
        }
        let refs: Vec<&dyn Array> = pending.iter().map(|a| a.as_ref()).collect();
        let array = arrow_select::concat::concat(&refs)?;
        drop(pending);
        let page = miniblock::encode_page(&array, self.version == WriteVersion::V2_2)?;
        let mut offsets = Vec::with_capacity(page.buffers.len());
        let mut sizes = Vec::with_capacity(page.buffers.len());
        for buffer in &page.buffers {
            offsets.push(self.position);
            sizes.push(buffer.len() as u64);
            self.write_aligned(buffer)?;
        }
        let state = &mut self.columns[i];
        state.pages.push(column_metadata::Page {
            buffer_offsets: offsets,
            buffer_sizes: sizes,
            length: page.rows,
            encoding: Some(direct(
                "/lance.encodings21.PageLayout",
                page.layout.encode_to_vec(),
            )),
            priority: state.rows_written,
        });
        state.rows_written += page.rows;
        Ok(())
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.sink.write_all(bytes)?;
        self.position += bytes.len() as u64;
        Ok(())
    }

    /// Write `bytes` and pad to the next multiple of 64.
    fn write_aligned(&mut self, bytes: &[u8]) -> Result<()> {
        self.write(bytes)?;
        let pad = (BUFFER_ALIGN - self.position % BUFFER_ALIGN) % BUFFER_ALIGN;
        self.write(&vec![PAD_BYTE; pad as usize])
    }

    /// Write the remaining pages, the schema, the metadata tables and the footer. Returns
    /// the sink and the file size.
    pub(crate) fn finish(mut self) -> Result<(W, u64)> {
        for i in 0..self.columns.len() {
            self.flush_column(i)?;
        }
        let rows = self.columns.first().map_or(0, |c| c.rows_written);
        if let Some(c) = self.columns.iter().find(|c| c.rows_written != rows) {
            return Err(Error::InvalidArgument(format!(
                "columns hold different row counts ({rows} and {})",
                c.rows_written
            )));
        }
        let descriptor = FileDescriptor {
            schema: Some(Schema {
                fields: lance_fields(&self.schema)?,
                metadata: self.metadata.clone(),
            }),
            length: rows,
        }
        .encode_to_vec();
        let schema_position = self.position;
        self.write(&descriptor)?;
        let column_meta_start = self.position;
        let mut table = Vec::new();
        for state in std::mem::take(&mut self.columns) {
            let meta = ColumnMetadata {
                encoding: Some(direct("/lance.encodings.ColumnEncoding", vec![0x0a, 0x00])),
                pages: state.pages,
                buffer_offsets: vec![],
                buffer_sizes: vec![],
            }
            .encode_to_vec();
            table.push((self.position, meta.len() as u64));
            self.write(&meta)?;
        }
        let cmo_start = self.position;
        for (position, size) in &table {
            self.write(&position.to_le_bytes())?;
            self.write(&size.to_le_bytes())?;
        }
        let gbo_start = self.position;
        self.write(&schema_position.to_le_bytes())?;
        self.write(&(descriptor.len() as u64).to_le_bytes())?;
        let (major, minor) = self.version.numbers();
        let mut footer = Vec::with_capacity(40);
        footer.extend_from_slice(&column_meta_start.to_le_bytes());
        footer.extend_from_slice(&cmo_start.to_le_bytes());
        footer.extend_from_slice(&gbo_start.to_le_bytes());
        footer.extend_from_slice(&1u32.to_le_bytes());
        footer.extend_from_slice(&(table.len() as u32).to_le_bytes());
        footer.extend_from_slice(&major.to_le_bytes());
        footer.extend_from_slice(&minor.to_le_bytes());
        footer.extend_from_slice(MAGIC);
        self.write(&footer)?;
        self.sink.flush()?;
        Ok((self.sink, self.position))
    }
}

/// Bytes the values of `array` occupy in a page (slices count only their own values).
fn value_bytes(array: &ArrayRef) -> usize {
    use arrow_array::cast::AsArray;
    match array.data_type() {
        DataType::Binary => {
            let o = array.as_binary::<i32>().value_offsets();
            (o[o.len() - 1] - o[0]) as usize + 4 * array.len()
        }
        DataType::Utf8 => {
            let o = array.as_string::<i32>().value_offsets();
            (o[o.len() - 1] - o[0]) as usize + 4 * array.len()
        }
        t => t.primitive_width().unwrap_or(8) * array.len(),
    }
}

/// A direct page/column encoding: a serialized `google.protobuf.Any`.
fn direct(type_url: &str, value: Vec<u8>) -> Encoding {
    let any = prost_types::Any {
        type_url: type_url.to_string(),
        value,
    };
    Encoding {
        location: Some(encoding::Location::Direct(DirectEncoding {
            encoding: any.encode_to_vec().into(),
        })),
    }
}

/// The Lance schema fields of a flat Arrow schema (ids 0.., top level), as pylance writes
/// them (legacy `encoding` PLAIN = 1 for fixed width, VAR_BINARY = 2 for binary/string).
fn lance_fields(schema: &SchemaRef) -> Result<Vec<Field>> {
    schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let (logical, legacy) = match f.data_type() {
                DataType::Int8 => ("int8", 1),
                DataType::Int16 => ("int16", 1),
                DataType::Int32 => ("int32", 1),
                DataType::Int64 => ("int64", 1),
                DataType::UInt8 => ("uint8", 1),
                DataType::UInt16 => ("uint16", 1),
                DataType::UInt32 => ("uint32", 1),
                DataType::UInt64 => ("uint64", 1),
                DataType::Float32 => ("float", 1),
                DataType::Float64 => ("double", 1),
                DataType::Binary => ("binary", 2),
                DataType::Utf8 => ("string", 2),
                other => {
                    return Err(Error::unsupported(format!(
                        "the Lance writer cannot write {other} columns"
                    )))
                }
            };
            Ok(Field {
                r#type: 0,
                name: f.name().clone(),
                id: i as i32,
                parent_id: -1,
                logical_type: logical.to_string(),
                nullable: f.is_nullable(),
                encoding: legacy,
                extension_name: String::new(),
                metadata: HashMap::new(),
                unenforced_primary_key: false,
                unenforced_primary_key_position: 0,
                unenforced_clustering_key: false,
                unenforced_clustering_key_position: 0,
            })
        })
        .collect()
}
