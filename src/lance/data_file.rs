//! [`DataFileReader`]: a Lance file of any version behind one reader — the v2 reader for
//! 2.x files, the legacy reader for v1 files — chosen by the footer's version.
//!
//! With a size hint (a dataset's data and index files) the reader the manifest names opens
//! the file through its cache, the other one taking over on a footer of the other version.
//! Without one (a file opened by URL) one suffix read's footer picks the reader, which
//! decodes the same bytes.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use bytes::Bytes;
use object_store::path::Path;

use crate::error::{Error, Result};
use crate::io::fetch::Tail;
use crate::io::{IoStats, ObjectVersion, RangeFetcher};
use crate::lance::file::{ends_in_legacy_footer, DEFAULT_TAIL_BYTES};
use crate::lance::legacy::format::NOT_LEGACY_MESSAGE;
use crate::lance::legacy::open::is_cached_legacy;
use crate::lance::legacy::read::{LegacyFileReader, LegacySchemaHint};
use crate::lance::reader::{LanceFileReader, ReaderCaches};
use crate::lance::schema::LanceSchema;
use crate::lance::selection::RowSelection;
use crate::lance::version::LEGACY_FOOTER_MESSAGE;

/// An open data file of any version.
#[derive(Debug, Clone)]
pub(crate) enum DataFileReader {
    /// A Lance v2 file (2.0 – 2.3).
    V2(LanceFileReader),
    /// A legacy v1 file.
    Legacy(LegacyFileReader),
}

/// Whether `e` is the v2 reader's refusal of a legacy footer.
fn is_legacy_footer_error(e: &Error) -> bool {
    matches!(e, Error::Unsupported { what, .. } if what.contains(LEGACY_FOOTER_MESSAGE))
}

/// Whether `e` is the legacy reader's refusal of a v2 footer.
fn is_not_legacy_error(e: &Error) -> bool {
    matches!(e, Error::Unsupported { what, .. } if what.contains(NOT_LEGACY_MESSAGE))
}

impl DataFileReader {
    /// Open `path`: a v2 reader, or a legacy reader when the footer says v1. `hint` gives the
    /// dataset's schema for legacy data files (self-describing files need none). With a
    /// size hint: the reader the manifest names, through its cache (no request when cached;
    /// one load for concurrent opens). Without one: one suffix read, whose footer picks the
    /// reader that decodes it.
    pub(crate) async fn open(
        fetcher: RangeFetcher,
        path: Path,
        size_hint: Option<u64>,
        caches: Arc<ReaderCaches>,
        hint: Option<LegacySchemaHint>,
        stats: &IoStats,
    ) -> Result<Self> {
        let tail = DEFAULT_TAIL_BYTES;
        Self::open_with_tail(fetcher, path, size_hint, caches, hint, tail, stats).await
    }

    /// [`Self::open`] whose suffix read of a v2 file of known size asks for `tail_bytes`
    /// (the metadata region when the caller knows about how large it is; a larger region
    /// costs one more read of exactly what is missing).
    pub(crate) async fn open_with_tail(
        fetcher: RangeFetcher,
        path: Path,
        size_hint: Option<u64>,
        caches: Arc<ReaderCaches>,
        hint: Option<LegacySchemaHint>,
        tail_bytes: u64,
        stats: &IoStats,
    ) -> Result<Self> {
        if let Some(size) = size_hint {
            // Concurrent opens of one file share one load: both caches are keyed by path and
            // size and load once. The manifest says legacy (or the legacy file is cached):
            // the legacy reader; a v2 footer after all falls back to the v2 reader.
            if hint.is_some()
                || is_cached_legacy(&caches.legacy, &path, size, field_ids(&hint)).await
            {
                let legacy = Box::pin(open_legacy(
                    fetcher.clone(),
                    path.clone(),
                    size_hint,
                    &caches,
                    hint.clone(),
                    None,
                    stats,
                ));
                match legacy.await {
                    Err(e) if is_not_legacy_error(&e) => {}
                    other => return other,
                }
            }
            let v2 = Box::pin(LanceFileReader::open_with_tail(
                fetcher.clone(),
                path.clone(),
                size_hint,
                Arc::clone(&caches),
                tail_bytes,
                stats,
            ));
            return match v2.await {
                Ok(reader) => Ok(Self::V2(reader)),
                Err(e) if is_legacy_footer_error(&e) => {
                    Box::pin(open_legacy(
                        fetcher, path, size_hint, &caches, hint, None, stats,
                    ))
                    .await
                }
                Err(e) => Err(e),
            };
        }
        // No size known: one suffix read (it learns the size), whose footer picks the reader.
        let known = size_hint.map(|size| ObjectVersion { size, etag: None });
        let tail = fetcher
            .tail_of(&path, DEFAULT_TAIL_BYTES, known.as_ref(), stats)
            .await?;
        if ends_in_legacy_footer(&tail.bytes) {
            return Box::pin(open_legacy(
                fetcher,
                path,
                size_hint,
                &caches,
                hint,
                Some(tail),
                stats,
            ))
            .await;
        }
        let reader = Box::pin(LanceFileReader::open_from_tail(
            fetcher, path, tail, caches, stats,
        ));
        Ok(Self::V2(reader.await?))
    }

    /// Open `path` from a suffix read the caller made (`tail`: the last bytes, or the whole
    /// file): no request when it holds the metadata, and page reads inside it are served
    /// from it.
    pub(crate) async fn open_from_tail(
        fetcher: RangeFetcher,
        path: Path,
        tail: Tail,
        caches: Arc<ReaderCaches>,
        stats: &IoStats,
    ) -> Result<Self> {
        let size = Some(tail.version.size);
        if ends_in_legacy_footer(&tail.bytes) {
            return Box::pin(open_legacy(
                fetcher,
                path,
                size,
                &caches,
                None,
                Some(tail),
                stats,
            ))
            .await;
        }
        let reader = Box::pin(LanceFileReader::open_from_tail(
            fetcher, path, tail, caches, stats,
        ));
        Ok(Self::V2(reader.await?))
    }

    /// The schema reads are typed by.
    pub(crate) fn schema(&self) -> &LanceSchema {
        match self {
            Self::V2(r) => r.schema(),
            Self::Legacy(r) => r.schema(),
        }
    }

    /// The schema as Arrow.
    pub(crate) fn arrow_schema(&self) -> SchemaRef {
        match self {
            Self::V2(r) => r.arrow_schema(),
            Self::Legacy(r) => r.arrow_schema(),
        }
    }

    /// Rows in the file.
    pub(crate) fn num_rows(&self) -> u64 {
        match self {
            Self::V2(r) => r.num_rows(),
            Self::Legacy(r) => r.num_rows(),
        }
    }

    /// Object path.
    pub(crate) fn path(&self) -> &Path {
        match self {
            Self::V2(r) => r.path(),
            Self::Legacy(r) => r.path(),
        }
    }

    /// The object version the reader was opened at.
    pub(crate) fn version(&self) -> &ObjectVersion {
        match self {
            Self::V2(r) => r.version(),
            Self::Legacy(r) => &r.version,
        }
    }

    /// Whether this is a legacy v1 file.
    pub(crate) fn is_legacy(&self) -> bool {
        matches!(self, Self::Legacy(_))
    }

    /// Number of global buffers (legacy v1 files have none).
    pub(crate) fn num_global_buffers(&self) -> usize {
        match self {
            Self::V2(r) => r.metadata().global_buffers.len(),
            Self::Legacy(_) => 0,
        }
    }

    /// The byte range of global buffer `index` (raw entry; `None` for a legacy file or an
    /// entry the file does not have).
    pub(crate) fn global_buffer_range(&self, index: usize) -> Option<Range<u64>> {
        match self {
            Self::V2(r) => r.metadata().global_buffers.get(index).cloned(),
            Self::Legacy(_) => None,
        }
    }

    /// The bytes of global buffers `indices` in one wave (`Corrupt` for a legacy file).
    pub(crate) async fn read_global_buffers(
        &self,
        indices: &[usize],
        stats: &IoStats,
    ) -> Result<Vec<Bytes>> {
        match self {
            Self::V2(r) => r.read_global_buffers(indices, stats).await,
            Self::Legacy(r) => Err(Error::corrupt("global buffers asked of a legacy v1 file")
                .at(r.path().as_ref(), None)),
        }
    }

    /// Whether reading `range` needs no request (a v2 file whose open read holds it).
    pub(crate) fn holds(&self, range: &Range<u64>) -> bool {
        match self {
            Self::V2(r) => r.holds(range),
            Self::Legacy(_) => false,
        }
    }

    /// Read pages of at most `bytes` whole when their init is not cached (v2 files; see
    /// [`LanceFileReader::with_whole_page_bytes`]).
    pub(crate) fn with_whole_page_bytes(self, bytes: u64) -> Self {
        match self {
            Self::V2(r) => Self::V2(r.with_whole_page_bytes(bytes)),
            legacy => legacy,
        }
    }

    /// `(column, page)` of the pages of top-level fields `fields` (every column when `None`)
    /// whose reads need page init data and whose buffers span more than `min_bytes`, in
    /// column order — none when there are more than `max_pages` (a caller prefetching them
    /// then leaves each read to fetch the init it needs) and none for a legacy file, whose
    /// pages need no init.
    pub(crate) fn pages_needing_init(
        &self,
        fields: Option<&[usize]>,
        min_bytes: u64,
        max_pages: usize,
    ) -> Vec<(usize, usize)> {
        let Self::V2(reader) = self else {
            return Vec::new();
        };
        let columns = reader.metadata().columns.iter().enumerate();
        let wanted = |c: usize| match fields {
            None => true,
            Some(fields) => fields.iter().any(|&i| {
                self.schema()
                    .fields
                    .get(i)
                    .is_some_and(|f| (f.first_column..f.first_column + f.num_columns).contains(&c))
            }),
        };
        let mut pages = Vec::new();
        for (c, column) in columns.filter(|(c, _)| wanted(*c)) {
            for (p, page) in column.pages.iter().enumerate() {
                let start = page.buffers.iter().map(|b| b.start).min().unwrap_or(0);
                let end = page.buffers.iter().map(|b| b.end).max().unwrap_or(0);
                let needs_init = !page.layout.init_ranges().is_empty();
                if needs_init && end.saturating_sub(start) > min_bytes {
                    if pages.len() == max_pages {
                        return Vec::new();
                    }
                    pages.push((c, p));
                }
            }
        }
        pages
    }

    /// Decoded page init of `(column, page)` pairs of a v2 file, the ones not cached read
    /// in one wave (into the reader's page-init cache); nothing for a legacy file.
    pub(crate) async fn prefetch_page_inits(
        &self,
        pages: &[(usize, usize)],
        stats: &IoStats,
    ) -> Result<()> {
        match self {
            Self::V2(r) if !pages.is_empty() => r.page_inits(pages, stats).await.map(|_| ()),
            _ => Ok(()),
        }
    }

    /// The bytes of global buffer `index` (`Corrupt` for a legacy file: it has none).
    pub(crate) async fn read_global_buffer(&self, index: usize, stats: &IoStats) -> Result<Bytes> {
        match self {
            Self::V2(r) => r.read_global_buffer(index, stats).await,
            Self::Legacy(r) => Err(Error::corrupt(format!(
                "global buffer {index} asked of a legacy v1 file, which has none"
            ))
            .at(r.path().as_ref(), None)),
        }
    }

    /// Byte ranges of the stored pages of top-level field `field` holding `rows` (v2: the
    /// buffers of its first column's pages; legacy: the field's page of each batch).
    pub(crate) fn page_byte_ranges(&self, field: usize, rows: Range<u64>) -> Vec<Range<u64>> {
        let Some(f) = self.schema().fields.get(field) else {
            return Vec::new();
        };
        match self {
            Self::V2(r) => {
                let Some(column) = r.metadata().columns.get(f.first_column) else {
                    return Vec::new();
                };
                column
                    .pages_for(rows)
                    .filter_map(|p| column.pages.get(p))
                    .flat_map(|p| p.buffers.iter().filter(|b| b.start < b.end).cloned())
                    .collect()
            }
            Self::Legacy(r) => r.field_page_ranges(f.id, rows),
        }
    }

    /// Indices of the top-level fields named `names` (`NotFound` for unknown names).
    pub(crate) fn field_indices(&self, names: &[&str]) -> Result<Vec<usize>> {
        names
            .iter()
            .map(|n| {
                self.schema().field_index(n).ok_or_else(|| Error::NotFound {
                    path: self.path().to_string(),
                    what: format!("column {n:?}"),
                })
            })
            .collect()
    }

    /// [`Self::read_rows`] of a few rows: a v2 file reads the pages whose init is not
    /// cached the few-row way ([`LanceFileReader::read_few_rows`]); other files as always.
    pub(crate) async fn read_few_rows(
        &self,
        columns: &[usize],
        selection: &RowSelection,
        stats: &IoStats,
    ) -> Result<RecordBatch> {
        match self {
            Self::V2(r) => r.read_few_rows(columns, selection, stats).await,
            Self::Legacy(_) => self.read_rows(columns, selection, stats).await,
        }
    }

    /// Read `selection` of the top-level fields `columns`.
    pub(crate) async fn read_rows(
        &self,
        columns: &[usize],
        selection: &RowSelection,
        stats: &IoStats,
    ) -> Result<RecordBatch> {
        match self {
            Self::V2(r) => r.read_rows(columns, selection, stats).await,
            Self::Legacy(r) => r
                .read_rows(columns, selection, stats)
                .await
                .map_err(|e| e.at(r.path().as_ref(), None)),
        }
    }
}

/// The field ids a legacy hint reads.
fn field_ids(hint: &Option<LegacySchemaHint>) -> Option<&Range<i32>> {
    hint.as_ref().map(|h| &h.field_ids)
}

/// The legacy reader of `path`, through the legacy cache of `caches`.
async fn open_legacy(
    fetcher: RangeFetcher,
    path: Path,
    size_hint: Option<u64>,
    caches: &ReaderCaches,
    hint: Option<LegacySchemaHint>,
    prefetched: Option<Tail>,
    stats: &IoStats,
) -> Result<DataFileReader> {
    let cache = &caches.legacy;
    LegacyFileReader::open(fetcher, path, size_hint, cache, hint, prefetched, stats)
        .await
        .map(DataFileReader::Legacy)
}
