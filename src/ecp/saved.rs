//! Saved query state under `queries/Q/` (load, continue, save back).
//!
//! Layout (ecp-core): `query` f32 `(dim,)`; the heap as four parallel arrays `tree_pq_score`
//! f32, `tree_pq_is_leaf` i32, `tree_pq_level` u32 (0-based), `tree_pq_node_id` u32, in any
//! order; buffered items `items_score` f32 and `items_id` u32; optional `exclude` u32; and
//! `persisted_at` u64 (Unix seconds). 1-d arrays have one chunk of `max(n,1)` rows, no
//! compression.
//!
//! Exclude: ecp-core's handling of a saved exclude set is not confirmed (see the format note);
//! lakeseek treats it as the query's own exclude set, applied on every later page.

use std::time::{SystemTime, UNIX_EPOCH};

use zarrs::array::data_type::{
    self, Float32DataType, Int32DataType, UInt32DataType, UInt64DataType,
};

use super::index::{EcpIndex, IndexInfo};
use super::metric::Scorer;
use super::query::{EcpQuery, QueryOptions};
use super::search::{ScoredItem, SearchState};
use super::zarr_io::FetchedArray;
use crate::error::{Error, Result};

/// Largest saved exclude set accepted.
const MAX_EXCLUDE: u64 = 1 << 26;

const ARRAYS: [&str; 8] = [
    "query",
    "tree_pq_score",
    "tree_pq_is_leaf",
    "tree_pq_level",
    "tree_pq_node_id",
    "items_score",
    "items_id",
    "exclude",
];

fn check_1d<T: 'static>(array: &FetchedArray, name: &str) -> Result<usize> {
    if !array.data_type().is::<T>() {
        return Err(Error::corrupt(format!(
            "data type is {}, expected {name}",
            array.data_type_name()
        ))
        .at(&array.label, None));
    }
    match array.shape() {
        [n] => Ok(*n as usize),
        shape => Err(
            Error::corrupt(format!("expected shape (n,), got {shape:?}")).at(&array.label, None),
        ),
    }
}

fn require(array: Option<FetchedArray>, index: &EcpIndex, path: &str) -> Result<FetchedArray> {
    array.ok_or_else(|| {
        Error::corrupt("saved query is missing this array")
            .at(&index.inner.store.label_of(path), None)
    })
}

/// The arrays of one saved query, fetched and checked: types, shapes and matching lengths.
struct SavedArrays {
    query: FetchedArray,
    dim: usize,
    score: FetchedArray,
    is_leaf: FetchedArray,
    level: FetchedArray,
    node_id: FetchedArray,
    heap_len: usize,
    items_score: FetchedArray,
    items_id: FetchedArray,
    exclude: Option<FetchedArray>,
}

/// The rows of [`SavedArrays`], read.
struct SavedRows {
    query: Vec<f32>,
    score: Vec<f32>,
    is_leaf: Vec<i32>,
    level: Vec<u32>,
    node_id: Vec<u32>,
    items_score: Vec<f32>,
    items_id: Vec<u32>,
    exclude: Vec<u32>,
}

impl EcpIndex {
    /// Load saved query `query_id` (`queries/{query_id}/`) to continue it with
    /// [`EcpQuery::next_k`]. `NotFound` when no such query was saved.
    pub async fn load_query(&self, query_id: u64, options: QueryOptions) -> Result<EcpQuery> {
        options.params.validate()?;
        let info = self.info().clone();
        let arrays = self.fetch_saved(query_id).await?;
        let mut rows = read_saved(&arrays, &info).await?;
        let query = std::mem::take(&mut rows.query);
        let scorer = Scorer::new(info.metric, info.is_normalized, query).map_err(|e| match e {
            Error::InvalidArgument(what) => Error::corrupt(what).at(&arrays.query.label, None),
            other => other,
        })?;
        let heap = saved_heap(&arrays, &info, &rows)?;
        let items = rows
            .items_score
            .into_iter()
            .zip(rows.items_id)
            .map(|(score, id)| ScoredItem { score, id })
            .collect();
        let state = SearchState::resume(
            info.levels,
            heap,
            items,
            rows.exclude.into_iter().chain(options.exclude),
        );
        Ok(self.query_from_state(scorer, state, options.params, options.prefetch))
    }

    /// Fetch the arrays of `queries/{query_id}/` (and check `persisted_at`), then check
    /// them ([`check_saved`]). `NotFound` when the query array is absent.
    async fn fetch_saved(&self, query_id: u64) -> Result<SavedArrays> {
        let store = &self.inner.store;
        let base = format!("queries/{query_id}");
        let paths: Vec<String> = ARRAYS.iter().map(|a| format!("{base}/{a}")).collect();
        let persisted_path = format!("{base}/persisted_at");
        let fetches = futures::future::join_all(paths.iter().map(|p| store.fetch(p, Some(1))));
        let (fetched, persisted) = futures::join!(fetches, store.fetch(&persisted_path, Some(0)));
        let mut arrays = Vec::with_capacity(fetched.len());
        for f in fetched {
            arrays.push(f?);
        }
        if let Some(p) = persisted? {
            if !p.data_type().is::<UInt64DataType>() || !p.shape().is_empty() {
                return Err(Error::corrupt(format!(
                    "expected a uint64 scalar, got {} {:?}",
                    p.data_type_name(),
                    p.shape()
                ))
                .at(&p.label, None));
            }
        }
        let mut arrays = arrays.into_iter();
        let Some(query) = arrays.next().flatten() else {
            return Err(Error::NotFound {
                path: store.label_of(&base),
                what: "no saved query with this id".into(),
            });
        };
        check_saved(self, query, arrays.collect(), &paths)
    }
}

/// Check the fetched arrays of a saved query (`query` first, then the rest of [`ARRAYS`] in
/// order, `None` where absent): types, shapes, dimension and matching lengths.
fn check_saved(
    index: &EcpIndex,
    query: FetchedArray,
    rest: Vec<Option<FetchedArray>>,
    paths: &[String],
) -> Result<SavedArrays> {
    let info = index.info();
    let dim = check_1d::<Float32DataType>(&query, "float32")?;
    if dim != info.dim {
        return Err(Error::corrupt(format!(
            "query has dimension {dim}, the index has {}",
            info.dim
        ))
        .at(&query.label, None));
    }
    let mut rest = rest.into_iter();
    let mut next = |i: usize| require(rest.next().flatten(), index, &paths[i]);
    let (score, is_leaf, level, node_id) = (next(1)?, next(2)?, next(3)?, next(4)?);
    let (items_score, items_id) = (next(5)?, next(6)?);
    let exclude = rest.next().flatten();
    let heap_len = check_1d::<Float32DataType>(&score, "float32")?;
    for (array, len) in [
        (&is_leaf, check_1d::<Int32DataType>(&is_leaf, "int32")?),
        (&level, check_1d::<UInt32DataType>(&level, "uint32")?),
        (&node_id, check_1d::<UInt32DataType>(&node_id, "uint32")?),
    ] {
        if len != heap_len {
            return Err(Error::corrupt(format!(
                "length {len} differs from tree_pq_score's {heap_len}"
            ))
            .at(&array.label, None));
        }
    }
    let items_len = check_1d::<Float32DataType>(&items_score, "float32")?;
    if check_1d::<UInt32DataType>(&items_id, "uint32")? != items_len {
        return Err(Error::corrupt("length differs from items_score's").at(&items_id.label, None));
    }
    if let Some(e) = &exclude {
        check_1d::<UInt32DataType>(e, "uint32")?;
    }
    Ok(SavedArrays {
        query,
        dim,
        score,
        is_leaf,
        level,
        node_id,
        heap_len,
        items_score,
        items_id,
        exclude,
    })
}

/// Read the rows of checked saved arrays, at most what an index of `info`'s size can hold.
async fn read_saved(a: &SavedArrays, info: &IndexInfo) -> Result<SavedRows> {
    // Every node is pushed at most once; every item is buffered at most once.
    let max_heap = (info.node_size as u64).saturating_add(
        info.total_representatives
            .saturating_mul(u64::from(info.levels)),
    );
    let max_items = u64::from(info.next_item_id);
    let (q, s, l, lv, n, is, ii) = futures::join!(
        a.query.read_rows::<f32>(a.dim as u64),
        a.score.read_rows::<f32>(max_heap),
        a.is_leaf.read_rows::<i32>(max_heap),
        a.level.read_rows::<u32>(max_heap),
        a.node_id.read_rows::<u32>(max_heap),
        a.items_score.read_rows::<f32>(max_items),
        a.items_id.read_rows::<u32>(max_items),
    );
    let (q, s, l, lv, n, is, ii) = (q?, s?, l?, lv?, n?, is?, ii?);
    let exclude = match &a.exclude {
        Some(e) => e.read_rows::<u32>(MAX_EXCLUDE).await?,
        None => Vec::new(),
    };
    Ok(SavedRows {
        query: q,
        score: s,
        is_leaf: l,
        level: lv,
        node_id: n,
        items_score: is,
        items_id: ii,
        exclude,
    })
}

/// The saved heap entries `(score, is_leaf, level, node_id)`, each checked against the
/// index: level below `levels`, `is_leaf` 0/1 and true exactly at the last level, node id in
/// range for its level.
fn saved_heap(
    a: &SavedArrays,
    info: &IndexInfo,
    rows: &SavedRows,
) -> Result<Vec<(f32, bool, u32, u32)>> {
    let mut heap = Vec::with_capacity(a.heap_len);
    for i in 0..a.heap_len {
        let (lvl, nid, leaf) = (rows.level[i], rows.node_id[i], rows.is_leaf[i]);
        if lvl >= info.levels {
            return Err(Error::corrupt(format!(
                "entry {i}: level {lvl} >= levels {}",
                info.levels
            ))
            .at(&a.level.label, None));
        }
        if (leaf != 0) != (lvl + 1 == info.levels) || !(leaf == 0 || leaf == 1) {
            return Err(Error::corrupt(format!(
                "entry {i}: is_leaf {leaf} does not match level {lvl}"
            ))
            .at(&a.is_leaf.label, None));
        }
        let limit = if lvl == 0 {
            info.node_size as u64
        } else {
            info.total_representatives
        };
        if u64::from(nid) >= limit {
            return Err(Error::corrupt(format!(
                "entry {i}: node id {nid} out of range (must be < {limit})"
            ))
            .at(&a.node_id.label, None));
        }
        heap.push((rows.score[i], leaf != 0, lvl, nid));
    }
    Ok(heap)
}

impl EcpQuery {
    /// Save this query's state to `queries/{query_id}/` (ecp-core's `close()`); a query with an
    /// empty heap and no buffered items is erased instead. Needs an index opened `writable`.
    pub async fn save(&self, query_id: u64) -> Result<()> {
        let index = &self.index;
        let store = &index.inner.store;
        let base = format!("queries/{query_id}");
        if !index.options().writable {
            return Err(Error::InvalidArgument(format!(
                "cannot save query state to {}: the index was opened read-only (OpenOptions::writable)",
                store.label_of(&base)
            )));
        }
        let entries: Vec<_> = self.state.heap_entries().copied().collect();
        let items = self.state.items();
        if entries.is_empty() && items.is_empty() {
            for name in ARRAYS {
                store.erase_plain(&format!("{base}/{name}"), 1).await?;
            }
            return store.erase_plain(&format!("{base}/persisted_at"), 0).await;
        }
        let p = |name: &str| format!("{base}/{name}");
        store
            .write_plain(
                &p("query"),
                data_type::float32(),
                self.scorer.query(),
                false,
            )
            .await?;
        let scores: Vec<f32> = entries.iter().map(|e| e.score).collect();
        let leaves: Vec<i32> = entries.iter().map(|e| i32::from(e.is_leaf)).collect();
        let levels: Vec<u32> = entries.iter().map(|e| e.level).collect();
        let nodes: Vec<u32> = entries.iter().map(|e| e.node_id).collect();
        store
            .write_plain(&p("tree_pq_score"), data_type::float32(), &scores, false)
            .await?;
        store
            .write_plain(&p("tree_pq_is_leaf"), data_type::int32(), &leaves, false)
            .await?;
        store
            .write_plain(&p("tree_pq_level"), data_type::uint32(), &levels, false)
            .await?;
        store
            .write_plain(&p("tree_pq_node_id"), data_type::uint32(), &nodes, false)
            .await?;
        let item_scores: Vec<f32> = items.iter().map(|i| i.score).collect();
        let item_ids: Vec<u32> = items.iter().map(|i| i.id).collect();
        store
            .write_plain(&p("items_score"), data_type::float32(), &item_scores, false)
            .await?;
        store
            .write_plain(&p("items_id"), data_type::uint32(), &item_ids, false)
            .await?;
        let mut exclude: Vec<u32> = self.state.exclude().iter().copied().collect();
        exclude.sort_unstable();
        if exclude.is_empty() {
            store.erase_plain(&p("exclude"), 1).await?;
        } else {
            store
                .write_plain(&p("exclude"), data_type::uint32(), &exclude, false)
                .await?;
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        store
            .write_plain(&p("persisted_at"), data_type::uint64(), &[now], true)
            .await
    }
}
