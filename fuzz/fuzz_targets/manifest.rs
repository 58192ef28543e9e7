//! Fuzz target `manifest`: see `fuzz/harness/mod.rs` (`harness::manifest`) for the input layout.
#![no_main]

#[path = "../harness/mod.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::manifest(data));
