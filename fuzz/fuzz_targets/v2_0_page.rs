//! Fuzz target `v2_0_page`: see `src/fuzzing/v2_0.rs` (`lakeseek::fuzzing::v2_0_page`) for the input layout.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lakeseek::fuzzing::v2_0_page(data));
