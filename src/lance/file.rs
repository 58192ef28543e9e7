//! The Lance v2 container: footer, offset tables, schema and column metadata.
//!
//! Layout of a file written by lance 14.0.2 (see `docs/lance-file-format.md` §1):
//! data buffers, global buffers (buffer 0 = schema), column metadata, the column-metadata
//! offset (CMO) table, the global-buffer offset (GBO) table, and a 40-byte footer.
//!
//! Opening a file takes one suffix read for typical files: [`parse_file_metadata`] is pure
//! and either decodes everything from the bytes it was given or says which missing prefix it
//! needs ([`MetadataParse::NeedMore`]); [`open_file_metadata`] is the thin async loop around
//! it.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use object_store::path::Path;
use prost::Message;

use crate::error::{Error, Result};
use crate::io::cache::{CacheKey, DeepSize, SizedCache};
use crate::io::fetch::Tail;
use crate::io::{IoStats, ObjectVersion, RangeFetcher, ReadRequest};
use crate::lance::page::{PageLayout, RawPageEncoding};
use crate::lance::proto::file as pb;
use crate::lance::schema::LanceSchema;
use crate::lance::version::FileVersion;

/// Size of the footer at the end of every v2 file.
pub(crate) const FOOTER_LEN: u64 = 40;
/// Magic bytes that end every Lance file.
pub(crate) const MAGIC: &[u8; 4] = b"LANC";
/// Bytes read from the end of a file when opening it (footer + tables + schema + column
/// metadata of typical files fit).
pub(crate) const DEFAULT_TAIL_BYTES: u64 = 64 * 1024;
/// Size of one offset-table entry (u64 position, u64 size).
const TABLE_ENTRY_LEN: u64 = 16;

/// The 40-byte footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Footer {
    /// Position of column 0's metadata.
    pub column_meta_start: u64,
    /// Position of the column-metadata offset table.
    pub cmo_start: u64,
    /// Position of the global-buffer offset table.
    pub gbo_start: u64,
    /// Number of global buffers (buffer 0 is the schema).
    pub num_global_buffers: u32,
    /// Number of physical columns.
    pub num_columns: u32,
    /// Major version as stored.
    pub major_version: u16,
    /// Minor version as stored.
    pub minor_version: u16,
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    if let Some(s) = b.get(at..at + 8) {
        w.copy_from_slice(s);
    }
    u64::from_le_bytes(w)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    if let Some(s) = b.get(at..at + 4) {
        w.copy_from_slice(s);
    }
    u32::from_le_bytes(w)
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    let mut w = [0u8; 2];
    if let Some(s) = b.get(at..at + 2) {
        w.copy_from_slice(s);
    }
    u16::from_le_bytes(w)
}

impl Footer {
    /// Decode and check the footer: magic, version, and that the offset tables lie in
    /// order inside an object of `object_size` bytes.
    pub(crate) fn parse(bytes: &[u8], object_size: u64) -> Result<Self> {
        if bytes.len() as u64 != FOOTER_LEN {
            return Err(Error::corrupt(format!(
                "footer must be {FOOTER_LEN} bytes, got {}",
                bytes.len()
            )));
        }
        if &bytes[36..40] != MAGIC {
            return Err(Error::corrupt(format!(
                "not a Lance file: footer magic is {:?}, expected \"LANC\"",
                String::from_utf8_lossy(&bytes[36..40])
            )));
        }
        let footer = Footer {
            column_meta_start: u64_at(bytes, 0),
            cmo_start: u64_at(bytes, 8),
            gbo_start: u64_at(bytes, 16),
            num_global_buffers: u32_at(bytes, 24),
            num_columns: u32_at(bytes, 28),
            major_version: u16_at(bytes, 32),
            minor_version: u16_at(bytes, 34),
        };
        FileVersion::from_footer(footer.major_version, footer.minor_version)?;
        footer.validate(object_size)?;
        Ok(footer)
    }

    /// The file version.
    pub(crate) fn version(&self) -> Result<FileVersion> {
        FileVersion::from_footer(self.major_version, self.minor_version)
    }

    /// Byte range of the CMO table.
    pub(crate) fn cmo_range(&self) -> Range<u64> {
        self.cmo_start..self.cmo_start + u64::from(self.num_columns) * TABLE_ENTRY_LEN
    }

    /// Byte range of the GBO table.
    pub(crate) fn gbo_range(&self) -> Range<u64> {
        self.gbo_start..self.gbo_start + u64::from(self.num_global_buffers) * TABLE_ENTRY_LEN
    }

    fn validate(&self, object_size: u64) -> Result<()> {
        let footer_start = object_size - FOOTER_LEN;
        crate::ensure_corrupt!(
            self.num_global_buffers >= 1,
            "footer: no global buffers (the schema is buffer 0)"
        );
        // All arithmetic below fits: positions are checked against object_size first.
        crate::ensure_corrupt!(
            self.gbo_start <= footer_start,
            "footer: GBO table starts at {} past the footer at {footer_start}",
            self.gbo_start
        );
        let gbo_len = u64::from(self.num_global_buffers) * TABLE_ENTRY_LEN;
        crate::ensure_corrupt!(
            gbo_len <= footer_start - self.gbo_start,
            "footer: GBO table of {} entries at {} runs into the footer at {footer_start}",
            self.num_global_buffers,
            self.gbo_start
        );
        crate::ensure_corrupt!(
            self.cmo_start <= self.gbo_start,
            "footer: CMO table at {} starts after the GBO table at {}",
            self.cmo_start,
            self.gbo_start
        );
        let cmo_len = u64::from(self.num_columns) * TABLE_ENTRY_LEN;
        crate::ensure_corrupt!(
            cmo_len <= self.gbo_start - self.cmo_start,
            "footer: CMO table of {} entries at {} runs into the GBO table at {}",
            self.num_columns,
            self.cmo_start,
            self.gbo_start
        );
        crate::ensure_corrupt!(
            self.column_meta_start <= self.cmo_start,
            "footer: column metadata starts at {} after the CMO table at {}",
            self.column_meta_start,
            self.cmo_start
        );
        Ok(())
    }
}

/// One page of a column.
#[derive(Debug, Clone)]
pub(crate) struct PageInfo {
    /// Absolute byte range of each page buffer (validated to lie inside the data region).
    pub buffers: Vec<Range<u64>>,
    /// The decoded page layout.
    pub layout: PageLayout,
    /// Top-level rows of the page, `first_row .. first_row + num_rows` (derived from the
    /// layout and `Page.length`, checked against `Page.priority`).
    pub rows: Range<u64>,
}

/// Metadata of one physical column.
#[derive(Debug, Clone)]
pub(crate) struct ColumnInfo {
    /// Byte range of the column's `ColumnMetadata` protobuf.
    pub metadata_range: Range<u64>,
    /// Pages in row order.
    pub pages: Vec<PageInfo>,
}

impl ColumnInfo {
    /// Indices of the pages whose rows intersect `rows`.
    pub(crate) fn pages_for(&self, rows: Range<u64>) -> Range<usize> {
        let first = self.pages.partition_point(|p| p.rows.end <= rows.start);
        let end = self.pages.partition_point(|p| p.rows.start < rows.end);
        first..end.max(first)
    }
}

/// Everything decoded from the end of a Lance file.
#[derive(Debug, Clone)]
pub(crate) struct FileMetadata {
    /// File version.
    pub version: FileVersion,
    /// The footer.
    pub footer: Footer,
    /// Object size in bytes.
    pub object_size: u64,
    /// Top-level rows (`FileDescriptor.length`).
    pub num_rows: u64,
    /// The schema (global buffer 0).
    pub schema: LanceSchema,
    /// Absolute byte range of each global buffer.
    pub global_buffers: Vec<Range<u64>>,
    /// Physical columns.
    pub columns: Vec<ColumnInfo>,
    /// Where the metadata region (schema, column metadata, tables, footer) starts: the
    /// bytes `metadata_start..object_size` were needed to open the file.
    pub metadata_start: u64,
}

impl DeepSize for FileMetadata {
    fn deep_size(&self) -> usize {
        let pages: usize = self
            .columns
            .iter()
            .flat_map(|c| c.pages.iter())
            .map(|p| std::mem::size_of::<PageInfo>() + p.buffers.len() * 16 + p.layout.deep_size())
            .sum();
        std::mem::size_of::<Self>()
            + self.schema.deep_size()
            + self.global_buffers.len() * 16
            + self.columns.len() * std::mem::size_of::<ColumnInfo>()
            + pages
    }
}

/// Result of [`parse_file_metadata`].
#[derive(Debug)]
pub(crate) enum MetadataParse {
    /// Everything was decoded.
    Parsed(Box<FileMetadata>),
    /// The bytes given start too late: also read this range (it ends where the given bytes
    /// start) and call again with the concatenation.
    NeedMore(Range<u64>),
}

/// Decode the file metadata from the last bytes of the object (pure).
///
/// `tail` holds the object bytes `tail_start..object_size`. Every position and size read
/// from the file is checked against the object and the table bounds before use.
///
/// The phases follow the file from its end: the footer, the global-buffer table (is the
/// metadata region in `tail`? if not, say which prefix is missing), the column-metadata
/// table, the schema, the columns.
pub(crate) fn parse_file_metadata(
    tail: &Bytes,
    tail_start: u64,
    object_size: u64,
) -> Result<MetadataParse> {
    let view = TailView::new(tail, tail_start, object_size)?;
    let footer = view.footer()?;
    let version = footer.version()?;

    // The tables are needed first; ask for everything from the column metadata on (the
    // schema usually sits right before it) so one more read normally suffices.
    let Some(global_buffers) = view.global_buffers(&footer)? else {
        let start = footer.column_meta_start.min(footer.gbo_start);
        return Ok(MetadataParse::NeedMore(start..tail_start));
    };
    let schema_range = global_buffers.first().cloned().ok_or_else(|| {
        Error::corrupt("no global buffer 0 (schema)").at("", Some(footer.gbo_range()))
    })?;
    let metadata_start = schema_range.start.min(footer.column_meta_start);
    if metadata_start < tail_start {
        return Ok(MetadataParse::NeedMore(metadata_start..tail_start));
    }

    let column_ranges = view.column_ranges(&footer)?;
    let (num_rows, schema) = view.schema(schema_range, &footer, version)?;
    let columns = view.columns(column_ranges, &footer, version, num_rows)?;
    Ok(MetadataParse::Parsed(Box::new(FileMetadata {
        version,
        footer,
        object_size,
        num_rows,
        schema,
        global_buffers,
        columns,
        metadata_start,
    })))
}

/// The object bytes `start..object_size` that [`parse_file_metadata`] decodes.
struct TailView<'a> {
    bytes: &'a Bytes,
    start: u64,
    object_size: u64,
}

impl<'a> TailView<'a> {
    /// `bytes` at `start`: they must end at the object size, which must hold a footer.
    fn new(bytes: &'a Bytes, start: u64, object_size: u64) -> Result<Self> {
        if start.checked_add(bytes.len() as u64) != Some(object_size) {
            return Err(Error::InvalidArgument(format!(
                "parse_file_metadata: {} bytes at {start} do not end at the object size {object_size}",
                bytes.len()
            )));
        }
        if object_size < FOOTER_LEN {
            return Err(Error::corrupt(format!(
                "object of {object_size} bytes is too small for a Lance footer"
            ))
            .at("", Some(0..object_size)));
        }
        Ok(Self {
            bytes,
            start,
            object_size,
        })
    }

    /// The bytes of `r`, when they lie in the tail.
    fn slice(&self, r: &Range<u64>) -> Option<Bytes> {
        if r.start < self.start || r.end > self.object_size || r.start > r.end {
            return None;
        }
        Some(
            self.bytes
                .slice((r.start - self.start) as usize..(r.end - self.start) as usize),
        )
    }

    /// The bytes of `r`, which the phases before made sure lie in the tail.
    fn require(&self, r: &Range<u64>, what: &str) -> Result<Bytes> {
        self.slice(r)
            .ok_or_else(|| Error::InvalidArgument(format!("{what} outside the tail")))
    }

    fn footer(&self) -> Result<Footer> {
        let footer_range = self.object_size - FOOTER_LEN..self.object_size;
        let footer_bytes = self
            .slice(&footer_range)
            .ok_or_else(|| Error::InvalidArgument("tail shorter than the footer".into()))?;
        Footer::parse(&footer_bytes, self.object_size)
            .map_err(|e| e.at("", Some(footer_range.clone())))
    }

    /// The global-buffer table; `None` when it is not in the tail.
    fn global_buffers(&self, footer: &Footer) -> Result<Option<Vec<Range<u64>>>> {
        let gbo_range = footer.gbo_range();
        let Some(gbo_bytes) = self.slice(&gbo_range) else {
            return Ok(None);
        };
        read_offset_table(&gbo_bytes, footer.num_global_buffers as usize, |r| {
            crate::ensure_corrupt!(
                r.end <= footer.column_meta_start,
                "global buffer {}..{} does not end before the column metadata at {}",
                r.start,
                r.end,
                footer.column_meta_start
            );
            Ok(())
        })
        .map(Some)
        .map_err(|e| e.context("GBO table").at("", Some(gbo_range.clone())))
    }

    /// The byte range of each column's metadata.
    fn column_ranges(&self, footer: &Footer) -> Result<Vec<Range<u64>>> {
        let cmo_range = footer.cmo_range();
        let cmo_bytes = self.require(&cmo_range, "CMO table")?;
        read_offset_table(&cmo_bytes, footer.num_columns as usize, |r| {
            crate::ensure_corrupt!(
                r.start >= footer.column_meta_start && r.end <= footer.cmo_start,
                "column metadata {}..{} lies outside the column metadata region {}..{}",
                r.start,
                r.end,
                footer.column_meta_start,
                footer.cmo_start
            );
            Ok(())
        })
        .map_err(|e| e.context("CMO table").at("", Some(cmo_range.clone())))
    }

    /// The file's row count and schema (global buffer 0), checked against the footer.
    fn schema(
        &self,
        schema_range: Range<u64>,
        footer: &Footer,
        version: FileVersion,
    ) -> Result<(u64, LanceSchema)> {
        let schema_bytes = self.require(&schema_range, "schema")?;
        let descriptor = pb::FileDescriptor::decode(schema_bytes).map_err(|e| {
            Error::corrupt(format!(
                "schema (global buffer 0) is not a FileDescriptor protobuf: {e}"
            ))
            .with_source(e)
            .at("", Some(schema_range.clone()))
        })?;
        let schema_proto = descriptor.schema.ok_or_else(|| {
            Error::corrupt("FileDescriptor has no schema").at("", Some(schema_range.clone()))
        })?;
        let schema = LanceSchema::from_proto(&schema_proto)
            .map_err(|e| e.at("", Some(schema_range.clone())))?;
        if version != FileVersion::V2_0 && schema.num_columns != footer.num_columns as usize {
            return Err(Error::corrupt(format!(
                "schema needs {} physical columns but the footer says {}",
                schema.num_columns, footer.num_columns
            ))
            .at("", Some(schema_range)));
        }
        Ok((descriptor.length, schema))
    }

    /// Every column's metadata, pages and their layouts.
    fn columns(
        &self,
        column_ranges: Vec<Range<u64>>,
        footer: &Footer,
        version: FileVersion,
        num_rows: u64,
    ) -> Result<Vec<ColumnInfo>> {
        let mut columns = Vec::with_capacity(column_ranges.len());
        for (index, range) in column_ranges.into_iter().enumerate() {
            let bytes = self.require(&range, "column metadata")?;
            let column = parse_column(index, &bytes, range.clone(), footer, version, num_rows)
                .map_err(|e| e.at("", Some(range)))?;
            columns.push(column);
        }
        Ok(columns)
    }
}

/// Decode `count` (position, size) entries, checking each fits and passes `check`.
fn read_offset_table(
    bytes: &[u8],
    count: usize,
    check: impl Fn(&Range<u64>) -> Result<()>,
) -> Result<Vec<Range<u64>>> {
    crate::ensure_corrupt!(
        bytes.len() as u64 == count as u64 * TABLE_ENTRY_LEN,
        "table has the wrong size"
    );
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let position = u64_at(bytes, i * 16);
        let size = u64_at(bytes, i * 16 + 8);
        let end = position.checked_add(size).ok_or_else(|| {
            Error::corrupt(format!(
                "entry {i}: position {position} + size {size} overflows"
            ))
        })?;
        let range = position..end;
        check(&range).map_err(|e| e.context(format!("entry {i}")))?;
        out.push(range);
    }
    Ok(out)
}

fn parse_column(
    index: usize,
    bytes: &[u8],
    range: Range<u64>,
    footer: &Footer,
    version: FileVersion,
    num_rows: u64,
) -> Result<ColumnInfo> {
    let proto = pb::ColumnMetadata::decode(bytes).map_err(|e| {
        Error::corrupt(format!(
            "column {index}: metadata is not a ColumnMetadata protobuf: {e}"
        ))
        .with_source(e)
    })?;
    let mut pages = Vec::with_capacity(proto.pages.len());
    let mut next_row = 0u64;
    for (page_index, page) in proto.pages.into_iter().enumerate() {
        let info = parse_page(page, footer, version, next_row)
            .map_err(|e| e.context(format!("column {index} page {page_index}")))?;
        next_row = info.rows.end;
        pages.push(info);
    }
    if version != FileVersion::V2_0 && next_row != num_rows {
        return Err(Error::corrupt(format!(
            "column {index}: pages hold {next_row} rows but the file has {num_rows}"
        )));
    }
    Ok(ColumnInfo {
        metadata_range: range,
        pages,
    })
}

fn parse_page(
    page: pb::column_metadata::Page,
    footer: &Footer,
    version: FileVersion,
    first_row: u64,
) -> Result<PageInfo> {
    crate::ensure_corrupt!(
        page.buffer_offsets.len() == page.buffer_sizes.len(),
        "{} buffer offsets but {} buffer sizes",
        page.buffer_offsets.len(),
        page.buffer_sizes.len()
    );
    let mut buffers = Vec::with_capacity(page.buffer_offsets.len());
    for (i, (&position, &size)) in page
        .buffer_offsets
        .iter()
        .zip(&page.buffer_sizes)
        .enumerate()
    {
        let end = position
            .checked_add(size)
            .filter(|&end| end <= footer.column_meta_start)
            .ok_or_else(|| {
                Error::corrupt(format!(
                    "buffer {i} at {position} of {size} bytes is not inside the data region 0..{}",
                    footer.column_meta_start
                ))
            })?;
        buffers.push(position..end);
    }
    let encoding = match page.encoding.and_then(|e| e.location) {
        Some(pb::encoding::Location::Direct(direct)) => {
            let any = prost_types::Any::decode(direct.encoding).map_err(|e| {
                Error::corrupt(format!("page encoding is not a google.protobuf.Any: {e}"))
                    .with_source(e)
            })?;
            RawPageEncoding::Direct {
                type_url: any.type_url,
                value: Bytes::from(any.value),
            }
        }
        Some(pb::encoding::Location::Indirect(d)) => RawPageEncoding::Indirect {
            range: d.buffer_location..d.buffer_location.saturating_add(d.buffer_length),
        },
        Some(pb::encoding::Location::None(())) | None => RawPageEncoding::None,
    };
    let layout = PageLayout::from_encoding(&encoding, version, &buffers, page.length)?;
    let num_rows = layout.rows_in_page(page.length)?;
    crate::ensure_corrupt!(
        version == FileVersion::V2_0 || page.priority == first_row,
        "page starts at row {} but the previous pages end at row {first_row}",
        page.priority
    );
    let end = first_row
        .checked_add(num_rows)
        .ok_or_else(|| Error::corrupt("page row count overflows"))?;
    Ok(PageInfo {
        buffers,
        layout,
        rows: first_row..end,
    })
}

/// Cache of decoded file metadata, keyed by path + object size (etag `None` in the key);
/// each entry remembers the etag of the version it was decoded from.
///
/// One key for both kinds of open: an open with a size hint (from a manifest) finds what an
/// open without one decoded and vice versa. The etag inside the entry is what keeps versions
/// apart: an open that learns the object's current etag (every open without a hint) reloads
/// the entry when they differ, and an open served from the entry carries its etag, so its
/// range reads are conditional on it and a same-size replacement fails with
/// [`ObjectChanged`](crate::io::ObjectChanged) instead of mixing versions.
pub(crate) type FileMetadataCache = SizedCache<(), VersionedMetadata>;

/// File metadata with the etag of the object version it was decoded from.
#[derive(Debug, Clone)]
pub(crate) struct VersionedMetadata {
    /// The decoded metadata.
    pub metadata: Arc<FileMetadata>,
    /// ETag of the object it was decoded from, when the store reported one.
    pub etag: Option<String>,
    /// The data bytes of the suffix read it was decoded from: readers opened later from
    /// this entry serve the file's last data buffers from them, as the first reader did
    /// (a dataset opens its readers from the cache on every take).
    pub(crate) data_tail: Option<DataTail>,
}

impl DeepSize for VersionedMetadata {
    fn deep_size(&self) -> usize {
        self.metadata.deep_size()
            + self.etag.as_ref().map_or(0, |e| e.len())
            + self.data_tail.as_ref().map_or(0, |t| t.bytes.len())
            + 32
    }
}

/// The data bytes `start..start + bytes.len()` of a file (those of its suffix read that lie
/// before the metadata: a whole small file, or the last pages of a large one).
#[derive(Debug, Clone)]
pub(crate) struct DataTail {
    start: u64,
    bytes: Bytes,
}

impl DataTail {
    /// The part of `tail` before `metadata_start`, copied (so the suffix buffer, which also
    /// holds the metadata, can be freed); `None` when the suffix read held only metadata.
    fn of(tail: &Tail, metadata_start: u64) -> Option<Self> {
        let data_end = metadata_start.min(tail.version.size);
        let start = tail.start();
        (start < data_end).then(|| Self {
            start,
            bytes: Bytes::copy_from_slice(&tail.bytes[..(data_end - start) as usize]),
        })
    }

    /// `range` when it lies inside these bytes.
    pub(crate) fn slice(&self, range: &Range<u64>) -> Option<Bytes> {
        let end = self.start + self.bytes.len() as u64;
        (range.start >= self.start && range.end <= end).then(|| {
            self.bytes
                .slice((range.start - self.start) as usize..(range.end - self.start) as usize)
        })
    }
}

/// The metadata cache key of `path` at `size`.
fn metadata_key(path: &Path, size: u64) -> CacheKey<()> {
    CacheKey {
        path: path.to_string(),
        version: ObjectVersion { size, etag: None },
        item: (),
    }
}

/// File metadata with the suffix read it came from.
#[derive(Debug, Clone)]
pub(crate) struct OpenedFile {
    /// The decoded metadata.
    pub metadata: Arc<FileMetadata>,
    /// The object version it belongs to.
    pub version: ObjectVersion,
    /// The file's last data bytes from the suffix read (this open's, or the one the cached
    /// metadata was decoded from), which a reader serves without another request.
    pub data_tail: Option<DataTail>,
}

/// Where [`load_metadata`] leaves the suffix read it made, for the open that asked.
type TailSlot = std::sync::Mutex<Option<Tail>>;

/// Open the metadata of the file at `path` (decoded, or from `cache`), with the object
/// version it belongs to and the data bytes of the suffix read it came from.
///
/// Decides by what the caller knows: with a size hint and a cache, the cache by size (no
/// request when cached); with a cache but no size, one suffix read whose size and etag find
/// the entry (reloaded when the etag differs); without a cache, one suffix read, decoded.
pub(crate) async fn open_file_metadata(
    fetcher: &RangeFetcher,
    path: &Path,
    size_hint: Option<u64>,
    cache: Option<&FileMetadataCache>,
    prefetched: Option<Tail>,
    tail_bytes: u64,
    stats: &IoStats,
) -> Result<OpenedFile> {
    let read_tail = TailSlot::default();
    let sized = SizedTail {
        size_hint,
        tail_bytes,
    };
    let load = |tail: Option<Tail>| load_metadata(fetcher, path, sized, tail, &read_tail, stats);
    let loaded = match (size_hint, cache) {
        // With a size hint a cached entry needs no request at all.
        (Some(size), Some(cache)) if prefetched.is_none() => {
            let loaded = cache
                .get_or_try_load(metadata_key(path, size), load(None))
                .await?;
            crate::ensure_corrupt!(
                loaded.metadata.object_size == size,
                "{path}: object is {} bytes, the size hint said {size}",
                loaded.metadata.object_size
            );
            loaded
        }
        (_, Some(cache)) => {
            let tail = suffix(fetcher, path, prefetched, stats).await?;
            if let Some(opened) = cached_for_tail(cache, path, &tail).await {
                return Ok(opened);
            }
            let key = metadata_key(path, tail.version.size);
            cache.get_or_try_load(key, load(Some(tail))).await?
        }
        (_, None) => {
            let tail = suffix(fetcher, path, prefetched, stats).await?;
            Arc::new(load(Some(tail)).await?)
        }
    };
    // This open's suffix read, else the data bytes of the one the cached entry came from.
    let data_tail = match read_tail.lock().ok().and_then(|mut t| t.take()) {
        Some(tail) => DataTail::of(&tail, loaded.metadata.metadata_start),
        None => loaded.data_tail.clone(),
    };
    Ok(OpenedFile {
        metadata: Arc::clone(&loaded.metadata),
        version: ObjectVersion {
            size: loaded.metadata.object_size,
            etag: loaded.etag.clone(),
        },
        data_tail,
    })
}

/// The suffix read the caller made, or a new one.
async fn suffix(
    fetcher: &RangeFetcher,
    path: &Path,
    prefetched: Option<Tail>,
    stats: &IoStats,
) -> Result<Tail> {
    match prefetched {
        Some(tail) => Ok(tail),
        None => fetcher.tail(path, DEFAULT_TAIL_BYTES, stats).await,
    }
}

/// The cached metadata of the object version `tail` was read from; an entry of another
/// etag (the object was replaced by one of the same size) is dropped, to be decoded again.
async fn cached_for_tail(
    cache: &FileMetadataCache,
    path: &Path,
    tail: &Tail,
) -> Option<OpenedFile> {
    let key = metadata_key(path, tail.version.size);
    let cached = cache.get(&key).await?;
    if cached.etag == tail.version.etag {
        return Some(OpenedFile {
            version: tail.version.clone(),
            data_tail: DataTail::of(tail, cached.metadata.metadata_start),
            metadata: Arc::clone(&cached.metadata),
        });
    }
    cache.invalidate(&key).await;
    None
}

/// The suffix read of an open without a prefetched one: the object's size when known, and
/// how many bytes to read (more are read exactly when the metadata turns out larger).
#[derive(Debug, Clone, Copy)]
struct SizedTail {
    size_hint: Option<u64>,
    tail_bytes: u64,
}

/// Decode the metadata from `tail` (or a suffix read of its own, by the size hint) and the
/// extra reads it needs; the suffix read is left in `slot`.
async fn load_metadata(
    fetcher: &RangeFetcher,
    path: &Path,
    sized: SizedTail,
    tail: Option<Tail>,
    slot: &TailSlot,
    stats: &IoStats,
) -> Result<VersionedMetadata> {
    let tail = match tail {
        Some(tail) => tail,
        None => {
            let known = sized
                .size_hint
                .map(|size| ObjectVersion { size, etag: None });
            fetcher
                .tail_of(path, sized.tail_bytes, known.as_ref(), stats)
                .await?
        }
    };
    let start = tail.start();
    let size = tail.version.size;
    let metadata =
        finish_file_metadata(fetcher, path, tail.bytes.clone(), start, size, stats).await?;
    let etag = tail.version.etag.clone();
    let data_tail = DataTail::of(&tail, metadata.metadata_start);
    if let Ok(mut slot) = slot.lock() {
        *slot = Some(tail);
    }
    Ok(VersionedMetadata {
        metadata: Arc::new(metadata),
        etag,
        data_tail,
    })
}

/// Whether the suffix `tail` of a Lance file ends in a legacy v1 footer (version 0.1 or
/// 0.2; the last 8 bytes of every Lance footer are major, minor, `LANC`). Anything else —
/// a v2 footer, or no Lance footer at all — is for the v2 reader to take or refuse.
pub(crate) fn ends_in_legacy_footer(tail: &[u8]) -> bool {
    let Some(end) = tail.len().checked_sub(8).map(|start| &tail[start..]) else {
        return false;
    };
    let major = u16::from_le_bytes([end[0], end[1]]);
    let minor = u16::from_le_bytes([end[2], end[3]]);
    &end[4..] == MAGIC && major == 0 && minor < 3
}

/// Forget the cached metadata of `path` at `size` (after a read found the object changed).
pub(crate) async fn forget_file_metadata(cache: &FileMetadataCache, path: &Path, size: u64) {
    cache.invalidate(&metadata_key(path, size)).await;
}

/// Most extra reads an open may need (GBO table, then schema), so a hostile footer cannot
/// loop.
const MAX_EXTRA_READS: usize = 2;

async fn finish_file_metadata(
    fetcher: &RangeFetcher,
    path: &Path,
    mut bytes: Bytes,
    mut start: u64,
    size: u64,
    stats: &IoStats,
) -> Result<FileMetadata> {
    let location = path.to_string();
    for _ in 0..=MAX_EXTRA_READS {
        match parse_file_metadata(&bytes, start, size).map_err(|e| e.at(&location, None))? {
            MetadataParse::Parsed(metadata) => return Ok(*metadata),
            MetadataParse::NeedMore(range) => {
                if range.end != start || range.start >= start {
                    return Err(Error::corrupt(format!(
                        "metadata parser asked for {range:?} with bytes from {start}"
                    ))
                    .at(&location, None));
                }
                let request = ReadRequest {
                    path: path.clone(),
                    range: range.clone(),
                    object_size: Some(size),
                };
                let mut fetched = fetcher.fetch(&[request], stats).await?;
                let prefix = fetched
                    .pop()
                    .ok_or_else(|| Error::corrupt("fetch returned nothing"))?;
                let mut joined = Vec::with_capacity(prefix.len() + bytes.len());
                joined.extend_from_slice(&prefix);
                joined.extend_from_slice(&bytes);
                bytes = Bytes::from(joined);
                start = range.start;
            }
        }
    }
    Err(Error::corrupt("file metadata still incomplete after extra reads").at(&location, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(relative: &str) -> Bytes {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/files")
            .join(relative);
        Bytes::from(std::fs::read(path).expect("fixture"))
    }

    #[test]
    fn a_short_tail_asks_for_exactly_the_missing_prefix() {
        let file = fixture("v2_2/strings.lance");
        let size = file.len() as u64;
        let MetadataParse::Parsed(full) = parse_file_metadata(&file, 0, size).expect("parse")
        else {
            panic!("whole file must parse")
        };
        // A tail that covers the footer and the tables but not the schema.
        let tail_start = full.footer.cmo_start;
        let tail = file.slice(tail_start as usize..);
        match parse_file_metadata(&tail, tail_start, size).expect("parse tail") {
            MetadataParse::NeedMore(range) => assert_eq!(range, full.metadata_start..tail_start),
            MetadataParse::Parsed(_) => panic!("schema is not in the tail"),
        }
        // Only the footer: ask from the column metadata on.
        let tail = file.slice(file.len() - 40..);
        match parse_file_metadata(&tail, size - 40, size).expect("parse footer") {
            MetadataParse::NeedMore(range) => {
                assert_eq!(range, full.footer.column_meta_start..size - 40)
            }
            MetadataParse::Parsed(_) => panic!("tables are not in the tail"),
        }
        // Exactly the metadata region suffices.
        let tail = file.slice(full.metadata_start as usize..);
        assert!(matches!(
            parse_file_metadata(&tail, full.metadata_start, size),
            Ok(MetadataParse::Parsed(_))
        ));
        assert_eq!(full.version, FileVersion::V2_2);
        assert_eq!(full.columns.len(), full.schema.num_columns);
        assert!(full.deep_size() > 1000);
    }

    #[test]
    fn tails_that_do_not_end_at_the_object_size_are_rejected() {
        let file = fixture("v2_1/floats.lance");
        let size = file.len() as u64;
        assert!(matches!(
            parse_file_metadata(&file, 1, size),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            parse_file_metadata(&file.slice(..10), 0, 10),
            Err(Error::Corrupt { .. })
        ));
    }
}
