//! [`LanceFile`]: one Lance file (v2: 2.0 – 2.3, or legacy v1), read by column name for a row range or
//! any list of rows.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::{RecordBatch, UInt32Array};
use arrow_schema::SchemaRef;
use object_store::ObjectStore;

use super::open::OpenParams;
use crate::error::{Error, Result};
use crate::io::store::redact_url;
use crate::io::{FetchOptions, IoStats, RangeFetcher};
use crate::lance::data_file::DataFileReader;
use crate::lance::reader::RowSelection;
use crate::session::Session;

/// An open Lance file.
///
/// Opening costs one suffix read (the footer and metadata of most files come in one
/// 64 KiB request); a read then fetches only the page-init bytes and the chunks that hold
/// the rows asked for. Cheap to clone; `Send + Sync`.
///
/// ```
/// # #[tokio::main] async fn main() -> lakeseek::Result<()> {
/// use lakeseek::LanceFile;
///
/// let store = lakeseek::sample::store().await?;
/// let url = lakeseek::sample::data_file_url(); // memory:///sample/frames.lance/data/….lance
/// let file = LanceFile::builder(&url).object_store(store).open().await?;
/// let first = file.read_range(&["key"], 0..3).await?;
/// let some = file.take(&["key", "detections"], &[7, 2, 7]).await?; // any order, repeats kept
/// assert_eq!((first.num_rows(), some.num_rows()), (3, 3));
/// assert_eq!(some.column(0).slice(0, 1).to_data(), some.column(0).slice(2, 1).to_data());
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct LanceFile {
    reader: DataFileReader,
    stats: IoStats,
}

/// How to open a [`LanceFile`]: storage options, session, stats.
#[derive(Debug, Clone)]
pub struct LanceFileBuilder {
    params: OpenParams,
    size: Option<u64>,
}

impl LanceFileBuilder {
    super::open::storage_option_setters!();

    /// Read through this object store instead of building one from the URL.
    pub fn object_store(mut self, store: Arc<dyn ObjectStore>) -> Self {
        self.params.object_store = Some(store);
        self
    }

    /// Read through `reads`, the store given to [`object_store`](Self::object_store) without
    /// object_store's own retries (lakeseek retries every read through admission).
    pub(crate) fn read_store(mut self, reads: Arc<dyn ObjectStore>) -> Self {
        self.params.read_store = Some(reads);
        self
    }

    /// The file's size, when known (e.g. from a listing or a manifest): the open then
    /// needs no request when the session already holds the file's metadata.
    pub fn size(mut self, bytes: u64) -> Self {
        self.size = Some(bytes);
        self
    }

    /// Share this session's caches (default: a new [`Session`]).
    pub fn session(mut self, session: &Session) -> Self {
        self.params.session = Some(session.clone());
        self
    }

    /// Count the open, and every read of the opened file, into `stats`.
    pub fn stats(mut self, stats: &IoStats) -> Self {
        self.params.stats = stats.clone();
        self
    }

    /// Open the file.
    pub async fn open(self) -> Result<LanceFile> {
        let url = redact_url(&self.params.url);
        self.open_reader().await.map_err(|e| e.naming(&url))
    }

    async fn open_reader(self) -> Result<LanceFile> {
        let opened = self.params.open_url()?;
        let session = self.params.session();
        let admission = session.admission().for_opened(&opened);
        let fetcher = RangeFetcher::new(Arc::clone(&opened.source), FetchOptions::default())
            .with_admission(Some(admission));
        let caches = Arc::clone(&session.dataset_session().reader_caches);
        let stats = self.params.stats;
        let reader =
            DataFileReader::open(fetcher, opened.path, self.size, caches, None, &stats).await?;
        Ok(LanceFile { reader, stats })
    }
}

impl LanceFile {
    /// Open the Lance file at `url` with default options.
    pub async fn open(url: &str) -> Result<LanceFile> {
        Self::builder(url).open().await
    }

    /// A builder for opening the file at `url`.
    pub fn builder(url: &str) -> LanceFileBuilder {
        LanceFileBuilder {
            params: OpenParams::new(url),
            size: None,
        }
    }

    /// Number of rows.
    pub fn num_rows(&self) -> u64 {
        self.reader.num_rows()
    }

    /// The file's schema as Arrow.
    pub fn schema(&self) -> SchemaRef {
        self.reader.arrow_schema()
    }

    /// A handle to the same file whose reads count into `stats`.
    pub fn with_stats(&self, stats: &IoStats) -> LanceFile {
        LanceFile {
            reader: self.reader.clone(),
            stats: stats.clone(),
        }
    }

    /// Rows `rows` (half-open) of the named top-level `columns`.
    pub async fn read_range(&self, columns: &[&str], rows: Range<u64>) -> Result<RecordBatch> {
        let fields = self.reader.field_indices(columns)?;
        let selection = RowSelection::Range(rows);
        self.reader
            .read_rows(&fields, &selection, &self.stats)
            .await
            .map_err(|e| self.named(e))
    }

    /// The rows `rows` of the named top-level `columns`, in the order asked, repeats kept.
    pub async fn take(&self, columns: &[&str], rows: &[u64]) -> Result<RecordBatch> {
        let fields = self.reader.field_indices(columns)?;
        let (selection, order) = RowSelection::sorted_with_order(rows);
        let sorted = self
            .reader
            .read_rows(&fields, &selection, &self.stats)
            .await
            .map_err(|e| self.named(e))?;
        let indices = UInt32Array::from(order);
        Ok(arrow_select::take::take_record_batch(&sorted, &indices)?)
    }

    /// `err`, naming this file (its object path) if it is a `Corrupt` or `Unsupported`
    /// error that names no object yet: what every public call on a file returns.
    pub(crate) fn named(&self, err: Error) -> Error {
        err.naming(self.reader.path().as_ref())
    }

    pub(crate) fn data_file_reader(&self) -> &DataFileReader {
        &self.reader
    }

    pub(crate) fn stats_handle(&self) -> &IoStats {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_list_reads_sorted_and_comes_back_in_the_order_asked() {
        let (selection, order) = RowSelection::sorted_with_order(&[42, 3, 17, 3]);
        assert_eq!(selection, RowSelection::Rows(vec![3, 17, 42]));
        assert_eq!(order, vec![2, 0, 1, 0]);
    }
}
