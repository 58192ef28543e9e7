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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::predicate::Leaf;
    use crate::index::sql::eval::eval_predicate;

    fn leaf(query: LeafQuery) -> Predicate {
        Predicate::Leaf(Leaf { column: 0, query })
    }

    fn truth(p: &Predicate, v: Option<Key>) -> Option<bool> {
        eval_predicate(&p.to_sql(), &[v])
    }

    #[test]
    fn a_null_key_makes_every_test_but_is_null_null() {
        let unbounded = leaf(LeafQuery::Range {
            lower: Bound::Unbounded,
            upper: Bound::Unbounded,
        });
        assert_eq!(truth(&unbounded, None), None);
        assert_eq!(truth(&unbounded, Some(Key::Int(1))), Some(true));
        let lower_only = leaf(LeafQuery::Range {
            lower: Bound::Excluded(Key::Int(3)),
            upper: Bound::Unbounded,
        });
        assert_eq!(truth(&lower_only, None), None);
        assert_eq!(truth(&lower_only, Some(Key::Int(3))), Some(false));
        assert_eq!(truth(&leaf(LeafQuery::IsNull), None), Some(true));
        assert_eq!(
            truth(&leaf(LeafQuery::IsNull), Some(Key::Int(0))),
            Some(false)
        );
        assert_eq!(truth(&leaf(LeafQuery::AlwaysNull), Some(Key::Int(0))), None);
        let not_eq = Predicate::Not(Box::new(leaf(LeafQuery::Equals(Key::Int(1)))));
        assert_eq!(truth(&not_eq, None), None);
        assert_eq!(truth(&not_eq, Some(Key::Int(2))), Some(true));
    }

    #[test]
    fn in_with_null_is_null_where_not_found() {
        let q = leaf(LeafQuery::In {
            values: vec![Key::Int(1), Key::Int(3)],
            has_null: true,
        });
        assert_eq!(truth(&q, Some(Key::Int(3))), Some(true));
        assert_eq!(truth(&q, Some(Key::Int(2))), None);
        assert_eq!(truth(&q, None), None);
        let not = Predicate::Not(Box::new(q.clone()));
        assert_eq!(truth(&not, Some(Key::Int(2))), None);
        assert_eq!(truth(&not, Some(Key::Int(1))), Some(false));
        let is_true = Predicate::IsTrue(Box::new(q));
        assert_eq!(truth(&is_true, Some(Key::Int(2))), Some(false));
        assert_eq!(truth(&is_true, None), Some(false));
    }

    #[test]
    fn floats_match_by_bits_and_ranges_by_total_order() {
        let eq = |k: f64| leaf(LeafQuery::Equals(Key::Float(k)));
        assert_eq!(truth(&eq(-0.0), Some(Key::Float(0.0))), Some(false));
        assert_eq!(truth(&eq(f64::NAN), Some(Key::Float(f64::NAN))), Some(true));
        let below_nan = leaf(LeafQuery::Range {
            lower: Bound::Included(Key::Float(-0.0)),
            upper: Bound::Excluded(Key::Float(f64::NAN)),
        });
        assert_eq!(
            truth(&below_nan, Some(Key::Float(f64::INFINITY))),
            Some(true)
        );
        assert_eq!(truth(&below_nan, Some(Key::Float(-0.0))), Some(true));
        assert_eq!(truth(&below_nan, Some(Key::Float(f64::NAN))), Some(false));
        assert_eq!(truth(&below_nan, Some(Key::Float(-1e-300))), Some(false));
    }

    #[test]
    fn and_or_are_three_valued() {
        let null = leaf(LeafQuery::AlwaysNull);
        let yes = leaf(LeafQuery::IsNull);
        let no = Predicate::Not(Box::new(yes.clone()));
        let and = |ps: Vec<Predicate>| truth(&Predicate::And(ps), None);
        let or = |ps: Vec<Predicate>| truth(&Predicate::Or(ps), None);
        assert_eq!(and(vec![null.clone(), no.clone()]), Some(false));
        assert_eq!(and(vec![null.clone(), yes.clone()]), None);
        assert_eq!(and(vec![]), Some(true));
        assert_eq!(or(vec![null.clone(), yes]), Some(true));
        assert_eq!(or(vec![null, no]), None);
        assert_eq!(or(vec![]), Some(false));
    }
}
