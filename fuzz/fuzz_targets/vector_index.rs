//! Fuzz target `vector_index`: see `src/fuzzing/vector.rs` for the input layout.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lakeseek::fuzzing::vector_index(data));
