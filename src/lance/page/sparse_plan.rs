//! The structural plan of a 2.3 sparse page: its layers decoded once, validated, cached.
//!
//! A [`SparseStructuralPlan`] is built from a [`SparsePage`] (the layer metadata) and the
//! page's structural payload buffers. It holds, outer → inner, each layer's validity
//! positions and, for list layers, the non-empty positions with the first child slot of each
//! (prefix sums of the counts). Its memory is proportional to the positions stored (non-empty
//! lists + listed null/valid slots), never to the page's rows; see
//! [`SparseStructuralPlan::deep_size`].
//!
//! Decoding checks every rule of the format (see [`PlanRule`]); a page that breaks one gives
//! `Error::Corrupt` naming the rule, and the reader adds file, column and page. A read then
//! projects the selected rows layer by layer onto leaf-slot ranges ([`Projection`]), so only
//! value chunks holding those slots are fetched (see [`super::sparse_nested`]).

use std::ops::Range;

use bytes::Bytes;

use super::sparse::{SparseLayerDesc, SparsePage, SparseSequence, SparseValidity, SparseValues};
use super::structure::LayerSlots;
use super::{count_rows, RowRanges};
use crate::error::{Error, Result};
use crate::lance::compression;

/// Most entries of any sparse sequence, and most leaf slots of a nested page, lakeseek
/// decodes (guards allocations sized by counts stored in the page).
pub(crate) const MAX_SPARSE_ENTRIES: u64 = 1 << 26;

/// A rule of the sparse structure; a page that breaks one is corrupt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PlanRule {
    /// Structural buffers match the layer metadata exactly (one per sequence with a payload).
    BuffersMatch,
    /// A sequence decodes to exactly its declared number of values, within limits.
    SequenceLength,
    /// Positions are strictly increasing.
    PositionsIncreasing,
    /// Positions lie inside their layer's domain.
    PositionsInDomain,
    /// Every non-empty list has a positive child count.
    CountsPositive,
    /// Child counts sum to the layer's `num_child_slots`.
    CountsSum,
    /// Domains chain from the page rows to the leaf slots, ending in the leaf validity.
    DomainsChain,
    /// The value plane holds exactly the values the structure says are materialized.
    ValuesMatchStructure,
}

impl PlanRule {
    /// Short name used in error messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            PlanRule::BuffersMatch => "buffers match layers",
            PlanRule::SequenceLength => "sequence length",
            PlanRule::PositionsIncreasing => "positions strictly increasing",
            PlanRule::PositionsInDomain => "positions inside the domain",
            PlanRule::CountsPositive => "counts positive",
            PlanRule::CountsSum => "counts sum to child slots",
            PlanRule::DomainsChain => "domains chain",
            PlanRule::ValuesMatchStructure => "values match structure",
        }
    }

    /// A `Corrupt` error saying this rule was broken.
    pub(crate) fn broken(self, detail: impl std::fmt::Display) -> Error {
        Error::corrupt(format!("sparse rule '{}' broken: {detail}", self.name()))
    }
}

macro_rules! require {
    ($cond:expr, $rule:expr, $($arg:tt)+) => {
        if !$cond {
            return Err($rule.broken(format!($($arg)+)));
        }
    };
}

/// Decoded validity of one layer: the listed positions and what they mean.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotValidity {
    /// true: `positions` are the null slots; false: the valid slots.
    pub null_positions: bool,
    /// Sorted slot positions.
    pub positions: Vec<u64>,
}

impl SlotValidity {
    /// Slots before `slot` that are listed in `positions`.
    fn listed_before(&self, slot: u64) -> u64 {
        self.positions.partition_point(|&p| p < slot) as u64
    }

    /// Valid slots before `slot`.
    fn valid_before(&self, slot: u64) -> u64 {
        if self.null_positions {
            slot - self.listed_before(slot)
        } else {
            self.listed_before(slot)
        }
    }

    /// Valid slots among the first `domain`.
    pub fn valid_count(&self, domain: u64) -> u64 {
        self.valid_before(domain)
    }

    /// Ordinal ranges (among the valid slots) covering `slots`.
    pub fn valid_ordinal_ranges(&self, slots: &RowRanges) -> Vec<Range<u64>> {
        let mut out: Vec<Range<u64>> = Vec::new();
        for r in slots {
            merge_into(
                &mut out,
                self.valid_before(r.start)..self.valid_before(r.end),
            );
        }
        out
    }

    /// Validity of each slot in `slots`.
    pub fn row_validity(&self, slots: &RowRanges) -> Vec<bool> {
        let mut out = Vec::with_capacity(count_rows(slots) as usize);
        for r in slots {
            let mut k = self.positions.partition_point(|&p| p < r.start);
            for slot in r.clone() {
                let listed = self.positions.get(k) == Some(&slot);
                if listed {
                    k += 1;
                }
                out.push(listed != self.null_positions);
            }
        }
        out
    }

    /// Null slots of `0..domain` as sorted, disjoint ranges (proportional to the positions).
    fn null_ranges(&self, domain: u64) -> Vec<Range<u64>> {
        let mut out = Vec::new();
        if self.null_positions {
            for &p in &self.positions {
                merge_into(&mut out, p..p + 1);
            }
        } else {
            let mut next = 0;
            for &p in &self.positions {
                merge_into(&mut out, next..p);
                next = p + 1;
            }
            merge_into(&mut out, next..domain);
        }
        out
    }

    fn deep_size(&self) -> usize {
        self.positions.capacity() * 8
    }
}

/// One decoded layer of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanLayer {
    /// Struct or leaf validity (child domain = parent domain).
    Validity(SlotValidity),
    /// A list layer.
    List {
        /// Parent slots with at least one child, strictly increasing.
        non_empty: Vec<u64>,
        /// First child slot of each non-empty slot, plus the end (`non_empty.len() + 1`).
        child_starts: Vec<u64>,
        /// List validity.
        validity: SlotValidity,
    },
    /// A fixed-size-list layer.
    FixedSizeList {
        /// Children per slot.
        dimension: u64,
        /// Validity.
        validity: SlotValidity,
    },
}

/// Size summary of one plan layer (for `inspect` and the benchmark report).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PlanLayerSummary {
    /// `validity`, `list` or `fixed_size_list`.
    pub kind: &'static str,
    /// Slots of the layer's (parent) domain.
    pub domain: u64,
    /// Non-empty positions (lists only).
    pub non_empty: u64,
    /// Listed validity positions.
    pub validity_positions: u64,
}

/// The decoded, validated structure of a 2.3 sparse page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SparseStructuralPlan {
    rows: u64,
    leaf_slots: u64,
    layers: Vec<PlanLayer>,
    /// Leaf slots that hold a materialized value (valid through every layer), sorted; only
    /// for nested pages whose value plane stores materialized values (zipped, constant).
    materialized: Option<Vec<u64>>,
}

/// Selected rows projected onto every layer.
#[derive(Debug, Clone, PartialEq)]
pub struct Projection {
    /// Slots (validity, list offsets) of each layer for the selected rows.
    pub layers: Vec<LayerSlots>,
    /// Leaf slots the selected rows reach.
    pub leaf_ranges: Vec<Range<u64>>,
}

fn decode_sequence(seq: &SparseSequence, structural: &[Bytes], what: &str) -> Result<Vec<u64>> {
    require!(
        seq.len <= MAX_SPARSE_ENTRIES,
        PlanRule::SequenceLength,
        "{what}: {} entries (limit {MAX_SPARSE_ENTRIES})",
        seq.len
    );
    let payload = match seq.payload {
        Some(i) => Some(structural.get(i).cloned().ok_or_else(|| {
            PlanRule::BuffersMatch.broken(format!("{what}: payload buffer {i} missing"))
        })?),
        None => None,
    };
    let values = compression::decode_u64_sequence(&seq.encoding, payload, seq.len as usize)
        .map_err(|e| e.context(what))?;
    require!(
        values.len() as u64 == seq.len,
        PlanRule::SequenceLength,
        "{what}: decoded {} of {} values",
        values.len(),
        seq.len
    );
    Ok(values)
}

fn check_positions(values: &[u64], domain: u64, what: &str) -> Result<()> {
    if let Some(i) = values.windows(2).position(|w| w[0] >= w[1]) {
        return Err(PlanRule::PositionsIncreasing.broken(format!(
            "{what}: entry {} is {} after {}",
            i + 1,
            values[i + 1],
            values[i]
        )));
    }
    if let Some(&last) = values.last() {
        require!(
            last < domain,
            PlanRule::PositionsInDomain,
            "{what}: position {last} in a domain of {domain} slots"
        );
    }
    Ok(())
}

fn decode_validity(
    set: &SparseValidity,
    structural: &[Bytes],
    domain: u64,
    what: &str,
) -> Result<SlotValidity> {
    let positions = decode_sequence(&set.positions, structural, what)?;
    check_positions(&positions, domain, what)?;
    Ok(SlotValidity {
        null_positions: set.null_positions,
        positions,
    })
}

fn decode_list_children(
    counts: &SparseSequence,
    structural: &[Bytes],
    num_child_slots: u64,
    what: &str,
) -> Result<Vec<u64>> {
    let counts = decode_sequence(counts, structural, what)?;
    let mut child_starts = Vec::with_capacity(counts.len() + 1);
    let mut total = 0u64;
    child_starts.push(0);
    for (i, &c) in counts.iter().enumerate() {
        require!(c > 0, PlanRule::CountsPositive, "{what}: entry {i} is 0");
        total = total
            .checked_add(c)
            .ok_or_else(|| PlanRule::CountsSum.broken(format!("{what}: the sum overflows")))?;
        child_starts.push(total);
    }
    require!(
        total == num_child_slots,
        PlanRule::CountsSum,
        "{what} sum to {total}, the layer has {num_child_slots} child slots"
    );
    Ok(child_starts)
}

/// Append `r` to sorted, disjoint `ranges`, merging when adjacent; empty ranges are skipped.
pub(crate) fn merge_into(ranges: &mut Vec<Range<u64>>, r: Range<u64>) {
    if r.start >= r.end {
        return;
    }
    match ranges.last_mut() {
        Some(last) if last.end >= r.start => last.end = last.end.max(r.end),
        _ => ranges.push(r),
    }
}

/// Union of two sorted, disjoint range lists.
fn union(a: &[Range<u64>], b: &[Range<u64>]) -> Vec<Range<u64>> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let take_a = j >= b.len() || (i < a.len() && a[i].start <= b[j].start);
        let r = if take_a { &a[i] } else { &b[j] };
        merge_into(&mut out, r.clone());
        if take_a {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
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

fn and_alive(valid: Vec<bool>, alive: &[bool]) -> Vec<bool> {
    valid.iter().zip(alive).map(|(v, a)| *v && *a).collect()
}

/// Decode layer `i` over `domain` slots; returns it with the domain of the layer below
/// (`nested`: the page has more than one layer).
fn decode_layer(
    i: usize,
    layer: &SparseLayerDesc,
    structural: &[Bytes],
    domain: u64,
    nested: bool,
) -> Result<(PlanLayer, u64)> {
    match layer {
        SparseLayerDesc::Validity(set) => Ok((
            PlanLayer::Validity(decode_validity(
                set,
                structural,
                domain,
                &format!("layer {i} validity positions"),
            )?),
            domain,
        )),
        SparseLayerDesc::List {
            num_child_slots,
            non_empty,
            counts,
            validity,
        } => {
            let layer = decode_list_layer(
                i,
                non_empty,
                counts,
                validity,
                *num_child_slots,
                structural,
                domain,
            )?;
            let domain = *num_child_slots;
            require!(
                domain <= MAX_SPARSE_ENTRIES,
                PlanRule::DomainsChain,
                "layer {i} has {domain} child slots (limit {MAX_SPARSE_ENTRIES})"
            );
            Ok((layer, domain))
        }
        SparseLayerDesc::FixedSizeList {
            dimension,
            validity,
        } => {
            let what = format!("layer {i} validity positions");
            let validity = decode_validity(validity, structural, domain, &what)?;
            let child_domain = domain
                .checked_mul(*dimension)
                .filter(|&d| d <= MAX_SPARSE_ENTRIES || !nested)
                .ok_or_else(|| {
                    PlanRule::DomainsChain.broken(format!(
                        "layer {i}: {domain} slots × {dimension} is too many"
                    ))
                })?;
            let layer = PlanLayer::FixedSizeList {
                dimension: *dimension,
                validity,
            };
            Ok((layer, child_domain))
        }
    }
}

/// A list layer `i` over `domain` slots: its non-empty positions, the child slots each
/// starts at (from the counts) and its validity.
fn decode_list_layer(
    i: usize,
    non_empty: &SparseSequence,
    counts: &SparseSequence,
    validity: &SparseValidity,
    num_child_slots: u64,
    structural: &[Bytes],
    domain: u64,
) -> Result<PlanLayer> {
    let what = format!("layer {i} non-empty positions");
    let non_empty = decode_sequence(non_empty, structural, &what)?;
    check_positions(&non_empty, domain, &what)?;
    let what = format!("layer {i} counts");
    let child_starts = decode_list_children(counts, structural, num_child_slots, &what)?;
    require!(
        child_starts.len() == non_empty.len() + 1,
        PlanRule::SequenceLength,
        "layer {i}: {} counts for {} non-empty positions",
        child_starts.len() - 1,
        non_empty.len()
    );
    let what = format!("layer {i} list validity positions");
    let validity = decode_validity(validity, structural, domain, &what)?;
    Ok(PlanLayer::List {
        non_empty,
        child_starts,
        validity,
    })
}

impl SparseStructuralPlan {
    /// Decode and validate the structure of `page` from its structural payload buffers
    /// (in the order of [`SparsePage::structural_buffers`]).
    pub fn decode(page: &SparsePage, structural: &[Bytes]) -> Result<Self> {
        require!(
            structural.len() == page.structural_buffers.len(),
            PlanRule::BuffersMatch,
            "{} structural buffers given, the layers use {}",
            structural.len(),
            page.structural_buffers.len()
        );
        let nested = page.layers.len() > 1;
        let mut domain = page.rows;
        let mut layers = Vec::with_capacity(page.layers.len());
        for (i, layer) in page.layers.iter().enumerate() {
            let (decoded, child_domain) = decode_layer(i, layer, structural, domain, nested)?;
            layers.push(decoded);
            domain = child_domain;
        }
        require!(
            domain == page.leaf_slots,
            PlanRule::DomainsChain,
            "the layers end in {domain} leaf slots, the page has {}",
            page.leaf_slots
        );
        require!(
            matches!(layers.last(), Some(PlanLayer::Validity(_))),
            PlanRule::DomainsChain,
            "the inner-most layer is not the leaf's validity"
        );
        let mut plan = Self {
            rows: page.rows,
            leaf_slots: domain,
            layers,
            materialized: None,
        };
        if nested
            && matches!(
                page.values,
                SparseValues::Zipped(_) | SparseValues::Constant(_)
            )
        {
            plan.materialized = Some(plan.materialized_slots()?);
        }
        if let SparseValues::Zipped(z) = &page.values {
            let materialized = plan.materialized_count();
            require!(
                z.num_items == materialized,
                PlanRule::ValuesMatchStructure,
                "{materialized} materialized slots, the zipped values hold {}",
                z.num_items
            );
        }
        Ok(plan)
    }

    /// Top-level rows of the page.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Slots of the leaf domain.
    pub fn leaf_slots(&self) -> u64 {
        self.leaf_slots
    }

    /// The decoded layers, outer → inner.
    pub fn layers(&self) -> &[PlanLayer] {
        &self.layers
    }

    /// The validity of a flat page (a single validity layer).
    pub fn flat_validity(&self) -> Option<&SlotValidity> {
        match self.layers.as_slice() {
            [PlanLayer::Validity(v)] => Some(v),
            _ => None,
        }
    }

    /// Leaf slots that hold a value (valid through every layer): nested zipped/constant
    /// pages keep the list; flat pages count their valid rows.
    pub fn materialized_count(&self) -> u64 {
        match (&self.materialized, self.flat_validity()) {
            (Some(m), _) => m.len() as u64,
            (None, Some(v)) => v.valid_count(self.rows),
            (None, None) => self.leaf_slots,
        }
    }

    /// Leaf slots valid through every layer, computed from the null ranges of each layer
    /// carried down (work proportional to positions + leaf slots, not to rows).
    fn materialized_slots(&self) -> Result<Vec<u64>> {
        let mut domain = self.rows;
        let mut dead: Vec<Range<u64>> = Vec::new();
        for layer in &self.layers {
            match layer {
                PlanLayer::Validity(v) => dead = union(&dead, &v.null_ranges(domain)),
                PlanLayer::List {
                    non_empty,
                    child_starts,
                    validity,
                } => {
                    let parents = union(&dead, &validity.null_ranges(domain));
                    let mut children = Vec::new();
                    for r in &parents {
                        let a = non_empty.partition_point(|&p| p < r.start);
                        let b = non_empty.partition_point(|&p| p < r.end);
                        merge_into(&mut children, child_starts[a]..child_starts[b]);
                    }
                    dead = children;
                    domain = *child_starts.last().unwrap_or(&0);
                }
                PlanLayer::FixedSizeList {
                    dimension,
                    validity,
                } => {
                    dead = union(&dead, &validity.null_ranges(domain))
                        .into_iter()
                        .map(|r| r.start * dimension..r.end * dimension)
                        .collect();
                    domain *= dimension;
                }
            }
        }
        require!(
            domain <= MAX_SPARSE_ENTRIES,
            PlanRule::DomainsChain,
            "{domain} leaf slots (limit {MAX_SPARSE_ENTRIES})"
        );
        let mut out = Vec::new();
        let mut next = 0u64;
        for r in dead.iter().chain(std::iter::once(&(domain..domain))) {
            out.extend(next..r.start.min(domain));
            next = r.end;
        }
        Ok(out)
    }

    /// Approximate heap size (what the cache is weighed by).
    pub fn deep_size(&self) -> usize {
        let layers: usize = self
            .layers
            .iter()
            .map(|l| match l {
                PlanLayer::Validity(v) | PlanLayer::FixedSizeList { validity: v, .. } => {
                    v.deep_size()
                }
                PlanLayer::List {
                    non_empty,
                    child_starts,
                    validity,
                } => (non_empty.capacity() + child_starts.capacity()) * 8 + validity.deep_size(),
            })
            .sum();
        std::mem::size_of::<Self>()
            + self.layers.capacity() * std::mem::size_of::<PlanLayer>()
            + layers
            + self.materialized.as_ref().map_or(0, |m| m.capacity() * 8)
    }

    /// Entries of the dense repetition/definition levels that describe the same structure
    /// (one per leaf slot plus one per empty or null list): what a 2.1/2.2 page stores as
    /// rep/def levels, for comparing sizes.
    pub fn dense_level_entries(&self) -> u64 {
        let mut domain = self.rows;
        let mut entries = 0u64;
        for layer in &self.layers {
            match layer {
                PlanLayer::Validity(_) => {}
                PlanLayer::List {
                    non_empty,
                    child_starts,
                    ..
                } => {
                    entries += domain - non_empty.len() as u64;
                    domain = *child_starts.last().unwrap_or(&0);
                }
                PlanLayer::FixedSizeList { dimension, .. } => domain *= dimension,
            }
        }
        entries + domain
    }

    /// Per-layer size summary.
    pub fn summary(&self) -> Vec<PlanLayerSummary> {
        let mut domain = self.rows;
        let mut out = Vec::with_capacity(self.layers.len());
        for layer in &self.layers {
            let (kind, non_empty, validity, next) = match layer {
                PlanLayer::Validity(v) => ("validity", 0, v, domain),
                PlanLayer::List {
                    non_empty,
                    child_starts,
                    validity,
                } => (
                    "list",
                    non_empty.len() as u64,
                    validity,
                    *child_starts.last().unwrap_or(&0),
                ),
                PlanLayer::FixedSizeList {
                    dimension,
                    validity,
                } => ("fixed_size_list", 0, validity, domain * dimension),
            };
            out.push(PlanLayerSummary {
                kind,
                domain,
                non_empty,
                validity_positions: validity.positions.len() as u64,
            });
            domain = next;
        }
        out
    }

    /// Project page-local `rows` through every layer (validity inherited downwards).
    pub fn project(&self, rows: &RowRanges) -> Result<Projection> {
        let mut ranges: Vec<Range<u64>> = Vec::new();
        for r in rows {
            crate::ensure_corrupt!(
                r.end <= self.rows,
                "rows {r:?} past the page's {}",
                self.rows
            );
            merge_into(&mut ranges, r.clone());
        }
        let mut alive: Vec<bool> = vec![true; count_rows(&ranges) as usize];
        let mut layers = Vec::with_capacity(self.layers.len());
        for layer in &self.layers {
            match layer {
                PlanLayer::Validity(set) => {
                    let valid = and_alive(set.row_validity(&ranges), &alive);
                    layers.push(slots(valid.clone(), None));
                    alive = valid;
                }
                PlanLayer::List {
                    non_empty,
                    child_starts,
                    validity,
                } => {
                    let valid = and_alive(validity.row_validity(&ranges), &alive);
                    let mut offsets = Vec::with_capacity(valid.len() + 1);
                    offsets.push(0i64);
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
                        merge_into(&mut child_ranges, child_starts[k0]..child_starts[k]);
                    }
                    layers.push(slots(valid, Some(offsets)));
                    ranges = child_ranges;
                    alive = child_alive;
                }
                PlanLayer::FixedSizeList {
                    dimension,
                    validity,
                } => {
                    let valid = and_alive(validity.row_validity(&ranges), &alive);
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

    fn materialized(&self) -> Result<&[u64]> {
        self.materialized
            .as_deref()
            .ok_or_else(|| Error::corrupt("materialized slots not decoded"))
    }

    /// Ordinal ranges (among materialized slots) covering `leaf_ranges`.
    pub fn ordinals(&self, leaf_ranges: &[Range<u64>]) -> Result<Vec<Range<u64>>> {
        let materialized = self.materialized()?;
        let mut out = Vec::new();
        for r in leaf_ranges {
            let a = materialized.partition_point(|&s| s < r.start) as u64;
            let b = materialized.partition_point(|&s| s < r.end) as u64;
            merge_into(&mut out, a..b);
        }
        Ok(out)
    }

    /// For each selected leaf slot, its materialized ordinal relative to the first selected
    /// materialized slot (`None` when the slot holds no value).
    pub fn spread(&self, leaf_ranges: &[Range<u64>]) -> Result<Vec<Option<u64>>> {
        let materialized = self.materialized()?;
        let mut next = 0u64;
        let mut out = Vec::with_capacity(count_rows(leaf_ranges) as usize);
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
        Ok(out)
    }
}

#[cfg(test)]
#[path = "sparse_plan_tests.rs"]
mod tests;
