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
use super::sparse_plan::{PlanRule, SlotValidity, SparseStructuralPlan};
use super::values::LeafBuilder;
use super::{PageInit, PageReadPlan, PlanDetail, RowRanges};
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
        if buffers.get(*next).is_none() {
            return Err(PlanRule::BuffersMatch.broken(format!(
                "structural payload {} is missing ({} structural buffers)",
                *next,
                buffers.len()
            )));
        }
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

/// Buffers a value plane takes (they come before the structural ones).
fn value_buffer_count(values: &pb::value_plane::Codec) -> usize {
    use pb::value_plane::Codec;
    match values {
        Codec::Indexed(_) => 3,
        Codec::Chunked(v) => 2 + usize::from(v.dictionary.is_some()),
        Codec::Zipped(v) => {
            1 + usize::from(matches!(
                v.addressing,
                Some(pb::zipped_values::Addressing::BitsPerOffset(_))
            ))
        }
        Codec::Constant(_) | Codec::None(_) => 0,
    }
}

/// The layers of a sparse page with their structural payloads located.
struct LayerWalk {
    layers: Vec<SparseLayerDesc>,
    /// The validity of a page with one layer.
    flat_validity: Option<SparseValidity>,
    /// Leaf slots per row (product of the fixed-size-list dimensions).
    row_scale: u64,
}

/// Walk the layers: locate their structural payloads (which must use every structural
/// buffer) and compute the row scale.
fn walk_layers(
    structure: &pb::SparseStructure,
    structural_buffers: &[Range<u64>],
) -> Result<LayerWalk> {
    let mut next = 0usize;
    let mut walk = LayerWalk {
        layers: Vec::with_capacity(structure.layers.len()),
        flat_validity: None,
        row_scale: 1,
    };
    for (i, layer) in structure.layers.iter().enumerate() {
        let desc = match &layer.layer {
            Some(Layer::Validity(set)) => {
                let v = validity(&Some(set.clone()), structural_buffers, &mut next)?;
                if structure.layers.len() == 1 && i == 0 {
                    walk.flat_validity = Some(v.clone());
                }
                SparseLayerDesc::Validity(v)
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
                SparseLayerDesc::List {
                    num_child_slots: list.num_child_slots,
                    non_empty,
                    counts,
                    validity,
                }
            }
            Some(Layer::FixedSizeList(fsl)) => {
                crate::ensure_corrupt!(
                    fsl.dimension > 0,
                    "sparse fixed-size-list layer of dimension 0"
                );
                walk.row_scale = walk
                    .row_scale
                    .checked_mul(fsl.dimension)
                    .ok_or_else(|| Error::corrupt("sparse fixed-size-list scale overflows"))?;
                let validity = validity(&fsl.validity, structural_buffers, &mut next)?;
                SparseLayerDesc::FixedSizeList {
                    dimension: fsl.dimension,
                    validity,
                }
            }
            None => return Err(Error::corrupt(format!("sparse layer {i} has no kind"))),
        };
        walk.layers.push(desc);
    }
    if next != structural_buffers.len() {
        return Err(PlanRule::BuffersMatch.broken(format!(
            "the page has {} structural buffers, its layers use {next}",
            structural_buffers.len()
        )));
    }
    Ok(walk)
}

impl SparsePage {
    /// Build from the stored structure and value plane.
    pub fn new(
        structure: pb::SparseStructure,
        values: pb::value_plane::Codec,
        buffers: &[Range<u64>],
    ) -> Result<Self> {
        crate::ensure_corrupt!(!structure.layers.is_empty(), "sparse page has no layers");
        let value_buffer_count = value_buffer_count(&values);
        crate::ensure_corrupt!(
            buffers.len() >= value_buffer_count,
            "sparse page has {} buffers, its value plane needs {value_buffer_count}",
            buffers.len()
        );
        let (value_buffers, structural_buffers) = buffers.split_at(value_buffer_count);
        let LayerWalk {
            layers,
            flat_validity,
            row_scale,
        } = walk_layers(&structure, structural_buffers)?;
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
        let plan = SparseStructuralPlan::decode(self, structural)?;
        Ok(SparseInit {
            values,
            plan: std::sync::Arc::new(plan),
        })
    }

    /// Plan the value read for page-local rows.
    pub fn plan(&self, init: &SparseInit, rows: &RowRanges) -> Result<PageReadPlan> {
        if init.plan.flat_validity().is_none() {
            return init.plan.plan_values(self, init, rows);
        }
        self.check_readable()?;
        match (&self.values, &init.values) {
            (SparseValues::Chunked(m), SparseValueInit::Chunked(i)) => m.plan(i, rows),
            (SparseValues::Zipped(z), SparseValueInit::Zipped(offsets)) => {
                let validity = flat_validity(init)?;
                let ordinals = validity.valid_ordinal_ranges(rows);
                z.plan_with_offsets(offsets.as_deref(), &ordinals)
            }
            (SparseValues::Constant(_) | SparseValues::None, _) => Ok(PageReadPlan {
                ranges: Vec::new(),
                detail: PlanDetail::NoData,
                projection: None,
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
        let validity = flat_validity(init)?;
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
        crate::ensure_corrupt!(
            init.plan.flat_validity().is_none(),
            "flat sparse page read as nested"
        );
        init.plan.read(self, init, rows, plan, bytes, leaf_type)
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

fn flat_validity(init: &SparseInit) -> Result<&SlotValidity> {
    init.plan
        .flat_validity()
        .ok_or_else(|| Error::corrupt("nested sparse page read as a flat column"))
}

/// Decoded page-init data of a sparse page.
#[derive(Debug, Clone)]
pub struct SparseInit {
    /// Value-plane init.
    pub values: SparseValueInit,
    /// The page's decoded, validated structure. The leaf columns of one nested field repeat
    /// the same structure in their own pages; the reader lets pages decoded together share
    /// one plan (see `LanceFileReader`'s page init).
    pub plan: std::sync::Arc<SparseStructuralPlan>,
}

impl SparseInit {
    /// Approximate heap size.
    pub fn deep_size(&self) -> usize {
        let values = match &self.values {
            SparseValueInit::Chunked(m) => m.deep_size(),
            SparseValueInit::Zipped(o) => o.as_ref().map_or(0, |o| o.len() * 8),
            SparseValueInit::None => 0,
        };
        values + self.plan.deep_size()
    }
}

#[cfg(test)]
#[path = "sparse_tests.rs"]
mod tests;
