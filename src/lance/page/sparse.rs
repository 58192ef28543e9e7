//! 2.3 sparse pages (`PlanarLayout` with `SparseStructure`).
//!
//! Layers are stored outer → inner; each maps a parent slot domain to a child domain
//! (validity: same domain; list: `num_child_slots`; fixed-size list: × dimension). The last
//! child domain is the leaf slots. Buffers: value-plane buffers first (chunked: meta, data,
//! (dictionary); zipped: data, (offsets); indexed: 3), then one buffer per structural
//! sequence whose codec has a payload, in layer order (list: non-empty positions, counts,
//! validity; validity / FSL: validity).
//!
//! Flat pages (a single validity layer) are read here: all-null pages (`values none`),
//! chunked values over every row (null rows hold placeholders), zipped values of the valid
//! rows only, and constants. Pages with list / fixed-size-list / struct layers are read by
//! [`super::sparse_nested`]. Indexed values (large string dictionaries) are not read yet.

use std::ops::Range;

use arrow_array::{ArrayRef, UInt64Array};
use arrow_schema::DataType;
use bytes::Bytes;
use prost::Message;

use super::fullzip::FullZipPage;
use super::miniblock::{MiniBlockInit, MiniBlockPage};
use super::values::LeafBuilder;
use super::{buffer, count_rows, PageInit, PageReadPlan, PlanDetail, RowRanges};
use crate::error::{Error, Result};
use crate::lance::compression;
use crate::lance::proto::encodings::{
    self as pb, sparse_structural_layer::Layer, sparse_validity_set::Meaning, CompressiveEncoding,
    RepDefLayer,
};

/// Value plane of a sparse page.
#[derive(Debug, Clone, PartialEq)]
pub enum SparseValues {
    /// Mini-block chunks over every leaf slot.
    Chunked(Box<MiniBlockPage>),
    /// Full-zip values of the materialized (valid) slots only.
    Zipped(Box<FullZipPage>),
    /// One inline scalar for every materialized slot.
    Constant(Bytes),
    /// No materialized values.
    None,
    /// Dictionary indices + addressable items (not read yet).
    Indexed,
}

/// A structural sequence (positions or counts) and the buffer holding its payload.
#[derive(Debug, Clone, PartialEq)]
pub struct SparseSequence {
    /// Block encoding of the u64 sequence.
    pub encoding: CompressiveEncoding,
    /// Number of values.
    pub len: u64,
    /// Index of its payload among the page's structural buffers, when the codec has one.
    pub payload: Option<usize>,
}

/// A sparse validity set.
#[derive(Debug, Clone, PartialEq)]
pub struct SparseValidity {
    /// true: the positions are the null slots; false: the valid slots.
    pub null_positions: bool,
    /// The positions.
    pub positions: SparseSequence,
}

/// One sparse layer with its sequences located.
#[derive(Debug, Clone, PartialEq)]
pub enum SparseLayerDesc {
    /// Struct / leaf validity (child domain = parent domain).
    Validity(SparseValidity),
    /// A list layer.
    List {
        /// Size of the child domain.
        num_child_slots: u64,
        /// Parent slots with at least one child (strictly increasing).
        non_empty: SparseSequence,
        /// Children of each non-empty slot.
        counts: SparseSequence,
        /// List validity.
        validity: SparseValidity,
    },
    /// A fixed-size-list layer (of structs; fixed-size lists of primitives are values).
    FixedSizeList {
        /// Children per slot.
        dimension: u64,
        /// Validity.
        validity: SparseValidity,
    },
}

/// A 2.3 sparse page.
#[derive(Debug, Clone, PartialEq)]
pub struct SparsePage {
    /// The stored structure (outer → inner).
    pub structure: pb::SparseStructure,
    /// The layers with their sequences located (outer → inner).
    pub layers: Vec<SparseLayerDesc>,
    /// Top-level rows of the page.
    pub rows: u64,
    /// Slots of the last child domain (the leaf).
    pub leaf_slots: u64,
    /// The value plane.
    pub values: SparseValues,
    /// Validity of the leaf, when the structure is a single validity layer (flat page).
    pub flat_validity: Option<SparseValidity>,
    /// Product of the fixed-size-list dimensions (page length = rows × scale).
    pub row_scale: u64,
    /// Absolute ranges of the structural payload buffers, in order.
    pub structural_buffers: Vec<Range<u64>>,
}

fn sequence(
    encoding: &Option<CompressiveEncoding>,
    len: u64,
    buffers: &[Range<u64>],
    next: &mut usize,
) -> Result<SparseSequence> {
    let encoding = encoding
        .clone()
        .ok_or_else(|| Error::corrupt("sparse sequence has no encoding"))?;
    let payload = if compression::block_has_payload(&encoding)? {
        buffer(buffers, *next, "sparse structure payload")?;
        *next += 1;
        Some(*next - 1)
    } else {
        None
    };
    Ok(SparseSequence {
        encoding,
        len,
        payload,
    })
}

fn validity(
    set: &Option<pb::SparseValiditySet>,
    buffers: &[Range<u64>],
    next: &mut usize,
) -> Result<SparseValidity> {
    let set = set
        .as_ref()
        .ok_or_else(|| Error::corrupt("sparse layer has no validity set"))?;
    let null_positions = match Meaning::try_from(set.meaning) {
        Ok(Meaning::SparseValidityNullPositions) => true,
        Ok(Meaning::SparseValidityValidPositions) => false,
        _ => {
            return Err(Error::corrupt(format!(
                "sparse validity meaning {}",
                set.meaning
            )))
        }
    };
    Ok(SparseValidity {
        null_positions,
        positions: sequence(&set.positions, set.num_positions, buffers, next)?,
    })
}

impl SparsePage {
    /// Build from the stored structure and value plane.
    pub fn new(
        structure: pb::SparseStructure,
        values: pb::value_plane::Codec,
        buffers: &[Range<u64>],
    ) -> Result<Self> {
        use pb::value_plane::Codec;
        crate::ensure_corrupt!(!structure.layers.is_empty(), "sparse page has no layers");
        let value_buffer_count = match &values {
            Codec::Indexed(_) => 3,
            Codec::Chunked(v) => 2 + usize::from(v.dictionary.is_some()),
            Codec::Zipped(v) => {
                1 + usize::from(matches!(
                    v.addressing,
                    Some(pb::zipped_values::Addressing::BitsPerOffset(_))
                ))
            }
            Codec::Constant(_) | Codec::None(_) => 0,
        };
        crate::ensure_corrupt!(
            buffers.len() >= value_buffer_count,
            "sparse page has {} buffers, its value plane needs {value_buffer_count}",
            buffers.len()
        );
        let (value_buffers, structural_buffers) = buffers.split_at(value_buffer_count);
        // Walk the layers: count structural payloads and the row scale.
        let mut next = 0usize;
        let mut row_scale = 1u64;
        let mut flat_validity = None;
        let mut layers = Vec::with_capacity(structure.layers.len());
        for (i, layer) in structure.layers.iter().enumerate() {
            match &layer.layer {
                Some(Layer::Validity(set)) => {
                    let v = validity(&Some(set.clone()), structural_buffers, &mut next)?;
                    if structure.layers.len() == 1 && i == 0 {
                        flat_validity = Some(v.clone());
                    }
                    layers.push(SparseLayerDesc::Validity(v));
                }
                Some(Layer::List(list)) => {
                    let non_empty = sequence(
                        &list.non_empty_positions,
                        list.num_non_empty_positions,
                        structural_buffers,
                        &mut next,
                    )?;
                    let counts = sequence(
                        &list.counts,
                        list.num_non_empty_positions,
                        structural_buffers,
                        &mut next,
                    )?;
                    let validity = validity(&list.validity, structural_buffers, &mut next)?;
                    layers.push(SparseLayerDesc::List {
                        num_child_slots: list.num_child_slots,
                        non_empty,
                        counts,
                        validity,
                    });
                }
                Some(Layer::FixedSizeList(fsl)) => {
                    crate::ensure_corrupt!(
                        fsl.dimension > 0,
                        "sparse fixed-size-list layer of dimension 0"
                    );
                    row_scale = row_scale
                        .checked_mul(fsl.dimension)
                        .ok_or_else(|| Error::corrupt("sparse fixed-size-list scale overflows"))?;
                    let validity = validity(&fsl.validity, structural_buffers, &mut next)?;
                    layers.push(SparseLayerDesc::FixedSizeList {
                        dimension: fsl.dimension,
                        validity,
                    });
                }
                None => return Err(Error::corrupt(format!("sparse layer {i} has no kind"))),
            }
        }
        crate::ensure_corrupt!(
            next == structural_buffers.len(),
            "sparse page has {} structural buffers, its layers use {next}",
            structural_buffers.len()
        );
        let values = Self::value_plane(values, value_buffers)?;
        Ok(Self {
            structure,
            layers,
            values,
            flat_validity,
            row_scale,
            rows: 0,
            leaf_slots: 0,
            structural_buffers: structural_buffers.to_vec(),
        })
    }

    fn value_plane(values: pb::value_plane::Codec, buffers: &[Range<u64>]) -> Result<SparseValues> {
        use pb::value_plane::Codec;
        Ok(match values {
            Codec::None(_) => SparseValues::None,
            Codec::Indexed(_) => SparseValues::Indexed,
            Codec::Constant(c) => {
                crate::ensure_corrupt!(
                    (1..=32).contains(&c.scalar.len()),
                    "sparse constant of {} bytes",
                    c.scalar.len()
                );
                SparseValues::Constant(c.scalar)
            }
            Codec::Chunked(c) => {
                crate::ensure_corrupt!(
                    c.levels.is_none() && c.num_items == 0,
                    "sparse chunked values carry dense level metadata"
                );
                // The chunk table covers every leaf slot; the count is set when the page's
                // rows are known (see `with_rows`). Flat pages: leaf slots = rows.
                let mini = pb::MiniBlockLayout {
                    value_compression: c.compression,
                    dictionary: c.dictionary,
                    num_dictionary_items: c.num_dictionary_items,
                    num_buffers: c.num_buffers,
                    num_items: 0,
                    layers: vec![RepDefLayer::RepdefAllValidItem as i32],
                    has_large_chunk: true,
                    ..Default::default()
                };
                SparseValues::Chunked(Box::new(MiniBlockPage::new(mini, buffers, 0)?))
            }
            Codec::Zipped(z) => {
                crate::ensure_corrupt!(
                    z.levels.is_none() && z.num_visible_items == z.num_items,
                    "sparse zipped values carry dense level metadata"
                );
                let n = z.num_items;
                // Fixed width: [data]; variable: [data, offsets] (byte-packed, n+1 entries).
                SparseValues::Zipped(Box::new(FullZipPage::from_zipped(
                    z,
                    None,
                    vec![RepDefLayer::RepdefAllValidItem],
                    buffers,
                    n,
                )?))
            }
        })
    }

    /// Set the page rows, derive the leaf-slot count (lists: `num_child_slots`; fixed-size
    /// lists: × dimension) and size chunked values by it.
    pub fn with_rows(mut self, rows: u64) -> Result<Self> {
        let mut domain = rows;
        for layer in &self.layers {
            domain = match layer {
                SparseLayerDesc::Validity(_) => domain,
                SparseLayerDesc::List {
                    num_child_slots, ..
                } => *num_child_slots,
                SparseLayerDesc::FixedSizeList { dimension, .. } => domain
                    .checked_mul(*dimension)
                    .ok_or_else(|| Error::corrupt("sparse slot count overflows"))?,
            };
        }
        self.rows = rows;
        self.leaf_slots = domain;
        if let SparseValues::Chunked(mini) = &mut self.values {
            mini.num_items = domain;
            mini.page_rows = domain;
        }
        Ok(self)
    }

    /// Encoded size (for cache weighing).
    pub fn encoded_len(&self) -> usize {
        self.structure.encoded_len()
            + match &self.values {
                SparseValues::Chunked(m) => {
                    m.value_compression.encoded_len()
                        + m.dictionary.as_ref().map_or(0, |d| d.encoded_len())
                }
                SparseValues::Zipped(z) => z.value_compression.encoded_len(),
                SparseValues::Constant(c) => c.len(),
                SparseValues::None | SparseValues::Indexed => 0,
            }
    }

    /// Every compressive encoding of the page (values and structural sequences).
    pub fn encodings(&self) -> Vec<&CompressiveEncoding> {
        let mut all: Vec<&CompressiveEncoding> = match &self.values {
            SparseValues::Chunked(m) => m.encodings(),
            SparseValues::Zipped(z) => vec![&z.value_compression],
            _ => Vec::new(),
        };
        fn set(v: &Option<pb::SparseValiditySet>) -> Option<&CompressiveEncoding> {
            v.as_ref().and_then(|s| s.positions.as_ref())
        }
        for layer in &self.structure.layers {
            match &layer.layer {
                Some(Layer::Validity(v)) => all.extend(v.positions.as_ref()),
                Some(Layer::List(l)) => {
                    all.extend(l.non_empty_positions.as_ref());
                    all.extend(l.counts.as_ref());
                    all.extend(set(&l.validity));
                }
                Some(Layer::FixedSizeList(f)) => all.extend(set(&f.validity)),
                None => {}
            }
        }
        all
    }

    /// `"sparse(<values>)"`.
    pub fn name(&self) -> String {
        let values = match &self.values {
            SparseValues::Chunked(_) => "chunked",
            SparseValues::Zipped(_) => "zipped",
            SparseValues::Constant(_) => "constant",
            SparseValues::None => "none",
            SparseValues::Indexed => "indexed",
        };
        format!("sparse({values})")
    }

    /// Description for `inspect`.
    pub fn describe(&self) -> String {
        fn set(v: &SparseValidity) -> String {
            let kind = if v.null_positions { "null" } else { "valid" };
            format!(
                "{} {kind} {}",
                v.positions.len,
                compression::describe(&v.positions.encoding)
            )
        }
        let layers: Vec<String> = self
            .layers
            .iter()
            .map(|l| match l {
                SparseLayerDesc::Validity(v) => format!("validity({})", set(v)),
                SparseLayerDesc::List {
                    num_child_slots,
                    non_empty,
                    counts,
                    validity,
                } => format!(
                    "list({} non-empty {}, counts {}, {num_child_slots} child slots, {})",
                    non_empty.len,
                    compression::describe(&non_empty.encoding),
                    compression::describe(&counts.encoding),
                    set(validity)
                ),
                SparseLayerDesc::FixedSizeList {
                    dimension,
                    validity,
                } => {
                    format!("fixed_size_list({dimension}, {})", set(validity))
                }
            })
            .collect();
        let values = match &self.values {
            SparseValues::Chunked(m) => m.describe(),
            SparseValues::Zipped(z) => z.describe(),
            SparseValues::Constant(c) => format!("constant {} bytes", c.len()),
            SparseValues::None => "no values".into(),
            SparseValues::Indexed => "indexed".into(),
        };
        format!("layers [{}]; {values}", layers.join(", "))
    }

    /// Rows of a page whose stored length is `length` (length = rows × FSL scale).
    pub fn rows_in_page(&self, length: u64) -> Result<u64> {
        crate::ensure_corrupt!(
            length.is_multiple_of(self.row_scale),
            "sparse page length {length} is not a multiple of its fixed-size-list scale {}",
            self.row_scale
        );
        Ok(length / self.row_scale)
    }

    /// Flat pages (one validity layer) for the flat path; indexed values are not read yet.
    pub fn check_readable(&self) -> Result<()> {
        if self.flat_validity.is_none() {
            return Err(Error::corrupt("a nested sparse page read as a flat column"));
        }
        if matches!(self.values, SparseValues::Indexed) {
            return Err(Error::unsupported("sparse pages with indexed values"));
        }
        Ok(())
    }

    /// Page init: value-plane init buffers, then every structural payload.
    pub fn init_ranges(&self) -> Vec<Range<u64>> {
        let mut ranges = match &self.values {
            SparseValues::Chunked(m) => m.init_ranges(),
            SparseValues::Zipped(z) => z.init_ranges(),
            _ => Vec::new(),
        };
        ranges.extend(self.structural_buffers.iter().cloned());
        ranges
    }

    /// Decode the structure (flat: validity positions) and the value-plane init data.
    pub fn decode_init(&self, bytes: &[Bytes]) -> Result<SparseInit> {
        let value_count = bytes.len() - self.structural_buffers.len().min(bytes.len());
        let (value_bytes, structural) = bytes.split_at(value_count);
        let values = match &self.values {
            SparseValues::Chunked(m) => SparseValueInit::Chunked(m.decode_init(value_bytes)?),
            SparseValues::Zipped(z) => match z.decode_init(value_bytes)? {
                PageInit::FullZip(f) => SparseValueInit::Zipped(Some(f.row_offsets)),
                _ => SparseValueInit::Zipped(None),
            },
            _ => SparseValueInit::None,
        };
        let valid = match &self.flat_validity {
            Some(v) => {
                let payload = v.positions.payload.and_then(|i| structural.get(i).cloned());
                let n = usize::try_from(v.positions.len)
                    .map_err(|_| Error::corrupt("too many positions"))?;
                if let Some(p) = &payload {
                    // Any payload codec spends at least one bit per position... except
                    // run-length ones; bound generously before allocating.
                    crate::ensure_corrupt!(
                        n as u128 <= (p.len() as u128 + 16) * 8 * 65536,
                        "{n} positions in {} bytes",
                        p.len()
                    );
                }
                let positions = compression::decode_u64_sequence(&v.positions.encoding, payload, n)
                    .map_err(|e| e.context("validity positions"))?;
                crate::ensure_corrupt!(
                    positions.len() == n,
                    "decoded {} positions, expected {n}",
                    positions.len()
                );
                crate::ensure_corrupt!(
                    positions.windows(2).all(|w| w[0] < w[1]),
                    "validity positions are not increasing"
                );
                Some(FlatValidity {
                    null_positions: v.null_positions,
                    positions,
                })
            }
            None => None,
        };
        let nested = match &self.flat_validity {
            Some(_) => None,
            None => Some(super::sparse_nested::NestedStructure::from_buffers(
                self, structural,
            )?),
        };
        Ok(SparseInit {
            values,
            flat_validity: valid,
            nested,
        })
    }

    /// Plan the value read for page-local rows.
    pub fn plan(&self, init: &SparseInit, rows: &RowRanges) -> Result<PageReadPlan> {
        if let Some(nested) = &init.nested {
            return nested.plan(self, init, rows);
        }
        self.check_readable()?;
        match (&self.values, &init.values) {
            (SparseValues::Chunked(m), SparseValueInit::Chunked(i)) => m.plan(i, rows),
            (SparseValues::Zipped(z), SparseValueInit::Zipped(offsets)) => {
                let validity = init
                    .flat_validity
                    .as_ref()
                    .ok_or_else(|| Error::corrupt("sparse init without validity"))?;
                let ordinals = validity.valid_ordinal_ranges(rows);
                let page_init = match offsets {
                    Some(o) => PageInit::FullZip(super::fullzip::FullZipInit {
                        row_offsets: o.clone(),
                    }),
                    None => PageInit::None,
                };
                z.plan(&page_init, &ordinals)
            }
            (SparseValues::Constant(_) | SparseValues::None, _) => Ok(PageReadPlan {
                ranges: Vec::new(),
                detail: PlanDetail::NoData,
            }),
            _ => Err(Error::corrupt("sparse init does not match its value plane")),
        }
    }

    /// Decode page-local `rows` into an array of `data_type`.
    pub fn decode(
        &self,
        init: &SparseInit,
        rows: &RowRanges,
        plan: &PageReadPlan,
        bytes: &[Bytes],
        data_type: &DataType,
    ) -> Result<ArrayRef> {
        self.check_readable()?;
        let validity = init
            .flat_validity
            .as_ref()
            .ok_or_else(|| Error::corrupt("sparse init without validity"))?;
        let row_validity = validity.row_validity(rows);
        let mut out = LeafBuilder::new(data_type)?;
        match (&self.values, &init.values) {
            (SparseValues::Chunked(m), SparseValueInit::Chunked(i)) => {
                m.decode_into(i, rows, plan, bytes, &mut out)?;
                out.override_validity(0, &row_validity)?;
            }
            (SparseValues::Zipped(z), SparseValueInit::Zipped(_)) => {
                // Decode the materialized values, then spread them over the rows.
                let ordinals = validity.valid_ordinal_ranges(rows);
                z.decode_into(&ordinals, plan, bytes, &mut out)?;
                let values = out.finish()?;
                let mut next = 0u64;
                let indices: UInt64Array = row_validity
                    .iter()
                    .map(|&valid| {
                        valid.then(|| {
                            next += 1;
                            next - 1
                        })
                    })
                    .collect();
                crate::ensure_corrupt!(
                    next as usize == values.len(),
                    "{} valid rows but {} zipped values",
                    next,
                    values.len()
                );
                return Ok(arrow_select::take::take(values.as_ref(), &indices, None)?);
            }
            (SparseValues::Constant(scalar), _) => {
                let value = super::constant::inline_scalar(scalar, data_type)?;
                for valid in row_validity {
                    if valid {
                        out.push_repeated(&value, 0, 1)?;
                    } else {
                        out.push_nulls(1)?;
                    }
                }
            }
            (SparseValues::None, _) => {
                crate::ensure_corrupt!(
                    row_validity.iter().all(|v| !v),
                    "sparse page without values has valid rows"
                );
                out.push_nulls(row_validity.len())?;
            }
            _ => return Err(Error::corrupt("sparse init does not match its value plane")),
        }
        out.finish()
    }
}

impl SparsePage {
    /// Decode page-local `rows` of a nested sparse page (lists / fixed-size lists / structs).
    pub fn decode_nested(
        &self,
        init: &SparseInit,
        rows: &RowRanges,
        plan: &PageReadPlan,
        bytes: &[Bytes],
        leaf_type: &DataType,
    ) -> Result<super::structure::LeafData> {
        let nested = init
            .nested
            .as_ref()
            .ok_or_else(|| Error::corrupt("flat sparse page read as nested"))?;
        nested.read(self, init, rows, plan, bytes, leaf_type)
    }
}

/// Value-plane init of a sparse page.
#[derive(Debug, Clone)]
pub enum SparseValueInit {
    /// Chunk table and dictionary.
    Chunked(MiniBlockInit),
    /// Row offsets of variable-width zipped values.
    Zipped(Option<Vec<u64>>),
    /// Nothing.
    None,
}

/// Decoded validity of a flat sparse page.
#[derive(Debug, Clone)]
pub struct FlatValidity {
    /// true: `positions` are the null rows; false: the valid rows.
    pub null_positions: bool,
    /// Sorted row positions.
    pub positions: Vec<u64>,
}

impl FlatValidity {
    /// Rows before `row` that are listed in `positions`.
    fn listed_before(&self, row: u64) -> u64 {
        self.positions.partition_point(|&p| p < row) as u64
    }

    /// Valid rows before `row`.
    fn valid_before(&self, row: u64) -> u64 {
        if self.null_positions {
            row - self.listed_before(row)
        } else {
            self.listed_before(row)
        }
    }

    /// Ordinal ranges (among materialized = valid rows) covering `rows`.
    pub fn valid_ordinal_ranges(&self, rows: &RowRanges) -> Vec<Range<u64>> {
        let mut out: Vec<Range<u64>> = Vec::new();
        for r in rows {
            let o = self.valid_before(r.start)..self.valid_before(r.end);
            if o.start < o.end {
                match out.last_mut() {
                    Some(last) if last.end == o.start => last.end = o.end,
                    _ => out.push(o),
                }
            }
        }
        out
    }

    /// Validity of each row in `rows`.
    pub fn row_validity(&self, rows: &RowRanges) -> Vec<bool> {
        let mut out = Vec::with_capacity(count_rows(rows) as usize);
        for r in rows {
            let mut k = self.positions.partition_point(|&p| p < r.start);
            for row in r.clone() {
                let listed = self.positions.get(k) == Some(&row);
                if listed {
                    k += 1;
                }
                out.push(listed != self.null_positions);
            }
        }
        out
    }
}

/// Decoded page-init data of a sparse page.
#[derive(Debug, Clone)]
pub struct SparseInit {
    /// Value-plane init.
    pub values: SparseValueInit,
    /// Validity of a flat page.
    pub flat_validity: Option<FlatValidity>,
    /// Decoded structure of a nested page.
    pub nested: Option<super::sparse_nested::NestedStructure>,
}

impl SparseInit {
    /// Approximate heap size.
    pub fn deep_size(&self) -> usize {
        let values = match &self.values {
            SparseValueInit::Chunked(m) => m.deep_size(),
            SparseValueInit::Zipped(o) => o.as_ref().map_or(0, |o| o.len() * 8),
            SparseValueInit::None => 0,
        };
        values
            + self
                .flat_validity
                .as_ref()
                .map_or(0, |v| v.positions.len() * 8)
            + self.nested.as_ref().map_or(0, |n| n.deep_size())
    }
}

#[cfg(test)]
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;
    use arrow_array::{Array, Int32Array};
    use pb::compressive_encoding::Compression;

    fn flat(bits: u64) -> CompressiveEncoding {
        CompressiveEncoding {
            compression: Some(Compression::Flat(pb::Flat {
                bits_per_value: bits,
                data: None,
            })),
        }
    }

    fn validity_layer(
        meaning: Meaning,
        positions: CompressiveEncoding,
        n: u64,
    ) -> pb::SparseStructure {
        pb::SparseStructure {
            layers: vec![pb::SparseStructuralLayer {
                layer: Some(Layer::Validity(pb::SparseValiditySet {
                    meaning: meaning as i32,
                    positions: Some(positions),
                    num_positions: n,
                })),
            }],
        }
    }

    /// Read `rows` of a flat sparse page whose buffers live in `file`.
    fn read(page: &SparsePage, file: &[u8], rows: &RowRanges) -> Vec<Option<i32>> {
        let slice =
            |r: &Range<u64>| Bytes::copy_from_slice(&file[r.start as usize..r.end as usize]);
        let init_bytes: Vec<Bytes> = page.init_ranges().iter().map(slice).collect();
        let init = page.decode_init(&init_bytes).unwrap();
        let plan = page.plan(&init, rows).unwrap();
        let bytes: Vec<Bytes> = plan.ranges.iter().map(slice).collect();
        let array = page
            .decode(&init, rows, &plan, &bytes, &DataType::Int32)
            .unwrap();
        array
            .as_any()
            .downcast_ref::<Int32Array>()
            .unwrap()
            .iter()
            .collect()
    }

    #[test]
    fn chunked_values_cover_every_row_and_nulls_come_from_the_positions() {
        // Rows 0..5, nulls at 1 and 3 (Flat(64) positions payload); one chunk of 5 Flat(32)
        // values with placeholders at the null rows.
        let mut file = vec![0u8; 144];
        file[0..4].copy_from_slice(&(3u32 << 4).to_le_bytes()); // 32-byte chunk, last
        file[64..66].copy_from_slice(&0u16.to_le_bytes());
        file[66..70].copy_from_slice(&20u32.to_le_bytes());
        for (i, v) in [10i32, 0, 12, 0, 14].iter().enumerate() {
            file[72 + 4 * i..76 + 4 * i].copy_from_slice(&v.to_le_bytes());
        }
        file[128..136].copy_from_slice(&1u64.to_le_bytes());
        file[136..144].copy_from_slice(&3u64.to_le_bytes());
        let values = pb::value_plane::Codec::Chunked(pb::ChunkedValues {
            compression: Some(flat(32)),
            num_buffers: 1,
            ..Default::default()
        });
        let structure = validity_layer(Meaning::SparseValidityNullPositions, flat(64), 2);
        let page = SparsePage::new(structure, values, &[0..4, 64..96, 128..144])
            .unwrap()
            .with_rows(5)
            .unwrap();
        assert_eq!(
            read(&page, &file, &[0..5]),
            vec![Some(10), None, Some(12), None, Some(14)]
        );
        assert_eq!(read(&page, &file, &[1..2, 4..5]), vec![None, Some(14)]);
    }

    #[test]
    fn zipped_values_hold_only_the_valid_rows() {
        // Rows 0..5, valid at 0, 2, 4 (Range positions, no payload); 3 zipped Flat(32) values.
        let mut file = vec![0u8; 12];
        for (i, v) in [7i32, 8, 9].iter().enumerate() {
            file[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
        }
        let values = pb::value_plane::Codec::Zipped(pb::ZippedValues {
            compression: Some(flat(32)),
            levels: None,
            addressing: Some(pb::zipped_values::Addressing::BitsPerValue(32)),
            num_items: 3,
            num_visible_items: 3,
        });
        let range = CompressiveEncoding {
            compression: Some(Compression::Range(pb::Range {
                uncompressed_bits_per_value: 64,
                start: 0,
                step: 2,
            })),
        };
        let structure = validity_layer(Meaning::SparseValidityValidPositions, range, 3);
        let page = SparsePage::new(structure, values, &[0..12])
            .unwrap()
            .with_rows(5)
            .unwrap();
        assert_eq!(
            read(&page, &file, &[0..5]),
            vec![Some(7), None, Some(8), None, Some(9)]
        );
        assert_eq!(read(&page, &file, &[3..5]), vec![None, Some(9)]);
        let plan = page.plan(&page.decode_init(&[]).unwrap(), &[3..5]).unwrap();
        assert_eq!(
            plan.ranges,
            vec![8..12],
            "only the one materialized value of rows 3..5"
        );
    }

    #[test]
    fn flat_validity_maps_rows_to_materialized_ordinals() {
        let nulls = FlatValidity {
            null_positions: true,
            positions: vec![1, 4, 5],
        };
        assert_eq!(
            nulls.row_validity(&[0..3, 5..7]),
            vec![true, false, true, false, true]
        );
        assert_eq!(nulls.valid_ordinal_ranges(&[0..3, 5..7]), vec![0..2, 3..4]);
        let valid = FlatValidity {
            null_positions: false,
            positions: vec![2, 3],
        };
        assert_eq!(valid.row_validity(&[1..4]), vec![false, true, true]);
        assert_eq!(valid.valid_ordinal_ranges(&[0..2, 3..10]), vec![1..2]);
    }
}
