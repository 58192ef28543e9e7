//! [`OpenedStore`]: an object store opened once from a URL, shared by many opens of the
//! datasets and files under it, with an optional delay added to every read and listing.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    ObjectStoreScheme, PutMultipartOptions, PutOptions, PutPayload, PutResult,
};

use super::dataset::{Dataset, DatasetBuilder};
use super::file::{LanceFile, LanceFileBuilder};
use crate::error::Result;
use crate::io::list::{ListControl, ObjectLister, ObjectStoreLister};
use crate::io::{open_url_with, IoStats, OpenOptions, OpenedUrl};
use crate::session::Session;

/// An object store opened once from a URL and storage options, for many opens of the
/// datasets and files under it: every [`OpenedStore::dataset`] and [`OpenedStore::file`]
/// reads through the same store handle (one HTTP client and connection pool) with the same
/// storage options, and — when opened with the same [`Session`] — under the same admission
/// control.
///
/// [`OpenedStore::with_request_latency`] adds a fixed delay to every read and listing, e.g.
/// to mimic an object store's first-byte latency on local disk (`lakeseek bench
/// --latency-ms`).
///
/// ```
/// # #[tokio::main] async fn main() -> lakeseek::Result<()> {
/// use std::time::Duration;
/// use lakeseek::{IoStats, OpenedStore, Session};
///
/// let store = OpenedStore::with_object_store(
///     lakeseek::sample::DATASET_URL,
///     lakeseek::sample::store().await?,
/// )?
/// .with_request_latency(Duration::from_millis(1));
/// let session = Session::default();
/// let stats = IoStats::new();
/// assert!(store.is_dataset(&session, &stats).await); // one LIST of `_versions/`
/// let dataset = store.dataset().session(&session).stats(&stats).open().await?;
/// assert_eq!(dataset.filter("key = 'cam06-029417'").await?.len(), 1);
/// assert!(store.describe().ends_with("(+1 ms/request)"));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct OpenedStore {
    url: String,
    storage_options: Vec<(String, String)>,
    opened: OpenedUrl,
    /// The store without the delay.
    undelayed: Arc<dyn ObjectStore>,
    /// The read store without the delay (the same as `undelayed` for a store handed in).
    undelayed_reads: Arc<dyn ObjectStore>,
    latency: Duration,
}

impl OpenedStore {
    /// Open the store `url` names (a URL or a local path) with `storage_options` (object_store
    /// config keys and lakeseek's I/O options, as [`DatasetBuilder::storage_option`] takes).
    pub fn open(url: &str, storage_options: &[(String, String)]) -> Result<Self> {
        let opened = open_url_with(url, &OpenOptions::new(storage_options))?;
        Ok(Self::new(url, storage_options.to_vec(), opened))
    }

    /// Read through `store` instead of building one from the URL; the URL then gives only
    /// the scheme (which picks the coalescing defaults) and the path inside the store.
    pub fn with_object_store(url: &str, store: Arc<dyn ObjectStore>) -> Result<Self> {
        let options = OpenOptions {
            object_store: Some(store),
            ..OpenOptions::default()
        };
        let opened = open_url_with(url, &options)?;
        Ok(Self::new(url, Vec::new(), opened))
    }

    fn new(url: &str, storage_options: Vec<(String, String)>, opened: OpenedUrl) -> Self {
        Self {
            url: url.to_string(),
            storage_options,
            undelayed: Arc::clone(&opened.store),
            undelayed_reads: Arc::clone(&opened.read_store),
            opened,
            latency: Duration::ZERO,
        }
    }

    /// Wait `delay` before every read (GET) and every listing (LIST) sent to the store, as
    /// if the store answered that much later (a zero delay adds nothing; a second call
    /// replaces the first one's delay). Requests and bytes are counted as without it.
    pub fn with_request_latency(mut self, delay: Duration) -> Self {
        let delayed = |undelayed: &Arc<dyn ObjectStore>| -> Arc<dyn ObjectStore> {
            if delay.is_zero() {
                Arc::clone(undelayed)
            } else {
                Arc::new(DelayedStore {
                    inner: Arc::clone(undelayed),
                    delay,
                })
            }
        };
        self.opened.store = delayed(&self.undelayed);
        self.opened.read_store = if Arc::ptr_eq(&self.undelayed, &self.undelayed_reads) {
            Arc::clone(&self.opened.store)
        } else {
            delayed(&self.undelayed_reads)
        };
        self.latency = delay;
        self
    }

    /// The URL the store was opened from.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The delay added to every request ([`OpenedStore::with_request_latency`]).
    pub fn request_latency(&self) -> Duration {
        self.latency
    }

    /// The store handle every open through this value reads with (the delay included).
    pub fn object_store(&self) -> Arc<dyn ObjectStore> {
        Arc::clone(&self.opened.store)
    }

    /// The path of the URL's object (or directory) inside the store, as error messages
    /// name it (`tmp/data/file.lance`, `bucket-relative/key`).
    pub fn path(&self) -> String {
        self.opened.path.to_string()
    }

    /// Whether the store is remote (anything but local files and the in-memory store).
    pub fn is_remote(&self) -> bool {
        !matches!(
            self.opened.scheme,
            ObjectStoreScheme::Local | ObjectStoreScheme::Memory
        )
    }

    /// The store as lakeseek names it (`s3://bucket`, `file://`), with the added delay when
    /// there is one (`s3://bucket (+20 ms/request)`).
    pub fn describe(&self) -> String {
        let name = self.opened.source.describe();
        if self.latency.is_zero() {
            name
        } else {
            format!("{name} (+{} ms/request)", self.latency.as_millis())
        }
    }

    /// A builder for the dataset at the URL, reading through this store with its storage
    /// options.
    pub fn dataset(&self) -> DatasetBuilder {
        let builder = Dataset::builder(&self.url)
            .object_store(self.object_store())
            .storage_options(self.storage_options.iter().cloned());
        match self.own_read_store() {
            Some(reads) => builder.read_store(reads),
            None => builder,
        }
    }

    /// The store reads go through when it is not the handle itself: the URL's store without
    /// object_store's retries (lakeseek retries reads through admission control).
    fn own_read_store(&self) -> Option<Arc<dyn ObjectStore>> {
        let (store, reads) = (&self.opened.store, &self.opened.read_store);
        (!Arc::ptr_eq(store, reads)).then(|| Arc::clone(reads))
    }

    /// A builder for the Lance file at the URL, reading through this store with its
    /// storage options.
    pub fn file(&self) -> LanceFileBuilder {
        let mut builder = LanceFile::builder(&self.url).object_store(self.object_store());
        if let Some(reads) = self.own_read_store() {
            builder = builder.read_store(reads);
        }
        let options = self.storage_options.iter().cloned();
        options.fold(builder, |b, (k, v)| b.storage_option(k, v))
    }

    /// Whether the URL names a Lance dataset: true when `_versions/` under it holds at
    /// least one object. One LIST request, counted in `stats` and admitted by `session`'s
    /// admission control for this store (as the opens through this value are); a listing
    /// error counts as "not a dataset" (opening it as a file then reports the problem).
    pub async fn is_dataset(&self, session: &Session, stats: &IoStats) -> bool {
        let admission = session.admission().for_handle(&self.opened.store);
        let lister =
            ObjectStoreLister::for_scheme(Arc::clone(&self.opened.read_store), &self.opened.scheme)
                .with_admission(Some(admission))
                .with_retry_policy(self.opened.source.retry_policy());
        let prefix = self.opened.path.clone().join("_versions");
        let mut found = false;
        let listed = lister
            .list(&prefix, stats, &mut |_| {
                found = true;
                ListControl::Stop
            })
            .await;
        listed.is_ok() && found
    }
}

/// An [`ObjectStore`] that waits a fixed delay before every read and listing of its inner
/// store (one delay per GET, per listing stream, per delimited listing); writes, deletes
/// and copies are not delayed.
#[derive(Debug)]
struct DelayedStore {
    inner: Arc<dyn ObjectStore>,
    delay: Duration,
}

impl fmt::Display for DelayedStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Delayed({}, +{:?})", self.inner, self.delay)
    }
}

/// `stream`, started only after `delay`.
fn delayed_stream<T: Send + 'static>(
    delay: Duration,
    stream: BoxStream<'static, T>,
) -> BoxStream<'static, T> {
    futures::stream::once(async move {
        tokio::time::sleep(delay).await;
        stream
    })
    .flatten()
    .boxed()
}

#[async_trait]
impl ObjectStore for DelayedStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        tokio::time::sleep(self.delay).await;
        self.inner.get_opts(location, options).await
    }

    async fn get_ranges(
        &self,
        location: &Path,
        ranges: &[Range<u64>],
    ) -> object_store::Result<Vec<Bytes>> {
        tokio::time::sleep(self.delay).await;
        self.inner.get_ranges(location, ranges).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        delayed_stream(self.delay, self.inner.list(prefix))
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        delayed_stream(self.delay, self.inner.list_with_offset(prefix, offset))
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        tokio::time::sleep(self.delay).await;
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::TryStreamExt;
    use object_store::memory::InMemory;
    use object_store::ObjectStoreExt;

    async fn memory_with(names: &[&str]) -> Arc<dyn ObjectStore> {
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        for name in names {
            let payload = PutPayload::from(Bytes::from_static(b"xyz"));
            store.put(&Path::from(*name), payload).await.unwrap();
        }
        store
    }

    #[tokio::test]
    async fn probes_for_versions_with_one_counted_list() {
        let memory = memory_with(&["d/_versions/1.manifest", "e/data/x.lance"]).await;
        let session = Session::default();
        let dataset = OpenedStore::with_object_store("memory:///d", Arc::clone(&memory)).unwrap();
        let stats = IoStats::new();
        assert!(dataset.is_dataset(&session, &stats).await);
        assert_eq!(stats.snapshot().requests, 1);
        let file = OpenedStore::with_object_store("memory:///e", memory).unwrap();
        assert!(!file.is_dataset(&session, &stats).await);
        assert_eq!(stats.snapshot().requests, 2);
        assert_eq!((file.path(), file.url()), ("e".to_string(), "memory:///e"));
        assert!(!file.is_remote());
    }

    #[tokio::test]
    async fn latency_is_named_replaced_and_removed() {
        let memory = memory_with(&[]).await;
        let plain = OpenedStore::with_object_store("memory:///d", memory).unwrap();
        let slow = plain.clone().with_request_latency(Duration::from_millis(3));
        assert_eq!(
            slow.describe(),
            format!("{} (+3 ms/request)", plain.describe())
        );
        let slower = slow.clone().with_request_latency(Duration::from_millis(7));
        assert_eq!(slower.request_latency(), Duration::from_millis(7));
        assert!(slower.describe().ends_with("(+7 ms/request)"));
        let none = slower.with_request_latency(Duration::ZERO);
        assert_eq!(none.describe(), plain.describe());
        assert!(Arc::ptr_eq(&none.object_store(), &plain.object_store()));
    }

    /// On tokio's paused clock: every read and listing waits the delay once (virtual time,
    /// so nothing here depends on the machine's speed).
    #[cfg(feature = "cli")] // the paused clock needs tokio's test-util, which `cli` enables
    #[tokio::test(start_paused = true)]
    async fn reads_and_listings_wait_the_delay_once_each() {
        let memory = memory_with(&["d/a", "d/b"]).await;
        let delay = Duration::from_millis(40);
        let store = OpenedStore::with_object_store("memory:///d", memory)
            .unwrap()
            .with_request_latency(delay)
            .object_store();
        let started = tokio::time::Instant::now();
        let bytes = store.get_range(&Path::from("d/a"), 0..2).await.unwrap();
        assert_eq!((bytes.as_ref(), started.elapsed()), (&b"xy"[..], delay));
        let listed: Vec<ObjectMeta> = store
            .list(Some(&Path::from("d")))
            .try_collect()
            .await
            .unwrap();
        assert_eq!((listed.len(), started.elapsed()), (2, 2 * delay));
        store
            .list_with_delimiter(Some(&Path::from("d")))
            .await
            .unwrap();
        assert_eq!(started.elapsed(), 3 * delay);
        store
            .put(&Path::from("d/c"), PutPayload::from_static(b"w"))
            .await
            .unwrap();
        assert_eq!(started.elapsed(), 3 * delay, "writes are not delayed");
    }
}
