//! SQL over [`lakeseek`] datasets on Apache DataFusion 54.
//!
//! * [`LakeseekTable`]: a `TableProvider` over a [`lakeseek::Dataset`] that answers filters
//!   from the dataset's indices (pushed down as `Exact` / `Inexact`), pushes projections
//!   and limits down, and can expose each row's address as a `_rowaddr` column.
//! * [`any_element_udf`]: `any_element(list_col, 'predicate')` as a scalar UDF.
//! * [`nearest_function`] and [`search_function`]: the `nearest(..)` and `search(..)` table
//!   functions, a nearest-neighbour or full-text query over a registered table as a table
//!   of its rows (the table's columns, `_rowaddr`, `_distance` / `_score`), joinable with
//!   anything, run on a worker under distributed execution.
//! * [`session_context`]: a session with all of them, single-node or distributed over workers
//!   (`datafusion-distributed` 3.0), and [`serve_worker`], the worker entry point;
//!   [`LakeseekCodec`] ships scans to workers (dataset URL, pinned version, fragments, row
//!   addresses; never credentials).
//!
//! Nearest neighbours and full-text search over the repository's fixtures (the rows and
//! `_distance` pylance 14.0.2 returns for this query):
//!
//! ```
//! # #[tokio::main] async fn main() -> datafusion::common::Result<()> {
//! use std::sync::Arc;
//! use datafusion::arrow::array::{Array, Int64Array};
//! use lakeseek_datafusion::{session_context, LakeseekTable};
//!
//! let manifest_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
//! let fixtures = manifest_dir.join("../tests/fixtures").canonicalize()?;
//! let ctx = session_context(&[])?;
//! for (name, path) in [("t", "vector/datasets/ivf_pq_l2"), ("d", "fts/datasets/default")] {
//!     let path = fixtures.join(path);
//!     let dataset = lakeseek::Dataset::open(path.to_str().expect("a UTF-8 path"))
//!         .await
//!         .map_err(|e| datafusion::common::DataFusionError::External(e.into()))?;
//!     let table = LakeseekTable::new(dataset)?.with_row_address()?;
//!     ctx.register_table(name, Arc::new(table))?;
//! }
//! let nearest = "SELECT id, _distance FROM nearest('t', 'vec', [-2.1519735, 5.083549,
//!     0.5865445, 2.5790617, -1.9659233, -4.8064218, -0.3040556, 0.5321319, -2.3906116,
//!     -3.2077494, -0.39936128, -1.9677507, -0.49427363, 0.056415025, 2.2123194,
//!     0.05841343], 3, 'nprobes=1')";
//! let rows = ctx.sql(nearest).await?.collect().await?;
//! let ids = rows[0].column(0).as_any().downcast_ref::<Int64Array>().unwrap();
//! assert_eq!(ids.values().to_vec(), vec![17, 1019, 997]);
//!
//! let search = "SELECT d.id, s._score FROM search('d', 'body', 'zebra', 2) s
//!     JOIN d ON d._rowaddr = s._rowaddr";
//! let rows = ctx.sql(search).await?.collect().await?;
//! assert_eq!(rows.iter().map(|b| b.num_rows()).sum::<usize>(), 2);
//! # Ok(()) }
//! ```
//!
//! lakeseek reads through its own object store (object_store 0.14); DataFusion's object
//! store registry (object_store 0.13) is not used for lakeseek tables.

// The scan's future nests lakeseek's query, fetch and retry futures deeply enough that
// proving it `Send` takes more than the default 128 steps of trait evaluation.
#![recursion_limit = "256"]

mod codec;
mod distributed;
mod exec;
mod filter;
mod query_exec;
mod table;
mod table_function;
mod udf;
mod worker;
mod worker_errors;

pub use codec::LakeseekCodec;
pub use distributed::session_context;
pub use exec::LakeseekScanExec;
pub use filter::{ROW_ADDRESS_COLUMN, ROW_ID_COLUMN};
pub use query_exec::{LakeseekQueryExec, SCORE_COLUMN};
pub use table::LakeseekTable;
pub use table_function::{nearest_function, search_function, LakeseekTableFunction};
pub use udf::any_element_udf;
pub use worker::{serve_worker, serve_worker_with, DatasetResolver, TaskReport, TaskReporter};
