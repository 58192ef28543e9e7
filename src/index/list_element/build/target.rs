//! The target BTree's files from sorted entries (lance-index-format.md 1.2-1.5):
//! `page_data.lance` (values Binary nullable, ids UInt64), one BTree page per exact
//! `page_rows` rows (the last may be short), and `page_lookup.lance` (min, max,
//! null_count, page_idx per page; schema metadata `batch_size` and
//! `range_partitioned = false`), written to local temporary files.

use std::sync::Arc;

use arrow_array::builder::BinaryBuilder;
use arrow_array::{ArrayRef, BinaryArray, RecordBatch, UInt32Array, UInt64Array};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use super::sort::Entry;
use crate::error::Result;
use crate::lance::writer::{LanceFileWriter, WriteVersion};

/// File name of the target's pages.
pub(crate) const PAGE_DATA: &str = "page_data.lance";
/// File name of the target's page lookup.
pub(crate) const PAGE_LOOKUP: &str = "page_lookup.lance";

/// `page_data.lance`'s schema.
pub(crate) fn page_data_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("values", DataType::Binary, true),
        Field::new("ids", DataType::UInt64, false),
    ]))
}

/// `page_lookup.lance`'s schema.
pub(crate) fn page_lookup_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("min", DataType::Binary, true),
        Field::new("max", DataType::Binary, true),
        Field::new("null_count", DataType::UInt32, false),
        Field::new("page_idx", DataType::UInt32, false),
    ]))
}

/// The written target files.
#[derive(Debug)]
pub(crate) struct TargetFiles {
    /// Holds the two files until they are uploaded.
    pub(crate) dir: tempfile::TempDir,
    /// Entries written.
    pub(crate) entries: u64,
    /// BTree pages.
    pub(crate) pages: u32,
}

/// Page statistics accumulated while writing.
#[derive(Default)]
struct Lookup {
    min: Vec<Option<Vec<u8>>>,
    max: Vec<Option<Vec<u8>>>,
    null_count: Vec<u32>,
}

/// Write the target files of `entries` (sorted, nulls first) with `page_rows` rows per
/// BTree page.
pub(crate) fn write_target(
    entries: impl Iterator<Item = Result<Entry>>,
    page_rows: u32,
    version: WriteVersion,
) -> Result<TargetFiles> {
    let dir = tempfile::tempdir()?;
    let data_file = std::io::BufWriter::with_capacity(
        1 << 20,
        std::fs::File::create(dir.path().join(PAGE_DATA))?,
    );
    let mut data = LanceFileWriter::new(data_file, page_data_schema(), version)?;
    let mut lookup = Lookup::default();
    let mut page: Vec<Entry> = Vec::with_capacity(page_rows as usize);
    let mut total = 0u64;
    for entry in entries {
        page.push(entry?);
        total += 1;
        if page.len() == page_rows as usize {
            write_page(&mut data, &mut lookup, &mut page)?;
        }
    }
    if !page.is_empty() {
        write_page(&mut data, &mut lookup, &mut page)?;
    }
    data.finish()?;
    let pages = lookup.null_count.len() as u32;
    let lookup_file = std::fs::File::create(dir.path().join(PAGE_LOOKUP))?;
    let mut writer = LanceFileWriter::new(lookup_file, page_lookup_schema(), version)?;
    writer.add_schema_metadata("batch_size", &page_rows.to_string());
    writer.add_schema_metadata("range_partitioned", "false");
    let columns: Vec<ArrayRef> = vec![
        Arc::new(BinaryArray::from_iter(
            lookup.min.iter().map(|v| v.as_deref()),
        )),
        Arc::new(BinaryArray::from_iter(
            lookup.max.iter().map(|v| v.as_deref()),
        )),
        Arc::new(UInt32Array::from(lookup.null_count)),
        Arc::new(UInt32Array::from_iter_values(0..pages)),
    ];
    writer.write_batch(&RecordBatch::try_new(page_lookup_schema(), columns)?)?;
    writer.finish()?;
    Ok(TargetFiles {
        dir,
        entries: total,
        pages,
    })
}

fn write_page<W: std::io::Write>(
    data: &mut LanceFileWriter<W>,
    lookup: &mut Lookup,
    page: &mut Vec<Entry>,
) -> Result<()> {
    let bytes: usize = page
        .iter()
        .map(|e| e.value.as_ref().map_or(0, Vec::len))
        .sum();
    let mut values = BinaryBuilder::with_capacity(page.len(), bytes);
    for e in page.iter() {
        match &e.value {
            Some(v) => values.append_value(v),
            None => values.append_null(),
        }
    }
    let ids = UInt64Array::from_iter_values(page.iter().map(|e| e.id));
    lookup.min.push(page[0].value.clone());
    lookup.max.push(page[page.len() - 1].value.clone());
    lookup
        .null_count
        .push(page.iter().filter(|e| e.value.is_none()).count() as u32);
    let columns: Vec<ArrayRef> = vec![Arc::new(values.finish()), Arc::new(ids)];
    data.write_batch(&RecordBatch::try_new(page_data_schema(), columns)?)?;
    page.clear();
    Ok(())
}
