//! Fuzz target `ecp_node`: see `fuzz/harness/mod.rs` (`harness::ecp_node`) for the input layout.
#![no_main]

#[path = "../harness/mod.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::ecp_node(data));
