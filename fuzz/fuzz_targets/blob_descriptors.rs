//! Fuzz target `blob_descriptors`: see `src/fuzzing/blob.rs` for the input layout.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lakeseek::fuzzing::blob_descriptors(data));
