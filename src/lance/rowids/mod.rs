//! Stable row ids: a fragment's `RowIdSequence` (lance-table 14.0.2 `rowids/`), decoded and
//! validated once, kept in its compact encoded form.
//!
//! On a dataset with stable row ids (reader flag 2) every fragment carries, inline in the
//! manifest, the row id of each of its physical rows, in order: value `i` of the sequence
//! is the id of the row at address `fragment << 32 | i`, so its length is the fragment's
//! `physical_rows`. Deletions do not edit the sequence (the deletion vector says which
//! rows are gone): after an update or a compaction the same id can sit in two fragments,
//! one copy deleted.
//!
//! Segments (every encoding lance writes): a range `start..end`; a range with holes
//! (absolute, sorted values left out); a range with a bitmap (one bit per value of the
//! range, **least significant bit first**, whatever the proto comment says — lance's
//! `Bitmap::get` reads `byte[i / 8] & (1 << (i % 8))`); a sorted array and an unsorted
//! array, each `base` + u16 / u32 little-endian offsets or plain u64 values.

pub(crate) mod proto;
mod segment;

#[cfg(test)]
mod tests;

use prost::Message;

use crate::error::{Error, Result};
pub(crate) use segment::IdSegment;

/// A decoded, validated row id sequence.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RowIdSequence {
    segments: Vec<IdSegment>,
    /// Position (row offset) of the first value of each segment.
    starts: Vec<u64>,
    /// Smallest and largest value of each segment (`None` for an empty one).
    bounds: Vec<Option<(u64, u64)>>,
    len: u64,
}

impl RowIdSequence {
    /// Decode and validate a serialized `RowIdSequence` (errors are `Corrupt`, naming
    /// neither object nor fragment: the caller adds them).
    pub(crate) fn decode(bytes: &[u8]) -> Result<Self> {
        let message = proto::RowIdSequence::decode(bytes)
            .map_err(|e| Error::corrupt(format!("row id sequence protobuf: {e}")).with_source(e))?;
        let segments = message
            .segments
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                IdSegment::from_proto(s).map_err(|e| match e {
                    Error::Corrupt { what, .. } => {
                        Error::corrupt(format!("row id segment {i}: {what}"))
                    }
                    other => other,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Self::from_segments(segments)
    }

    /// A sequence of validated segments.
    pub(crate) fn from_segments(segments: Vec<IdSegment>) -> Result<Self> {
        let mut starts = Vec::with_capacity(segments.len());
        let mut len = 0u64;
        for s in &segments {
            starts.push(len);
            len = len
                .checked_add(s.len())
                .ok_or_else(|| Error::corrupt("row id sequence length overflows u64"))?;
        }
        let bounds = segments.iter().map(IdSegment::bounds).collect();
        Ok(Self {
            segments,
            starts,
            bounds,
            len,
        })
    }

    /// Number of row ids (= the fragment's physical rows).
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// Whether the sequence holds no id.
    #[allow(dead_code)] // clippy's len-without-is-empty
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The segments.
    #[cfg_attr(not(test), allow(dead_code))] // tests
    pub(crate) fn segments(&self) -> &[IdSegment] {
        &self.segments
    }

    /// The row id of the row at `position`, if the sequence is that long.
    pub(crate) fn get(&self, position: u64) -> Option<u64> {
        if position >= self.len {
            return None;
        }
        let k = self.starts.partition_point(|s| *s <= position) - 1;
        self.segments[k].get(position - self.starts[k])
    }

    /// Every row id, in row order.
    #[cfg_attr(not(test), allow(dead_code))] // tests
    pub(crate) fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.segments.iter().flat_map(IdSegment::iter)
    }

    /// Calls `found(id, position)` for every row whose id is in `ids` (sorted ascending,
    /// no repeats). An id the sequence holds twice (only possible in an unsorted array)
    /// is reported at each position.
    pub(crate) fn positions_of(&self, ids: &[u64], found: &mut dyn FnMut(u64, u64)) {
        for (k, segment) in self.segments.iter().enumerate() {
            let Some((lo, hi)) = self.bounds[k] else {
                continue;
            };
            let first = ids.partition_point(|id| *id < lo);
            let last = ids.partition_point(|id| *id <= hi);
            if first < last {
                let base = self.starts[k];
                segment.positions_of(&ids[first..last], &mut |id, p| found(id, base + p));
            }
        }
    }

    /// Approximate bytes held (cache weighing).
    pub(crate) fn approx_bytes(&self) -> usize {
        64 + self
            .segments
            .iter()
            .map(|s| 48 + s.encoded_bytes())
            .sum::<usize>()
    }
}

/// The row ids of a manifest fragment: its inline sequence, validated against its
/// `physical_rows`; `None` when it has none. Row ids in a data-file column (spilled row
/// lineage) or an external file are refused.
pub(crate) fn fragment_row_ids(
    fragment: &crate::lance::proto::table::DataFragment,
) -> Result<Option<std::sync::Arc<RowIdSequence>>> {
    let id = fragment.id;
    if fragment.column_row_ids.is_some() {
        return Err(Error::unsupported(format!(
            "fragment {id} keeps its row ids in a data-file column (spilled row lineage, \
             reader flag 2048), which lakeseek does not read"
        )));
    }
    if fragment.external_row_ids.is_some() {
        return Err(Error::unsupported(format!(
            "fragment {id} keeps its row ids in an external file"
        )));
    }
    let Some(bytes) = &fragment.inline_row_ids else {
        return Ok(None);
    };
    let sequence = RowIdSequence::decode(bytes).map_err(|e| match e {
        Error::Corrupt { what, source, .. } => Error::Corrupt {
            path: String::new(),
            range: None,
            what: format!("fragment {id}: {what}"),
            source,
        },
        other => other,
    })?;
    if sequence.len() != fragment.physical_rows {
        return Err(Error::corrupt(format!(
            "fragment {id}: row id sequence of {} ids for {} physical rows",
            sequence.len(),
            fragment.physical_rows
        )));
    }
    Ok(Some(std::sync::Arc::new(sequence)))
}

/// On a dataset with stable row ids (`stable`), every fragment (`(id, has row ids)`) must
/// carry its row ids.
pub(crate) fn check_every_fragment_has_row_ids(
    stable: bool,
    mut fragments: impl Iterator<Item = (u64, bool)>,
) -> Result<()> {
    match fragments.find(|(_, has)| stable && !has) {
        Some((id, _)) => Err(Error::corrupt(format!(
            "fragment {id} of a dataset with stable row ids has no row id sequence"
        ))),
        None => Ok(()),
    }
}

/// Reader flag 512 (lance `FLAG_FRAG_REUSE_WITH_STABLE_ROW_IDS`): stable row ids and a
/// fragment reuse index.
const FRAG_REUSE_WITH_STABLE_ROW_IDS: u64 = 1 << 9;
/// Reader flag 2048 (lance `FLAG_SPILLED_ROW_LINEAGE`): row ids in a data-file column.
const SPILLED_ROW_LINEAGE: u64 = 1 << 11;

/// The specific refusal of the row-id reader flags lakeseek does not implement (checked
/// before the generic unknown-flag refusal, so the message says what the dataset does and
/// how to get a readable one).
pub(crate) fn refuse_unsupported_row_id_flags(reader_flags: u64) -> Result<()> {
    if reader_flags & SPILLED_ROW_LINEAGE != 0 {
        return Err(Error::unsupported(
            "dataset keeps some fragments' stable row ids in a hidden data-file column \
             (spilled row lineage, reader flag 2048, written when lance table config \
             `lance.row_lineage.spill` is on and a sequence outgrows \
             `lance.row_lineage.inline_max_bytes`); lakeseek reads only row ids inline in \
             the manifest: turn the spill off and rewrite the dataset to read it here",
        ));
    }
    if reader_flags & FRAG_REUSE_WITH_STABLE_ROW_IDS != 0 {
        return Err(Error::unsupported(
            "dataset has stable row ids and a fragment reuse index (reader flag 512: a \
             compaction deferred remapping its row-address indices, which readers must \
             translate through the fragment reuse index); lakeseek does not apply fragment \
             reuse indices: remap the indices (lance `optimize_indices`) and drop the \
             fragment reuse index, or compact without `defer_index_remap`",
        ));
    }
    Ok(())
}
