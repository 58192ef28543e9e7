//! Matching keys against an index search query (lance's sargable query semantics: a NULL
//! key makes every test but `IS NULL` NULL; `NOT` keeps NULL).

use std::cmp::Ordering;
use std::ops::Bound;

use super::{LeafQuery, Predicate};
use crate::index::key::KeyRef;

/// The truth of a predicate on one row: `Some(true)`, `Some(false)` or `None` (NULL).
pub(crate) type RowTruth = Option<bool>;

impl LeafQuery {
    /// Truth of this test for a value (`None` = the value is null).
    pub(crate) fn eval(&self, value: Option<KeyRef<'_>>) -> RowTruth {
        if let LeafQuery::IsNull = self {
            return Some(value.is_none());
        }
        let v = value?;
        match self {
            LeafQuery::Equals(k) => Some(v == k.as_key_ref()),
            LeafQuery::In { values, has_null } => {
                let found = values.binary_search_by(|k| k.as_key_ref().cmp(&v)).is_ok();
                if found {
                    Some(true)
                } else if *has_null {
                    None
                } else {
                    Some(false)
                }
            }
            LeafQuery::Range { lower, upper } => {
                let above = match lower {
                    Bound::Unbounded => true,
                    Bound::Included(k) => v >= k.as_key_ref(),
                    Bound::Excluded(k) => v > k.as_key_ref(),
                };
                let below = match upper {
                    Bound::Unbounded => true,
                    Bound::Included(k) => v.cmp(&k.as_key_ref()) != Ordering::Greater,
                    Bound::Excluded(k) => v < k.as_key_ref(),
                };
                Some(above && below)
            }
            LeafQuery::AlwaysNull => None,
            LeafQuery::IsNull => unreachable!("handled above"),
        }
    }
}

impl Predicate {
    /// Truth for one row; `value(c)` is the row's value of filter column `c`.
    pub(crate) fn eval<'a>(&self, value: &dyn Fn(usize) -> Option<KeyRef<'a>>) -> RowTruth {
        match self {
            Predicate::Leaf(l) => l.query.eval(value(l.column)),
            Predicate::Not(p) => p.eval(value).map(|b| !b),
            Predicate::IsTrue(p) => Some(p.eval(value) == Some(true)),
            Predicate::And(ps) => {
                let mut result = Some(true);
                for p in ps {
                    match p.eval(value) {
                        Some(false) => return Some(false),
                        None => result = None,
                        Some(true) => {}
                    }
                }
                result
            }
            Predicate::Or(ps) => {
                let mut result = Some(false);
                for p in ps {
                    match p.eval(value) {
                        Some(true) => return Some(true),
                        None => result = None,
                        Some(false) => {}
                    }
                }
                result
            }
        }
    }
}
