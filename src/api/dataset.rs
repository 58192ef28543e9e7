//! [`Dataset`]: a Lance dataset opened at one version, answering filters from its indices
//! and taking rows by address.

use std::sync::Arc;

use arrow_array::RecordBatch;
use bytes::Bytes;
use object_store::ObjectStore;

use super::open::OpenParams;
use crate::error::{Error, Result};
use crate::index::filter::{filter_row_addresses, FilterOptions};
use crate::io::store::redact_url;
use crate::io::IoStats;
use crate::lance::dataset::blobs::blob_ranges;
use crate::lance::dataset::take_row_ids::{take_row_ids, take_with_row_ids};
use crate::lance::dataset::DatasetVersion;
use crate::session::Session;

/// A Lance dataset at one version.
///
/// Open it by URL (`s3://bucket/table.lance`, `gs://…`, `az://…`, `https://…`, a local path
/// or `memory://…`), then answer filters from its scalar indices with [`Dataset::filter`],
/// read rows by address with [`Dataset::take`], or both with [`Dataset::query`]. Cheap to
/// clone; `Send + Sync`.
///
/// ```
/// # #[tokio::main] async fn main() -> lakeseek::Result<()> {
/// use lakeseek::Dataset;
///
/// let store = lakeseek::sample::store().await?; // an object_store handle: here the sample data
/// let dataset = Dataset::builder("memory:///sample/frames.lance")
///     .object_store(store)
///     .open()
///     .await?;
/// let rows = dataset.filter("key = 'cam06-029417'").await?; // from the BTree index
/// assert_eq!(rows, vec![(2 << 32) | 9417]);
/// let batch = dataset.take(&rows, &["key", "camera"]).await?;
/// assert_eq!(batch.num_rows(), 1);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Dataset {
    version: DatasetVersion,
    session: Session,
    stats: IoStats,
    params: OpenParams,
}

/// How to open a [`Dataset`]: storage options, version, session, stats.
///
/// ```
/// # #[tokio::main] async fn main() -> lakeseek::Result<()> {
/// use lakeseek::{Dataset, IoStats, Session};
///
/// let store = lakeseek::sample::store().await?;
/// let session = Session::default();
/// let stats = IoStats::new();
/// let dataset = Dataset::builder(lakeseek::sample::DATASET_URL)
///     .object_store(store)
///     .version(1)
///     .session(&session)
///     .stats(&stats) // counts the open and everything done through this handle
///     .open()
///     .await?;
/// assert_eq!(dataset.version(), 1);
/// assert!(stats.snapshot().requests >= 1);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct DatasetBuilder {
    params: OpenParams,
    version: Option<u64>,
}

impl DatasetBuilder {
    super::open::storage_option_setters!();

    /// Read through this object store instead of building one from the URL; the URL then
    /// gives only the scheme (which picks the coalescing defaults) and the dataset's path.
    pub fn object_store(mut self, store: Arc<dyn ObjectStore>) -> Self {
        self.params.object_store = Some(store);
        self
    }

    /// Read and list through `reads`, the store given to [`object_store`](Self::object_store)
    /// without object_store's own retries (lakeseek retries every read through admission).
    pub(crate) fn read_store(mut self, reads: Arc<dyn ObjectStore>) -> Self {
        self.params.read_store = Some(reads);
        self
    }

    /// Open this version (default: the latest).
    pub fn version(mut self, version: u64) -> Self {
        self.version = Some(version);
        self
    }

    /// Share this session's caches (default: a new [`Session`]).
    pub fn session(mut self, session: &Session) -> Self {
        self.params.session = Some(session.clone());
        self
    }

    /// Count the open, and every operation of the opened dataset, into `stats`.
    pub fn stats(mut self, stats: &IoStats) -> Self {
        self.params.stats = stats.clone();
        self
    }

    /// Open the dataset: one LIST and one GET for the latest version on an object store,
    /// one GET for a pinned version.
    pub async fn open(self) -> Result<Dataset> {
        let url = self.params.url.clone();
        self.open_version()
            .await
            .map_err(|e| e.naming(&redact_url(&url)))
    }

    async fn open_version(self) -> Result<Dataset> {
        let opened = self.params.open_url()?;
        let session = self.params.session();
        let shared = Arc::clone(session.dataset_session());
        let stats = self.params.stats.clone();
        let version = DatasetVersion::open_opened(&opened, self.version, shared, &stats).await?;
        Ok(Dataset {
            version,
            session,
            stats,
            params: self.params,
        })
    }
}

impl Dataset {
    /// Open the latest version of the dataset at `url` with default options.
    pub async fn open(url: &str) -> Result<Dataset> {
        Self::builder(url).open().await
    }

    /// A builder for opening the dataset at `url`.
    pub fn builder(url: &str) -> DatasetBuilder {
        DatasetBuilder {
            params: OpenParams::new(url),
            version: None,
        }
    }

    /// The version opened.
    pub fn version(&self) -> u64 {
        self.version.version()
    }

    /// Names of the top-level columns, in schema order.
    pub fn column_names(&self) -> Vec<String> {
        let schema = &self.version.manifest().schema;
        let top = schema.fields.iter().filter(|f| f.parent_id == -1);
        top.map(|f| f.name.clone()).collect()
    }

    /// Names of the indices this version carries (one per name, however many segments).
    pub fn index_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for segment in &self.version.manifest().indices {
            if !names.contains(&segment.name) {
                names.push(segment.name.clone());
            }
        }
        names
    }

    /// The session whose caches this dataset uses.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// A handle to the same dataset whose operations count into `stats` (as well as into
    /// nothing else: each handle has one stats handle).
    pub fn with_stats(&self, stats: &IoStats) -> Dataset {
        Dataset {
            stats: stats.clone(),
            ..self.clone()
        }
    }

    /// Row addresses (ascending) of the rows where the SQL `filter` is TRUE, answered from
    /// the dataset's indices (`=`, `IN`, ranges, `IS NULL`, `any_element(list, '…')`, …).
    /// A filter no index answers is refused; use [`Dataset::query`] with
    /// [`Query::allow_scan`](crate::Query::allow_scan) to scan instead.
    pub async fn filter(&self, filter: &str) -> Result<Vec<u64>> {
        let options = FilterOptions::default();
        let rows = filter_row_addresses(&self.version, filter, options, &self.stats)
            .await
            .map_err(|e| self.named(e))?;
        Ok(rows.iter().collect())
    }

    /// The `columns` of the rows at `addresses` (`fragment << 32 | offset`), in the order
    /// asked, repeats kept, deleted rows left out; the batch starts with a `_rowaddr`
    /// column. `_rowid` may be asked for as a column: each row's stable row id (its
    /// address on a dataset without stable row ids).
    pub async fn take(&self, addresses: &[u64], columns: &[&str]) -> Result<RecordBatch> {
        let names: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
        take_with_row_ids(&self.version, addresses, &names, &self.stats)
            .await
            .map_err(|e| self.named(e))
    }

    /// The blobs of the blob column `column` at `addresses` (`fragment << 32 | offset`), in
    /// the order asked: `None` for a null blob, else a [`BlobHandle`](crate::BlobHandle) with its size that
    /// reads a range, everything, or streams ([`BlobHandle::reader`](crate::BlobHandle::reader)). Only the descriptors
    /// are read here (like a [`Dataset::take`] of the column); the bytes are read when
    /// asked. Works on blob v1 columns (2.0/2.1 files) and blob v2 columns (2.2 files:
    /// inline, packed and dedicated blobs; external URIs are `Unsupported`). A deleted
    /// address is `InvalidArgument`, as in pylance's `take_blobs(addresses=...)`.
    ///
    /// ```no_run
    /// # async fn f(dataset: lakeseek::Dataset) -> lakeseek::Result<()> {
    /// let blobs = dataset.take_blobs("img", &[0, 1, (1 << 32) | 7]).await?;
    /// for blob in blobs.iter().flatten() {
    ///     let header = blob.read_range(0..16.min(blob.size())).await?;
    ///     println!("{} bytes, starting {header:?}", blob.size());
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn take_blobs(
        &self,
        column: &str,
        addresses: &[u64],
    ) -> Result<Vec<Option<crate::BlobHandle>>> {
        let ranges = blob_ranges(&self.version, column, addresses, &self.stats)
            .await
            .map_err(|e| self.named(e))?;
        let resolved =
            super::blob_external::resolve(&self.params, &self.version.store().fetcher, ranges)
                .await
                .map_err(|e| self.named(e))?;
        Ok(resolved
            .into_iter()
            .map(|r| r.map(|(f, b)| crate::BlobHandle::new(f, self.stats.clone(), b)))
            .collect())
    }

    /// The bytes of the blobs of `column` at `addresses` (in order; `None` for a null blob),
    /// read in one wave after the descriptors: the fetcher merges the ranges of small blobs
    /// lying close together into few requests, and splits large ones into requests of at
    /// most [`BLOB_READ_CHUNK_BYTES`](crate::BLOB_READ_CHUNK_BYTES).
    pub async fn read_blobs(&self, column: &str, addresses: &[u64]) -> Result<Vec<Option<Bytes>>> {
        let ranges = blob_ranges(&self.version, column, addresses, &self.stats)
            .await
            .map_err(|e| self.named(e))?;
        let fetcher = &self.version.store().fetcher;
        let resolved = super::blob_external::resolve(&self.params, fetcher, ranges)
            .await
            .map_err(|e| self.named(e))?;
        // The dataset's own blobs in one wave; each external one on its own store.
        let wanted: Vec<_> = resolved
            .iter()
            .flatten()
            .filter(|(_, b)| b.external.is_none())
            .map(|(_, b)| (b, b.range.clone()))
            .collect();
        let externals = resolved
            .iter()
            .flatten()
            .filter(|(_, b)| b.external.is_some())
            .map(|(f, b)| async move {
                let wanted = [(b, b.range.clone())];
                super::blob::fetch_parts(f, &self.stats, &wanted).await
            });
        let (own, external) = futures::try_join!(
            super::blob::fetch_parts(fetcher, &self.stats, &wanted),
            futures::future::try_join_all(externals)
        )
        .map_err(|e| self.named(e))?;
        let (mut own, mut external) = (own.into_iter(), external.into_iter().flatten());
        Ok(resolved
            .iter()
            .map(|r| match r {
                None => None,
                Some((_, b)) if b.external.is_some() => external.next(),
                Some(_) => own.next(),
            })
            .collect())
    }

    /// The `columns` of the rows whose stable row id (`_rowid`) is in `ids`, in the order
    /// asked, repeats kept, like pylance's `_take_rows`: an id whose rows are deleted is
    /// left out, an id the version never assigned is
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument). The ids are found in the
    /// fragments' row id sequences (held in the manifest: no request), and the rows are read
    /// in the same waves as [`Dataset::take`]. The batch starts with `_rowaddr`; ask for
    /// `_rowid` to get the ids back. On a dataset without stable row ids, a row id is the
    /// row address.
    pub async fn take_row_ids(&self, ids: &[u64], columns: &[&str]) -> Result<RecordBatch> {
        let names: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
        take_row_ids(&self.version, ids, &names, &self.stats)
            .await
            .map_err(|e| self.named(e))
    }

    /// Whether the dataset has stable row ids (`_rowid` values that survive updates and
    /// compactions; row-id takes then look them up in the fragments' sequences).
    pub fn has_stable_row_ids(&self) -> bool {
        self.version.manifest().uses_stable_row_ids()
    }

    /// Build a list element index (`any_element` filters; spec `list-element-index.md`) on
    /// the `list<struct>` column `column`, keyed by the element fields `keys` (direct children
    /// of the element struct), and commit it as a new version of the dataset with a
    /// put-if-absent manifest write (a concurrent writer is never overwritten: on a conflict
    /// the index is rebased onto the newer version, or the call fails with
    /// [`Error::Conflict`](crate::Error::Conflict)). Returns the new version; reopen the
    /// dataset to query with the index. Refused when an index named `name` exists.
    pub async fn create_list_element_index(
        &self,
        column: &str,
        keys: &[&str],
        name: &str,
    ) -> Result<u64> {
        let created = self.list_element_index(column, keys, name).create().await?;
        Ok(created.version)
    }

    /// Load index lookups (and, if asked, every index page and the page inits of named
    /// columns) into the session's caches and disk tier ahead of the queries that need
    /// them; see [`Prewarm`](crate::Prewarm).
    pub fn prewarm(&self) -> crate::Prewarm<'_> {
        crate::Prewarm::new(self)
    }

    /// `err`, naming this dataset (its URL) if it is a `Corrupt` or `Unsupported` error
    /// that names no object yet: what every public call on a dataset returns.
    pub(crate) fn named(&self, err: Error) -> Error {
        err.naming(&redact_url(&self.params.url))
    }

    pub(crate) fn version_handle(&self) -> &DatasetVersion {
        &self.version
    }

    pub(crate) fn stats_handle(&self) -> &IoStats {
        &self.stats
    }

    pub(crate) fn open_params(&self) -> &OpenParams {
        &self.params
    }

    /// A handle on `version` (a view of this handle's version) with this handle's session,
    /// stats and open parameters.
    pub(crate) fn with_version_handle(&self, version: DatasetVersion) -> Dataset {
        Dataset {
            version,
            ..self.clone()
        }
    }
}
