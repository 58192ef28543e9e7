//! The one SQL three-valued evaluator (TRUE / FALSE / NULL) of bound predicates, used for
//! the rechecks and scans of top-level filters and for the element predicates of
//! `any_element` (a row's or an element's field values in, `Some(bool)` or `None` =
//! NULL out).

use std::cmp::Ordering;

use super::bind::SqlPredicate;
use super::expr::{CompareOp, Truth};
use super::value::ElementValue;

/// The predicate's value on one element whose referenced fields hold `values` (indexed
/// like [`BoundSqlPredicate::fields`]; `None` = null). `None` result = UNKNOWN.
/// `Opaque` nodes evaluate to UNKNOWN here; [`evaluate_any_element`] refuses them first.
pub(crate) fn eval_predicate(p: &SqlPredicate, values: &[Option<ElementValue>]) -> Option<bool> {
    use SqlPredicate as P;
    let get = |i: &usize| values.get(*i).and_then(Option::as_ref);
    match p {
        P::Constant(c) => *c,
        P::BoolField(f) => match get(f) {
            Some(ElementValue::Bool(b)) => Some(*b),
            _ => None,
        },
        P::Compare { field, op, value } => {
            let ordering = get(field)?.compare(value.as_ref()?)?;
            Some(apply(*op, ordering))
        }
        P::CompareFields { left, op, right } => {
            let ordering = get(left)?.compare(get(right)?)?;
            Some(apply(*op, ordering))
        }
        P::InList {
            field,
            values: list,
            has_null,
            negated,
        } => {
            let v = get(field)?;
            let found = list.iter().any(|x| v.compare(x) == Some(Ordering::Equal));
            let result = if found {
                Some(true)
            } else if *has_null {
                None
            } else {
                Some(false)
            };
            result.map(|r| r != *negated)
        }
        P::IsNull { field, negated } => Some(get(field).is_none() != *negated),
        P::DistinctFrom {
            field,
            value,
            negated,
        } => Some(distinct(get(field), value.as_ref()) != *negated),
        P::DistinctFields {
            left,
            right,
            negated,
        } => Some(distinct(get(left), get(right)) != *negated),
        P::IsTruth {
            inner,
            truth,
            negated,
        } => {
            let v = eval_predicate(inner, values);
            let is = match truth {
                Truth::True => v == Some(true),
                Truth::False => v == Some(false),
                Truth::Unknown => v.is_none(),
            };
            Some(is != *negated)
        }
        P::And(children) => {
            let mut unknown = false;
            for c in children {
                match eval_predicate(c, values) {
                    Some(false) => return Some(false),
                    None => unknown = true,
                    Some(true) => {}
                }
            }
            (!unknown).then_some(true)
        }
        P::Or(children) => {
            let mut unknown = false;
            for c in children {
                match eval_predicate(c, values) {
                    Some(true) => return Some(true),
                    None => unknown = true,
                    Some(false) => {}
                }
            }
            (!unknown).then_some(false)
        }
        P::Not(inner) => eval_predicate(inner, values).map(|b| !b),
        P::Opaque(_) | P::AnyElement { .. } | P::ListHas { .. } => None,
    }
}

fn apply(op: CompareOp, o: Ordering) -> bool {
    match op {
        CompareOp::Eq => o == Ordering::Equal,
        CompareOp::NotEq => o != Ordering::Equal,
        CompareOp::Lt => o == Ordering::Less,
        CompareOp::LtEq => o != Ordering::Greater,
        CompareOp::Gt => o == Ordering::Greater,
        CompareOp::GtEq => o != Ordering::Less,
    }
}

fn distinct(a: Option<&ElementValue>, b: Option<&ElementValue>) -> bool {
    match (a, b) {
        (None, None) => false,
        (Some(a), Some(b)) => a.compare(b) != Some(Ordering::Equal),
        _ => true,
    }
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
