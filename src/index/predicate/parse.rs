//! SQL text -> untyped [`Filter`] tree (sqlparser, generic dialect).

use sqlparser::ast::{BinaryOperator, Expr, UnaryOperator};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;

use crate::error::{Error, Result};
use crate::index::sql_literal::try_literal;
pub(crate) use crate::index::sql_literal::{CompareOp, Literal};

/// One side of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Operand {
    /// A column path.
    Column(String),
    /// A literal.
    Literal(Literal),
}

/// An untyped filter tree.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Filter {
    /// Conjunction.
    And(Vec<Filter>),
    /// Disjunction.
    Or(Vec<Filter>),
    /// Negation.
    Not(Box<Filter>),
    /// NULL -> FALSE.
    IsTrue(Box<Filter>),
    /// `left op right`.
    Compare {
        /// Left operand.
        left: Operand,
        /// Operator.
        op: CompareOp,
        /// Right operand.
        right: Operand,
    },
    /// `column [NOT] IN (list)`.
    InList {
        /// Column path.
        column: String,
        /// Values.
        list: Vec<Literal>,
        /// `NOT IN`.
        negated: bool,
    },
    /// `column [NOT] BETWEEN low AND high`.
    Between {
        /// Column path.
        column: String,
        /// Low bound (inclusive).
        low: Literal,
        /// High bound (inclusive).
        high: Literal,
        /// `NOT BETWEEN`.
        negated: bool,
    },
    /// `column IS [NOT] NULL`.
    IsNull {
        /// Column path.
        column: String,
        /// `IS NOT NULL`.
        negated: bool,
    },
    /// A bare boolean column.
    Column(String),
}

fn invalid(text: &str, what: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!("filter {text:?}: {what}"))
}

/// Parse a filter expression.
pub(crate) fn parse_filter(text: &str) -> Result<Filter> {
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

fn convert(text: &str, expr: &Expr) -> Result<Filter> {
    match expr {
        Expr::Nested(inner) => convert(text, inner),
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => Ok(flatten(convert(text, left)?, convert(text, right)?, true)),
        Expr::BinaryOp {
            left,
            op: BinaryOperator::Or,
            right,
        } => Ok(flatten(convert(text, left)?, convert(text, right)?, false)),
        Expr::BinaryOp { left, op, right } => {
            let op = match op {
                BinaryOperator::Eq => CompareOp::Eq,
                BinaryOperator::NotEq => CompareOp::NotEq,
                BinaryOperator::Lt => CompareOp::Lt,
                BinaryOperator::LtEq => CompareOp::LtEq,
                BinaryOperator::Gt => CompareOp::Gt,
                BinaryOperator::GtEq => CompareOp::GtEq,
                other => return Err(unsupported(text, format!("operator {other}"))),
            };
            Ok(Filter::Compare {
                left: operand(text, left)?,
                op,
                right: operand(text, right)?,
            })
        }
        Expr::UnaryOp {
            op: UnaryOperator::Not,
            expr,
        } => Ok(Filter::Not(Box::new(convert(text, expr)?))),
        Expr::IsTrue(e) => Ok(Filter::IsTrue(Box::new(convert(text, e)?))),
        Expr::IsNotTrue(e) => Ok(Filter::Not(Box::new(Filter::IsTrue(Box::new(convert(
            text, e,
        )?))))),
        Expr::IsFalse(e) => Ok(Filter::IsTrue(Box::new(Filter::Not(Box::new(convert(
            text, e,
        )?))))),
        Expr::IsNotFalse(e) => Ok(Filter::Not(Box::new(Filter::IsTrue(Box::new(
            Filter::Not(Box::new(convert(text, e)?)),
        ))))),
        Expr::IsNull(e) => Ok(Filter::IsNull {
            column: column(text, e)?,
            negated: false,
        }),
        Expr::IsNotNull(e) => Ok(Filter::IsNull {
            column: column(text, e)?,
            negated: true,
        }),
        Expr::InList {
            expr,
            list,
            negated,
        } => Ok(Filter::InList {
            column: column(text, expr)?,
            list: list
                .iter()
                .map(|e| literal(text, e))
                .collect::<Result<_>>()?,
            negated: *negated,
        }),
        Expr::Between {
            expr,
            negated,
            low,
            high,
        } => Ok(Filter::Between {
            column: column(text, expr)?,
            low: literal(text, low)?,
            high: literal(text, high)?,
            negated: *negated,
        }),
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => {
            Ok(Filter::Column(column(text, expr)?))
        }
        other => Err(unsupported(text, format!("expression {other}"))),
    }
}

fn unsupported(text: &str, what: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!(
        "filter {text:?}: {what} is not supported (use comparisons, IN, BETWEEN, IS NULL, AND, OR, NOT)"
    ))
}

fn flatten(a: Filter, b: Filter, and: bool) -> Filter {
    let mut parts = Vec::new();
    for f in [a, b] {
        match (f, and) {
            (Filter::And(v), true) | (Filter::Or(v), false) => parts.extend(v),
            (f, _) => parts.push(f),
        }
    }
    if and {
        Filter::And(parts)
    } else {
        Filter::Or(parts)
    }
}

fn column(text: &str, expr: &Expr) -> Result<String> {
    match expr {
        Expr::Nested(inner) => column(text, inner),
        Expr::Identifier(id) => Ok(id.value.clone()),
        Expr::CompoundIdentifier(ids) => Ok(ids
            .iter()
            .map(|i| i.value.as_str())
            .collect::<Vec<_>>()
            .join(".")),
        other => Err(unsupported(
            text,
            format!("{other} where a column was expected"),
        )),
    }
}

fn operand(text: &str, expr: &Expr) -> Result<Operand> {
    match expr {
        Expr::Nested(inner) => operand(text, inner),
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => {
            Ok(Operand::Column(column(text, expr)?))
        }
        other => Ok(Operand::Literal(literal(text, other)?)),
    }
}

fn literal(text: &str, expr: &Expr) -> Result<Literal> {
    try_literal(expr, &|what| invalid(text, what))?
        .ok_or_else(|| unsupported(text, format!("{expr} where a literal was expected")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(s: &str) -> Operand {
        Operand::Column(s.into())
    }

    #[test]
    fn parses_the_supported_forms() {
        assert_eq!(
            parse_filter("key = 'abc'").unwrap(),
            Filter::Compare {
                left: col("key"),
                op: CompareOp::Eq,
                right: Operand::Literal(Literal::String("abc".into()))
            }
        );
        assert_eq!(
            parse_filter("5 < i").unwrap(),
            Filter::Compare {
                left: Operand::Literal(Literal::Number("5".into())),
                op: CompareOp::Lt,
                right: col("i")
            }
        );
        assert_eq!(
            parse_filter("i = - 5").unwrap(),
            Filter::Compare {
                left: col("i"),
                op: CompareOp::Eq,
                right: Operand::Literal(Literal::Number("-5".into()))
            }
        );
        assert_eq!(
            parse_filter("b IN (X'0102', x'ff')").unwrap(),
            Filter::InList {
                column: "b".into(),
                list: vec![Literal::Hex(vec![1, 2]), Literal::Hex(vec![255])],
                negated: false
            }
        );
        assert_eq!(
            parse_filter("ts >= TIMESTAMP '2024-01-01 00:00:00'").unwrap(),
            Filter::Compare {
                left: col("ts"),
                op: CompareOp::GtEq,
                right: Operand::Literal(Literal::Timestamp("2024-01-01 00:00:00".into()))
            }
        );
        assert_eq!(
            parse_filter("d NOT BETWEEN DATE '2024-01-01' AND DATE '2024-02-01'").unwrap(),
            Filter::Between {
                column: "d".into(),
                low: Literal::Date("2024-01-01".into()),
                high: Literal::Date("2024-02-01".into()),
                negated: true
            }
        );
        assert_eq!(
            parse_filter("f = CAST('NaN' AS DOUBLE)").unwrap(),
            Filter::Compare {
                left: col("f"),
                op: CompareOp::Eq,
                right: Operand::Literal(Literal::FloatCast {
                    text: "NaN".into(),
                    single: false
                })
            }
        );
        assert_eq!(
            parse_filter("f = 'inf'::real").unwrap(),
            Filter::Compare {
                left: col("f"),
                op: CompareOp::Eq,
                right: Operand::Literal(Literal::FloatCast {
                    text: "inf".into(),
                    single: true
                })
            }
        );
        let Filter::Or(parts) = parse_filter("i = 1 OR i = 2 OR i IS NULL").unwrap() else {
            panic!()
        };
        assert_eq!(parts.len(), 3);
        assert!(
            matches!(parse_filter("NOT (i < 5) AND bl").unwrap(), Filter::And(v) if v.len() == 2)
        );
        assert_eq!(
            parse_filter("s = 'it''s'").unwrap(),
            Filter::Compare {
                left: col("s"),
                op: CompareOp::Eq,
                right: Operand::Literal(Literal::String("it's".into()))
            }
        );
    }

    #[test]
    fn rejects_what_it_cannot_answer() {
        for bad in [
            "i = ",
            "i = 1 garbage",
            "upper(s) = 'A'",
            "i + 1 = 2",
            "s LIKE 'a%'",
            "i = j + 1",
            "X'0'= b",
            "",
        ] {
            assert!(
                matches!(parse_filter(bad), Err(Error::InvalidArgument(_))),
                "{bad}"
            );
        }
    }
}
