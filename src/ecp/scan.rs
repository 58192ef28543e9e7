//! Exhaustive scan: the floor alternative to the tree search. Walks every node level by level
//! (all nodes of a level concurrently, bypassing the node cache) and returns the exact top k.

use std::sync::Arc;

use futures::{StreamExt, TryStreamExt};

use super::index::EcpIndex;
use super::metric::Scorer;
use super::query::SearchResult;
use super::search::ScoredItem;
use crate::ecp::zarr_storage::with_query_stats;
use crate::error::{Error, Result};
use crate::io::IoStats;

impl EcpIndex {
    /// Exact k nearest items over every leaf, `concurrency` node loads at a time. Requests are
    /// counted into `stats`.
    pub async fn exhaustive_search(
        &self,
        query: Vec<f32>,
        k: usize,
        exclude: &[u32],
        concurrency: usize,
        stats: Arc<IoStats>,
    ) -> Result<SearchResult> {
        let info = self.info().clone();
        if query.len() != info.dim {
            return Err(Error::InvalidArgument(format!(
                "query has dimension {}, the index has {}",
                query.len(),
                info.dim
            )));
        }
        if k == 0 {
            return Err(Error::InvalidArgument("k must be at least 1".into()));
        }
        let scorer = Scorer::new(info.metric, info.is_normalized, query)?;
        let exclude: std::collections::HashSet<u32> = exclude.iter().copied().collect();
        with_query_stats(stats, async move {
            let mut frontier: Vec<u32> = (0..info.node_size as u32).collect();
            let mut items: Vec<ScoredItem> = Vec::new();
            for level in 0..info.levels {
                let is_leaf = level + 1 == info.levels;
                let mut next = Vec::new();
                let mut loads = futures::stream::iter(
                    std::mem::take(&mut frontier)
                        .into_iter()
                        .map(|id| self.node_uncached(level, id)),
                )
                .buffer_unordered(concurrency.max(1));
                while let Some(node) = loads.try_next().await? {
                    let Some(node) = node else { continue };
                    if is_leaf {
                        for ((row, norm), &id) in node.rows_with_norms().zip(node.children()) {
                            if !exclude.contains(&id) {
                                items.push(ScoredItem {
                                    score: scorer.item_score_with_norm(row, norm),
                                    id,
                                });
                            }
                        }
                    } else {
                        next.extend_from_slice(node.children());
                    }
                }
                frontier = next;
            }
            items.sort_by(|a, b| a.score.total_cmp(&b.score).then(a.id.cmp(&b.id)));
            items.truncate(k);
            Ok(SearchResult::from(items))
        })
        .await
    }
}
