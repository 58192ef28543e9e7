//! Fuzz target `sparse_plan`: see `src/fuzzing/mod.rs` (`lakeseek::fuzzing::sparse_plan`) for the input layout.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lakeseek::fuzzing::sparse_plan(data));
