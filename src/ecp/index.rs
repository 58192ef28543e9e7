//! Opening a Version 1 ecpfs index and loading its nodes (cached).
//!
//! `open` reads `info/*`, `rep_item_ids`' metadata and `index_root/embeddings` in one wave of
//! concurrent GETs (each array's `zarr.json` together with its first chunk). Nothing is listed
//! and no group metadata is read.
//!
//! Every read goes through lakeseek's I/O layer: a [`FetcherStorage`] over a
//! [`RangeFetcher`] over the index's [`RangeSource`](crate::io::RangeSource) (retries,
//! expected-version checks, accounting, and whatever wrappers the caller put around the
//! source). The public ways to open an index (`EcpIndex::builder` and its shorthands) live in
//! the api layer.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use object_store::path::Path;
use object_store::ObjectStore;
use zarrs::array::data_type::{BoolDataType, StringDataType, UInt32DataType};

use super::metric::Metric;
use super::node::{load_node, read_embeddings, EmbeddingDtype, Node, NodeLimits};
use super::zarr_io::{FetchedArray, ZarrStore};
use crate::ecp::zarr_storage::{with_query_stats, FetcherStorage, StorageProbe};
use crate::error::{Error, Result};
use crate::io::cache::{CacheKey, SizedCache};
use crate::io::{IoStats, IoStatsSnapshot, ObjectVersion, RangeFetcher};

/// Key prefix of saved query state: rewritten while an index is open, so never pinned.
const QUERIES_PREFIX: &str = "queries/";

/// Where an ecpfs index lives besides its URL: storage options, or a ready-made store.
#[derive(Debug, Clone, Default)]
pub struct EcpStore {
    /// `key=value` storage options (object_store builder keys, lakeseek I/O options).
    pub storage_options: Vec<(String, String)>,
    /// Read (and, when writable, save queries) through this store instead of building one
    /// from the URL.
    pub object_store: Option<Arc<dyn ObjectStore>>,
}

/// How to open an index.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    /// Allow writes (saving query state). Off by default: the reader never writes otherwise.
    pub writable: bool,
    /// Capacity of the decoded-node cache, in bytes of f32 embeddings and ids.
    pub node_cache_bytes: u64,
    /// How many heap entries a search loads concurrently (1 = no prefetch).
    pub prefetch: usize,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self {
            writable: false,
            node_cache_bytes: 256 << 20,
            prefetch: 8,
        }
    }
}

/// The settings of an index (`info/*` plus what the root and `rep_item_ids` tell).
#[derive(Debug, Clone, serde::Serialize)]
pub struct IndexInfo {
    /// `info/format_version` (1; also 1 when the array is missing).
    pub format_version: u32,
    /// Whether `info/format_version` exists.
    pub format_version_present: bool,
    /// Node levels below the root.
    pub levels: u32,
    /// `L2` or `IP`.
    pub metric: Metric,
    /// `info/is_normalized` (false when absent).
    pub is_normalized: bool,
    /// Items stored.
    pub total_items: u32,
    /// Id the next insert gives out.
    pub next_item_id: u32,
    /// Vector dimension (columns of `index_root/embeddings`).
    pub dim: usize,
    /// Rows of the root node.
    pub node_size: usize,
    /// Number of representatives (length of `rep_item_ids`).
    pub total_representatives: u64,
    /// Stored dtype of the root embeddings.
    pub embedding_dtype: EmbeddingDtype,
}

pub(crate) struct Inner {
    pub(crate) store: ZarrStore,
    pub(crate) info: IndexInfo,
    pub(crate) root: Arc<Node>,
    pub(crate) limits: NodeLimits,
    cache: NodeCache,
    /// This open's part of the node cache (keys carry it): unique across opens and clears,
    /// so indexes sharing a session's cache never see each other's nodes.
    cache_epoch: AtomicU64,
    /// Whether `cache` is a session's (else this index's own).
    cache_shared: bool,
    pub(crate) stats: Arc<IoStats>,
    pub(crate) probe: StorageProbe,
    pub(crate) options: OpenOptions,
    url: String,
}

/// The decoded-node cache: by (epoch, level, node id), see `Inner::cache_epoch`.
pub(crate) type NodeCache = SizedCache<(u64, u32, u32), Option<Node>>;

/// A fresh node-cache epoch (never one handed out before in this process).
fn next_cache_epoch() -> u64 {
    static EPOCHS: AtomicU64 = AtomicU64::new(0);
    EPOCHS.fetch_add(1, Ordering::Relaxed)
}

/// An open ecpfs index. Cheap to clone (shared state).
#[derive(Clone)]
pub struct EcpIndex {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for EcpIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EcpIndex")
            .field("url", &self.inner.url)
            .field("info", &self.inner.info)
            .finish()
    }
}

fn expect_type<T: 'static>(array: &FetchedArray, name: &str) -> Result<()> {
    if array.data_type().is::<T>() {
        Ok(())
    } else {
        Err(Error::corrupt(format!(
            "data type is {}, expected {name}",
            array.data_type_name()
        ))
        .at(&array.label, None))
    }
}

fn expect_rank0(array: &FetchedArray) -> Result<()> {
    if array.shape().is_empty() {
        Ok(())
    } else {
        Err(Error::corrupt(format!(
            "expected a scalar (shape []), shape is {:?}",
            array.shape()
        ))
        .at(&array.label, None))
    }
}

pub(crate) async fn scalar_u32(array: &FetchedArray) -> Result<u32> {
    expect_type::<UInt32DataType>(array, "uint32")?;
    expect_rank0(array)?;
    first(array.read_rows::<u32>(1).await?, array)
}

fn first<T>(values: Vec<T>, array: &FetchedArray) -> Result<T> {
    values
        .into_iter()
        .next()
        .ok_or_else(|| Error::corrupt("scalar has no value").at(&array.label, None))
}

fn missing(store: &ZarrStore, path: &str) -> Error {
    Error::NotFound {
        path: store.label_of(path),
        what: "required array of an ecpfs index is missing".into(),
    }
}

impl EcpIndex {
    /// Open the index stored under `prefix`, reading through `fetcher` (its source, retry
    /// policy and fetch options), writing saved queries to `writer` (under the same prefix)
    /// when given and [`OpenOptions::writable`], and keeping nodes in `cache` (a session's,
    /// shared by the indexes opened with it) or else in a cache of
    /// [`OpenOptions::node_cache_bytes`] of its own. The one constructor under the public
    /// builder (`EcpIndex::builder`, in the api layer); `label` names the index in errors.
    pub(crate) async fn open_with_cache(
        fetcher: RangeFetcher,
        writer: Option<Arc<dyn ObjectStore>>,
        prefix: Path,
        label: &str,
        options: OpenOptions,
        cache: Option<NodeCache>,
    ) -> Result<Self> {
        let stats = Arc::new(IoStats::new());
        let label = label.trim_end_matches('/');
        let mut storage = FetcherStorage::new(fetcher, prefix, label, Arc::clone(&stats))
            .with_unpinned_prefix(QUERIES_PREFIX);
        if let Some(store) = writer.filter(|_| options.writable) {
            storage = storage.with_object_store_writes(store);
        }
        let probe = storage.probe().clone();
        let zarr = ZarrStore::new(Arc::new(storage), label);
        let (info, root) = read_info(&zarr).await?;
        let limits = NodeLimits {
            dim: info.dim,
            levels: info.levels,
            max_node_id: Some(info.total_representatives),
            max_item_id: u64::from(info.next_item_id),
        };
        let cache_shared = cache.is_some();
        let cache = cache.unwrap_or_else(|| SizedCache::new(options.node_cache_bytes));
        Ok(Self {
            inner: Arc::new(Inner {
                store: zarr,
                info,
                root: Arc::new(root),
                limits,
                cache,
                cache_epoch: AtomicU64::new(next_cache_epoch()),
                cache_shared,
                stats,
                probe,
                options,
                url: label.to_string(),
            }),
        })
    }

    /// The index settings.
    pub fn info(&self) -> &IndexInfo {
        &self.inner.info
    }

    /// The root node (its rows are the first `node_size` representatives).
    pub fn root(&self) -> &Node {
        &self.inner.root
    }

    /// All requests this index handle has made so far (open, searches, prefetches).
    pub fn total_stats(&self) -> IoStatsSnapshot {
        self.inner.stats.snapshot()
    }

    /// Counters of request kinds and the request log of this index's storage.
    pub fn store_probe(&self) -> &StorageProbe {
        &self.inner.probe
    }

    /// The options the index was opened with.
    pub fn options(&self) -> &OpenOptions {
        &self.inner.options
    }

    /// Drop every cached node (the next visits go to storage again). In a session's
    /// shared node cache only this index's nodes become unreachable (they age out).
    pub fn clear_cache(&self) {
        self.inner
            .cache_epoch
            .store(next_cache_epoch(), Ordering::Relaxed);
        if !self.inner.cache_shared {
            self.inner.cache.clear();
        }
    }

    /// The node cache key of `level`, `node_id` for this open.
    fn node_key(&self, level: u32, node_id: u32) -> CacheKey<(u64, u32, u32)> {
        CacheKey {
            path: String::new(),
            version: ObjectVersion {
                size: 0,
                etag: None,
            },
            item: (
                self.inner.cache_epoch.load(Ordering::Relaxed),
                level,
                node_id,
            ),
        }
    }

    /// Node `node_id` of 0-based `level`, from the cache or storage; `None` for a gap.
    pub async fn node(&self, level: u32, node_id: u32) -> Result<Arc<Option<Node>>> {
        if level >= self.inner.info.levels {
            return Err(Error::InvalidArgument(format!(
                "level {level} >= levels {}",
                self.inner.info.levels
            )));
        }
        let key = self.node_key(level, node_id);
        let inner = Arc::clone(&self.inner);
        self.inner
            .cache
            .get_or_try_load(key, async move {
                load_node(&inner.store, inner.limits, level, node_id).await
            })
            .await
    }

    /// Node from the cache only (no I/O).
    pub async fn cached_node(&self, level: u32, node_id: u32) -> Option<Arc<Option<Node>>> {
        let key = self.node_key(level, node_id);
        self.inner.cache.get(&key).await
    }

    /// Load a node bypassing the cache (used by the exhaustive scan).
    pub async fn node_uncached(&self, level: u32, node_id: u32) -> Result<Option<Node>> {
        load_node(&self.inner.store, self.inner.limits, level, node_id).await
    }

    /// Run `fut` counting the requests it makes into `stats` (and the index's totals).
    pub async fn with_stats<F: std::future::Future>(
        &self,
        stats: Arc<IoStats>,
        fut: F,
    ) -> F::Output {
        with_query_stats(stats, fut).await
    }
}

async fn read_info(store: &ZarrStore) -> Result<(IndexInfo, Node)> {
    let scalar = |name: &'static str| async move { store.fetch(name, Some(0)).await };
    let (version, levels, metric, normalized, total, next, reps, root) = futures::join!(
        scalar("info/format_version"),
        scalar("info/levels"),
        scalar("info/metric"),
        scalar("info/is_normalized"),
        scalar("info/total_items"),
        scalar("info/next_item_id"),
        store.fetch("rep_item_ids", None),
        store.fetch("index_root/embeddings", Some(2)),
    );
    let (levels, metric, total, next, reps, root) = (levels?, metric?, total?, next?, reps?, root?);
    // The version is checked before anything else.
    let (format_version, format_version_present) = match version? {
        Some(v) => (scalar_u32(&v).await?, true),
        None => (1, false),
    };
    if format_version != 1 {
        return Err(Error::unsupported(format!(
            "format_version {format_version} (only 1 is supported)"
        ))
        .at(&store.label_of("info/format_version"), None));
    }
    let levels_array = levels.ok_or_else(|| missing(store, "info/levels"))?;
    let metric_array = metric.ok_or_else(|| missing(store, "info/metric"))?;
    let total_array = total.ok_or_else(|| missing(store, "info/total_items"))?;
    let next_array = next.ok_or_else(|| missing(store, "info/next_item_id"))?;
    let reps = reps.ok_or_else(|| missing(store, "rep_item_ids"))?;
    let root = root.ok_or_else(|| missing(store, "index_root/embeddings"))?;

    let levels = scalar_u32(&levels_array).await?;
    if levels == 0 {
        return Err(Error::corrupt("levels must be at least 1").at(&levels_array.label, None));
    }
    expect_type::<StringDataType>(&metric_array, "string")?;
    expect_rank0(&metric_array)?;
    let metric_text = first(metric_array.read_rows::<String>(1).await?, &metric_array)?;
    let metric = Metric::parse(&metric_text).map_err(|e| e.at(&metric_array.label, None))?;
    let is_normalized = match normalized? {
        Some(array) => {
            expect_type::<BoolDataType>(&array, "bool")?;
            expect_rank0(&array)?;
            first(array.read_rows::<bool>(1).await?, &array)?
        }
        None => false,
    };
    let total_items = scalar_u32(&total_array).await?;
    let next_item_id = scalar_u32(&next_array).await?;
    expect_type::<UInt32DataType>(&reps, "uint32")?;
    let total_representatives = match reps.shape() {
        [n] => *n,
        shape => {
            return Err(
                Error::corrupt(format!("expected shape (n,), got {shape:?}")).at(&reps.label, None),
            )
        }
    };
    let embedding_dtype = EmbeddingDtype::of(&root)?;
    let (node_size, dim, values) =
        read_embeddings(&root, None, total_representatives.max(1)).await?;
    if node_size == 0 {
        return Err(Error::corrupt("the root node has no rows").at(&root.label, None));
    }
    let root_node = Node::new(dim, values, Vec::new()).map_err(|e| e.at(&root.label, None))?;
    let info = IndexInfo {
        format_version,
        format_version_present,
        levels,
        metric,
        is_normalized,
        total_items,
        next_item_id,
        dim,
        node_size,
        total_representatives,
        embedding_dtype,
    };
    Ok((info, root_node))
}
