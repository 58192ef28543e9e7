//! # lakeseek
//!
//! Read data-lake index and column files — Lance files, Lance BTree indices, ecpfs vector
//! indices — straight from object storage (S3, GCS, Azure, HTTP, local disk) with the fewest
//! requests and bytes the formats allow.
//!
//! Every query is a small dependency graph of byte ranges: pure *planners* decide which
//! ranges are needed, the [`io::RangeFetcher`] executes them as few coalesced, concurrent
//! requests, and pure *decoders* turn bytes into metadata, plans and Arrow arrays.
//! See `README.md` and `docs/architecture.md` for the picture.
#![warn(missing_docs)]

pub mod bench;
pub mod cli;
pub mod ecp;
pub mod error;
pub mod index;
pub mod io;
pub mod lance;

pub use error::{Error, Result};
