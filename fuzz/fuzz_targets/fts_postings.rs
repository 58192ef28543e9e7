//! Fuzz target `fts_postings`: see `src/fuzzing/fts.rs` for the input layout.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lakeseek::fuzzing::fts_postings(data));
