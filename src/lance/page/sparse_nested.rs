//! Nested 2.3 sparse pages: the structure (validity sets, list positions/counts,
//! fixed-size-list layers) is decoded whole at page init and cached; a read projects the
//! wanted rows layer by layer onto leaf-slot ranges, then reads only the values of those
//! slots (chunked: the chunks holding them; zipped: the materialized slots among them).

use std::ops::Range;

use arrow_array::{Array, UInt64Array};
use arrow_schema::DataType;
use bytes::Bytes;

use super::fullzip::FullZipInit;
use super::sparse::{
    FlatValidity, SparseInit, SparseLayerDesc, SparsePage, SparseSequence, SparseValidity,
    SparseValueInit, SparseValues,
};
use super::structure::{LayerSlots, LeafData};
use super::values::LeafBuilder;
use super::{PageInit, PageReadPlan, PlanDetail, RowRanges};
use crate::error::{Error, Result};
use crate::lance::compression;

/// Most entries of any sparse domain or sequence lakeseek decodes (guards allocations
/// sized by counts stored in the page).
const MAX_SPARSE_ENTRIES: u64 = 1 << 26;

/// A decoded sparse layer.
#[derive(Debug, Clone)]
enum DecodedLayer {
    Validity(FlatValidity),
    List {
        non_empty: Vec<u64>,
        child_starts: Vec<u64>,
        validity: FlatValidity,
    },
    FixedSizeList {
        dimension: u64,
        validity: FlatValidity,
    },
}

/// The decoded structure of a nested sparse page.
#[derive(Debug, Clone)]
pub struct NestedStructure {
    layers: Vec<DecodedLayer>,
    /// Leaf slots that hold a materialized value (valid through every layer), sorted;
    /// only for value planes that store materialized values (zipped, constant).
    materialized: Option<Vec<u64>>,
}

/// Rows projected onto every layer.
struct Projection {
    layers: Vec<LayerSlots>,
    leaf_ranges: Vec<Range<u64>>,
}

fn decode_sequence(seq: &SparseSequence, structural: &[Bytes], what: &str) -> Result<Vec<u64>> {
    crate::ensure_corrupt!(seq.len <= MAX_SPARSE_ENTRIES, "{what}: {} entries", seq.len);
    let payload = match seq.payload {
        Some(i) => Some(
            structural
                .get(i)
                .cloned()
                .ok_or_else(|| Error::corrupt(format!("{what}: payload buffer missing")))?,
        ),
        None => None,
    };
    let values = compression::decode_u64_sequence(&seq.encoding, payload, seq.len as usize)
        .map_err(|e| e.context(what))?;
    crate::ensure_corrupt!(
        values.len() as u64 == seq.len,
        "{what}: decoded {} of {} values",
        values.len(),
        seq.len
    );
    Ok(values)
}

fn strictly_increasing_below(values: &[u64], bound: u64, what: &str) -> Result<()> {
    crate::ensure_corrupt!(
        values.windows(2).all(|w| w[0] < w[1]),
        "{what} are not strictly increasing"
    );
    crate::ensure_corrupt!(
        values.last().is_none_or(|&v| v < bound),
        "{what} reach past the domain of {bound} slots"
    );
    Ok(())
}

fn decode_validity(
    set: &SparseValidity,
    structural: &[Bytes],
    domain: u64,
    what: &str,
) -> Result<FlatValidity> {
    let positions = decode_sequence(&set.positions, structural, what)?;
    strictly_increasing_below(&positions, domain, what)?;
    Ok(FlatValidity {
        null_positions: set.null_positions,
        positions,
    })
}

fn merge(ranges: &mut Vec<Range<u64>>, r: Range<u64>) {
    if r.start >= r.end {
        return;
    }
    match ranges.last_mut() {
        Some(last) if last.end == r.start => last.end = r.end,
        _ => ranges.push(r),
    }
}

impl NestedStructure {
    /// Decode every structural sequence of `page` from its structural buffers.
    pub fn from_buffers(page: &SparsePage, structural: &[Bytes]) -> Result<Self> {
        let mut domain = page.rows;
        let mut layers = Vec::with_capacity(page.layers.len());
        for (i, layer) in page.layers.iter().enumerate() {
            crate::ensure_corrupt!(
                domain <= MAX_SPARSE_ENTRIES,
                "sparse layer {i} has {domain} slots"
            );
            let decoded = match layer {
                SparseLayerDesc::Validity(set) => DecodedLayer::Validity(decode_validity(
                    set,
                    structural,
                    domain,
                    &format!("layer {i} validity"),
                )?),
                SparseLayerDesc::List {
                    num_child_slots,
                    non_empty,
                    counts,
                    validity,
                } => {
                    let positions = decode_sequence(
                        non_empty,
                        structural,
                        &format!("layer {i} non-empty positions"),
                    )?;
                    strictly_increasing_below(
                        &positions,
                        domain,
                        &format!("layer {i} non-empty positions"),
                    )?;
                    let counts = decode_sequence(counts, structural, &format!("layer {i} counts"))?;
                    let mut child_starts = Vec::with_capacity(counts.len() + 1);
                    child_starts.push(0u64);
                    for &c in &counts {
                        crate::ensure_corrupt!(
                            c > 0,
                            "layer {i}: a non-empty list with 0 children"
                        );
                        let next = child_starts.last().copied().unwrap_or(0).checked_add(c);
                        child_starts
                            .push(next.ok_or_else(|| Error::corrupt("child counts overflow"))?);
                    }
                    crate::ensure_corrupt!(
                        child_starts.last() == Some(num_child_slots),
                        "layer {i}: counts sum to {:?}, the layer has {num_child_slots} child slots",
                        child_starts.last()
                    );
                    let validity = decode_validity(
                        validity,
                        structural,
                        domain,
                        &format!("layer {i} list validity"),
                    )?;
                    domain = *num_child_slots;
                    DecodedLayer::List {
                        non_empty: positions,
                        child_starts,
                        validity,
                    }
                }
                SparseLayerDesc::FixedSizeList {
                    dimension,
                    validity,
                } => {
                    let validity = decode_validity(
                        validity,
                        structural,
                        domain,
                        &format!("layer {i} validity"),
                    )?;
                    domain = domain
                        .checked_mul(*dimension)
                        .ok_or_else(|| Error::corrupt("slot count overflows"))?;
                    DecodedLayer::FixedSizeList {
                        dimension: *dimension,
                        validity,
                    }
                }
            };
            layers.push(decoded);
        }
        crate::ensure_corrupt!(
            domain == page.leaf_slots,
            "structure ends in {domain} leaf slots, expected {}",
            page.leaf_slots
        );
        crate::ensure_corrupt!(
            matches!(layers.last(), Some(DecodedLayer::Validity(_))),
            "the inner-most sparse layer is not the leaf's validity"
        );
        let mut structure = Self {
            layers,
            materialized: None,
        };
        if matches!(
            page.values,
            SparseValues::Zipped(_) | SparseValues::Constant(_)
        ) {
            crate::ensure_corrupt!(
                page.leaf_slots <= MAX_SPARSE_ENTRIES,
                "{} leaf slots",
                page.leaf_slots
            );
            let all = structure.project(page.rows, std::slice::from_ref(&(0..page.rows)))?;
            let alive = all
                .layers
                .last()
                .map(|l| l.validity.clone().unwrap_or_else(|| vec![true; l.len]))
                .unwrap_or_default();
            structure.materialized = Some(
                (0..alive.len() as u64)
                    .filter(|&s| alive[s as usize])
                    .collect(),
            );
        }
        Ok(structure)
    }

    /// Approximate heap size.
    pub fn deep_size(&self) -> usize {
        let layers: usize = self
            .layers
            .iter()
            .map(|l| match l {
                DecodedLayer::Validity(v) | DecodedLayer::FixedSizeList { validity: v, .. } => {
                    v.positions.len() * 8
                }
                DecodedLayer::List {
                    non_empty,
                    child_starts,
                    validity,
                } => (non_empty.len() + child_starts.len() + validity.positions.len()) * 8,
            })
            .sum();
        layers + self.materialized.as_ref().map_or(0, |m| m.len() * 8)
    }

    /// Project page-local `rows` through every layer (validity inherited downwards).
    fn project(&self, page_rows: u64, rows: &RowRanges) -> Result<Projection> {
        let mut ranges: Vec<Range<u64>> = Vec::new();
        for r in rows {
            crate::ensure_corrupt!(r.end <= page_rows, "rows {r:?} past the page's {page_rows}");
            merge(&mut ranges, r.clone());
        }
        let mut alive: Vec<bool> = vec![true; super::count_rows(&ranges) as usize];
        let mut layers = Vec::with_capacity(self.layers.len());
        for layer in &self.layers {
            match layer {
                DecodedLayer::Validity(set) => {
                    let valid: Vec<bool> = set
                        .row_validity(&ranges)
                        .iter()
                        .zip(&alive)
                        .map(|(v, a)| *v && *a)
                        .collect();
                    layers.push(slots(valid.clone(), None));
                    alive = valid;
                }
                DecodedLayer::List {
                    non_empty,
                    child_starts,
                    validity,
                } => {
                    let valid: Vec<bool> = validity
                        .row_validity(&ranges)
                        .iter()
                        .zip(&alive)
                        .map(|(v, a)| *v && *a)
                        .collect();
                    let mut offsets = vec![0i64];
                    let mut child_ranges = Vec::new();
                    let mut child_alive = Vec::new();
                    let mut slot = 0usize;
                    for r in &ranges {
                        let k0 = non_empty.partition_point(|&p| p < r.start);
                        let mut k = k0;
                        for p in r.clone() {
                            let children = if non_empty.get(k) == Some(&p) {
                                k += 1;
                                child_starts[k] - child_starts[k - 1]
                            } else {
                                0
                            };
                            let last = *offsets.last().unwrap_or(&0);
                            offsets.push(last + children as i64);
                            child_alive.extend(std::iter::repeat_n(valid[slot], children as usize));
                            slot += 1;
                        }
                        merge(&mut child_ranges, child_starts[k0]..child_starts[k]);
                    }
                    layers.push(slots(valid, Some(offsets)));
                    ranges = child_ranges;
                    alive = child_alive;
                }
                DecodedLayer::FixedSizeList {
                    dimension,
                    validity,
                } => {
                    let valid: Vec<bool> = validity
                        .row_validity(&ranges)
                        .iter()
                        .zip(&alive)
                        .map(|(v, a)| *v && *a)
                        .collect();
                    let d = *dimension as usize;
                    alive = valid
                        .iter()
                        .flat_map(|&v| std::iter::repeat_n(v, d))
                        .collect();
                    layers.push(slots(valid, None));
                    ranges = ranges
                        .iter()
                        .map(|r| r.start * dimension..r.end * dimension)
                        .collect();
                }
            }
        }
        Ok(Projection {
            layers,
            leaf_ranges: ranges,
        })
    }

    /// Ordinal ranges (among materialized slots) covering `leaf_ranges`.
    fn ordinals(&self, leaf_ranges: &[Range<u64>]) -> Result<Vec<Range<u64>>> {
        let materialized = self
            .materialized
            .as_ref()
            .ok_or_else(|| Error::corrupt("materialized slots not decoded"))?;
        let mut out = Vec::new();
        for r in leaf_ranges {
            let a = materialized.partition_point(|&s| s < r.start) as u64;
            let b = materialized.partition_point(|&s| s < r.end) as u64;
            merge(&mut out, a..b);
        }
        Ok(out)
    }

    /// Plan the value read of page-local `rows`.
    pub fn plan(
        &self,
        page: &SparsePage,
        init: &SparseInit,
        rows: &RowRanges,
    ) -> Result<PageReadPlan> {
        let projection = self.project(page.rows, rows)?;
        match (&page.values, &init.values) {
            (SparseValues::Chunked(m), SparseValueInit::Chunked(i)) => {
                m.plan(i, &projection.leaf_ranges)
            }
            (SparseValues::Zipped(z), SparseValueInit::Zipped(offsets)) => z.plan(
                &zipped_init(offsets),
                &self.ordinals(&projection.leaf_ranges)?,
            ),
            (SparseValues::Constant(_) | SparseValues::None, _) => Ok(PageReadPlan {
                ranges: Vec::new(),
                detail: PlanDetail::NoData,
            }),
            (SparseValues::Indexed, _) => {
                Err(Error::unsupported("sparse pages with indexed values"))
            }
            _ => Err(Error::corrupt("sparse init does not match its value plane")),
        }
    }

    /// Decode page-local `rows` into the leaf's slots and values.
    pub fn read(
        &self,
        page: &SparsePage,
        init: &SparseInit,
        rows: &RowRanges,
        plan: &PageReadPlan,
        bytes: &[Bytes],
        leaf_type: &DataType,
    ) -> Result<LeafData> {
        let projection = self.project(page.rows, rows)?;
        let leaf_len = super::count_rows(&projection.leaf_ranges) as usize;
        let mut out = LeafBuilder::new(leaf_type)?;
        let values = match (&page.values, &init.values) {
            (SparseValues::Chunked(m), SparseValueInit::Chunked(i)) => {
                m.decode_into(i, &projection.leaf_ranges, plan, bytes, &mut out)?;
                out.finish()?
            }
            (SparseValues::Zipped(z), SparseValueInit::Zipped(_)) => {
                z.decode_into(
                    &self.ordinals(&projection.leaf_ranges)?,
                    plan,
                    bytes,
                    &mut out,
                )?;
                let materialized_values = out.finish()?;
                let indices = self.spread(&projection.leaf_ranges)?;
                crate::ensure_corrupt!(
                    indices.len() - indices.null_count() == materialized_values.len(),
                    "{} materialized slots but {} zipped values",
                    indices.len() - indices.null_count(),
                    materialized_values.len()
                );
                arrow_select::take::take(materialized_values.as_ref(), &indices, None)?
            }
            (SparseValues::Constant(scalar), _) => {
                let value = super::constant::inline_scalar(scalar, leaf_type)?;
                let indices = self.spread(&projection.leaf_ranges)?;
                for i in 0..indices.len() {
                    if indices.is_valid(i) {
                        out.push_repeated(&value, 0, 1)?;
                    } else {
                        out.push_nulls(1)?;
                    }
                }
                out.finish()?
            }
            (SparseValues::None, _) => {
                out.push_nulls(leaf_len)?;
                out.finish()?
            }
            (SparseValues::Indexed, _) => {
                return Err(Error::unsupported("sparse pages with indexed values"))
            }
            _ => return Err(Error::corrupt("sparse init does not match its value plane")),
        };
        crate::ensure_corrupt!(
            values.len() == leaf_len,
            "{} values for {leaf_len} leaf slots",
            values.len()
        );
        Ok(LeafData {
            layers: projection.layers,
            values,
        })
    }

    /// For each selected leaf slot, its materialized ordinal relative to the first selected
    /// materialized slot (null when the slot holds no value).
    fn spread(&self, leaf_ranges: &[Range<u64>]) -> Result<UInt64Array> {
        let materialized = self
            .materialized
            .as_ref()
            .ok_or_else(|| Error::corrupt("materialized slots not decoded"))?;
        let mut next = 0u64;
        let mut out = Vec::new();
        for r in leaf_ranges {
            let mut k = materialized.partition_point(|&s| s < r.start);
            for slot in r.clone() {
                if materialized.get(k) == Some(&slot) {
                    k += 1;
                    out.push(Some(next));
                    next += 1;
                } else {
                    out.push(None);
                }
            }
        }
        Ok(out.into_iter().collect())
    }
}

fn slots(valid: Vec<bool>, offsets: Option<Vec<i64>>) -> LayerSlots {
    let len = valid.len();
    let validity = (!valid.iter().all(|v| *v)).then_some(valid);
    LayerSlots {
        len,
        validity,
        offsets,
    }
}

fn zipped_init(offsets: &Option<Vec<u64>>) -> PageInit {
    match offsets {
        Some(o) => PageInit::FullZip(FullZipInit {
            row_offsets: o.clone(),
        }),
        None => PageInit::None,
    }
}
