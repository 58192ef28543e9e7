//! The inner predicate of `any_element(col, 'predicate')`: SQL text → untyped
//! [`ElementExpr`] over the element's fields (sqlparser, generic dialect).
//!
//! Accepted: comparisons `= != <> < <= > >=` (field or literal on either side), `[NOT] IN
//! (...)`, `[NOT] BETWEEN`, `IS [NOT] NULL`, `IS [NOT] TRUE|FALSE|UNKNOWN`, `IS [NOT]
//! DISTINCT FROM`, `AND`, `OR`, `NOT`, parentheses, bare boolean fields, literals (numbers,
//! `'strings'`, `X'hex'`, `TRUE`/`FALSE`/`NULL`, `DATE '...'`, `TIMESTAMP '...'`,
//! `CAST('NaN' AS DOUBLE)` / `'inf'::real`). Function calls (and `LIKE`, arithmetic, ...)
//! are kept as opaque [`ElementExpr::Opaque`] nodes: the planner treats them as conjuncts
//! the keys cannot answer, and the evaluator reports them as unsupported.

use sqlparser::ast::{BinaryOperator, Expr, UnaryOperator};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;

use crate::error::{Error, Result};
use crate::index::sql_literal::try_literal;
pub(crate) use crate::index::sql_literal::{CompareOp, Literal};

/// The truth value tested by `IS [NOT] TRUE|FALSE|UNKNOWN`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Truth {
    /// `IS TRUE`.
    True,
    /// `IS FALSE`.
    False,
    /// `IS UNKNOWN`.
    Unknown,
}

/// An untyped predicate over the fields of one list element.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ElementExpr {
    /// A field of the element, by its current name.
    Field(String),
    /// A literal.
    Literal(Literal),
    /// `left op right`.
    Compare {
        /// Left operand.
        left: Box<ElementExpr>,
        /// Operator.
        op: CompareOp,
        /// Right operand.
        right: Box<ElementExpr>,
    },
    /// `expr [NOT] IN (list)`.
    InList {
        /// Tested expression.
        expr: Box<ElementExpr>,
        /// List.
        list: Vec<ElementExpr>,
        /// `NOT IN`.
        negated: bool,
    },
    /// `expr [NOT] BETWEEN low AND high`.
    Between {
        /// Tested expression.
        expr: Box<ElementExpr>,
        /// Low bound (inclusive).
        low: Box<ElementExpr>,
        /// High bound (inclusive).
        high: Box<ElementExpr>,
        /// `NOT BETWEEN`.
        negated: bool,
    },
    /// `expr IS [NOT] NULL`.
    IsNull {
        /// Tested expression.
        expr: Box<ElementExpr>,
        /// `IS NOT NULL`.
        negated: bool,
    },
    /// `expr IS [NOT] TRUE|FALSE|UNKNOWN`.
    IsTruth {
        /// Tested expression.
        expr: Box<ElementExpr>,
        /// Truth value.
        truth: Truth,
        /// `IS NOT ...`.
        negated: bool,
    },
    /// `left IS [NOT] DISTINCT FROM right`.
    IsDistinctFrom {
        /// Left operand.
        left: Box<ElementExpr>,
        /// Right operand.
        right: Box<ElementExpr>,
        /// `IS NOT DISTINCT FROM`.
        negated: bool,
    },
    /// Conjunction (flattened).
    And(Vec<ElementExpr>),
    /// Disjunction (flattened).
    Or(Vec<ElementExpr>),
    /// Negation.
    Not(Box<ElementExpr>),
    /// A function call or other expression kept as written.
    Opaque(String),
}

fn invalid(text: &str, what: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!("any_element predicate {text:?}: {what}"))
}

/// Parse the predicate string of an `any_element` call.
pub(crate) fn parse_element_predicate(text: &str) -> Result<ElementExpr> {
    let dialect = GenericDialect {};
    let mut parser = Parser::new(&dialect)
        .try_with_sql(text)
        .map_err(|e| invalid(text, e))?;
    let expr = parser.parse_expr().map_err(|e| invalid(text, e))?;
    if parser.peek_token().token != Token::EOF {
        return Err(invalid(
            text,
            format!("unexpected {} after the expression", parser.peek_token()),
        ));
    }
    convert(text, &expr)
}

/// Convert a sqlparser expression into an [`ElementExpr`].
pub(crate) fn convert(text: &str, expr: &Expr) -> Result<ElementExpr> {
    let boxed = |e: &Expr| convert(text, e).map(Box::new);
    Ok(match expr {
        Expr::Nested(inner) => convert(text, inner)?,
        Expr::Identifier(id) => ElementExpr::Field(id.value.clone()),
        Expr::CompoundIdentifier(ids) => {
            let path: Vec<_> = ids.iter().map(|i| i.value.as_str()).collect();
            return Err(invalid(
                text,
                format!(
                    "{} names a nested path; refer to element fields by their own name",
                    path.join(".")
                ),
            ));
        }
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => flatten(convert(text, left)?, convert(text, right)?, true),
        Expr::BinaryOp {
            left,
            op: BinaryOperator::Or,
            right,
        } => flatten(convert(text, left)?, convert(text, right)?, false),
        Expr::BinaryOp { left, op, right } => {
            let op = match op {
                BinaryOperator::Eq => CompareOp::Eq,
                BinaryOperator::NotEq => CompareOp::NotEq,
                BinaryOperator::Lt => CompareOp::Lt,
                BinaryOperator::LtEq => CompareOp::LtEq,
                BinaryOperator::Gt => CompareOp::Gt,
                BinaryOperator::GtEq => CompareOp::GtEq,
                _ => return Ok(ElementExpr::Opaque(expr.to_string())),
            };
            ElementExpr::Compare {
                left: boxed(left)?,
                op,
                right: boxed(right)?,
            }
        }
        Expr::UnaryOp {
            op: UnaryOperator::Not,
            expr: inner,
        } => ElementExpr::Not(boxed(inner)?),
        Expr::IsNull(e) => ElementExpr::IsNull {
            expr: boxed(e)?,
            negated: false,
        },
        Expr::IsNotNull(e) => ElementExpr::IsNull {
            expr: boxed(e)?,
            negated: true,
        },
        Expr::IsTrue(e) => truth(boxed(e)?, Truth::True, false),
        Expr::IsNotTrue(e) => truth(boxed(e)?, Truth::True, true),
        Expr::IsFalse(e) => truth(boxed(e)?, Truth::False, false),
        Expr::IsNotFalse(e) => truth(boxed(e)?, Truth::False, true),
        Expr::IsUnknown(e) => truth(boxed(e)?, Truth::Unknown, false),
        Expr::IsNotUnknown(e) => truth(boxed(e)?, Truth::Unknown, true),
        Expr::IsDistinctFrom(a, b) => ElementExpr::IsDistinctFrom {
            left: boxed(a)?,
            right: boxed(b)?,
            negated: false,
        },
        Expr::IsNotDistinctFrom(a, b) => ElementExpr::IsDistinctFrom {
            left: boxed(a)?,
            right: boxed(b)?,
            negated: true,
        },
        Expr::InList {
            expr: e,
            list,
            negated,
        } => ElementExpr::InList {
            expr: boxed(e)?,
            list: list
                .iter()
                .map(|e| convert(text, e))
                .collect::<Result<_>>()?,
            negated: *negated,
        },
        Expr::Between {
            expr: e,
            negated,
            low,
            high,
        } => ElementExpr::Between {
            expr: boxed(e)?,
            low: boxed(low)?,
            high: boxed(high)?,
            negated: *negated,
        },
        Expr::Function(_) => ElementExpr::Opaque(expr.to_string()),
        other => match literal(text, other)? {
            Some(lit) => ElementExpr::Literal(lit),
            None => ElementExpr::Opaque(other.to_string()),
        },
    })
}

fn truth(expr: Box<ElementExpr>, truth: Truth, negated: bool) -> ElementExpr {
    ElementExpr::IsTruth {
        expr,
        truth,
        negated,
    }
}

fn flatten(a: ElementExpr, b: ElementExpr, and: bool) -> ElementExpr {
    let mut parts = Vec::new();
    for e in [a, b] {
        match (e, and) {
            (ElementExpr::And(v), true) | (ElementExpr::Or(v), false) => parts.extend(v),
            (e, _) => parts.push(e),
        }
    }
    if and {
        ElementExpr::And(parts)
    } else {
        ElementExpr::Or(parts)
    }
}

/// A literal expression; `Ok(None)` when `expr` is not a literal form at all.
fn literal(text: &str, expr: &Expr) -> Result<Option<Literal>> {
    try_literal(expr, &|what| invalid(text, what))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(n: &str) -> Box<ElementExpr> {
        Box::new(ElementExpr::Field(n.into()))
    }

    fn lit(l: Literal) -> Box<ElementExpr> {
        Box::new(ElementExpr::Literal(l))
    }

    #[test]
    fn parses_every_form() {
        assert_eq!(
            parse_element_predicate("label = 'car'").unwrap(),
            ElementExpr::Compare {
                left: field("label"),
                op: CompareOp::Eq,
                right: lit(Literal::String("car".into()))
            }
        );
        let ElementExpr::And(parts) =
            parse_element_predicate("a = 1 AND (b > -2.5 AND c IS NOT NULL) AND d").unwrap()
        else {
            panic!()
        };
        assert_eq!(parts.len(), 4);
        assert_eq!(
            parts[1],
            ElementExpr::Compare {
                left: field("b"),
                op: CompareOp::Gt,
                right: lit(Literal::Number("-2.5".into()))
            }
        );
        assert_eq!(parts[3], ElementExpr::Field("d".into()));
        assert_eq!(
            parse_element_predicate("x IS NOT UNKNOWN").unwrap(),
            ElementExpr::IsTruth {
                expr: field("x"),
                truth: Truth::Unknown,
                negated: true
            }
        );
        assert_eq!(
            parse_element_predicate("(a > 1) IS FALSE").unwrap(),
            ElementExpr::IsTruth {
                expr: Box::new(ElementExpr::Compare {
                    left: field("a"),
                    op: CompareOp::Gt,
                    right: lit(Literal::Number("1".into()))
                }),
                truth: Truth::False,
                negated: false
            }
        );
        assert_eq!(
            parse_element_predicate("a IS NOT DISTINCT FROM NULL").unwrap(),
            ElementExpr::IsDistinctFrom {
                left: field("a"),
                right: lit(Literal::Null),
                negated: true
            }
        );
        assert!(matches!(
            parse_element_predicate("a NOT IN (1, NULL)").unwrap(),
            ElementExpr::InList { negated: true, ref list, .. } if list.len() == 2
        ));
        assert!(matches!(
            parse_element_predicate("d BETWEEN DATE '2024-01-01' AND DATE '2024-02-01'").unwrap(),
            ElementExpr::Between { negated: false, .. }
        ));
        assert_eq!(
            parse_element_predicate("f = 'nan'::double").unwrap(),
            ElementExpr::Compare {
                left: field("f"),
                op: CompareOp::Eq,
                right: lit(Literal::FloatCast {
                    text: "nan".into(),
                    single: false
                })
            }
        );
        assert_eq!(
            parse_element_predicate("b = X'00ff'").unwrap(),
            ElementExpr::Compare {
                left: field("b"),
                op: CompareOp::Eq,
                right: lit(Literal::Hex(vec![0, 255]))
            }
        );
        let ElementExpr::Or(parts) = parse_element_predicate("a = 1 OR a = 2 OR NOT b").unwrap()
        else {
            panic!()
        };
        assert_eq!(parts[2], ElementExpr::Not(field("b")));
    }

    #[test]
    fn keeps_functions_and_other_operators_opaque() {
        assert_eq!(
            parse_element_predicate("lower(label) = 'car'").unwrap(),
            ElementExpr::Compare {
                left: Box::new(ElementExpr::Opaque("lower(label)".into())),
                op: CompareOp::Eq,
                right: lit(Literal::String("car".into()))
            }
        );
        assert!(matches!(
            parse_element_predicate("label LIKE 'c%'").unwrap(),
            ElementExpr::Opaque(_)
        ));
        assert!(matches!(
            parse_element_predicate("a + 1 = 2").unwrap(),
            ElementExpr::Compare { left, .. } if matches!(*left, ElementExpr::Opaque(_))
        ));
    }

    #[test]
    fn malformed_predicates_are_invalid_arguments() {
        for bad in [
            "",
            "label =",
            "label = 'car' garbage",
            "a.b = 1",
            "b = X'0'",
            "a = 'x",
        ] {
            assert!(
                matches!(parse_element_predicate(bad), Err(Error::InvalidArgument(_))),
                "{bad}"
            );
        }
    }
}
