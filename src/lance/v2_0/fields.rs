//! Fields of a 2.0 file over its columns: in 2.0 every field has a column of its own, in
//! schema pre-order (a struct's header column, then its children's; a list's offsets
//! column, then its item field's). A struct reads its children at the same rows; a list
//! reads its offsets, then its item field at the item rows those offsets name (positions in
//! the item column, counted from the first page's first item).

use std::ops::Range;
use std::sync::Arc;

use arrow_array::{
    new_empty_array, Array, ArrayRef, GenericListArray, OffsetSizeTrait, StructArray,
};
use arrow_buffer::{BooleanBufferBuilder, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Fields};

use super::arrow::to_array;
use super::binary::ItemsType;
use super::values::{count, decode, decode_offsets, Decoded};
use super::walk::{all, Walk};
use crate::error::{Error, Result};
use crate::lance::file::{ColumnInfo, FileMetadata};
use crate::lance::page::array_encoding::Node;
use crate::lance::page::PageLayout;
use crate::lance::schema::LanceField;

/// True for string / binary types.
fn is_binary_like(data_type: &DataType) -> bool {
    matches!(
        storage_type(data_type),
        DataType::Utf8 | DataType::Binary | DataType::LargeUtf8 | DataType::LargeBinary
    )
}

/// True when the column's pages are list offsets: a string / binary field written by the
/// early 2.0 writers (footer 0.3, lance ≤ 0.16) as a list of u8 (offsets here, bytes in the
/// next column). A column without pages follows the footer version.
fn is_list_column(metadata: &FileMetadata, column: usize) -> bool {
    match metadata.columns.get(column).and_then(|c| c.pages.first()) {
        Some(page) => {
            matches!(&page.layout, PageLayout::V2_0(n) if matches!(n.as_ref(), Node::List { .. }))
        }
        None => metadata.footer.major_version == 0 && metadata.footer.minor_version == 3,
    }
}

/// Physical columns of a field whose first column is `first`, in a 2.0 file.
pub(crate) fn column_count(field: &LanceField, metadata: &FileMetadata, first: usize) -> usize {
    if field.is_packed_struct() || field.is_blob() {
        return 1;
    }
    if field.children.is_empty() {
        let string_as_list = is_binary_like(&field.data_type) && is_list_column(metadata, first);
        return if string_as_list { 2 } else { 1 };
    }
    let mut next = first + 1;
    for child in &field.children {
        next += column_count(child, metadata, next);
    }
    next - first
}

/// First column of each top-level field; `Corrupt` when the schema does not account for
/// exactly the file's columns.
pub(crate) fn first_columns(metadata: &FileMetadata) -> Result<Vec<usize>> {
    let mut next = 0;
    let mut firsts = Vec::with_capacity(metadata.schema.fields.len());
    for field in &metadata.schema.fields {
        firsts.push(next);
        next += column_count(field, metadata, next);
    }
    crate::ensure_corrupt!(
        next == metadata.columns.len(),
        "the 2.0 schema needs {next} columns, the file has {}",
        metadata.columns.len()
    );
    Ok(firsts)
}

/// The type a field's pages decode to (dictionary fields: their value type).
pub(crate) fn storage_type(data_type: &DataType) -> &DataType {
    match data_type {
        DataType::Dictionary(_, values) => values,
        other => other,
    }
}

/// Reads fields of one 2.0 file during one [`Walk`].
pub(crate) struct FieldReader<'m> {
    /// The file metadata.
    pub(crate) metadata: &'m FileMetadata,
    /// Object path, for errors.
    pub(crate) path: &'m str,
}

impl FieldReader<'_> {
    /// `rows` (column rows, sorted, disjoint) of `field`, whose first column is `column`.
    pub(crate) fn read(
        &self,
        field: &LanceField,
        column: usize,
        rows: &[Range<u64>],
        w: &mut Walk<'_>,
    ) -> Result<Option<ArrayRef>> {
        let info = self.column(column)?;
        let total = info.pages.last().map_or(0, |p| p.rows.end);
        if let Some(last) = rows.last() {
            crate::ensure_corrupt!(
                last.end <= total,
                "rows up to {} of column {column}, which holds {total}",
                last.end
            );
        }
        if field.is_blob() {
            return self.read_blob(field, column, rows, w);
        }
        if field.is_packed_struct() {
            return Err(Error::unsupported(format!(
                "reading packed field {:?} of a 2.0 file",
                field.name
            )));
        }
        match &field.data_type {
            DataType::Struct(_) => self.read_struct(field, column, rows, w),
            DataType::List(_) | DataType::LargeList(_) => self.read_list(field, column, rows, w),
            t if is_binary_like(t) && is_list_column(self.metadata, column) => {
                self.read_string_list(field, column, rows, w)
            }
            _ if field.children.is_empty() => self.read_leaf(field, column, rows, w),
            other => Err(Error::unsupported(format!(
                "{other} field {:?} in a 2.0 file",
                field.name
            ))),
        }
    }

    fn column(&self, column: usize) -> Result<&ColumnInfo> {
        self.metadata.columns.get(column).ok_or_else(|| {
            Error::corrupt(format!(
                "schema names column {column}, the file has {}",
                self.metadata.columns.len()
            ))
        })
    }

    /// Page-local rows of each page `rows` touch.
    fn page_rows(info: &ColumnInfo, rows: &[Range<u64>]) -> Vec<(usize, Vec<Range<u64>>)> {
        let mut out: Vec<(usize, Vec<Range<u64>>)> = Vec::new();
        for r in rows {
            for page in info.pages_for(r.clone()) {
                let span = &info.pages[page].rows;
                let local = r.start.max(span.start) - span.start..r.end.min(span.end) - span.start;
                if local.start >= local.end {
                    continue;
                }
                match out.last_mut() {
                    Some((p, ranges)) if *p == page => ranges.push(local),
                    _ => out.push((page, vec![local])),
                }
            }
        }
        out
    }

    fn node<'n>(&self, info: &'n ColumnInfo, page: usize) -> Result<&'n Node> {
        match &info.pages[page].layout {
            PageLayout::V2_0(node) => Ok(node),
            other => Err(Error::corrupt(format!(
                "{} page in a 2.0 file",
                other.name()
            ))),
        }
    }

    fn page_error(&self, e: Error, info: &ColumnInfo, column: usize, page: usize) -> Error {
        let buffers = &info.pages[page].buffers;
        let span = buffers
            .iter()
            .map(|b| b.start)
            .min()
            .zip(buffers.iter().map(|b| b.end).max());
        e.context(format!("column {column} page {page}"))
            .at(self.path, span.map(|(s, e)| s..e))
    }

    fn read_leaf(
        &self,
        field: &LanceField,
        column: usize,
        rows: &[Range<u64>],
        w: &mut Walk<'_>,
    ) -> Result<Option<ArrayRef>> {
        let shifted = !matches!(field.data_type, DataType::Dictionary(..));
        self.read_values(storage_type(&field.data_type), shifted, column, rows, w)
    }

    /// A blob field: its raw descriptors (a packed struct of two u64s per row) as the
    /// descriptor struct (a `(1, 0)` null kept, as pylance reads 2.0 pages).
    fn read_blob(
        &self,
        field: &LanceField,
        column: usize,
        rows: &[Range<u64>],
        w: &mut Walk<'_>,
    ) -> Result<Option<ArrayRef>> {
        let format = field.blob_format();
        let raw = self.read_values(&format.raw_type(), true, column, rows, w)?;
        raw.map(|raw| crate::lance::blob::descriptors_from_raw(raw.as_ref(), format, false))
            .transpose()
    }

    fn read_values(
        &self,
        value_type: &DataType,
        shifted: bool,
        column: usize,
        rows: &[Range<u64>],
        w: &mut Walk<'_>,
    ) -> Result<Option<ArrayRef>> {
        let info = self.column(column)?;
        let items = ItemsType {
            value_type,
            shifted,
        };
        let mut arrays = Vec::new();
        for (page, local) in Self::page_rows(info, rows) {
            w.page = (column, page);
            let array = self
                .node(info, page)
                .and_then(|node| decode(node, &local, w, &items))
                .and_then(|d| d.map(|d| to_array(d, value_type)).transpose())
                .map_err(|e| self.page_error(e, info, column, page))?;
            arrays.push(array);
        }
        all(arrays).map(|a| concat(a, value_type)).transpose()
    }

    fn read_struct(
        &self,
        field: &LanceField,
        column: usize,
        rows: &[Range<u64>],
        w: &mut Walk<'_>,
    ) -> Result<Option<ArrayRef>> {
        let mut child_column = column + 1;
        let mut children = Vec::with_capacity(field.children.len());
        for child in &field.children {
            children.push(self.read(child, child_column, rows, w)?);
            child_column += column_count(child, self.metadata, child_column);
        }
        let Some(children) = all(children) else {
            return Ok(None);
        };
        let len = count(rows) as usize;
        if children.is_empty() {
            return Ok(Some(Arc::new(StructArray::new_empty_fields(len, None))));
        }
        let fields: Fields = field
            .children
            .iter()
            .zip(&children)
            .map(|(f, a)| {
                Field::new(&f.name, a.data_type().clone(), f.nullable)
                    .with_metadata(f.metadata.clone())
            })
            .collect();
        for a in &children {
            crate::ensure_corrupt!(
                a.len() == len,
                "struct {:?}: a child has {} rows, the struct {len}",
                field.name,
                a.len()
            );
        }
        let array = StructArray::try_new(fields, children, None)
            .map_err(|e| Error::corrupt(format!("struct {:?}: {e}", field.name)).with_source(e))?;
        Ok(Some(Arc::new(array)))
    }

    /// A string / binary field stored as a list of u8 (early 2.0 writers).
    fn read_string_list(
        &self,
        field: &LanceField,
        column: usize,
        rows: &[Range<u64>],
        w: &mut Walk<'_>,
    ) -> Result<Option<ArrayRef>> {
        let Some(lists) = self.list_offsets(column, rows, w)? else {
            return Ok(None);
        };
        let info = self.column(column + 1)?;
        let total = info.pages.last().map_or(0, |p| p.rows.end);
        if let Some(last) = lists.item_rows.last() {
            crate::ensure_corrupt!(
                last.end <= total,
                "bytes up to {} of column {}, which holds {total}",
                last.end,
                column + 1
            );
        }
        let plain = ItemsType {
            value_type: &DataType::UInt8,
            shifted: false,
        };
        let mut pieces = Vec::new();
        for (page, local) in Self::page_rows(info, &lists.item_rows) {
            w.page = (column + 1, page);
            let piece = self
                .node(info, page)
                .and_then(|node| decode(node, &local, w, &plain))
                .map_err(|e| self.page_error(e, info, column + 1, page))?;
            pieces.push(piece);
        }
        let Some(pieces) = all(pieces) else {
            return Ok(None);
        };
        let mut bytes = arrow_buffer::MutableBuffer::new(0);
        for piece in pieces {
            match piece {
                Decoded::Fixed { bits: 8, data, .. } => bytes.extend_from_slice(&data),
                _ => return Err(Error::corrupt("string bytes are not 8-bit values")),
            }
        }
        let validity = (!lists.validity.iter().all(|v| *v)).then(|| {
            let mut b = BooleanBufferBuilder::new(lists.validity.len());
            lists.validity.iter().for_each(|v| b.append(*v));
            b.finish()
        });
        let value_type = storage_type(&field.data_type);
        let offsets = if lists.offsets.is_empty() {
            vec![0]
        } else {
            lists.offsets
        };
        to_array(
            Decoded::Variable {
                offsets,
                data: bytes.into(),
                validity,
            },
            value_type,
        )
        .map(Some)
    }

    /// Offsets of `rows` of a list column; `None` until known.
    fn list_offsets(
        &self,
        column: usize,
        rows: &[Range<u64>],
        w: &mut Walk<'_>,
    ) -> Result<Option<ListParts>> {
        let info = self.column(column)?;
        let mut lists = ListParts::default();
        let mut pending = false;
        for (page, local) in Self::page_rows(info, rows) {
            w.page = (column, page);
            let done = self
                .list_page(info, page, &local, w, &mut lists)
                .map_err(|e| self.page_error(e, info, column, page))?;
            pending |= !done;
        }
        Ok((!pending).then_some(lists))
    }

    fn read_list(
        &self,
        field: &LanceField,
        column: usize,
        rows: &[Range<u64>],
        w: &mut Walk<'_>,
    ) -> Result<Option<ArrayRef>> {
        let item = field.children.first().ok_or_else(|| {
            Error::corrupt(format!("list field {:?} has no item field", field.name))
        })?;
        let Some(lists) = self.list_offsets(column, rows, w)? else {
            return Ok(None);
        };
        let Some(values) = self.read(item, column + 1, &lists.item_rows, w)? else {
            return Ok(None);
        };
        lists.finish(field, item, values).map(Some)
    }

    /// Offsets of `local` rows of one list page into `lists`; false when not yet known.
    fn list_page(
        &self,
        info: &ColumnInfo,
        page: usize,
        local: &[Range<u64>],
        w: &mut Walk<'_>,
        lists: &mut ListParts,
    ) -> Result<bool> {
        let Node::List {
            offsets,
            null_offset_adjustment,
            num_items,
        } = self.node(info, page)?
        else {
            return Err(Error::corrupt("list field over a page that is not a list"));
        };
        let mut first_item = 0u64;
        for p in &info.pages[..page] {
            if let PageLayout::V2_0(n) = &p.layout {
                if let Node::List { num_items, .. } = n.as_ref() {
                    first_item = first_item
                        .checked_add(*num_items)
                        .ok_or_else(|| Error::corrupt("list item count overflows"))?;
                }
            }
        }
        let Some(ends) = decode_offsets(offsets, local, w, "list offsets")? else {
            return Ok(false);
        };
        lists.extend(
            local,
            &ends,
            *null_offset_adjustment,
            *num_items,
            first_item,
        )?;
        Ok(true)
    }
}

/// Offsets, validity and item rows of the lists read so far.
#[derive(Default)]
struct ListParts {
    offsets: Vec<u64>,
    validity: Vec<bool>,
    item_rows: Vec<Range<u64>>,
}

impl ListParts {
    fn extend(
        &mut self,
        local: &[Range<u64>],
        ends: &[u64],
        adjustment: u64,
        num_items: u64,
        first_item: u64,
    ) -> Result<()> {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        let normalize = |v: u64| -> Result<(bool, u64)> {
            let (valid, end) = if v >= adjustment {
                (false, v - adjustment)
            } else {
                (true, v)
            };
            crate::ensure_corrupt!(
                end <= num_items,
                "list offset {end} beyond the page's {num_items} items"
            );
            Ok((valid, end))
        };
        let mut at = 0usize;
        for r in local {
            let n = (r.end - r.start) as usize;
            let base = if r.start == 0 {
                0
            } else {
                at += 1;
                normalize(
                    *ends
                        .get(at - 1)
                        .ok_or_else(|| Error::corrupt("too few list offsets"))?,
                )?
                .1
            };
            let run = ends
                .get(at..at + n)
                .ok_or_else(|| Error::corrupt("too few list offsets"))?;
            at += n;
            let mut previous = base;
            let mut out = *self.offsets.last().unwrap_or(&0);
            for &v in run {
                let (valid, end) = normalize(v)?;
                crate::ensure_corrupt!(
                    end >= previous,
                    "list offsets decrease ({end} after {previous})"
                );
                out += end - previous;
                self.offsets.push(out);
                self.validity.push(valid);
                previous = end;
            }
            if base < previous {
                let range = first_item + base..first_item + previous;
                match self.item_rows.last_mut() {
                    Some(last) if last.end == range.start => last.end = range.end,
                    _ => self.item_rows.push(range),
                }
            }
        }
        Ok(())
    }

    fn finish(self, field: &LanceField, item: &LanceField, values: ArrayRef) -> Result<ArrayRef> {
        if self.offsets.is_empty() {
            return Ok(new_empty_array(&field.data_type));
        }
        let total = *self.offsets.last().unwrap_or(&0);
        crate::ensure_corrupt!(
            values.len() as u64 == total,
            "list {:?}: {} items read for offsets spanning {total}",
            field.name,
            values.len()
        );
        let item_field = Arc::new(
            Field::new(&item.name, values.data_type().clone(), item.nullable)
                .with_metadata(item.metadata.clone()),
        );
        let nulls = if self.validity.iter().all(|v| *v) {
            None
        } else {
            let mut b = BooleanBufferBuilder::new(self.validity.len());
            self.validity.iter().for_each(|v| b.append(*v));
            Some(NullBuffer::new(b.finish()))
        };
        let bad =
            |e: arrow_schema::ArrowError| Error::corrupt(format!("list {:?}: {e}", field.name));
        Ok(match field.data_type {
            DataType::LargeList(_) => {
                list_array::<i64>(item_field, &self.offsets, values, nulls).map_err(bad)?
            }
            _ => {
                crate::ensure_corrupt!(total <= i32::MAX as u64, "list of more than 2^31 items");
                list_array::<i32>(item_field, &self.offsets, values, nulls).map_err(bad)?
            }
        })
    }
}

/// A list array of `O`-sized offsets (the caller checked they fit).
fn list_array<O: OffsetSizeTrait>(
    item_field: Arc<Field>,
    offsets: &[u64],
    values: ArrayRef,
    nulls: Option<NullBuffer>,
) -> std::result::Result<ArrayRef, arrow_schema::ArrowError> {
    let offsets = offsets
        .iter()
        .map(|&o| usize::try_from(o).ok().and_then(O::from_usize))
        .collect::<Option<Vec<O>>>()
        .ok_or_else(|| {
            arrow_schema::ArrowError::InvalidArgumentError("list offset overflows".into())
        })?;
    let array = GenericListArray::<O>::try_new(
        item_field,
        OffsetBuffer::new(ScalarBuffer::from(offsets)),
        values,
        nulls,
    )?;
    Ok(Arc::new(array))
}

fn concat(arrays: Vec<ArrayRef>, data_type: &DataType) -> Result<ArrayRef> {
    match arrays.len() {
        0 => Ok(new_empty_array(data_type)),
        1 => Ok(arrays
            .into_iter()
            .next()
            .unwrap_or_else(|| new_empty_array(data_type))),
        _ => {
            let refs: Vec<&dyn Array> = arrays.iter().map(|a| a.as_ref()).collect();
            Ok(arrow_select::concat::concat(&refs)?)
        }
    }
}
