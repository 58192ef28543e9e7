//! `lakeseek query --search TEXT --search-column COL`: full-text search through
//! [`Dataset::search`], printing `{"row_addresses":[...],"scores":[...]}` best first, or
//! with `--columns` one JSON object per row (best first, `_score` last).

use std::io::Write;
use std::sync::Arc;

use arrow_array::{Float32Array, RecordBatch};
use arrow_schema::{DataType, Field};

use super::query::{json_error, name_the_scan_flag, write_json_lines, QueryArgs};
use crate::{Dataset, Error, Result, SearchOperator};

/// Run the search `args` asks for on `dataset`.
pub(super) async fn run_search(
    args: &QueryArgs,
    dataset: &Dataset,
    text: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<()> {
    let column = args.search_column.as_deref().unwrap_or_default();
    let mut search = dataset
        .search(text)
        .column(column)
        .index_only(args.index_only)
        .allow_scan(args.allow_scan)
        .operator(if args.operator == "and" {
            SearchOperator::And
        } else {
            SearchOperator::Or
        });
    if let Some(k) = args.k {
        search = search.k(k);
    }
    if !args.filter.is_empty() {
        search = search.filter(&args.filter);
    }
    let columns: Vec<&str> = args.columns.iter().map(String::as_str).collect();
    if !columns.is_empty() {
        search = search.columns(&columns);
    }
    let found = search.execute().await.map_err(name_the_scan_flag)?;
    if args.explain {
        let text = serde_json::to_string_pretty(&found.explain).map_err(json_error)?;
        writeln!(err, "{text}")?;
    }
    match &found.batch {
        None => {
            let line = serde_json::json!({
                "row_addresses": found.row_addresses,
                "scores": found.scores,
            });
            writeln!(out, "{line}")?;
        }
        Some(batch) => write_json_lines(&with_scores(batch, &found.scores)?, out)?,
    }
    Ok(())
}

/// `batch` with a `_score` column appended.
fn with_scores(batch: &RecordBatch, scores: &[f32]) -> Result<RecordBatch> {
    let mut fields: Vec<Field> = batch.schema().fields().iter().map(|f| f.as_ref().clone()).collect();
    fields.push(Field::new("_score", DataType::Float32, false));
    let mut columns = batch.columns().to_vec();
    columns.push(Arc::new(Float32Array::from(scores.to_vec())));
    RecordBatch::try_new(Arc::new(arrow_schema::Schema::new(fields)), columns)
        .map_err(|e| Error::from(e))
}
