//! Constant and all-null pages (2.1/2.2 `ConstantLayout`; 2.3 dense + constant / none).
//!
//! Buffers, by (inline value?, buffer count): (yes, 0) inline scalar; (yes, 2) inline
//! scalar + raw u16 rep/def levels; (no, 1) scalar value buffer; (no, 3) value buffer +
//! rep/def; (no, 0) all null (`[NULLABLE_ITEM]`); (no, 2) all null with rep/def levels.
//! Inline scalars are the little-endian value bytes (bool: one byte). A scalar value buffer
//! is `u32 num_buffers`, `num_buffers × u32 length`, then the Arrow buffers of a
//! one-element array.

use std::ops::Range;

use arrow_schema::DataType;
use bytes::Bytes;

use super::structure::{DenseStructure, LeafData};
use super::values::LeafBuilder;
use super::{
    buffer, count_rows, decode_layers, describe_opt, flat_nullability, FlatNullability, PageInit,
    RowRanges,
};
use crate::error::{Error, Result};
use crate::lance::compression::{self, DecodedValues};
use crate::lance::proto::encodings::{self as pb, CompressiveEncoding, RepDefLayer};

/// A constant or all-null page.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ConstantPage {
    /// Structural layers, inner-most first.
    pub layers: Vec<RepDefLayer>,
    /// Inline scalar bytes.
    pub inline_value: Option<Bytes>,
    /// Absolute range of a scalar value buffer.
    pub value_buffer: Option<Range<u64>>,
    /// Absolute ranges of the rep and def level buffers (nested pages only).
    pub level_buffers: Option<(Range<u64>, Range<u64>)>,
    /// Block encoding of the rep buffer (all-null nested pages of 2.2).
    pub rep_compression: Option<CompressiveEncoding>,
    /// Block encoding of the def buffer.
    pub def_compression: Option<CompressiveEncoding>,
    /// Rep levels in the rep buffer.
    pub num_rep_values: u64,
    /// Def levels in the def buffer.
    pub num_def_values: u64,
}

impl ConstantPage {
    /// From a 2.1/2.2 `ConstantLayout`.
    pub(crate) fn from_layout(layout: pb::ConstantLayout, buffers: &[Range<u64>]) -> Result<Self> {
        let layers = decode_layers(&layout.layers)?;
        if let Some(v) = &layout.inline_value {
            crate::ensure_corrupt!(
                (1..=32).contains(&v.len()),
                "inline constant of {} bytes (must be 1..=32)",
                v.len()
            );
        }
        let (value_buffer, level_buffers) = match (layout.inline_value.is_some(), buffers.len()) {
            (true, 0) | (false, 0) => (None, None),
            (true, 2) | (false, 2) => (
                None,
                Some((buffer(buffers, 0, "rep")?, buffer(buffers, 1, "def")?)),
            ),
            (false, 1) => (Some(buffer(buffers, 0, "scalar")?), None),
            (false, 3) => (
                Some(buffer(buffers, 0, "scalar")?),
                Some((buffer(buffers, 1, "rep")?, buffer(buffers, 2, "def")?)),
            ),
            (inline, n) => {
                return Err(Error::corrupt(format!(
                    "constant page with {} inline value has {n} buffers",
                    if inline { "an" } else { "no" }
                )))
            }
        };
        Ok(Self {
            layers,
            inline_value: layout.inline_value,
            value_buffer,
            level_buffers,
            rep_compression: layout.rep_compression,
            def_compression: layout.def_compression,
            num_rep_values: layout.num_rep_values,
            num_def_values: layout.num_def_values,
        })
    }

    /// A 2.3 dense constant page (inline scalar, trivial structure).
    pub(crate) fn inline(
        layers: Vec<RepDefLayer>,
        scalar: Bytes,
        buffers: &[Range<u64>],
    ) -> Result<Self> {
        crate::ensure_corrupt!(
            buffers.is_empty(),
            "constant page with {} buffers",
            buffers.len()
        );
        Ok(Self::bare(layers, Some(scalar)))
    }

    /// A 2.3 dense page without values (all null).
    pub(crate) fn all_null(layers: Vec<RepDefLayer>, buffers: &[Range<u64>]) -> Result<Self> {
        crate::ensure_corrupt!(
            buffers.is_empty(),
            "all-null page with {} buffers",
            buffers.len()
        );
        Ok(Self::bare(layers, None))
    }

    fn bare(layers: Vec<RepDefLayer>, inline_value: Option<Bytes>) -> Self {
        Self {
            layers,
            inline_value,
            value_buffer: None,
            level_buffers: None,
            rep_compression: None,
            def_compression: None,
            num_rep_values: 0,
            num_def_values: 0,
        }
    }

    fn has_scalar(&self) -> bool {
        self.inline_value.is_some() || self.value_buffer.is_some()
    }

    /// `"constant"` or `"all-null"`.
    pub(crate) fn name(&self) -> &'static str {
        if self.has_scalar() {
            "constant"
        } else {
            "all-null"
        }
    }

    /// Description for `inspect`.
    pub(crate) fn describe(&self) -> String {
        let mut s = match (&self.inline_value, &self.value_buffer) {
            (Some(v), _) => format!("inline scalar {}", hex(v)),
            (None, Some(r)) => format!("scalar buffer of {} bytes", r.end - r.start),
            (None, None) => "no values".to_string(),
        };
        if self.level_buffers.is_some() {
            s.push_str(&format!(
                "; rep: {} ({} levels); def: {} ({} levels)",
                describe_opt(&self.rep_compression),
                self.num_rep_values,
                describe_opt(&self.def_compression),
                self.num_def_values
            ));
        }
        s
    }

    /// Flat reads: no repetition; definition levels (one per row) are allowed.
    pub(crate) fn check_readable(&self) -> Result<()> {
        let nullability = flat_nullability(&self.layers)?;
        if let Some((rep, _)) = &self.level_buffers {
            if rep.end > rep.start {
                return Err(Error::unsupported(
                    "constant page with repetition levels (nested)",
                ));
            }
        }
        if !self.has_scalar() && nullability != FlatNullability::Nullable {
            return Err(Error::corrupt(
                "all-null page whose only layer is not nullable",
            ));
        }
        Ok(())
    }

    fn def_buffer(&self) -> Option<Range<u64>> {
        self.level_buffers
            .as_ref()
            .map(|(_, def)| def.clone())
            .filter(|d| d.end > d.start)
    }

    fn rep_buffer(&self) -> Option<Range<u64>> {
        self.level_buffers
            .as_ref()
            .map(|(rep, _)| rep.clone())
            .filter(|r| r.end > r.start)
    }

    /// Page init: the scalar value buffer and the rep/def levels, if any.
    pub(crate) fn init_ranges(&self) -> Vec<Range<u64>> {
        self.value_buffer
            .iter()
            .cloned()
            .chain(self.rep_buffer())
            .chain(self.def_buffer())
            .collect()
    }

    /// Decode levels: raw u16 when the page has a scalar or no compression is given (as
    /// lance does), else the block compression with the stored level count.
    fn levels(
        &self,
        raw: &Bytes,
        compression: &Option<CompressiveEncoding>,
        count: u64,
        what: &str,
    ) -> Result<Vec<u16>> {
        match (compression, self.has_scalar()) {
            (Some(encoding), false) => {
                let n = usize::try_from(count)
                    .map_err(|_| Error::corrupt(format!("{what} level count overflows")))?;
                compression::decode_levels(encoding, Some(raw.clone()), n)
                    .map_err(|e| e.context(format!("{what} levels")))
            }
            _ => {
                crate::ensure_corrupt!(
                    raw.len().is_multiple_of(2),
                    "raw {what} levels of {} bytes",
                    raw.len()
                );
                Ok(raw
                    .chunks_exact(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]]))
                    .collect())
            }
        }
    }

    /// Keep the scalar value buffer; decode the rep/def levels.
    pub(crate) fn decode_init(&self, bytes: &[Bytes]) -> Result<PageInit> {
        let mut parts = bytes.iter();
        let mut next = |present: bool, what: &str| -> Result<Option<Bytes>> {
            if !present {
                return Ok(None);
            }
            parts
                .next()
                .cloned()
                .map(Some)
                .ok_or_else(|| Error::corrupt(format!("missing {what} buffer")))
        };
        let value_buffer = next(self.value_buffer.is_some(), "scalar")?;
        let rep_raw = next(self.rep_buffer().is_some(), "rep")?;
        let def_raw = next(self.def_buffer().is_some(), "def")?;
        let rep_levels = rep_raw
            .map(|r| self.levels(&r, &self.rep_compression, self.num_rep_values, "rep"))
            .transpose()?;
        let def_levels = def_raw
            .map(|d| self.levels(&d, &self.def_compression, self.num_def_values, "def"))
            .transpose()?;
        if let (Some(r), Some(d)) = (&rep_levels, &def_levels) {
            crate::ensure_corrupt!(
                r.len() == d.len(),
                "{} rep levels but {} def levels",
                r.len(),
                d.len()
            );
        }
        if value_buffer.is_none() && def_levels.is_none() && rep_levels.is_none() {
            return Ok(PageInit::None);
        }
        Ok(PageInit::Constant(ConstantInit {
            value_buffer,
            rep_levels,
            def_levels,
        }))
    }

    fn scalar(
        &self,
        init: Option<&ConstantInit>,
        data_type: &DataType,
    ) -> Result<Option<DecodedValues>> {
        Ok(
            match (
                &self.inline_value,
                init.and_then(|c| c.value_buffer.as_ref()),
            ) {
                (Some(inline), _) => Some(inline_scalar(inline, data_type)?),
                (None, Some(buffer)) => Some(buffer_scalar(buffer, data_type)?),
                (None, None) if self.value_buffer.is_some() => {
                    return Err(Error::corrupt("constant page init is missing"))
                }
                (None, None) => None,
            },
        )
    }

    /// Decode page-local `rows` of a nested constant / all-null page.
    pub(crate) fn decode_nested(
        &self,
        init: &PageInit,
        rows: &RowRanges,
        leaf_type: &DataType,
    ) -> Result<LeafData> {
        let structure = DenseStructure::new(&self.layers)?;
        let init = match init {
            PageInit::Constant(c) => Some(c),
            _ => None,
        };
        let rep = init.and_then(|c| c.rep_levels.as_deref());
        let def = init.and_then(|c| c.def_levels.as_deref());
        crate::ensure_corrupt!(
            structure.max_rep == 0 || rep.is_some(),
            "constant page with lists has no repetition levels"
        );
        let num_levels = rep.or(def).map(|l| l.len()).unwrap_or(0);
        // Level index of each row start.
        let starts: Vec<usize> = match rep {
            Some(r) => (0..r.len())
                .filter(|&i| r[i] == structure.max_rep)
                .collect(),
            None => (0..num_levels).collect(),
        };
        let level_of = |row: u64| -> Result<usize> {
            match starts.get(row as usize) {
                Some(&l) => Ok(l),
                None if row as usize == starts.len() => Ok(num_levels),
                None => Err(Error::corrupt(format!(
                    "row {row} is past the page's {} rows",
                    starts.len()
                ))),
            }
        };
        let (mut rep_out, mut def_out) = (Vec::new(), Vec::new());
        for r in rows.iter().filter(|r| r.start < r.end) {
            let levels = level_of(r.start)?..level_of(r.end)?;
            if let Some(rep) = rep {
                rep_out.extend_from_slice(&rep[levels.clone()]);
            }
            if let Some(def) = def {
                def_out.extend_from_slice(&def[levels.clone()]);
            }
        }
        let n = rep.map_or(def_out.len(), |_| rep_out.len());
        let unraveled = structure.unravel(
            rep.map(|_| rep_out.as_slice()),
            def.map(|_| def_out.as_slice()),
            n,
        )?;
        let mut values = LeafBuilder::new(leaf_type)?;
        match self.scalar(init, leaf_type)? {
            Some(scalar) => values.push_repeated(&scalar, 0, unraveled.leaf_slots)?,
            None => values.push_nulls(unraveled.leaf_slots)?,
        }
        Ok(LeafData {
            layers: unraveled.layers,
            values: values.finish()?,
        })
    }

    /// Append the rows: the scalar repeated (null where the def level says so), or nulls.
    pub(crate) fn decode_into(
        &self,
        init: &PageInit,
        rows: &RowRanges,
        out: &mut LeafBuilder,
    ) -> Result<()> {
        self.check_readable()?;
        let n =
            usize::try_from(count_rows(rows)).map_err(|_| Error::corrupt("row count overflows"))?;
        let init = match init {
            PageInit::Constant(c) => Some(c),
            _ => None,
        };
        let scalar = self.scalar(init, out.data_type())?;
        let def = init.and_then(|c| c.def_levels.as_ref());
        if self.def_buffer().is_some() && def.is_none() {
            return Err(Error::corrupt("constant page def levels are missing"));
        }
        let (Some(scalar), Some(def)) = (&scalar, def) else {
            return match scalar {
                Some(scalar) => out.push_repeated(&scalar, 0, n),
                None => out.push_nulls(n),
            };
        };
        for r in rows {
            for row in r.clone() {
                let level = *def.get(row as usize).ok_or_else(|| {
                    Error::corrupt(format!("row {row} has no def level ({} levels)", def.len()))
                })?;
                match level {
                    0 => out.push_repeated(scalar, 0, 1)?,
                    1 => out.push_nulls(1)?,
                    other => {
                        return Err(Error::corrupt(format!(
                            "def level {other} in a flat constant page"
                        )))
                    }
                }
            }
        }
        Ok(())
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Decoded page-init data of a constant page with a value buffer or def levels.
#[derive(Debug, Clone)]
pub struct ConstantInit {
    /// The raw scalar value buffer.
    pub value_buffer: Option<Bytes>,
    /// Repetition levels (nested pages).
    pub rep_levels: Option<Vec<u16>>,
    /// Definition levels (one per row for flat pages).
    pub def_levels: Option<Vec<u16>>,
}

impl ConstantInit {
    /// Approximate heap size.
    pub fn deep_size(&self) -> usize {
        self.value_buffer.as_ref().map_or(0, |b| b.len())
            + self.def_levels.as_ref().map_or(0, |d| d.len() * 2)
            + self.rep_levels.as_ref().map_or(0, |r| r.len() * 2)
    }
}

/// One value from inline scalar bytes.
pub(crate) fn inline_scalar(bytes: &Bytes, data_type: &DataType) -> Result<DecodedValues> {
    match data_type {
        DataType::Boolean => {
            crate::ensure_corrupt!(
                bytes.len() == 1,
                "boolean inline constant of {} bytes",
                bytes.len()
            );
            Ok(DecodedValues::Fixed {
                bits_per_value: 1,
                num_values: 1,
                data: Bytes::from(vec![bytes[0] & 1]),
            })
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary => {
            Err(Error::corrupt(format!(
                "inline constant for variable-width type {data_type}"
            )))
        }
        _ => Ok(DecodedValues::Fixed {
            bits_per_value: bytes.len() as u64 * 8,
            num_values: 1,
            data: bytes.clone(),
        }),
    }
}

/// One value from a scalar value buffer (`u32 n`, `n × u32 len`, buffers).
pub(crate) fn buffer_scalar(raw: &Bytes, data_type: &DataType) -> Result<DecodedValues> {
    let read_u32 = |at: usize| -> Result<usize> {
        let b = raw
            .get(at..at + 4)
            .ok_or_else(|| Error::corrupt("scalar value buffer is truncated"))?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    let count = read_u32(0)?;
    crate::ensure_corrupt!(count <= 3, "scalar value buffer with {count} buffers");
    let mut at = 4 + 4 * count;
    let mut parts = Vec::with_capacity(count);
    for i in 0..count {
        let len = read_u32(4 + 4 * i)?;
        let end = at
            .checked_add(len)
            .filter(|&e| e <= raw.len())
            .ok_or_else(|| Error::corrupt("scalar value buffer is truncated"))?;
        parts.push(raw.slice(at..end));
        at = end;
    }
    crate::ensure_corrupt!(
        at == raw.len(),
        "scalar value buffer has {} trailing bytes",
        raw.len() - at
    );
    match (data_type, parts.as_slice()) {
        (DataType::Utf8 | DataType::Binary, [offsets, data]) => variable_scalar(offsets, data, 4),
        (DataType::LargeUtf8 | DataType::LargeBinary, [offsets, data]) => {
            variable_scalar(offsets, data, 8)
        }
        (DataType::Boolean, [bits]) => {
            crate::ensure_corrupt!(!bits.is_empty(), "empty boolean scalar");
            Ok(DecodedValues::Fixed {
                bits_per_value: 1,
                num_values: 1,
                data: bits.clone(),
            })
        }
        (_, [values]) => Ok(DecodedValues::Fixed {
            bits_per_value: values.len() as u64 * 8,
            num_values: 1,
            data: values.clone(),
        }),
        (dt, parts) => Err(Error::corrupt(format!(
            "scalar value buffer with {} buffers for type {dt}",
            parts.len()
        ))),
    }
}

fn variable_scalar(offsets: &Bytes, data: &Bytes, width: usize) -> Result<DecodedValues> {
    crate::ensure_corrupt!(
        offsets.len() == 2 * width,
        "scalar offsets of {} bytes",
        offsets.len()
    );
    let read = |i: usize| {
        let mut w = [0u8; 8];
        w[..width].copy_from_slice(&offsets[i * width..(i + 1) * width]);
        u64::from_le_bytes(w)
    };
    Ok(DecodedValues::Variable {
        offsets: vec![read(0), read(1)],
        data: data.clone(),
    })
}

#[cfg(test)]
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;
    use arrow_array::{Array, Int64Array, StringArray};

    #[test]
    fn inline_and_buffer_scalars_repeat() {
        let page = ConstantPage::inline(
            vec![RepDefLayer::RepdefAllValidItem],
            Bytes::from(7i64.to_le_bytes().to_vec()),
            &[],
        )
        .unwrap();
        let mut b = LeafBuilder::new(&DataType::Int64).unwrap();
        page.decode_into(&PageInit::None, &[0..2, 5..6], &mut b)
            .unwrap();
        let a = b.finish().unwrap();
        assert_eq!(
            a.as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .values()
                .to_vec(),
            vec![7, 7, 7]
        );

        let mut raw = Vec::new();
        raw.extend(2u32.to_le_bytes());
        raw.extend(8u32.to_le_bytes());
        raw.extend(2u32.to_le_bytes());
        raw.extend(0i32.to_le_bytes());
        raw.extend(2i32.to_le_bytes());
        raw.extend(b"hi");
        let v = buffer_scalar(&Bytes::from(raw.clone()), &DataType::Utf8).unwrap();
        let mut b = LeafBuilder::new(&DataType::Utf8).unwrap();
        b.push_repeated(&v, 0, 2).unwrap();
        let a = b.finish().unwrap();
        assert_eq!(
            a.as_any().downcast_ref::<StringArray>().unwrap().value(1),
            "hi"
        );
        raw.pop();
        assert!(buffer_scalar(&Bytes::from(raw), &DataType::Utf8).is_err());
    }

    #[test]
    fn all_null_page() {
        let page = ConstantPage::all_null(vec![RepDefLayer::RepdefNullableItem], &[]).unwrap();
        let mut b = LeafBuilder::new(&DataType::Int32).unwrap();
        page.decode_into(&PageInit::None, &[3..7], &mut b).unwrap();
        let a = b.finish().unwrap();
        assert_eq!(a.len(), 4);
        assert_eq!(a.null_count(), 4);
    }
}
