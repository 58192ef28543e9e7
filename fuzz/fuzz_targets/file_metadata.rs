//! Fuzz target `file_metadata`: see `fuzz/harness/mod.rs` (`harness::file_metadata`) for the input layout.
#![no_main]

#[path = "../harness/mod.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::file_metadata(data));
