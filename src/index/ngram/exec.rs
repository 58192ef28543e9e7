//! NGRAM I/O: open `ngram_postings.lance`, read its `tokens` column once per session (the
//! token map), and read only the `posting_list` rows of the query's trigrams (each decoded
//! list cached in the session).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::UInt32Type;
use arrow_array::Array;
use arrow_schema::DataType;
use object_store::path::Path;

use super::{decode_posting, NgramPosting, NgramTokens, NGRAM_FILE};
use crate::error::{Error, Result};
use crate::index::caches::session_cache;
use crate::io::budget::CacheShare;
use crate::io::cache::CacheKey;
use crate::io::IoStats;
use crate::lance::data_file::DataFileReader;
use crate::lance::dataset::{DatasetVersion, IndexFileReads, IndexSegment};
use crate::lance::reader::RowSelection;

/// How the posting file opens when the manifest lists its size: whole up to 1 MiB, else by
/// a 16 KiB suffix (pylance 14 writes a metadata region of under 2 KiB).
const FILE_READS: IndexFileReads = IndexFileReads {
    whole: 1 << 20,
    tail: 16 << 10,
};

/// Pages up to this size are read whole when their init is not cached: the `tokens` column
/// (4 bytes a trigram, at most 37^3 of them) comes with its init in one read.
const WHOLE_PAGE: u64 = 256 << 10;

/// At most this many posting pages have their init read with the token map.
const MAX_PREFETCHED_INITS: usize = 64;

/// An open posting file.
#[derive(Debug, Clone)]
pub(crate) struct NgramFile {
    /// The file.
    pub(crate) reader: DataFileReader,
    /// Field index of `tokens`.
    tokens: usize,
    /// Field index of `posting_list`.
    postings: usize,
}

impl NgramFile {
    /// Path of the file.
    pub(crate) fn path(&self) -> &Path {
        self.reader.path()
    }

    fn corrupt(&self, what: impl Into<String>) -> Error {
        Error::corrupt(what.into()).at(self.path().as_ref(), None)
    }

    fn key<K>(&self, item: K) -> CacheKey<K> {
        CacheKey {
            path: self.path().to_string(),
            version: self.reader.version().clone(),
            item,
        }
    }
}

/// Open the posting file of `segment` (one suffix read, none when its metadata is cached),
/// checking its two columns' types.
pub(crate) async fn open_ngram_file(
    dataset: &DatasetVersion,
    segment: &IndexSegment,
    stats: &IoStats,
) -> Result<NgramFile> {
    let reader = dataset
        .open_index_file_sized(segment, NGRAM_FILE, FILE_READS, stats)
        .await?
        .with_whole_page_bytes(WHOLE_PAGE);
    let idx = reader.field_indices(&["tokens", "posting_list"])?;
    let schema = reader.arrow_schema();
    let file = NgramFile {
        tokens: idx[0],
        postings: idx[1],
        reader,
    };
    for (i, want) in [(idx[0], DataType::UInt32), (idx[1], DataType::Binary)] {
        let field = schema.field(i);
        if field.data_type() != &want {
            return Err(file.corrupt(format!(
                "column {} is {}, not {want}",
                field.name(),
                field.data_type()
            )));
        }
    }
    Ok(file)
}

/// Whether opening the posting file of `segment` needs no request.
pub(crate) async fn is_file_cached(dataset: &DatasetVersion, segment: &IndexSegment) -> bool {
    dataset.is_index_file_cached(segment, NGRAM_FILE).await
}

/// The token map of `file` (the whole `tokens` column, read once per session; the page
/// init of the larger `posting_list` pages in the same wave, so the posting lists a query
/// needs are read in the next).
pub(crate) async fn load_tokens(
    dataset: &DatasetVersion,
    file: &NgramFile,
    stats: &IoStats,
) -> Result<Arc<NgramTokens>> {
    session_cache::<(), NgramTokens>(dataset.session(), CacheShare::BitmapKeys)
        .get_or_try_load(file.key(()), async {
            let n = file.reader.num_rows();
            // Many pages: none, each query reads the init of the pages it touches.
            let posting_pages = file.reader.pages_needing_init(
                Some(&[file.postings]),
                WHOLE_PAGE,
                MAX_PREFETCHED_INITS,
            );
            let (columns, all) = ([file.tokens], RowSelection::Range(0..n));
            let (batch, ()) = futures::try_join!(
                file.reader.read_rows(&columns, &all, stats),
                file.reader.prefetch_page_inits(&posting_pages, stats),
            )?;
            let tokens = batch
                .column(0)
                .as_primitive_opt::<UInt32Type>()
                .ok_or_else(|| file.corrupt("tokens column is not uint32"))?;
            if tokens.len() as u64 != n {
                return Err(file.corrupt(format!("reader returned {} tokens of {n}", tokens.len())));
            }
            NgramTokens::decode(tokens).map_err(|e| e.at(file.path().as_ref(), None))
        })
        .await
}

/// The decoded posting lists of file rows `rows` (sorted, unique): from the cache, or one
/// read of only those rows of `posting_list`. Returns them in `rows` order and how many
/// were read from the file.
pub(crate) async fn read_postings(
    dataset: &DatasetVersion,
    file: &NgramFile,
    rows: &[u64],
    stats: &IoStats,
) -> Result<(Vec<Arc<NgramPosting>>, usize)> {
    let cache = session_cache::<u64, NgramPosting>(dataset.session(), CacheShare::BitmapRowSets);
    let mut out = Vec::with_capacity(rows.len());
    let mut missing = Vec::new();
    for &row in rows {
        let hit = cache.get(&file.key(row)).await;
        if hit.is_none() {
            missing.push(row);
        }
        out.push(hit);
    }
    if !missing.is_empty() {
        let batch = file
            .reader
            .read_rows(
                &[file.postings],
                &RowSelection::Rows(missing.clone()),
                stats,
            )
            .await?;
        let lists = batch
            .column(0)
            .as_binary_opt::<i32>()
            .ok_or_else(|| file.corrupt("posting_list column is not binary"))?;
        if lists.len() != missing.len() {
            return Err(file.corrupt("reader returned the wrong number of posting lists"));
        }
        let mut decoded = std::collections::HashMap::new();
        for (i, row) in missing.iter().enumerate() {
            if lists.is_null(i) {
                return Err(file.corrupt(format!("posting list of row {row} is null")));
            }
            let posting = decode_posting(lists.value(i)).map_err(|e| {
                e.context(format!("posting list of row {row}"))
                    .at(file.path().as_ref(), None)
            })?;
            let posting = Arc::new(posting);
            cache.insert(file.key(*row), Arc::clone(&posting)).await;
            decoded.insert(*row, posting);
        }
        for (slot, row) in out.iter_mut().zip(rows) {
            if slot.is_none() {
                *slot = decoded.get(row).cloned();
            }
        }
    }
    let found = out
        .into_iter()
        .map(|p| p.ok_or_else(|| file.corrupt("internal: posting list missing")))
        .collect::<Result<Vec<_>>>()?;
    Ok((found, missing.len()))
}
