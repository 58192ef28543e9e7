//! Fuzz target `row_id_sequence`: see `src/fuzzing/rowids.rs` (`lakeseek::fuzzing::row_id_sequence`) for the input layout.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lakeseek::fuzzing::row_id_sequence(data));
