//! Full-text search over lance's INVERTED index (issue 34), read as pylance 14.0.2 writes
//! it (and the older single-partition layout of pylance 0.2x):
//!
//! * [`params`]: the tokenizer params an index records and the analyzer they build
//!   (`lance-tokenizer`, the analyzers pylance tokenizes with);
//! * [`posting`], [`tokens`]: pure, validating decoders of posting blocks and token
//!   dictionaries (FST and Arrow);
//! * [`cache`]: the session cache (segments, posting lists, document lengths);
//! * [`files`], [`read`]: opening a segment's files and reading the rows a query needs;
//! * [`live`]: which of an index's hits are live rows;
//! * [`positions`]: pure decoders of token positions (both layouts);
//! * [`prune`], [`topk`]: which scored documents' lengths a top-`k` search reads (bounds
//!   from matched tokens and lance's block max scores), in waves;
//! * [`score`]: lance's BM25; [`search`]: one leaf query (match OR / AND / fuzzy, or a
//!   phrase; `k`, deletions, unindexed fragments scanned); [`phrase`]: position and fuzzy
//!   matching; [`query`]: the query tree (boolean, multi-match, boost) and how scores
//!   combine.

pub(crate) mod cache;
pub(crate) mod files;
pub(crate) mod live;
pub(crate) mod params;
pub(crate) mod phrase;
pub(crate) mod positions;
pub(crate) mod posting;
pub(crate) mod prune;
pub(crate) mod query;
pub(crate) mod read;
pub(crate) mod score;
pub(crate) mod search;
pub(crate) mod tokens;
pub(crate) mod topk;
