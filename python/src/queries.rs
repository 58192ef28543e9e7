//! The arguments of `Dataset.nearest(...)` and `Dataset.search(...)`, owned (they move into
//! the future that runs the query), and how each runs on the library's builders.

use std::sync::Arc;

use arrow_array::{ArrayRef, Float32Array, RecordBatch, UInt64Array};
use arrow_schema::{DataType, Field, Schema};
use pyo3::PyResult;

use crate::arrow_out::Table;
use crate::errors::InvalidArgument;
use crate::input::as_strs;
use crate::open::Json;

/// Name of the score column of a full-text search's result (pylance's).
const SCORE_COLUMN: &str = "_score";

/// A nearest-neighbour query (pylance's `nearest={...}` keys and scanner flags).
pub(crate) struct NearestSpec {
    pub(crate) column: String,
    pub(crate) query: Vec<f32>,
    pub(crate) k: usize,
    pub(crate) nprobes: Option<usize>,
    pub(crate) minimum_nprobes: Option<usize>,
    pub(crate) maximum_nprobes: Option<usize>,
    pub(crate) refine_factor: Option<u32>,
    pub(crate) filter: Option<String>,
    pub(crate) prefilter: bool,
    pub(crate) columns: Vec<String>,
    pub(crate) ef: Option<u32>,
    pub(crate) fast_search: bool,
    pub(crate) use_index: bool,
    pub(crate) allow_scan: bool,
    pub(crate) distance_range: (Option<f32>, Option<f32>),
    pub(crate) metric: Option<String>,
}

impl NearestSpec {
    fn build<'d>(&self, dataset: &'d lakeseek::Dataset) -> lakeseek::Result<lakeseek::Nearest<'d>> {
        let mut n = dataset
            .nearest(&self.column, &self.query)
            .k(self.k)
            .fast_search(self.fast_search)
            .use_index(self.use_index)
            .allow_scan(self.allow_scan)
            .distance_range(self.distance_range.0, self.distance_range.1);
        if let Some(p) = self.nprobes {
            n = n.nprobes(p);
        }
        if let Some(p) = self.minimum_nprobes {
            n = n.minimum_nprobes(p);
        }
        if let Some(p) = self.maximum_nprobes {
            n = n.maximum_nprobes(p);
        }
        if let Some(r) = self.refine_factor {
            n = n.refine(r);
        }
        if let Some(ef) = self.ef {
            n = n.ef(ef);
        }
        if let Some(f) = &self.filter {
            n = n.filter(f).postfilter(!self.prefilter);
        }
        if !self.columns.is_empty() {
            n = n.columns(&as_strs(&self.columns));
        }
        if let Some(m) = &self.metric {
            n = n.metric(m)?;
        }
        Ok(n)
    }

    /// Run it: `_rowaddr`, `_distance`, then the columns, nearest first.
    pub(crate) async fn execute(self, dataset: lakeseek::Dataset) -> lakeseek::Result<Table> {
        let batch = self.build(&dataset)?.execute().await?;
        Ok(Table::from_batch(batch))
    }

    /// Run it and report how it ran: index, type, metric, segments, partitions probed (and
    /// served from the cache), rows scored, fragments searched exactly, the filter's plan.
    pub(crate) async fn explain(self, dataset: lakeseek::Dataset) -> lakeseek::Result<Json> {
        let report = self.build(&dataset)?.explain().await?;
        Ok(Json(report.to_string()))
    }
}

/// A full-text search.
pub(crate) struct SearchSpec {
    pub(crate) text: String,
    pub(crate) column: Option<String>,
    pub(crate) k: Option<usize>,
    pub(crate) operator: lakeseek::SearchOperator,
    pub(crate) filter: Option<String>,
    pub(crate) columns: Vec<String>,
    pub(crate) allow_scan: bool,
    pub(crate) index_only: bool,
}

/// pylance's operator names, any case.
pub(crate) fn parse_operator(operator: &str) -> PyResult<lakeseek::SearchOperator> {
    match operator.to_ascii_lowercase().as_str() {
        "or" => Ok(lakeseek::SearchOperator::Or),
        "and" => Ok(lakeseek::SearchOperator::And),
        _ => Err(InvalidArgument::new_err(format!(
            "invalid argument: operator must be \"or\" or \"and\", not {operator:?}"
        ))),
    }
}

impl SearchSpec {
    /// Run it: `_rowaddr`, `_score`, then the columns, best first.
    pub(crate) async fn execute(self, dataset: lakeseek::Dataset) -> lakeseek::Result<Table> {
        let mut search = dataset
            .search(&self.text)
            .operator(self.operator)
            .allow_scan(self.allow_scan)
            .index_only(self.index_only);
        if let Some(column) = &self.column {
            search = search.column(column);
        }
        if let Some(k) = self.k {
            search = search.k(k);
        }
        if let Some(f) = &self.filter {
            search = search.filter(f);
        }
        if !self.columns.is_empty() {
            search = search.columns(&as_strs(&self.columns));
        }
        let found = search.execute().await?;
        Ok(Table::from_batch(scored_batch(found)?))
    }
}

/// `_rowaddr`, `_score` and the columns the search read (after their own `_rowaddr`).
fn scored_batch(found: lakeseek::SearchResult) -> lakeseek::Result<RecordBatch> {
    let mut fields = vec![
        Field::new("_rowaddr", DataType::UInt64, false),
        Field::new(SCORE_COLUMN, DataType::Float32, false),
    ];
    let mut arrays: Vec<ArrayRef> = vec![
        Arc::new(UInt64Array::from(found.row_addresses)),
        Arc::new(Float32Array::from(found.scores)),
    ];
    if let Some(batch) = &found.batch {
        let schema = batch.schema();
        let columns = schema.fields().iter().zip(batch.columns());
        for (field, array) in columns.filter(|(f, _)| f.name() != "_rowaddr") {
            fields.push(field.as_ref().clone());
            arrays.push(Arc::clone(array));
        }
    }
    Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)?)
}
