//! Structure of nested leaf columns: dense repetition/definition levels (2.1, 2.2, 2.3
//! dense) turned into per-layer slots (list offsets and validity), and the Arrow arrays of
//! a field tree assembled from the leaves' slots.
//!
//! Layers are stored inner → outer (`[leaf, struct, list]` for `list<struct<leaf>>`); here
//! they are kept outer → inner. Definition levels: 0 = valid all the way down; walking the
//! layers inner → outer with `b` levels used so far, a nullable item/list is null at
//! `b + 1`, an emptyable list is empty at `b + 1`, a null-and-empty list is null at `b + 1`
//! and empty at `b + 2`. Repetition levels: `max_rep` (= number of list layers) starts a
//! new row; `r < max_rep` adds an item to the list of depth `r + 1` (inner-most = 1).

use std::sync::Arc;

use arrow_array::{
    make_array, Array, ArrayRef, FixedSizeListArray, LargeListArray, ListArray, MapArray,
    StructArray,
};
use arrow_buffer::{BooleanBuffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field as ArrowField};

use crate::error::{Error, Result};
use crate::lance::proto::encodings::RepDefLayer;

/// Kind of a structural layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerKind {
    /// A list (one level of repetition).
    List,
    /// A struct or the leaf.
    Item,
}

/// One layer of a dense structure with its definition-level meanings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DenseLayer {
    /// List or item.
    pub kind: LayerKind,
    /// Definition level meaning "null at this layer".
    pub null_def: Option<u16>,
    /// Definition level meaning "empty list at this layer".
    pub empty_def: Option<u16>,
    /// For lists: depth counted from the inner-most list (= 1).
    pub list_depth: u16,
}

/// The layers of a dense page, outer → inner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DenseStructure {
    /// Layers, outer → inner (the last is the leaf).
    pub layers: Vec<DenseLayer>,
    /// Number of list layers.
    pub max_rep: u16,
    /// Largest definition level that still reaches the leaf (a value slot).
    pub max_visible_def: u16,
}

impl DenseStructure {
    /// Build from stored layers (inner → outer).
    pub fn new(stored: &[RepDefLayer]) -> Result<Self> {
        crate::ensure_corrupt!(!stored.is_empty(), "page has no rep/def layers");
        crate::ensure_corrupt!(stored.len() <= 64, "{} structural layers", stored.len());
        let mut layers = Vec::with_capacity(stored.len());
        let mut base = 0u16;
        let mut lists = 0u16;
        let mut max_visible_def = None;
        for (i, layer) in stored.iter().enumerate() {
            use RepDefLayer::*;
            let (kind, null_def, empty_def, used) = match layer {
                RepdefAllValidItem => (LayerKind::Item, None, None, 0),
                RepdefNullableItem => (LayerKind::Item, Some(base + 1), None, 1),
                RepdefAllValidList => (LayerKind::List, None, None, 0),
                RepdefNullableList => (LayerKind::List, Some(base + 1), None, 1),
                RepdefEmptyableList => (LayerKind::List, None, Some(base + 1), 1),
                RepdefNullAndEmptyList => (LayerKind::List, Some(base + 1), Some(base + 2), 2),
                RepdefUnspecified => return Err(Error::corrupt("unspecified rep/def layer")),
            };
            crate::ensure_corrupt!(
                i > 0 || kind == LayerKind::Item,
                "the inner-most layer is a list"
            );
            if kind == LayerKind::List {
                max_visible_def.get_or_insert(base);
                lists += 1;
            }
            layers.push(DenseLayer {
                kind,
                null_def,
                empty_def,
                list_depth: if kind == LayerKind::List { lists } else { 0 },
            });
            base += used;
        }
        layers.reverse();
        Ok(Self {
            layers,
            max_rep: lists,
            max_visible_def: max_visible_def.unwrap_or(base),
        })
    }

    /// True when a level with this definition reaches the leaf (has a value slot).
    pub fn is_visible(&self, def: u16) -> bool {
        def <= self.max_visible_def
    }

    /// Index (outer → inner) of the list layer of depth `depth`.
    fn list_index(&self, depth: u16) -> Option<usize> {
        self.layers
            .iter()
            .position(|l| l.kind == LayerKind::List && l.list_depth == depth)
    }

    /// The layer a definition level makes null or empty, and whether it is empty.
    fn cut(&self, def: u16) -> Result<Option<(usize, bool)>> {
        if def == 0 {
            return Ok(None);
        }
        for (j, l) in self.layers.iter().enumerate() {
            if l.null_def == Some(def) {
                return Ok(Some((j, false)));
            }
            if l.empty_def == Some(def) {
                return Ok(Some((j, true)));
            }
        }
        Err(Error::corrupt(format!(
            "definition level {def} has no meaning in this page's layers"
        )))
    }

    /// Turn levels of whole rows into per-layer slots. `rep`/`def` are `None` when the page
    /// has none (then every level is a new row / valid). `num_levels` is their length.
    #[allow(clippy::needless_range_loop)]
    pub fn unravel(
        &self,
        rep: Option<&[u16]>,
        def: Option<&[u16]>,
        num_levels: usize,
    ) -> Result<Unraveled> {
        for (name, levels) in [("rep", rep), ("def", def)] {
            if let Some(l) = levels {
                crate::ensure_corrupt!(
                    l.len() == num_levels,
                    "{} {name} levels for {num_levels} levels",
                    l.len()
                );
            }
        }
        let mut slots: Vec<SlotBuilder> = self
            .layers
            .iter()
            .map(|l| SlotBuilder::new(l.kind))
            .collect();
        let mut leaf_slots = 0usize;
        for i in 0..num_levels {
            let r = rep.map_or(self.max_rep, |r| r[i]);
            let d = def.map_or(0, |d| d[i]);
            if self.unravel_level(&mut slots, r, d, i)? {
                leaf_slots += 1;
            }
        }
        Ok(Unraveled {
            layers: slots.into_iter().map(SlotBuilder::finish).collect(),
            leaf_slots,
        })
    }
}

impl DenseStructure {
    /// Place level `i` (repetition `r`, definition `d`): a new slot at the layer `r`
    /// continues, then slots in the layers below down to the one `d` cuts. Returns whether
    /// it reached a leaf slot.
    fn unravel_level(&self, slots: &mut [SlotBuilder], r: u16, d: u16, i: usize) -> Result<bool> {
        crate::ensure_corrupt!(
            r <= self.max_rep,
            "repetition level {r} above the maximum {}",
            self.max_rep
        );
        let start = self.new_slot_layer(slots, r, i)?;
        let cut = self.cut(d)?;
        if let Some((j, _)) = cut {
            crate::ensure_corrupt!(
                j >= start,
                "definition level {d} cuts layer {j} above the new slot at layer {start}"
            );
        }
        let leaf = self.push_slots(slots, start, cut);
        // Lists inside the new slots are closed until a later level continues them.
        for (j, s) in slots.iter_mut().enumerate().skip(start) {
            if self.layers[j].kind == LayerKind::List && cut.is_some_and(|(c, _)| c <= j) {
                s.open = false;
            }
        }
        Ok(leaf)
    }

    /// The layer where level `i`'s new slot starts: the top for a new row (`r` at its
    /// maximum), else just under the open list of depth `r + 1` it continues.
    fn new_slot_layer(&self, slots: &mut [SlotBuilder], r: u16, i: usize) -> Result<usize> {
        if r == self.max_rep {
            return Ok(0);
        }
        let list = self
            .list_index(r + 1)
            .ok_or_else(|| Error::corrupt(format!("no list of depth {}", r + 1)))?;
        let parent = &mut slots[list];
        crate::ensure_corrupt!(
            parent.open,
            "repetition level {r} continues a list that is not open (level {i})"
        );
        parent.add_child();
        Ok(list + 1)
    }

    /// Push the slots of layers `start..` for one level, stopping at the layer `cut` makes
    /// null or empty (or under a null item). Returns whether a leaf slot was pushed.
    fn push_slots(
        &self,
        slots: &mut [SlotBuilder],
        start: usize,
        cut: Option<(usize, bool)>,
    ) -> bool {
        let n = self.layers.len();
        let mut leaf = false;
        let mut inside_null_item = false;
        for (j, slot) in slots.iter_mut().enumerate().take(n).skip(start) {
            let here = cut.filter(|(c, _)| *c == j);
            match self.layers[j].kind {
                LayerKind::Item => {
                    let valid = !inside_null_item && here.is_none();
                    slot.push_item(valid);
                    inside_null_item |= here.is_some();
                    if j == n - 1 {
                        leaf = true;
                    }
                }
                LayerKind::List => {
                    if inside_null_item {
                        slot.push_list(false, false);
                        break;
                    }
                    match here {
                        Some((_, empty)) => {
                            slot.push_list(empty, false);
                            break;
                        }
                        None => {
                            slot.push_list(true, true);
                            slot.add_child();
                        }
                    }
                }
            }
        }
        leaf
    }
}

struct SlotBuilder {
    kind: LayerKind,
    validity: Vec<bool>,
    offsets: Vec<i64>,
    /// The last list slot can take more children.
    open: bool,
}

impl SlotBuilder {
    fn new(kind: LayerKind) -> Self {
        Self {
            kind,
            validity: Vec::new(),
            offsets: vec![0],
            open: false,
        }
    }

    fn push_item(&mut self, valid: bool) {
        self.validity.push(valid);
    }

    fn push_list(&mut self, valid: bool, has_children: bool) {
        self.validity.push(valid);
        let last = *self.offsets.last().unwrap_or(&0);
        self.offsets.push(last);
        self.open = has_children;
    }

    fn add_child(&mut self) {
        if let Some(last) = self.offsets.last_mut() {
            *last += 1;
        }
    }

    fn finish(self) -> LayerSlots {
        let validity = (!self.validity.iter().all(|v| *v)).then_some(self.validity.clone());
        LayerSlots {
            len: self.validity.len(),
            validity,
            offsets: (self.kind == LayerKind::List).then_some(self.offsets),
        }
    }
}

/// Slots of one layer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LayerSlots {
    /// Number of slots.
    pub len: usize,
    /// Validity of each slot (`None`: all valid).
    pub validity: Option<Vec<bool>>,
    /// Lists: `len + 1` offsets into the next layer's slots.
    pub offsets: Option<Vec<i64>>,
}

impl LayerSlots {
    /// Append another run of slots (of whole rows) after these.
    pub fn append(&mut self, other: &LayerSlots) {
        if self.validity.is_some() || other.validity.is_some() {
            let mut v = self.validity.take().unwrap_or_else(|| vec![true; self.len]);
            v.extend(
                other
                    .validity
                    .clone()
                    .unwrap_or_else(|| vec![true; other.len]),
            );
            self.validity = Some(v);
        }
        if let (Some(mine), Some(theirs)) = (&mut self.offsets, &other.offsets) {
            let base = *mine.last().unwrap_or(&0);
            mine.extend(theirs.iter().skip(1).map(|o| o + base));
        } else if self.offsets.is_none() && self.len == 0 {
            self.offsets = other.offsets.clone();
        }
        self.len += other.len;
    }

    fn nulls(&self) -> Option<NullBuffer> {
        self.validity
            .as_ref()
            .map(|v| NullBuffer::new(BooleanBuffer::from(v.clone())))
    }
}

/// Per-layer slots of some rows of one leaf column (outer → inner).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unraveled {
    /// One entry per layer.
    pub layers: Vec<LayerSlots>,
    /// Value slots of the leaf (= levels that reach the leaf).
    pub leaf_slots: usize,
}

/// A leaf column's contribution to a field: its layers (outer → inner) and its values.
#[derive(Debug, Clone)]
pub struct LeafData {
    /// Slots of each layer.
    pub layers: Vec<LayerSlots>,
    /// Values of the leaf slots, without the leaf validity.
    pub values: ArrayRef,
}

/// Build the Arrow array of `field` from the leaves under it (in depth-first order),
/// starting at layer `depth`.
pub(crate) fn assemble(field: &ArrowField, leaves: &[LeafData], depth: usize) -> Result<ArrayRef> {
    let first = leaves
        .first()
        .ok_or_else(|| Error::corrupt(format!("no leaf columns for field {:?}", field.name())))?;
    let layer = first.layers.get(depth).ok_or_else(|| {
        Error::corrupt(format!(
            "field {:?} has no structural layer {depth}",
            field.name()
        ))
    })?;
    match field.data_type() {
        DataType::Struct(children) => assemble_struct(field, children, leaves, depth, layer),
        DataType::List(item) | DataType::LargeList(item) | DataType::Map(item, _) => {
            assemble_list(field, item, leaves, depth, layer)
        }
        DataType::FixedSizeList(item, size) if matches!(item.data_type(), DataType::Struct(_)) => {
            let child = assemble(item, leaves, depth + 1)?;
            Ok(Arc::new(
                FixedSizeListArray::try_new(Arc::clone(item), *size, child, layer.nulls())
                    .map_err(corrupt)?,
            ))
        }
        _ => assemble_leaf(field, leaves, layer),
    }
}

/// A struct from its children, each assembled from its own leaves.
fn assemble_struct(
    field: &ArrowField,
    children: &arrow_schema::Fields,
    leaves: &[LeafData],
    depth: usize,
    layer: &LayerSlots,
) -> Result<ArrayRef> {
    let mut arrays = Vec::with_capacity(children.len());
    let mut used = 0;
    for child in children.iter() {
        let count = leaf_count(child.data_type());
        let part = leaves.get(used..used + count).ok_or_else(|| {
            Error::corrupt(format!(
                "struct {:?} has too few leaf columns",
                field.name()
            ))
        })?;
        arrays.push(assemble(child, part, depth + 1)?);
        used += count;
    }
    Ok(Arc::new(
        StructArray::try_new(children.clone(), arrays, layer.nulls()).map_err(corrupt)?,
    ))
}

/// A List, LargeList or Map (of `item`) on the layer's offsets.
fn assemble_list(
    field: &ArrowField,
    item: &arrow_schema::FieldRef,
    leaves: &[LeafData],
    depth: usize,
    layer: &LayerSlots,
) -> Result<ArrayRef> {
    let offsets = layer
        .offsets
        .as_ref()
        .ok_or_else(|| Error::corrupt(format!("list {:?} has no offsets", field.name())))?;
    let child = assemble(item, leaves, depth + 1)?;
    let nulls = layer.nulls();
    if let DataType::LargeList(_) = field.data_type() {
        return Ok(Arc::new(
            LargeListArray::try_new(
                Arc::clone(item),
                OffsetBuffer::new(ScalarBuffer::from(offsets.clone())),
                child,
                nulls,
            )
            .map_err(corrupt)?,
        ));
    }
    let small: Vec<i32> = offsets
        .iter()
        .map(|&o| {
            i32::try_from(o)
                .map_err(|_| Error::unsupported("list with more than 2^31 items; read fewer rows"))
        })
        .collect::<Result<_>>()?;
    let offsets = OffsetBuffer::new(ScalarBuffer::from(small));
    if let DataType::Map(_, sorted) = field.data_type() {
        let entries = child
            .as_any()
            .downcast_ref::<StructArray>()
            .ok_or_else(|| Error::corrupt("map entries are not a struct"))?;
        return Ok(Arc::new(
            MapArray::try_new(Arc::clone(item), offsets, entries.clone(), nulls, *sorted)
                .map_err(corrupt)?,
        ));
    }
    Ok(Arc::new(
        ListArray::try_new(Arc::clone(item), offsets, child, nulls).map_err(corrupt)?,
    ))
}

/// A leaf: its one column's values with the layer's validity added.
fn assemble_leaf(field: &ArrowField, leaves: &[LeafData], layer: &LayerSlots) -> Result<ArrayRef> {
    crate::ensure_corrupt!(
        leaves.len() == 1,
        "leaf {:?} has {} columns",
        field.name(),
        leaves.len()
    );
    let first = &leaves[0];
    crate::ensure_corrupt!(
        first.values.len() == layer.len,
        "leaf {:?} has {} values for {} slots",
        field.name(),
        first.values.len(),
        layer.len
    );
    let data = first.values.to_data();
    let nulls = match (layer.nulls(), data.nulls()) {
        (Some(a), Some(b)) => NullBuffer::union(Some(&a), Some(b)),
        (a, b) => a.or_else(|| b.cloned()),
    };
    let data = data.into_builder().nulls(nulls).build().map_err(corrupt)?;
    Ok(make_array(data))
}

/// Physical leaf columns of a (non-blob, non-packed) Arrow type.
pub(crate) fn leaf_count(data_type: &DataType) -> usize {
    match data_type {
        DataType::Struct(children) => children
            .iter()
            .map(|c| leaf_count(c.data_type()))
            .sum::<usize>()
            .max(1),
        DataType::List(item) | DataType::LargeList(item) | DataType::Map(item, _) => {
            leaf_count(item.data_type())
        }
        DataType::FixedSizeList(item, _) if matches!(item.data_type(), DataType::Struct(_)) => {
            leaf_count(item.data_type())
        }
        _ => 1,
    }
}

fn corrupt(e: arrow_schema::ArrowError) -> Error {
    Error::corrupt(format!("decoded structure is invalid: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use RepDefLayer::*;

    #[test]
    fn list_of_struct_levels() {
        // Doc example: list<struct<s>> layers [NULLABLE_ITEM(s), NULLABLE_ITEM(struct),
        // NULL_AND_EMPTY_LIST]: s-null=1, struct-null=2, list-null=3, list-empty=4.
        let s = DenseStructure::new(&[
            RepdefNullableItem,
            RepdefNullableItem,
            RepdefNullAndEmptyList,
        ])
        .unwrap();
        assert_eq!(s.max_rep, 1);
        assert_eq!(s.max_visible_def, 2);
        // Rows: null, [], [a], [null-s, null-struct, b]
        let rep = [1, 1, 1, 1, 0, 0];
        let def = [3, 4, 0, 1, 2, 0];
        let u = s.unravel(Some(&rep), Some(&def), 6).unwrap();
        assert_eq!(u.leaf_slots, 4);
        assert_eq!(u.layers[0].offsets, Some(vec![0, 0, 0, 1, 4]));
        assert_eq!(u.layers[0].validity, Some(vec![false, true, true, true]));
        assert_eq!(u.layers[1].validity, Some(vec![true, true, false, true]));
        assert_eq!(u.layers[2].validity, Some(vec![true, false, false, true]));
    }

    #[test]
    fn list_of_list_levels() {
        // list<list<int>>: layers inner→outer [ALL_VALID_ITEM, EMPTYABLE_LIST, NULLABLE_LIST]
        // inner-empty = 1, outer-null = 2. Rows: [[1,2],[]], null, [[3]]
        let s = DenseStructure::new(&[RepdefAllValidItem, RepdefEmptyableList, RepdefNullableList])
            .unwrap();
        assert_eq!(s.max_rep, 2);
        let rep = [2, 0, 1, 2, 2];
        let def = [0, 0, 1, 2, 0];
        let u = s.unravel(Some(&rep), Some(&def), 5).unwrap();
        assert_eq!(u.layers[0].offsets, Some(vec![0, 2, 2, 3]));
        assert_eq!(u.layers[0].validity, Some(vec![true, false, true]));
        assert_eq!(u.layers[1].offsets, Some(vec![0, 2, 2, 3]));
        assert_eq!(u.layers[1].validity, None);
        assert_eq!(u.leaf_slots, 3);
    }

    #[test]
    fn unravelling_pages_separately_and_appending_equals_unravelling_them_together() {
        let s = DenseStructure::new(&[
            RepdefNullableItem,
            RepdefNullableItem,
            RepdefNullAndEmptyList,
        ])
        .unwrap();
        let rep = [1u16, 1, 1, 1, 0, 0, 1, 0];
        let def = [3u16, 4, 0, 1, 2, 0, 0, 1];
        let whole = s.unravel(Some(&rep), Some(&def), 8).unwrap();
        let mut first = s.unravel(Some(&rep[..3]), Some(&def[..3]), 3).unwrap();
        let second = s.unravel(Some(&rep[3..]), Some(&def[3..]), 5).unwrap();
        for (a, b) in first.layers.iter_mut().zip(&second.layers) {
            a.append(b);
        }
        assert_eq!(first.layers, whole.layers);
        assert_eq!(first.leaf_slots + second.leaf_slots, whole.leaf_slots);
    }

    #[test]
    fn bad_levels_are_corrupt() {
        let s = DenseStructure::new(&[RepdefAllValidItem, RepdefNullableList]).unwrap();
        assert!(
            s.unravel(Some(&[0]), Some(&[0]), 1).is_err(),
            "continuation before any row"
        );
        assert!(
            s.unravel(Some(&[1, 0]), Some(&[1, 0]), 2).is_err(),
            "continuing a null list"
        );
        assert!(
            s.unravel(Some(&[2]), Some(&[0]), 1).is_err(),
            "rep above max"
        );
        assert!(s.unravel(Some(&[1]), Some(&[5]), 1).is_err(), "unknown def");
        assert!(
            DenseStructure::new(&[RepdefNullableList]).is_err(),
            "list as the leaf"
        );
    }
}
