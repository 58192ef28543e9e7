//! Fuzz target `scalar_index`: see `src/fuzzing/scalar_indices.rs`
//! (`lakeseek::fuzzing::scalar_indices::scalar_index`) for the input layout.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lakeseek::fuzzing::scalar_indices::scalar_index(data));
