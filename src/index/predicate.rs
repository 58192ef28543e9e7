//! Index search queries: what an index is asked (lance's `SargableQuery`): `=`, `IN`,
//! ranges, `IS NULL` on one column ([`LeafQuery`]) and their `AND` / `OR` / `NOT`
//! ([`Predicate`]), with typed [`Key`] bounds. The filter engine derives them from a bound
//! SQL filter ([`crate::index::engine::tree::index_query`]); indices select pages, zones
//! and bitmaps with them, and the BTree keeps the page rows whose key makes the search
//! TRUE by lowering it to a bound predicate ([`Predicate::to_sql`]) for the one
//! three-valued evaluator ([`crate::index::sql::eval`]).

mod lower;

use std::ops::Bound;

use crate::index::key::Key;

/// An index search tree. Leaves refer to the searched column as column 0.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Predicate {
    /// All children TRUE.
    And(Vec<Predicate>),
    /// Any child TRUE.
    Or(Vec<Predicate>),
    /// Negation (NULL stays NULL).
    Not(Box<Predicate>),
    /// NULL becomes FALSE (`IS TRUE`).
    IsTrue(Box<Predicate>),
    /// A test on the column.
    Leaf(Leaf),
}

/// A test on one column.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Leaf {
    /// The column (always 0: a search is on one column).
    pub(crate) column: usize,
    /// The test.
    pub(crate) query: LeafQuery,
}

/// What a leaf tests (lance's SargableQuery forms).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum LeafQuery {
    /// `col = v`.
    Equals(Key),
    /// `col IN (...)`: sorted, deduplicated values; `has_null` when the list had a NULL
    /// (then non-matching rows are NULL rather than FALSE).
    In {
        /// Values.
        values: Vec<Key>,
        /// Whether the list contained NULL.
        has_null: bool,
    },
    /// Range with each bound unbounded, included or excluded.
    Range {
        /// Lower bound.
        lower: Bound<Key>,
        /// Upper bound.
        upper: Bound<Key>,
    },
    /// `col IS NULL`.
    IsNull,
    /// A comparison with a NULL literal: NULL for every row.
    AlwaysNull,
}

/// Leaves of `predicate`, depth first.
pub(crate) fn leaves(predicate: &Predicate) -> Vec<&LeafQuery> {
    match predicate {
        Predicate::Leaf(l) => vec![&l.query],
        Predicate::Not(p) | Predicate::IsTrue(p) => leaves(p),
        Predicate::And(ps) | Predicate::Or(ps) => ps.iter().flat_map(leaves).collect(),
    }
}
