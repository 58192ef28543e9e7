//! [`Session`]: every cache lakeseek keeps, within one byte budget, shared by everything
//! opened with it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::ecp::index::NodeCache;
use crate::error::Result;
use crate::io::admission::{registry_of, AdmissionRegistry};
use crate::io::budget::CacheShare;
use crate::io::disk::DiskCache;
use crate::lance::dataset::DatasetSession;

pub use crate::io::admission::{DEFAULT_MAX_IN_FLIGHT_BYTES, DEFAULT_MAX_REQUESTS};

/// Default byte budget of a [`Session`] (256 MiB).
pub const DEFAULT_SESSION_BUDGET: u64 = 256 << 20;

/// Default byte budget of a disk tier chosen by [`SessionBuilder::disk_cache_from`] (1 GiB).
pub const DEFAULT_CACHE_BYTES: u64 = 1 << 30;

/// Environment variable naming the disk tier's directory when no `--cache-dir` is given.
pub const CACHE_DIR_ENV: &str = "LAKESEEK_CACHE_DIR";

/// The caches of lakeseek — decoded manifests and deletion vectors, Lance file metadata,
/// page inits (chunk tables, dictionaries) and 2.3 structural plans, index page lookups and
/// index pages — held within one byte budget.
///
/// Cheap to clone (clones share the caches), `Send + Sync`: create one per process (or per
/// tenant) and open every dataset and file with it, so a warm query reuses what an earlier
/// one decoded.
///
/// ```
/// use lakeseek::Session;
/// let session = Session::with_budget(64 << 20);
/// let shared = session.clone(); // same caches
/// assert_eq!(shared.budget_bytes(), 64 << 20);
/// assert_eq!(Session::default().budget_bytes(), lakeseek::DEFAULT_SESSION_BUDGET);
/// ```
///
/// A session can also keep raw byte ranges of immutable objects (data, index and deletion
/// files, manifests of a given version) in a local directory — a disk tier shared by every
/// process pointed at it — see [`Session::builder`].
#[derive(Debug, Clone)]
pub struct Session {
    datasets: Arc<DatasetSession>,
    budget_bytes: u64,
    disk_dir: Option<PathBuf>,
}

/// How to build a [`Session`]: the memory budget and an optional disk tier.
///
/// The disk tier keeps the byte ranges a query fetched from the data, index and deletion
/// files and the manifests of given versions of a dataset — objects Lance never rewrites
/// under the same name — keyed by store, path and the object's size/etag when known, each
/// checksummed. A later process with the same directory reads them from disk: a repeated
/// query then costs the one listing that finds the latest version (none with a pinned
/// version). Which version is latest is never cached. Entries that fail their checksum are
/// refetched; processes may share the directory; the least recently used entries are
/// removed beyond `bytes`. Datasets handed an object store directly
/// ([`DatasetBuilder::object_store`](crate::DatasetBuilder::object_store)) and in-memory
/// stores are not disk-cached.
///
/// ```
/// # fn main() -> lakeseek::Result<()> {
/// use lakeseek::Session;
///
/// let dir = tempfile::tempdir().unwrap();
/// let session = Session::builder()
///     .budget_bytes(64 << 20)
///     .disk_cache(dir.path(), 1 << 30)
///     .build()?;
/// assert_eq!(session.budget_bytes(), 64 << 20);
/// assert_eq!(session.disk_cache_dir(), Some(dir.path()));
/// assert_eq!(Session::builder().build()?.disk_cache_dir(), None); // off unless asked
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct SessionBuilder {
    budget_bytes: u64,
    disk: Option<(PathBuf, u64)>,
    /// `Some`: pinned by the caller; `None`: adaptive from the default.
    max_requests: Option<usize>,
    max_in_flight_bytes: u64,
}

impl SessionBuilder {
    /// Hold about `bytes` of decoded data in memory (default [`DEFAULT_SESSION_BUDGET`]).
    pub fn budget_bytes(mut self, bytes: u64) -> Self {
        self.budget_bytes = bytes;
        self
    }

    /// Pin the bound on requests (GETs and LISTs) in flight to each store at `n` (0 counts
    /// as 1), shared by every dataset, file and index opened with the session and fair
    /// across concurrent queries. Without it the bound *adapts* to each store: it starts at
    /// [`DEFAULT_MAX_REQUESTS`](crate::DEFAULT_MAX_REQUESTS), is halved when the store's
    /// requests time out or are throttled (503, SlowDown, 429), and is raised again as
    /// answers come back about as fast as the store showed unloaded (a LIST counts as
    /// several GETs; slower answers alone do not lower it). Requests beyond the bound wait their turn; waiting never counts
    /// against a request's timeout. The bound a query saw is in its
    /// [`IoStatsSnapshot`](crate::IoStatsSnapshot) (`limit`, `limit_min`, ...).
    ///
    /// ```
    /// # fn main() -> lakeseek::Result<()> {
    /// let session = lakeseek::Session::builder().max_requests(32).build()?;
    /// assert_eq!(session.max_requests(), 32);
    /// assert!(session.max_requests_pinned());
    /// let adaptive = lakeseek::Session::default();
    /// assert_eq!(adaptive.max_requests(), lakeseek::DEFAULT_MAX_REQUESTS);
    /// assert!(!adaptive.max_requests_pinned());
    /// # Ok(()) }
    /// ```
    pub fn max_requests(mut self, n: usize) -> Self {
        self.max_requests = Some(n.max(1));
        self
    }

    /// Let the reads of each store hold at most about `bytes` of responses at once (default
    /// [`DEFAULT_MAX_IN_FLIGHT_BYTES`](crate::DEFAULT_MAX_IN_FLIGHT_BYTES); 0 counts as 1).
    /// Each wave of reads reserves the bytes it will receive before its first request and
    /// keeps them until its last response is in, so however many queries run at once, their
    /// fetched-but-unfinished waves stay within the bound; waves beyond it wait their turn
    /// (fair across queries). A single wave larger than the bound still runs, alone.
    ///
    /// ```
    /// # fn main() -> lakeseek::Result<()> {
    /// let session = lakeseek::Session::builder().max_in_flight_bytes(64 << 20).build()?;
    /// assert_eq!(session.max_in_flight_bytes(), 64 << 20);
    /// assert_eq!(
    ///     lakeseek::Session::default().max_in_flight_bytes(),
    ///     lakeseek::DEFAULT_MAX_IN_FLIGHT_BYTES
    /// );
    /// # Ok(()) }
    /// ```
    pub fn max_in_flight_bytes(mut self, bytes: u64) -> Self {
        self.max_in_flight_bytes = bytes.max(1);
        self
    }

    /// Keep byte ranges of immutable objects under `dir` (created if missing), at most
    /// about `bytes` of them.
    pub fn disk_cache(mut self, dir: impl Into<PathBuf>, bytes: u64) -> Self {
        self.disk = Some((dir.into(), bytes));
        self
    }

    /// The disk tier as every lakeseek command chooses it from `--cache-dir` /
    /// `--cache-bytes`: `dir`, else the directory [`CACHE_DIR_ENV`] names (unset or empty:
    /// no disk tier), holding about `bytes` (default [`DEFAULT_CACHE_BYTES`]). `bytes`
    /// without a directory is an [`Error::InvalidArgument`](crate::Error::InvalidArgument).
    ///
    /// ```
    /// # fn main() -> lakeseek::Result<()> {
    /// let dir = tempfile::tempdir().unwrap();
    /// let session = lakeseek::Session::builder()
    ///     .disk_cache_from(Some(dir.path().into()), None)?
    ///     .build()?;
    /// assert_eq!(session.disk_cache_dir(), Some(dir.path()));
    /// # Ok(()) }
    /// ```
    pub fn disk_cache_from(self, dir: Option<PathBuf>, bytes: Option<u64>) -> Result<Self> {
        let from_env = || {
            std::env::var_os(CACHE_DIR_ENV)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        match (dir.or_else(from_env), bytes) {
            (Some(dir), bytes) => Ok(self.disk_cache(dir, bytes.unwrap_or(DEFAULT_CACHE_BYTES))),
            (None, Some(_)) => Err(crate::Error::InvalidArgument(format!(
                "a disk cache size needs a cache directory (or {CACHE_DIR_ENV})"
            ))),
            (None, None) => Ok(self),
        }
    }

    /// Build the session; fails with [`Error::InvalidArgument`](crate::Error::InvalidArgument)
    /// when the cache directory cannot be created or written.
    pub fn build(self) -> Result<Session> {
        let disk = match &self.disk {
            Some((dir, bytes)) => Some(DiskCache::open(dir, *bytes)?),
            None => None,
        };
        let datasets = DatasetSession::with_budget(self.budget_bytes).with_disk(disk);
        let (max_requests, max_bytes) = (self.max_requests, self.max_in_flight_bytes);
        datasets.extensions.get_or_init(|| match max_requests {
            Some(n) => AdmissionRegistry::new(n, max_bytes),
            None => AdmissionRegistry::adaptive(DEFAULT_MAX_REQUESTS, max_bytes),
        });
        Ok(Session {
            datasets: Arc::new(datasets),
            budget_bytes: self.budget_bytes,
            disk_dir: self.disk.map(|(dir, _)| dir),
        })
    }
}

impl Session {
    /// A session with the default budget ([`DEFAULT_SESSION_BUDGET`]).
    pub fn new() -> Self {
        Self::with_budget(DEFAULT_SESSION_BUDGET)
    }

    /// A session whose caches together hold about `bytes` of decoded data. Index pages are
    /// cached too (a warm repeat of a lookup then needs no request).
    pub fn with_budget(bytes: u64) -> Self {
        Self {
            datasets: Arc::new(DatasetSession::with_budget(bytes)),
            budget_bytes: bytes,
            disk_dir: None,
        }
    }

    /// A builder: memory budget and an optional disk tier ([`SessionBuilder`]).
    pub fn builder() -> SessionBuilder {
        SessionBuilder {
            budget_bytes: DEFAULT_SESSION_BUDGET,
            disk: None,
            max_requests: None,
            max_in_flight_bytes: DEFAULT_MAX_IN_FLIGHT_BYTES,
        }
    }

    /// The bound on requests in flight per store ([`SessionBuilder::max_requests`]): the
    /// pinned one, or where the adaptive one starts.
    pub fn max_requests(&self) -> usize {
        self.admission().max_requests()
    }

    /// Whether the bound on requests in flight is pinned ([`SessionBuilder::max_requests`])
    /// rather than adapting to each store (from [`max_requests`](Self::max_requests) down).
    pub fn max_requests_pinned(&self) -> bool {
        self.admission().is_pinned()
    }

    /// The bound on response bytes held per store ([`SessionBuilder::max_in_flight_bytes`]).
    pub fn max_in_flight_bytes(&self) -> u64 {
        self.admission().max_bytes()
    }

    /// The admission control of each store this session reads (crate-internal handle).
    pub(crate) fn admission(&self) -> Arc<AdmissionRegistry> {
        registry_of(&self.datasets.extensions)
    }

    /// The byte budget.
    pub fn budget_bytes(&self) -> u64 {
        self.budget_bytes
    }

    /// The decoded-node cache every ecpfs index opened with this session shares (its share
    /// of the budget, weighed with the other caches).
    pub(crate) fn ecp_node_cache(&self) -> NodeCache {
        let datasets = &self.datasets;
        let slot = datasets
            .extensions
            .get_or_init(|| EcpNodeCache(datasets.caches.cache(CacheShare::EcpNodes)));
        slot.0.clone()
    }

    /// The disk tier's directory, when the session has one.
    pub fn disk_cache_dir(&self) -> Option<&Path> {
        self.disk_dir.as_deref()
    }

    /// The dataset-level caches (crate-internal handle).
    pub(crate) fn dataset_session(&self) -> &Arc<DatasetSession> {
        &self.datasets
    }
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}

/// The extension slot of a session's ecpfs node cache.
struct EcpNodeCache(NodeCache);

#[cfg(all(test, feature = "sample-data"))]
#[path = "session_tests.rs"]
mod tests;
