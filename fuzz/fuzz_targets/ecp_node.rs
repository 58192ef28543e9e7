//! Fuzz target `ecp_node`: see `src/fuzzing/mod.rs` (`lakeseek::fuzzing::ecp_node`) for the input layout.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lakeseek::fuzzing::ecp_node(data));
