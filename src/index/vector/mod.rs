//! Lance vector indices (IVF with a flat or HNSW sub-index; quantizers none, PQ, SQ and
//! RaBitQ ([`rq`]); legacy v1 IVF_PQ files ([`legacy`])), v3 files as pylance writes them:
//! the pure decoders ([`format`], [`partition`]), distances as lance computes them
//! ([`distance`]), HNSW graphs and their search ([`hnsw`]), opening a segment and reading
//! its partitions ([`segment`]), pylance's automatic probing ([`probes`]), and the
//! nearest-neighbour query ([`search`]).
//!
//! Not an index kind of the filter engine: a different query, which uses the engine (via
//! [`crate::index::filter`]) only for its filter's allowed rows, computed by the caller.

pub(crate) mod caches;
pub(crate) mod distance;
pub(crate) mod format;
pub(crate) mod hnsw;
pub(crate) mod legacy;
pub(crate) mod partition;
pub(crate) mod pipeline;
pub(crate) mod probes;
pub(crate) mod rq;
pub(crate) mod search;
pub(crate) mod segment;

#[cfg(test)]
mod tests;
