//! ecpfs (eCP) vector indices: open a Version 1 Zarr store on object storage and search it,
//! fetching only the tree nodes a query visits.
//!
//! ```text
//! EcpIndex::open(url) ──► info/* + index_root/embeddings (one wave of GETs)
//! index.query(q, opts) ──► EcpQuery ──next_k(k)──► best-first over one mixed-level heap
//!                                              └──► node = lvl_{l+1}/node_{id}/{embeddings, ids}
//! ```
//!
//! * `index`: opening, settings, cached node loads.
//! * `search`: the pure search state machine (heap, item buffer, search_exp doubling).
//! * `query`: query handles, next-k pages, exclude, prefetch.
//! * `saved`: saved query state under `queries/Q/`.
//! * `scan`: the exhaustive scan (exact, every leaf).
//! * `zarr_io`, `node`, `metric`: zarr array reads through zarrs, node decoding, scores.
//! * I/O: zarrs reads through `FetcherStorage`,
//!   lakeseek's `RangeFetcher` (retries, version checks, request
//!   accounting into `IoStats`) over any `RangeSource`.
//! * `cli`: `lakeseek ecp info|search`.
//!
//! Request plan: a node visit is one wave of 4 GETs (the two arrays' `zarr.json` and the first
//! chunk of each, fetched together), plus one more wave for leaves spanning several chunks.
//! A missing node costs 2 GETs (both 404). No HEAD, no LIST, no group metadata. A node read
//! again (after a cache eviction) is a range GET that expects the version read the first time.

pub(crate) mod index;
pub(crate) mod metric;
pub(crate) mod node;
pub(crate) mod npy;
pub(crate) mod query;
pub(crate) mod saved;
pub(crate) mod scan;
pub(crate) mod search;
pub(crate) mod zarr_io;
pub(crate) mod zarr_storage;

pub use index::{EcpIndex, EcpStore, IndexInfo, OpenOptions};
pub use metric::Metric;
pub use node::{EmbeddingDtype, Node};
pub use npy::parse_npy;
pub use query::{EcpQuery, QueryOptions, SearchResult};
pub use search::{ScoredItem, SearchParams};
