//! The one three-valued evaluator (TRUE / FALSE / NULL) of bound predicates. Every truth
//! value the engine computes from data comes from here: BTree pages
//! ([`crate::index::predicate::Predicate::to_sql`] lowers an index search to a bound
//! predicate), rechecks and scans of top-level filters, and the element predicates of
//! `any_element`. A row's values come through [`Row`] and compare in the one order of
//! [`crate::index::key`]; `Some(bool)` or `None` (NULL) comes out.

use std::cmp::Ordering;

use super::bind::SqlPredicate;
use super::expr::{CompareOp, Truth};
use crate::index::key::{Key, KeyColumn, KeyRef};

/// The values of one row (or one list element), by field index (the indices of
/// [`super::bind::BoundPredicate::fields`]); `None` = NULL.
pub(crate) trait Row {
    /// The value of field `field` (`None` when null or not read).
    fn value(&self, field: usize) -> Option<KeyRef<'_>>;
}

/// Owned values, indexed by field.
impl Row for [Option<Key>] {
    fn value(&self, field: usize) -> Option<KeyRef<'_>> {
        self.get(field)?.as_ref().map(Key::as_key_ref)
    }
}

impl Row for Vec<Option<Key>> {
    fn value(&self, field: usize) -> Option<KeyRef<'_>> {
        self.as_slice().value(field)
    }
}

impl<const N: usize> Row for [Option<Key>; N] {
    fn value(&self, field: usize) -> Option<KeyRef<'_>> {
        self.as_slice().value(field)
    }
}

/// Row `row` of typed columns: field `i` reads `columns[i]` (NULL where `None`).
pub(crate) struct ColumnsRow<'a> {
    /// The fields' columns.
    pub(crate) columns: &'a [Option<KeyColumn>],
    /// The row.
    pub(crate) row: usize,
}

impl Row for ColumnsRow<'_> {
    fn value(&self, field: usize) -> Option<KeyRef<'_>> {
        self.columns.get(field)?.as_ref()?.get(self.row)
    }
}

/// The predicate's truth on one row (`None` = NULL). `Opaque`, `any_element` and list
/// function nodes are NULL here: [`crate::index::list_element`] refuses opaque element
/// predicates first, and the engine answers the calls as leaves of their own.
pub(crate) fn eval_predicate<R: Row + ?Sized>(p: &SqlPredicate, row: &R) -> Option<bool> {
    use SqlPredicate as P;
    match p {
        P::Constant(c) => *c,
        P::BoolField(f) => match row.value(*f) {
            Some(KeyRef::Bool(b)) => Some(b),
            _ => None,
        },
        P::Compare { field, op, value } => compare(*op, row.value(*field), literal(value)),
        P::CompareFields { left, op, right } => compare(*op, row.value(*left), row.value(*right)),
        P::InList {
            field,
            values,
            has_null,
            negated,
        } => in_list(row.value(*field), values, *has_null).map(|b| b != *negated),
        P::IsNull { field, negated } => Some(row.value(*field).is_none() != *negated),
        P::DistinctFrom {
            field,
            value,
            negated,
        } => Some(distinct(row.value(*field), literal(value)) != *negated),
        P::DistinctFields {
            left,
            right,
            negated,
        } => Some(distinct(row.value(*left), row.value(*right)) != *negated),
        P::IsTruth {
            inner,
            truth,
            negated,
        } => Some(is(eval_predicate(inner, row), *truth) != *negated),
        P::And(children) => and(children.iter().map(|c| eval_predicate(c, row))),
        P::Or(children) => or(children.iter().map(|c| eval_predicate(c, row))),
        P::Not(inner) => eval_predicate(inner, row).map(|b| !b),
        P::StringMatch { field, matcher } => match row.value(*field)? {
            KeyRef::Bytes(b) => Some(matcher.matches(b)),
            _ => None,
        },
        P::Opaque(_) | P::AnyElement { .. } | P::ListHas { .. } => None,
    }
}

/// A literal operand (`None`: the NULL literal).
fn literal(v: &Option<Key>) -> Option<KeyRef<'_>> {
    v.as_ref().map(Key::as_key_ref)
}

/// `a op b`: NULL when either is NULL or the two do not compare.
fn compare(op: CompareOp, a: Option<KeyRef<'_>>, b: Option<KeyRef<'_>>) -> Option<bool> {
    let o = a?.compare(&b?)?;
    Some(match op {
        CompareOp::Eq => o == Ordering::Equal,
        CompareOp::NotEq => o != Ordering::Equal,
        CompareOp::Lt => o == Ordering::Less,
        CompareOp::LtEq => o != Ordering::Greater,
        CompareOp::Gt => o == Ordering::Greater,
        CompareOp::GtEq => o != Ordering::Less,
    })
}

/// `v IN (values)` with `values` sorted in the one order: TRUE when found, else NULL when
/// the list held a NULL (or `v` is NULL), else FALSE.
fn in_list(v: Option<KeyRef<'_>>, values: &[Key], has_null: bool) -> Option<bool> {
    let v = v?;
    if values.binary_search_by(|x| x.as_key_ref().cmp(&v)).is_ok() {
        Some(true)
    } else if has_null {
        None
    } else {
        Some(false)
    }
}

/// `a IS DISTINCT FROM b`: NULLs are equal to each other and distinct from any value.
fn distinct(a: Option<KeyRef<'_>>, b: Option<KeyRef<'_>>) -> bool {
    match (a, b) {
        (None, None) => false,
        (Some(a), Some(b)) => a.compare(&b) != Some(Ordering::Equal),
        _ => true,
    }
}

/// `t IS TRUE | FALSE | UNKNOWN` (never NULL).
fn is(t: Option<bool>, truth: Truth) -> bool {
    match truth {
        Truth::True => t == Some(true),
        Truth::False => t == Some(false),
        Truth::Unknown => t.is_none(),
    }
}

/// Conjunction: FALSE if any is FALSE, else NULL if any is NULL, else TRUE.
fn and(truths: impl Iterator<Item = Option<bool>>) -> Option<bool> {
    let mut unknown = false;
    for t in truths {
        match t {
            Some(false) => return Some(false),
            None => unknown = true,
            Some(true) => {}
        }
    }
    (!unknown).then_some(true)
}

/// Disjunction: TRUE if any is TRUE, else NULL if any is NULL, else FALSE.
fn or(truths: impl Iterator<Item = Option<bool>>) -> Option<bool> {
    and(truths.map(|t| t.map(|b| !b))).map(|b| !b)
}

/// The first opaque sub-expression, if any.
pub(crate) fn find_opaque(p: &SqlPredicate) -> Option<&str> {
    use SqlPredicate as P;
    match p {
        P::Opaque(t) => Some(t),
        P::And(v) | P::Or(v) => v.iter().find_map(find_opaque),
        P::Not(inner) | P::IsTruth { inner, .. } => find_opaque(inner),
        _ => None,
    }
}
