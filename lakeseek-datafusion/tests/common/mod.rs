//! Helpers shared by this crate's tests.
#![allow(unreachable_pub)]
#![allow(dead_code)]

pub mod s3;

/// Undo the delta encoding of the fixtures' answers (`addr_deltas`).
pub use lakeseek_testing::undelta;

use std::path::PathBuf;
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::datasource::MemTable;
use datafusion::prelude::SessionContext;
use lakeseek::Dataset;
use lakeseek_datafusion::{any_element_udf, session_context, LakeseekTable};

/// A dataset fixture of the root crate (`tests/fixtures/datasets/<name>`).
pub fn fixture(name: &str) -> PathBuf {
    lakeseek_testing::fixture("datasets")
        .join(name)
        .canonicalize()
        .expect("fixture exists")
}

/// The bundled sample dataset (`assets/demo/frames.lance`) on disk.
pub fn sample_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../assets/demo/frames.lance")
        .canonicalize()
        .expect("sample exists")
}

pub async fn open_local(name: &str) -> Dataset {
    let path = fixture(name);
    Dataset::open(path.to_str().expect("utf-8 path"))
        .await
        .expect("open fixture")
}

pub async fn open_sample() -> Dataset {
    Dataset::open(sample_dir().to_str().expect("utf-8 path"))
        .await
        .expect("open sample")
}

/// A single-node lakeseek session with `tables` registered (with `_rowaddr`).
pub fn lakeseek_ctx(tables: &[(&str, &Dataset)]) -> SessionContext {
    let ctx = session_context(&[]).expect("session");
    register(&ctx, tables);
    ctx
}

pub fn register(ctx: &SessionContext, tables: &[(&str, &Dataset)]) {
    for (name, dataset) in tables {
        let table = LakeseekTable::new((*dataset).clone())
            .and_then(LakeseekTable::with_row_address)
            .expect("table");
        ctx.register_table(*name, Arc::new(table))
            .expect("register");
    }
}

/// DataFusion's own answers: every row of each table read in full (lakeseek's take of all
/// row addresses) into a `MemTable`, with the `any_element` UDF evaluated row by row.
pub async fn reference_ctx(tables: &[(&str, &Dataset)]) -> SessionContext {
    let ctx = SessionContext::new();
    ctx.register_udf(any_element_udf());
    for (name, dataset) in tables {
        let table = LakeseekTable::new((*dataset).clone())
            .and_then(LakeseekTable::with_row_address)
            .expect("table");
        let schema = datafusion::datasource::TableProvider::schema(&table);
        let columns = dataset.column_names();
        let names: Vec<&str> = columns.iter().map(String::as_str).collect();
        let mut addresses = Vec::new();
        for f in dataset.fragments() {
            addresses.extend((0..f.physical_rows).map(|o| (f.id << 32) | o));
        }
        let batch = dataset
            .take(&addresses, &names)
            .await
            .expect("take all rows");
        let ordered: Vec<_> = schema
            .fields()
            .iter()
            .map(|f| Arc::clone(batch.column_by_name(f.name()).expect("column")))
            .collect();
        let batch = RecordBatch::try_new(Arc::clone(&schema), ordered).expect("batch");
        let mem = MemTable::try_new(schema, vec![vec![batch]]).expect("mem table");
        ctx.register_table(*name, Arc::new(mem)).expect("register");
    }
    ctx
}

/// The result rows of `sql` as JSON lines (sorted unless the order is asked for).
pub async fn rows(ctx: &SessionContext, sql: &str, keep_order: bool) -> Vec<String> {
    try_rows(ctx, sql, keep_order)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

pub async fn try_rows(
    ctx: &SessionContext,
    sql: &str,
    keep_order: bool,
) -> datafusion::common::Result<Vec<String>> {
    let batches = ctx.sql(sql).await?.collect().await?;
    let mut out = Vec::new();
    {
        let mut writer = arrow_json::LineDelimitedWriter::new(&mut out);
        for b in &batches {
            writer.write(b)?;
        }
        writer.finish()?;
    }
    let text = String::from_utf8(out).expect("utf-8 json");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if !keep_order {
        lines.sort();
    }
    Ok(lines)
}
