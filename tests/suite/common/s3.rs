//! [`S3TestServer`]: the workspace's in-process S3 server (`lakeseek_testing::S3Server`: s3s +
//! s3s-fs, SigV4 checked, with its fault wrappers) plus what only this suite can add, the
//! stores opened through lakeseek's counting connector.

use std::ops::Deref;
use std::sync::Arc;

use crate::io::wrappers::{CountingConnector, HttpCountsSnapshot};
use crate::io::{open_url_with, OpenOptions, OpenedUrl};
use lakeseek_testing::S3Server;

pub(crate) use lakeseek_testing::{ACCESS_KEY, BUCKET, REGION, SECRET_KEY};

/// The latency every request of an [`S3TestServer`] store gets (see `counted`).
const DEFAULT_LATENCY: std::time::Duration = std::time::Duration::from_millis(5);

/// An S3 server for one test. Dropping it stops the server and deletes its data.
/// The server's own methods (`put`, `upload_dir`, `storage_options`, `faults`, ...) are
/// reached through `Deref`.
///
/// ```ignore
/// mod common;
/// let s3 = common::S3TestServer::start().await;
/// s3.put("dir/a.bin", vec![1, 2, 3]).await;
/// let opened = s3.open("dir/a.bin");          // counted through s3.counting()
/// let before = s3.http_counts();
/// // ... read through opened.source / a RangeFetcher ...
/// assert_eq!(s3.http_counts().since(&before).gets, 1);
/// ```
pub(crate) struct S3TestServer {
    server: S3Server,
    counting: CountingConnector,
}

impl Deref for S3TestServer {
    type Target = S3Server;

    fn deref(&self) -> &S3Server {
        &self.server
    }
}

impl S3TestServer {
    /// Start a server on 127.0.0.1 (random port) with bucket [`BUCKET`] created.
    /// Panics when it cannot (test support).
    pub(crate) async fn start() -> Self {
        Self::counted(S3Server::start())
    }

    /// Like [`start`](Self::start) but accepting unsigned requests too (anonymous reads),
    /// e.g. for plain `http://` URL reads of `ENDPOINT/test-bucket/key`.
    pub(crate) async fn start_public() -> Self {
        Self::counted(S3Server::start_public())
    }

    fn counted(server: S3Server) -> Self {
        let counting = CountingConnector::new();
        // Every request takes a few milliseconds, as on a network: requests a reader sends
        // together then overlap (and count as one round trip) even when a busy machine runs
        // the branches that send them late; on a bare local server the first could be
        // answered before the second is sent. Tests that need more set their own.
        counting.set_latency(DEFAULT_LATENCY);
        Self { server, counting }
    }

    /// Open `s3://test-bucket/<key>` through the counting connector.
    pub(crate) fn open(&self, key: &str) -> OpenedUrl {
        self.open_with(key, &[])
    }

    /// Like [`open`](Self::open) with extra storage options appended (later keys win).
    pub(crate) fn open_with(&self, key: &str, extra: &[(&str, &str)]) -> OpenedUrl {
        let mut options = self.storage_options();
        options.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let opts = OpenOptions::new(&options).with_http_connector(Arc::new(self.counting.clone()));
        open_url_with(&self.url(key), &opts).expect("open test S3 URL")
    }

    /// The HTTP-layer counter shared by every store [`open`](Self::open) made (not by
    /// seeding): set latency or inject client-side faults here.
    pub(crate) fn counting(&self) -> &CountingConnector {
        &self.counting
    }

    /// Shortcut for `counting().snapshot()`.
    pub(crate) fn http_counts(&self) -> HttpCountsSnapshot {
        self.counting.snapshot()
    }
}
