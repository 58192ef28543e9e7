//! The shape of a bound filter the engine answers (pure): `NOT` pushed down to the leaves
//! with three-valued De Morgan, each leaf a maximal subtree on one column (or an
//! `any_element` / list function call) with the truth value it must have ([`Want`]), and
//! the set algebra that combines the leaves' row sets.
//!
//! A node's answer is a pair of row-address sets `(sure, maybe)`: `sure` rows certainly
//! make the node TRUE, `maybe` rows might (candidates of an inexact index, or rows no
//! index answered yet); every other row of the universe certainly does not. `AND`
//! intersects, `OR` unites, and the two-valued complement used by `IS [NOT] TRUE|FALSE|
//! UNKNOWN` swaps `sure` with the certain non-rows.

use std::ops::Bound;

use roaring::RoaringTreemap;

use crate::index::key::{widen_f32, Key};
use crate::index::kind::Want;
use crate::index::predicate::{Leaf, LeafQuery, Predicate};
use crate::index::sql::bind::SqlPredicate;
use crate::index::sql::expr::{CompareOp, Truth};
use crate::index::sql::value::ElementValue;

/// The engine's tree over leaves.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    /// TRUE where every child is TRUE.
    And(Vec<Node>),
    /// TRUE where some child is TRUE.
    Or(Vec<Node>),
    /// TRUE where the child is not TRUE (two-valued: `IS NOT TRUE` and friends).
    Complement(Box<Node>),
    /// Leaf `index` of [`Shape::leaves`] has the wanted truth value.
    Leaf(usize),
    /// TRUE everywhere or nowhere.
    Const(bool),
}

/// One leaf: a subtree of the bound predicate and the truth value wanted.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ShapeLeaf {
    /// The subtree (field indices into the bound predicate's fields).
    pub(crate) predicate: SqlPredicate,
    /// The one field it reads.
    pub(crate) field: usize,
    /// The truth value wanted.
    pub(crate) want: Want,
}

/// A filter as leaves and a tree over them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Shape {
    /// The root.
    pub(crate) root: Node,
    /// The leaves, in first-use order.
    pub(crate) leaves: Vec<ShapeLeaf>,
}

fn flip(w: Want) -> Want {
    match w {
        Want::True => Want::False,
        Want::False => Want::True,
    }
}

/// The one field a subtree reads, when it reads exactly one and is not a list call.
pub(crate) fn single_field(p: &SqlPredicate) -> Option<usize> {
    use SqlPredicate as P;
    match p {
        P::BoolField(f)
        | P::Compare { field: f, .. }
        | P::InList { field: f, .. }
        | P::IsNull { field: f, .. }
        | P::DistinctFrom { field: f, .. } => Some(*f),
        P::And(v) | P::Or(v) => {
            let first = single_field(v.first()?)?;
            v.iter()
                .all(|c| single_field(c) == Some(first))
                .then_some(first)
        }
        P::Not(inner) | P::IsTruth { inner, .. } => single_field(inner),
        // A string test is a leaf of its own (the NGRAM kind answers it).
        P::Constant(_)
        | P::StringMatch { .. }
        | P::CompareFields { .. }
        | P::DistinctFields { .. }
        | P::Opaque(_)
        | P::AnyElement { .. }
        | P::ListHas { .. } => None,
    }
}

/// Build the shape of a bound predicate.
pub(crate) fn shape(p: &SqlPredicate) -> Shape {
    let mut leaves = Vec::new();
    let root = build(p, Want::True, &mut leaves);
    Shape { root, leaves }
}

fn leaf(p: &SqlPredicate, field: usize, want: Want, leaves: &mut Vec<ShapeLeaf>) -> Node {
    leaves.push(ShapeLeaf {
        predicate: p.clone(),
        field,
        want,
    });
    Node::Leaf(leaves.len() - 1)
}

fn build(p: &SqlPredicate, want: Want, leaves: &mut Vec<ShapeLeaf>) -> Node {
    use SqlPredicate as P;
    if let P::Not(inner) = p {
        return build(inner, flip(want), leaves);
    }
    if let Some(field) = single_field(p) {
        return leaf(p, field, want, leaves);
    }
    match p {
        P::And(v) | P::Or(v) => {
            let children = v.iter().map(|c| build(c, want, leaves)).collect();
            // NOT (a AND b) = NOT a OR NOT b (and dually), also with NULLs.
            match (matches!(p, P::And(_)), want) {
                (true, Want::True) | (false, Want::False) => Node::And(children),
                _ => Node::Or(children),
            }
        }
        P::Not(_) => unreachable!("NOT is pushed down above"),
        P::Constant(c) => Node::Const(*c == Some(want == Want::True)),
        P::IsTruth {
            inner,
            truth,
            negated,
        } => {
            let is = match truth {
                Truth::True => build(inner, Want::True, leaves),
                Truth::False => build(inner, Want::False, leaves),
                Truth::Unknown => Node::Complement(Box::new(Node::Or(vec![
                    build(inner, Want::True, leaves),
                    build(inner, Want::False, leaves),
                ]))),
            };
            if *negated != (want == Want::False) {
                Node::Complement(Box::new(is))
            } else {
                is
            }
        }
        P::AnyElement { field, .. } | P::ListHas { field, .. } | P::StringMatch { field, .. } => {
            leaf(p, *field, want, leaves)
        }
        // Refused by the top-level binder; kept as a leaf evaluated on data.
        P::CompareFields { left: f, .. } | P::DistinctFields { left: f, .. } => {
            leaf(p, *f, want, leaves)
        }
        P::Opaque(_) => leaf(p, 0, want, leaves),
        P::BoolField(_)
        | P::Compare { .. }
        | P::InList { .. }
        | P::IsNull { .. }
        | P::DistinctFrom { .. } => unreachable!("single-field predicates are leaves"),
    }
}

/// A row-set answer: `sure` rows are TRUE, `maybe` rows might be (disjoint).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Rows {
    /// Certainly TRUE.
    pub(crate) sure: RoaringTreemap,
    /// Possibly TRUE.
    pub(crate) maybe: RoaringTreemap,
}

/// Evaluate `node` over the leaves' answers; `universe` is every row considered.
pub(crate) fn combine(node: &Node, leaves: &[Rows], universe: &RoaringTreemap) -> Rows {
    match node {
        Node::Leaf(i) => leaves.get(*i).cloned().unwrap_or_default(),
        Node::Const(true) => Rows {
            sure: universe.clone(),
            maybe: RoaringTreemap::new(),
        },
        Node::Const(false) => Rows::default(),
        Node::Complement(inner) => {
            let r = combine(inner, leaves, universe);
            let mut sure = universe.clone();
            sure -= &r.sure;
            sure -= &r.maybe;
            Rows {
                sure,
                maybe: r.maybe,
            }
        }
        Node::And(children) => {
            let mut iter = children.iter().map(|c| combine(c, leaves, universe));
            let Some(first) = iter.next() else {
                return combine(&Node::Const(true), leaves, universe);
            };
            let mut sure = first.sure.clone();
            let mut possible = first.sure | first.maybe;
            for r in iter {
                sure &= &r.sure;
                possible &= r.sure | r.maybe;
            }
            possible -= &sure;
            Rows {
                sure,
                maybe: possible,
            }
        }
        Node::Or(children) => {
            let mut out = Rows::default();
            for r in children.iter().map(|c| combine(c, leaves, universe)) {
                out.sure |= r.sure;
                out.maybe |= r.maybe;
            }
            out.maybe -= &out.sure;
            out
        }
    }
}

/// Whether the rows where `node` can be TRUE are bounded by the leaves for which
/// `answered(leaf)` holds (an index answers them): `AND` needs one bounded child, `OR`
/// all, a complement or a leaf no index answers is unbounded. A filter whose root is not
/// bounded must scan the unanswered leaves' columns on every row.
pub(crate) fn bounded(node: &Node, answered: &dyn Fn(usize) -> bool) -> bool {
    match node {
        Node::Leaf(i) => answered(*i),
        Node::Const(b) => !*b || all_answered(node, answered),
        Node::And(c) => c.iter().any(|c| bounded(c, answered)),
        Node::Or(c) => c.iter().all(|c| bounded(c, answered)),
        Node::Complement(_) => all_answered(node, answered),
    }
}

/// Whether every leaf under `node` is answered.
pub(crate) fn all_answered(node: &Node, answered: &dyn Fn(usize) -> bool) -> bool {
    match node {
        Node::Leaf(i) => answered(*i),
        Node::Const(_) => true,
        Node::And(c) | Node::Or(c) => c.iter().all(|c| all_answered(c, answered)),
        Node::Complement(inner) => all_answered(inner, answered),
    }
}

/// The index search for a single-column subtree, when every node of it is one an index
/// answers (lance's sargable forms); `None` otherwise (the leaf is evaluated on data).
pub(crate) fn index_query(p: &SqlPredicate) -> Option<Predicate> {
    use SqlPredicate as P;
    let leaf = |query| Some(Predicate::Leaf(Leaf { column: 0, query }));
    let not = |p: Predicate| Predicate::Not(Box::new(p));
    match p {
        P::BoolField(_) => leaf(LeafQuery::Equals(Key::Bool(true))),
        P::Compare { op, value, .. } => {
            let Some(v) = value else {
                return leaf(LeafQuery::AlwaysNull);
            };
            let k = key_of(v);
            let range = |lower, upper| leaf(LeafQuery::Range { lower, upper });
            match op {
                CompareOp::Eq => leaf(LeafQuery::Equals(k)),
                CompareOp::NotEq => leaf(LeafQuery::Equals(k)).map(not),
                CompareOp::Lt => range(Bound::Unbounded, Bound::Excluded(k)),
                CompareOp::LtEq => range(Bound::Unbounded, Bound::Included(k)),
                CompareOp::Gt => range(Bound::Excluded(k), Bound::Unbounded),
                CompareOp::GtEq => range(Bound::Included(k), Bound::Unbounded),
            }
        }
        P::InList {
            values,
            has_null,
            negated,
            ..
        } => {
            let mut keys: Vec<Key> = values.iter().map(key_of).collect();
            keys.sort();
            keys.dedup();
            let q = leaf(LeafQuery::In {
                values: keys,
                has_null: *has_null,
            });
            if *negated {
                q.map(not)
            } else {
                q
            }
        }
        P::IsNull { negated, .. } => {
            let q = leaf(LeafQuery::IsNull);
            if *negated {
                q.map(not)
            } else {
                q
            }
        }
        P::Not(inner) => index_query(inner).map(not),
        P::IsTruth {
            inner,
            truth,
            negated,
        } => {
            let inner = index_query(inner)?;
            let is = match truth {
                Truth::True => Predicate::IsTrue(Box::new(inner)),
                Truth::False => Predicate::IsTrue(Box::new(not(inner))),
                Truth::Unknown => return None,
            };
            Some(if *negated { not(is) } else { is })
        }
        P::And(v) => {
            let parts: Vec<Predicate> = v.iter().map(index_query).collect::<Option<_>>()?;
            Some(merge_range(parts))
        }
        P::Or(v) => Some(Predicate::Or(
            v.iter().map(index_query).collect::<Option<_>>()?,
        )),
        _ => None,
    }
}

/// `x >= a AND x <= b` (a bound `BETWEEN`) as one range, the form the BTree selects with.
fn merge_range(parts: Vec<Predicate>) -> Predicate {
    if let [Predicate::Leaf(a), Predicate::Leaf(b)] = parts.as_slice() {
        if let (
            LeafQuery::Range {
                lower,
                upper: Bound::Unbounded,
            },
            LeafQuery::Range {
                lower: Bound::Unbounded,
                upper,
            },
        ) = (&a.query, &b.query)
        {
            return Predicate::Leaf(Leaf {
                column: 0,
                query: LeafQuery::Range {
                    lower: lower.clone(),
                    upper: upper.clone(),
                },
            });
        }
    }
    Predicate::And(parts)
}

/// The index key of a bound value.
pub(crate) fn key_of(v: &ElementValue) -> Key {
    match v {
        ElementValue::Bool(b) => Key::Bool(*b),
        ElementValue::Int(i) => Key::Int(*i),
        ElementValue::UInt(u) => Key::UInt(*u),
        ElementValue::Float32(f) => Key::Float(widen_f32(*f)),
        ElementValue::Float(f) => Key::Float(*f),
        ElementValue::Bytes(b) => Key::Bytes(b.clone()),
    }
}

#[cfg(test)]
mod tests;
