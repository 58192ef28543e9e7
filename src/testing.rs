//! Test tooling for code built on lakeseek (feature `testing`): an object_store
//! [`HttpConnector`](object_store::client::HttpConnector) that counts HTTP requests and body
//! bytes per method, tracks requests in flight, adds latency and injects error statuses.
//! Give it to an object_store builder (`with_http_connector`) and the store to
//! [`DatasetBuilder::object_store`](crate::DatasetBuilder::object_store).

pub use crate::io::wrappers::{
    CountingConnector, HttpCounters, HttpCountsSnapshot, HttpRequestRecord,
};
