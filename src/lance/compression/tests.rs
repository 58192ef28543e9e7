//! API-level tests of the compression decoders.
