//! A top-level filter parsed once: its untyped tree and the text it is shown as (in
//! `--explain`, plans and errors). SQL text is parsed by [`ParsedFilter::parse`]; a filter
//! built in code (the public `FilterExpr`) arrives as a tree with its rendering and is
//! never parsed.

use super::expr::{parse_sql, SqlContext, SqlExpr};
use crate::error::Result;

/// A top-level filter, untyped (the engine binds it against the version's schema).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ParsedFilter {
    /// The filter as written, or a built filter's SQL rendering.
    pub(crate) text: String,
    /// The untyped tree.
    pub(crate) expr: SqlExpr,
}

impl ParsedFilter {
    /// Parse SQL `text` (bounded in size and depth, see `limits`).
    pub(crate) fn parse(text: &str) -> Result<Self> {
        Ok(Self {
            text: text.to_string(),
            expr: parse_sql(text, SqlContext::Filter)?,
        })
    }

    /// A tree built in code, with the text it is shown as. The caller has bounded its
    /// size and depth ([`check_filter_shape`](super::limits::check_filter_shape) on `text`).
    pub(crate) fn built(text: String, expr: SqlExpr) -> Self {
        Self { text, expr }
    }
}
