//! The one binder: typing an [`SqlExpr`] against its scope — the columns of a dataset
//! ([`SchemaScope`], top-level filters) or the fields of a list's elements
//! ([`ElementScope`], `any_element` predicates): resolve names, coerce literals to the
//! field's type (through [`coerce_literal`]), and apply lance's signed-zero rewrite.
//!
//! Literal typing is lance 14's (verified with pylance 14.0.2): an integer literal must fit the integer field (`i8 = 200`
//! is an error), a decimal literal never matches an integer field, strings only match
//! string fields, `X'..'` only binary fields, `DATE` literals date and timestamp fields,
//! `TIMESTAMP` literals timestamp fields (normalised to UTC, read as local time in the
//! field's zone — UTC or a fixed offset — and truncated to its unit), float literals are
//! rounded to the field's width. Comparisons of a float field with a zero literal match
//! both zeros: `= 0` becomes `IN (-0.0, +0.0)`, `<`/`>=` use -0.0, `<=`/`>` use +0.0, an
//! IN list with a zero gets both.

use arrow_schema::{DataType, TimeUnit};

use super::call::AnyElementCall;
use super::expr::{CompareOp, ListFunction, Literal, SqlContext, SqlExpr, Truth};
use super::string_match::{bind_pattern, StringMatcher, StringTest};
use super::value::ElementValue;
use crate::error::{Error, Result};
use crate::index::key::is_key_type;
use crate::index::sql_literal::{coerce_literal, CoerceError, Scalar};
use crate::lance::dataset::Schema;

/// Which list function a [`SqlPredicate::ListHas`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ListHasMode {
    /// `array_has_any(col, [..])` (and `array_contains(col, v)` = any of one value).
    Any,
    /// `array_has_all(col, [..])`: every value is in the list.
    All,
}

/// Where the names of a predicate are resolved.
pub(crate) trait FieldScope {
    /// Where the text comes from (error messages, what is allowed).
    fn context(&self) -> SqlContext;

    /// The scalar field `path` names (one name, or a dotted path split at the dots).
    fn scalar_field(&self, text: &str, path: &[String]) -> Result<BoundField>;

    /// The list column `path` names (`any_element`, list functions); top level only.
    fn list_field(&self, text: &str, path: &str) -> Result<BoundField>;

    /// The field `path` names as the operand of `IS [NOT] NULL`: a scalar field, or where
    /// the scope allows it a nested column (a list or a struct is null or not as a whole).
    fn null_test_field(&self, text: &str, path: &[String]) -> Result<BoundField> {
        self.scalar_field(text, path)
    }
}

/// A direct child of the element struct: what a predicate may refer to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ElementField {
    /// Lance field id.
    pub id: i32,
    /// Current name.
    pub name: String,
    /// Lance logical type.
    pub logical_type: String,
    /// Arrow type when lakeseek can read the field as a scalar (the key type table);
    /// `None` for nested or other types.
    pub data_type: Option<DataType>,
}

impl ElementField {
    /// An element field from its logical type.
    pub(crate) fn new(id: i32, name: &str, logical_type: &str) -> Self {
        ElementField {
            id,
            name: name.to_string(),
            logical_type: logical_type.to_string(),
            data_type: crate::index::key_type::KeyType::from_logical_type(logical_type)
                .map(|k| k.arrow_type()),
        }
    }
}

/// The fields of one list's elements.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ElementScope<'a>(pub &'a [ElementField]);

/// The columns of a dataset.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SchemaScope<'a>(pub &'a Schema);

fn invalid_in(context: SqlContext, text: &str, what: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!("{} {text:?}: {what}", context.label()))
}

impl FieldScope for ElementScope<'_> {
    fn context(&self) -> SqlContext {
        SqlContext::ElementPredicate
    }

    fn scalar_field(&self, text: &str, path: &[String]) -> Result<BoundField> {
        let invalid = |what: String| invalid_in(self.context(), text, what);
        let [name] = path else {
            return Err(invalid(format!(
                "{} names a nested path; refer to element fields by their own name",
                path.join(".")
            )));
        };
        let field = self.0.iter().find(|f| &f.name == name).ok_or_else(|| {
            let names: Vec<_> = self.0.iter().map(|f| f.name.as_str()).collect();
            invalid(format!(
                "the elements have no field {name:?} (fields: {})",
                names.join(", ")
            ))
        })?;
        let data_type = field.data_type.clone().ok_or_else(|| {
            Error::unsupported(format!(
                "any_element predicate {text:?}: element field {name:?} has type {}, which lakeseek cannot filter on",
                field.logical_type
            ))
        })?;
        Ok(BoundField {
            id: field.id,
            name: name.to_string(),
            data_type,
        })
    }

    fn list_field(&self, text: &str, path: &str) -> Result<BoundField> {
        Err(invalid_in(
            self.context(),
            text,
            format!("list functions on {path:?} cannot be used inside any_element"),
        ))
    }
}

impl FieldScope for SchemaScope<'_> {
    fn context(&self) -> SqlContext {
        SqlContext::Filter
    }

    fn scalar_field(&self, text: &str, path: &[String]) -> Result<BoundField> {
        let name = path.join(".");
        let invalid = |what: String| invalid_in(self.context(), text, what);
        let field = self
            .0
            .field_by_path(&name)
            .ok_or_else(|| invalid(format!("no column named {name:?}")))?;
        if self.0.has_children(field.id) {
            return Err(invalid(format!(
                "column {name:?} is nested ({})",
                field.logical_type
            )));
        }
        // A dictionary column is filtered by its values.
        let data_type = self
            .0
            .arrow_type(field.id)
            .ok()
            .map(|t| match t {
                DataType::Dictionary(_, values) => *values,
                t => t,
            })
            .filter(is_key_type)
            .ok_or_else(|| {
                Error::unsupported(format!(
                    "filter {text:?}: column {name:?} has type {}, which lakeseek cannot filter on",
                    field.logical_type
                ))
            })?;
        Ok(BoundField {
            id: field.id,
            name,
            data_type,
        })
    }

    fn null_test_field(&self, text: &str, path: &[String]) -> Result<BoundField> {
        let name = path.join(".");
        let Some(field) = self.0.field_by_path(&name) else {
            return self.scalar_field(text, path);
        };
        match self.0.arrow_type(field.id) {
            // A list, a struct or a fixed-size list (a vector column) is null as a whole.
            Ok(data_type) if data_type.is_nested() => Ok(BoundField {
                id: field.id,
                name,
                data_type,
            }),
            _ => self.scalar_field(text, path),
        }
    }

    fn list_field(&self, text: &str, path: &str) -> Result<BoundField> {
        let field = self.0.field_by_path(path).ok_or_else(|| {
            Error::InvalidArgument(format!("any_element: no column named {path:?}"))
        })?;
        // A list of scalars as List(item); a list of structs (any_element) has no scalar type.
        let item = self
            .0
            .fields
            .iter()
            .find(|f| f.parent_id == field.id && f.id != field.id);
        let data_type = match item.map(|i| self.0.arrow_type(i.id)) {
            Some(Ok(t)) if is_key_type(&t) => DataType::List(std::sync::Arc::new(
                arrow_schema::Field::new("item", t, true),
            )),
            _ => DataType::Null,
        };
        if !field.logical_type.starts_with("list") && !field.logical_type.starts_with("large_list")
        {
            return Err(invalid_in(
                self.context(),
                text,
                format!(
                    "column {path:?} has type {}, not a list",
                    field.logical_type
                ),
            ));
        }
        Ok(BoundField {
            id: field.id,
            name: path.to_string(),
            data_type,
        })
    }
}

/// A field a bound predicate refers to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BoundField {
    /// Lance field id.
    pub(crate) id: i32,
    /// Current name.
    pub(crate) name: String,
    /// Arrow type.
    pub(crate) data_type: DataType,
}

/// A typed predicate over one element. Field operands are indices into
/// [`BoundPredicate::fields`]; `None` values are NULL literals.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SqlPredicate {
    /// `TRUE`, `FALSE` or `NULL`.
    Constant(Option<bool>),
    /// A boolean field used as a predicate.
    BoolField(usize),
    /// `field op value`.
    Compare {
        /// Field.
        field: usize,
        /// Operator.
        op: CompareOp,
        /// Value (`None`: NULL literal).
        value: Option<ElementValue>,
    },
    /// `left op right`, two fields.
    CompareFields {
        /// Left field.
        left: usize,
        /// Operator.
        op: CompareOp,
        /// Right field.
        right: usize,
    },
    /// `field [NOT] IN (values)`.
    InList {
        /// Field.
        field: usize,
        /// Non-null values, sorted and deduplicated.
        values: Vec<ElementValue>,
        /// Whether the list held a NULL.
        has_null: bool,
        /// `NOT IN`.
        negated: bool,
    },
    /// `field IS [NOT] NULL`.
    IsNull {
        /// Field.
        field: usize,
        /// `IS NOT NULL`.
        negated: bool,
    },
    /// `field IS [NOT] DISTINCT FROM value`.
    DistinctFrom {
        /// Field.
        field: usize,
        /// Value (`None`: NULL).
        value: Option<ElementValue>,
        /// `IS NOT DISTINCT FROM`.
        negated: bool,
    },
    /// `left IS [NOT] DISTINCT FROM right`, two fields.
    DistinctFields {
        /// Left field.
        left: usize,
        /// Right field.
        right: usize,
        /// `IS NOT DISTINCT FROM`.
        negated: bool,
    },
    /// `inner IS [NOT] TRUE|FALSE|UNKNOWN`.
    IsTruth {
        /// Tested predicate.
        inner: Box<SqlPredicate>,
        /// Truth value.
        truth: Truth,
        /// `IS NOT`.
        negated: bool,
    },
    /// Conjunction.
    And(Vec<SqlPredicate>),
    /// Disjunction.
    Or(Vec<SqlPredicate>),
    /// Negation.
    Not(Box<SqlPredicate>),
    /// `LIKE` / `ILIKE` / `contains` / `starts_with` on string field `field`.
    StringMatch {
        /// The string field.
        field: usize,
        /// The compiled test.
        matcher: StringMatcher,
    },
    /// An expression lakeseek keeps as written (function calls, arithmetic ...).
    Opaque(String),
    /// `any_element(list_col, 'predicate')` on list field `field` (top level only).
    AnyElement {
        /// The list column.
        field: usize,
        /// The call (never negated; `NOT` is a [`SqlPredicate::Not`] above it).
        call: AnyElementCall,
    },
    /// `array_has_any` / `array_has_all` / `array_contains` on list field `field`.
    ListHas {
        /// The list column.
        field: usize,
        /// Any or all.
        mode: ListHasMode,
        /// Non-null values typed as the list's items.
        values: Vec<ElementValue>,
        /// Whether the value list held a NULL.
        has_null: bool,
    },
}

/// A predicate typed against its scope.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BoundPredicate {
    /// The predicate text.
    pub(crate) text: String,
    /// Fields referred to, in first-use order.
    pub(crate) fields: Vec<BoundField>,
    /// The predicate.
    pub(crate) predicate: SqlPredicate,
}

impl BoundPredicate {
    /// Type `expr` (parsed from `text`) against the element fields.
    pub(crate) fn bind(
        text: &str,
        expr: &SqlExpr,
        element_fields: &[ElementField],
    ) -> Result<Self> {
        Self::bind_in(text, expr, &ElementScope(element_fields))
    }

    /// Type `expr` (parsed from `text`) in `scope`.
    pub(crate) fn bind_in(text: &str, expr: &SqlExpr, scope: &dyn FieldScope) -> Result<Self> {
        let mut binder = Binder {
            text,
            scope,
            fields: Vec::new(),
        };
        let predicate = binder.predicate(expr)?;
        Ok(BoundPredicate {
            text: text.to_string(),
            fields: binder.fields,
            predicate,
        })
    }

    /// Parse and type a predicate string of an `any_element` call.
    pub(crate) fn parse(text: &str, element_fields: &[ElementField]) -> Result<Self> {
        let expr = super::expr::parse_element_predicate(text)?;
        Self::bind(text, &expr, element_fields)
    }

    /// Parse and type a top-level filter against a dataset schema (the engine binds a
    /// [`ParsedFilter`](super::parsed::ParsedFilter) instead).
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn parse_filter(text: &str, schema: &Schema) -> Result<Self> {
        let expr = super::expr::parse_sql(text, SqlContext::Filter)?;
        Self::bind_in(text, &expr, &SchemaScope(schema))
    }

    /// SQL-like text of a (sub-)predicate, with current field names.
    pub(crate) fn describe(&self, p: &SqlPredicate) -> String {
        describe(p, &self.fields)
    }
}

struct Binder<'a> {
    text: &'a str,
    scope: &'a dyn FieldScope,
    fields: Vec<BoundField>,
}

impl Binder<'_> {
    fn top_level(&self) -> bool {
        self.scope.context() == SqlContext::Filter
    }

    fn invalid(&self, what: impl std::fmt::Display) -> Error {
        invalid_in(self.scope.context(), self.text, what)
    }

    fn push(&mut self, field: BoundField) -> usize {
        if let Some(i) = self.fields.iter().position(|f| f.id == field.id) {
            return i;
        }
        self.fields.push(field);
        self.fields.len() - 1
    }

    fn field(&mut self, name: &str) -> Result<usize> {
        self.path(&[name.to_string()])
    }

    fn path(&mut self, path: &[String]) -> Result<usize> {
        self.bound(path, |scope, text, path| scope.scalar_field(text, path))
    }

    /// The operand of `IS [NOT] NULL` (nested columns allowed where the scope allows them).
    fn null_tested(&mut self, path: &[String]) -> Result<usize> {
        self.bound(path, |scope, text, path| scope.null_test_field(text, path))
    }

    /// The index of the field `path` names: one already bound, else `resolve`d in the scope.
    fn bound(
        &mut self,
        path: &[String],
        resolve: impl FnOnce(&dyn FieldScope, &str, &[String]) -> Result<BoundField>,
    ) -> Result<usize> {
        let joined = path.join(".");
        if let Some(i) = self.fields.iter().position(|f| f.name == joined) {
            return Ok(i);
        }
        let field = resolve(self.scope, self.text, path)?;
        Ok(self.push(field))
    }

    /// A field operand: a name or a dotted path.
    fn operand_field(&mut self, e: &SqlExpr) -> Option<Result<usize>> {
        match e {
            SqlExpr::Field(name) => Some(self.field(name)),
            SqlExpr::Path(path) => Some(self.path(path)),
            _ => None,
        }
    }

    fn opaque(&self, text: String) -> Result<SqlPredicate> {
        if self.top_level() {
            return Err(self.invalid(format!(
                "{text} is not supported (use comparisons, IN, BETWEEN, IS NULL, LIKE, contains, starts_with, AND, OR, NOT, any_element)"
            )));
        }
        Ok(SqlPredicate::Opaque(text))
    }

    fn list_has(
        &mut self,
        function: ListFunction,
        column: &str,
        values: &[SqlExpr],
    ) -> Result<SqlPredicate> {
        let field = self.scope.list_field(self.text, column)?;
        let item = match &field.data_type {
            DataType::List(f) | DataType::LargeList(f) => f.data_type().clone(),
            other => {
                return Err(self.invalid(format!(
                    "column {column:?} has type {other}, not a list of scalars"
                )))
            }
        };
        let f = self.push(field);
        let mut out = Vec::new();
        let mut has_null = false;
        for v in values {
            let SqlExpr::Literal(lit) = v else {
                return Err(self.invalid(format!("{v:?} is not a literal")));
            };
            match self.literal_as(lit, &item, column)? {
                Some(v) => out.push(v),
                None => has_null = true,
            }
        }
        out.sort_by(|a, b| a.compare(b).unwrap_or(std::cmp::Ordering::Equal));
        out.dedup();
        let mode = match function {
            ListFunction::HasAll => ListHasMode::All,
            ListFunction::HasAny | ListFunction::Contains => ListHasMode::Any,
        };
        Ok(SqlPredicate::ListHas {
            field: f,
            mode,
            values: out,
            has_null,
        })
    }

    fn predicate(&mut self, e: &SqlExpr) -> Result<SqlPredicate> {
        use SqlPredicate as P;
        Ok(match e {
            SqlExpr::And(v) => P::And(v.iter().map(|e| self.predicate(e)).collect::<Result<_>>()?),
            SqlExpr::Or(v) => P::Or(v.iter().map(|e| self.predicate(e)).collect::<Result<_>>()?),
            SqlExpr::Not(e) => P::Not(Box::new(self.predicate(e)?)),
            SqlExpr::Opaque(text) => self.opaque(text.clone())?,
            SqlExpr::AnyElement(call) => {
                let field = self.scope.list_field(self.text, &call.column)?;
                P::AnyElement {
                    field: self.push(field),
                    call: call.clone(),
                }
            }
            SqlExpr::ListHas {
                function,
                column,
                values,
            } => self.list_has(*function, column, values)?,
            SqlExpr::Field(_) | SqlExpr::Path(_) => self.bool_field(e)?,
            SqlExpr::Literal(Literal::Bool(b)) => P::Constant(Some(*b)),
            SqlExpr::Literal(Literal::Null) => P::Constant(None),
            SqlExpr::Literal(other) => {
                return Err(self.invalid(format!("{other} is not a predicate")))
            }
            SqlExpr::Compare { left, op, right } => self.compare(left, *op, right)?,
            SqlExpr::InList {
                expr,
                list,
                negated,
            } => self.in_list(e, expr, list, *negated)?,
            SqlExpr::Between {
                expr,
                low,
                high,
                negated,
            } => self.between(expr, low, high, *negated)?,
            SqlExpr::IsNull { expr, negated } => self.is_null(e, expr, *negated)?,
            SqlExpr::IsTruth {
                expr,
                truth,
                negated,
            } => P::IsTruth {
                inner: Box::new(self.predicate(expr)?),
                truth: *truth,
                negated: *negated,
            },
            SqlExpr::IsDistinctFrom {
                left,
                right,
                negated,
            } => self.distinct_from(e, left, right, *negated)?,
            SqlExpr::StringMatch {
                expr,
                test,
                pattern,
            } => self.string_match(expr, *test, pattern)?,
        })
    }

    /// `LIKE` / `ILIKE` / `contains` / `starts_with` on a string field (NULL pattern: NULL).
    fn string_match(
        &mut self,
        operand: &SqlExpr,
        test: StringTest,
        pattern: &SqlExpr,
    ) -> Result<SqlPredicate> {
        let Some(field) = self.operand_field(operand) else {
            return Err(self.invalid(format!(
                "{} tests a string column, not {}",
                test.name(),
                display(operand)
            )));
        };
        let field = field?;
        let bound = &self.fields[field];
        Ok(
            match bind_pattern(self.text, test, &bound.name, &bound.data_type, pattern)? {
                Some(matcher) => SqlPredicate::StringMatch { field, matcher },
                None => SqlPredicate::Constant(None),
            },
        )
    }

    /// A boolean field used as a predicate.
    fn bool_field(&mut self, e: &SqlExpr) -> Result<SqlPredicate> {
        let f = self.operand_field(e).expect("a field")?;
        let name = self.fields[f].name.clone();
        if self.fields[f].data_type != DataType::Boolean {
            return Err(self.invalid(format!(
                "field {name:?} is not boolean; compare it with a value"
            )));
        }
        Ok(SqlPredicate::BoolField(f))
    }

    /// `expr [NOT] IN (literals)` (`e` the whole expression, kept opaque when `expr` is
    /// not a field or an item is not a literal).
    fn in_list(
        &mut self,
        e: &SqlExpr,
        expr: &SqlExpr,
        list: &[SqlExpr],
        negated: bool,
    ) -> Result<SqlPredicate> {
        let Some(f) = self.operand_field(expr) else {
            return self.opaque(display(e));
        };
        let f = f?;
        let mut values = Vec::with_capacity(list.len());
        let mut has_null = false;
        for item in list {
            let SqlExpr::Literal(lit) = item else {
                return self.opaque(display(e));
            };
            match self.value(f, lit)? {
                Some(v) => values.push(v),
                None => has_null = true,
            }
        }
        Ok(in_list(f, values, has_null, negated))
    }

    /// `expr [NOT] BETWEEN low AND high` as two comparisons.
    fn between(
        &mut self,
        expr: &SqlExpr,
        low: &SqlExpr,
        high: &SqlExpr,
        negated: bool,
    ) -> Result<SqlPredicate> {
        let both = SqlPredicate::And(vec![
            self.compare(expr, CompareOp::GtEq, low)?,
            self.compare(expr, CompareOp::LtEq, high)?,
        ]);
        Ok(if negated {
            SqlPredicate::Not(Box::new(both))
        } else {
            both
        })
    }

    /// `expr IS [NOT] NULL`: a field's null test, a constant for a literal, else the
    /// predicate's UNKNOWN test.
    fn is_null(&mut self, e: &SqlExpr, expr: &SqlExpr, negated: bool) -> Result<SqlPredicate> {
        use SqlPredicate as P;
        Ok(match expr {
            SqlExpr::Field(name) => P::IsNull {
                field: self.null_tested(std::slice::from_ref(name))?,
                negated,
            },
            SqlExpr::Path(path) => P::IsNull {
                field: self.null_tested(path)?,
                negated,
            },
            SqlExpr::Literal(lit) => P::Constant(Some((*lit == Literal::Null) != negated)),
            SqlExpr::Opaque(_) => self.opaque(display(e))?,
            other => P::IsTruth {
                inner: Box::new(self.predicate(other)?),
                truth: Truth::Unknown,
                negated,
            },
        })
    }

    /// `left IS [NOT] DISTINCT FROM right`: a field against a literal, or two fields.
    fn distinct_from(
        &mut self,
        e: &SqlExpr,
        left: &SqlExpr,
        right: &SqlExpr,
        negated: bool,
    ) -> Result<SqlPredicate> {
        use SqlPredicate as P;
        Ok(match (left, right) {
            (SqlExpr::Literal(lit), field) | (field, SqlExpr::Literal(lit)) => {
                let Some(f) = self.operand_field(field) else {
                    return self.opaque(display(e));
                };
                let f = f?;
                P::DistinctFrom {
                    field: f,
                    value: self.value(f, lit)?,
                    negated,
                }
            }
            (a, b) => match (self.operand_field(a), self.operand_field(b)) {
                (Some(l), Some(r)) => {
                    let (l, r) = (l?, r?);
                    self.check_field_comparison(l, r)?;
                    P::DistinctFields {
                        left: l,
                        right: r,
                        negated,
                    }
                }
                _ => self.opaque(display(e))?,
            },
        })
    }

    fn compare(&mut self, left: &SqlExpr, op: CompareOp, right: &SqlExpr) -> Result<SqlPredicate> {
        use SqlExpr as E;
        match (left, right) {
            (E::Literal(_), E::Literal(_)) => Err(self.invalid(if self.top_level() {
                "a comparison needs one column and one literal"
            } else {
                "a comparison needs at least one element field"
            })),
            (field, E::Literal(lit)) | (E::Literal(lit), field) => {
                let swapped = matches!(left, E::Literal(_));
                let Some(f) = self.operand_field(field) else {
                    return self.opaque(format!(
                        "{} {} {}",
                        display(left),
                        op.symbol(),
                        display(right)
                    ));
                };
                let f = f?;
                let value = self.value(f, lit)?;
                Ok(compare_value(
                    f,
                    if swapped { op.swapped() } else { op },
                    value,
                ))
            }
            (a, b) => match (self.operand_field(a), self.operand_field(b)) {
                (Some(l), Some(r)) => {
                    let (l, r) = (l?, r?);
                    self.check_field_comparison(l, r)?;
                    Ok(SqlPredicate::CompareFields {
                        left: l,
                        op,
                        right: r,
                    })
                }
                _ => self.opaque(format!(
                    "{} {} {}",
                    display(left),
                    op.symbol(),
                    display(right)
                )),
            },
        }
    }

    /// Two fields compared with each other: inside `any_element` when their types are
    /// comparable; top-level filters compare a column with literals only.
    fn check_field_comparison(&self, l: usize, r: usize) -> Result<()> {
        if self.top_level() {
            return Err(self.invalid("a comparison needs one column and one literal"));
        }
        self.check_comparable(l, r)
    }

    fn check_comparable(&self, l: usize, r: usize) -> Result<()> {
        let (a, b) = (&self.fields[l].data_type, &self.fields[r].data_type);
        if family(a).is_some() && family(a) == family(b) {
            Ok(())
        } else {
            Err(self.invalid(format!(
                "fields {:?} ({a}) and {:?} ({b}) cannot be compared",
                self.fields[l].name, self.fields[r].name
            )))
        }
    }

    /// A literal coerced to field `f`'s type; `None` for NULL.
    fn value(&self, f: usize, lit: &Literal) -> Result<Option<ElementValue>> {
        let field = &self.fields[f];
        self.literal_as(lit, &field.data_type, &field.name)
    }

    /// A literal coerced to type `t` (of field `name`); `None` for NULL.
    fn literal_as(&self, lit: &Literal, t: &DataType, name: &str) -> Result<Option<ElementValue>> {
        let what = if self.top_level() { "column" } else { "field" };
        let mismatch = || {
            self.invalid(format!(
                "literal {lit} cannot be compared with {what} {name:?} of type {t}"
            ))
        };
        // The list element index keys no fixed-size binaries.
        if !self.top_level() && matches!(t, DataType::FixedSizeBinary(_)) && *lit != Literal::Null {
            return Err(mismatch());
        }
        let scalar = coerce_literal(lit, t).map_err(|e| match e {
            CoerceError::Mismatch => mismatch(),
            CoerceError::Invalid(what) => self.invalid(what),
            CoerceError::UnsupportedZone(tz) => Error::unsupported(format!(
                "{} {:?}: time zone {tz:?} (only UTC and fixed offsets like +08:00 are supported)",
                self.scope.context().label(),
                self.text
            )),
        })?;
        Ok(scalar.map(|s| match s {
            Scalar::Bool(b) => ElementValue::Bool(b),
            Scalar::Int(v) => ElementValue::Int(v),
            Scalar::UInt(v) => ElementValue::UInt(v),
            Scalar::Float(v) => narrow(v, t),
            Scalar::Bytes(b) => ElementValue::Bytes(b),
        }))
    }
}

/// Comparison families: fields of one family can be compared with each other.
fn family(t: &DataType) -> Option<u8> {
    use DataType as T;
    Some(match t {
        T::Boolean => 0,
        t if t.is_integer() => 1,
        t if t.is_floating() => 2,
        T::Utf8 | T::LargeUtf8 | T::Utf8View => 3,
        T::Binary | T::LargeBinary | T::BinaryView => 4,
        T::Date32 => 5,
        T::Date64 => 6,
        T::Timestamp(TimeUnit::Second, _) => 7,
        T::Timestamp(TimeUnit::Millisecond, _) => 8,
        T::Timestamp(TimeUnit::Microsecond, _) => 9,
        T::Timestamp(TimeUnit::Nanosecond, _) => 10,
        _ => return None,
    })
}

fn narrow(v: f64, t: &DataType) -> ElementValue {
    match t {
        DataType::Float32 => ElementValue::Float32(v as f32),
        DataType::Float16 => ElementValue::Float(half::f16::from_f64(v).to_f64()),
        _ => ElementValue::Float(v),
    }
}

/// `field op value` with the signed-zero rewrite.
fn compare_value(field: usize, op: CompareOp, value: Option<ElementValue>) -> SqlPredicate {
    match value {
        Some(v) if v.is_float_zero() => match op {
            CompareOp::Eq | CompareOp::NotEq => {
                in_list(field, vec![v], false, op == CompareOp::NotEq)
            }
            CompareOp::Lt | CompareOp::GtEq => SqlPredicate::Compare {
                field,
                op,
                value: Some(v.with_zero_sign(true)),
            },
            CompareOp::LtEq | CompareOp::Gt => SqlPredicate::Compare {
                field,
                op,
                value: Some(v.with_zero_sign(false)),
            },
        },
        value => SqlPredicate::Compare { field, op, value },
    }
}

fn in_list(
    field: usize,
    mut values: Vec<ElementValue>,
    has_null: bool,
    negated: bool,
) -> SqlPredicate {
    if let Some(zero) = values.iter().find(|v| v.is_float_zero()).cloned() {
        values.push(zero.with_zero_sign(true));
        values.push(zero.with_zero_sign(false));
    }
    values.sort_by(|a, b| a.compare(b).unwrap_or(std::cmp::Ordering::Equal));
    values.dedup();
    SqlPredicate::InList {
        field,
        values,
        has_null,
        negated,
    }
}

fn display(e: &SqlExpr) -> String {
    match e {
        SqlExpr::Field(n) => n.clone(),
        SqlExpr::Path(p) => p.join("."),
        SqlExpr::Literal(l) => l.to_string(),
        SqlExpr::Opaque(t) => t.clone(),
        other => format!("{other:?}"),
    }
}

fn value_text(v: &Option<ElementValue>) -> String {
    v.as_ref()
        .map_or_else(|| "NULL".to_string(), ToString::to_string)
}

/// SQL-like text of a bound predicate.
pub(crate) fn describe(p: &SqlPredicate, fields: &[BoundField]) -> String {
    use SqlPredicate as P;
    let name = |i: &usize| fields.get(*i).map_or("?", |f| f.name.as_str()).to_string();
    let not = |n: bool| if n { "NOT " } else { "" };
    let distinct = |l: String, n: bool, r: String| format!("{l} IS {}DISTINCT FROM {r}", not(n));
    let join = |v: &[SqlPredicate], sep: &str| {
        v.iter()
            .map(|p| format!("({})", describe(p, fields)))
            .collect::<Vec<_>>()
            .join(sep)
    };
    match p {
        P::Constant(c) => constant_text(*c).into(),
        P::BoolField(f) => name(f),
        P::Compare { field, op, value } => {
            format!("{} {} {}", name(field), op.symbol(), value_text(value))
        }
        P::CompareFields { left, op, right } => {
            format!("{} {} {}", name(left), op.symbol(), name(right))
        }
        P::InList {
            field,
            values,
            has_null,
            negated,
        } => format!(
            "{} {}IN ({})",
            name(field),
            not(*negated),
            value_list(values, *has_null)
        ),
        P::IsNull { field, negated } => format!("{} IS {}NULL", name(field), not(*negated)),
        P::DistinctFrom {
            field,
            value,
            negated,
        } => distinct(name(field), *negated, value_text(value)),
        P::DistinctFields {
            left,
            right,
            negated,
        } => distinct(name(left), *negated, name(right)),
        P::IsTruth {
            inner,
            truth,
            negated,
        } => format!(
            "({}) IS {}{}",
            describe(inner, fields),
            not(*negated),
            truth_text(*truth)
        ),
        P::And(v) => join(v, " AND "),
        P::Or(v) => join(v, " OR "),
        P::Not(inner) => format!("NOT ({})", describe(inner, fields)),
        P::Opaque(t) => t.clone(),
        P::StringMatch { field, matcher } => matcher.describe(&name(field)),
        P::AnyElement { call, .. } => format!(
            "any_element({}, '{}')",
            call.column,
            call.predicate.replace('\'', "''")
        ),
        P::ListHas {
            field,
            mode,
            values,
            has_null,
        } => format!(
            "{}({}, [{}])",
            list_function_name(*mode),
            name(field),
            value_list(values, *has_null)
        ),
    }
}

/// The values of an IN list or `array_has_*`, then `NULL` if the list holds one.
fn value_list(values: &[ElementValue], has_null: bool) -> String {
    let mut items: Vec<String> = values.iter().map(ToString::to_string).collect();
    if has_null {
        items.push("NULL".into());
    }
    items.join(", ")
}

fn constant_text(c: Option<bool>) -> &'static str {
    match c {
        Some(true) => "TRUE",
        Some(false) => "FALSE",
        None => "NULL",
    }
}

fn list_function_name(mode: ListHasMode) -> &'static str {
    match mode {
        ListHasMode::Any => "array_has_any",
        ListHasMode::All => "array_has_all",
    }
}

fn truth_text(truth: Truth) -> &'static str {
    match truth {
        Truth::True => "TRUE",
        Truth::False => "FALSE",
        Truth::Unknown => "UNKNOWN",
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod filter_tests;
