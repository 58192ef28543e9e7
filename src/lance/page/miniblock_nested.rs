//! Mini-block pages of nested leaves (lists and/or structs above the leaf).
//!
//! Rows are located with the repetition index (buffer `last`): per chunk `depth + 1` u64
//! values whose first two are `ends` (rows that finish in the chunk) and `partial` (items
//! after the last row start that continue into the next chunk). A chunk has a trailer when
//! `partial > 0`, a preamble when the previous chunk has a trailer; rows starting in it =
//! `ends + trailer - preamble`. A read fetches every chunk that holds levels of a wanted
//! row, decodes their rep/def levels and values, keeps the levels of the wanted rows and
//! the values of their visible levels, then unravels the levels into list offsets and
//! validity ([`super::structure`]).

use std::ops::Range;

use arrow_schema::DataType;
use bytes::Bytes;

use super::level_runs::LevelRuns;
use super::miniblock::{ChunkFrame, MiniBlockInit, MiniBlockPage};
use super::structure::{DenseStructure, LeafData};
use super::values::{decoded_len, LeafBuilder};
use super::{PageReadPlan, PlanDetail, RowRanges};
use crate::error::{Error, Result};
use crate::lance::compression::{self, DecodedValues};

/// Rows of one chunk of a page with repetition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkRows {
    /// Page-local index of the first row that starts in the chunk.
    pub first_row: u64,
    /// Rows that start in the chunk.
    pub starts: u64,
    /// The chunk begins with the tail of a row started earlier.
    pub has_preamble: bool,
    /// The chunk's last row continues into the next chunk.
    pub has_trailer: bool,
}

impl ChunkRows {
    /// Page-local rows that have levels in this chunk.
    pub fn touching(&self) -> Range<u64> {
        self.first_row - u64::from(self.has_preamble)..self.first_row + self.starts
    }
}

/// Parse a repetition index of `num_chunks × (depth + 1)` u64 values.
pub(crate) fn parse_repetition_index(
    bytes: &[u8],
    num_chunks: usize,
    depth: u32,
    page_rows: u64,
) -> Result<Vec<ChunkRows>> {
    let stride = depth as usize + 1;
    crate::ensure_corrupt!(depth >= 1, "repetition index depth {depth}");
    crate::ensure_corrupt!(
        (bytes.len() as u128) == (num_chunks as u128) * (stride as u128) * 8,
        "repetition index of {} bytes for {num_chunks} chunks of {stride} words",
        bytes.len()
    );
    let word = |i: usize| u64::from_le_bytes(bytes[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
    let mut out = Vec::with_capacity(num_chunks);
    let mut first_row = 0u64;
    let mut has_preamble = false;
    for c in 0..num_chunks {
        let ends = word(c * stride);
        let partial = word(c * stride + 1);
        let has_trailer = partial > 0;
        let starts = (ends + u64::from(has_trailer))
            .checked_sub(u64::from(has_preamble))
            .ok_or_else(|| {
                Error::corrupt(format!(
                    "chunk {c}: no row ends in it, yet it neither continues nor starts one"
                ))
            })?;
        crate::ensure_corrupt!(
            starts <= page_rows,
            "chunk {c}: {starts} rows start in it, the page has {page_rows}"
        );
        out.push(ChunkRows {
            first_row,
            starts,
            has_preamble,
            has_trailer,
        });
        first_row += starts;
        has_preamble = has_trailer;
    }
    crate::ensure_corrupt!(
        first_row == page_rows && !has_preamble,
        "repetition index holds {first_row} rows{}, the page has {page_rows}",
        if has_preamble {
            " and ends inside a row"
        } else {
            ""
        }
    );
    Ok(out)
}

/// A decoded chunk of a nested page.
struct NestedChunk {
    /// Repetition levels; marked: levels where a row starts (`max_rep`).
    rep: Option<LevelRuns>,
    /// Definition levels; marked: visible levels (those holding a value).
    def: Option<LevelRuns>,
    values: DecodedValues,
    num_levels: usize,
}

impl NestedChunk {
    /// Values before level `upto`.
    fn visible_before(&self, upto: usize) -> usize {
        match &self.def {
            Some(def) => def.marked_before(upto),
            None => upto,
        }
    }

    /// Rows that start in the chunk.
    fn row_starts(&self) -> usize {
        self.rep.as_ref().map_or(0, LevelRuns::marked)
    }
}

impl MiniBlockPage {
    /// The page's structure (outer → inner layers).
    pub fn structure(&self) -> Result<DenseStructure> {
        DenseStructure::new(&self.layers)
    }

    /// Runs of chunks holding levels of page-local `rows`.
    pub fn plan_nested(&self, init: &MiniBlockInit, rows: &RowRanges) -> Result<PageReadPlan> {
        let structure = self.structure()?;
        let runs = if structure.max_rep == 0 {
            crate::ensure_corrupt!(
                self.num_items == self.page_rows,
                "mini-block page without lists has {} items but {} rows",
                self.num_items,
                self.page_rows
            );
            init.chunks.chunk_runs(rows)?
        } else {
            let chunk_rows = init
                .rows
                .as_ref()
                .ok_or_else(|| Error::unsupported("list page without a repetition index"))?;
            touching_runs(chunk_rows, rows)?
        };
        let ranges = runs
            .iter()
            .map(|run| {
                let start = init.chunks.chunks[run.start].byte_start;
                let last = &init.chunks.chunks[run.end - 1];
                self.chunk_data.start + start..self.chunk_data.start + last.byte_start + last.bytes
            })
            .collect();
        Ok(PageReadPlan {
            ranges,
            detail: PlanDetail::MiniBlockChunks(runs),
            projection: None,
        })
    }

    fn decode_nested_chunk(
        &self,
        chunk: &Bytes,
        items: usize,
        structure: &DenseStructure,
    ) -> Result<NestedChunk> {
        let frame = ChunkFrame::parse(
            chunk,
            self.rep_compression.is_some(),
            self.def_compression.is_some(),
            self.num_buffers,
            self.has_large_chunk,
        )?;
        let values = compression::decode_miniblock(&self.value_compression, &frame.buffers, items)?;
        crate::ensure_corrupt!(
            decoded_len(&values) == items,
            "decoded {} values, chunk holds {items}",
            decoded_len(&values)
        );
        let levels = |encoding: &Option<_>,
                      payload: Option<Bytes>,
                      is_marked: &dyn Fn(u16) -> bool|
         -> Result<Option<LevelRuns>> {
            match (encoding, payload) {
                (Some(e), Some(p)) => {
                    let runs = compression::decode_level_runs(e, Some(p), frame.num_levels)?;
                    let runs = LevelRuns::new(&runs, is_marked);
                    crate::ensure_corrupt!(
                        runs.len() == frame.num_levels,
                        "decoded {} of {} levels",
                        runs.len(),
                        frame.num_levels
                    );
                    Ok(Some(runs))
                }
                _ => Ok(None),
            }
        };
        let max_rep = structure.max_rep;
        let rep = levels(&self.rep_compression, frame.rep.clone(), &|l| l == max_rep)?;
        let def = levels(&self.def_compression, frame.def.clone(), &|l| {
            structure.is_visible(l)
        })?;
        let num_levels = if rep.is_none() && def.is_none() {
            items
        } else {
            frame.num_levels
        };
        let visible = def.as_ref().map_or(num_levels, LevelRuns::marked);
        crate::ensure_corrupt!(
            visible == items,
            "chunk has {visible} visible levels for {items} values"
        );
        Ok(NestedChunk {
            rep,
            def,
            values,
            num_levels,
        })
    }

    /// Decode page-local `rows` of a nested page into the leaf's slots and values.
    pub fn decode_nested(
        &self,
        init: &MiniBlockInit,
        rows: &RowRanges,
        plan: &PageReadPlan,
        bytes: &[Bytes],
        leaf_type: &DataType,
    ) -> Result<LeafData> {
        let structure = self.structure()?;
        let PlanDetail::MiniBlockChunks(runs) = &plan.detail else {
            return Err(Error::corrupt(
                "mini-block page got a plan of another layout",
            ));
        };
        let mut out = NestedOutput {
            rep: Vec::new(),
            def: Vec::new(),
            values: LeafBuilder::new(leaf_type)?,
        };
        let mut wanted = rows.iter().filter(|r| r.start < r.end).peekable();
        for (run, run_bytes) in runs.iter().zip(bytes) {
            let chunks = self.decode_run(init, run, run_bytes, &structure)?;
            let levels = RunLevels::new(&chunks);
            let run_rows = RunRows::of(init, run, &levels, &structure)?;
            while let Some(r) = wanted.peek() {
                if r.start >= run_rows.end {
                    break;
                }
                run_rows.emit(r, &levels, &chunks, init.dictionary.as_ref(), &mut out)?;
                wanted.next();
            }
        }
        crate::ensure_corrupt!(wanted.next().is_none(), "rows outside the planned chunks");
        self.finish_nested(out, &structure)
    }

    /// Decode the chunks of one run of consecutive chunks from its fetched bytes.
    fn decode_run(
        &self,
        init: &MiniBlockInit,
        run: &Range<usize>,
        run_bytes: &Bytes,
        structure: &DenseStructure,
    ) -> Result<Vec<NestedChunk>> {
        let run_start = init
            .chunks
            .chunks
            .get(run.start)
            .map_or(0, |c| c.byte_start);
        let mut chunks = Vec::with_capacity(run.len());
        for index in run.clone() {
            let info = init
                .chunks
                .chunks
                .get(index)
                .ok_or_else(|| Error::corrupt("chunk index out of range"))?;
            let lo = (info.byte_start - run_start) as usize;
            let hi = lo + info.bytes as usize;
            crate::ensure_corrupt!(
                hi <= run_bytes.len(),
                "chunk {index} extends past the fetched bytes"
            );
            let chunk = self
                .decode_nested_chunk(&run_bytes.slice(lo..hi), info.items as usize, structure)
                .map_err(|e| e.context(format!("chunk {index}")))?;
            chunks.push(chunk);
        }
        Ok(chunks)
    }

    /// Unravel the emitted levels into layers over the emitted values.
    fn finish_nested(&self, out: NestedOutput, structure: &DenseStructure) -> Result<LeafData> {
        let values = out.values.finish()?;
        let rep = self.rep_compression.is_some().then_some(out.rep.as_slice());
        let def = self.def_compression.is_some().then_some(out.def.as_slice());
        let num_levels = if rep.is_none() && def.is_none() {
            values.len()
        } else {
            out.rep.len().max(out.def.len())
        };
        let unraveled = structure.unravel(rep, def, num_levels)?;
        crate::ensure_corrupt!(
            unraveled.leaf_slots == values.len(),
            "{} leaf slots for {} values",
            unraveled.leaf_slots,
            values.len()
        );
        Ok(LeafData {
            layers: unraveled.layers,
            values,
        })
    }
}

/// The levels and values a nested decode emits.
struct NestedOutput {
    rep: Vec<u16>,
    def: Vec<u16>,
    values: LeafBuilder,
}

/// Where a run's rows start: the rows that start in its chunks (with lists), or one row
/// per level (without).
struct RunRows {
    /// First row starting in the run.
    first: u64,
    /// One past the last row starting in the run.
    end: u64,
    /// Rows start at repetition marks (else: one row per level).
    with_lists: bool,
}

impl RunRows {
    fn of(
        init: &MiniBlockInit,
        run: &Range<usize>,
        levels: &RunLevels,
        structure: &DenseStructure,
    ) -> Result<Self> {
        Ok(match &init.rows {
            Some(chunk_rows) if structure.max_rep > 0 => {
                let first = chunk_rows
                    .get(run.start)
                    .ok_or_else(|| Error::corrupt("chunk rows out of range"))?;
                let last = chunk_rows
                    .get(run.end - 1)
                    .ok_or_else(|| Error::corrupt("chunk rows out of range"))?;
                RunRows {
                    first: first.first_row,
                    end: last.first_row + last.starts,
                    with_lists: true,
                }
            }
            _ => {
                let first = init.chunks.chunks[run.start].item_start;
                RunRows {
                    first,
                    end: first + levels.len as u64,
                    with_lists: false,
                }
            }
        })
    }

    /// Run-relative level where `row` starts.
    fn level_of(&self, row: u64, levels: &RunLevels, chunks: &[NestedChunk]) -> Result<usize> {
        let k = (row - self.first) as usize;
        let level = if self.with_lists {
            levels.row_start(chunks, k)
        } else {
            (k <= levels.len).then_some(k)
        };
        level.ok_or_else(|| {
            Error::corrupt(format!("row {row} does not start in the fetched chunks"))
        })
    }

    /// Emit the levels and values of rows `r` (which start in this run).
    fn emit(
        &self,
        r: &Range<u64>,
        levels: &RunLevels,
        chunks: &[NestedChunk],
        dictionary: Option<&DecodedValues>,
        out: &mut NestedOutput,
    ) -> Result<()> {
        crate::ensure_corrupt!(
            r.start >= self.first,
            "rows {r:?} start before the fetched chunks"
        );
        let l0 = self.level_of(r.start, levels, chunks)?;
        let l1 = self.level_of(r.end.min(self.end), levels, chunks)?;
        crate::ensure_corrupt!(r.end <= self.end, "rows {r:?} end past the fetched chunks");
        levels.emit(
            chunks,
            l0..l1,
            dictionary,
            &mut out.rep,
            &mut out.def,
            &mut out.values,
        )
    }
}

/// The concatenated levels of a run of chunks.
struct RunLevels {
    /// First level of each chunk, plus the total.
    starts: Vec<usize>,
    len: usize,
}

impl RunLevels {
    fn new(chunks: &[NestedChunk]) -> Self {
        let mut starts = Vec::with_capacity(chunks.len() + 1);
        let mut len = 0;
        for c in chunks {
            starts.push(len);
            len += c.num_levels;
        }
        starts.push(len);
        Self { starts, len }
    }

    /// Level (run-relative) where the `k`-th row starting in the run starts; the run's level
    /// count for `k` = the number of rows starting in it; `None` past that.
    fn row_start(&self, chunks: &[NestedChunk], mut k: usize) -> Option<usize> {
        for (chunk, &base) in chunks.iter().zip(&self.starts) {
            let rows = chunk.row_starts();
            if k < rows {
                return chunk.rep.as_ref()?.nth_marked(k).map(|l| base + l);
            }
            k -= rows;
        }
        (k == 0).then_some(self.len)
    }

    /// Append levels `range` and the values of their visible levels.
    #[allow(clippy::too_many_arguments)]
    fn emit(
        &self,
        chunks: &[NestedChunk],
        range: Range<usize>,
        dictionary: Option<&DecodedValues>,
        rep_out: &mut Vec<u16>,
        def_out: &mut Vec<u16>,
        values: &mut LeafBuilder,
    ) -> Result<()> {
        for (c, chunk) in chunks.iter().enumerate() {
            let (cs, ce) = (self.starts[c], self.starts[c + 1]);
            let lo = range.start.max(cs);
            let hi = range.end.min(ce);
            if lo >= hi {
                continue;
            }
            let (lo, hi) = (lo - cs, hi - cs);
            if let Some(rep) = &chunk.rep {
                rep.extend_into(lo..hi, rep_out);
            }
            if let Some(def) = &chunk.def {
                def.extend_into(lo..hi, def_out);
            }
            let items = chunk.visible_before(lo)..chunk.visible_before(hi);
            match dictionary {
                Some(d) => values.push_dictionary(d, &chunk.values, items, None)?,
                None => values.push_values(&chunk.values, items, None)?,
            }
        }
        Ok(())
    }
}

/// Runs of consecutive chunks that hold levels of any of `rows`.
fn touching_runs(chunk_rows: &[ChunkRows], rows: &RowRanges) -> Result<Vec<Range<usize>>> {
    let mut runs: Vec<Range<usize>> = Vec::new();
    for r in rows.iter().filter(|r| r.start < r.end) {
        let first = chunk_rows.partition_point(|c| c.touching().end <= r.start);
        let end = chunk_rows.partition_point(|c| c.touching().start < r.end);
        crate::ensure_corrupt!(first < end, "rows {r:?} are in no chunk");
        match runs.last_mut() {
            Some(run) if first <= run.end => run.end = run.end.max(end),
            _ => runs.push(first..end),
        }
    }
    Ok(runs)
}

#[cfg(test)]
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;

    fn index(entries: &[(u64, u64)]) -> Vec<u8> {
        entries
            .iter()
            .flat_map(|(a, b)| a.to_le_bytes().into_iter().chain(b.to_le_bytes()))
            .collect()
    }

    #[test]
    fn repetition_index_rows_and_touching_runs() {
        // The format notes' 5000-item row: [1,1021],[0,1024]x3,[4,0]. Row 0 ends in chunk 0,
        // row 1 starts there and runs through chunk 4, where rows 2..5 follow.
        let rows = parse_repetition_index(
            &index(&[(1, 1021), (0, 1024), (0, 1024), (0, 1024), (4, 0)]),
            5,
            1,
            5,
        )
        .unwrap();
        assert_eq!(
            rows[0],
            ChunkRows {
                first_row: 0,
                starts: 2,
                has_preamble: false,
                has_trailer: true
            }
        );
        assert_eq!(
            rows[1],
            ChunkRows {
                first_row: 2,
                starts: 0,
                has_preamble: true,
                has_trailer: true
            }
        );
        assert_eq!(
            rows[4],
            ChunkRows {
                first_row: 2,
                starts: 3,
                has_preamble: true,
                has_trailer: false
            }
        );
        assert_eq!(rows[2].touching(), 1..2);
        assert_eq!(touching_runs(&rows, &[0..1]).unwrap(), vec![0..1]);
        assert_eq!(touching_runs(&rows, &[1..2]).unwrap(), vec![0..5]);
        assert_eq!(touching_runs(&rows, &[2..3, 4..5]).unwrap(), vec![4..5]);
        assert!(
            parse_repetition_index(&index(&[(1, 0)]), 1, 1, 2).is_err(),
            "row count mismatch"
        );
        assert!(
            parse_repetition_index(&index(&[(1, 3)]), 1, 1, 1).is_err(),
            "ends inside a row"
        );
        assert!(
            parse_repetition_index(&index(&[(0, 3), (0, 0)]), 2, 1, 1).is_err(),
            "underflow"
        );
        assert!(
            parse_repetition_index(&[0; 8], 1, 1, 0).is_err(),
            "short index"
        );
    }
}
