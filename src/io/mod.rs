//! The I/O layer: the only code in lakeseek that touches `object_store`.
//!
//! * [`store`] turns a URL (and storage options, and optionally an HTTP connector) into an
//!   object store handle.
//! * [`source`] is the narrow I/O trait ([`RangeSource`]) the rest of the crate reads through.
//! * [`fetch`] plans and executes many byte ranges as few coalesced, concurrent requests.
//! * [`stats`] counts requests, bytes and round trips per query.
//! * [`cache`] holds typed, size-weighted moka caches of decoded things.
//! * [`wrappers`] adds latency, recording and HTTP-level counting around the above, for tests
//!   and benches.

pub mod cache;
pub mod fetch;
pub mod source;
pub mod stats;
pub mod store;
pub mod wrappers;

pub use cache::{CacheKey, DeepSize, SizedCache};
pub use fetch::{
    check_range, clamp_range, merge_ranges, plan_fetch, FetchOptions, PlannedRead, RangeFetcher, ReadRequest, Tail,
};
pub use source::{ObjectStoreSource, ObjectVersion, RangeSource};
pub use stats::{IoStats, IoStatsSnapshot};
pub use store::{open_url, open_url_with, OpenOptions, OpenedUrl};
pub use wrappers::{CountingConnector, LatencySource, RecordingSource};
