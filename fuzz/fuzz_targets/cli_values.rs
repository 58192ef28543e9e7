//! Fuzz target `cli_values`: see `src/fuzzing/inputs.rs` (`lakeseek::fuzzing::cli_values`) for the input layout.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lakeseek::fuzzing::cli_values(data));
