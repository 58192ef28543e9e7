//! [`FilterExpr`]: a filter built in code — the forms [`Dataset::filter`] accepts as SQL,
//! as a typed tree a query engine translates its own expressions into (the DataFusion
//! table provider does), planned with [`Dataset::plan_filter_expr`] without writing or
//! parsing SQL text.

use std::fmt::{self, Write as _};

use arrow_array::temporal_conversions::{
    date32_to_datetime, timestamp_ms_to_datetime, timestamp_ns_to_datetime,
    timestamp_s_to_datetime, timestamp_us_to_datetime,
};
use arrow_schema::TimeUnit;

use super::dataset::Dataset;
use super::scan::PlannedFilter;
use crate::error::{Error, Result};
use crate::index::filter::{plan_parsed_filter, FilterOptions};
use crate::index::sql::call::AnyElementCall;
use crate::index::sql::expr::{
    flatten, parse_sql, CompareOp, ListFunction, Literal, SqlContext, SqlExpr,
};
use crate::index::sql::limits::{check_filter_shape, MAX_FILTER_NESTING};
use crate::index::sql::parsed::ParsedFilter;
use crate::index::sql::string_match::StringTest;

/// A literal value of a [`FilterExpr`], coerced to the type of the column it meets exactly
/// as the same literal written in SQL is (an integer out of the column's range, a string
/// compared with a number, ... are errors when the filter is planned).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum FilterValue {
    /// `NULL`.
    Null,
    /// `TRUE` / `FALSE`.
    Bool(bool),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A 32-bit float (NaN and infinities included).
    Float32(f32),
    /// A 64-bit float (NaN and infinities included).
    Float64(f64),
    /// A string.
    String(String),
    /// Bytes (`X'..'` in SQL).
    Binary(Vec<u8>),
    /// A date: days since 1970-01-01 (`DATE '...'`).
    Date32(i32),
    /// A timestamp without a time zone, in `unit` since the epoch (`TIMESTAMP '...'`).
    Timestamp(TimeUnit, i64),
}

/// A filter built in code: column references, literals, comparisons, `IN`, `BETWEEN`,
/// `IS [NOT] NULL`, `AND`/`OR`/`NOT`, `any_element` and the `array_has*` functions. It
/// means what the SQL it displays as means ([`fmt::Display`] prints that SQL, the text
/// plans and errors show).
///
/// ```
/// use lakeseek::{FilterExpr, FilterValue};
/// let filter = FilterExpr::column("key")
///     .eq(FilterExpr::literal(FilterValue::String("a".into())))
///     .and(!FilterExpr::column("price").is_null());
/// assert_eq!(filter.to_string(), r#"(("key" = 'a') AND (NOT ("price" IS NULL)))"#);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct FilterExpr {
    node: Node,
    /// Nodes on the longest path from this node to a leaf (1 for a leaf).
    depth: usize,
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    Column(String),
    Literal(FilterValue),
    Compare(Box<FilterExpr>, CompareOp, Box<FilterExpr>),
    And(Box<FilterExpr>, Box<FilterExpr>),
    Or(Box<FilterExpr>, Box<FilterExpr>),
    Not(Box<FilterExpr>),
    IsNull(Box<FilterExpr>, bool),
    InList(Box<FilterExpr>, Vec<FilterExpr>, bool),
    Between(Box<FilterExpr>, Box<FilterExpr>, Box<FilterExpr>, bool),
    AnyElement(String, String),
    ListHas(ListFunction, String, Vec<FilterExpr>),
    StringMatch(StringTest, Box<FilterExpr>, String),
    All(Vec<FilterExpr>),
    Sql(String),
}

impl FilterExpr {
    fn new(node: Node, children: &[&FilterExpr]) -> Self {
        let depth = 1 + children.iter().map(|c| c.depth).max().unwrap_or(0);
        Self { node, depth }
    }

    /// A top-level column, by name.
    pub fn column(name: impl Into<String>) -> Self {
        Self::new(Node::Column(name.into()), &[])
    }

    /// A literal.
    pub fn literal(value: FilterValue) -> Self {
        Self::new(Node::Literal(value), &[])
    }

    fn compare(self, op: CompareOp, other: FilterExpr) -> Self {
        let node = |a, b| Node::Compare(Box::new(a), op, Box::new(b));
        let (depth_a, depth_b) = (self.depth, other.depth);
        Self {
            node: node(self, other),
            depth: 1 + depth_a.max(depth_b),
        }
    }

    /// `self = other`.
    pub fn eq(self, other: FilterExpr) -> Self {
        self.compare(CompareOp::Eq, other)
    }

    /// `self <> other`.
    pub fn not_eq(self, other: FilterExpr) -> Self {
        self.compare(CompareOp::NotEq, other)
    }

    /// `self < other`.
    pub fn lt(self, other: FilterExpr) -> Self {
        self.compare(CompareOp::Lt, other)
    }

    /// `self <= other`.
    pub fn lt_eq(self, other: FilterExpr) -> Self {
        self.compare(CompareOp::LtEq, other)
    }

    /// `self > other`.
    pub fn gt(self, other: FilterExpr) -> Self {
        self.compare(CompareOp::Gt, other)
    }

    /// `self >= other`.
    pub fn gt_eq(self, other: FilterExpr) -> Self {
        self.compare(CompareOp::GtEq, other)
    }

    /// `self AND other`.
    pub fn and(self, other: FilterExpr) -> Self {
        let depth = 1 + self.depth.max(other.depth);
        Self {
            node: Node::And(Box::new(self), Box::new(other)),
            depth,
        }
    }

    /// `self OR other`.
    pub fn or(self, other: FilterExpr) -> Self {
        let depth = 1 + self.depth.max(other.depth);
        Self {
            node: Node::Or(Box::new(self), Box::new(other)),
            depth,
        }
    }

    /// `self IS NULL`.
    pub fn is_null(self) -> Self {
        let depth = 1 + self.depth;
        Self {
            node: Node::IsNull(Box::new(self), false),
            depth,
        }
    }

    /// `self IS NOT NULL`.
    pub fn is_not_null(self) -> Self {
        let depth = 1 + self.depth;
        Self {
            node: Node::IsNull(Box::new(self), true),
            depth,
        }
    }

    /// `self [NOT] IN (list)`.
    pub fn in_list(self, list: Vec<FilterExpr>, negated: bool) -> Self {
        let depth = 1 + list
            .iter()
            .map(|e| e.depth)
            .max()
            .unwrap_or(0)
            .max(self.depth);
        Self {
            node: Node::InList(Box::new(self), list, negated),
            depth,
        }
    }

    /// `self [NOT] BETWEEN low AND high`.
    pub fn between(self, low: FilterExpr, high: FilterExpr, negated: bool) -> Self {
        let depth = 1 + self.depth.max(low.depth).max(high.depth);
        let node = Node::Between(Box::new(self), Box::new(low), Box::new(high), negated);
        Self { node, depth }
    }

    /// `any_element(list_column, 'predicate')`: some element of the list makes the
    /// predicate (SQL over the element's fields, as in [`Dataset::filter`]) TRUE.
    pub fn any_element(list_column: impl Into<String>, predicate: impl Into<String>) -> Self {
        Self::new(Node::AnyElement(list_column.into(), predicate.into()), &[])
    }

    /// `array_contains(list_column, value)`.
    pub fn array_has(list_column: impl Into<String>, value: FilterExpr) -> Self {
        Self::list_has(ListFunction::Contains, list_column.into(), vec![value])
    }

    /// `array_has_any(list_column, [values])`.
    pub fn array_has_any(list_column: impl Into<String>, values: Vec<FilterExpr>) -> Self {
        Self::list_has(ListFunction::HasAny, list_column.into(), values)
    }

    /// `array_has_all(list_column, [values])`.
    pub fn array_has_all(list_column: impl Into<String>, values: Vec<FilterExpr>) -> Self {
        Self::list_has(ListFunction::HasAll, list_column.into(), values)
    }

    fn list_has(function: ListFunction, column: String, values: Vec<FilterExpr>) -> Self {
        let depth = 1 + values.iter().map(|e| e.depth).max().unwrap_or(0);
        Self {
            node: Node::ListHas(function, column, values),
            depth,
        }
    }

    /// `self LIKE 'pattern'`: `%` matches any characters, `_` one character, a backslash
    /// escapes the next one (as in lance and DataFusion). `NOT LIKE` is `!expr.like(..)`.
    pub fn like(self, pattern: impl Into<String>) -> Self {
        self.string_match(
            StringTest::Like {
                case_insensitive: false,
            },
            pattern.into(),
        )
    }

    /// `self ILIKE 'pattern'`: [`FilterExpr::like`] ignoring case.
    pub fn ilike(self, pattern: impl Into<String>) -> Self {
        self.string_match(
            StringTest::Like {
                case_insensitive: true,
            },
            pattern.into(),
        )
    }

    /// `contains(self, 'needle')`: the string holds `needle` (case-sensitive; `%`, `_` and
    /// backslashes are plain characters). An NGRAM index answers it.
    pub fn contains(self, needle: impl Into<String>) -> Self {
        self.string_match(StringTest::Contains, needle.into())
    }

    /// `starts_with(self, 'prefix')` (case-sensitive).
    pub fn starts_with(self, prefix: impl Into<String>) -> Self {
        self.string_match(StringTest::StartsWith, prefix.into())
    }

    fn string_match(self, test: StringTest, pattern: String) -> Self {
        let depth = 1 + self.depth;
        Self {
            node: Node::StringMatch(test, Box::new(self), pattern),
            depth,
        }
    }

    /// A filter written as SQL (parsed when planned, as [`Dataset::plan_filter`] parses
    /// it): how a built filter that went over the wire as its [`fmt::Display`] text comes
    /// back.
    pub fn sql(text: impl Into<String>) -> Self {
        Self::new(Node::Sql(text.into()), &[])
    }

    /// Every filter of `filters` (the conjunction of filters handed over one by one, shown
    /// as `a AND b AND ...`); `filters` must not be empty when planned.
    pub fn all(filters: Vec<FilterExpr>) -> Self {
        let depth = 1 + filters.iter().map(|e| e.depth).max().unwrap_or(0);
        Self {
            node: Node::All(filters),
            depth,
        }
    }

    /// The filter as the engine takes it: its SQL rendering (bounded like a filter written
    /// as SQL: size, operators, nesting) and its untyped tree.
    pub(crate) fn parsed(&self) -> Result<ParsedFilter> {
        if let Node::Sql(text) = &self.node {
            return ParsedFilter::parse(text);
        }
        // Rendering and converting recurse: refuse what could overflow the stack first.
        if self.depth > 4 * MAX_FILTER_NESTING {
            return Err(Error::InvalidArgument(format!(
                "filter nests deeper than {MAX_FILTER_NESTING} levels"
            )));
        }
        let text = self.to_string();
        check_filter_shape(&text, "filter")?;
        Ok(ParsedFilter::built(text, self.untyped()?))
    }

    fn untyped(&self) -> Result<SqlExpr> {
        let boxed = |e: &FilterExpr| e.untyped().map(Box::new);
        let all = |es: &[FilterExpr]| es.iter().map(FilterExpr::untyped).collect::<Result<_>>();
        Ok(match &self.node {
            Node::Column(name) => SqlExpr::Field(name.clone()),
            Node::Literal(v) => SqlExpr::Literal(literal(v)?),
            Node::Compare(a, op, b) => SqlExpr::Compare {
                left: boxed(a)?,
                op: *op,
                right: boxed(b)?,
            },
            Node::And(a, b) => flatten(a.untyped()?, b.untyped()?, true),
            Node::All(es) if es.is_empty() => {
                return Err(Error::InvalidArgument(
                    "an empty conjunction of filters".into(),
                ))
            }
            Node::All(es) => {
                let parts: Vec<SqlExpr> = all(es)?;
                let both = |a, b| flatten(a, b, true);
                parts.into_iter().reduce(both).expect("not empty")
            }
            Node::Or(a, b) => flatten(a.untyped()?, b.untyped()?, false),
            Node::Not(e) => SqlExpr::Not(boxed(e)?),
            Node::IsNull(e, negated) => SqlExpr::IsNull {
                expr: boxed(e)?,
                negated: *negated,
            },
            Node::InList(e, list, negated) => SqlExpr::InList {
                expr: boxed(e)?,
                list: all(list)?,
                negated: *negated,
            },
            Node::Between(e, low, high, negated) => SqlExpr::Between {
                expr: boxed(e)?,
                low: boxed(low)?,
                high: boxed(high)?,
                negated: *negated,
            },
            Node::AnyElement(column, predicate) => SqlExpr::AnyElement(AnyElementCall {
                column: column.clone(),
                predicate: predicate.clone(),
                negated: false,
            }),
            Node::ListHas(function, column, values) => SqlExpr::ListHas {
                function: *function,
                column: column.clone(),
                values: all(values)?,
            },
            Node::StringMatch(test, e, pattern) => SqlExpr::StringMatch {
                expr: boxed(e)?,
                test: *test,
                pattern: Box::new(SqlExpr::Literal(Literal::String(pattern.clone()))),
            },
            Node::Sql(text) => parse_sql(text, SqlContext::Filter)?,
        })
    }
}

impl std::ops::Not for FilterExpr {
    type Output = FilterExpr;

    /// `NOT self`.
    fn not(self) -> FilterExpr {
        let depth = 1 + self.depth;
        FilterExpr {
            node: Node::Not(Box::new(self)),
            depth,
        }
    }
}

/// The SQL literal `v` is written as (the binder coerces it to the column's type).
fn literal(v: &FilterValue) -> Result<Literal> {
    use FilterValue as V;
    let out_of_range = || Error::InvalidArgument(format!("literal {v:?} is out of range"));
    Ok(match v {
        V::Null => Literal::Null,
        V::Bool(b) => Literal::Bool(*b),
        V::Int(x) => Literal::Number(x.to_string()),
        V::UInt(x) => Literal::Number(x.to_string()),
        V::Float32(x) if x.is_finite() => Literal::Number(format!("{x:?}")),
        V::Float64(x) if x.is_finite() => Literal::Number(format!("{x:?}")),
        V::Float32(x) => float_cast(f64::from(*x), true),
        V::Float64(x) => float_cast(*x, false),
        V::String(s) => Literal::String(s.clone()),
        V::Binary(b) => Literal::Hex(b.clone()),
        V::Date32(d) => Literal::Date(
            date32_to_datetime(*d)
                .ok_or_else(out_of_range)?
                .format("%Y-%m-%d")
                .to_string(),
        ),
        V::Timestamp(unit, t) => {
            let at = match unit {
                TimeUnit::Second => timestamp_s_to_datetime(*t),
                TimeUnit::Millisecond => timestamp_ms_to_datetime(*t),
                TimeUnit::Microsecond => timestamp_us_to_datetime(*t),
                TimeUnit::Nanosecond => timestamp_ns_to_datetime(*t),
            };
            let at = at.ok_or_else(out_of_range)?;
            Literal::Timestamp(at.format("%Y-%m-%d %H:%M:%S%.f").to_string())
        }
    })
}

fn float_cast(x: f64, single: bool) -> Literal {
    let text = if x.is_nan() {
        "NaN"
    } else if x > 0.0 {
        "inf"
    } else {
        "-inf"
    };
    Literal::FloatCast {
        text: text.into(),
        single,
    }
}

impl fmt::Display for FilterExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.node {
            Node::Column(name) => write_identifier(name, f),
            Node::Literal(v) => match literal(v) {
                Ok(l) => write!(f, "{l}"),
                Err(_) => write!(f, "{v:?}"),
            },
            Node::Compare(a, op, b) => {
                let op = if *op == CompareOp::NotEq {
                    "<>"
                } else {
                    op.symbol()
                };
                write!(f, "({a} {op} {b})")
            }
            Node::And(a, b) => write!(f, "({a} AND {b})"),
            Node::Or(a, b) => write!(f, "({a} OR {b})"),
            Node::All(es) => {
                for (i, e) in es.iter().enumerate() {
                    f.write_str(if i > 0 { " AND " } else { "" })?;
                    match &e.node {
                        // SQL text is not an atom: keep it one operand of the AND.
                        Node::Sql(text) => write!(f, "({text})")?,
                        _ => write!(f, "{e}")?,
                    }
                }
                Ok(())
            }
            Node::Not(e) => write!(f, "(NOT {e})"),
            Node::IsNull(e, negated) => {
                write!(f, "({e} IS {}NULL)", if *negated { "NOT " } else { "" })
            }
            Node::InList(e, list, negated) => {
                write!(f, "({e} {}IN (", if *negated { "NOT " } else { "" })?;
                write_list(f, list, ", ")?;
                f.write_str("))")
            }
            Node::Between(e, low, high, negated) => {
                let not = if *negated { "NOT " } else { "" };
                write!(f, "({e} {not}BETWEEN {low} AND {high})")
            }
            Node::AnyElement(column, predicate) => {
                f.write_str("any_element(")?;
                write_identifier(column, f)?;
                write!(f, ", '{}')", predicate.replace('\'', "''"))
            }
            Node::ListHas(function, column, values) => write_list_has(f, *function, column, values),
            Node::StringMatch(test, e, pattern) => {
                let quoted = pattern.replace('\'', "''");
                match test {
                    StringTest::Like { case_insensitive } => {
                        let op = if *case_insensitive { "ILIKE" } else { "LIKE" };
                        write!(f, "({e} {op} '{quoted}')")
                    }
                    StringTest::Contains => write!(f, "contains({e}, '{quoted}')"),
                    StringTest::StartsWith => write!(f, "starts_with({e}, '{quoted}')"),
                }
            }
            Node::Sql(text) => f.write_str(text),
        }
    }
}

fn write_list_has(
    f: &mut fmt::Formatter<'_>,
    function: ListFunction,
    column: &str,
    values: &[FilterExpr],
) -> fmt::Result {
    let name = match function {
        ListFunction::Contains => "array_contains",
        ListFunction::HasAny => "array_has_any",
        ListFunction::HasAll => "array_has_all",
    };
    write!(f, "{name}(")?;
    write_identifier(column, f)?;
    f.write_str(", ")?;
    if function == ListFunction::Contains {
        write_list(f, values, ", ")?;
    } else {
        f.write_char('[')?;
        write_list(f, values, ", ")?;
        f.write_char(']')?;
    }
    f.write_char(')')
}

fn write_list(f: &mut fmt::Formatter<'_>, items: &[FilterExpr], separator: &str) -> fmt::Result {
    for (i, e) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(separator)?;
        }
        write!(f, "{e}")?;
    }
    Ok(())
}

fn write_identifier(name: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    write!(f, "\"{}\"", name.replace('"', "\"\""))
}

impl Dataset {
    /// Plan a filter built in code, as [`Dataset::plan_filter`] plans the same filter
    /// written as SQL (same answers, same errors; no SQL text is parsed).
    ///
    /// ```no_run
    /// # async fn example() -> lakeseek::Result<()> {
    /// use lakeseek::{Dataset, FilterExpr, FilterValue};
    /// let dataset = Dataset::open("s3://bucket/frames.lance").await?;
    /// let filter = FilterExpr::column("key").eq(FilterExpr::literal(FilterValue::Int(7)));
    /// let plan = dataset.plan_filter_expr(&filter).await?;
    /// let rows = dataset.execute_planned_filter(&plan).await?;
    /// # Ok(()) }
    /// ```
    pub async fn plan_filter_expr(&self, filter: &FilterExpr) -> Result<PlannedFilter> {
        let parsed = filter.parsed()?;
        let options = FilterOptions::default();
        let plan = plan_parsed_filter(self.version_handle(), &parsed, options, self.stats_handle())
            .await?;
        Ok(PlannedFilter::new(plan, self.version()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(name: &str) -> FilterExpr {
        FilterExpr::column(name)
    }

    fn int(v: i64) -> FilterExpr {
        FilterExpr::literal(FilterValue::Int(v))
    }

    fn string(s: &str) -> FilterExpr {
        FilterExpr::literal(FilterValue::String(s.into()))
    }

    /// A built filter's tree is the tree its SQL rendering parses to.
    fn same_as_its_sql(e: &FilterExpr) {
        let parsed = e.parsed().unwrap();
        assert_eq!(
            parsed.expr,
            parse_sql(&parsed.text, SqlContext::Filter).unwrap(),
            "{e}"
        );
    }

    #[test]
    fn every_form_builds_the_tree_its_sql_parses_to() {
        let forms = [
            col("key").eq(string("o'k")).and(col("price").gt(int(-2))),
            col("a")
                .not_eq(int(1))
                .or(col("a").lt(int(0)))
                .or(col("a").gt_eq(int(9))),
            !col("k").in_list(
                vec![string("a"), FilterExpr::literal(FilterValue::Null)],
                true,
            ),
            col("x")
                .between(int(1), int(5), false)
                .and(col("y").is_not_null()),
            col("x").lt_eq(FilterExpr::literal(FilterValue::Float64(2.5))),
            col("x").eq(FilterExpr::literal(FilterValue::Float32(f32::NAN))),
            col("d").gt(FilterExpr::literal(FilterValue::Date32(19_000))),
            col("t").lt(FilterExpr::literal(FilterValue::Timestamp(
                TimeUnit::Millisecond,
                1_500,
            ))),
            col("b").eq(FilterExpr::literal(FilterValue::Binary(vec![1, 0xAB]))),
            !FilterExpr::any_element("items", "x = 'it''s'"),
            FilterExpr::array_has("tags", string("a")),
            FilterExpr::array_has_any("tags", vec![string("a"), string("b")]),
            FilterExpr::all(vec![
                col("a").eq(int(1)),
                col("b").eq(int(2)).or(col("c").is_null()),
            ]),
            col("we\"ird").eq(FilterExpr::literal(FilterValue::UInt(u64::MAX))),
            FilterExpr::sql("a = 1 OR NOT b"),
            FilterExpr::all(vec![FilterExpr::sql("a = 1 OR b = 2"), col("c").eq(int(3))]),
            col("name")
                .contains("it's")
                .and(!col("name").like("a\\%b_")),
            col("name").ilike("%ALI%").or(col("name").starts_with("tr")),
        ];
        for e in &forms {
            same_as_its_sql(e);
        }
        assert_eq!(
            forms[0].to_string(),
            r#"(("key" = 'o''k') AND ("price" > -2))"#
        );
        assert_eq!(
            forms[16].to_string(),
            r#"(contains("name", 'it''s') AND (NOT ("name" LIKE 'a\%b_')))"#
        );
        assert_eq!(
            forms[17].to_string(),
            r#"(("name" ILIKE '%ALI%') OR starts_with("name", 'tr'))"#
        );
        assert_eq!(
            forms[12].to_string(),
            r#"("a" = 1) AND (("b" = 2) OR ("c" IS NULL))"#
        );
    }

    #[test]
    fn oversized_filters_are_refused_like_their_sql() {
        let mut deep = col("a").eq(int(0));
        for i in 1..30 {
            deep = deep.or(col("a").eq(int(i)));
        }
        let err = deep.parsed().unwrap_err().to_string();
        assert!(err.contains("deeper"), "{err}");
        let mut very_deep = col("a");
        for _ in 0..100_000 {
            very_deep = !very_deep;
        }
        assert!(matches!(very_deep.parsed(), Err(Error::InvalidArgument(_))));
        // Dropping a deep tree recurses too; unwind it by hand.
        let mut e = very_deep;
        while let Node::Not(inner) = e.node {
            e = *inner;
        }
        assert!(FilterExpr::all(vec![]).parsed().is_err());
    }
}
