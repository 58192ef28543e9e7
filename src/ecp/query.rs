//! Query handles: first k, next k, exclude, prefetch of upcoming heap entries.
//!
//! The driver pops heap entries in exactly the order of [`SearchState`]; prefetching only
//! starts loading the next `prefetch - 1` entries of the heap concurrently (into the node
//! cache), so results are identical with or without it. Prefetching starts only when the popped
//! node is not cached (a warm search sends nothing). Prefetches still in flight when a call
//! returns are cancelled.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};

use super::index::EcpIndex;
use super::metric::Scorer;
use super::node::Node;
use super::search::{ScoredItem, SearchParams, SearchState, Step};
use crate::ecp::zarr_storage::with_query_stats;
use crate::error::{Error, Result};
use crate::io::{IoStats, IoStatsSnapshot};

/// One page of results: item ids and their scores (L2 distance, or −dot for IP), best first.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SearchResult {
    /// Item ids.
    pub ids: Vec<u32>,
    /// Item scores, lower is better.
    pub scores: Vec<f32>,
}

impl From<Vec<ScoredItem>> for SearchResult {
    fn from(items: Vec<ScoredItem>) -> Self {
        Self {
            ids: items.iter().map(|i| i.id).collect(),
            scores: items.iter().map(|i| i.score).collect(),
        }
    }
}

/// Options of a new query.
#[derive(Debug, Clone, Default)]
pub struct QueryOptions {
    /// `search_exp` and `max_increments`.
    pub params: SearchParams,
    /// Item ids never returned by this query (applies to every page).
    pub exclude: Vec<u32>,
    /// Override the index's prefetch width (1 = none).
    pub prefetch: Option<usize>,
}

/// An open query: call [`EcpQuery::next_k`] for the first and every following page.
pub struct EcpQuery {
    pub(crate) index: EcpIndex,
    pub(crate) scorer: Scorer,
    pub(crate) state: SearchState,
    pub(crate) params: SearchParams,
    prefetch: usize,
    stats: Arc<IoStats>,
    visited: Vec<(u32, u32)>,
}

impl std::fmt::Debug for EcpQuery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EcpQuery")
            .field("params", &self.params)
            .field("buffered", &self.state.items().len())
            .finish()
    }
}

type NodeLoad = BoxFuture<'static, ((u32, u32), Result<Arc<Option<Node>>>)>;

impl EcpIndex {
    /// Start a query (no I/O yet). Validates the query's dimension, finiteness and the params.
    pub fn query(&self, query: Vec<f32>, options: QueryOptions) -> Result<EcpQuery> {
        let info = self.info();
        if query.len() != info.dim {
            return Err(Error::InvalidArgument(format!(
                "query has dimension {}, the index has {}",
                query.len(),
                info.dim
            )));
        }
        options.params.validate()?;
        let scorer = Scorer::new(info.metric, info.is_normalized, query)?;
        let state = SearchState::new(info.levels, options.exclude);
        Ok(self.query_from_state(scorer, state, options.params, options.prefetch))
    }

    pub(crate) fn query_from_state(
        &self,
        scorer: Scorer,
        state: SearchState,
        params: SearchParams,
        prefetch: Option<usize>,
    ) -> EcpQuery {
        EcpQuery {
            index: self.clone(),
            scorer,
            state,
            params,
            prefetch: prefetch.unwrap_or(self.options().prefetch).max(1),
            stats: Arc::new(IoStats::new()),
            visited: Vec::new(),
        }
    }

    /// Convenience: a new query's first `k` items.
    pub async fn search(
        &self,
        query: Vec<f32>,
        k: usize,
        options: QueryOptions,
    ) -> Result<(SearchResult, EcpQuery)> {
        let mut q = self.query(query, options)?;
        let first = q.next_k(k).await?;
        Ok((first, q))
    }

    fn load_future(&self, key: (u32, u32)) -> NodeLoad {
        let index = self.clone();
        async move { (key, index.node(key.0, key.1).await) }.boxed()
    }
}

impl EcpQuery {
    /// The next `k` items (the first call searches from the root).
    pub async fn next_k(&mut self, k: usize) -> Result<SearchResult> {
        self.next_k_excluding(k, &[]).await
    }

    /// The next `k` items, also excluding `extra` from the leaves scanned in this call.
    pub async fn next_k_excluding(&mut self, k: usize, extra: &[u32]) -> Result<SearchResult> {
        if k == 0 {
            return Err(Error::InvalidArgument("k must be at least 1".into()));
        }
        let stats = Arc::clone(&self.stats);
        with_query_stats(stats, self.run(k, extra)).await
    }

    /// Change `search_exp` / `max_increments` for later calls.
    pub fn set_params(&mut self, params: SearchParams) -> Result<()> {
        params.validate()?;
        self.params = params;
        Ok(())
    }

    /// Requests, bytes and round trips this query has made so far.
    pub fn stats(&self) -> IoStatsSnapshot {
        self.stats.snapshot()
    }

    /// Nodes `(level, node_id)` popped by the last call, gaps included, in visiting order.
    pub fn visited(&self) -> &[(u32, u32)] {
        &self.visited
    }

    /// Items found but not yet returned.
    pub fn buffered(&self) -> usize {
        self.state.items().len()
    }

    async fn run(&mut self, k: usize, extra: &[u32]) -> Result<SearchResult> {
        self.visited.clear();
        if self.state.needs_search(k) {
            let root = Arc::clone(&self.index.inner.root);
            let mut call = self.state.begin(k, self.params, extra, &root, &self.scorer);
            let outcome = self.search_loop(&mut call).await;
            self.visited = std::mem::take(&mut call.visited);
            self.state.finish();
            outcome?;
        }
        Ok(self.state.drain(k).into())
    }

    async fn search_loop(&mut self, call: &mut super::search::CallState) -> Result<()> {
        let mut inflight: FuturesUnordered<NodeLoad> = FuturesUnordered::new();
        let mut inflight_keys: HashSet<(u32, u32)> = HashSet::new();
        let mut ready: HashMap<(u32, u32), Result<Arc<Option<Node>>>> = HashMap::new();
        while let Some(entry) = self.state.pop() {
            let key = (entry.level, entry.node_id);
            // Warm path: a cached node needs no I/O, so nothing is prefetched for it.
            if !ready.contains_key(&key) && !inflight_keys.contains(&key) {
                if let Some(node) = self.index.cached_node(key.0, key.1).await {
                    if self
                        .state
                        .visit(entry, node.as_ref().as_ref(), &self.scorer, call)
                        == Step::Stop
                    {
                        break;
                    }
                    continue;
                }
            }
            if self.prefetch > 1 {
                for next in self.state.upcoming(self.prefetch - 1) {
                    let key = (next.level, next.node_id);
                    if !inflight_keys.contains(&key) && !ready.contains_key(&key) {
                        inflight_keys.insert(key);
                        inflight.push(self.index.load_future(key));
                    }
                }
            }
            let loaded = if let Some(done) = ready.remove(&key) {
                done
            } else if inflight_keys.contains(&key) {
                wait_for(key, &mut inflight, &mut inflight_keys, &mut ready).await
            } else {
                // not prefetched: load it alongside whatever is in flight
                inflight_keys.insert(key);
                inflight.push(self.index.load_future(key));
                wait_for(key, &mut inflight, &mut inflight_keys, &mut ready).await
            };
            let node = match loaded {
                Ok(node) => node,
                Err(e) => {
                    self.state.unpop(entry);
                    return Err(e);
                }
            };
            if self
                .state
                .visit(entry, node.as_ref().as_ref(), &self.scorer, call)
                == Step::Stop
            {
                break;
            }
        }
        Ok(())
    }
}

/// Drive the in-flight loads until `key` completes; others that finish meanwhile go to `ready`.
async fn wait_for(
    key: (u32, u32),
    inflight: &mut FuturesUnordered<NodeLoad>,
    inflight_keys: &mut HashSet<(u32, u32)>,
    ready: &mut HashMap<(u32, u32), Result<Arc<Option<Node>>>>,
) -> Result<Arc<Option<Node>>> {
    while let Some((done_key, result)) = inflight.next().await {
        inflight_keys.remove(&done_key);
        if done_key == key {
            return result;
        }
        ready.insert(done_key, result);
    }
    Err(Error::InvalidArgument(format!(
        "internal: node {key:?} was not in flight"
    )))
}
