//! Fuzz target `sparse_plan`: see `fuzz/harness/mod.rs` (`harness::sparse_plan`) for the input layout.
#![no_main]

#[path = "../harness/mod.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::sparse_plan(data));
