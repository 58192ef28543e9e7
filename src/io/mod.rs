//! The I/O layer: the only code in lakeseek that touches `object_store`.
//!
//! * [`store`] turns a URL into an object store handle.
//! * [`source`] is the narrow I/O trait ([`RangeSource`]) the rest of the crate reads through.
//! * [`fetch`] plans and executes many byte ranges as few coalesced, concurrent requests.
//! * [`stats`] counts requests, bytes and round trips per query.
//! * [`cache`] holds typed, size-weighted moka caches of decoded things.

pub mod cache;
pub mod fetch;
pub mod list;
pub mod source;
pub mod stats;
pub mod store;

pub use fetch::{merge_ranges, FetchOptions, RangeFetcher, ReadRequest, Tail};
pub use source::{ObjectStoreSource, ObjectVersion, RangeSource};
pub use stats::{IoStats, IoStatsSnapshot};
pub use store::{open_url, OpenedUrl};
