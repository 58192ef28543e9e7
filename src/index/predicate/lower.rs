//! An index search as a bound predicate over its column, so that the rows of a BTree page
//! are kept by the one three-valued evaluator ([`crate::index::sql::eval`]) — the code
//! that also evaluates the same leaf on the data of fragments no index covers. Lance's
//! sargable semantics map onto SQL's: a NULL key makes every test but `IS NULL` NULL, and
//! `NOT` keeps NULL.

use std::ops::Bound;

use super::{LeafQuery, Predicate};
use crate::index::key::Key;
use crate::index::sql::bind::SqlPredicate;
use crate::index::sql::expr::{CompareOp, Truth};

impl Predicate {
    /// This search as a bound predicate (each leaf reads field `column`).
    pub(crate) fn to_sql(&self) -> SqlPredicate {
        let all = |ps: &[Predicate]| ps.iter().map(Predicate::to_sql).collect();
        match self {
            Predicate::Leaf(l) => l.query.to_sql(l.column),
            Predicate::Not(p) => SqlPredicate::Not(Box::new(p.to_sql())),
            Predicate::IsTrue(p) => SqlPredicate::IsTruth {
                inner: Box::new(p.to_sql()),
                truth: Truth::True,
                negated: false,
            },
            Predicate::And(ps) => SqlPredicate::And(all(ps)),
            Predicate::Or(ps) => SqlPredicate::Or(all(ps)),
        }
    }
}

impl LeafQuery {
    /// This test on field `field` as a bound predicate.
    fn to_sql(&self, field: usize) -> SqlPredicate {
        let compare = |op, key: &Key| SqlPredicate::Compare {
            field,
            op,
            value: Some(key.clone()),
        };
        match self {
            LeafQuery::Equals(k) => compare(CompareOp::Eq, k),
            LeafQuery::In { values, has_null } => SqlPredicate::InList {
                field,
                values: values.clone(),
                has_null: *has_null,
                negated: false,
            },
            LeafQuery::Range { lower, upper } => {
                let lower = match lower {
                    Bound::Included(k) => Some(compare(CompareOp::GtEq, k)),
                    Bound::Excluded(k) => Some(compare(CompareOp::Gt, k)),
                    Bound::Unbounded => None,
                };
                let upper = match upper {
                    Bound::Included(k) => Some(compare(CompareOp::LtEq, k)),
                    Bound::Excluded(k) => Some(compare(CompareOp::Lt, k)),
                    Bound::Unbounded => None,
                };
                range(field, lower, upper)
            }
            LeafQuery::IsNull => SqlPredicate::IsNull {
                field,
                negated: false,
            },
            LeafQuery::AlwaysNull => SqlPredicate::Constant(None),
        }
    }
}

/// Both bounds of a range: TRUE for a value within them, NULL for a NULL value (also
/// when neither bound is set: `field IS NOT NULL OR NULL`).
fn range(field: usize, lower: Option<SqlPredicate>, upper: Option<SqlPredicate>) -> SqlPredicate {
    match (lower, upper) {
        (Some(l), Some(u)) => SqlPredicate::And(vec![l, u]),
        (Some(one), None) | (None, Some(one)) => one,
        (None, None) => SqlPredicate::Or(vec![
            SqlPredicate::IsNull {
                field,
                negated: true,
            },
            SqlPredicate::Constant(None),
        ]),
    }
}
