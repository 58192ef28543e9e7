//! Fuzz target `decompress`: see `src/fuzzing/decompress.rs` for the input layout.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lakeseek::fuzzing::decompress(data));
