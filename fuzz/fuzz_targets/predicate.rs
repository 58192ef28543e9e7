//! Fuzz target `predicate`: see `fuzz/harness/mod.rs` (`harness::predicate`) for the input layout.
#![no_main]

#[path = "../harness/mod.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::predicate(data));
