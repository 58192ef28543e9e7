//! Test support shared by the lakeseek workspace's members (dev only, `publish = false`; not
//! to be confused with lakeseek's `testing` feature, the client-side I/O wrappers).
//!
//! * [`S3Server`]: a real S3 HTTP server (s3s + s3s-fs, SigV4 checked) on 127.0.0.1, run
//!   in-process on its own thread, so `cargo test` alone is the test command. Seed it with
//!   [`put`](S3Server::put) / [`upload_dir`](S3Server::upload_dir) (S3 PUTs) or
//!   [`copy_in`](S3Server::copy_in) (files copied into the bucket directory); reach it with
//!   [`storage_options`](S3Server::storage_options).
//! * [`ServerFaults`]: server-side faults (503s, slow answers, stalls, resets) and a gate
//!   holding requests, driven by counters, reached through [`S3Server::faults`].
//!
//! * [`FixedFileSystem`]: its storage, s3s-fs answering like S3 where s3s-fs alone does not
//!   (suffix ranges, ranges of empty objects, conditional PUTs, the cost of a LIST); the
//!   benchmark rig (`benches/rig/s3_rig.rs`) serves it too.
//! * [`fixture`] and [`undelta`]: paths under the repository's `tests/fixtures/` and the
//!   row addresses of its recorded answers (`addr_deltas`).
//!
//! ```ignore
//! let s3 = lakeseek_testing::S3Server::start();
//! s3.put("dir/a.bin", vec![1, 2, 3]).await;
//! let url = s3.url("dir/a.bin"); // s3://test-bucket/dir/a.bin
//! s3.faults().fail_next(2);      // the next two requests get 503 SlowDown
//! ```

mod backend;
mod faults;
mod fixtures;
mod server;

pub use backend::FixedFileSystem;
pub use faults::ServerFaults;
pub use fixtures::{fixture, undelta};
pub use server::S3Server;

/// Access key the server accepts (the secret is the same).
pub const ACCESS_KEY: &str = "test";
/// Secret key the server accepts.
pub const SECRET_KEY: &str = "test";
/// Region used for signing.
pub const REGION: &str = "us-east-1";
/// The bucket every server starts with.
pub const BUCKET: &str = "test-bucket";
