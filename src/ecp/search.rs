//! The best-first eCP search as a pure state machine (no I/O).
//!
//! Follows ecp-core 0.10.x (`search/index/query.rs`, see `docs/ecpfs-format.md` section 2):
//! one heap over nodes of every level keyed by the query's score against each node's
//! representative; leaves scanned count toward `search_exp`, which doubles up to
//! `max_increments` times (−1: unlimited) while fewer than `k` items are buffered; the stop
//! check runs after every visited node; missing nodes are skipped without counting; the whole
//! item buffer is re-sorted after every call and the first `k` are drained.
//!
//! **Tiebreaks (deterministic, ours):** the heap pops the highest heap score first, and among
//! equal scores the lower level, then the lower node id, then the entry pushed first. Items sort
//! by ascending item score, then ascending item id.
//!
//! The driver ([`super::query`]) pops an entry, loads its node, and hands it to
//! [`SearchState::visit`]; it may look ahead with [`SearchState::upcoming`] to prefetch.

use std::cmp::Ordering;
use std::collections::{BTreeSet, HashSet};

use super::metric::Scorer;
use super::node::Node;
use crate::error::{Error, Result};

/// One node waiting in the heap.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HeapEntry {
    /// Heap score (higher is visited first).
    pub score: f32,
    /// Whether the node is a leaf.
    pub is_leaf: bool,
    /// 0-based level (the node lives under `lvl_{level+1}`).
    pub level: u32,
    /// Node id on that level.
    pub node_id: u32,
    /// Push order, the last tiebreak.
    pub seq: u64,
}

impl PartialEq for HeapEntry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for HeapEntry {}
impl PartialOrd for HeapEntry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for HeapEntry {
    /// Best first: `Less` means "visited earlier".
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .score
            .total_cmp(&self.score)
            .then(self.level.cmp(&other.level))
            .then(self.node_id.cmp(&other.node_id))
            .then(self.seq.cmp(&other.seq))
    }
}

/// An item found by the search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoredItem {
    /// Item score: L2 distance, or −dot for IP. Lower is better.
    pub score: f32,
    /// Item id.
    pub id: u32,
}

fn item_order(a: &ScoredItem, b: &ScoredItem) -> Ordering {
    a.score.total_cmp(&b.score).then(a.id.cmp(&b.id))
}

/// Per-call search parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchParams {
    /// Leaves to scan before checking whether `k` items are buffered (≥ 1).
    pub search_exp: u32,
    /// How many times `search_exp` may double; −1 is unlimited.
    pub max_increments: i64,
}

impl Default for SearchParams {
    fn default() -> Self {
        Self {
            search_exp: 4,
            max_increments: -1,
        }
    }
}

impl SearchParams {
    /// Check `search_exp >= 1` and `max_increments >= -1`.
    pub fn validate(&self) -> Result<()> {
        if self.search_exp == 0 {
            return Err(Error::InvalidArgument(
                "search_exp must be at least 1".into(),
            ));
        }
        if self.max_increments < -1 {
            return Err(Error::InvalidArgument(format!(
                "max_increments must be -1 (unlimited) or >= 0, got {}",
                self.max_increments
            )));
        }
        Ok(())
    }
}

/// Progress of one incremental call.
#[derive(Debug, Clone)]
pub(crate) struct CallState {
    k: usize,
    params: SearchParams,
    leaf_count: u64,
    increments: i64,
    exp: u64,
    extra_exclude: HashSet<u32>,
    /// Nodes popped in this call, gaps included, in order.
    pub visited: Vec<(u32, u32)>,
}

/// What the driver should do after a visit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Pop the next entry.
    Continue,
    /// The call is over.
    Stop,
}

/// The persistent state of one query: heap, buffered items, exclude set.
#[derive(Debug, Clone)]
pub(crate) struct SearchState {
    heap: BTreeSet<HeapEntry>,
    next_seq: u64,
    items: Vec<ScoredItem>,
    exclude: HashSet<u32>,
    seeded: bool,
    levels: u32,
}

impl SearchState {
    /// A fresh query over an index with `levels` levels; `exclude` applies to every call.
    pub(crate) fn new(levels: u32, exclude: impl IntoIterator<Item = u32>) -> Self {
        Self {
            heap: BTreeSet::new(),
            next_seq: 0,
            items: Vec::new(),
            exclude: exclude.into_iter().collect(),
            seeded: false,
            levels,
        }
    }

    /// A resumed query: the heap entries (any order) and buffered items of a saved state.
    pub(crate) fn resume(
        levels: u32,
        heap: impl IntoIterator<Item = (f32, bool, u32, u32)>,
        items: Vec<ScoredItem>,
        exclude: impl IntoIterator<Item = u32>,
    ) -> Self {
        let mut state = Self::new(levels, exclude);
        state.seeded = true;
        let mut entries: Vec<(f32, bool, u32, u32)> = heap.into_iter().collect();
        // Push in best-first order so the seq tiebreak is independent of the saved order.
        entries.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.2.cmp(&b.2)).then(a.3.cmp(&b.3)));
        for (score, is_leaf, level, node_id) in entries {
            state.push(score, is_leaf, level, node_id);
        }
        state.items = items;
        state.items.sort_by(item_order);
        state
    }

    fn push(&mut self, score: f32, is_leaf: bool, level: u32, node_id: u32) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.insert(HeapEntry {
            score,
            is_leaf,
            level,
            node_id,
            seq,
        });
    }

    /// Buffered items, sorted.
    pub(crate) fn items(&self) -> &[ScoredItem] {
        &self.items
    }

    /// Heap entries in visiting order.
    pub(crate) fn heap_entries(&self) -> impl Iterator<Item = &HeapEntry> {
        self.heap.iter()
    }

    /// The query's own exclude set.
    pub(crate) fn exclude(&self) -> &HashSet<u32> {
        &self.exclude
    }

    /// Whether a call is needed before draining `k`: the first call always searches; later
    /// calls search only while fewer than `k` items are buffered and nodes remain.
    pub(crate) fn needs_search(&self, k: usize) -> bool {
        !self.seeded || (self.items.len() < k && !self.heap.is_empty())
    }

    /// Start a call. Seeds the heap from the root on the first call.
    pub(crate) fn begin(
        &mut self,
        k: usize,
        params: SearchParams,
        extra_exclude: &[u32],
        root: &Node,
        scorer: &Scorer,
    ) -> CallState {
        if !self.seeded {
            self.seeded = true;
            let root_is_leaf = self.levels == 1;
            for (i, (row, norm)) in root.rows_with_norms().enumerate() {
                self.push(
                    scorer.heap_score_with_norm(row, norm),
                    root_is_leaf,
                    0,
                    i as u32,
                );
            }
        }
        CallState {
            k,
            params,
            leaf_count: 0,
            increments: 0,
            exp: u64::from(params.search_exp),
            extra_exclude: extra_exclude.iter().copied().collect(),
            visited: Vec::new(),
        }
    }

    /// Pop the best entry, if any.
    pub(crate) fn pop(&mut self) -> Option<HeapEntry> {
        self.heap.pop_first()
    }

    /// Put back an entry whose node could not be loaded (so a failed call can be retried).
    pub(crate) fn unpop(&mut self, entry: HeapEntry) {
        self.heap.insert(entry);
    }

    /// The next `n` entries that would be popped.
    pub(crate) fn upcoming(&self, n: usize) -> impl Iterator<Item = &HeapEntry> {
        self.heap.iter().take(n)
    }

    /// Process a popped entry with its node (`None`: the node does not exist).
    pub(crate) fn visit(
        &mut self,
        entry: HeapEntry,
        node: Option<&Node>,
        scorer: &Scorer,
        call: &mut CallState,
    ) -> Step {
        call.visited.push((entry.level, entry.node_id));
        let Some(node) = node else {
            return Step::Continue;
        };
        if entry.is_leaf {
            for ((row, norm), &id) in node.rows_with_norms().zip(node.children()) {
                if !self.exclude.contains(&id) && !call.extra_exclude.contains(&id) {
                    self.items.push(ScoredItem {
                        score: scorer.item_score_with_norm(row, norm),
                        id,
                    });
                }
            }
            call.leaf_count += 1;
        } else {
            let child_level = entry.level + 1;
            let child_is_leaf = child_level + 1 == self.levels;
            for ((row, norm), &id) in node.rows_with_norms().zip(node.children()) {
                self.push(
                    scorer.heap_score_with_norm(row, norm),
                    child_is_leaf,
                    child_level,
                    id,
                );
            }
        }
        if call.leaf_count == call.exp {
            if self.items.len() >= call.k {
                return Step::Stop;
            }
            if call.params.max_increments == -1 || call.increments < call.params.max_increments {
                call.increments += 1;
                call.exp = call.exp.saturating_mul(2);
            } else {
                return Step::Stop;
            }
        }
        Step::Continue
    }

    /// End a call: sort the whole buffer.
    pub(crate) fn finish(&mut self) {
        self.items.sort_by(item_order);
    }

    /// Remove and return the first `k` buffered items.
    pub(crate) fn drain(&mut self, k: usize) -> Vec<ScoredItem> {
        let n = k.min(self.items.len());
        self.items.drain(..n).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ecp::metric::Metric;

    fn node(rows: &[[f32; 1]], children: &[u32]) -> Node {
        Node::new(
            1,
            rows.iter().flatten().copied().collect(),
            children.to_vec(),
        )
        .unwrap()
    }

    #[test]
    fn heap_ties_break_on_level_then_node_id() {
        let mut s = SearchState::new(2, []);
        s.push(1.0, false, 1, 5);
        s.push(1.0, false, 0, 9);
        s.push(1.0, false, 0, 3);
        s.push(2.0, false, 1, 7);
        let order: Vec<(u32, u32)> = std::iter::from_fn(|| s.pop())
            .map(|e| (e.level, e.node_id))
            .collect();
        assert_eq!(order, vec![(1, 7), (0, 3), (0, 9), (1, 5)]);
    }

    #[test]
    fn one_level_search_doubles_until_k_items() {
        // root: 3 leaves; query at 0 (IP with query [1]: higher value = better)
        let root = node(&[[3.0], [2.0], [1.0]], &[]);
        let scorer = Scorer::new(Metric::IP, false, vec![1.0]).unwrap();
        let leaves = [
            node(&[[3.0]], &[30]),
            node(&[[2.0]], &[20]),
            node(&[[1.0], [0.5]], &[10, 11]),
        ];
        let mut s = SearchState::new(1, []);
        let params = SearchParams {
            search_exp: 1,
            max_increments: -1,
        };
        let mut call = s.begin(3, params, &[], &root, &scorer);
        while let Some(e) = s.pop() {
            let leaf = &leaves[e.node_id as usize];
            if s.visit(e, Some(leaf), &scorer, &mut call) == Step::Stop {
                break;
            }
        }
        s.finish();
        // exp 1 -> 2 (after leaf 0) -> 4 (after leaf 1); leaf 2 makes 4 items but exp is 4 and
        // only 3 leaves exist, so the heap runs dry.
        assert_eq!(call.visited, vec![(0, 0), (0, 1), (0, 2)]);
        let ids: Vec<u32> = s.drain(3).iter().map(|i| i.id).collect();
        assert_eq!(ids, vec![30, 20, 10]);
        assert_eq!(s.items().len(), 1);
    }

    #[test]
    fn params_are_validated() {
        assert!(SearchParams {
            search_exp: 0,
            max_increments: -1
        }
        .validate()
        .is_err());
        assert!(SearchParams {
            search_exp: 1,
            max_increments: -2
        }
        .validate()
        .is_err());
        assert!(SearchParams {
            search_exp: 1,
            max_increments: 0
        }
        .validate()
        .is_ok());
    }
}
