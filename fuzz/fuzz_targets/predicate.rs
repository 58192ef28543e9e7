//! Fuzz target `predicate`: see `src/fuzzing/mod.rs` (`lakeseek::fuzzing::predicate`) for the input layout.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lakeseek::fuzzing::predicate(data));
