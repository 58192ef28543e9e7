//! Reading the parts of a partition a query needs: the invert rows of its tokens and the
//! docs rows of the documents it scores (only those rows; the file readers coalesce them).

use std::collections::HashMap;

use arrow_array::{
    cast::AsArray,
    types::{Float32Type, UInt32Type, UInt64Type},
    Array,
};

use super::files::{bad, Partition, PartitionKind};
use super::positions::{decode_per_doc, decode_stream_block, stream_blocks, PositionCodec};
use super::posting::decode_postings;
use crate::error::{Error, Result};
use crate::io::IoStats;
use crate::lance::data_file::DataFileReader;
use crate::lance::selection::RowSelection;

/// The postings of one token in one partition: document keys (doc ids of the partitioned
/// layout, row ids of the older one), ascending, and frequencies.
#[derive(Debug, Clone, Default)]
pub(crate) struct TermPostings {
    /// Document keys, ascending.
    pub(crate) docs: Vec<u64>,
    /// Frequencies.
    pub(crate) frequencies: Vec<u32>,
    /// Each document's token positions, ascending (when asked for).
    pub(crate) positions: Option<Vec<Vec<u32>>>,
    /// Each posting block's max score as lance stored it (empty when the layout has none).
    pub(crate) block_max: Vec<f32>,
}

test_override! {
    TEST_BLOCK_MAX_SCALE: f32 = 1.0;
    /// What block max scores are multiplied by as read: 1, but inside
    /// [`with_block_max_scale`].
    block_max_scale;
    /// Run `f` reading every block max score times `scale`: tests make an index whose block
    /// max scores are not lance's, which the pruning must notice.
    with_block_max_scale
}

/// Block max scores as read (scaled inside [`with_block_max_scale`]).
fn test_block_max(block_max: Vec<f32>) -> Vec<f32> {
    match block_max_scale() {
        1.0 => block_max,
        scale => block_max.into_iter().map(|m| m * scale).collect(),
    }
}

/// The error pylance gives for a phrase query on an index built without positions.
pub(crate) fn no_positions() -> Error {
    Error::InvalidArgument(
        "position is not found but required for phrase queries, try recreating the index \
         with position"
            .into(),
    )
}

/// How a partition's invert file stores positions.
#[derive(Debug, Clone, Copy)]
enum PositionsLayout {
    /// `_compressed_position` + `_position_block_offset` (format v2, v3).
    Shared(PositionCodec),
    /// `_position`, one list of binaries per posting (format v1).
    PerDoc,
}

fn positions_layout(inv: &DataFileReader) -> Result<Option<PositionsLayout>> {
    if inv
        .field_indices(&["_compressed_position", "_position_block_offset"])
        .is_ok()
    {
        let codec = inv
            .schema()
            .metadata
            .get("positions_codec")
            .map(String::as_str);
        let codec = PositionCodec::parse(codec).map_err(|e| e.at(inv.path().as_ref(), None))?;
        return Ok(Some(PositionsLayout::Shared(codec)));
    }
    if inv.field_indices(&["_position"]).is_ok() {
        return Ok(Some(PositionsLayout::PerDoc));
    }
    Ok(None)
}

/// The postings of `token_ids` (any order, distinct) of `part`, in that order, with
/// their positions when `with_positions` (an error when the index has none).
pub(crate) async fn read_postings(
    part: &Partition,
    token_ids: &[u32],
    with_positions: bool,
    stats: &IoStats,
) -> Result<Vec<TermPostings>> {
    if token_ids.is_empty() {
        return Ok(Vec::new());
    }
    match &part.kind {
        PartitionKind::Blocks(layout) => {
            let inv = &part.invert;
            let positions = match (with_positions, positions_layout(inv)?) {
                (false, _) => None,
                (true, None) => return Err(no_positions()),
                (true, Some(l)) => Some(l),
            };
            let mut names = vec!["_posting", "_length"];
            match positions {
                Some(PositionsLayout::Shared(_)) => {
                    names.extend(["_compressed_position", "_position_block_offset"])
                }
                Some(PositionsLayout::PerDoc) => names.push("_position"),
                None => {}
            }
            let idx = inv.field_indices(&names)?;
            let (selection, order) = RowSelection::sorted_with_order(
                &token_ids.iter().map(|t| u64::from(*t)).collect::<Vec<_>>(),
            );
            let batch = inv.read_rows(&idx, &selection, stats).await?;
            let lists = batch
                .column(0)
                .as_list_opt::<i32>()
                .ok_or_else(|| bad(inv, "_posting is not a List"))?;
            let lengths = batch
                .column(1)
                .as_primitive_opt::<UInt32Type>()
                .ok_or_else(|| bad(inv, "_length is not UInt32"))?;
            let num_docs = u32::try_from(part.num_docs)
                .map_err(|_| bad(&part.docs, "more than 2^32 documents in one partition"))?;
            let mut decoded = Vec::with_capacity(lists.len());
            for row in 0..lists.len() {
                let blocks = lists.value(row);
                let blocks = blocks
                    .as_binary_opt::<i64>()
                    .ok_or_else(|| bad(inv, "_posting blocks are not LargeBinary"))?;
                let slices: Vec<&[u8]> = blocks.iter().map(|b| b.unwrap_or_default()).collect();
                let p = decode_postings(&slices, lengths.value(row), num_docs, *layout)
                    .map_err(|e| e.at(inv.path().as_ref(), None))?;
                let pos = match positions {
                    None => None,
                    Some(l) => Some(
                        row_positions(&batch, row, l, &p.frequencies, layout.block_size)
                            .map_err(|e| e.at(inv.path().as_ref(), None))?,
                    ),
                };
                decoded.push(TermPostings {
                    docs: p.doc_ids.into_iter().map(u64::from).collect(),
                    frequencies: p.frequencies,
                    positions: pos,
                    block_max: test_block_max(p.block_max),
                });
            }
            Ok(order.iter().map(|i| decoded[*i as usize].clone()).collect())
        }
        PartitionKind::Legacy { .. } if with_positions => Err(Error::unsupported(
            "phrase queries on the older single-partition INVERTED layout",
        )),
        PartitionKind::Legacy { offsets, .. } => {
            read_legacy_postings(&part.invert, offsets, token_ids, stats).await
        }
    }
}

/// The positions of every posting of invert row `row` of `batch` (columns 2.. are the
/// position columns of `layout`).
fn row_positions(
    batch: &arrow_array::RecordBatch,
    row: usize,
    layout: PositionsLayout,
    frequencies: &[u32],
    block_size: usize,
) -> Result<Vec<Vec<u32>>> {
    match layout {
        PositionsLayout::Shared(codec) => {
            let bytes = batch
                .column(2)
                .as_binary_opt::<i64>()
                .ok_or_else(|| Error::corrupt("_compressed_position is not LargeBinary"))?;
            let offsets = batch
                .column(3)
                .as_list_opt::<i32>()
                .ok_or_else(|| Error::corrupt("_position_block_offset is not a List"))?;
            let offsets = offsets.value(row);
            let offsets = offsets
                .as_primitive_opt::<UInt32Type>()
                .ok_or_else(|| Error::corrupt("_position_block_offset is not List<UInt32>"))?;
            let blocks = stream_blocks(bytes.value(row), offsets.values())?;
            if blocks.len() != frequencies.len().div_ceil(block_size) {
                return Err(Error::corrupt(format!(
                    "{} position blocks for {} postings",
                    blocks.len(),
                    frequencies.len()
                )));
            }
            let mut out = Vec::with_capacity(frequencies.len());
            for (block, freqs) in blocks.iter().zip(frequencies.chunks(block_size)) {
                out.extend(decode_stream_block(block, freqs, codec)?);
            }
            Ok(out)
        }
        PositionsLayout::PerDoc => {
            let docs = batch
                .column(2)
                .as_list_opt::<i32>()
                .ok_or_else(|| Error::corrupt("_position is not a List"))?;
            let docs = docs.value(row);
            let docs = docs
                .as_list_opt::<i32>()
                .ok_or_else(|| Error::corrupt("_position is not List<List<_>>"))?;
            if docs.len() != frequencies.len() {
                return Err(Error::corrupt(format!(
                    "{} position lists for {} postings",
                    docs.len(),
                    frequencies.len()
                )));
            }
            let mut out = Vec::with_capacity(frequencies.len());
            for (d, f) in frequencies.iter().enumerate() {
                let blobs = docs.value(d);
                let blobs = blobs
                    .as_binary_opt::<i64>()
                    .ok_or_else(|| Error::corrupt("_position blocks are not LargeBinary"))?;
                let slices: Vec<&[u8]> = blobs.iter().map(|b| b.unwrap_or_default()).collect();
                out.push(decode_per_doc(&slices, *f)?);
            }
            Ok(out)
        }
    }
}

/// The older layout's postings: rows `offsets[t]..offsets[t + 1]` of `(_rowid, _frequency)`.
async fn read_legacy_postings(
    inv: &DataFileReader,
    offsets: &[u64],
    token_ids: &[u32],
    stats: &IoStats,
) -> Result<Vec<TermPostings>> {
    let idx = inv.field_indices(&["_rowid", "_frequency"])?;
    let mut out = Vec::with_capacity(token_ids.len());
    for &t in token_ids {
        let t = t as usize;
        let range = offsets[t]..offsets[t + 1];
        let batch = inv
            .read_rows(&idx, &RowSelection::Range(range), stats)
            .await?;
        let rows = batch
            .column(0)
            .as_primitive_opt::<UInt64Type>()
            .ok_or_else(|| bad(inv, "_rowid is not UInt64"))?;
        let freqs = batch
            .column(1)
            .as_primitive_opt::<Float32Type>()
            .ok_or_else(|| bad(inv, "_frequency is not Float32"))?;
        let mut pairs: Vec<(u64, u32)> = rows
            .values()
            .iter()
            .zip(freqs.values().iter())
            .map(|(r, f)| (*r, *f as u32))
            .collect();
        pairs.sort_unstable();
        out.push(TermPostings {
            docs: pairs.iter().map(|p| p.0).collect(),
            frequencies: pairs.iter().map(|p| p.1).collect(),
            positions: None,
            block_max: Vec::new(),
        });
    }
    Ok(out)
}

/// Row ids and lengths of `docs` (document keys, ascending, distinct) of `part`.
pub(crate) async fn read_docs(
    part: &Partition,
    docs: &[u64],
    stats: &IoStats,
) -> Result<(Vec<u64>, Vec<u32>)> {
    match &part.kind {
        PartitionKind::Blocks(_) => {
            let read = read_doc_columns(part, docs, true, true, stats).await?;
            Ok((
                read.rows.unwrap_or_default(),
                read.lengths.unwrap_or_default(),
            ))
        }
        PartitionKind::Legacy { lengths, .. } => {
            let mut out = Vec::with_capacity(docs.len());
            for d in docs {
                let n = lengths.get(d).ok_or_else(|| {
                    bad(
                        &part.docs,
                        format!("posting row id {d} is not in the docs file"),
                    )
                })?;
                out.push(*n);
            }
            Ok((docs.to_vec(), out))
        }
    }
}

/// Some columns of the docs rows of a partitioned-layout partition.
#[derive(Debug, Default)]
pub(crate) struct DocColumns {
    /// Row ids (when asked for).
    pub(crate) rows: Option<Vec<u64>>,
    /// Lengths in tokens (when asked for).
    pub(crate) lengths: Option<Vec<u32>>,
}

/// The row ids and / or lengths of `docs` (docs-file rows, ascending, distinct) of a
/// partitioned-layout `part`: only those columns' pages (chunks) covering those rows.
pub(crate) async fn read_doc_columns(
    part: &Partition,
    docs: &[u64],
    rows: bool,
    lengths: bool,
    stats: &IoStats,
) -> Result<DocColumns> {
    let file = &part.docs;
    let mut names = Vec::new();
    if rows {
        names.push("_rowid");
    }
    if lengths {
        names.push("_num_tokens");
    }
    if names.is_empty() || docs.is_empty() {
        return Ok(DocColumns {
            rows: rows.then(Vec::new),
            lengths: lengths.then(Vec::new),
        });
    }
    let idx = file.field_indices(&names)?;
    let batch = file
        .read_rows(&idx, &RowSelection::Rows(docs.to_vec()), stats)
        .await?;
    let mut out = DocColumns::default();
    for (i, name) in names.iter().enumerate() {
        let column = batch.column(i);
        if column.len() != docs.len() || column.null_count() > 0 {
            return Err(bad(file, "docs rows are missing or null"));
        }
        if *name == "_rowid" {
            let r = column
                .as_primitive_opt::<UInt64Type>()
                .ok_or_else(|| bad(file, "_rowid is not UInt64"))?;
            out.rows = Some(r.values().to_vec());
        } else {
            let l = column
                .as_primitive_opt::<UInt32Type>()
                .ok_or_else(|| bad(file, "_num_tokens is not UInt32"))?;
            out.lengths = Some(l.values().to_vec());
        }
    }
    Ok(out)
}

/// The older layout's whole docs file: row id → length.
pub(crate) async fn legacy_doc_lengths(
    docs: &DataFileReader,
    stats: &IoStats,
) -> Result<HashMap<u64, u32>> {
    let idx = docs.field_indices(&["_rowid", "_num_tokens"])?;
    let batch = docs
        .read_rows(&idx, &RowSelection::Range(0..docs.num_rows()), stats)
        .await?;
    let rows = batch
        .column(0)
        .as_primitive_opt::<UInt64Type>()
        .ok_or_else(|| bad(docs, "_rowid is not UInt64"))?;
    let lens = batch
        .column(1)
        .as_primitive_opt::<UInt32Type>()
        .ok_or_else(|| bad(docs, "_num_tokens is not UInt32"))?;
    Ok(rows
        .values()
        .iter()
        .copied()
        .zip(lens.values().iter().copied())
        .collect())
}
