//! Opening an ecpfs index: [`EcpIndex::builder`], and the shorthands over it
//! ([`EcpIndex::open`], [`EcpIndex::open_url`], [`EcpIndex::open_store`]).

use std::sync::Arc;

use object_store::path::Path;
use object_store::ObjectStore;

use super::open::OpenParams;
use crate::ecp::{EcpIndex, EcpStore, OpenOptions};
use crate::error::{Error, Result};
use crate::io::admission::{self, AdmissionRegistry};
use crate::io::store::{redact_url, REMOTE_COALESCE_GAP};
use crate::io::{FetchOptions, ObjectStoreSource, RangeFetcher, RangeSource};
use crate::session::Session;

/// How to open an [`EcpIndex`]: where it lives (URL, storage options or a ready-made object
/// store), the session whose node cache and admission control it shares, and its
/// [`OpenOptions`]. Made by [`EcpIndex::builder`]; [`open`](EcpIndexBuilder::open) costs one
/// wave of concurrent GETs (`info/*`, the representatives' metadata and the root node).
///
/// Without a [`session`](EcpIndexBuilder::session), the index keeps its nodes in a cache of
/// its own ([`OpenOptions::node_cache_bytes`]) and its requests wait for a slot of the
/// process's default admission control of the store (at most
/// [`DEFAULT_MAX_REQUESTS`](crate::DEFAULT_MAX_REQUESTS) in flight, shared by everything
/// opened without a session).
///
/// ```
/// # #[tokio::main] async fn main() -> lakeseek::Result<()> {
/// use lakeseek::ecp::{EcpIndex, QueryOptions};
/// use lakeseek::Session;
///
/// let session = Session::default();
/// let index = EcpIndex::builder(lakeseek::sample::ECP_INDEX_URL)
///     .object_store(lakeseek::sample::store().await?)
///     .session(&session) // the session's node cache and admission control
///     .prefetch(4)
///     .open()
///     .await?;
/// let mut search = index.query(vec![0.5_f32; index.info().dim], QueryOptions::default())?;
/// let first = search.next_k(10).await?;
/// assert_eq!(first.ids.len(), 10);
/// assert!(first.scores.windows(2).all(|w| w[0] <= w[1]));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct EcpIndexBuilder {
    params: OpenParams,
    options: OpenOptions,
    /// Where in the given object store the index lives (else at the URL's path).
    prefix: Option<Path>,
}

/// What an open reads through: the fetcher, the store saved queries are written to (when
/// writable), and the index's prefix.
type Reader = (RangeFetcher, Option<Arc<dyn ObjectStore>>, Path);

impl EcpIndexBuilder {
    super::open::storage_option_setters!();

    /// Read (and, when writable, save queries) through this object store instead of
    /// building one from the URL. The index is at the URL's path in it, unless a
    /// [`prefix`](EcpIndexBuilder::prefix) is given.
    pub fn object_store(mut self, store: Arc<dyn ObjectStore>) -> Self {
        self.params.object_store = Some(store);
        self
    }

    /// The index lives under `prefix` of the [`object_store`](EcpIndexBuilder::object_store)
    /// (required with it), read with lakeseek's remote coalescing default; the URL then only
    /// names the index in errors.
    pub fn prefix(mut self, prefix: Path) -> Self {
        self.prefix = Some(prefix);
        self
    }

    /// Share this session's node cache (its share of the session's budget) and admission
    /// control (default: a node cache of the index's own and the process's default
    /// admission control).
    pub fn session(mut self, session: &Session) -> Self {
        self.params.session = Some(session.clone());
        self
    }

    /// All the open options at once (default: [`OpenOptions::default`]).
    pub fn options(mut self, options: OpenOptions) -> Self {
        self.options = options;
        self
    }

    /// Allow writes (saving query state); see [`OpenOptions::writable`].
    pub fn writable(mut self, writable: bool) -> Self {
        self.options.writable = writable;
        self
    }

    /// Capacity of the index's own node cache (used without a session); see
    /// [`OpenOptions::node_cache_bytes`].
    pub fn node_cache_bytes(mut self, bytes: u64) -> Self {
        self.options.node_cache_bytes = bytes;
        self
    }

    /// How many heap entries a search loads concurrently; see [`OpenOptions::prefetch`].
    pub fn prefetch(mut self, prefetch: usize) -> Self {
        self.options.prefetch = prefetch;
        self
    }

    /// Open the index.
    pub async fn open(self) -> Result<EcpIndex> {
        let cache = self.params.session.as_ref().map(Session::ecp_node_cache);
        let (fetcher, writer, prefix) = self.reader()?;
        let label = &self.params.url;
        EcpIndex::open_with_cache(fetcher, writer, prefix, label, self.options, cache)
            .await
            .map_err(|e| e.naming(&redact_url(label)))
    }

    /// The admission control requests wait in: the session's, else the process's default.
    fn admission_registry(&self) -> Arc<AdmissionRegistry> {
        match &self.params.session {
            Some(session) => session.admission(),
            None => admission::process_default(),
        }
    }

    /// The fetcher to read through, the store to write saved queries to, and the prefix.
    fn reader(&self) -> Result<Reader> {
        match &self.prefix {
            None => {
                let opened = self.params.open_url()?;
                let admission = self.admission_registry().for_opened(&opened);
                let fetcher = RangeFetcher::new(opened.source, FetchOptions::default())
                    .with_admission(Some(admission));
                Ok((fetcher, Some(opened.store), opened.path))
            }
            Some(prefix) => {
                let store = self.params.object_store.clone().ok_or_else(|| {
                    Error::InvalidArgument("an index prefix needs an object store".into())
                })?;
                let source: Arc<dyn RangeSource> = Arc::new(ObjectStoreSource::new(
                    Arc::clone(&store),
                    REMOTE_COALESCE_GAP,
                    self.params.url.clone(),
                ));
                let admission = self.admission_registry().for_handle(&store);
                let fetcher = RangeFetcher::new(source, FetchOptions::default())
                    .with_admission(Some(admission));
                Ok((fetcher, Some(store), prefix.clone()))
            }
        }
    }
}

impl EcpIndex {
    /// A builder for opening the ecpfs index at `url` (`s3://bucket/prefix/index`,
    /// `gs://…`, a local path, `memory://…` with an
    /// [`object_store`](EcpIndexBuilder::object_store)).
    pub fn builder(url: &str) -> EcpIndexBuilder {
        EcpIndexBuilder {
            params: OpenParams::new(url),
            options: OpenOptions::default(),
            prefix: None,
        }
    }

    /// Open the ecpfs index at `url` with `store`'s storage options or object store, and
    /// `session`'s node cache and admission control: shorthand for
    /// [`EcpIndex::builder`]`(url)` with those set.
    ///
    /// ```
    /// # #[tokio::main] async fn main() -> lakeseek::Result<()> {
    /// use lakeseek::ecp::{EcpIndex, EcpStore, OpenOptions, QueryOptions};
    /// use lakeseek::{IoStats, Session};
    ///
    /// let store = EcpStore { object_store: Some(lakeseek::sample::store().await?), ..Default::default() };
    /// let index = EcpIndex::open(lakeseek::sample::ECP_INDEX_URL, store, OpenOptions::default(), &Session::default()).await?;
    /// let query = vec![0.5_f32; index.info().dim];
    /// let mut search = index.query(query, QueryOptions::default())?;
    /// let first = search.next_k(10).await?; // visits only the nodes it needs
    /// let next = search.next_k(10).await?;  // the next 10, continuing the same search
    /// assert_eq!((first.ids.len(), next.ids.len()), (10, 10));
    /// assert!(first.scores.windows(2).all(|w| w[0] <= w[1]));
    /// # Ok(()) }
    /// ```
    pub async fn open(
        url: &str,
        store: EcpStore,
        options: OpenOptions,
        session: &Session,
    ) -> Result<EcpIndex> {
        let builder = Self::builder(url).storage_options(store.storage_options);
        let builder = match store.object_store {
            Some(object_store) => builder.object_store(object_store),
            None => builder,
        };
        builder.options(options).session(session).open().await
    }

    /// Open the index at `url` with `storage_options`, without a session (a node cache of
    /// its own, the process's default admission control): shorthand for
    /// [`EcpIndex::builder`]`(url).storage_options(storage_options).options(options).open()`.
    pub async fn open_url(
        url: &str,
        storage_options: &[(String, String)],
        options: OpenOptions,
    ) -> Result<Self> {
        let pairs = storage_options.iter().cloned();
        let builder = Self::builder(url).storage_options(pairs).options(options);
        builder.open().await
    }

    /// Open the index stored under `prefix` of `store`, without a session; `label` names
    /// it in errors: shorthand for
    /// [`EcpIndex::builder`]`(label).object_store(store).prefix(prefix).options(options).open()`.
    pub async fn open_store(
        store: Arc<dyn ObjectStore>,
        prefix: Path,
        label: &str,
        options: OpenOptions,
    ) -> Result<Self> {
        let builder = Self::builder(label).object_store(store).prefix(prefix);
        builder.options(options).open().await
    }

    /// Open the index stored under `prefix`, reading through `source` (e.g. a
    /// `FaultSource`, `LatencySource` or `RecordingSource` around a store's source), without
    /// admission control. Read-only: a `RangeSource` cannot write. Crate-internal (tests):
    /// a user cannot name a `RangeSource`.
    #[cfg(test)]
    pub(crate) async fn open_source(
        source: Arc<dyn RangeSource>,
        prefix: Path,
        label: &str,
        options: OpenOptions,
    ) -> Result<Self> {
        let fetcher = RangeFetcher::new(source, FetchOptions::default());
        Self::open_with_cache(fetcher, None, prefix, label, options, None).await
    }

    /// Open the index stored under `prefix`, reading through `fetcher` (its source, retry
    /// policy and fetch options), and writing saved queries to `writer` when given and
    /// [`OpenOptions::writable`]. Crate-internal (tests): a user cannot name a
    /// `RangeFetcher`.
    #[cfg(test)]
    pub(crate) async fn open_with(
        fetcher: RangeFetcher,
        writer: Option<Arc<dyn ObjectStore>>,
        prefix: Path,
        label: &str,
        options: OpenOptions,
    ) -> Result<Self> {
        Self::open_with_cache(fetcher, writer, prefix, label, options, None).await
    }
}
