//! Fuzz target `legacy_file`: see `src/fuzzing/legacy.rs` (`lakeseek::fuzzing::legacy_file`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lakeseek::fuzzing::legacy_file(data));
