//! Recognising `any_element(list_col, 'predicate')` and `NOT any_element(...)` in a
//! sqlparser expression, for the filter engine's parser ([`crate::index::sql::expr`]),
//! and parsing a filter that is one call.

use sqlparser::ast::{Expr, FunctionArg, FunctionArgExpr, FunctionArguments, UnaryOperator, Value};

use crate::error::{Error, Result};

/// The filter function's name (matched case-insensitively).
pub(crate) const ANY_ELEMENT: &str = "any_element";

/// One `any_element` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AnyElementCall {
    /// The list column as a dotted path.
    pub(crate) column: String,
    /// The inner predicate text (quotes unescaped).
    pub(crate) predicate: String,
    /// Whether the call is under `NOT`.
    pub(crate) negated: bool,
}

fn invalid(what: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!("any_element: {what}"))
}

/// If `expr` is `any_element(...)` or `NOT any_element(...)` (parentheses allowed),
/// the call; `Ok(None)` for any other expression; an error for a malformed call.
pub(crate) fn any_element_call(expr: &Expr) -> Result<Option<AnyElementCall>> {
    match expr {
        Expr::Nested(inner) => any_element_call(inner),
        Expr::UnaryOp {
            op: UnaryOperator::Not,
            expr: inner,
        } => Ok(any_element_call(inner)?.map(|mut c| {
            c.negated = !c.negated;
            c
        })),
        Expr::Function(f) => {
            let is_any_element = f.name.0.len() == 1
                && f.name.0[0]
                    .as_ident()
                    .is_some_and(|i| i.value.eq_ignore_ascii_case(ANY_ELEMENT));
            if !is_any_element {
                return Ok(None);
            }
            let FunctionArguments::List(list) = &f.args else {
                return Err(invalid("expected any_element(list_column, 'predicate')"));
            };
            let args: Vec<&Expr> = list
                .args
                .iter()
                .map(|a| match a {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Ok(e),
                    other => Err(invalid(format!("unexpected argument {other}"))),
                })
                .collect::<Result<_>>()?;
            let [column, predicate] = args.as_slice() else {
                return Err(invalid(format!(
                    "expected 2 arguments (list_column, 'predicate'), got {}",
                    args.len()
                )));
            };
            let column = match column {
                Expr::Identifier(id) => id.value.clone(),
                Expr::CompoundIdentifier(ids) => ids
                    .iter()
                    .map(|i| i.value.as_str())
                    .collect::<Vec<_>>()
                    .join("."),
                other => return Err(invalid(format!("{other} is not a column"))),
            };
            let predicate = match predicate {
                Expr::Value(v) => match &v.value {
                    Value::SingleQuotedString(s) => s.clone(),
                    other => {
                        return Err(invalid(format!(
                            "the predicate must be a quoted string, got {other}"
                        )))
                    }
                },
                other => {
                    return Err(invalid(format!(
                        "the predicate must be a quoted string, got {other}"
                    )))
                }
            };
            Ok(Some(AnyElementCall {
                column,
                predicate,
                negated: false,
            }))
        }
        _ => Ok(None),
    }
}

/// Parse a whole filter that is one (possibly negated) `any_element` call (through the
/// filter engine's one parser); for the fuzz targets and tests.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn parse_any_element_filter(text: &str) -> Result<AnyElementCall> {
    use crate::index::sql::expr::{parse_sql, SqlContext, SqlExpr};
    let mut expr = parse_sql(text, SqlContext::Filter)?;
    let mut negated = false;
    loop {
        match expr {
            SqlExpr::Not(inner) => {
                negated = !negated;
                expr = *inner;
            }
            SqlExpr::AnyElement(mut call) => {
                call.negated = call.negated != negated;
                return Ok(call);
            }
            _ => return Err(invalid(format!("{text:?} is not an any_element call"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_calls_and_negation() {
        let c = parse_any_element_filter(
            "any_element(detections, 'label = ''car'' AND confidence > 0.9')",
        )
        .unwrap();
        assert_eq!(
            c,
            AnyElementCall {
                column: "detections".into(),
                predicate: "label = 'car' AND confidence > 0.9".into(),
                negated: false
            }
        );
        let c = parse_any_element_filter("NOT (ANY_ELEMENT(s.det, 'x IS NULL'))").unwrap();
        assert_eq!(c.column, "s.det");
        assert!(c.negated);
        let c = parse_any_element_filter("NOT NOT any_element(d, 'x = 1')").unwrap();
        assert!(!c.negated);
    }

    #[test]
    fn malformed_calls_are_errors() {
        for bad in [
            "any_element(d)",
            "any_element(d, 'a', 'b')",
            "any_element('d', 'a = 1')",
            "any_element(d, a = 1)",
            "any_element(d, 'a = 1') garbage",
            "x = 1",
            "",
        ] {
            assert!(
                matches!(
                    parse_any_element_filter(bad),
                    Err(Error::InvalidArgument(_))
                ),
                "{bad}"
            );
        }
    }
}
