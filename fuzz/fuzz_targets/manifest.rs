//! Fuzz target `manifest`: see `src/fuzzing/mod.rs` (`lakeseek::fuzzing::manifest`) for the input layout.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lakeseek::fuzzing::manifest(data));
