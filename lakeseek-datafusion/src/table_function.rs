//! The `nearest(..)` and `search(..)` table functions: a lakeseek nearest-neighbour or
//! full-text query over a registered [`crate::LakeseekTable`], as a table of its rows.
//!
//! ```sql
//! SELECT id, _distance FROM nearest('t', 'vec', [0.1, -0.2, ...], 10, 'nprobes=4')
//! SELECT id, _score FROM search('docs', 'body', 'quick fox', 10, 'operator=and')
//! ```
//!
//! Arguments: the table's name, the column, the query (a vector as an array literal or a
//! string `'0.1,-0.2,...'`; a text), optionally `k` as a whole number, then options as
//! `'key=value'` strings (DataFusion passes no named arguments to table functions).

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::{Array, RecordBatch, RecordBatchOptions};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::{Session, TableFunctionArgs, TableFunctionImpl};
use datafusion::common::{DFSchema, DataFusionError, Result, ScalarValue, TableReference};
use datafusion::datasource::{TableProvider, TableType};
use datafusion::execution::SessionState;
use datafusion::logical_expr::{ColumnarValue, Expr};
use datafusion::physical_plan::ExecutionPlan;
use futures::FutureExt;
use lakeseek::{Dataset, DISTANCE_COLUMN};

use crate::exec::ScanSource;
use crate::filter::ROW_ADDRESS_COLUMN;
use crate::query_exec::{
    apply_nearest, apply_search, LakeseekQueryExec, QueryKind, QuerySpec, SCORE_COLUMN,
};
use crate::LakeseekTable;

/// `key=value` options, as written.
type Options = Vec<(String, String)>;

/// Which table function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Function {
    Nearest,
    Search,
}

impl Function {
    fn name(self) -> &'static str {
        match self {
            Function::Nearest => "nearest",
            Function::Search => "search",
        }
    }

    fn usage(self) -> &'static str {
        match self {
            Function::Nearest => {
                "nearest('table', 'vector_column', [0.1, -0.2, ...] or '0.1,-0.2,...' \
                 [, k] [, 'nprobes=20', 'refine_factor=2', 'filter=...', ...])"
            }
            Function::Search => {
                "search('table', 'text_column', 'query text' [, k] \
                 [, 'operator=and', 'filter=...', ...])"
            }
        }
    }

    fn score_column(self) -> &'static str {
        match self {
            Function::Nearest => DISTANCE_COLUMN,
            Function::Search => SCORE_COLUMN,
        }
    }
}

/// The `nearest` or `search` table function; see the module docs and
/// [`nearest_function`] / [`search_function`].
#[derive(Debug)]
pub struct LakeseekTableFunction {
    function: Function,
}

/// `nearest('table', 'column', vector [, k] [, 'key=value', ...])`: the `k` rows (10 by
/// default) of a registered [`LakeseekTable`] nearest to the vector, nearest first, as
/// [`lakeseek::Dataset::nearest`] answers them (pylance's rows and `_distance`). Its
/// columns: the table's, then `_rowaddr` and `_distance`. Options: `nprobes`,
/// `minimum_nprobes`, `maximum_nprobes`, `refine_factor`, `ef`, `filter` (a lakeseek SQL
/// filter applied before the search unless `prefilter=false`), `prefilter`,
/// `fast_search`, `use_index`, `allow_scan`, `metric`, `distance_lower`, `distance_upper`.
/// [`crate::session_context`] registers it as `nearest`.
pub fn nearest_function() -> Arc<LakeseekTableFunction> {
    Arc::new(LakeseekTableFunction {
        function: Function::Nearest,
    })
}

/// `search('table', 'column', 'text' [, k] [, 'key=value', ...])`: the rows of a registered
/// [`LakeseekTable`] matching a full-text query on the column's INVERTED index, best first,
/// as [`lakeseek::Dataset::search`] answers them (pylance's rows and BM25 `_score`; every
/// match unless `k`). Its columns: the table's, then `_rowaddr` and `_score`. Options:
/// `operator` (`or`, `and`), `filter`, `index_only`, `allow_scan`.
/// [`crate::session_context`] registers it as `search`.
pub fn search_function() -> Arc<LakeseekTableFunction> {
    Arc::new(LakeseekTableFunction {
        function: Function::Search,
    })
}

impl LakeseekTableFunction {
    fn error(&self, what: impl std::fmt::Display) -> DataFusionError {
        DataFusionError::Plan(format!(
            "{}(..): {what}; usage: {}",
            self.function.name(),
            self.function.usage()
        ))
    }

    /// The value of the constant argument `expr`.
    fn constant(&self, session: &dyn Session, expr: &Expr, what: &str) -> Result<ScalarValue> {
        if let Expr::Literal(v, _) = expr {
            return Ok(v.clone());
        }
        let physical = session
            .create_physical_expr(expr.clone(), &DFSchema::empty())
            .map_err(|e| self.error(format!("{what} must be a constant ({e})")))?;
        let options = RecordBatchOptions::new().with_row_count(Some(1));
        let one_row =
            RecordBatch::try_new_with_options(Arc::new(Schema::empty()), vec![], &options)?;
        match physical
            .evaluate(&one_row)
            .map_err(|e| self.error(format!("{what}: {e}")))?
        {
            ColumnarValue::Scalar(v) => Ok(v),
            ColumnarValue::Array(a) if a.len() == 1 => ScalarValue::try_from_array(&a, 0),
            ColumnarValue::Array(_) => Err(self.error(format!("{what} must be one value"))),
        }
    }

    fn string(&self, session: &dyn Session, expr: &Expr, what: &str) -> Result<String> {
        match self.constant(session, expr, what)? {
            ScalarValue::Utf8(Some(s))
            | ScalarValue::LargeUtf8(Some(s))
            | ScalarValue::Utf8View(Some(s)) => Ok(s),
            v => Err(self.error(format!("{what} must be a string, not {v:?}"))),
        }
    }

    /// The registered lakeseek table named `name`: its dataset and columns (without
    /// `_rowaddr`).
    fn table(&self, session: &dyn Session, name: &str) -> Result<(Dataset, Vec<Field>)> {
        let state = session
            .as_any()
            .downcast_ref::<SessionState>()
            .ok_or_else(|| self.error("needs a DataFusion SessionState"))?;
        let reference = TableReference::from(name);
        let schema = state.schema_for_ref(reference.clone())?;
        let provider = match schema.table(reference.table()).now_or_never() {
            Some(found) => found?,
            None => return Err(self.error(format!("table {name:?} cannot be looked up now"))),
        };
        let provider = provider.ok_or_else(|| self.error(format!("no table named {name:?}")))?;
        let table = provider
            .downcast_ref::<LakeseekTable>()
            .ok_or_else(|| self.error(format!("table {name:?} is not a lakeseek table")))?;
        let fields = table
            .schema()
            .fields()
            .iter()
            .filter(|f| f.name() != ROW_ADDRESS_COLUMN)
            .map(|f| f.as_ref().clone())
            .collect();
        Ok((table.dataset().clone(), fields))
    }

    /// The vector of a `nearest` call: an array of numbers, or a string of them.
    fn vector(&self, session: &dyn Session, expr: &Expr) -> Result<Vec<f32>> {
        let value = self.constant(session, expr, "the vector")?;
        let numbers = match &value {
            ScalarValue::Utf8(Some(s))
            | ScalarValue::LargeUtf8(Some(s))
            | ScalarValue::Utf8View(Some(s)) => return self.vector_text(s),
            ScalarValue::List(a) => a.value(0),
            ScalarValue::LargeList(a) => a.value(0),
            ScalarValue::FixedSizeList(a) => a.value(0),
            v => {
                return Err(self.error(format!(
                    "the vector must be an array of numbers or a string of them, not {v:?}"
                )))
            }
        };
        let numbers = datafusion::arrow::compute::cast(&numbers, &DataType::Float32)
            .map_err(|e| self.error(format!("the vector must hold numbers ({e})")))?;
        let numbers = numbers
            .as_any()
            .downcast_ref::<datafusion::arrow::array::Float32Array>()
            .ok_or_else(|| self.error("the vector must hold numbers"))?;
        if numbers.null_count() > 0 {
            return Err(self.error("the vector holds a NULL"));
        }
        Ok(numbers.values().to_vec())
    }

    fn vector_text(&self, text: &str) -> Result<Vec<f32>> {
        let inner = text.trim().trim_start_matches('[').trim_end_matches(']');
        inner
            .split(',')
            .map(|v| {
                v.trim()
                    .parse::<f32>()
                    .map_err(|_| self.error(format!("the vector {text:?} holds {:?}", v.trim())))
            })
            .collect()
    }

    /// `k` and the `key=value` options after the query.
    fn options(&self, session: &dyn Session, args: &[Expr]) -> Result<(Option<u64>, Options)> {
        let mut k = None;
        let mut options = Vec::new();
        for (i, expr) in args.iter().enumerate() {
            let value = self.constant(session, expr, "an option")?;
            let text = match value {
                ScalarValue::Utf8(Some(s))
                | ScalarValue::LargeUtf8(Some(s))
                | ScalarValue::Utf8View(Some(s)) => s,
                v if i == 0 => {
                    let n = v.cast_to(&DataType::Int64).ok().and_then(|n| match n {
                        ScalarValue::Int64(Some(n)) => u64::try_from(n).ok(),
                        _ => None,
                    });
                    k = Some(n.ok_or_else(|| {
                        self.error(format!("k must be a whole number, not {v:?}"))
                    })?);
                    continue;
                }
                v => return Err(self.error(format!("options are 'key=value' strings, not {v:?}"))),
            };
            let (key, value) = text
                .split_once('=')
                .ok_or_else(|| self.error(format!("option {text:?} is not 'key=value'")))?;
            options.push((key.trim().to_ascii_lowercase(), value.to_string()));
        }
        Ok((k, options))
    }
}

impl TableFunctionImpl for LakeseekTableFunction {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let (session, exprs) = (args.session(), args.exprs());
        if exprs.len() < 3 {
            return Err(self.error(format!(
                "{} arguments given, at least 3 needed",
                exprs.len()
            )));
        }
        let name = self.string(session, &exprs[0], "the table name")?;
        let column = self.string(session, &exprs[1], "the column")?;
        let (dataset, mut fields) = self.table(session, &name)?;
        let kind = match self.function {
            Function::Nearest => QueryKind::Nearest(self.vector(session, &exprs[2])?),
            Function::Search => QueryKind::Search(self.string(session, &exprs[2], "the text")?),
        };
        let (k, options) = self.options(session, &exprs[3..])?;
        // Options are checked now, without reading anything.
        match &kind {
            QueryKind::Nearest(v) => {
                apply_nearest(dataset.nearest(&column, v), &options).map(drop)?
            }
            QueryKind::Search(t) => apply_search(dataset.search(t), &options).map(drop)?,
        }
        if !dataset.column_names().contains(&column) {
            return Err(self.error(format!("table {name:?} has no column {column:?}")));
        }
        fields.push(Field::new(ROW_ADDRESS_COLUMN, DataType::UInt64, false));
        fields.push(Field::new(
            self.function.score_column(),
            DataType::Float32,
            false,
        ));
        let spec = QuerySpec {
            url: dataset.url().to_string(),
            version: dataset.version(),
            schema: Arc::new(Schema::new(fields)),
            column,
            kind,
            k,
            options,
        };
        Ok(Arc::new(QueryTable { dataset, spec }))
    }
}

/// The rows of one `nearest(..)` / `search(..)` call.
#[derive(Debug)]
struct QueryTable {
    dataset: Dataset,
    /// The query, its schema every column the call offers.
    spec: QuerySpec,
}

#[async_trait]
impl TableProvider for QueryTable {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.spec.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::Temporary
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let mut spec = self.spec.clone();
        if let Some(p) = projection {
            spec.schema = Arc::new(self.spec.schema.project(p)?);
        }
        Ok(Arc::new(LakeseekQueryExec::new(
            spec,
            ScanSource::Open(Box::new(self.dataset.clone())),
        )))
    }
}
