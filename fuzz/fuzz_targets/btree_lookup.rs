//! Fuzz target `btree_lookup`: see `fuzz/harness/mod.rs` (`harness::btree_lookup`) for the input layout.
#![no_main]

#[path = "../harness/mod.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::btree_lookup(data));
