//! lakeseek's test suite, compiled into the library's unit-test binary (`src/lib.rs` includes
//! this file as `mod suite` under `cfg(test)`): it checks planners, decoders and read plans
//! that are crate-internal, and one binary links once (linking ~40 test binaries ran a CI
//! machine out of disk). Run one area with a filter, e.g.
//! `cargo test --lib suite::read_fixtures::`. Tests that start the `lakeseek` binary find it
//! with [`common::lakeseek_bin`]; `tests/cli.rs` (an integration test) makes cargo build it.
//!
//! `io_s3_env` changes process-wide environment variables only in a child process it starts;
//! `proptest_untrusted` installs a global allocator that counts per thread.
#![allow(clippy::future_not_send)] // tests run their futures on the test's own runtime

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
mod blobs;
mod blobs_big;
mod blobs_cost;
mod btree_bench;
mod btree_read_plan;
mod dataset_answers;
mod dataset_bad_input;
mod dataset_cli;
mod dataset_latest;
mod dataset_s3;
mod dataset_take;
mod demo_cli;
mod disk_cache;
mod ecp_bad_input;
mod ecp_cli;
mod ecp_s3;
mod ecp_saved;
mod ecp_search;
mod ecp_search_bench;
mod errors_name_the_object;
mod faults_dataset;
mod faults_ecp;
mod faults_ecp_source;
mod faults_file;
mod faults_http;
mod faults_load;
mod filter_check;
mod filter_cross_column;
mod fts_answers;
mod fts_cost;
mod fts_prune;
mod index_and_scan_agree;
mod inspect_coverage;
mod inspect_dataset;
mod io_gcs;
mod io_local;
mod io_s3;
mod io_s3_env;
mod io_s3_external;
mod lance_test_data;
mod legacy_dataset;
mod legacy_file;
mod legacy_index;
mod list_element_build;
mod list_element_dataset;
mod list_element_fixtures;
mod list_element_key_encoding;
mod list_element_plan_vs_eval;
mod list_element_resolve;
mod load_adaptive;
mod load_admission;
mod load_admission_opens;
mod load_opens_bench;
mod metadata_cache;
mod ngram_filters;
mod old_datasets;
mod old_datasets_inspect;
mod old_datasets_s3;
mod old_datasets_take;
mod old_differential;
mod old_manifests;
mod old_null_keys;
mod proptest_fuzz_replay;
mod proptest_untrusted;
mod read_fixtures;
mod rowids_filters;
mod rowids_search;
mod rowids_take;
mod scalar_indices;
mod security_paths;
mod security_secrets;
mod sparse_read_plan;
mod stress_mixed;
mod stress_rss;
mod v2_0_datasets;
mod v2_0_pages;
mod vector_catalog;
mod vector_cli;
mod vector_cold_layout;
mod vector_cold_trace;
mod vector_hnsw;
mod vector_inspect_bench;
mod vector_s3;
mod vector_warm;
