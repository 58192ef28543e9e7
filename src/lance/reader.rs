//! [`LanceFileReader`]: open a Lance v2 file and read rows of some columns with the fewest
//! requests — a cold read is at most three waves (tail, page init, chunks); with the
//! reader open and page init cached it is one.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchOptions, UInt64Array};
use arrow_schema::{DataType, Schema as ArrowSchema, SchemaRef};
use bytes::Bytes;
use object_store::path::Path;

use crate::error::{Error, Result};
use crate::io::cache::{CacheKey, SizedCache};
use crate::io::fetch::Tail;
use crate::io::{is_object_changed, IoStats, ObjectVersion, RangeFetcher, ReadRequest};
use crate::lance::file::{
    forget_file_metadata, open_file_metadata, DataTail, FileMetadata, FileMetadataCache,
    DEFAULT_TAIL_BYTES,
};
use crate::lance::page::sparse_plan::SparseStructuralPlan;
use crate::lance::page::structure::{assemble, LayerSlots, LeafData};
use crate::lance::page::PageInit;
use crate::lance::schema::{LanceField, LanceSchema};
use crate::lance::version::FileVersion;

mod few_rows;
mod page_inits;
mod whole_pages;

#[cfg_attr(not(test), allow(unused_imports))] // used by the tests
pub(crate) use crate::lance::inspect::{inspect, FileInspection};
/// The rows a read takes (shared with the legacy reader, [`crate::lance::selection`]).
pub(crate) use crate::lance::selection::RowSelection;

/// Most rows one [`LanceFileReader::read_rows`] call returns (Arrow arrays are indexed by
/// 32-bit offsets in places; larger reads are split by the caller).
pub(crate) const MAX_ROWS_PER_READ: u64 = u32::MAX as u64;

/// Identifies one page of a file in the page-init cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct PageKey {
    /// Physical column.
    pub column: u32,
    /// Page within the column.
    pub page: u32,
}

/// Caches shared by readers: decoded file metadata and decoded page-init data.
#[derive(Debug, Clone)]
pub(crate) struct ReaderCaches {
    /// File metadata by path + version.
    pub file_metadata: FileMetadataCache,
    /// Page init (chunk tables, dictionaries, row offsets, sparse structure) by
    /// path + version + (column, page).
    pub page_init: SizedCache<PageKey, PageInit>,
    /// Decoded legacy v1 files (metadata, page table, dictionaries) by path + version.
    pub(crate) legacy: crate::lance::legacy::open::LegacyCache,
    /// Readers serve reads inside the open's suffix bytes from memory (always, but in tests
    /// that need the page reads of files small enough to fit in one suffix read).
    serve_data_tails: bool,
}

impl ReaderCaches {
    /// Caches holding about `metadata_bytes` of file metadata and `page_bytes` of page init.
    pub(crate) fn new(metadata_bytes: u64, page_bytes: u64) -> Self {
        Self {
            file_metadata: SizedCache::new(metadata_bytes),
            page_init: SizedCache::new(page_bytes),
            legacy: SizedCache::new(metadata_bytes),
            serve_data_tails: true,
        }
    }

    /// These caches, but readers read every page buffer from the store, also those inside
    /// the open's suffix read (tests of page reads on small files).
    #[cfg(test)]
    pub(crate) fn without_data_tails(mut self) -> Self {
        self.serve_data_tails = false;
        self
    }
}

impl Default for ReaderCaches {
    /// 64 MiB of file metadata, 256 MiB of page init data.
    fn default() -> Self {
        Self::new(64 << 20, 256 << 20)
    }
}

/// An open Lance file.
#[derive(Debug, Clone)]
pub(crate) struct LanceFileReader {
    fetcher: RangeFetcher,
    path: Path,
    version: ObjectVersion,
    metadata: Arc<FileMetadata>,
    caches: Arc<ReaderCaches>,
    /// Data bytes of the open's suffix read (see [`LanceFileReader::open`]).
    tail: Option<DataTail>,
    /// Pages spanning at most this many bytes whose init is not cached are read whole in
    /// the value wave (see [`whole_pages`]); 0: never.
    whole_page_bytes: u64,
}

/// One page's share of a read.
#[derive(Debug)]
struct PageTask {
    /// Position of the output column.
    output: usize,
    /// Leaf of the output field (0 for flat fields).
    leaf: usize,
    column: usize,
    page: usize,
    /// Page-local rows.
    rows: Vec<Range<u64>>,
}

impl LanceFileReader {
    /// Open `path`: one suffix read (two when the metadata is larger than 64 KiB), or none
    /// when `size_hint` is given and the metadata is cached.
    #[cfg_attr(not(any(test, feature = "fuzzing")), allow(dead_code))]
    pub(crate) async fn open(
        fetcher: RangeFetcher,
        path: Path,
        size_hint: Option<u64>,
        caches: Arc<ReaderCaches>,
        stats: &IoStats,
    ) -> Result<Self> {
        let tail_bytes = DEFAULT_TAIL_BYTES;
        Self::open_with(fetcher, path, size_hint, caches, None, tail_bytes, stats).await
    }

    /// [`Self::open`] whose suffix read, when the metadata is not cached, asks for
    /// `tail_bytes` (one more read, of exactly what is missing, when the metadata is larger).
    pub(crate) async fn open_with_tail(
        fetcher: RangeFetcher,
        path: Path,
        size_hint: Option<u64>,
        caches: Arc<ReaderCaches>,
        tail_bytes: u64,
        stats: &IoStats,
    ) -> Result<Self> {
        Self::open_with(fetcher, path, size_hint, caches, None, tail_bytes, stats).await
    }

    /// [`Self::open`] from a suffix read already made (its footer was checked by the
    /// caller): no request when it holds the metadata.
    pub(crate) async fn open_from_tail(
        fetcher: RangeFetcher,
        path: Path,
        tail: Tail,
        caches: Arc<ReaderCaches>,
        stats: &IoStats,
    ) -> Result<Self> {
        let tail_bytes = DEFAULT_TAIL_BYTES;
        Self::open_with(fetcher, path, None, caches, Some(tail), tail_bytes, stats).await
    }

    async fn open_with(
        fetcher: RangeFetcher,
        path: Path,
        size_hint: Option<u64>,
        caches: Arc<ReaderCaches>,
        prefetched: Option<Tail>,
        tail_bytes: u64,
        stats: &IoStats,
    ) -> Result<Self> {
        let opened = open_file_metadata(
            &fetcher,
            &path,
            size_hint,
            Some(&caches.file_metadata),
            prefetched,
            tail_bytes,
            stats,
        )
        .await?;
        // The suffix bytes before the metadata: page buffers inside them (a whole small
        // file, or the last pages of a large one) are served without another request.
        let tail = opened.data_tail.filter(|_| caches.serve_data_tails);
        // Metadata served from the cache: range reads must still find the version it was
        // decoded from.
        fetcher.expect_version(&path, &opened.version);
        Ok(Self {
            fetcher,
            path,
            version: opened.version,
            metadata: opened.metadata,
            caches,
            tail,
            whole_page_bytes: 0,
        })
    }

    /// The file schema.
    pub(crate) fn schema(&self) -> &LanceSchema {
        &self.metadata.schema
    }

    /// The file schema as Arrow.
    pub(crate) fn arrow_schema(&self) -> SchemaRef {
        Arc::clone(&self.metadata.schema.arrow)
    }

    /// Top-level rows.
    pub(crate) fn num_rows(&self) -> u64 {
        self.metadata.num_rows
    }

    /// The decoded metadata.
    pub(crate) fn metadata(&self) -> &Arc<FileMetadata> {
        &self.metadata
    }

    /// Read pages spanning at most `bytes` whole when their init is not cached, in the
    /// value wave: a cold [`Self::read_rows`] of such pages is one wave, not two (0: never).
    pub(crate) fn with_whole_page_bytes(mut self, bytes: u64) -> Self {
        self.whole_page_bytes = bytes;
        self
    }

    /// Whether the open's suffix read holds `range` (reading it needs no request).
    pub(crate) fn holds(&self, range: &Range<u64>) -> bool {
        self.tail.as_ref().is_some_and(|t| t.slice(range).is_some())
    }

    /// Object path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Object version (size, etag when known).
    pub(crate) fn version(&self) -> &ObjectVersion {
        &self.version
    }

    /// Indices of the top-level fields named `names` (`NotFound` for unknown names).
    #[cfg_attr(not(any(test, feature = "fuzzing")), allow(dead_code))] // the fuzz targets' reader
    pub(crate) fn field_indices(&self, names: &[&str]) -> Result<Vec<usize>> {
        names
            .iter()
            .map(|n| {
                self.schema().field_index(n).ok_or_else(|| Error::NotFound {
                    path: self.path.to_string(),
                    what: format!("column {n:?}"),
                })
            })
            .collect()
    }

    /// Read `selection` of the top-level fields `columns` (indices into
    /// [`Self::schema`]`.fields`) as one record batch, in two waves at most: page init for
    /// pages not cached yet, then the chunks / spans holding the rows.
    ///
    /// When the object turned out to have changed since its metadata was read
    /// ([`is_object_changed`]), the cached metadata is dropped as well, so the next open
    /// decodes the new version even with a size hint.
    pub(crate) async fn read_rows(
        &self,
        columns: &[usize],
        selection: &RowSelection,
        stats: &IoStats,
    ) -> Result<RecordBatch> {
        let result = self.read_rows_once(columns, selection, false, stats).await;
        self.forget_if_changed(result).await
    }

    /// [`Self::read_rows`] of a few rows from pages whose init is not cached: for full-zip
    /// pages only the repetition index entries of the rows, and for them and flat
    /// mini-block pages the likely place of the values fetched in the same wave
    /// ([`crate::lance::page::few_rows`]) — one wave and most of the init bytes less when
    /// the guesses hold. Nothing of a few-row read of a full-zip page is cached.
    pub(crate) async fn read_few_rows(
        &self,
        columns: &[usize],
        selection: &RowSelection,
        stats: &IoStats,
    ) -> Result<RecordBatch> {
        let result = self.read_rows_once(columns, selection, true, stats).await;
        self.forget_if_changed(result).await
    }

    /// `result`, after dropping the cached metadata when it says the object changed.
    async fn forget_if_changed(&self, result: Result<RecordBatch>) -> Result<RecordBatch> {
        if result.as_ref().is_err_and(is_object_changed) {
            forget_file_metadata(&self.caches.file_metadata, &self.path, self.version.size).await;
        }
        result
    }

    async fn read_rows_once(
        &self,
        columns: &[usize],
        selection: &RowSelection,
        few_rows: bool,
        stats: &IoStats,
    ) -> Result<RecordBatch> {
        let (ranges, repeat) = normalize_selection(selection, self.num_rows())?;
        let fields: Vec<&LanceField> = columns
            .iter()
            .map(|&c| {
                self.schema().fields.get(c).ok_or_else(|| {
                    Error::InvalidArgument(format!(
                        "field index {c} out of range ({} fields)",
                        self.schema().fields.len()
                    ))
                })
            })
            .collect::<Result<_>>()?;
        if self.metadata.version == FileVersion::V2_0 {
            let arrays = self
                .read_v2_0(columns, &fields, &ranges, repeat.as_ref(), stats)
                .await?;
            return batch_of(&fields, arrays, selection);
        }
        let mut tasks = Vec::new();
        let mut leaf_types: Vec<Vec<DataType>> = Vec::with_capacity(fields.len());
        for (output, field) in fields.iter().enumerate() {
            let types = self.leaf_types(field)?;
            for leaf in 0..field.num_columns {
                tasks.extend(self.page_tasks(output, leaf, field.first_column + leaf, &ranges)?);
            }
            leaf_types.push(types);
        }
        // Wave 1: page init of pages not cached yet (few rows: or their entries, and
        // guesses; small pages read whole: none). Wave 2: the value bytes not yet held.
        let planned = if few_rows {
            self.plan_few_rows_and_fetch(&tasks, stats).await?
        } else {
            self.plan_pages_and_fetch(&tasks, stats).await?
        };
        let mut parts: Vec<FieldParts> = fields.iter().map(|f| FieldParts::new(f)).collect();
        for (task, (init, plan, bytes)) in tasks.iter().zip(planned) {
            let (init, plan) = (&init, &plan);
            let layout = &self.page(task)?.layout;
            let leaf_type = &leaf_types[task.output][task.leaf];
            match &mut parts[task.output] {
                FieldParts::Flat(arrays) => arrays.push(
                    layout
                        .decode(init, &task.rows, plan, &bytes, leaf_type)
                        .map_err(|e| self.page_error(e, task))?,
                ),
                FieldParts::Nested(leaves) => leaves[task.leaf].push(
                    layout
                        .decode_nested(init, &task.rows, plan, &bytes, leaf_type)
                        .map_err(|e| self.page_error(e, task))?,
                ),
            }
        }
        let arrays = fields
            .iter()
            .zip(parts)
            .zip(&leaf_types)
            .map(|((field, parts), types)| self.finish_field(field, parts, types, repeat.as_ref()))
            .collect::<Result<Vec<_>>>()?;
        batch_of(&fields, arrays, selection)
    }

    /// A 2.0 file's read (see [`crate::lance::v2_0`]): one array per field, finished like
    /// the 2.1+ ones (repeated rows, dictionary re-encoding).
    async fn read_v2_0(
        &self,
        columns: &[usize],
        fields: &[&LanceField],
        ranges: &[Range<u64>],
        repeat: Option<&UInt64Array>,
        stats: &IoStats,
    ) -> Result<Vec<ArrayRef>> {
        let source = V20Source {
            reader: self,
            stats,
        };
        let (arrays, _waves) = crate::lance::v2_0::read_fields(
            &self.metadata,
            self.path.as_ref(),
            columns,
            ranges,
            &source,
        )
        .await?;
        fields
            .iter()
            .zip(arrays)
            .map(|(field, array)| {
                let storage = storage_type(&field.data_type).clone();
                self.finish_field(field, FieldParts::Flat(vec![array]), &[storage], repeat)
            })
            .collect()
    }

    /// Arrow types of a field's leaf columns (the stored value type for dictionaries).
    fn leaf_types(&self, field: &LanceField) -> Result<Vec<DataType>> {
        if field.is_blob() {
            return Ok(vec![field.blob_format().raw_type()]);
        }
        if field.is_packed_struct() {
            return Err(
                Error::unsupported(format!("reading packed field {:?}", field.name))
                    .at(self.path.as_ref(), None),
            );
        }
        let types = if field.is_flat_leaf() {
            vec![storage_type(&field.data_type).clone()]
        } else {
            leaf_types_of(field)
        };
        if types.len() != field.num_columns {
            return Err(Error::corrupt(format!(
                "field {:?} has {} leaves but {} columns",
                field.name,
                types.len(),
                field.num_columns
            ))
            .at(self.path.as_ref(), None));
        }
        Ok(types)
    }

    /// One field's array from its decoded pages, repeated rows and dictionary re-encoding
    /// applied.
    fn finish_field(
        &self,
        field: &LanceField,
        parts: FieldParts,
        types: &[DataType],
        repeat: Option<&UInt64Array>,
    ) -> Result<ArrayRef> {
        let array = match parts {
            FieldParts::Flat(arrays) => match arrays.len() {
                0 => arrow_array::new_empty_array(&types[0]),
                1 => arrays
                    .into_iter()
                    .next()
                    .ok_or_else(|| Error::corrupt("no page arrays"))?,
                _ => {
                    let refs: Vec<&dyn Array> = arrays.iter().map(|a| a.as_ref()).collect();
                    arrow_select::concat::concat(&refs)?
                }
            },
            FieldParts::Nested(pages) => {
                let leaves = pages
                    .into_iter()
                    .zip(types)
                    .map(|(pages, t)| merge_leaf_pages(field, pages, t))
                    .collect::<Result<Vec<_>>>()?;
                assemble(&field.to_arrow(), &leaves, 0)
                    .map_err(|e| e.at(self.path.as_ref(), None))?
            }
        };
        let array = match repeat {
            Some(indices) => arrow_select::take::take(array.as_ref(), indices, None)?,
            None => array,
        };
        if field.is_blob() && self.metadata.version != FileVersion::V2_0 {
            return crate::lance::blob::descriptors_from_raw(
                array.as_ref(),
                field.blob_format(),
                true,
            )
            .map_err(|e| {
                e.context(format!("field {:?}", field.name))
                    .at(self.path.as_ref(), None)
            });
        }
        // Dictionary fields are stored as their values; re-encode.
        Ok(if array.data_type() == &field.data_type {
            array
        } else {
            arrow_cast::cast(array.as_ref(), &field.data_type)?
        })
    }

    fn page(&self, task: &PageTask) -> Result<&crate::lance::file::PageInfo> {
        self.metadata
            .columns
            .get(task.column)
            .and_then(|c| c.pages.get(task.page))
            .ok_or_else(|| Error::corrupt("internal: page task out of range"))
    }

    fn page_error(&self, e: Error, task: &PageTask) -> Error {
        let span = self.page(task).ok().and_then(|p| {
            let start = p.buffers.iter().map(|b| b.start).min()?;
            let end = p.buffers.iter().map(|b| b.end).max()?;
            Some(start..end)
        });
        e.context(format!("column {} page {}", task.column, task.page))
            .at(self.path.as_ref(), span)
    }

    fn page_tasks(
        &self,
        output: usize,
        leaf: usize,
        column: usize,
        ranges: &[Range<u64>],
    ) -> Result<Vec<PageTask>> {
        let info = self.metadata.columns.get(column).ok_or_else(|| {
            Error::corrupt(format!(
                "schema names column {column}, the file has {}",
                self.metadata.columns.len()
            ))
        })?;
        let mut tasks: Vec<PageTask> = Vec::new();
        for r in ranges {
            for page in info.pages_for(r.clone()) {
                let rows = &info.pages[page].rows;
                let local = r.start.max(rows.start) - rows.start..r.end.min(rows.end) - rows.start;
                if local.start >= local.end {
                    continue;
                }
                match tasks.last_mut() {
                    Some(t) if t.page == page => t.rows.push(local),
                    _ => tasks.push(PageTask {
                        output,
                        leaf,
                        column,
                        page,
                        rows: vec![local],
                    }),
                }
            }
        }
        for t in &tasks {
            let layout = &self.page(t)?.layout;
            if !layout.is_nested() {
                layout.check_readable().map_err(|e| self.page_error(e, t))?;
            }
        }
        Ok(tasks)
    }

    fn page_key(&self, t: &PageTask) -> CacheKey<PageKey> {
        self.page_key_of(t.column, t.page)
    }

    fn page_key_of(&self, column: usize, page: usize) -> CacheKey<PageKey> {
        CacheKey {
            path: self.path.to_string(),
            version: self.version.clone(),
            item: PageKey {
                column: column as u32,
                page: page as u32,
            },
        }
    }

    /// Fetch `ranges` in one wave; empty ranges come back as empty bytes without a request.
    async fn fetch(&self, ranges: &[Range<u64>], stats: &IoStats) -> Result<Vec<Bytes>> {
        let from_tail: Vec<Option<Bytes>> = ranges
            .iter()
            .map(|r| self.tail.as_ref().and_then(|t| t.slice(r)))
            .collect();
        let requests: Vec<ReadRequest> = ranges
            .iter()
            .zip(&from_tail)
            .filter(|(r, cached)| r.start < r.end && cached.is_none())
            .map(|(r, _)| ReadRequest {
                path: self.path.clone(),
                range: r.clone(),
                object_size: Some(self.metadata.object_size),
            })
            .collect();
        let mut fetched = if requests.is_empty() {
            Vec::new()
        } else {
            self.fetcher.fetch(&requests, stats).await?
        }
        .into_iter();
        ranges
            .iter()
            .zip(from_tail)
            .map(|(r, cached)| match cached {
                Some(bytes) => Ok(bytes),
                None if r.start < r.end => fetched
                    .next()
                    .ok_or_else(|| Error::corrupt("internal: fetch returned too few ranges")),
                None => Ok(Bytes::new()),
            })
            .collect()
    }

    /// The bytes of global buffers `indices` in one wave (adjacent buffers in one
    /// request; none when the open's suffix read holds them).
    pub(crate) async fn read_global_buffers(
        &self,
        indices: &[usize],
        stats: &IoStats,
    ) -> Result<Vec<Bytes>> {
        let ranges = indices
            .iter()
            .map(|&i| {
                self.metadata.global_buffers.get(i).cloned().ok_or_else(|| {
                    Error::corrupt(format!(
                        "no global buffer {i} ({} in the file)",
                        self.metadata.global_buffers.len()
                    ))
                    .at(self.path.as_ref(), None)
                })
            })
            .collect::<Result<Vec<_>>>()?;
        self.fetch(&ranges, stats).await
    }

    /// The bytes of global buffer `index` (one request, or none when the open's suffix
    /// read holds them).
    pub(crate) async fn read_global_buffer(&self, index: usize, stats: &IoStats) -> Result<Bytes> {
        let range = self
            .metadata
            .global_buffers
            .get(index)
            .cloned()
            .ok_or_else(|| {
                Error::corrupt(format!(
                    "no global buffer {index} ({} in the file)",
                    self.metadata.global_buffers.len()
                ))
                .at(self.path.as_ref(), None)
            })?;
        let mut bytes = self.fetch(std::slice::from_ref(&range), stats).await?;
        bytes
            .pop()
            .ok_or_else(|| Error::corrupt("internal: fetch returned no bytes"))
    }

    /// Everything `lakeseek inspect` shows about the file.
    pub(crate) fn inspect(&self) -> FileInspection {
        inspect(&self.path, &self.metadata)
    }
}

/// The record batch of `arrays` (one per field) for `selection`.
fn batch_of(
    fields: &[&LanceField],
    arrays: Vec<ArrayRef>,
    selection: &RowSelection,
) -> Result<RecordBatch> {
    let schema = Arc::new(ArrowSchema::new(
        fields.iter().map(|f| f.to_arrow()).collect::<Vec<_>>(),
    ));
    let rows = match selection {
        RowSelection::Range(r) => (r.end - r.start) as usize,
        RowSelection::Rows(v) => v.len(),
    };
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    Ok(RecordBatch::try_new_with_options(schema, arrays, &options)?)
}

/// The reader as the byte and dictionary source of a 2.0 read.
struct V20Source<'r> {
    reader: &'r LanceFileReader,
    stats: &'r IoStats,
}

impl crate::lance::v2_0::ReadSource for V20Source<'_> {
    async fn fetch(&self, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        self.reader.fetch(ranges, self.stats).await
    }

    async fn cached_dictionary(&self, column: usize, page: usize) -> Option<ArrayRef> {
        let key = self.reader.page_key_of(column, page);
        match self.reader.caches.page_init.get(&key).await.as_deref() {
            Some(PageInit::V2_0Dictionary(d)) => Some(Arc::clone(d)),
            _ => None,
        }
    }

    async fn cache_dictionary(&self, column: usize, page: usize, dictionary: ArrayRef) {
        let key = self.reader.page_key_of(column, page);
        self.reader
            .caches
            .page_init
            .insert(key, Arc::new(PageInit::V2_0Dictionary(dictionary)))
            .await;
    }
}

/// Arrow types of the leaves of a nested field, in column order.
fn leaf_types_of(field: &LanceField) -> Vec<DataType> {
    if field.children.is_empty() {
        return vec![storage_type(&field.data_type).clone()];
    }
    field.children.iter().flat_map(leaf_types_of).collect()
}

/// Decoded pages of one output field.
enum FieldParts {
    /// One array per page.
    Flat(Vec<ArrayRef>),
    /// Per leaf column, one [`LeafData`] per page.
    Nested(Vec<Vec<LeafData>>),
}

impl FieldParts {
    fn new(field: &LanceField) -> Self {
        if field.is_flat_leaf() || field.is_blob() {
            FieldParts::Flat(Vec::new())
        } else {
            FieldParts::Nested(vec![Vec::new(); field.num_columns])
        }
    }
}

/// Join a leaf's pages (whole rows each) into one [`LeafData`].
fn merge_leaf_pages(
    field: &LanceField,
    pages: Vec<LeafData>,
    leaf_type: &DataType,
) -> Result<LeafData> {
    let mut pages = pages.into_iter();
    let Some(mut merged) = pages.next() else {
        return Ok(empty_leaf(field, leaf_type));
    };
    let mut values = vec![Arc::clone(&merged.values)];
    for page in pages {
        crate::ensure_corrupt!(
            merged.layers.len() == page.layers.len(),
            "pages of one column have {} and {} layers",
            merged.layers.len(),
            page.layers.len()
        );
        for (mine, theirs) in merged.layers.iter_mut().zip(&page.layers) {
            mine.append(theirs);
        }
        values.push(page.values);
    }
    if values.len() > 1 {
        let refs: Vec<&dyn Array> = values.iter().map(|a| a.as_ref()).collect();
        merged.values = arrow_select::concat::concat(&refs)?;
    }
    Ok(merged)
}

/// A leaf with no rows (empty selection).
fn empty_leaf(field: &LanceField, leaf_type: &DataType) -> LeafData {
    let depth = nesting_depth(field);
    let layers = (0..depth)
        .map(|_| LayerSlots {
            len: 0,
            validity: None,
            offsets: Some(vec![0]),
        })
        .collect();
    LeafData {
        layers,
        values: arrow_array::new_empty_array(leaf_type),
    }
}

fn nesting_depth(field: &LanceField) -> usize {
    1 + field.children.iter().map(nesting_depth).max().unwrap_or(0)
}

/// The type pages of a field decode to: dictionary fields are stored as their values.
fn storage_type(data_type: &DataType) -> &DataType {
    match data_type {
        DataType::Dictionary(_, values) => values.as_ref(),
        other => other,
    }
}

/// Turn a selection into sorted disjoint ranges, plus take-indices into the
/// concatenated unique rows when the selection repeats rows.
fn normalize_selection(
    selection: &RowSelection,
    num_rows: u64,
) -> Result<(Vec<Range<u64>>, Option<UInt64Array>)> {
    match selection {
        RowSelection::Range(r) => {
            if r.start > r.end || r.end > num_rows {
                return Err(Error::InvalidArgument(format!(
                    "row range {}..{} outside 0..{num_rows}",
                    r.start, r.end
                )));
            }
            if r.end - r.start > MAX_ROWS_PER_READ {
                return Err(Error::InvalidArgument(format!(
                    "{} rows in one read; read at most {MAX_ROWS_PER_READ}",
                    r.end - r.start
                )));
            }
            Ok((
                if r.start < r.end {
                    vec![r.clone()]
                } else {
                    Vec::new()
                },
                None,
            ))
        }
        RowSelection::Rows(rows) => {
            let mut ranges: Vec<Range<u64>> = Vec::new();
            let mut has_duplicates = false;
            for (i, &row) in rows.iter().enumerate() {
                if row >= num_rows {
                    return Err(Error::InvalidArgument(format!(
                        "row {row} outside 0..{num_rows}"
                    )));
                }
                if i > 0 && row < rows[i - 1] {
                    return Err(Error::InvalidArgument(format!(
                        "rows must be sorted: {} then {row}",
                        rows[i - 1]
                    )));
                }
                match ranges.last_mut() {
                    Some(last) if last.end > row => has_duplicates = true,
                    Some(last) if last.end == row => last.end += 1,
                    _ => ranges.push(row..row + 1),
                }
            }
            let repeat = has_duplicates.then(|| {
                let mut unique = -1i64;
                let mut previous = None;
                rows.iter()
                    .map(|&row| {
                        if previous != Some(row) {
                            unique += 1;
                            previous = Some(row);
                        }
                        unique as u64
                    })
                    .collect::<UInt64Array>()
            });
            Ok((ranges, repeat))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selections_normalize_to_ranges() {
        let (r, rep) = normalize_selection(&RowSelection::Range(3..7), 10).unwrap();
        assert_eq!(r, vec![3..7]);
        assert!(rep.is_none());
        let (r, rep) = normalize_selection(&RowSelection::Rows(vec![1, 2, 3, 5, 9]), 10).unwrap();
        assert_eq!(r, vec![1..4, 5..6, 9..10]);
        assert!(rep.is_none());
        let (r, rep) = normalize_selection(&RowSelection::Rows(vec![1, 1, 2, 5, 5]), 10).unwrap();
        assert_eq!(r, vec![1..3, 5..6]);
        assert_eq!(rep.unwrap().values().to_vec(), vec![0, 0, 1, 2, 2]);
        assert!(normalize_selection(&RowSelection::Rows(vec![3, 2]), 10).is_err());
        assert!(normalize_selection(&RowSelection::Rows(vec![10]), 10).is_err());
        assert!(normalize_selection(&RowSelection::Range(5..11), 10).is_err());
    }
}

/// Structural plans decoded in one page-init wave: the leaf columns of a nested field repeat
/// the same sparse structure in their own pages, so equal plans are kept once. Plans are
/// bucketed by a cheap fingerprint (rows, leaf slots, layers, heap size) first, so a wave of
/// many unrelated sparse pages compares only plans that could be equal.
#[derive(Default)]
struct SharedPlans(HashMap<(u64, u64, usize, usize), Vec<Arc<SparseStructuralPlan>>>);

impl SharedPlans {
    /// Replace `plan` by an equal one seen before in this wave, or remember it.
    fn share(&mut self, plan: &mut Arc<SparseStructuralPlan>) {
        let fingerprint = (
            plan.rows(),
            plan.leaf_slots(),
            plan.layers().len(),
            plan.deep_size(),
        );
        let bucket = self.0.entry(fingerprint).or_default();
        match bucket.iter().find(|p| ***p == **plan) {
            Some(same) => *plan = Arc::clone(same),
            None => bucket.push(Arc::clone(plan)),
        }
    }
}
