//! Fuzz target `btree_lookup`: see `src/fuzzing/mod.rs` (`lakeseek::fuzzing::btree_lookup`) for the input layout.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lakeseek::fuzzing::btree_lookup(data));
