//! DataFusion filter expressions → lakeseek filter SQL, for the forms lakeseek's filter
//! engine answers with the same meaning DataFusion gives them; `None` for anything else
//! (DataFusion then evaluates it itself).

use std::fmt::Write;

use datafusion::arrow::array::Array;
use datafusion::arrow::temporal_conversions::{
    date32_to_datetime, timestamp_ms_to_datetime, timestamp_ns_to_datetime,
    timestamp_s_to_datetime, timestamp_us_to_datetime,
};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{BinaryExpr, Expr, Operator};

/// Name of the row-address column a [`crate::LakeseekTable`] may expose.
pub const ROW_ADDRESS_COLUMN: &str = "_rowaddr";

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

/// lakeseek filter SQL with the meaning of `expr` over the dataset columns `columns`, or
/// `None` when `expr` uses anything lakeseek's engine does not evaluate the same way.
pub(crate) fn to_lakeseek_sql(expr: &Expr, columns: &[String]) -> Option<String> {
    let mut out = String::new();
    write_expr(expr, columns, &mut out)?;
    Some(out)
}

fn write_expr(expr: &Expr, columns: &[String], out: &mut String) -> Option<()> {
    match expr {
        Expr::Column(c) => {
            if c.name == ROW_ADDRESS_COLUMN || !columns.contains(&c.name) {
                return None;
            }
            write_identifier(&c.name, out);
        }
        Expr::Literal(v, _) => write_literal(v, out)?,
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
            let op = match op {
                Operator::Eq => "=",
                Operator::NotEq => "<>",
                Operator::Lt => "<",
                Operator::LtEq => "<=",
                Operator::Gt => ">",
                Operator::GtEq => ">=",
                Operator::And => "AND",
                Operator::Or => "OR",
                _ => return None,
            };
            out.push('(');
            write_expr(left, columns, out)?;
            let _ = write!(out, " {op} ");
            write_expr(right, columns, out)?;
            out.push(')');
        }
        Expr::Not(inner) => {
            out.push_str("(NOT ");
            write_expr(inner, columns, out)?;
            out.push(')');
        }
        Expr::IsNull(inner) | Expr::IsNotNull(inner) => {
            out.push('(');
            write_expr(inner, columns, out)?;
            let is = if matches!(expr, Expr::IsNull(_)) {
                " IS NULL)"
            } else {
                " IS NOT NULL)"
            };
            out.push_str(is);
        }
        Expr::Between(b) => {
            out.push('(');
            write_expr(&b.expr, columns, out)?;
            out.push_str(if b.negated {
                " NOT BETWEEN "
            } else {
                " BETWEEN "
            });
            write_expr(&b.low, columns, out)?;
            out.push_str(" AND ");
            write_expr(&b.high, columns, out)?;
            out.push(')');
        }
        Expr::InList(list) => {
            out.push('(');
            write_expr(&list.expr, columns, out)?;
            out.push_str(if list.negated { " NOT IN (" } else { " IN (" });
            for (i, v) in list.list.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_expr(v, columns, out)?;
            }
            out.push_str("))");
        }
        Expr::ScalarFunction(f) => write_function(f.func.name(), &f.args, columns, out)?,
        _ => return None,
    }
    Some(())
}

fn write_function(name: &str, args: &[Expr], columns: &[String], out: &mut String) -> Option<()> {
    match (name, args) {
        ("any_element", [list @ Expr::Column(_), Expr::Literal(predicate, _)]) => {
            let predicate = string_value(predicate)?;
            out.push_str("any_element(");
            write_expr(list, columns, out)?;
            out.push_str(", ");
            write_string(predicate, out);
            out.push(')');
        }
        ("array_has" | "array_contains", [list @ Expr::Column(_), value]) => {
            out.push_str("array_contains(");
            write_expr(list, columns, out)?;
            out.push_str(", ");
            write_expr(value, columns, out)?;
            out.push(')');
        }
        ("array_has_any" | "array_has_all", [list @ Expr::Column(_), values]) => {
            let _ = write!(out, "{name}(");
            write_expr(list, columns, out)?;
            out.push_str(", ");
            write_array(values, columns, out)?;
            out.push(')');
        }
        _ => return None,
    }
    Some(())
}

/// `[a, b, ..]` from `make_array(a, b, ..)` or a list literal.
fn write_array(values: &Expr, columns: &[String], out: &mut String) -> Option<()> {
    out.push('[');
    match values {
        Expr::ScalarFunction(f) if f.func.name() == "make_array" => {
            for (i, v) in f.args.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                matches!(v, Expr::Literal(..)).then_some(())?;
                write_expr(v, columns, out)?;
            }
        }
        Expr::Literal(ScalarValue::List(list), _) if list.len() == 1 && !list.is_null(0) => {
            let items = list.value(0);
            for i in 0..items.len() {
                if i > 0 {
                    out.push_str(", ");
                }
                let v = ScalarValue::try_from_array(&items, i).ok()?;
                write_literal(&v, out)?;
            }
        }
        _ => return None,
    }
    out.push(']');
    Some(())
}

fn string_value(v: &ScalarValue) -> Option<&str> {
    match v {
        ScalarValue::Utf8(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
        | ScalarValue::Utf8View(Some(s)) => Some(s),
        _ => None,
    }
}

fn write_identifier(name: &str, out: &mut String) {
    out.push('"');
    out.push_str(&name.replace('"', "\"\""));
    out.push('"');
}

fn write_string(s: &str, out: &mut String) {
    out.push('\'');
    out.push_str(&s.replace('\'', "''"));
    out.push('\'');
}

fn write_literal(v: &ScalarValue, out: &mut String) -> Option<()> {
    use ScalarValue as S;
    if let Some(s) = string_value(v) {
        write_string(s, out);
        return Some(());
    }
    if v.is_null() {
        // A typed NULL compares as NULL whatever its type.
        out.push_str("NULL");
        return Some(());
    }
    let text = match v {
        S::Boolean(Some(b)) => if *b { "TRUE" } else { "FALSE" }.to_string(),
        S::Int8(Some(x)) => x.to_string(),
        S::Int16(Some(x)) => x.to_string(),
        S::Int32(Some(x)) => x.to_string(),
        S::Int64(Some(x)) => x.to_string(),
        S::UInt8(Some(x)) => x.to_string(),
        S::UInt16(Some(x)) => x.to_string(),
        S::UInt32(Some(x)) => x.to_string(),
        S::UInt64(Some(x)) => x.to_string(),
        S::Float32(Some(x)) if x.is_finite() => format!("{x:?}"),
        S::Float64(Some(x)) if x.is_finite() => format!("{x:?}"),
        S::Date32(Some(d)) => format!("DATE '{}'", date32_to_datetime(*d)?.format("%Y-%m-%d")),
        S::TimestampSecond(Some(t), None) => timestamp(timestamp_s_to_datetime(*t)?),
        S::TimestampMillisecond(Some(t), None) => timestamp(timestamp_ms_to_datetime(*t)?),
        S::TimestampMicrosecond(Some(t), None) => timestamp(timestamp_us_to_datetime(*t)?),
        S::TimestampNanosecond(Some(t), None) => timestamp(timestamp_ns_to_datetime(*t)?),
        _ => return None,
    };
    out.push_str(&text);
    Some(())
}

fn timestamp(t: chrono::NaiveDateTime) -> String {
    format!("TIMESTAMP '{}'", t.format("%Y-%m-%d %H:%M:%S%.f"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::logical_expr::{col, lit};

    fn columns() -> Vec<String> {
        vec!["key".into(), "price".into()]
    }

    #[test]
    fn comparisons_and_lists_become_lakeseek_sql() {
        let e = col("key").eq(lit("o'k")).and(col("price").gt(lit(2.5f64)));
        assert_eq!(
            to_lakeseek_sql(&e, &columns()).unwrap(),
            r#"(("key" = 'o''k') AND ("price" > 2.5))"#
        );
        let e = col("key").in_list(vec![lit("a"), lit("b")], true);
        assert_eq!(
            to_lakeseek_sql(&e, &columns()).unwrap(),
            r#"("key" NOT IN ('a', 'b'))"#
        );
    }

    #[test]
    fn unknown_columns_and_forms_are_not_converted() {
        assert!(to_lakeseek_sql(&col("other").eq(lit(1)), &columns()).is_none());
        assert!(to_lakeseek_sql(&col("key").like(lit("a%")), &columns()).is_none());
        let e = col("_rowaddr").eq(lit(5u64));
        assert!(to_lakeseek_sql(&e, &columns()).is_none());
        assert_eq!(row_address_filter(&e), Some(vec![5]));
        let e = col("_rowaddr").in_list(vec![lit(9u64), lit(5u64), lit(9u64)], false);
        assert_eq!(row_address_filter(&e), Some(vec![5, 9]));
        assert_eq!(row_address_filter(&col("_rowaddr").gt(lit(5u64))), None);
    }
}
