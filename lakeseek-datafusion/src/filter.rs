//! DataFusion filter expressions → lakeseek [`FilterExpr`]s (typed, never SQL text), for the
//! forms lakeseek's filter engine answers with the same meaning DataFusion gives them;
//! `None` for anything else (DataFusion then evaluates it itself).

use datafusion::arrow::array::Array;
use datafusion::arrow::datatypes::TimeUnit;
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{BinaryExpr, Expr, Operator};
use lakeseek::{FilterExpr, FilterValue};

/// Name of the row-address column a [`crate::LakeseekTable`] may expose.
pub const ROW_ADDRESS_COLUMN: &str = "_rowaddr";

/// Name of the stable row id column a [`crate::LakeseekTable`] may expose.
pub const ROW_ID_COLUMN: &str = "_rowid";

/// The row addresses a filter of the form `_rowaddr = x`, `x = _rowaddr` or
/// `_rowaddr IN (x, y, ..)` selects (sorted, unique); `None` for any other filter.
pub(crate) fn row_address_filter(expr: &Expr) -> Option<Vec<u64>> {
    let mut out = match expr {
        Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::Eq,
            right,
        }) => match (left.as_ref(), right.as_ref()) {
            (Expr::Column(c), v) | (v, Expr::Column(c)) if c.name == ROW_ADDRESS_COLUMN => {
                vec![address_literal(v)?]
            }
            _ => return None,
        },
        Expr::InList(list) if !list.negated => match list.expr.as_ref() {
            Expr::Column(c) if c.name == ROW_ADDRESS_COLUMN => list
                .list
                .iter()
                .map(address_literal)
                .collect::<Option<Vec<u64>>>()?,
            _ => return None,
        },
        _ => return None,
    };
    out.sort_unstable();
    out.dedup();
    Some(out)
}

fn address_literal(e: &Expr) -> Option<u64> {
    match e {
        Expr::Literal(ScalarValue::UInt64(Some(v)), _) => Some(*v),
        Expr::Literal(ScalarValue::Int64(Some(v)), _) => u64::try_from(*v).ok(),
        _ => None,
    }
}

/// The lakeseek filter with the meaning of `expr` over the dataset columns `columns`, or
/// `None` when `expr` uses anything lakeseek's engine does not evaluate the same way.
pub(crate) fn to_filter_expr(expr: &Expr, columns: &[String]) -> Option<FilterExpr> {
    Some(match expr {
        Expr::Column(c) => {
            if c.name == ROW_ADDRESS_COLUMN || !columns.contains(&c.name) {
                return None;
            }
            FilterExpr::column(&c.name)
        }
        Expr::Literal(v, _) => FilterExpr::literal(filter_value(v)?),
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
            let (left, right) = (
                to_filter_expr(left, columns)?,
                to_filter_expr(right, columns)?,
            );
            match op {
                Operator::Eq => left.eq(right),
                Operator::NotEq => left.not_eq(right),
                Operator::Lt => left.lt(right),
                Operator::LtEq => left.lt_eq(right),
                Operator::Gt => left.gt(right),
                Operator::GtEq => left.gt_eq(right),
                Operator::And => left.and(right),
                Operator::Or => left.or(right),
                _ => return None,
            }
        }
        Expr::Not(inner) => !to_filter_expr(inner, columns)?,
        Expr::IsNull(inner) => to_filter_expr(inner, columns)?.is_null(),
        Expr::IsNotNull(inner) => to_filter_expr(inner, columns)?.is_not_null(),
        Expr::Between(b) => to_filter_expr(&b.expr, columns)?.between(
            to_filter_expr(&b.low, columns)?,
            to_filter_expr(&b.high, columns)?,
            b.negated,
        ),
        Expr::InList(list) => to_filter_expr(&list.expr, columns)?.in_list(
            list.list
                .iter()
                .map(|v| to_filter_expr(v, columns))
                .collect::<Option<_>>()?,
            list.negated,
        ),
        Expr::ScalarFunction(f) => function(f.func.name(), &f.args, columns)?,
        Expr::Like(like) => {
            // DataFusion's LIKE escapes with a backslash unless told otherwise, as lakeseek.
            if like.escape_char.is_some_and(|c| c != '\\') {
                return None;
            }
            let (column, pattern) = string_test_args(&like.expr, &like.pattern, columns)?;
            let test = match like.case_insensitive {
                true => column.ilike(pattern),
                false => column.like(pattern),
            };
            if like.negated {
                !test
            } else {
                test
            }
        }
        _ => return None,
    })
}

/// A string column and a string literal: the operands of LIKE / contains / starts_with.
fn string_test_args(
    column: &Expr,
    pattern: &Expr,
    columns: &[String],
) -> Option<(FilterExpr, String)> {
    let Expr::Column(c) = column else { return None };
    let Expr::Literal(p, _) = pattern else {
        return None;
    };
    let column = to_filter_expr(&Expr::Column(c.clone()), columns)?;
    Some((column, string_value(p)?.to_string()))
}

fn function(name: &str, args: &[Expr], columns: &[String]) -> Option<FilterExpr> {
    let list_column = |e: &Expr| match e {
        Expr::Column(c) if c.name != ROW_ADDRESS_COLUMN && columns.contains(&c.name) => {
            Some(c.name.clone())
        }
        _ => None,
    };
    Some(match (name, args) {
        ("any_element", [list, Expr::Literal(predicate, _)]) => {
            FilterExpr::any_element(list_column(list)?, string_value(predicate)?)
        }
        ("array_has" | "array_contains", [list, value]) => {
            FilterExpr::array_has(list_column(list)?, to_filter_expr(value, columns)?)
        }
        ("array_has_any", [list, values]) => {
            FilterExpr::array_has_any(list_column(list)?, array_values(values)?)
        }
        ("array_has_all", [list, values]) => {
            FilterExpr::array_has_all(list_column(list)?, array_values(values)?)
        }
        ("contains", [column, needle]) => {
            let (column, needle) = string_test_args(column, needle, columns)?;
            column.contains(needle)
        }
        ("starts_with", [column, prefix]) => {
            let (column, prefix) = string_test_args(column, prefix, columns)?;
            column.starts_with(prefix)
        }
        _ => return None,
    })
}

/// The literals of `make_array(a, b, ..)` or of a list literal.
fn array_values(values: &Expr) -> Option<Vec<FilterExpr>> {
    match values {
        Expr::ScalarFunction(f) if f.func.name() == "make_array" => f
            .args
            .iter()
            .map(|v| match v {
                Expr::Literal(v, _) => filter_value(v).map(FilterExpr::literal),
                _ => None,
            })
            .collect(),
        Expr::Literal(ScalarValue::List(list), _) if list.len() == 1 && !list.is_null(0) => {
            let items = list.value(0);
            (0..items.len())
                .map(|i| {
                    let v = ScalarValue::try_from_array(&items, i).ok()?;
                    filter_value(&v).map(FilterExpr::literal)
                })
                .collect()
        }
        _ => None,
    }
}

fn string_value(v: &ScalarValue) -> Option<&str> {
    match v {
        ScalarValue::Utf8(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
        | ScalarValue::Utf8View(Some(s)) => Some(s),
        _ => None,
    }
}

/// The lakeseek literal of a DataFusion scalar; `None` for kinds lakeseek does not compare
/// the same way (non-finite floats, zoned timestamps, decimals, ...).
fn filter_value(v: &ScalarValue) -> Option<FilterValue> {
    use ScalarValue as S;
    if let Some(s) = string_value(v) {
        return Some(FilterValue::String(s.to_string()));
    }
    if v.is_null() {
        // A typed NULL compares as NULL whatever its type.
        return Some(FilterValue::Null);
    }
    Some(match v {
        S::Boolean(Some(b)) => FilterValue::Bool(*b),
        S::Int8(Some(x)) => FilterValue::Int(i64::from(*x)),
        S::Int16(Some(x)) => FilterValue::Int(i64::from(*x)),
        S::Int32(Some(x)) => FilterValue::Int(i64::from(*x)),
        S::Int64(Some(x)) => FilterValue::Int(*x),
        S::UInt8(Some(x)) => FilterValue::UInt(u64::from(*x)),
        S::UInt16(Some(x)) => FilterValue::UInt(u64::from(*x)),
        S::UInt32(Some(x)) => FilterValue::UInt(u64::from(*x)),
        S::UInt64(Some(x)) => FilterValue::UInt(*x),
        S::Float32(Some(x)) if x.is_finite() => FilterValue::Float32(*x),
        S::Float64(Some(x)) if x.is_finite() => FilterValue::Float64(*x),
        S::Date32(Some(d)) => FilterValue::Date32(*d),
        S::TimestampSecond(Some(t), None) => FilterValue::Timestamp(TimeUnit::Second, *t),
        S::TimestampMillisecond(Some(t), None) => FilterValue::Timestamp(TimeUnit::Millisecond, *t),
        S::TimestampMicrosecond(Some(t), None) => FilterValue::Timestamp(TimeUnit::Microsecond, *t),
        S::TimestampNanosecond(Some(t), None) => FilterValue::Timestamp(TimeUnit::Nanosecond, *t),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::logical_expr::{col, lit};

    fn columns() -> Vec<String> {
        vec!["key".into(), "price".into()]
    }

    #[test]
    fn comparisons_and_lists_become_lakeseek_filters() {
        let e = col("key").eq(lit("o'k")).and(col("price").gt(lit(2.5f64)));
        assert_eq!(
            to_filter_expr(&e, &columns()).unwrap().to_string(),
            r#"(("key" = 'o''k') AND ("price" > 2.5))"#
        );
        let e = col("key").in_list(vec![lit("a"), lit("b")], true);
        assert_eq!(
            to_filter_expr(&e, &columns()).unwrap().to_string(),
            r#"("key" NOT IN ('a', 'b'))"#
        );
    }

    #[test]
    fn string_tests_become_lakeseek_filters() {
        let e = col("key")
            .like(lit("a\\%b_"))
            .and(col("key").not_ilike(lit("%X%")));
        assert_eq!(
            to_filter_expr(&e, &columns()).unwrap().to_string(),
            r#"(("key" LIKE 'a\%b_') AND (NOT ("key" ILIKE '%X%')))"#
        );
        let e = datafusion::functions::string::expr_fn::starts_with(col("key"), lit("o'k"));
        assert_eq!(
            to_filter_expr(&e, &columns()).unwrap().to_string(),
            r#"starts_with("key", 'o''k')"#
        );
        let e = datafusion::functions::string::expr_fn::contains(col("key"), lit("ab"));
        assert_eq!(
            to_filter_expr(&e, &columns()).unwrap().to_string(),
            r#"contains("key", 'ab')"#
        );
        let other_escape = Expr::Like(datafusion::logical_expr::expr::Like::new(
            false,
            Box::new(col("key")),
            Box::new(lit("a!%")),
            Some('!'),
            false,
        ));
        assert!(to_filter_expr(&other_escape, &columns()).is_none());
    }

    #[test]
    fn unknown_columns_and_forms_are_not_converted() {
        assert!(to_filter_expr(&col("other").eq(lit(1)), &columns()).is_none());
        assert!(to_filter_expr(&col("other").like(lit("a%")), &columns()).is_none());
        assert!(to_filter_expr(&col("key").like(col("price")), &columns()).is_none());
        let e = col("_rowaddr").eq(lit(5u64));
        assert!(to_filter_expr(&e, &columns()).is_none());
        assert_eq!(row_address_filter(&e), Some(vec![5]));
        let e = col("_rowaddr").in_list(vec![lit(9u64), lit(5u64), lit(9u64)], false);
        assert_eq!(row_address_filter(&e), Some(vec![5, 9]));
        assert_eq!(row_address_filter(&col("_rowaddr").gt(lit(5u64))), None);
    }
}
