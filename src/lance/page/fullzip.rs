//! Full-zip pages (large values, vectors): per value `[control word][value]`, no chunks.
//!
//! Buffers: 0 = zipped data; 1 = repetition index (present when the page has repetition
//! or variable-width values): `rows + 1` byte-packed offsets of row starts in buffer 0,
//! width = `size / (rows + 1)` ∈ {1, 2, 4, 8}.
//! Control word (only if `bits_rep + bits_def > 0`): `(rep << bits_def) | def` in 1, 2 or
//! 4 bytes. Fixed width: every visible item carries its value bytes (nulls too). Variable
//! width: valid items carry `[len][bytes]`, null ones only the control word.

use std::ops::Range;

use arrow_schema::DataType;
use bytes::Bytes;

use super::structure::{DenseStructure, LeafData};
use super::values::LeafBuilder;
use super::{
    buffer, decode_layers, flat_nullability, FlatNullability, PageInit, PageReadPlan, PlanDetail,
    RowRanges,
};
use crate::error::{Error, Result};
use crate::lance::compression;
use crate::lance::proto::encodings::{self as pb, CompressiveEncoding, RepDefLayer};

/// Addressing of a full-zip page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZipAddressing {
    /// Every value has this many bits (a multiple of 8).
    Fixed {
        /// Bits per value.
        bits_per_value: u32,
    },
    /// Valid values carry an inline length of this many bits.
    Variable {
        /// Bits of each inline length.
        bits_per_offset: u32,
    },
}

/// A full-zip page.
#[derive(Debug, Clone, PartialEq)]
pub struct FullZipPage {
    /// Repetition bits in each control word.
    pub bits_rep: u32,
    /// Definition bits in each control word.
    pub bits_def: u32,
    /// Fixed or variable width.
    pub addressing: ZipAddressing,
    /// Items (levels) in the page.
    pub num_items: u64,
    /// Visible items.
    pub num_visible_items: u64,
    /// Per-value encoding.
    pub value_compression: CompressiveEncoding,
    /// Structural layers, inner-most first.
    pub layers: Vec<RepDefLayer>,
    /// Absolute range of the zipped data.
    pub data: Range<u64>,
    /// Absolute range of the repetition index / row offsets.
    pub repetition_index: Option<Range<u64>>,
    /// Rows addressed by the repetition index (page rows; materialized values in a sparse
    /// page).
    pub num_rows: u64,
}

impl FullZipPage {
    /// From a 2.1/2.2 `FullZipLayout`.
    pub fn from_layout(
        layout: pb::FullZipLayout,
        buffers: &[Range<u64>],
        num_rows: u64,
    ) -> Result<Self> {
        let addressing = match layout.details {
            Some(pb::full_zip_layout::Details::BitsPerValue(b)) => {
                ZipAddressing::Fixed { bits_per_value: b }
            }
            Some(pb::full_zip_layout::Details::BitsPerOffset(b)) => {
                ZipAddressing::Variable { bits_per_offset: b }
            }
            None => return Err(Error::corrupt("full-zip page has no addressing")),
        };
        Self::build(
            layout.bits_rep,
            layout.bits_def,
            addressing,
            u64::from(layout.num_items),
            u64::from(layout.num_visible_items),
            layout.value_compression,
            decode_layers(&layout.layers)?,
            buffers,
            num_rows,
        )
    }

    /// From a 2.3 dense `ZippedValues`.
    pub fn from_zipped(
        zipped: pb::ZippedValues,
        levels: Option<pb::DenseZipLevels>,
        layers: Vec<RepDefLayer>,
        buffers: &[Range<u64>],
        num_rows: u64,
    ) -> Result<Self> {
        let addressing = match zipped.addressing {
            Some(pb::zipped_values::Addressing::BitsPerValue(b)) => {
                ZipAddressing::Fixed { bits_per_value: b }
            }
            Some(pb::zipped_values::Addressing::BitsPerOffset(b)) => {
                ZipAddressing::Variable { bits_per_offset: b }
            }
            None => return Err(Error::corrupt("zipped values have no addressing")),
        };
        let (bits_rep, bits_def) =
            levels.map_or((0, 0), |l| (l.bits_repetition, l.bits_definition));
        Self::build(
            bits_rep,
            bits_def,
            addressing,
            zipped.num_items,
            zipped.num_visible_items,
            zipped.compression,
            layers,
            buffers,
            num_rows,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn build(
        bits_rep: u32,
        bits_def: u32,
        addressing: ZipAddressing,
        num_items: u64,
        num_visible_items: u64,
        value_compression: Option<CompressiveEncoding>,
        layers: Vec<RepDefLayer>,
        buffers: &[Range<u64>],
        num_rows: u64,
    ) -> Result<Self> {
        crate::ensure_corrupt!(
            bits_rep + bits_def <= 32,
            "control word of {} bits",
            bits_rep + bits_def
        );
        match addressing {
            ZipAddressing::Fixed { bits_per_value } => {
                crate::ensure_corrupt!(
                    bits_per_value > 0 && bits_per_value % 8 == 0,
                    "full-zip values of {bits_per_value} bits (not whole bytes)"
                );
            }
            ZipAddressing::Variable { bits_per_offset } => {
                crate::ensure_corrupt!(
                    matches!(bits_per_offset, 8 | 16 | 32 | 64),
                    "full-zip lengths of {bits_per_offset} bits"
                );
            }
        }
        let value_compression = value_compression
            .ok_or_else(|| Error::corrupt("full-zip page has no value compression"))?;
        let data = buffer(buffers, 0, "zipped data")?;
        let repetition_index = match buffers.len() {
            1 => None,
            2 => Some(buffer(buffers, 1, "repetition index")?),
            n => {
                return Err(Error::corrupt(format!(
                    "full-zip page has {n} buffers (expected 1 or 2)"
                )))
            }
        };
        let needs_index = matches!(addressing, ZipAddressing::Variable { .. }) || bits_rep > 0;
        crate::ensure_corrupt!(
            !needs_index || repetition_index.is_some(),
            "full-zip page with variable-width values or repetition has no repetition index"
        );
        Ok(Self {
            bits_rep,
            bits_def,
            addressing,
            num_items,
            num_visible_items,
            value_compression,
            layers,
            data,
            repetition_index,
            num_rows,
        })
    }

    /// Bytes of each control word (0 when there are no levels).
    pub fn control_bytes(&self) -> usize {
        match self.bits_rep + self.bits_def {
            0 => 0,
            1..=8 => 1,
            9..=16 => 2,
            _ => 4,
        }
    }

    /// Compression tree for `inspect`.
    pub fn describe(&self) -> String {
        let width = match self.addressing {
            ZipAddressing::Fixed { bits_per_value } => format!("{bits_per_value} bits/value"),
            ZipAddressing::Variable { bits_per_offset } => format!("{bits_per_offset}-bit lengths"),
        };
        format!(
            "values: {} ({width})",
            compression::describe(&self.value_compression)
        )
    }

    /// Page init: the row offsets, when the page has them.
    pub fn init_ranges(&self) -> Vec<Range<u64>> {
        self.repetition_index.iter().cloned().collect()
    }

    /// Decode the row offsets (or nothing).
    pub fn decode_init(&self, bytes: &[Bytes]) -> Result<PageInit> {
        let Some(index) = bytes.first() else {
            return Ok(PageInit::None);
        };
        let offsets = parse_row_offsets(index, self.num_rows, self.data.end - self.data.start)
            .map_err(|e| e.context("repetition index"))?;
        Ok(PageInit::FullZip(FullZipInit {
            row_offsets: offsets,
        }))
    }

    fn fixed_stride(&self) -> Option<u64> {
        match self.addressing {
            ZipAddressing::Fixed { bits_per_value } => {
                Some(u64::from(bits_per_value / 8) + self.control_bytes() as u64)
            }
            ZipAddressing::Variable { .. } => None,
        }
    }

    /// Byte span (page-data relative) of page-local rows `rows`.
    fn span(&self, row_offsets: Option<&[u64]>, rows: &Range<u64>) -> Result<Range<u64>> {
        let size = self.data.end - self.data.start;
        let span = match (row_offsets, self.fixed_stride()) {
            (Some(row_offsets), _) => {
                let at = |r: u64| {
                    row_offsets
                        .get(r as usize)
                        .copied()
                        .ok_or_else(|| Error::corrupt(format!("row {r} is past the row offsets")))
                };
                at(rows.start)?..at(rows.end)?
            }
            (None, Some(stride)) => rows.start * stride..rows.end * stride,
            (None, None) => return Err(Error::corrupt("full-zip page without row offsets")),
        };
        crate::ensure_corrupt!(
            span.end <= size,
            "rows {rows:?} end at byte {} past the {size}-byte data buffer",
            span.end
        );
        Ok(span)
    }

    /// One byte range per row range.
    pub fn plan(&self, init: &PageInit, rows: &RowRanges) -> Result<PageReadPlan> {
        match init {
            PageInit::FullZip(i) => self.plan_with_offsets(Some(&i.row_offsets), rows),
            PageInit::None => self.plan_with_offsets(None, rows),
            _ => Err(Error::corrupt(
                "full-zip page with another layout's init data",
            )),
        }
    }

    /// [`plan`](Self::plan) with the row offsets from the page init (`None` for fixed-width
    /// values without a repetition index), borrowed rather than wrapped in a [`PageInit`].
    pub fn plan_with_offsets(
        &self,
        row_offsets: Option<&[u64]>,
        rows: &RowRanges,
    ) -> Result<PageReadPlan> {
        self.plan_spans(rows, |r| self.span(row_offsets, r))
    }

    /// The plan of `rows` given each row range's byte span in the data buffer
    /// (page-data relative), checked against the buffer's size by `span_of`.
    pub(crate) fn plan_spans(
        &self,
        rows: &RowRanges,
        span_of: impl Fn(&Range<u64>) -> Result<Range<u64>>,
    ) -> Result<PageReadPlan> {
        if self.layers.len() == 1 {
            flat_nullability(&self.layers)?;
        }
        crate::ensure_corrupt!(
            self.bits_rep > 0 || self.num_items == self.num_rows,
            "full-zip page without lists has {} items but {} rows",
            self.num_items,
            self.num_rows
        );
        if let Some(stride) = self.fixed_stride() {
            crate::ensure_corrupt!(
                self.num_items.checked_mul(stride) == Some(self.data.end - self.data.start),
                "{} values of {stride} bytes do not fill the {}-byte data buffer",
                self.num_items,
                self.data.end - self.data.start
            );
        }
        let mut ranges = Vec::new();
        let mut plan_rows = Vec::new();
        for r in rows.iter().filter(|r| r.start < r.end) {
            let span = span_of(r)?;
            if span.start < span.end {
                ranges.push(self.data.start + span.start..self.data.start + span.end);
                plan_rows.push(r.clone());
            } else {
                // All rows of this range are zero-byte (only possible without control
                // words and with variable values): nothing to fetch.
                ranges.push(self.data.start..self.data.start);
                plan_rows.push(r.clone());
            }
        }
        // Zero-length ranges are not fetched; the reader hands back empty bytes for them.
        Ok(PageReadPlan {
            ranges,
            detail: PlanDetail::FullZipRows(plan_rows),
            projection: None,
        })
    }

    /// Decode the fetched spans into `out`.
    pub fn decode_into(
        &self,
        _rows: &RowRanges,
        plan: &PageReadPlan,
        bytes: &[Bytes],
        out: &mut LeafBuilder,
    ) -> Result<()> {
        let nullability = if self.layers.len() == 1 {
            flat_nullability(&self.layers)?
        } else {
            FlatNullability::AllValid
        };
        let PlanDetail::FullZipRows(rows) = &plan.detail else {
            return Err(Error::corrupt("full-zip page got a plan of another layout"));
        };
        for (r, span) in rows.iter().zip(bytes) {
            let n = usize::try_from(r.end - r.start)
                .map_err(|_| Error::corrupt("row range too large"))?;
            match self.addressing {
                ZipAddressing::Fixed { bits_per_value } => {
                    self.decode_fixed(span, n, bits_per_value, nullability, out)?
                }
                ZipAddressing::Variable { bits_per_offset } => {
                    self.decode_variable(span, n, bits_per_offset, nullability, out)?
                }
            }
        }
        Ok(())
    }

    fn control(&self, bytes: &[u8]) -> u32 {
        let mut word = [0u8; 4];
        word[..bytes.len()].copy_from_slice(bytes);
        let ctrl = u32::from_le_bytes(word);
        let def_mask = if self.bits_def >= 32 {
            u32::MAX
        } else {
            (1u32 << self.bits_def) - 1
        };
        ctrl & def_mask
    }

    fn decode_fixed(
        &self,
        span: &Bytes,
        n: usize,
        bits: u32,
        nullability: FlatNullability,
        out: &mut LeafBuilder,
    ) -> Result<()> {
        let ctrl = self.control_bytes();
        let value_bytes = (bits / 8) as usize;
        let stride = ctrl + value_bytes;
        crate::ensure_corrupt!(
            n.checked_mul(stride) == Some(span.len()),
            "{} bytes for {n} values of {stride} bytes",
            span.len()
        );
        let (data, validity) = if ctrl == 0 {
            (span.clone(), None)
        } else {
            let mut data = Vec::with_capacity(n * value_bytes);
            let mut validity = Vec::with_capacity(n);
            for item in span.chunks_exact(stride) {
                validity.push(self.def_is_valid(self.control(&item[..ctrl]), nullability)?);
                data.extend_from_slice(&item[ctrl..]);
            }
            (Bytes::from(data), Some(validity))
        };
        let values = compression::decode_fullzip_fixed(&self.value_compression, data, n)?;
        out.push_values(&values, 0..n, validity.as_deref())
    }

    fn def_is_valid(&self, def: u32, nullability: FlatNullability) -> Result<bool> {
        match (def, nullability) {
            (0, _) => Ok(true),
            (1, FlatNullability::Nullable) => Ok(false),
            (d, _) => Err(Error::corrupt(format!(
                "def level {d} in a flat {nullability:?} page"
            ))),
        }
    }

    fn decode_variable(
        &self,
        span: &Bytes,
        n: usize,
        bits_per_offset: u32,
        nullability: FlatNullability,
        out: &mut LeafBuilder,
    ) -> Result<()> {
        let ctrl = self.control_bytes();
        let len_bytes = (bits_per_offset / 8) as usize;
        // Every row takes at least its control word (or its length when there is none).
        let min_row_bytes = if ctrl > 0 { ctrl } else { len_bytes };
        crate::ensure_corrupt!(
            n.checked_mul(min_row_bytes)
                .is_some_and(|b| b <= span.len()),
            "{n} rows cannot fit in {} bytes",
            span.len()
        );
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0u64);
        let mut data = Vec::with_capacity(span.len());
        let mut validity = Vec::with_capacity(n);
        let mut at = 0usize;
        for _ in 0..n {
            let valid = if ctrl > 0 {
                let word = span
                    .get(at..at + ctrl)
                    .ok_or_else(|| Error::corrupt("control word past the span"))?;
                at += ctrl;
                self.def_is_valid(self.control(word), nullability)?
            } else {
                true
            };
            if valid {
                data.extend_from_slice(length_prefixed(span, &mut at, len_bytes)?);
            }
            offsets.push(data.len() as u64);
            validity.push(valid);
        }
        crate::ensure_corrupt!(
            at == span.len(),
            "{} trailing bytes after {n} values",
            span.len() - at
        );
        let values = compression::decode_fullzip_variable(
            &self.value_compression,
            offsets,
            Bytes::from(data),
        )?;
        let validity = (ctrl > 0).then_some(validity);
        out.push_values(&values, 0..n, validity.as_deref())
    }
}

impl FullZipPage {
    /// Decode page-local `rows` of a nested full-zip page: walk the control words of the
    /// fetched spans, keep the levels, gather the values of visible levels.
    pub fn decode_nested(
        &self,
        rows: &RowRanges,
        plan: &PageReadPlan,
        bytes: &[Bytes],
        leaf_type: &DataType,
    ) -> Result<LeafData> {
        let structure = DenseStructure::new(&self.layers)?;
        let PlanDetail::FullZipRows(planned) = &plan.detail else {
            return Err(Error::corrupt("full-zip page got a plan of another layout"));
        };
        if self.control_bytes() == 0 {
            return self.decode_without_levels(rows, plan, bytes, leaf_type, &structure);
        }
        let mut gathered = NestedGather::new();
        for (r, span) in planned.iter().zip(bytes) {
            let row_starts = self.gather_span(span, &structure, &mut gathered)?;
            crate::ensure_corrupt!(
                row_starts == r.end - r.start,
                "span holds {row_starts} rows, expected {}",
                r.end - r.start
            );
        }
        self.finish_nested(gathered, &structure, leaf_type)
    }

    /// No levels at all (every layer all-valid, no lists): one value per row.
    fn decode_without_levels(
        &self,
        rows: &RowRanges,
        plan: &PageReadPlan,
        bytes: &[Bytes],
        leaf_type: &DataType,
        structure: &DenseStructure,
    ) -> Result<LeafData> {
        crate::ensure_corrupt!(
            structure.max_rep == 0,
            "full-zip page with lists has no control words"
        );
        let mut out = LeafBuilder::new(leaf_type)?;
        self.decode_into(rows, plan, bytes, &mut out)?;
        let values = out.finish()?;
        let unraveled = structure.unravel(None, None, values.len())?;
        Ok(LeafData {
            layers: unraveled.layers,
            values,
        })
    }

    /// Walk the control words of one span: keep its levels, gather the values of visible
    /// levels. Returns the number of rows that start in it (it must begin at one).
    fn gather_span(
        &self,
        span: &Bytes,
        structure: &DenseStructure,
        out: &mut NestedGather,
    ) -> Result<u64> {
        let ctrl = self.control_bytes();
        let mut at = 0usize;
        let mut row_starts = 0u64;
        while at < span.len() {
            let word = span
                .get(at..at + ctrl)
                .ok_or_else(|| Error::corrupt("control word past the span"))?;
            at += ctrl;
            let (rep, def) = self.levels_of(word);
            if rep == structure.max_rep as u32 {
                row_starts += 1;
            }
            crate::ensure_corrupt!(row_starts > 0, "span does not begin at a row start");
            let rep =
                u16::try_from(rep).map_err(|_| Error::corrupt("repetition level overflows"))?;
            let def =
                u16::try_from(def).map_err(|_| Error::corrupt("definition level overflows"))?;
            out.rep.push(rep);
            out.def.push(def);
            if structure.is_visible(def) {
                out.visible += 1;
                self.gather_value(span, &mut at, def, out)?;
            }
        }
        Ok(row_starts)
    }

    /// Gather the value of a visible level at `*at` (a variable-width value has bytes only
    /// when valid, `def == 0`).
    fn gather_value(
        &self,
        span: &Bytes,
        at: &mut usize,
        def: u16,
        out: &mut NestedGather,
    ) -> Result<()> {
        match self.addressing {
            ZipAddressing::Fixed { bits_per_value } => {
                let n = (bits_per_value / 8) as usize;
                let value = span
                    .get(*at..*at + n)
                    .ok_or_else(|| Error::corrupt("value past the span"))?;
                out.fixed_data.extend_from_slice(value);
                *at += n;
            }
            ZipAddressing::Variable { bits_per_offset } => {
                if def == 0 {
                    let width = (bits_per_offset / 8) as usize;
                    out.var_data
                        .extend_from_slice(length_prefixed(span, at, width)?);
                }
                out.offsets.push(out.var_data.len() as u64);
            }
        }
        Ok(())
    }

    /// Decompress the gathered values and unravel the levels into layers.
    fn finish_nested(
        &self,
        gathered: NestedGather,
        structure: &DenseStructure,
        leaf_type: &DataType,
    ) -> Result<LeafData> {
        let visible = gathered.visible;
        let values = match self.addressing {
            ZipAddressing::Fixed { .. } => compression::decode_fullzip_fixed(
                &self.value_compression,
                Bytes::from(gathered.fixed_data),
                visible,
            )?,
            ZipAddressing::Variable { .. } => compression::decode_fullzip_variable(
                &self.value_compression,
                gathered.offsets,
                Bytes::from(gathered.var_data),
            )?,
        };
        let mut out = LeafBuilder::new(leaf_type)?;
        out.push_values(&values, 0..visible, None)?;
        let values = out.finish()?;
        let has_rep = self.bits_rep > 0;
        let has_def = self.bits_def > 0;
        let n = gathered.rep.len();
        let unraveled = structure.unravel(
            has_rep.then_some(gathered.rep.as_slice()),
            has_def.then_some(gathered.def.as_slice()),
            n,
        )?;
        crate::ensure_corrupt!(
            unraveled.leaf_slots == visible,
            "{} leaf slots for {visible} values",
            unraveled.leaf_slots
        );
        Ok(LeafData {
            layers: unraveled.layers,
            values,
        })
    }

    fn levels_of(&self, word: &[u8]) -> (u32, u32) {
        let mut w = [0u8; 4];
        w[..word.len()].copy_from_slice(word);
        let ctrl = u32::from_le_bytes(w);
        let def_mask = if self.bits_def >= 32 {
            u32::MAX
        } else {
            (1u32 << self.bits_def) - 1
        };
        let rep = if self.bits_def >= 32 {
            0
        } else {
            ctrl >> self.bits_def
        };
        (rep, ctrl & def_mask)
    }
}

/// Decoded page-init data of a full-zip page.
#[derive(Debug, Clone)]
pub struct FullZipInit {
    /// `rows + 1` byte offsets of row starts in the data buffer.
    pub row_offsets: Vec<u64>,
}

impl FullZipInit {
    /// Approximate heap size.
    pub fn deep_size(&self) -> usize {
        self.row_offsets.len() * 8
    }
}

/// Parse a byte-packed row-offset index: `rows + 1` little-endian offsets of width
/// `len / (rows + 1)` ∈ {1, 2, 4, 8}; non-decreasing, last = `data_size`.
pub(crate) fn parse_row_offsets(bytes: &[u8], rows: u64, data_size: u64) -> Result<Vec<u64>> {
    let entries = rows
        .checked_add(1)
        .ok_or_else(|| Error::corrupt("row count overflows"))?;
    let width = (bytes.len() as u64 / entries) as usize;
    crate::ensure_corrupt!(
        matches!(width, 1 | 2 | 4 | 8) && width as u64 * entries == bytes.len() as u64,
        "{} bytes are not {entries} offsets of 1, 2, 4 or 8 bytes",
        bytes.len()
    );
    let n = entries as usize;
    let mut offsets = Vec::with_capacity(n);
    let mut previous = 0u64;
    for i in 0..n {
        let o = read_offset(bytes, width, i);
        crate::ensure_corrupt!(
            o >= previous,
            "row offsets decrease at entry {i} ({previous} then {o})"
        );
        previous = o;
        offsets.push(o);
    }
    crate::ensure_corrupt!(
        previous == data_size,
        "row offsets end at {previous}, the data buffer has {data_size} bytes"
    );
    Ok(offsets)
}

fn read_offset(bytes: &[u8], width: usize, i: usize) -> u64 {
    let mut word = [0u8; 8];
    if let Some(s) = bytes.get(i * width..(i + 1) * width) {
        word[..width].copy_from_slice(s);
    }
    u64::from_le_bytes(word)
}

/// Levels and values gathered from the control words of nested full-zip spans.
struct NestedGather {
    rep: Vec<u16>,
    def: Vec<u16>,
    /// Fixed-width values of visible levels.
    fixed_data: Vec<u8>,
    /// Variable-width values: offsets (one per visible level, after a leading 0) and bytes.
    offsets: Vec<u64>,
    var_data: Vec<u8>,
    /// Number of visible levels.
    visible: usize,
}

impl NestedGather {
    fn new() -> Self {
        NestedGather {
            rep: Vec::new(),
            def: Vec::new(),
            fixed_data: Vec::new(),
            offsets: vec![0],
            var_data: Vec::new(),
            visible: 0,
        }
    }
}

/// The value at `*at` of `span`, prefixed by its little-endian length of `width` bytes;
/// moves `*at` past it.
fn length_prefixed<'a>(span: &'a [u8], at: &mut usize, width: usize) -> Result<&'a [u8]> {
    let raw = span
        .get(*at..*at + width)
        .ok_or_else(|| Error::corrupt("value length past the span"))?;
    *at += width;
    let mut word = [0u8; 8];
    word[..width].copy_from_slice(raw);
    let len = u64::from_le_bytes(word);
    let start = *at;
    let end = (start as u64)
        .checked_add(len)
        .filter(|&e| e <= span.len() as u64)
        .ok_or_else(|| {
            Error::corrupt(format!(
                "value of {len} bytes at {start} overruns the {}-byte span",
                span.len()
            ))
        })?;
    *at = end as usize;
    Ok(&span[start..end as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_offsets_are_byte_packed_and_end_at_the_data_size() {
        let idx: Vec<u8> = [0u32, 10, 25]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(parse_row_offsets(&idx, 2, 25).unwrap(), vec![0, 10, 25]);
        assert!(parse_row_offsets(&idx, 2, 26).is_err());
        assert!(parse_row_offsets(&idx, 3, 25).is_err());
        let bad: Vec<u8> = [0u32, 30, 25]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert!(parse_row_offsets(&bad, 2, 25).is_err());
        assert_eq!(parse_row_offsets(&[0, 3, 9], 2, 9).unwrap(), vec![0, 3, 9]);
    }
}
