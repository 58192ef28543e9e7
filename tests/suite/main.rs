//! lakeseek's integration tests, built as one test binary.
//!
//! Each module below was once its own `tests/*.rs` binary. Linking ~40 binaries that each carry
//! the whole dependency tree (arrow, object_store, s3s, zarrs, …) took several GB of disk and
//! made a clean CI machine run out of space; one binary links once. Run one area with a
//! filter, e.g. `cargo test --test suite read_fixtures::`.
//!
//! Two tests stay in their own binaries because they change process-wide state:
//! `tests/io_s3_env.rs` (sets `AWS_*` environment variables) and `tests/proptest_untrusted.rs`
//! (installs a counting global allocator).

// Shared support modules.
mod common;
mod ecp_support;
mod faults_support;
mod read_support;
mod stress_support;

mod bad_input_container;
mod bad_input_pages;
mod bad_input_sparse;
mod bench_cli;
mod btree_bench;
mod btree_read_plan;
mod dataset_answers;
mod dataset_bad_input;
mod dataset_cli;
mod dataset_s3;
mod ecp_bad_input;
mod ecp_cli;
mod ecp_s3;
mod ecp_saved;
mod ecp_search;
mod faults_dataset;
mod faults_ecp;
mod faults_ecp_source;
mod faults_file;
mod faults_http;
mod inspect_coverage;
mod io_gcs;
mod io_local;
mod io_s3;
mod io_s3_external;
mod list_element_dataset;
mod list_element_fixtures;
mod list_element_key_encoding;
mod list_element_plan_vs_eval;
mod list_element_resolve;
mod metadata_cache;
mod proptest_fuzz_replay;
mod read_fixtures;
mod security_paths;
mod security_secrets;
mod sparse_read_plan;
mod stress_mixed;
