//! # lakeseek
//!
//! Read data-lake index and column files — Lance datasets, their scalar indices, Lance
//! files 2.1–2.3 and ecpfs vector indices — straight from object storage (S3, GCS, Azure,
//! HTTP, local disk, memory) with the fewest requests and bytes the formats allow.
//!
//! ## The read-plan idea
//!
//! Every query is a small dependency graph of byte ranges. Pure *planners* look at what is
//! already known (cached metadata, cached page inits and structural plans) and name the next
//! ranges; one fetcher executes them as few, coalesced, concurrent GETs and counts them;
//! pure *decoders* turn the bytes into metadata, plans and Arrow arrays. The number of
//! round trips is the depth of that graph: a cold point lookup on a BTree index is the
//! dataset open, the index lookup and the pages it touches; a warm one is a single wave or
//! none. Every operation can tell you what it cost ([`IoStats`]).
//!
//! ## The jobs, one way each
//!
//! | job | entry point |
//! |---|---|
//! | open a dataset (URL, options, version, session) | [`Dataset::open`], [`Dataset::builder`] |
//! | answer a SQL filter from the indices | [`Dataset::filter`], [`Dataset::query`] |
//! | read rows by row address, any column | [`Dataset::take`] |
//! | read one Lance file by range or row list | [`LanceFile`] |
//! | full-text search (match, phrase, boolean, multi-match, boost, fuzzy) on INVERTED indices, pylance's BM25 | [`Dataset::search`], [`Dataset::search_query`], [`FullTextQuery`] |
//! | k-NN search on an ecpfs index | [`ecp::EcpIndex::builder`], [`ecp::EcpIndex::open`], [`ecp::EcpIndex::query`] |
//! | share caches within a byte budget | [`Session`] |
//! | know what it cost | [`IoStats`] |
//!
//! The examples below run on the bundled sample data ([`sample`]) in an in-memory object
//! store; with a real bucket, pass the `s3://…` URL and storage options instead of
//! `.object_store(…)`.
//!
//! ### Answer a filter from a BTree index, then take the rows
//!
//! ```
//! # #[tokio::main] async fn main() -> lakeseek::Result<()> {
//! use lakeseek::{Dataset, IoStats, Session};
//!
//! let session = Session::default(); // one per process: every dataset shares its caches
//! let stats = IoStats::new();
//! let dataset = Dataset::builder(lakeseek::sample::DATASET_URL)
//!     .object_store(lakeseek::sample::store().await?)
//!     .session(&session)
//!     .stats(&stats)
//!     .open()
//!     .await?;
//! let rows = dataset.filter("key = 'cam06-029417'").await?;
//! let batch = dataset.take(&rows, &["key", "camera"]).await?;
//! assert_eq!(batch.num_rows(), 1);
//! let cost = stats.snapshot(); // open + index lookup + take
//! assert!(cost.requests >= 3);
//! # Ok(()) }
//! ```
//!
//! ### `any_element` on a list of structs, from the list element index
//!
//! ```
//! # #[tokio::main] async fn main() -> lakeseek::Result<()> {
//! # use lakeseek::Dataset;
//! # let dataset = Dataset::builder(lakeseek::sample::DATASET_URL)
//! #     .object_store(lakeseek::sample::store().await?).open().await?;
//! let cars = dataset
//!     .filter("any_element(detections, 'label = ''car'' AND confidence > 0.9')")
//!     .await?;
//! assert!(!cars.is_empty());
//! // Negation and plain predicates combine with AND:
//! let no_car_on_camera_3 = dataset
//!     .query()
//!     .filter("NOT any_element(detections, 'label = ''car''') AND key >= 'cam03' AND key < 'cam04'")
//!     .execute()
//!     .await?;
//! assert!(no_car_on_camera_3.row_addresses.iter().all(|a| !cars.contains(a)));
//! # Ok(()) }
//! ```
//!
//! ### Explain before reading
//!
//! ```
//! # #[tokio::main] async fn main() -> lakeseek::Result<()> {
//! # use lakeseek::Dataset;
//! # let dataset = Dataset::builder(lakeseek::sample::DATASET_URL)
//! #     .object_store(lakeseek::sample::store().await?).open().await?;
//! let plan = dataset.query().filter("key IN ('cam00-000001', 'cam06-029417')").explain().await?;
//! println!("{}", serde_json::to_string_pretty(&plan).unwrap()); // index, pages, byte ranges
//! # Ok(()) }
//! ```
//!
//! ### Random take of a 2.3 sparse nested column; a warm repeat is cheap
//!
//! ```
//! # #[tokio::main] async fn main() -> lakeseek::Result<()> {
//! use lakeseek::{Dataset, IoStats};
//!
//! let dataset = Dataset::builder(lakeseek::sample::DATASET_URL)
//!     .object_store(lakeseek::sample::store().await?)
//!     .open()
//!     .await?;
//! let rows = [130, 3056, 5072, (1 << 32) | 17, 130]; // any order, repeats kept
//! let cold = IoStats::new();
//! let batch = dataset.with_stats(&cold).take(&rows, &["detections"]).await?;
//! assert_eq!(batch.num_rows(), 5);
//! let warm = IoStats::new();
//! dataset.with_stats(&warm).take(&rows, &["detections"]).await?;
//! // Page inits and structural plans are cached: the warm take reads only value chunks.
//! assert!(warm.snapshot().round_trips <= 1);
//! assert!(warm.snapshot().bytes < cold.snapshot().bytes);
//! # Ok(()) }
//! ```
//!
//! ### Read one Lance file
//!
//! ```
//! # #[tokio::main] async fn main() -> lakeseek::Result<()> {
//! use lakeseek::LanceFile;
//!
//! let file = LanceFile::builder(&lakeseek::sample::data_file_url())
//!     .object_store(lakeseek::sample::store().await?)
//!     .open()
//!     .await?;
//! let head = file.read_range(&["key", "camera"], 0..5).await?;
//! assert_eq!(head.num_rows(), 5);
//! assert!(file.num_rows() >= 5);
//! # Ok(()) }
//! ```
//!
//! ### Errors say what you can do
//!
//! ```
//! # #[tokio::main] async fn main() -> lakeseek::Result<()> {
//! # use lakeseek::Dataset;
//! # let dataset = Dataset::builder(lakeseek::sample::DATASET_URL)
//! #     .object_store(lakeseek::sample::store().await?).open().await?;
//! match dataset.take(&[99 << 32], &["key"]).await {
//!     Err(lakeseek::Error::InvalidArgument(why)) => assert!(why.contains("fragment 99")),
//!     other => panic!("expected InvalidArgument, got {other:?}"),
//! }
//! match lakeseek::Dataset::open("memory:///nowhere.lance").await {
//!     Err(lakeseek::Error::NotFound { .. }) => {}
//!     other => panic!("expected NotFound, got {other:?}"),
//! }
//! # Ok(()) }
//! ```
//!
//! ## Cargo features
//!
//! * `cli` (default): the `lakeseek` binary and `lakeseek bench` (clap, indicatif, plotters).
//! * `aws`, `gcp`, `azure`, `http` (default): one per cloud backend; local files and the
//!   in-memory store are always available.
//! * `sample-data` (default): [`sample`], the bundled demo dataset and ecpfs index.
//! * `testing`: `testing`, an object_store HTTP connector that counts requests and bytes
//!   and injects failures, for the tests of code built on lakeseek.
//! * `fuzzing`: entry points for `fuzz/` (not a stable API).
//!
//! A service that only needs the library and S3 depends on
//! `lakeseek = { version = "0.1", default-features = false, features = ["aws"] }`.

// Without `cli`, the inspection/description code (it serves `lakeseek inspect`) and a few
// CLI-only helpers have no caller; the default build checks them for dead code.
#![cfg_attr(not(feature = "cli"), allow(dead_code))]
// Likewise the `pub` items of modules that only `cli` (and `testing`) make public are
// unreachable without those features; the default build checks `unreachable_pub`.
#![cfg_attr(not(feature = "cli"), allow(unreachable_pub))]

mod api;
#[cfg(feature = "args")]
pub mod args;
#[cfg(feature = "cli")]
mod bench;
#[cfg(feature = "cli")]
pub mod cli;
pub mod ecp;
mod error;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
mod index;
mod io;
mod lance;
#[cfg(feature = "sample-data")]
pub mod sample;
mod session;
#[cfg(feature = "testing")]
pub mod testing;

pub use api::{
    evaluate_any_element, DataFileDescription, Dataset, DatasetBuilder, DatasetDescription,
    FieldDescription, FilterExactness, FragmentDescription, FragmentInfo, IndexDescription,
    IndexSegmentDescription, LanceFile, LanceFileBuilder, PlannedFilter, Prewarm, PrewarmReport,
    Query, QueryResult, VectorIndexDescription,
};
pub use api::{BlobHandle, BlobReader, BLOB_READ_CHUNK_BYTES};
pub use api::{ColumnInfo, OpenedStore};
pub use api::{
    ColumnInspection, FieldInspection, FileInspection, PageInspection, PlanInspection,
    PlanLayerSummary,
};
pub use api::{CreatedListElementIndex, EcpIndexBuilder, ListElementIndexBuilder};
pub use api::{FilterExpr, FilterValue};
pub use api::{FullTextQuery, Search, SearchOperator, SearchResult};
pub use api::{Nearest, DISTANCE_COLUMN};
pub use error::{Error, ErrorSource, Result};
pub use io::{IoStats, IoStatsSnapshot};
pub use session::{
    Session, SessionBuilder, CACHE_DIR_ENV, DEFAULT_CACHE_BYTES, DEFAULT_MAX_IN_FLIGHT_BYTES,
    DEFAULT_MAX_REQUESTS, DEFAULT_SESSION_BUDGET,
};

/// The README's code blocks, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

// The test suite lives in `tests/suite/` but is compiled into the library's unit-test binary,
// so it can check internals (planners, decoders, read plans) that are not public API.
// The tests use the `http` crate under its own name (the `http` feature took the name here).
#[cfg(test)]
extern crate http1 as http;
#[cfg(test)]
use repository_tests::suite;
#[cfg(test)]
#[path = "../tests"]
mod repository_tests {
    pub(crate) mod suite;
}
