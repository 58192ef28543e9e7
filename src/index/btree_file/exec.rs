//! BTree I/O: load a segment's page lookup (one GET of the whole small file, cached) in the
//! same wave as the page-data file's metadata, then read only the rows of the selected
//! pages (`values` + `ids` for partial pages, `ids` alone for pages entirely inside the
//! query) through the file reader's planned chunk reads — all pages of a query in one
//! page-init wave and one chunk wave.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;
use async_trait::async_trait;
use bytes::Bytes;
use object_store::path::Path;

use super::layout::{PageDataLayout, IDS, VALUES};
use super::{BTreePageLookup, PageMatch, PageSelection};
use crate::error::{Error, Result};
use crate::index::caches::{session_cache, sized_session_cache};
use crate::index::key::KeyColumn;
use crate::index::predicate::Predicate;
use crate::index::sql::eval::{eval_predicate, ColumnsRow};
use crate::io::budget::CacheShare;
use crate::io::cache::{CacheKey, DeepSize, SizedCache};
use crate::io::{FetchOptions, IoStats, ObjectVersion, RangeFetcher, RangeSource};
use crate::lance::data_file::DataFileReader;
use crate::lance::dataset::{DatasetVersion, IndexSegment};
use crate::lance::reader::{ReaderCaches, RowSelection};

/// Canonical file names of a BTree segment.
pub(crate) const PAGE_LOOKUP_FILE: &str = "page_lookup.lance";
/// Canonical page-data file name.
pub(crate) const PAGE_DATA_FILE: &str = "page_data.lance";

/// One decoded BTree page (for the opt-in page cache).
#[derive(Debug, Clone)]
pub(crate) struct BTreePageData {
    /// Sorted values.
    pub values: ArrayRef,
    /// Row addresses (or row ids) of the values.
    pub ids: ArrayRef,
}

impl DeepSize for BTreePageData {
    fn deep_size(&self) -> usize {
        64 + self.values.get_array_memory_size() + self.ids.get_array_memory_size()
    }
}

impl DeepSize for BTreePageLookup {
    fn deep_size(&self) -> usize {
        self.approx_bytes
    }
}

/// A BTree segment whose lookup is loaded and whose page-data file is open.
#[derive(Debug, Clone)]
pub(crate) struct OpenedSegment {
    /// The decoded lookup.
    pub lookup: Arc<BTreePageLookup>,
    /// Path of the lookup file.
    pub lookup_path: Path,
    /// Page-data files (one unless the index is range-partitioned).
    pub page_data: Vec<DataFileReader>,
}

/// The TRUE ids of one segment for a query, and what was read.
#[derive(Debug, Clone, Default)]
pub(crate) struct SegmentAnswer {
    /// Ids (row addresses) whose value makes the predicate TRUE, unsorted.
    pub ids: Vec<u64>,
    /// Pages selected, with their kind.
    #[allow(dead_code)] // kept for debugging output (Debug) and future callers
    pub pages: PageSelection,
    /// Pages served from the page cache.
    pub cached_pages: usize,
}

fn file_size(segment: &IndexSegment, name: &str) -> Option<u64> {
    segment.file_size(name)
}

/// The lookup file name of a segment: `page_lookup.lance`, or the single
/// `part_<id>_page_lookup.lance` older range-partitioned builds left.
fn lookup_name(segment: &IndexSegment) -> Result<String> {
    if segment.files.is_empty() || segment.file_size(PAGE_LOOKUP_FILE).is_some() {
        return Ok(PAGE_LOOKUP_FILE.to_string());
    }
    let parts: Vec<&str> = segment
        .files
        .iter()
        .map(|f| f.path.as_str())
        .filter(|p| p.starts_with("part_") && p.ends_with("_page_lookup.lance"))
        .collect();
    match parts.as_slice() {
        [one] => Ok(one.to_string()),
        _ => Err(Error::NotFound {
            path: segment.uuid_string(),
            what: format!("index {:?} lists no {PAGE_LOOKUP_FILE}", segment.name),
        }),
    }
}

/// Whether opening `segment` needs no request (lookup and page-data metadata cached).
pub(crate) async fn segment_is_cached(dataset: &DatasetVersion, segment: &IndexSegment) -> bool {
    let Ok(name) = lookup_name(segment) else {
        return false;
    };
    let (Some(lookup_size), Ok(lookup_path)) = (
        file_size(segment, &name),
        dataset.index_file_path(segment, &name),
    ) else {
        return false;
    };
    let lookup_key = CacheKey {
        path: lookup_path.to_string(),
        version: ObjectVersion {
            size: lookup_size,
            etag: None,
        },
        item: (),
    };
    let lookups = lookup_cache(dataset);
    lookups.get(&lookup_key).await.is_some()
        && dataset.is_index_file_cached(segment, PAGE_DATA_FILE).await
}

/// Open a segment: lookup (cached) and page-data metadata, in one wave.
pub(crate) async fn open_segment(
    dataset: &DatasetVersion,
    segment: &IndexSegment,
    stats: &IoStats,
) -> Result<OpenedSegment> {
    let lookup_name = lookup_name(segment)?;
    let lookup_path = dataset.index_file_path(segment, &lookup_name)?;
    let single_data = segment.files.is_empty() || segment.file_size(PAGE_DATA_FILE).is_some();
    let lookup_fut = load_lookup(
        dataset,
        &lookup_path,
        file_size(segment, &lookup_name),
        stats,
    );
    if single_data {
        let data_fut = dataset.open_index_file(segment, PAGE_DATA_FILE, stats);
        let (lookup, data) = futures::try_join!(lookup_fut, data_fut)?;
        if lookup.partitions.is_some() {
            return Err(Error::corrupt(
                "range-partitioned lookup next to a single page_data.lance",
            )
            .at(lookup_path.as_ref(), None));
        }
        return Ok(OpenedSegment {
            lookup,
            lookup_path,
            page_data: vec![data],
        });
    }
    let lookup = lookup_fut.await?;
    let Some(parts) = lookup.partitions.clone() else {
        return Err(Error::NotFound {
            path: dataset
                .index_file_path(segment, PAGE_DATA_FILE)?
                .to_string(),
            what: format!("index {:?} lists no {PAGE_DATA_FILE}", segment.name),
        });
    };
    let opens = parts.iter().map(|(id, _)| {
        let name = format!("part_{id}_page_data.lance");
        async move { dataset.open_index_file(segment, &name, stats).await }
    });
    let page_data = futures::future::try_join_all(opens).await?;
    Ok(OpenedSegment {
        lookup,
        lookup_path,
        page_data,
    })
}

/// The session's cache of decoded page lookups, by `page_lookup.lance` path + size.
fn lookup_cache(dataset: &DatasetVersion) -> SizedCache<(), BTreePageLookup> {
    session_cache(dataset.session(), CacheShare::BTreeLookups)
}

/// The session's cache of decoded pages (values + ids) by page-data path + size + page
/// number; `None` only in test sessions built without a page cache.
fn page_cache(dataset: &DatasetVersion) -> Option<SizedCache<u32, BTreePageData>> {
    let session = dataset.session();
    let bytes = session.index_page_cache_bytes?;
    Some(sized_session_cache(session, CacheShare::BTreePages, bytes))
}

/// The decoded lookup of `path` (one GET of the whole file; cached by path + size).
pub(crate) async fn load_lookup(
    dataset: &DatasetVersion,
    path: &Path,
    manifest_size: Option<u64>,
    stats: &IoStats,
) -> Result<Arc<BTreePageLookup>> {
    let key = CacheKey {
        path: path.to_string(),
        version: ObjectVersion {
            size: manifest_size.unwrap_or(0),
            etag: None,
        },
        item: (),
    };
    lookup_cache(dataset)
        .get_or_try_load(key, async {
            let known = manifest_size.map(|size| ObjectVersion { size, etag: None });
            let whole = dataset
                .store()
                .fetcher
                .whole_of(path, known.as_ref(), stats)
                .await?;
            if let Some(size) = manifest_size {
                if whole.version.size != size {
                    return Err(Error::Corrupt {
                        path: path.to_string(),
                        range: None,
                        what: format!(
                            "file is {} bytes, the manifest says {size}",
                            whole.version.size
                        ),
                    });
                }
            }
            decode_lookup(path, whole.bytes)
                .await
                .map_err(|e| e.at(path.as_ref(), None))
        })
        .await
}

/// Decode a whole `page_lookup.lance` held in memory (no I/O: the file reader reads from
/// the bytes).
pub(crate) async fn decode_lookup(path: &Path, bytes: Bytes) -> Result<BTreePageLookup> {
    let size = bytes.len() as u64;
    let source: Arc<dyn RangeSource> = Arc::new(InMemoryObject {
        path: path.clone(),
        bytes,
    });
    let fetcher = RangeFetcher::new(source, FetchOptions::default());
    let scratch = IoStats::new();
    let reader = DataFileReader::open(
        fetcher,
        path.clone(),
        Some(size),
        Arc::new(ReaderCaches::new(1 << 20, 1 << 20)),
        None,
        &scratch,
    )
    .await?;
    let columns = reader.field_indices(&["min", "max", "null_count", "page_idx"])?;
    let batch = reader
        .read_rows(
            &columns,
            &RowSelection::Range(0..reader.num_rows()),
            &scratch,
        )
        .await?;
    BTreePageLookup::new(
        batch.column(0),
        batch.column(1),
        batch.column(2),
        batch.column(3),
        &reader.schema().metadata,
    )
}

/// Selected pages of one page-data file: page -> (match kind, rows in the file).
pub(crate) type FilePages = BTreeMap<u32, (PageMatch, Range<u64>)>;

/// Which data-file rows each selected page covers, grouped per page-data file.
pub(crate) fn plan_page_rows(
    lookup: &BTreePageLookup,
    selection: &PageSelection,
    file_rows: &[u64],
) -> Result<Vec<FilePages>> {
    let mut per_file: Vec<FilePages> = vec![BTreeMap::new(); file_rows.len()];
    for (&page, &kind) in selection {
        let (file, rows) = lookup.page_rows(page, file_rows)?;
        per_file[file].insert(page, (kind, rows));
    }
    Ok(per_file)
}

fn rows_of<'a>(pages: impl Iterator<Item = &'a Range<u64>>) -> Vec<u64> {
    pages.flat_map(|r| r.clone()).collect()
}

/// Read the selected pages of an opened segment and return the ids whose value makes
/// `predicate` (all leaves on this index's column) TRUE.
pub(crate) async fn answer_segment(
    dataset: &DatasetVersion,
    opened: &OpenedSegment,
    predicate: &Predicate,
    stats: &IoStats,
) -> Result<SegmentAnswer> {
    let selection = opened.lookup.select(predicate);
    let file_rows: Vec<u64> = opened.page_data.iter().map(|r| r.num_rows()).collect();
    let per_file = plan_page_rows(&opened.lookup, &selection, &file_rows)?;
    let reads = opened
        .page_data
        .iter()
        .zip(&per_file)
        .map(|(reader, pages)| {
            read_file_pages(dataset, reader, &opened.lookup, pages, predicate, stats)
        });
    let results = futures::future::try_join_all(reads).await?;
    let mut answer = SegmentAnswer {
        pages: selection,
        ..Default::default()
    };
    for (ids, cached) in results {
        answer.ids.extend(ids);
        answer.cached_pages += cached;
    }
    Ok(answer)
}

/// Read every page of an opened segment into the session's page cache (pages already
/// there are not read again); returns how many pages the segment has. Without a page
/// cache (test sessions) nothing is read.
pub(crate) async fn load_all_pages(
    dataset: &DatasetVersion,
    opened: &OpenedSegment,
    stats: &IoStats,
) -> Result<usize> {
    let pages = opened.lookup.num_pages();
    let Some(cache) = &page_cache(dataset) else {
        return Ok(pages);
    };
    let pages_u32 = u32::try_from(pages).map_err(|_| {
        Error::corrupt(format!("{pages} BTree pages")).at(opened.lookup_path.as_ref(), None)
    })?;
    let selection: PageSelection = (0..pages_u32).map(|p| (p, PageMatch::All)).collect();
    let file_rows: Vec<u64> = opened.page_data.iter().map(|r| r.num_rows()).collect();
    let per_file = plan_page_rows(&opened.lookup, &selection, &file_rows)?;
    // Every page is marked "all rows match": the predicate is never evaluated.
    let unused = Predicate::And(Vec::new());
    let reads = opened
        .page_data
        .iter()
        .zip(&per_file)
        .map(|(reader, pages)| {
            let unused = &unused;
            async move {
                if pages.is_empty() {
                    return Ok(());
                }
                let columns = columns_of(reader, &opened.lookup)?;
                read_pages_cached(cache, reader, pages, columns, unused, stats).await?;
                Ok::<_, Error>(())
            }
        });
    futures::future::try_join_all(reads).await?;
    Ok(pages)
}

fn columns_of(reader: &DataFileReader, lookup: &BTreePageLookup) -> Result<(usize, usize)> {
    let layout = PageDataLayout::of(reader)?;
    let idx = reader.field_indices(&layout.names(&[VALUES, IDS]))?;
    let schema = reader.arrow_schema();
    let values_type = schema.field(idx[0]).data_type();
    if values_type != &lookup.value_type {
        return Err(Error::corrupt(format!(
            "page data values are {values_type}, the lookup holds {}",
            lookup.value_type
        ))
        .at(reader.path().as_ref(), None));
    }
    if schema.field(idx[1]).data_type() != &DataType::UInt64 {
        return Err(Error::corrupt("page data ids are not UInt64").at(reader.path().as_ref(), None));
    }
    Ok((idx[0], idx[1]))
}

async fn read_file_pages(
    dataset: &DatasetVersion,
    reader: &DataFileReader,
    lookup: &BTreePageLookup,
    pages: &FilePages,
    predicate: &Predicate,
    stats: &IoStats,
) -> Result<(Vec<u64>, usize)> {
    if pages.is_empty() {
        return Ok((Vec::new(), 0));
    }
    let (values_col, ids_col) = columns_of(reader, lookup)?;
    if let Some(cache) = &page_cache(dataset) {
        return read_pages_cached(
            cache,
            reader,
            pages,
            (values_col, ids_col),
            predicate,
            stats,
        )
        .await;
    }
    let some_rows = rows_of(
        pages
            .values()
            .filter(|(k, _)| *k == PageMatch::Some)
            .map(|(_, r)| r),
    );
    let all_rows = rows_of(
        pages
            .values()
            .filter(|(k, _)| *k == PageMatch::All)
            .map(|(_, r)| r),
    );
    let some = async {
        if some_rows.is_empty() {
            return Ok(None);
        }
        reader
            .read_rows(
                &[values_col, ids_col],
                &RowSelection::Rows(some_rows),
                stats,
            )
            .await
            .map(Some)
    };
    let all = async {
        if all_rows.is_empty() {
            return Ok(None);
        }
        reader
            .read_rows(&[ids_col], &RowSelection::Rows(all_rows), stats)
            .await
            .map(Some)
    };
    let (some, all) = futures::try_join!(some, all)?;
    let mut out = Vec::new();
    if let Some(batch) = some {
        filter_page(batch.column(0), batch.column(1), predicate, &mut out)
            .map_err(|e| e.at(reader.path().as_ref(), None))?;
    }
    if let Some(batch) = all {
        out.extend(ids_of(batch.column(0)).map_err(|e| e.at(reader.path().as_ref(), None))?);
    }
    Ok((out, 0))
}

async fn read_pages_cached(
    cache: &SizedCache<u32, BTreePageData>,
    reader: &DataFileReader,
    pages: &FilePages,
    (values_col, ids_col): (usize, usize),
    predicate: &Predicate,
    stats: &IoStats,
) -> Result<(Vec<u64>, usize)> {
    let key = |page: u32| CacheKey {
        path: reader.path().to_string(),
        version: reader.version().clone(),
        item: page,
    };
    let mut have: BTreeMap<u32, Arc<BTreePageData>> = BTreeMap::new();
    for page in pages.keys() {
        if let Some(p) = cache.get(&key(*page)).await {
            have.insert(*page, p);
        }
    }
    let cached = have.len();
    let missing: Vec<(u32, Range<u64>)> = pages
        .iter()
        .filter(|(p, _)| !have.contains_key(p))
        .map(|(p, (_, r))| (*p, r.clone()))
        .collect();
    if !missing.is_empty() {
        let rows = rows_of(missing.iter().map(|(_, r)| r));
        let batch = reader
            .read_rows(&[values_col, ids_col], &RowSelection::Rows(rows), stats)
            .await?;
        let mut offset = 0usize;
        for (page, r) in &missing {
            let len = (r.end - r.start) as usize;
            if offset + len > batch.num_rows() {
                return Err(Error::corrupt("reader returned fewer rows than asked")
                    .at(reader.path().as_ref(), None));
            }
            let data = Arc::new(BTreePageData {
                values: own_rows(batch.column(0), offset, len)?,
                ids: own_rows(batch.column(1), offset, len)?,
            });
            offset += len;
            cache.insert(key(*page), Arc::clone(&data)).await;
            have.insert(*page, data);
        }
    }
    let mut out = Vec::new();
    for (page, data) in &have {
        match pages.get(page).map(|(k, _)| *k) {
            Some(PageMatch::All) => out.extend(ids_of(&data.ids)?),
            _ => filter_page(&data.values, &data.ids, predicate, &mut out)?,
        }
    }
    Ok((out, cached))
}

/// Rows `offset..offset + len` of `column` in buffers of their own. A slice would keep (and
/// be charged by the page cache for) the whole batch of every page read in the same wave:
/// ten pages read together each weighed ten pages, so the cache held a tenth of what its
/// budget allows.
fn own_rows(column: &ArrayRef, offset: usize, len: usize) -> Result<ArrayRef> {
    let start =
        u32::try_from(offset).map_err(|_| Error::corrupt("BTree page offset exceeds u32"))?;
    let end = start
        .checked_add(u32::try_from(len).unwrap_or(u32::MAX))
        .ok_or_else(|| Error::corrupt("BTree page rows exceed u32"))?;
    let indices = arrow_array::UInt32Array::from_iter_values(start..end);
    Ok(arrow_select::take::take(column.as_ref(), &indices, None)?)
}

fn ids_of(ids: &ArrayRef) -> Result<Vec<u64>> {
    if ids.null_count() > 0 || ids.data_type() != &DataType::UInt64 {
        return Err(Error::corrupt("page data ids must be non-null UInt64"));
    }
    Ok(ids.as_primitive::<UInt64Type>().values().to_vec())
}

/// Append the ids of rows whose value makes `predicate` TRUE, evaluated by the one
/// three-valued evaluator (the code that evaluates the leaf on unindexed data).
pub(crate) fn filter_page(
    values: &ArrayRef,
    ids: &ArrayRef,
    predicate: &Predicate,
    out: &mut Vec<u64>,
) -> Result<()> {
    let ids = ids_of(ids)?;
    let keys = KeyColumn::new(values)?;
    if keys.len() != ids.len() {
        return Err(Error::corrupt("page data values and ids differ in length"));
    }
    let test = predicate.to_sql();
    let columns = [Some(keys)];
    for (row, id) in ids.iter().enumerate() {
        if eval_predicate(
            &test,
            &ColumnsRow {
                columns: &columns,
                row,
            },
        ) == Some(true)
        {
            out.push(*id);
        }
    }
    Ok(())
}

/// One object held in memory, served as a [`RangeSource`] (no I/O).
#[derive(Debug)]
struct InMemoryObject {
    path: Path,
    bytes: Bytes,
}

impl InMemoryObject {
    fn check(&self, path: &Path) -> Result<()> {
        if path != &self.path {
            return Err(Error::NotFound {
                path: path.to_string(),
                what: "not the in-memory object".into(),
            });
        }
        Ok(())
    }

    fn version(&self) -> ObjectVersion {
        ObjectVersion {
            size: self.bytes.len() as u64,
            etag: None,
        }
    }
}

#[async_trait]
impl RangeSource for InMemoryObject {
    async fn get_range(
        &self,
        path: &Path,
        range: Range<u64>,
        _expected: Option<&ObjectVersion>,
    ) -> Result<Bytes> {
        self.check(path)?;
        if range.start >= range.end || range.end > self.bytes.len() as u64 {
            return Err(Error::Corrupt {
                path: path.to_string(),
                range: Some(range.clone()),
                what: format!("range outside the {}-byte object", self.bytes.len()),
            });
        }
        Ok(self.bytes.slice(range.start as usize..range.end as usize))
    }

    async fn get_suffix(&self, path: &Path, n: u64) -> Result<(Bytes, ObjectVersion)> {
        self.check(path)?;
        let start = self
            .bytes
            .len()
            .saturating_sub(n.min(usize::MAX as u64) as usize);
        Ok((self.bytes.slice(start..), self.version()))
    }

    async fn get_all(&self, path: &Path) -> Result<(Bytes, ObjectVersion)> {
        self.check(path)?;
        Ok((self.bytes.clone(), self.version()))
    }

    fn coalesce_gap(&self) -> u64 {
        0
    }

    fn describe(&self) -> String {
        format!("memory://{}", self.path)
    }
}

#[cfg(test)]
mod own_rows_tests {
    use std::sync::Arc;

    use arrow_array::{Array, ArrayRef, StringArray, UInt64Array};

    use super::{own_rows, BTreePageData};
    use crate::io::cache::DeepSize;

    #[test]
    fn a_cached_page_weighs_its_own_rows_not_the_wave() {
        // Ten pages of 4096 rows read in one wave, as the reader returns them.
        let values: ArrayRef = Arc::new(StringArray::from_iter_values(
            (0..40_960u64).map(|i| format!("{i:016x}")),
        ));
        let ids: ArrayRef = Arc::new(UInt64Array::from_iter_values(0..40_960));
        let page = BTreePageData {
            values: own_rows(&values, 8192, 4096).unwrap(),
            ids: own_rows(&ids, 8192, 4096).unwrap(),
        };
        let wave = values.get_array_memory_size() + ids.get_array_memory_size();
        assert!(
            page.deep_size() * 5 < wave,
            "{} vs {wave}",
            page.deep_size()
        );
        let first = page.values.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!((first.len(), first.value(0)), (4096, "0000000000002000"));
        assert_eq!(page.ids.len(), 4096);
    }
}
