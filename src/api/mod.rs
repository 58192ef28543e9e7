//! The public facade: [`Dataset`], [`LanceFile`] and the builders and results around them.
//! Each is a thin driver over the crate's planners, fetcher and decoders.

mod dataset;
pub(crate) mod ecp;
mod file;
mod open;
mod prewarm;
mod query;

pub use dataset::{Dataset, DatasetBuilder};
pub use file::{LanceFile, LanceFileBuilder};
pub use prewarm::{Prewarm, PrewarmReport};
pub use query::{Query, QueryResult};
