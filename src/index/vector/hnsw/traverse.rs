//! The HNSW search of one partition as lance 14.0.2 runs it (`HNSW::search`): a greedy
//! descent through the upper levels (stopping at level 1), then an `ef`-bounded beam
//! search of level 0; with a row mask, the beam accepts only admitted rows, and when the
//! mask admits fewer than a tenth of the nodes the partition is scanned instead (exact
//! over the storage's distances). The heaps are std's `BinaryHeap` ordered by distance
//! alone, as lance's are, so ties resolve as lance resolves them.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use super::graph::HnswGraph;

/// A node and its distance to the query, ordered by distance only (lance's
/// `OrderedNode`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Node {
    /// Node id (row of the partition's storage).
    pub id: u32,
    /// Distance to the query.
    pub dist: f32,
}

impl PartialEq for Node {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Node {}

impl PartialOrd for Node {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Node {
    fn cmp(&self, other: &Self) -> Ordering {
        self.dist.total_cmp(&other.dist)
    }
}

/// What the search keeps.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HnswQuery {
    /// Results wanted (the query's `k` times its refine factor).
    pub k: usize,
    /// Beam width (at least `k`).
    pub ef: usize,
    /// Keep `lower <= distance < upper`.
    pub range: (Option<f32>, Option<f32>),
}

impl HnswQuery {
    fn accepts_distance(&self, d: f32) -> bool {
        let lower = self.range.0.unwrap_or(f32::MIN);
        let upper = self.range.1.unwrap_or(f32::MAX);
        d.total_cmp(&lower).is_ge() && d.total_cmp(&upper).is_lt()
    }
}

/// Search `graph` for `query.k` nodes nearest first; `distance(id)` is the storage's
/// distance of node `id`, `mask` the admitted rows of the partition's storage (`None`:
/// every row).
pub(crate) fn search(
    graph: &HnswGraph,
    query: &HnswQuery,
    mask: Option<&[bool]>,
    distance: &mut dyn FnMut(u32) -> f32,
) -> Vec<Node> {
    let nodes = graph.nodes();
    if nodes == 0 {
        return Vec::new();
    }
    // A mask admitting every row is no mask (lance: `remained == storage.len()`).
    let mask = mask.filter(|m| m.iter().any(|&ok| !ok));
    if let Some(m) = mask {
        let admitted = m.iter().filter(|&&ok| ok).count();
        if admitted < nodes * 10 / 100 {
            return flat(m, query, distance);
        }
    }
    let entry = graph.entry_point();
    let mut ep = Node {
        id: entry,
        dist: distance(entry),
    };
    for level in (1..graph.max_level()).rev() {
        ep = greedy(graph, level, ep, distance);
    }
    let mut found = beam(graph, ep, query, mask, distance);
    found.truncate(query.k);
    found
}

/// Greedy search at `level`: move to the nearest neighbour while one is nearer.
fn greedy(
    graph: &HnswGraph,
    level: usize,
    start: Node,
    distance: &mut dyn FnMut(u32) -> f32,
) -> Node {
    let (mut current, mut closest) = (start.id, start.dist);
    loop {
        let mut next = None;
        for &n in graph.neighbors(level, current) {
            let d = distance(n);
            if d < closest {
                closest = d;
                next = Some(n);
            }
        }
        match next {
            Some(n) => current = n,
            None => break,
        }
    }
    Node {
        id: current,
        dist: closest,
    }
}

fn furthest(results: &BinaryHeap<Node>) -> f32 {
    results.peek().map_or(f32::INFINITY, |n| n.dist)
}

fn push_result(results: &mut BinaryHeap<Node>, node: Node, k: usize) {
    if results.len() < k {
        results.push(node);
    } else if results
        .peek()
        .is_some_and(|top| node.dist.total_cmp(&top.dist).is_lt())
    {
        results.pop();
        results.push(node);
    }
}

/// The `ef`-bounded search of level 0 from `ep` (lance's `beam_search`).
fn beam(
    graph: &HnswGraph,
    ep: Node,
    query: &HnswQuery,
    mask: Option<&[bool]>,
    distance: &mut dyn FnMut(u32) -> f32,
) -> Vec<Node> {
    let ef = query.ef;
    let admitted = |id: u32| mask.is_none_or(|m| m.get(id as usize).copied().unwrap_or(false));
    let unfiltered = mask.is_none() && query.range == (None, None);
    let mut visited = vec![false; graph.nodes()];
    let mut candidates = BinaryHeap::new();
    let mut results = BinaryHeap::new();
    if let Some(v) = visited.get_mut(ep.id as usize) {
        *v = true;
    }
    candidates.push(Reverse(ep));
    if unfiltered || (admitted(ep.id) && query.accepts_distance(ep.dist)) {
        results.push(ep);
    }
    while let Some(Reverse(current)) = candidates.pop() {
        if current.dist.total_cmp(&furthest(&results)).is_gt() && results.len() == ef {
            break;
        }
        for &n in graph.neighbors(0, current.id) {
            match visited.get_mut(n as usize) {
                Some(v) if !*v => *v = true,
                _ => continue,
            }
            let d = distance(n);
            if d.total_cmp(&furthest(&results)).is_le() || results.len() < ef {
                let node = Node { id: n, dist: d };
                if unfiltered || (admitted(n) && query.accepts_distance(d)) {
                    push_result(&mut results, node, ef);
                }
                candidates.push(Reverse(node));
            }
        }
    }
    results.into_sorted_vec()
}

/// The exact scan of the admitted nodes (lance's `flat_search`): `k` nearest.
fn flat(mask: &[bool], query: &HnswQuery, distance: &mut dyn FnMut(u32) -> f32) -> Vec<Node> {
    let mut heap = BinaryHeap::with_capacity(query.k);
    for (id, _) in mask.iter().enumerate().filter(|(_, &ok)| ok) {
        let node = Node {
            id: id as u32,
            dist: distance(id as u32),
        };
        if !query.accepts_distance(node.dist) {
            continue;
        }
        push_result(&mut heap, node, query.k);
    }
    heap.into_sorted_vec()
}
