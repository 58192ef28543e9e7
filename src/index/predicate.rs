//! Filters: parse the Lance / DataFusion SQL spelling with `sqlparser`, type the literals
//! against the dataset schema exactly as lance 14 coerces them, and evaluate the result
//! with SQL three-valued logic.
//!
//! Accepted: `col = v`, `!=`/`<>`, `<`, `<=`, `>`, `>=` (either side may be the column),
//! `col [NOT] IN (v, ...)`, `col [NOT] BETWEEN a AND b`, `col IS [NOT] NULL`,
//! `col IS [NOT] TRUE|FALSE`, a bare boolean column, `NOT`, `AND`, `OR`, parentheses.
//! Literals: integers, decimals/exponents, `'strings'`, `X'hex'`, `TRUE`/`FALSE`, `NULL`,
//! `DATE 'YYYY-MM-DD'`, `TIMESTAMP 'YYYY-MM-DD[ T]HH:MM:SS[.f][Z|+HH:MM]'`,
//! `CAST('NaN' AS DOUBLE)` (also `'inf'::double`, `FLOAT`/`REAL` for float32).
//!
//! Literal typing follows lance (verified with pylance 14.0.2): an integer literal must fit
//! the integer column (`i8 = 200` is an error), a decimal literal never matches an integer
//! column, strings only match string columns, `X'..'` only binary columns, `DATE` literals
//! date and timestamp columns, `TIMESTAMP` literals timestamp columns. A TIMESTAMP literal
//! is normalised to UTC, then read as local time in the column's time zone (fixed offsets
//! and UTC; named zones are refused), then truncated to the column's unit. Comparisons
//! of float columns with a zero literal are rewritten the way lance does (`= 0` matches
//! both zeros; `<`/`>=` use -0.0, `<=`/`>` use +0.0; IN lists get both zeros).

mod bind;
mod eval;
mod parse;

use std::ops::Bound;

use arrow_schema::DataType;

use crate::error::Result;
use crate::index::key::Key;
use crate::lance::dataset::Schema;

#[cfg_attr(not(test), allow(unused_imports))] // used by the tests
pub(crate) use parse::parse_filter;

/// A column a predicate refers to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ColumnRef {
    /// Dotted column path as written.
    pub name: String,
    /// Lance field id.
    pub field_id: i32,
    /// Arrow type of the column.
    pub data_type: DataType,
}

/// A typed predicate tree. Leaves refer to columns by index into
/// [`BoundFilter::columns`].
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
    /// A test on one column.
    Leaf(Leaf),
}

/// A test on one column.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Leaf {
    /// Index into [`BoundFilter::columns`].
    pub column: usize,
    /// The test.
    pub query: LeafQuery,
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

/// A filter typed against a schema.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BoundFilter {
    /// The filter text.
    pub text: String,
    /// Columns referred to, in first-use order.
    pub columns: Vec<ColumnRef>,
    /// The predicate.
    pub predicate: Predicate,
}

impl BoundFilter {
    /// Parse `text` and type it against `schema`.
    pub(crate) fn parse(text: &str, schema: &Schema) -> Result<Self> {
        let filter = parse_filter(text)?;
        bind::bind(text, &filter, schema)
    }

    /// Whether every leaf refers to the same single column.
    pub(crate) fn single_column(&self) -> Option<&ColumnRef> {
        match self.columns.as_slice() {
            [c] => Some(c),
            _ => None,
        }
    }
}
