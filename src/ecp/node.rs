//! Tree nodes: loading `lvl_{l+1}/node_{id}/{embeddings, node_ids|item_ids}` and widening the
//! embeddings to f32.

use half::f16;
use zarrs::array::data_type::{
    Float16DataType, Float32DataType, Int8DataType, UInt32DataType, UInt8DataType,
};

use super::metric::dot;
use super::zarr_io::{FetchedArray, ZarrStore};
use crate::error::{Error, Result};
use crate::io::cache::DeepSize;

/// A decoded node: `rows × dim` f32 embeddings and one child id per row (node ids on internal
/// levels, item ids on leaves; empty for the root).
#[derive(Debug, Clone)]
pub struct Node {
    dim: usize,
    embeddings: Vec<f32>,
    norms_sq: Vec<f32>,
    children: Vec<u32>,
}

impl Node {
    /// Build a node; `embeddings.len()` must be a multiple of `dim` and, unless `children` is
    /// empty, `children.len()` must equal the row count.
    pub fn new(dim: usize, embeddings: Vec<f32>, children: Vec<u32>) -> Result<Self> {
        if dim == 0 || !embeddings.len().is_multiple_of(dim) {
            return Err(Error::corrupt(format!(
                "{} values do not form rows of dimension {dim}",
                embeddings.len()
            )));
        }
        let rows = embeddings.len() / dim;
        if !children.is_empty() && children.len() != rows {
            return Err(Error::corrupt(format!(
                "{} ids for {rows} embedding rows",
                children.len()
            )));
        }
        let norms_sq = embeddings.chunks_exact(dim).map(|r| dot(r, r)).collect();
        Ok(Self {
            dim,
            embeddings,
            norms_sq,
            children,
        })
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.embeddings.len() / self.dim
    }

    /// Whether the node has no rows.
    pub fn is_empty(&self) -> bool {
        self.embeddings.is_empty()
    }

    /// Vector dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Rows of embeddings.
    pub fn rows(&self) -> std::slice::ChunksExact<'_, f32> {
        self.embeddings.chunks_exact(self.dim)
    }

    /// Rows with their squared norms (precomputed once per node).
    pub fn rows_with_norms(&self) -> impl Iterator<Item = (&[f32], f32)> {
        self.embeddings
            .chunks_exact(self.dim)
            .zip(self.norms_sq.iter().copied())
    }

    /// Child ids (node ids or item ids), one per row.
    pub fn children(&self) -> &[u32] {
        &self.children
    }
}

impl DeepSize for Node {
    fn deep_size(&self) -> usize {
        self.embeddings.len() * 4 + self.norms_sq.len() * 4 + self.children.len() * 4 + 64
    }
}

impl DeepSize for Option<Node> {
    fn deep_size(&self) -> usize {
        self.as_ref().map_or(64, DeepSize::deep_size)
    }
}

/// The stored embedding data type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EmbeddingDtype {
    /// float32
    Float32,
    /// float16, widened to f32
    Float16,
    /// uint8, cast to f32 (no scale)
    Uint8,
    /// int8, cast to f32 (no scale)
    Int8,
}

impl EmbeddingDtype {
    /// The dtype of an embeddings array, or `Corrupt` naming it.
    pub fn of(array: &FetchedArray) -> Result<Self> {
        let dt = array.data_type();
        if dt.is::<Float32DataType>() {
            Ok(Self::Float32)
        } else if dt.is::<Float16DataType>() {
            Ok(Self::Float16)
        } else if dt.is::<UInt8DataType>() {
            Ok(Self::Uint8)
        } else if dt.is::<Int8DataType>() {
            Ok(Self::Int8)
        } else {
            Err(Error::corrupt(format!(
                "embeddings have data type {}, expected float32, float16, uint8 or int8",
                array.data_type_name()
            ))
            .at(&array.label, None))
        }
    }
}

/// Check `array` is 2-d `(n, dim)` and read it widened to f32. Returns `(n, values)`.
/// At most `max_rows` rows are accepted.
pub(crate) async fn read_embeddings(
    array: &FetchedArray,
    dim: Option<usize>,
    max_rows: u64,
) -> Result<(usize, usize, Vec<f32>)> {
    let shape = array.shape();
    let [rows, width] = shape else {
        return Err(
            Error::corrupt(format!("embeddings must be 2-d, shape is {shape:?}"))
                .at(&array.label, None),
        );
    };
    let (rows, width) = (*rows as usize, *width as usize);
    if let Some(dim) = dim {
        if width != dim {
            return Err(Error::corrupt(format!(
                "embeddings have dimension {width}, the index has {dim}"
            ))
            .at(&array.label, None));
        }
    }
    if width == 0 {
        return Err(Error::corrupt("embeddings have dimension 0").at(&array.label, None));
    }
    let values = match EmbeddingDtype::of(array)? {
        EmbeddingDtype::Float32 => array.read_rows::<f32>(max_rows).await?,
        EmbeddingDtype::Float16 => array
            .read_rows::<f16>(max_rows)
            .await?
            .into_iter()
            .map(f16::to_f32)
            .collect(),
        EmbeddingDtype::Uint8 => array
            .read_rows::<u8>(max_rows)
            .await?
            .into_iter()
            .map(f32::from)
            .collect(),
        EmbeddingDtype::Int8 => array
            .read_rows::<i8>(max_rows)
            .await?
            .into_iter()
            .map(f32::from)
            .collect(),
    };
    Ok((rows, width, values))
}

/// Check `array` is a 1-d uint32 array of `expected_len` and read it.
pub(crate) async fn read_u32_ids(array: &FetchedArray, expected_len: usize) -> Result<Vec<u32>> {
    if !array.data_type().is::<UInt32DataType>() {
        return Err(Error::corrupt(format!(
            "ids have data type {}, expected uint32",
            array.data_type_name()
        ))
        .at(&array.label, None));
    }
    match array.shape() {
        [n] if *n as usize == expected_len => {}
        shape => {
            return Err(Error::corrupt(format!(
                "ids have shape {shape:?}, the embeddings have {expected_len} rows"
            ))
            .at(&array.label, None))
        }
    }
    array.read_rows::<u32>(expected_len as u64).await
}

/// Bounds a node's child ids must respect.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NodeLimits {
    /// Vector dimension of the index.
    pub dim: usize,
    /// Levels below the root.
    pub levels: u32,
    /// Internal node ids must be below this (the number of representatives), when known.
    pub max_node_id: Option<u64>,
    /// Leaf item ids must be below this (`info/next_item_id`).
    pub max_item_id: u64,
}

/// Path of a node's group (`lvl_{level+1}/node_{id}`).
pub(crate) fn node_path(level: u32, node_id: u32) -> String {
    format!("lvl_{}/node_{}", level + 1, node_id)
}

/// Load a node: `Ok(None)` when its embeddings array does not exist (a gap).
pub(crate) async fn load_node(
    store: &ZarrStore,
    limits: NodeLimits,
    level: u32,
    node_id: u32,
) -> Result<Option<Node>> {
    let base = node_path(level, node_id);
    let is_leaf = level + 1 == limits.levels;
    let ids_name = if is_leaf { "item_ids" } else { "node_ids" };
    let emb_path = format!("{base}/embeddings");
    let ids_path = format!("{base}/{ids_name}");
    let (emb, ids) = futures::join!(
        store.fetch(&emb_path, Some(2)),
        store.fetch(&ids_path, Some(1))
    );
    let Some(emb) = emb? else { return Ok(None) };
    let Some(ids) = ids? else {
        return Err(Error::corrupt(format!(
            "node has embeddings but no {ids_name} (interrupted write?)"
        ))
        .at(&store.label_of(&ids_path), None));
    };
    // A leaf holds at most every item; an internal node at most every representative.
    let max_rows = if is_leaf {
        limits.max_item_id
    } else {
        limits.max_node_id.unwrap_or(u64::from(u32::MAX))
    };
    let rows = match emb.shape() {
        [rows, _] => *rows as usize,
        shape => {
            return Err(
                Error::corrupt(format!("embeddings must be 2-d, shape is {shape:?}"))
                    .at(&emb.label, None),
            )
        }
    };
    if rows as u64 > max_rows {
        return Err(Error::corrupt(format!(
            "{rows} rows, more than the index allows ({max_rows})"
        ))
        .at(&emb.label, None));
    }
    let (embedded, children) = futures::join!(
        read_embeddings(&emb, Some(limits.dim), max_rows),
        read_u32_ids(&ids, rows)
    );
    let (_, _, values) = embedded?;
    let children = children?;
    let (limit, what) = if is_leaf {
        (Some(limits.max_item_id), "item id")
    } else {
        (limits.max_node_id, "node id")
    };
    if let Some(limit) = limit {
        if let Some(bad) = children.iter().find(|&&c| u64::from(c) >= limit) {
            return Err(Error::corrupt(format!(
                "{what} {bad} is out of range (must be < {limit})"
            ))
            .at(&ids.label, None));
        }
    }
    Node::new(limits.dim, values, children)
        .map(Some)
        .map_err(|e| e.at(&emb.label, None))
}
