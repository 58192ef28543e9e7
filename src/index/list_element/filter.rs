//! Filters that hold `any_element` calls: `any_element(...)`, `NOT any_element(...)`, and
//! either combined by `AND` with other (indexed) predicates, e.g.
//! `any_element(detections, 'label = ''car''') AND frame < 100`.
//!
//! The filter is split into its top-level `AND` conjuncts; each `any_element` call is
//! answered by [`super::query`], every other conjunct by the BTree query of its column
//! ([`crate::index::query`]); the answer is the intersection. An `any_element` call
//! anywhere else (under `OR`, inside a comparison, ...) is refused with a clear error.

use roaring::RoaringTreemap;
use sqlparser::ast::{BinaryOperator, Expr};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;

use super::call::{any_element_call, AnyElementCall, ANY_ELEMENT};
use super::query::{
    execute_any_element_query, explain_any_element, plan_any_element_query, AnyElementOptions,
    AnyElementQueryPlan,
};
use crate::error::{Error, Result};
use crate::index::query::{execute_plan, explain, plan_query, QueryOptions, QueryPlan};
use crate::io::IoStats;
use crate::lance::dataset::Dataset;

/// One top-level conjunct of a filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FilterPart {
    /// An `any_element` call, possibly under `NOT`.
    AnyElement(AnyElementCall),
    /// Any other predicate, as SQL text.
    Other(String),
}

fn parse(text: &str) -> Result<Expr> {
    let dialect = GenericDialect {};
    let invalid =
        |e: &dyn std::fmt::Display| Error::InvalidArgument(format!("filter {text:?}: {e}"));
    let mut parser = Parser::new(&dialect)
        .try_with_sql(text)
        .map_err(|e| invalid(&e))?;
    let expr = parser.parse_expr().map_err(|e| invalid(&e))?;
    if parser.peek_token().token != Token::EOF {
        return Err(invalid(&format!(
            "unexpected {} after the expression",
            parser.peek_token()
        )));
    }
    Ok(expr)
}

fn conjuncts<'a>(expr: &'a Expr, out: &mut Vec<&'a Expr>) {
    match expr {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => {
            conjuncts(left, out);
            conjuncts(right, out);
        }
        Expr::Nested(inner)
            if matches!(
                inner.as_ref(),
                Expr::BinaryOp {
                    op: BinaryOperator::And,
                    ..
                }
            ) =>
        {
            conjuncts(inner, out)
        }
        other => out.push(other),
    }
}

/// Whether `expr` calls `any_element` anywhere (in the expression forms filters use).
fn mentions_any_element(expr: &Expr) -> bool {
    match expr {
        Expr::Function(f) => f
            .name
            .0
            .last()
            .and_then(|p| p.as_ident())
            .is_some_and(|i| i.value.eq_ignore_ascii_case(ANY_ELEMENT)),
        Expr::BinaryOp { left, right, .. } => {
            mentions_any_element(left) || mentions_any_element(right)
        }
        Expr::UnaryOp { expr, .. }
        | Expr::Nested(expr)
        | Expr::IsNull(expr)
        | Expr::IsNotNull(expr)
        | Expr::IsTrue(expr)
        | Expr::IsNotTrue(expr)
        | Expr::IsFalse(expr)
        | Expr::IsNotFalse(expr)
        | Expr::IsUnknown(expr)
        | Expr::IsNotUnknown(expr) => mentions_any_element(expr),
        Expr::IsDistinctFrom(a, b) | Expr::IsNotDistinctFrom(a, b) => {
            mentions_any_element(a) || mentions_any_element(b)
        }
        Expr::InList { expr, list, .. } => {
            mentions_any_element(expr) || list.iter().any(mentions_any_element)
        }
        Expr::Between {
            expr, low, high, ..
        } => mentions_any_element(expr) || mentions_any_element(low) || mentions_any_element(high),
        _ => false,
    }
}

/// The conjuncts of a filter that holds an `any_element` call; `None` when it holds none
/// (the filter is then a plain BTree filter).
pub(crate) fn split_any_element_filter(text: &str) -> Result<Option<Vec<FilterPart>>> {
    let expr = parse(text)?;
    if !mentions_any_element(&expr) {
        return Ok(None);
    }
    let mut parts = Vec::new();
    let mut list = Vec::new();
    conjuncts(&expr, &mut list);
    for c in list {
        match any_element_call(c)? {
            Some(call) => parts.push(FilterPart::AnyElement(call)),
            None if mentions_any_element(c) => {
                return Err(Error::unsupported(format!(
                    "filter {text:?}: any_element can only be a top-level AND conjunct, optionally under NOT (found in {c})"
                )))
            }
            None => parts.push(FilterPart::Other(c.to_string())),
        }
    }
    Ok(Some(parts))
}

/// A planned conjunct.
#[derive(Debug)]
pub(crate) enum PlannedPart {
    /// An `any_element` call.
    AnyElement(Box<AnyElementQueryPlan>),
    /// A BTree query.
    Other(Box<QueryPlan>),
}

/// Plan every conjunct (concurrently: one wave).
pub(crate) async fn plan_parts(
    dataset: &Dataset,
    parts: &[FilterPart],
    allow_scan: bool,
    options: AnyElementOptions,
    stats: &IoStats,
) -> Result<Vec<PlannedPart>> {
    let plans = parts.iter().map(|p| async move {
        Ok::<_, Error>(match p {
            FilterPart::AnyElement(call) => PlannedPart::AnyElement(Box::new(
                plan_any_element_query(dataset, call, options, stats).await?,
            )),
            FilterPart::Other(text) => PlannedPart::Other(Box::new(
                plan_query(dataset, text, QueryOptions { allow_scan }, stats).await?,
            )),
        })
    });
    futures::future::try_join_all(plans).await
}

/// `--explain` output of planned conjuncts.
pub(crate) fn explain_parts(planned: &[PlannedPart]) -> serde_json::Value {
    serde_json::Value::Array(
        planned
            .iter()
            .map(|p| match p {
                PlannedPart::AnyElement(plan) => explain_any_element(plan),
                PlannedPart::Other(plan) => explain(plan),
            })
            .collect(),
    )
}

/// Execute planned conjuncts (concurrently) and intersect their answers.
pub(crate) async fn execute_parts(
    dataset: &Dataset,
    planned: &[PlannedPart],
    stats: &IoStats,
) -> Result<RoaringTreemap> {
    let runs = planned.iter().map(|p| async move {
        match p {
            PlannedPart::AnyElement(plan) => execute_any_element_query(dataset, plan, stats)
                .await
                .map(|a| a.row_addresses),
            PlannedPart::Other(plan) => execute_plan(dataset, plan, stats)
                .await
                .map(|a| a.row_addresses),
        }
    });
    let answers = futures::future::try_join_all(runs).await?;
    let mut iter = answers.into_iter();
    let mut result = iter.next().unwrap_or_default();
    for a in iter {
        result &= a;
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_top_level_conjuncts() {
        assert_eq!(split_any_element_filter("x = 1 AND y < 2").unwrap(), None);
        let parts = split_any_element_filter(
            "any_element(det, 'label = ''car''') AND (frame < 100 AND NOT any_element(det, 'x IS NULL'))",
        )
        .unwrap()
        .unwrap();
        assert_eq!(parts.len(), 3);
        assert!(
            matches!(&parts[0], FilterPart::AnyElement(c) if !c.negated && c.predicate == "label = 'car'")
        );
        assert_eq!(parts[1], FilterPart::Other("frame < 100".into()));
        assert!(matches!(&parts[2], FilterPart::AnyElement(c) if c.negated));
    }

    #[test]
    fn refuses_any_element_elsewhere() {
        for bad in [
            "any_element(det, 'a = 1') OR x = 1",
            "(any_element(det, 'a = 1')) IS NULL",
            "x = 1 AND NOT (any_element(det, 'a = 1') AND y = 2)",
        ] {
            assert!(
                matches!(
                    split_any_element_filter(bad),
                    Err(Error::Unsupported { .. })
                ),
                "{bad}"
            );
        }
        assert!(matches!(
            split_any_element_filter("any_element(det)"),
            Err(Error::InvalidArgument(_))
        ));
    }
}
