//! The workspace's in-process S3 server (`lakeseek-testing`: s3s + s3s-fs, SigV4 checked) as
//! this crate's tests use it: fixtures copied into its bucket directory, data-file GETs held
//! at its gate (`faults().close_gate_for_data_gets()`).

pub use lakeseek_testing::S3Server;

/// Storage options reaching `s3`, with one retry (these tests count on no more).
pub fn storage_options(s3: &S3Server) -> Vec<(String, String)> {
    s3.storage_options_with(&[("max_retries", "1")])
}
