//! Fuzz target `filter_extremes`: see `src/fuzzing/inputs.rs` (`lakeseek::fuzzing::filter_extremes`) for the input layout.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lakeseek::fuzzing::filter_extremes(data));
