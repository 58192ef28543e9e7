//! Bitmap lookup I/O: open `bitmap_page_lookup.lance` with lakeseek's Lance file reader,
//! read its `keys` column whole on the first search (page init of both columns in the
//! first wave; the keys of old lookups are not sorted, see [`search_keys`]), find the rows
//! of the matching keys, and read only those rows of the `bitmaps` column. Keys read and row sets decoded are cached in the
//! session, so a warm repeat reads nothing but row sets it has not decoded yet.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::Array;
use arrow_schema::DataType;
use object_store::path::Path;
use roaring::RoaringBitmap;

use super::cache::{key_cache, row_set_cache};
use super::search::{cmp_keys, merge, unsorted_span_rows, KeySamples, KeySpans, SearchPlan};
use super::treemap::{decode_row_set, RowSet};
use crate::error::{Error, Result};
use crate::index::key::{Key, KeyColumn};
use crate::index::kind::row_ids::holds_row_ids;
use crate::index::kind::segments::{coverage_of, covered_segments};
use crate::index::kind::IndexSegments;
use crate::io::cache::CacheKey;
use crate::io::IoStats;
use crate::lance::data_file::DataFileReader;
use crate::lance::dataset::{DatasetVersion, IndexSegment};
use crate::lance::reader::RowSelection;

/// File name of a bitmap (and label-list) index.
pub(crate) const BITMAP_LOOKUP_FILE: &str = "bitmap_page_lookup.lance";
/// Schema metadata key naming the global buffer of a label list's null-list rows.
pub(crate) const LABEL_LIST_NULLS_KEY: &str = "lance:label_list_nulls";

/// An open bitmap lookup file.
#[derive(Debug, Clone)]
pub(crate) struct BitmapFile {
    /// The file.
    pub(crate) reader: DataFileReader,
    /// Field index of `keys`.
    keys: usize,
    /// Field index of `bitmaps`.
    bitmaps: usize,
    /// The segment's covered fragments when its bitmaps hold stable row ids (resolved to
    /// row addresses through those fragments' sequences), `None` when they hold row
    /// addresses.
    pub(crate) row_ids: Option<RoaringBitmap>,
}

impl BitmapFile {
    /// Path of the file.
    pub(crate) fn path(&self) -> &Path {
        self.reader.path()
    }

    /// Number of distinct keys (rows), the null key included.
    pub(crate) fn num_keys(&self) -> u64 {
        self.reader.num_rows()
    }

    fn corrupt(&self, e: Error) -> Error {
        e.at(self.path().as_ref(), None)
    }
}

/// Open the lookup of `segment` (one suffix read, none when its metadata is cached).
pub(crate) async fn open_bitmap_file(
    dataset: &DatasetVersion,
    segment: &IndexSegment,
    stats: &IoStats,
) -> Result<BitmapFile> {
    let path = dataset.index_file_path(segment, BITMAP_LOOKUP_FILE)?;
    let reader = dataset
        .open_index_file(segment, BITMAP_LOOKUP_FILE, stats)
        .await?;
    let idx = reader.field_indices(&["keys", "bitmaps"])?;
    let schema = reader.arrow_schema();
    if schema.field(idx[1]).data_type() != &DataType::Binary {
        return Err(Error::corrupt(format!(
            "bitmaps column is {}, not Binary",
            schema.field(idx[1]).data_type()
        ))
        .at(path.as_ref(), None));
    }
    Ok(BitmapFile {
        reader,
        keys: idx[0],
        bitmaps: idx[1],
        row_ids: holds_row_ids(dataset, segment).then(|| coverage_of(dataset, segment)),
    })
}

/// The bitmap files of the segments of `index` that cover current fragments (opened in one
/// wave), each with its coverage, and the union of the coverage.
pub(crate) async fn open_bitmap_segments(
    dataset: &DatasetVersion,
    index: &IndexSegments,
    stats: &IoStats,
) -> Result<(Vec<(BitmapFile, RoaringBitmap)>, RoaringBitmap)> {
    let (segments, coverage) = covered_segments(dataset, index);
    let opens = segments
        .iter()
        .map(|(s, _)| open_bitmap_file(dataset, s, stats));
    let files = futures::future::try_join_all(opens).await?;
    let covers = segments.into_iter().map(|(_, c)| c);
    Ok((files.into_iter().zip(covers).collect(), coverage))
}

/// The explain JSON of opened bitmap segments: path, keys, covered fragments.
pub(crate) fn lookups_json(segments: &[(BitmapFile, RoaringBitmap)]) -> serde_json::Value {
    let lookups = segments.iter().map(|(f, c)| {
        serde_json::json!({
            "path": f.path().to_string(),
            "keys": f.num_keys(),
            "fragments": c.iter().collect::<Vec<u32>>(),
        })
    });
    serde_json::Value::Array(lookups.collect())
}

/// Whether opening the lookup of `segment` needs no request (its metadata is cached).
pub(crate) async fn is_lookup_cached(dataset: &DatasetVersion, segment: &IndexSegment) -> bool {
    dataset
        .is_index_file_cached(segment, BITMAP_LOOKUP_FILE)
        .await
}

/// Page init of every page of both columns, in one wave (cached by the reader): the key
/// search and the bitmap read then need no page-init wave of their own.
pub(crate) async fn prefetch_page_inits(file: &BitmapFile, stats: &IoStats) -> Result<()> {
    // Legacy v1 files have no page inits: their page tables come with the open.
    let DataFileReader::V2(reader) = &file.reader else {
        return Ok(());
    };
    let schema = reader.schema();
    let mut pages = Vec::new();
    for field in [file.keys, file.bitmaps] {
        let column = schema.fields[field].first_column;
        let count = reader
            .metadata()
            .columns
            .get(column)
            .map_or(0, |c| c.pages.len());
        pages.extend((0..count).map(|p| (column, p)));
    }
    reader.page_inits(&pages, stats).await?;
    Ok(())
}

fn samples_key(file: &BitmapFile) -> CacheKey<()> {
    CacheKey {
        path: file.path().to_string(),
        version: file.reader.version().clone(),
        item: (),
    }
}

/// What a key search found: rows of the lookup whose keys match, and the null key's row.
#[derive(Debug, Clone, Default)]
pub(crate) struct KeyRows {
    /// Lookup rows of matching keys (sorted, disjoint).
    pub(crate) rows: Vec<Range<u64>>,
    /// The lookup rows of each span, ascending, in the order of the spans.
    pub(crate) span_rows: Vec<Vec<u64>>,
    /// Row of the null key, when the lookup has one.
    pub(crate) null_row: Option<u64>,
    /// Keys read from the file (not from the cache) during the search.
    pub(crate) keys_read: u64,
    /// Search rounds that read the file.
    pub(crate) rounds: u32,
}

/// Find the lookup rows of the keys in `spans` (and the null key's row). The first search
/// of a lookup reads its whole `keys` column in one wave (cached with the session, as lance
/// itself loads every key): only all the keys prove where the null key is and that the keys
/// are sorted. pylance <= 0.39 wrote BITMAP and LABEL_LIST lookups in hash order, 6.1.0
/// label lists too, and nothing in their metadata says so; a probe search over such a
/// lookup can look sorted and miss keys (issue 32: `c IS NULL` lost the null key's rows).
/// A sorted lookup is searched by its rows, an unsorted one through its sorted view.
pub(crate) async fn search_keys(
    dataset: &DatasetVersion,
    file: &BitmapFile,
    spans: &KeySpans,
    stats: &IoStats,
) -> Result<KeyRows> {
    let cache = &key_cache(dataset);
    let key = samples_key(file);
    let mut samples: KeySamples = cache
        .get(&key)
        .await
        .map(|s| (*s).clone())
        .unwrap_or_default();
    let mut found = KeyRows::default();
    if samples.unsorted.is_none() && (samples.keys.len() as u64) < file.num_keys() {
        found.rounds += 1;
        found.keys_read += file.num_keys();
        read_all_keys(file, &mut samples, stats).await?;
    }
    match &samples.unsorted {
        Some(view) => {
            for (start, end) in &spans.spans {
                found.span_rows.push(unsorted_span_rows(view, start, end));
            }
            let rows = found.span_rows.iter().flatten().map(|&r| r..r + 1);
            found.rows = merge(rows.collect());
            found.null_row = view.first().and_then(|(k, r)| k.is_none().then_some(*r));
        }
        None => {
            let plan = SearchPlan::new(file.num_keys(), 1, file.num_keys());
            let mut rows = Vec::new();
            for (start, end) in &spans.spans {
                let (Some(a), Some(b)) =
                    (plan.resolved(&samples, start), plan.resolved(&samples, end))
                else {
                    return Err(file.corrupt(Error::corrupt("key search did not converge")));
                };
                found.span_rows.push((a..b.max(a)).collect());
                if a < b {
                    rows.push(a..b);
                }
            }
            found.rows = merge(rows);
            found.null_row = samples.keys.get(&0).and_then(|k| k.is_none().then_some(0));
        }
    }
    if found.rounds > 0 {
        cache.insert(key, Arc::new(samples)).await;
    }
    Ok(found)
}

/// Read every key of the lookup (one wave): sorted keys go into `samples` as the search
/// reads them, unsorted ones become its sorted view.
async fn read_all_keys(file: &BitmapFile, samples: &mut KeySamples, stats: &IoStats) -> Result<()> {
    let n = file.num_keys();
    let batch = file
        .reader
        .read_rows(&[file.keys], &RowSelection::Range(0..n), stats)
        .await?;
    let keys = KeyColumn::new(batch.column(0)).map_err(|e| file.corrupt(e))?;
    if keys.len() as u64 != n {
        return Err(file.corrupt(Error::corrupt("reader returned the wrong number of keys")));
    }
    let all: Vec<Option<Key>> = (0..keys.len())
        .map(|i| keys.get(i).map(|k| k.to_key()))
        .collect();
    let sorted = all.windows(2).all(|w| cmp_keys(&w[0], &w[1]).is_lt())
        && all.iter().skip(1).all(Option::is_some);
    if sorted && samples.unsorted.is_none() {
        for (row, key) in (0u64..).zip(all) {
            samples
                .insert(row, key)
                .map_err(|e| file.corrupt(e.context("bitmap lookup keys")))?;
        }
    } else {
        samples.set_unsorted(all);
    }
    Ok(())
}

/// Every key and every row set of the lookup, into the session caches (prewarm); later
/// searches and row-set reads of this file then need no request. Returns the keys loaded.
pub(crate) async fn load_all_keys_and_row_sets(
    dataset: &DatasetVersion,
    file: &BitmapFile,
    stats: &IoStats,
) -> Result<u64> {
    let n = file.num_keys();
    if n == 0 {
        return Ok(0);
    }
    let cache = key_cache(dataset);
    let key = samples_key(file);
    let mut samples: KeySamples = cache
        .get(&key)
        .await
        .map(|s| (*s).clone())
        .unwrap_or_default();
    let all: Vec<u64> = (0..n).collect();
    let keys = read_all_keys(file, &mut samples, stats);
    let sets = read_row_sets(dataset, file, &all, stats);
    futures::try_join!(keys, sets)?;
    cache.insert(key, Arc::new(samples)).await;
    Ok(n)
}

fn row_set_key(file: &BitmapFile, item: u64) -> CacheKey<u64> {
    CacheKey {
        path: file.path().to_string(),
        version: file.reader.version().clone(),
        item,
    }
}

/// The decoded row sets of lookup `rows` (sorted ascending), from the cache or one read
/// of only those rows of the `bitmaps` column.
pub(crate) async fn read_row_sets(
    dataset: &DatasetVersion,
    file: &BitmapFile,
    rows: &[u64],
    stats: &IoStats,
) -> Result<Vec<Arc<RowSet>>> {
    let cache = &row_set_cache(dataset);
    let mut out: Vec<Option<Arc<RowSet>>> = Vec::with_capacity(rows.len());
    let mut missing = Vec::new();
    for &row in rows {
        let hit = cache.get(&row_set_key(file, row)).await;
        if hit.is_none() {
            missing.push(row);
        }
        out.push(hit);
    }
    if !missing.is_empty() {
        let batch = file
            .reader
            .read_rows(&[file.bitmaps], &RowSelection::Rows(missing.clone()), stats)
            .await?;
        let values = batch.column(0);
        let binary = values
            .as_binary_opt::<i32>()
            .ok_or_else(|| file.corrupt(Error::corrupt("bitmaps column is not Binary")))?;
        if binary.len() != missing.len() {
            return Err(file.corrupt(Error::corrupt(
                "reader returned the wrong number of bitmaps",
            )));
        }
        let mut decoded = std::collections::HashMap::new();
        for (i, row) in missing.iter().enumerate() {
            if binary.is_null(i) {
                return Err(file.corrupt(Error::corrupt(format!("bitmap of row {row} is null"))));
            }
            let set = decode_row_set(binary.value(i), &format!("bitmap of lookup row {row}"))
                .map_err(|e| file.corrupt(e))?;
            let set = Arc::new(set);
            cache
                .insert(row_set_key(file, *row), Arc::clone(&set))
                .await;
            decoded.insert(*row, set);
        }
        for (slot, row) in out.iter_mut().zip(rows) {
            if slot.is_none() {
                *slot = decoded.get(row).cloned();
            }
        }
    }
    out.into_iter()
        .map(|s| s.ok_or_else(|| file.corrupt(Error::corrupt("internal: row set missing"))))
        .collect()
}

/// The decoded row set stored in global buffer `index` (cached like a row).
pub(crate) async fn read_buffer_row_set(
    dataset: &DatasetVersion,
    reader: &DataFileReader,
    index: usize,
    stats: &IoStats,
) -> Result<Arc<RowSet>> {
    let key = CacheKey {
        path: reader.path().to_string(),
        version: reader.version().clone(),
        item: u64::MAX - index as u64,
    };
    row_set_cache(dataset)
        .get_or_try_load(key, async {
            let bytes = reader.read_global_buffer(index, stats).await?;
            decode_row_set(&bytes, &format!("row set of global buffer {index}"))
                .map_err(|e| e.at(reader.path().as_ref(), None))
        })
        .await
}

/// The global buffer index the schema metadata `key` names, if any.
pub(crate) fn buffer_index(reader: &DataFileReader, key: &str) -> Result<Option<usize>> {
    let Some(text) = reader.schema().metadata.get(key) else {
        return Ok(None);
    };
    let index: usize = text.parse().map_err(|_| {
        Error::corrupt(format!("metadata {key:?} = {text:?} is not a buffer index"))
            .at(reader.path().as_ref(), None)
    })?;
    if index >= reader.num_global_buffers() {
        return Err(Error::corrupt(format!(
            "metadata {key:?} names global buffer {index}, the file has {}",
            reader.num_global_buffers()
        ))
        .at(reader.path().as_ref(), None));
    }
    Ok(Some(index))
}
