//! The one SQL stack every index kind and the filter engine share: parse, bind (type),
//! evaluate (three-valued), over one value model.
//!
//! * [`expr`]: the one SQL parser (sqlparser) → untyped tree (with `limits`: the size and
//!   depth a filter may have);
//! * [`call`]: recognising `any_element(list_col, 'predicate')` / `NOT any_element(...)`;
//! * [`bind`]: the one binder (columns of a dataset, or fields of list elements; literals
//!   typed by [`crate::index::sql_literal::coerce_literal`]);
//! * [`eval`]: the one three-valued evaluator (BTree pages, rechecks, scans,
//!   `any_element` elements);
//! * [`any_element`]: `any_element(col, 'predicate')` over list data (rechecks, scans);
//! * [`list_has`]: `array_has_any` / `array_has_all` / `array_contains` on list data;
//! * [`string_match`]: `LIKE`, `ILIKE`, `contains`, `starts_with` (parsing, compiled
//!   patterns);
//! * [`value`]: the one value model of [`crate::index::key`] under the name the SQL stack
//!   uses, and typed access to element field arrays;
//! * [`parsed`]: a top-level filter parsed once (from text, or built in code), as the engine
//!   takes it.

pub(crate) mod any_element;
pub(crate) mod bind;
pub(crate) mod call;
pub(crate) mod eval;
pub(crate) mod expr;
pub(crate) mod limits;
pub(crate) mod list_has;
pub(crate) mod parsed;
pub(crate) mod string_match;
pub(crate) mod value;
