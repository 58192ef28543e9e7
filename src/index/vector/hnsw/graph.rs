//! Pure decoders of an HNSW sub-index as pylance writes it in `index.idx`: the
//! `lance:hnsw` schema metadata (one JSON document per IVF partition: entry point and the
//! cumulative `level_offsets`) and a partition's graph rows (`__vector_id`,
//! `__neighbors`), level 0 first, then each upper level.
//!
//! Everything is checked before it sizes or indexes anything: level offsets that do not
//! add up to the partition's rows, a level-0 `__vector_id` that is not its row, an upper
//! level naming a node the graph lacks, a neighbour id out of range, an entry point past
//! the nodes are `Error::Corrupt` (the caller names the file).

use std::collections::HashMap;
use std::ops::Range;

use arrow_array::cast::AsArray;
use arrow_array::types::UInt32Type;
use arrow_array::{Array, RecordBatch};

use crate::error::{Error, Result};

/// Schema metadata key of `index.idx` holding the per-partition HNSW metadata.
pub(crate) const HNSW_METADATA_KEY: &str = "lance:hnsw";
/// Node id column of the graph rows.
pub(crate) const VECTOR_ID_COLUMN: &str = "__vector_id";
/// Neighbour list column of the graph rows.
pub(crate) const NEIGHBORS_COLUMN: &str = "__neighbors";
/// Most levels accepted (lance writes 7).
const MAX_LEVELS: usize = 64;

/// One partition's HNSW metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HnswMeta {
    /// The node the search starts from (a level-0 node id).
    pub entry_point: u32,
    /// Cumulative row offsets of each level in the partition's graph rows
    /// (`level_offsets[l]..level_offsets[l + 1]` are level `l`'s rows).
    pub level_offsets: Vec<u64>,
}

impl HnswMeta {
    /// Graph rows of the partition (the last offset).
    pub(crate) fn rows(&self) -> u64 {
        self.level_offsets.last().copied().unwrap_or(0)
    }
}

#[derive(serde::Deserialize)]
struct HnswMetaJson {
    entry_point: u32,
    level_offsets: Vec<u64>,
}

/// Decode `lance:hnsw` of `metadata`: one [`HnswMeta`] per partition, each checked to
/// start at 0, never decrease and end at the partition's graph rows (`rows[p]`).
pub(crate) fn decode_hnsw_meta(
    metadata: &HashMap<String, String>,
    rows: &[Range<u64>],
) -> Result<Vec<HnswMeta>> {
    let text = metadata
        .get(HNSW_METADATA_KEY)
        .ok_or_else(|| Error::corrupt(format!("schema metadata has no {HNSW_METADATA_KEY:?}")))?;
    let bad = |e: serde_json::Error| {
        Error::corrupt(format!("{HNSW_METADATA_KEY:?} is not HNSW metadata: {e}")).with_source(e)
    };
    let outer: Vec<String> = serde_json::from_str(text).map_err(bad)?;
    if outer.len() != rows.len() {
        return Err(Error::corrupt(format!(
            "{HNSW_METADATA_KEY:?} lists {} partitions, the graph IVF {}",
            outer.len(),
            rows.len()
        )));
    }
    outer
        .iter()
        .zip(rows)
        .enumerate()
        .map(|(p, (json, range))| {
            let m: HnswMetaJson = serde_json::from_str(json).map_err(bad)?;
            let meta = HnswMeta {
                entry_point: m.entry_point,
                level_offsets: m.level_offsets,
            };
            check_meta(&meta, range.end - range.start)
                .map_err(|e| e.context(format!("HNSW metadata of partition {p}")))?;
            Ok(meta)
        })
        .collect()
}

fn check_meta(meta: &HnswMeta, rows: u64) -> Result<()> {
    let offsets = &meta.level_offsets;
    if offsets.first() != Some(&0) || offsets.len() > MAX_LEVELS + 1 {
        return Err(Error::corrupt(format!(
            "level offsets {offsets:?} (0 first, at most {MAX_LEVELS} levels expected)"
        )));
    }
    if offsets.windows(2).any(|w| w[1] < w[0]) {
        return Err(Error::corrupt(format!(
            "level offsets {offsets:?} decrease"
        )));
    }
    if meta.rows() != rows {
        return Err(Error::corrupt(format!(
            "level offsets end at row {}, the partition holds {rows} graph rows",
            meta.rows()
        )));
    }
    if rows > 0 && offsets.len() < 2 {
        return Err(Error::corrupt("graph rows but no level"));
    }
    Ok(())
}

/// One level's adjacency: the neighbour ids of row `r` are
/// `neighbors[offsets[r]..offsets[r + 1]]`.
#[derive(Debug, Clone, PartialEq)]
struct Level {
    offsets: Vec<u32>,
    neighbors: Vec<u32>,
    /// Node id -> row, for the upper levels (level 0: row == node id).
    rows: Option<HashMap<u32, u32>>,
}

/// A decoded, validated HNSW graph of one partition.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HnswGraph {
    entry_point: u32,
    levels: Vec<Level>,
}

impl HnswGraph {
    /// Nodes (level-0 rows; node ids are `0..nodes`, rows of the partition's storage).
    pub(crate) fn nodes(&self) -> usize {
        self.levels
            .first()
            .map_or(0, |l| l.offsets.len().saturating_sub(1))
    }

    /// The entry point.
    pub(crate) fn entry_point(&self) -> u32 {
        self.entry_point
    }

    /// Levels holding at least one node (lance's `max_level`).
    pub(crate) fn max_level(&self) -> usize {
        self.levels
            .iter()
            .rposition(|l| l.offsets.len() > 1)
            .map_or(0, |l| l + 1)
    }

    /// The neighbours of node `id` at `level` (none when the node is not on the level).
    pub(crate) fn neighbors(&self, level: usize, id: u32) -> &[u32] {
        let Some(l) = self.levels.get(level) else {
            return &[];
        };
        let row = match &l.rows {
            None => id as usize,
            Some(map) => match map.get(&id) {
                Some(&r) => r as usize,
                None => return &[],
            },
        };
        match (l.offsets.get(row), l.offsets.get(row + 1)) {
            (Some(&s), Some(&e)) => l.neighbors.get(s as usize..e as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// Bytes held (for the cache weigher).
    pub(crate) fn size_bytes(&self) -> usize {
        self.levels
            .iter()
            .map(|l| {
                (l.offsets.len() + l.neighbors.len()) * 4
                    + l.rows.as_ref().map_or(0, |m| m.len() * 16)
            })
            .sum::<usize>()
            + 64
    }
}

/// Decode one partition's graph rows (`__vector_id`, `__neighbors`, in that order) with
/// its metadata; `storage_rows` is the partition's row count in `auxiliary.idx` (node
/// ids index it).
pub(crate) fn decode_graph(
    batch: &RecordBatch,
    meta: &HnswMeta,
    storage_rows: usize,
) -> Result<HnswGraph> {
    if batch.num_columns() != 2 || batch.num_rows() as u64 != meta.rows() {
        return Err(Error::corrupt(format!(
            "graph batch of {} rows and {} columns, {} rows of 2 expected",
            batch.num_rows(),
            batch.num_columns(),
            meta.rows()
        )));
    }
    let ids = batch
        .column(0)
        .as_primitive_opt::<UInt32Type>()
        .ok_or_else(|| {
            Error::corrupt(format!(
                "{VECTOR_ID_COLUMN:?} is {}, uint32 expected",
                batch.column(0).data_type()
            ))
        })?;
    let lists = batch.column(1).as_list_opt::<i32>().ok_or_else(|| {
        Error::corrupt(format!(
            "{NEIGHBORS_COLUMN:?} is {}, list<uint32> expected",
            batch.column(1).data_type()
        ))
    })?;
    let values = lists
        .values()
        .as_primitive_opt::<UInt32Type>()
        .ok_or_else(|| Error::corrupt(format!("{NEIGHBORS_COLUMN:?} items are not uint32")))?;
    if ids.null_count() > 0 || lists.null_count() > 0 || values.null_count() > 0 {
        return Err(Error::corrupt("graph rows hold nulls"));
    }
    let nodes = (meta.level_offsets.get(1).copied().unwrap_or(0)) as usize;
    if nodes > storage_rows {
        return Err(Error::corrupt(format!(
            "HNSW graph of {nodes} nodes over {storage_rows} stored vectors"
        )));
    }
    if meta.rows() > 0 && meta.entry_point as usize >= nodes {
        return Err(Error::corrupt(format!(
            "HNSW entry point {} out of range ({nodes} nodes)",
            meta.entry_point
        )));
    }
    let mut levels = Vec::with_capacity(meta.level_offsets.len().saturating_sub(1));
    for (l, w) in meta.level_offsets.windows(2).enumerate() {
        let level = decode_level(
            ids,
            lists,
            values.values(),
            w[0] as usize..w[1] as usize,
            l,
            nodes,
        )
        .map_err(|e| e.context(format!("HNSW level {l}")))?;
        levels.push(level);
    }
    Ok(HnswGraph {
        entry_point: meta.entry_point,
        levels,
    })
}

fn decode_level(
    ids: &arrow_array::UInt32Array,
    lists: &arrow_array::ListArray,
    values: &[u32],
    rows: Range<usize>,
    level: usize,
    nodes: usize,
) -> Result<Level> {
    let list_offsets = lists.value_offsets();
    let mut offsets = Vec::with_capacity(rows.len() + 1);
    let mut neighbors = Vec::new();
    offsets.push(0u32);
    let mut map = (level > 0).then(|| HashMap::with_capacity(rows.len()));
    for (r, row) in rows.clone().enumerate() {
        let id = ids.value(row);
        match &mut map {
            None if id as usize != r => {
                return Err(Error::corrupt(format!(
                    "level-0 row {r} holds node {id} (node ids must equal rows)"
                )))
            }
            Some(_) if id as usize >= nodes => {
                return Err(Error::corrupt(format!(
                    "node {id} out of range ({nodes} nodes)"
                )))
            }
            Some(m) => {
                m.insert(id, r as u32);
            }
            None => {}
        }
        let (s, e) = (list_offsets[row], list_offsets[row + 1]);
        let slice = usize::try_from(s)
            .ok()
            .zip(usize::try_from(e).ok())
            .and_then(|(s, e)| values.get(s..e))
            .ok_or_else(|| Error::corrupt(format!("neighbour list of row {r} out of bounds")))?;
        if let Some(&bad) = slice.iter().find(|&&n| n as usize >= nodes) {
            return Err(Error::corrupt(format!(
                "node {id} has neighbour {bad}, out of range ({nodes} nodes)"
            )));
        }
        neighbors.extend_from_slice(slice);
        let end = u32::try_from(neighbors.len())
            .map_err(|_| Error::corrupt("too many neighbours in one level"))?;
        offsets.push(end);
    }
    Ok(Level {
        offsets,
        neighbors,
        rows: map,
    })
}
