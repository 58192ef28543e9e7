//! The I/O layer: the only code in lakeseek that touches `object_store`.
//!
//! * [`store`] turns a URL (and storage options, and optionally an HTTP connector) into an
//!   object store handle.
//! * [`source`] is the narrow I/O trait ([`RangeSource`]) the rest of the crate reads through.
//! * [`fetch`] plans and executes many byte ranges as few coalesced, concurrent requests.
//! * [`coalesce`] decides which ranges share a GET (gap bounded by wasted bytes); [`hedge`]
//!   decides when a slow GET is duplicated.
//! * [`stats`] counts requests, bytes and round trips per query.
//! * [`cache`] holds typed, size-weighted moka caches of decoded things; [`disk`] keeps raw
//!   byte ranges of immutable objects in a local directory shared by processes.
//! * [`retry`] decides which read failures are transient and retries them within a budget.
//! * `write` writes objects: put, put-if-absent (the commit primitive), file uploads.
//! * [`wrappers`] adds latency, recording, fault injection and HTTP-level counting around the
//!   above, for tests and benches.
//!
//! ```text
//! (crate-internal; the same sequence runs as the unit test `fetch::tests::tail_then_one_merged_wave`)
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use lakeseek::io::{open_url, FetchOptions, IoStats, RangeFetcher, ReadRequest};
//! use object_store::{ObjectStoreExt, PutPayload};
//!
//! let opened = open_url("memory:///data/file.bin", &[])?;
//! opened.store.put(&opened.path, PutPayload::from(vec![7u8; 1000])).await?;
//! let fetcher = RangeFetcher::new(opened.source.clone(), FetchOptions::default());
//! let stats = IoStats::new();
//! // One suffix request gives the tail and the object size (no HEAD).
//! let tail = fetcher.tail(&opened.path, 100, &stats).await?;
//! assert_eq!((tail.version.size, tail.start()), (1000, 900));
//! // Many ranges, one wave: merged, fetched concurrently, sliced back in order.
//! let size = tail.version.size;
//! let parts = fetcher
//!     .fetch(
//!         &[ReadRequest::sized(opened.path.clone(), 0..10, size), ReadRequest::sized(opened.path.clone(), 10..20, size)],
//!         &stats,
//!     )
//!     .await?;
//! assert_eq!(parts[1].len(), 10);
//! let s = stats.snapshot();
//! assert_eq!((s.requests, s.round_trips), (2, 2)); // 1 tail + 1 merged GET, 2 waves
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

pub(crate) mod adaptive_limit;
pub(crate) mod admission;
pub(crate) mod budget;
pub(crate) mod cache;
pub(crate) mod cache_extensions;
pub(crate) mod coalesce;
pub(crate) mod disk;
pub(crate) mod fair_queue;
pub(crate) mod fetch;
pub(crate) mod hedge;
pub(crate) mod list;
pub(crate) mod retry;
pub(crate) mod retry_budget;
pub(crate) mod source;
pub(crate) mod stats;
pub(crate) mod store;
pub(crate) mod wrappers;
pub(crate) mod write;

#[cfg_attr(not(test), allow(unused_imports))] // used by the tests
pub(crate) use fetch::{FetchOptions, RangeFetcher, ReadRequest};
#[cfg_attr(not(test), allow(unused_imports))] // used by the tests
pub(crate) use retry::{should_retry, RetryPolicy};
#[cfg_attr(not(test), allow(unused_imports))] // used by the tests
pub(crate) use source::{is_object_changed, ObjectStoreSource, ObjectVersion, RangeSource};
pub use stats::{IoStats, IoStatsSnapshot};
pub(crate) use store::{open_url, open_url_with, OpenOptions, OpenedUrl};
#[cfg(test)]
pub(crate) use wrappers::LatencySource;
#[cfg(test)]
pub(crate) use wrappers::{FaultConfig, FaultCounts, FaultKind, FaultSource, RecordingSource};
