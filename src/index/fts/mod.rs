//! Full-text search over lance's INVERTED index (issue 34), read as pylance 14.0.2 writes
//! it (and the older single-partition layout of pylance 0.2x):
//!
//! * [`params`]: the tokenizer params an index records and the analyzer they build
//!   (`lance-tokenizer`, the analyzers pylance tokenizes with);
//! * [`posting`], [`tokens`]: pure, validating decoders of posting blocks and token
//!   dictionaries (FST and Arrow);
//! * [`files`], [`read`]: opening a segment's files and reading the rows a query needs;
//! * [`score`]: lance's BM25; [`search`]: the match query (OR / AND, `k`, deletions,
//!   unindexed fragments scanned).

pub(crate) mod files;
pub(crate) mod params;
pub(crate) mod posting;
pub(crate) mod read;
pub(crate) mod score;
pub(crate) mod search;
pub(crate) mod tokens;
