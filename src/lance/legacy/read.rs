//! [`LegacyFileReader`]: rows of a legacy v1 file. A read groups its rows by batch and walks
//! the field tree: fixed-width values are read by position (one wave), var-binary values by
//! their positions then their bytes, lists by their offsets then their items — as many
//! waves as the nesting forces, all fields and batches of one level in flight together.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::{
    new_empty_array, Array, ArrayRef, DictionaryArray, NullArray, RecordBatch, RecordBatchOptions,
    StructArray, UInt32Array,
};
use arrow_schema::{DataType, SchemaRef};
use bytes::Bytes;
use futures::future::{try_join_all, BoxFuture};
use futures::FutureExt;
use object_store::path::Path;

use super::decode::{
    conform_item, decode_binary, decode_fixed, fixed_width, list_children, make_list, read_offsets,
};
use super::format::LegacyPage;
use super::open::{open_legacy_file, LegacyCache, LegacyFile};
use super::pages::{batches_for, page_spans};
use crate::error::{Error, Result};
use crate::io::fetch::Tail;
use crate::io::{IoStats, ObjectVersion, RangeFetcher, ReadRequest};
use crate::lance::proto::file as file_pb;
use crate::lance::schema::{LanceField, LanceSchema};
use crate::lance::selection::RowSelection;

/// The schema a legacy dataset data file is read by: the dataset's fields it holds, and the
/// field-id range its page table covers.
#[derive(Debug, Clone)]
pub(crate) struct LegacySchemaHint {
    /// The dataset fields held by the file (pre-order, with ancestors).
    pub(crate) schema: file_pb::Schema,
    /// `min..max + 1` of the file's field ids.
    pub(crate) field_ids: Range<i32>,
}

/// An open legacy v1 file with the schema it is read by (its own, or its dataset's).
#[derive(Debug, Clone)]
pub(crate) struct LegacyFileReader {
    pub(crate) fetcher: RangeFetcher,
    pub(crate) path: Path,
    pub(crate) version: ObjectVersion,
    pub(crate) file: Arc<LegacyFile>,
    pub(crate) schema: Arc<LanceSchema>,
}

/// The value ranges of one batch that a read needs from a field's page.
#[derive(Debug, Clone)]
struct Part {
    batch: usize,
    runs: Vec<Range<u64>>,
}

impl LegacyFileReader {
    /// Open the legacy file at `path` through `cache` (see [`open_legacy_file`]), read by
    /// the dataset schema of `hint`, or by the file's own schema without one.
    pub(crate) async fn open(
        fetcher: RangeFetcher,
        path: Path,
        size_hint: Option<u64>,
        cache: &LegacyCache,
        hint: Option<LegacySchemaHint>,
        prefetched: Option<Tail>,
        stats: &IoStats,
    ) -> Result<Self> {
        let field_ids = hint.as_ref().map(|h| h.field_ids.clone());
        let file = open_legacy_file(
            &fetcher, &path, size_hint, field_ids, cache, prefetched, stats,
        )
        .await?;
        let schema = match &hint {
            Some(h) => LanceSchema::from_proto(&h.schema)?,
            None => file.own_schema()?.ok_or_else(|| {
                Error::unsupported(
                    "legacy data file without its own schema: read it through its dataset",
                )
                .at(path.as_ref(), None)
            })?,
        };
        let version = ObjectVersion {
            size: file.object_size,
            etag: file.etag.clone(),
        };
        fetcher.expect_version(&path, &version);
        Ok(Self {
            fetcher,
            path,
            version,
            file,
            schema: Arc::new(schema),
        })
    }

    /// The schema reads are typed by.
    pub(crate) fn schema(&self) -> &LanceSchema {
        &self.schema
    }

    /// The schema as Arrow.
    pub(crate) fn arrow_schema(&self) -> SchemaRef {
        Arc::clone(&self.schema.arrow)
    }

    /// Rows in the file.
    pub(crate) fn num_rows(&self) -> u64 {
        self.file.metadata.num_rows()
    }

    /// Object path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The decoded file.
    pub(crate) fn file(&self) -> &Arc<LegacyFile> {
        &self.file
    }

    /// Byte ranges of the pages of field `field_id` holding `rows` (the field's page of
    /// each batch).
    pub(crate) fn field_page_ranges(&self, field_id: i32, rows: Range<u64>) -> Vec<Range<u64>> {
        let batches = batches_for(&self.file.metadata, &rows);
        page_spans(
            &self.file.page_table,
            field_id,
            batches,
            self.file.data_end(),
        )
    }

    /// Read `selection` of the top-level fields `columns` (indices into the schema).
    pub(crate) async fn read_rows(
        &self,
        columns: &[usize],
        selection: &RowSelection,
        stats: &IoStats,
    ) -> Result<RecordBatch> {
        let (runs, repeat) = normalize(selection, self.num_rows())?;
        let parts = self.split_by_batch(&runs);
        let fields: Vec<&LanceField> = columns
            .iter()
            .map(|&c| {
                self.schema.fields.get(c).ok_or_else(|| {
                    Error::InvalidArgument(format!(
                        "field index {c} out of range ({} fields)",
                        self.schema.fields.len()
                    ))
                })
            })
            .collect::<Result<_>>()?;
        let reads = fields
            .iter()
            .map(|f| self.read_column(f, parts.clone(), stats));
        let mut arrays = try_join_all(reads).await?;
        if let Some(indices) = repeat {
            for a in arrays.iter_mut() {
                *a = arrow_select::take::take(a.as_ref(), &indices, None)?;
            }
        }
        let schema = Arc::new(arrow_schema::Schema::new(
            fields.iter().map(|f| f.to_arrow()).collect::<Vec<_>>(),
        ));
        let rows = repeat_len(&runs, selection);
        Ok(RecordBatch::try_new_with_options(
            schema,
            arrays,
            &RecordBatchOptions::new().with_row_count(Some(rows)),
        )?)
    }

    /// One top-level field: its parts, concatenated, typed as the schema says.
    async fn read_column(
        &self,
        field: &LanceField,
        parts: Vec<Part>,
        stats: &IoStats,
    ) -> Result<ArrayRef> {
        let pieces = self
            .read_node(field, parts, stats)
            .await
            .map_err(|e| e.context(format!("field {:?} (id {})", field.name, field.id)))?;
        let refs: Vec<&dyn Array> = pieces.iter().map(|a| a.as_ref()).collect();
        let all = if refs.is_empty() {
            new_empty_array(&field.data_type)
        } else {
            arrow_select::concat::concat(&refs)?
        };
        conform_item(all, &field.data_type)
    }

    /// Batch-local runs of `runs` (sorted, disjoint rows of the file).
    fn split_by_batch(&self, runs: &[Range<u64>]) -> Vec<Part> {
        let metadata = &self.file.metadata;
        let mut parts = Vec::new();
        for batch in 0..metadata.num_batches() {
            let rows = metadata.batch_rows(batch);
            let local: Vec<Range<u64>> = runs
                .iter()
                .filter(|r| r.start < rows.end && r.end > rows.start)
                .map(|r| r.start.max(rows.start) - rows.start..r.end.min(rows.end) - rows.start)
                .collect();
            if !local.is_empty() {
                parts.push(Part { batch, runs: local });
            }
        }
        parts
    }

    /// One array per part.
    fn read_node<'a>(
        &'a self,
        field: &'a LanceField,
        parts: Vec<Part>,
        stats: &'a IoStats,
    ) -> BoxFuture<'a, Result<Vec<ArrayRef>>> {
        async move {
            match &field.data_type {
                DataType::Null => Ok(parts
                    .iter()
                    .map(|p| Arc::new(NullArray::new(total(&p.runs) as usize)) as ArrayRef)
                    .collect()),
                DataType::Struct(_) => self.read_struct(field, parts, stats).await,
                DataType::List(_) | DataType::LargeList(_) => {
                    self.read_list(field, parts, stats).await
                }
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary => {
                    self.read_binary(field, parts, stats).await
                }
                DataType::Dictionary(key, _) => {
                    self.read_dictionary(field, key, parts, stats).await
                }
                t if fixed_width(t).is_some() => self.read_fixed(field, t, &parts, stats).await,
                t => Err(Error::unsupported(format!("legacy pages of type {t}"))),
            }
        }
        .boxed()
    }

    /// The page of `field` in `batch`.
    fn page(&self, field: &LanceField, batch: usize) -> Result<LegacyPage> {
        self.file.page_table.page(field.id, batch).ok_or_else(|| {
            Error::corrupt(format!(
                "no page for field {} in batch {batch} (the page table covers ids {:?})",
                field.id, self.file.field_ids
            ))
        })
    }

    /// Absolute byte ranges of values `runs` of `page` (`width` per value), checked to lie
    /// in the page (`extra` values past `length` allowed, for offsets) and the data region.
    fn value_ranges(
        &self,
        page: LegacyPage,
        runs: &[Range<u64>],
        width: super::decode::Width,
        extra: u64,
    ) -> Result<Vec<Range<u64>>> {
        // The whole page (`length` values) must lie in the data region.
        let page_end = width
            .byte_range(&(0..page.length.saturating_add(extra)))
            .and_then(|b| page.position.checked_add(b.end));
        crate::ensure_corrupt!(
            page_end.is_some_and(|end| end <= self.file.data_end()),
            "page at {} of {} values runs past the data region 0..{}",
            page.position,
            page.length,
            self.file.data_end()
        );
        runs.iter()
            .map(|r| {
                crate::ensure_corrupt!(
                    r.end <= page.length + extra,
                    "values {r:?} are past the {} values of the page at {}",
                    page.length,
                    page.position
                );
                let bytes = width
                    .byte_range(r)
                    .and_then(|b| {
                        Some(
                            page.position.checked_add(b.start)?
                                ..page.position.checked_add(b.end)?,
                        )
                    })
                    .ok_or_else(|| Error::corrupt("page value range overflows"))?;
                self.check_data(&bytes)?;
                Ok(bytes)
            })
            .collect()
    }

    fn check_data(&self, range: &Range<u64>) -> Result<()> {
        crate::ensure_corrupt!(
            range.start <= range.end && range.end <= self.file.data_end(),
            "page bytes {range:?} are not inside the data region 0..{}",
            self.file.data_end()
        );
        Ok(())
    }

    /// The bytes of `ranges` (from the open's reads when they hold them), one wave.
    async fn get(&self, ranges: &[Range<u64>], stats: &IoStats) -> Result<Vec<Bytes>> {
        let mut out: Vec<Option<Bytes>> = ranges
            .iter()
            .map(|r| {
                if r.start == r.end {
                    Some(Bytes::new())
                } else {
                    self.file.tail.slice(r)
                }
            })
            .collect();
        let missing: Vec<usize> = (0..ranges.len()).filter(|&i| out[i].is_none()).collect();
        if !missing.is_empty() {
            let requests: Vec<ReadRequest> = missing
                .iter()
                .map(|&i| ReadRequest {
                    path: self.path.clone(),
                    range: ranges[i].clone(),
                    object_size: Some(self.version.size),
                })
                .collect();
            let fetched = self.fetcher.fetch(&requests, stats).await?;
            for (i, bytes) in missing.into_iter().zip(fetched) {
                out[i] = Some(bytes);
            }
        }
        Ok(out.into_iter().map(Option::unwrap_or_default).collect())
    }

    async fn read_fixed(
        &self,
        field: &LanceField,
        data_type: &DataType,
        parts: &[Part],
        stats: &IoStats,
    ) -> Result<Vec<ArrayRef>> {
        let width = fixed_width(data_type).ok_or_else(|| Error::unsupported("not fixed width"))?;
        let mut ranges = Vec::new();
        for p in parts {
            let page = self.page(field, p.batch)?;
            ranges.extend(self.value_ranges(page, &p.runs, width, 0)?);
        }
        let mut bytes = self.get(&ranges, stats).await?.into_iter();
        parts
            .iter()
            .map(|p| {
                let runs: Vec<(Range<u64>, Bytes)> = p
                    .runs
                    .iter()
                    .map(|r| (r.clone(), bytes.next().unwrap_or_default()))
                    .collect();
                decode_fixed(data_type, &runs)
            })
            .collect()
    }

    /// Offsets `r.start..=r.end` of every run (i64 positions or list offsets).
    async fn read_offsets_of(
        &self,
        field: &LanceField,
        parts: &[Part],
        wide: bool,
        extra: u64,
        stats: &IoStats,
    ) -> Result<Vec<Vec<Vec<u64>>>> {
        let width = super::decode::Width::Bytes(if wide { 8 } else { 4 });
        let mut ranges = Vec::new();
        for p in parts {
            let page = self.page(field, p.batch)?;
            let with_end: Vec<Range<u64>> = p.runs.iter().map(|r| r.start..r.end + 1).collect();
            ranges.extend(self.value_ranges(page, &with_end, width, extra)?);
        }
        let mut bytes = self.get(&ranges, stats).await?.into_iter();
        parts
            .iter()
            .map(|p| {
                p.runs
                    .iter()
                    .map(|_| read_offsets(&bytes.next().unwrap_or_default(), wide))
                    .collect()
            })
            .collect()
    }

    async fn read_binary(
        &self,
        field: &LanceField,
        parts: Vec<Part>,
        stats: &IoStats,
    ) -> Result<Vec<ArrayRef>> {
        // A page of n values holds n + 1 positions.
        let positions = self.read_offsets_of(field, &parts, true, 1, stats).await?;
        let mut ranges = Vec::new();
        for run in positions.iter().flatten() {
            let range = run[0]..run[run.len() - 1];
            self.check_data(&range)?;
            ranges.push(range);
        }
        let mut bytes = self.get(&ranges, stats).await?.into_iter();
        positions
            .into_iter()
            .map(|runs| {
                let runs: Vec<(Vec<u64>, Bytes)> = runs
                    .into_iter()
                    .map(|p| (p, bytes.next().unwrap_or_default()))
                    .collect();
                decode_binary(&field.data_type, field.nullable, &runs)
            })
            .collect()
    }

    async fn read_list(
        &self,
        field: &LanceField,
        parts: Vec<Part>,
        stats: &IoStats,
    ) -> Result<Vec<ArrayRef>> {
        let [item] = field.children.as_slice() else {
            return Err(Error::corrupt("a list field without exactly one child"));
        };
        let wide = matches!(field.data_type, DataType::LargeList(_));
        // A list page of n rows holds n + 1 offsets.
        let offsets = self.read_offsets_of(field, &parts, wide, 0, stats).await?;
        let mut child_parts = Vec::with_capacity(parts.len());
        let mut chained = Vec::with_capacity(parts.len());
        for (p, runs) in parts.iter().zip(&offsets) {
            let (children, list_offsets) = list_children(runs)?;
            child_parts.push(Part {
                batch: p.batch,
                runs: children,
            });
            chained.push(list_offsets);
        }
        let items = self.read_node(item, child_parts, stats).await?;
        chained
            .into_iter()
            .zip(items)
            .map(|(o, values)| make_list(&field.data_type, o, values))
            .collect()
    }

    async fn read_struct(
        &self,
        field: &LanceField,
        parts: Vec<Part>,
        stats: &IoStats,
    ) -> Result<Vec<ArrayRef>> {
        let DataType::Struct(fields) = &field.data_type else {
            return Err(Error::unsupported("not a struct"));
        };
        crate::ensure_corrupt!(
            fields.len() == field.children.len(),
            "struct type with {} fields but {} children",
            fields.len(),
            field.children.len()
        );
        let reads = field
            .children
            .iter()
            .map(|c| self.read_node(c, parts.clone(), stats));
        let children = try_join_all(reads).await?;
        (0..parts.len())
            .map(|i| {
                let arrays = children
                    .iter()
                    .zip(fields.iter())
                    .map(|(c, f)| conform_item(Arc::clone(&c[i]), f.data_type()))
                    .collect::<Result<Vec<_>>>()?;
                Ok(Arc::new(StructArray::try_new(fields.clone(), arrays, None)?) as ArrayRef)
            })
            .collect()
    }

    async fn read_dictionary(
        &self,
        field: &LanceField,
        key: &DataType,
        parts: Vec<Part>,
        stats: &IoStats,
    ) -> Result<Vec<ArrayRef>> {
        let values = self.file.dictionaries.get(&field.id).ok_or_else(|| {
            Error::unsupported(format!(
                "dictionary field {} of a legacy file without its own dictionary",
                field.id
            ))
        })?;
        let keys = self.read_fixed(field, key, &parts, stats).await?;
        keys.into_iter()
            .map(|k| {
                let data = k
                    .to_data()
                    .into_builder()
                    .data_type(field.data_type.clone())
                    .child_data(vec![values.to_data()])
                    .build()?;
                let array = arrow_array::make_array(data);
                check_keys(array.as_ref(), values.len())?;
                Ok(array)
            })
            .collect()
    }
}

/// Every dictionary key indexes a value.
fn check_keys(array: &dyn Array, values: usize) -> Result<()> {
    macro_rules! check {
        ($($t:ty),*) => {
            $(if let Some(d) = array.as_any().downcast_ref::<DictionaryArray<$t>>() {
                let keys = d.keys();
                for k in keys.iter().flatten() {
                    let k = i64::try_from(k).unwrap_or(-1);
                    crate::ensure_corrupt!(k >= 0 && (k as usize) < values, "dictionary key {k} of {values} values");
                }
                return Ok(());
            })*
        };
    }
    use arrow_array::types::*;
    check!(
        Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type
    );
    Err(Error::unsupported(format!(
        "dictionary of type {}",
        array.data_type()
    )))
}

fn total(runs: &[Range<u64>]) -> u64 {
    runs.iter().map(|r| r.end - r.start).sum()
}

/// Sorted, disjoint row runs of a selection, and the indices that repeat rows asked more
/// than once (`None` when no row repeats).
fn normalize(
    selection: &RowSelection,
    num_rows: u64,
) -> Result<(Vec<Range<u64>>, Option<UInt32Array>)> {
    match selection {
        RowSelection::Range(r) => {
            if r.start > r.end || r.end > num_rows {
                return Err(Error::InvalidArgument(format!(
                    "rows {r:?} are not inside the {num_rows} rows of the file"
                )));
            }
            Ok((
                if r.is_empty() {
                    vec![]
                } else {
                    vec![r.clone()]
                },
                None,
            ))
        }
        RowSelection::Rows(rows) => {
            let mut runs: Vec<Range<u64>> = Vec::new();
            let mut indices = Vec::with_capacity(rows.len());
            let mut repeats = false;
            let mut previous: Option<u64> = None;
            let mut unique = 0u32;
            for &row in rows {
                if row >= num_rows {
                    return Err(Error::InvalidArgument(format!(
                        "row {row} is not inside the {num_rows} rows of the file"
                    )));
                }
                if let Some(p) = previous {
                    if row < p {
                        return Err(Error::InvalidArgument("rows must be sorted".into()));
                    }
                    repeats |= row == p;
                }
                if previous != Some(row) {
                    unique += 1;
                    match runs.last_mut() {
                        Some(last) if last.end == row => last.end = row + 1,
                        _ => runs.push(row..row + 1),
                    }
                }
                previous = Some(row);
                indices.push(unique - 1);
            }
            Ok((runs, repeats.then(|| UInt32Array::from(indices))))
        }
    }
}

/// Rows the output has.
fn repeat_len(runs: &[Range<u64>], selection: &RowSelection) -> usize {
    match selection {
        RowSelection::Rows(rows) => rows.len(),
        RowSelection::Range(_) => total(runs) as usize,
    }
}
