//! Fuzz target `file_metadata`: see `src/fuzzing/mod.rs` (`lakeseek::fuzzing::file_metadata`) for the input layout.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lakeseek::fuzzing::file_metadata(data));
