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
