//! The one SQL parser of lakeseek's filters: SQL text → untyped [`SqlExpr`] (sqlparser,
//! generic dialect). Top-level filters (columns of a dataset) and the inner predicates of
//! `any_element(col, 'predicate')` (fields of the list's elements) are parsed here; the
//! binder ([`super::bind`]) types them against their scope.
//!
//! Accepted: comparisons `= != <> < <= > >=` (field or literal on either side), `[NOT] IN
//! (...)`, `[NOT] BETWEEN`, `IS [NOT] NULL`, `IS [NOT] TRUE|FALSE|UNKNOWN`, `IS [NOT]
//! DISTINCT FROM`, `AND`, `OR`, `NOT`, parentheses, bare boolean fields, literals (numbers,
//! `'strings'`, `X'hex'`, `TRUE`/`FALSE`/`NULL`, `DATE '...'`, `TIMESTAMP '...'`,
//! `CAST('NaN' AS DOUBLE)` / `'inf'::real`), `any_element(list_col, 'predicate')` and the
//! list functions `array_has_any(col, [..])`, `array_has_all(col, [..])`,
//! `array_contains(col, v)` / `array_has(col, v)`, the string tests `[NOT] LIKE`,
//! `[NOT] ILIKE`, `contains(col, 'x')`, `starts_with(col, 'x')` (see
//! [`super::string_match`]). Other function calls (and arithmetic, ...) are kept as opaque [`SqlExpr::Opaque`] nodes: the list element planner
//! treats them as conjuncts the keys cannot answer, the evaluator reports them as
//! unsupported, and top-level filters refuse them.

use sqlparser::ast::{BinaryOperator, Expr, UnaryOperator};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;

use super::call::{any_element_call, AnyElementCall};
pub(crate) use super::string_match::StringTest;
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
pub(crate) enum SqlExpr {
    /// A column (top level) or element field, by its current name.
    Field(String),
    /// A dotted path (`a.b`): a nested column at top level; refused inside `any_element`.
    Path(Vec<String>),
    /// `any_element(list_col, 'predicate')` (the inner predicate is parsed when bound).
    AnyElement(AnyElementCall),
    /// `array_has_any` / `array_has_all` / `array_contains` / `array_has`.
    ListHas {
        /// The function.
        function: ListFunction,
        /// The list column's path.
        column: String,
        /// The values (literals).
        values: Vec<SqlExpr>,
    },
    /// A literal.
    Literal(Literal),
    /// `left op right`.
    Compare {
        /// Left operand.
        left: Box<SqlExpr>,
        /// Operator.
        op: CompareOp,
        /// Right operand.
        right: Box<SqlExpr>,
    },
    /// `expr [NOT] IN (list)`.
    InList {
        /// Tested expression.
        expr: Box<SqlExpr>,
        /// List.
        list: Vec<SqlExpr>,
        /// `NOT IN`.
        negated: bool,
    },
    /// `expr [NOT] BETWEEN low AND high`.
    Between {
        /// Tested expression.
        expr: Box<SqlExpr>,
        /// Low bound (inclusive).
        low: Box<SqlExpr>,
        /// High bound (inclusive).
        high: Box<SqlExpr>,
        /// `NOT BETWEEN`.
        negated: bool,
    },
    /// `expr IS [NOT] NULL`.
    IsNull {
        /// Tested expression.
        expr: Box<SqlExpr>,
        /// `IS NOT NULL`.
        negated: bool,
    },
    /// `expr IS [NOT] TRUE|FALSE|UNKNOWN`.
    IsTruth {
        /// Tested expression.
        expr: Box<SqlExpr>,
        /// Truth value.
        truth: Truth,
        /// `IS NOT ...`.
        negated: bool,
    },
    /// `left IS [NOT] DISTINCT FROM right`.
    IsDistinctFrom {
        /// Left operand.
        left: Box<SqlExpr>,
        /// Right operand.
        right: Box<SqlExpr>,
        /// `IS NOT DISTINCT FROM`.
        negated: bool,
    },
    /// Conjunction (flattened).
    And(Vec<SqlExpr>),
    /// Disjunction (flattened).
    Or(Vec<SqlExpr>),
    /// Negation.
    Not(Box<SqlExpr>),
    /// `expr [I]LIKE pattern`, `contains(expr, pattern)`, `starts_with(expr, pattern)`
    /// (`NOT LIKE` is [`SqlExpr::Not`] of it).
    StringMatch {
        /// The tested expression.
        expr: Box<SqlExpr>,
        /// Which test.
        test: StringTest,
        /// The pattern, needle or prefix.
        pattern: Box<SqlExpr>,
    },
    /// A function call or other expression kept as written.
    Opaque(String),
}

/// A list membership function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ListFunction {
    /// `array_has_any(col, [..])`.
    HasAny,
    /// `array_has_all(col, [..])`.
    HasAll,
    /// `array_contains(col, v)` / `array_has(col, v)`.
    Contains,
}

/// Where a parsed text comes from (for error messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SqlContext {
    /// A top-level filter.
    Filter,
    /// The predicate string of an `any_element` call.
    ElementPredicate,
}

impl SqlContext {
    /// The words error messages start with.
    pub(crate) fn label(self) -> &'static str {
        match self {
            SqlContext::Filter => "filter",
            SqlContext::ElementPredicate => "any_element predicate",
        }
    }
}

fn invalid(text: &str, what: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!("any_element predicate {text:?}: {what}"))
}

/// Parse SQL text (the only place lakeseek calls sqlparser for filters).
pub(crate) fn parse_sql(text: &str, context: SqlContext) -> Result<SqlExpr> {
    let fail = |what: &dyn std::fmt::Display| {
        Error::InvalidArgument(format!("{} {text:?}: {what}", context.label()))
    };
    super::limits::check_filter_shape(text, context.label())?;
    let dialect = GenericDialect {};
    let mut parser = Parser::new(&dialect)
        .try_with_sql(text)
        .map_err(|e| fail(&e))?;
    let expr = parser.parse_expr().map_err(|e| fail(&e))?;
    if parser.peek_token().token != Token::EOF {
        return Err(fail(&format!(
            "unexpected {} after the expression",
            parser.peek_token()
        )));
    }
    convert(text, &expr).map_err(|e| match (e, context) {
        (Error::InvalidArgument(m), SqlContext::Filter) => {
            Error::InvalidArgument(m.replacen("any_element predicate ", "filter ", 1))
        }
        (e, _) => e,
    })
}

/// Parse the predicate string of an `any_element` call.
pub(crate) fn parse_element_predicate(text: &str) -> Result<SqlExpr> {
    parse_sql(text, SqlContext::ElementPredicate)
}

fn list_function(expr: &Expr) -> Option<ListFunction> {
    let Expr::Function(f) = expr else { return None };
    let [name] = f.name.0.as_slice() else {
        return None;
    };
    let name = name.as_ident()?.value.to_ascii_lowercase();
    Some(match name.as_str() {
        "array_has_any" => ListFunction::HasAny,
        "array_has_all" => ListFunction::HasAll,
        "array_contains" | "array_has" | "list_has" | "list_contains" => ListFunction::Contains,
        _ => return None,
    })
}

fn convert_list_function(text: &str, function: ListFunction, expr: &Expr) -> Result<SqlExpr> {
    use sqlparser::ast::{FunctionArg, FunctionArgExpr, FunctionArguments};
    let Expr::Function(f) = expr else {
        return Ok(SqlExpr::Opaque(expr.to_string()));
    };
    let FunctionArguments::List(list) = &f.args else {
        return Err(invalid(
            text,
            format!("{expr}: expected (list_column, values)"),
        ));
    };
    let args: Vec<&Expr> = list
        .args
        .iter()
        .filter_map(|a| match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
            _ => None,
        })
        .collect();
    let [column, values] = args.as_slice() else {
        return Err(invalid(text, format!("{expr}: expected 2 arguments")));
    };
    let column = match convert(text, column)? {
        SqlExpr::Field(name) => name,
        SqlExpr::Path(parts) => parts.join("."),
        other => return Err(invalid(text, format!("{other:?} is not a list column"))),
    };
    let values = match (function, values) {
        (ListFunction::Contains, v) => vec![convert(text, v)?],
        (_, Expr::Array(array)) => array
            .elem
            .iter()
            .map(|e| convert(text, e))
            .collect::<Result<_>>()?,
        (_, other) => {
            return Err(invalid(
                text,
                format!("{expr}: the values must be an array literal [..], got {other}"),
            ))
        }
    };
    Ok(SqlExpr::ListHas {
        function,
        column,
        values,
    })
}

/// Convert a sqlparser expression into an [`SqlExpr`].
pub(crate) fn convert(text: &str, expr: &Expr) -> Result<SqlExpr> {
    let boxed = |e: &Expr| convert(text, e).map(Box::new);
    if let Some(call) = convert_known_call(text, expr)? {
        return Ok(call);
    }
    if let Some(test) = convert_test(text, expr)? {
        return Ok(test);
    }
    Ok(match expr {
        Expr::Nested(inner) => convert(text, inner)?,
        Expr::Identifier(id) => SqlExpr::Field(id.value.clone()),
        Expr::CompoundIdentifier(ids) => {
            SqlExpr::Path(ids.iter().map(|i| i.value.clone()).collect())
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
            let Some(op) = compare_op(op) else {
                return Ok(SqlExpr::Opaque(expr.to_string()));
            };
            SqlExpr::Compare {
                left: boxed(left)?,
                op,
                right: boxed(right)?,
            }
        }
        Expr::UnaryOp {
            op: UnaryOperator::Not,
            expr: inner,
        } => SqlExpr::Not(boxed(inner)?),
        Expr::InList {
            expr: e,
            list,
            negated,
        } => SqlExpr::InList {
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
        } => SqlExpr::Between {
            expr: boxed(e)?,
            low: boxed(low)?,
            high: boxed(high)?,
            negated: *negated,
        },
        Expr::Function(_) => SqlExpr::Opaque(expr.to_string()),
        other => match literal(text, other)? {
            Some(lit) => SqlExpr::Literal(lit),
            None => SqlExpr::Opaque(other.to_string()),
        },
    })
}

/// `any_element(..)` (a negated call as `NOT` of the positive one), the list functions
/// and the string tests (`LIKE`, `ILIKE`, `contains`, `starts_with`); `None` for any other
/// expression.
fn convert_known_call(text: &str, expr: &Expr) -> Result<Option<SqlExpr>> {
    if let Some(call) = any_element_call(expr)? {
        return Ok(Some(if call.negated {
            let mut inner = call;
            inner.negated = false;
            SqlExpr::Not(Box::new(SqlExpr::AnyElement(inner)))
        } else {
            SqlExpr::AnyElement(call)
        }));
    }
    match list_function(expr) {
        Some(function) => convert_list_function(text, function, expr).map(Some),
        None => super::string_match::convert_string_match(text, expr, &|e| convert(text, e)),
    }
}

/// The tests `IS [NOT] NULL | TRUE | FALSE | UNKNOWN | DISTINCT FROM`; `None` for any
/// other expression.
fn convert_test(text: &str, expr: &Expr) -> Result<Option<SqlExpr>> {
    let boxed = |e: &Expr| convert(text, e).map(Box::new);
    let distinct = |a: &Expr, b: &Expr, negated: bool| -> Result<SqlExpr> {
        Ok(SqlExpr::IsDistinctFrom {
            left: boxed(a)?,
            right: boxed(b)?,
            negated,
        })
    };
    Ok(Some(match expr {
        Expr::IsNull(e) => SqlExpr::IsNull {
            expr: boxed(e)?,
            negated: false,
        },
        Expr::IsNotNull(e) => SqlExpr::IsNull {
            expr: boxed(e)?,
            negated: true,
        },
        Expr::IsTrue(e) => truth(boxed(e)?, Truth::True, false),
        Expr::IsNotTrue(e) => truth(boxed(e)?, Truth::True, true),
        Expr::IsFalse(e) => truth(boxed(e)?, Truth::False, false),
        Expr::IsNotFalse(e) => truth(boxed(e)?, Truth::False, true),
        Expr::IsUnknown(e) => truth(boxed(e)?, Truth::Unknown, false),
        Expr::IsNotUnknown(e) => truth(boxed(e)?, Truth::Unknown, true),
        Expr::IsDistinctFrom(a, b) => distinct(a, b, false)?,
        Expr::IsNotDistinctFrom(a, b) => distinct(a, b, true)?,
        _ => return Ok(None),
    }))
}

/// The comparison a binary operator stands for, if it is one.
fn compare_op(op: &BinaryOperator) -> Option<CompareOp> {
    Some(match op {
        BinaryOperator::Eq => CompareOp::Eq,
        BinaryOperator::NotEq => CompareOp::NotEq,
        BinaryOperator::Lt => CompareOp::Lt,
        BinaryOperator::LtEq => CompareOp::LtEq,
        BinaryOperator::Gt => CompareOp::Gt,
        BinaryOperator::GtEq => CompareOp::GtEq,
        _ => return None,
    })
}

fn truth(expr: Box<SqlExpr>, truth: Truth, negated: bool) -> SqlExpr {
    SqlExpr::IsTruth {
        expr,
        truth,
        negated,
    }
}

/// `a AND b` (or `a OR b`) with `AND`s (`OR`s) of the same kind merged into one list.
pub(crate) fn flatten(a: SqlExpr, b: SqlExpr, and: bool) -> SqlExpr {
    let mut parts = Vec::new();
    for e in [a, b] {
        match (e, and) {
            (SqlExpr::And(v), true) | (SqlExpr::Or(v), false) => parts.extend(v),
            (e, _) => parts.push(e),
        }
    }
    if and {
        SqlExpr::And(parts)
    } else {
        SqlExpr::Or(parts)
    }
}

/// A literal expression; `Ok(None)` when `expr` is not a literal form at all.
fn literal(text: &str, expr: &Expr) -> Result<Option<Literal>> {
    try_literal(expr, &|what| invalid(text, what))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(n: &str) -> Box<SqlExpr> {
        Box::new(SqlExpr::Field(n.into()))
    }

    fn lit(l: Literal) -> Box<SqlExpr> {
        Box::new(SqlExpr::Literal(l))
    }

    #[test]
    fn parses_every_form() {
        assert_eq!(
            parse_element_predicate("label = 'car'").unwrap(),
            SqlExpr::Compare {
                left: field("label"),
                op: CompareOp::Eq,
                right: lit(Literal::String("car".into()))
            }
        );
        let SqlExpr::And(parts) =
            parse_element_predicate("a = 1 AND (b > -2.5 AND c IS NOT NULL) AND d").unwrap()
        else {
            panic!()
        };
        assert_eq!(parts.len(), 4);
        assert_eq!(
            parts[1],
            SqlExpr::Compare {
                left: field("b"),
                op: CompareOp::Gt,
                right: lit(Literal::Number("-2.5".into()))
            }
        );
        assert_eq!(parts[3], SqlExpr::Field("d".into()));
        assert_eq!(
            parse_element_predicate("x IS NOT UNKNOWN").unwrap(),
            SqlExpr::IsTruth {
                expr: field("x"),
                truth: Truth::Unknown,
                negated: true
            }
        );
        assert_eq!(
            parse_element_predicate("(a > 1) IS FALSE").unwrap(),
            SqlExpr::IsTruth {
                expr: Box::new(SqlExpr::Compare {
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
            SqlExpr::IsDistinctFrom {
                left: field("a"),
                right: lit(Literal::Null),
                negated: true
            }
        );
        assert!(matches!(
            parse_element_predicate("a NOT IN (1, NULL)").unwrap(),
            SqlExpr::InList { negated: true, ref list, .. } if list.len() == 2
        ));
        assert!(matches!(
            parse_element_predicate("d BETWEEN DATE '2024-01-01' AND DATE '2024-02-01'").unwrap(),
            SqlExpr::Between { negated: false, .. }
        ));
        assert_eq!(
            parse_element_predicate("f = 'nan'::double").unwrap(),
            SqlExpr::Compare {
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
            SqlExpr::Compare {
                left: field("b"),
                op: CompareOp::Eq,
                right: lit(Literal::Hex(vec![0, 255]))
            }
        );
        let SqlExpr::Or(parts) = parse_element_predicate("a = 1 OR a = 2 OR NOT b").unwrap() else {
            panic!()
        };
        assert_eq!(parts[2], SqlExpr::Not(field("b")));
    }

    #[test]
    fn keeps_functions_and_other_operators_opaque() {
        assert_eq!(
            parse_element_predicate("lower(label) = 'car'").unwrap(),
            SqlExpr::Compare {
                left: Box::new(SqlExpr::Opaque("lower(label)".into())),
                op: CompareOp::Eq,
                right: lit(Literal::String("car".into()))
            }
        );
        assert!(matches!(
            parse_element_predicate("upper(label) LIKE 'c%'").unwrap(),
            SqlExpr::StringMatch { expr, .. } if matches!(*expr, SqlExpr::Opaque(_))
        ));
        assert!(matches!(
            parse_element_predicate("a + 1 = 2").unwrap(),
            SqlExpr::Compare { left, .. } if matches!(*left, SqlExpr::Opaque(_))
        ));
    }

    #[test]
    fn malformed_predicates_are_invalid_arguments() {
        for bad in ["", "label =", "label = 'car' garbage", "b = X'0'", "a = 'x"] {
            assert!(
                matches!(parse_element_predicate(bad), Err(Error::InvalidArgument(_))),
                "{bad}"
            );
        }
    }
}
