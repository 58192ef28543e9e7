//! Command-line argument types shared by every lakeseek command line: the `lakeseek` binary
//! and `lakeseek bench` (feature `cli`) and `lakeseek-sql` of lakeseek-datafusion (feature
//! `args`: clap only). They build library values ([`Session`](crate::Session), storage
//! options, the rows of `--rows`) and nothing else.

use crate::error::{Error, Result};

/// The disk tier flags every command takes (global: before or after the subcommand).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct CacheArgs {
    /// Keep byte ranges of immutable dataset objects (data, index and deletion files,
    /// manifests of a given version) in this directory, shared by later runs and other
    /// processes; default: `$LAKESEEK_CACHE_DIR`, else no disk cache.
    #[arg(long, global = true, value_name = "DIR")]
    pub cache_dir: Option<std::path::PathBuf>,
    /// Byte budget of the disk cache (least recently used entries are removed beyond it);
    /// default 1 GiB.
    #[arg(long, global = true, value_name = "BYTES")]
    pub cache_bytes: Option<u64>,
    /// At most this many requests in flight to each store, shared by everything the
    /// command reads and fair across its queries; more wait their turn (waiting never
    /// counts against a request's timeout). Default 256.
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_requests: Option<u64>,
    /// At most about this many response bytes held at once by each store's reads: every
    /// wave of reads reserves its bytes before its first request and keeps them until its
    /// last response is in; more waves wait their turn. Default 268435456 (256 MiB).
    #[arg(long, global = true, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_in_flight_bytes: Option<u64>,
}

impl CacheArgs {
    /// The session these flags (and `LAKESEEK_CACHE_DIR`) ask for.
    pub fn session(&self) -> Result<crate::Session> {
        let mut builder = crate::Session::builder()
            .disk_cache_from(self.cache_dir.clone(), self.cache_bytes)
            .map_err(|e| match e {
                // Its one refusal: a size without a directory, said in terms of the flags.
                Error::InvalidArgument(_) => Error::InvalidArgument(format!(
                    "--cache-bytes needs --cache-dir (or {})",
                    crate::CACHE_DIR_ENV
                )),
                other => other,
            })?;
        if let Some(n) = self.max_requests {
            builder = builder.max_requests(n as usize);
        }
        if let Some(bytes) = self.max_in_flight_bytes {
            builder = builder.max_in_flight_bytes(bytes);
        }
        builder.build()
    }
}

/// Parse `key=value`.
pub fn parse_key_value(s: &str) -> std::result::Result<(String, String), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("expected KEY=VALUE, got {s:?}"))?;
    if k.is_empty() {
        return Err(format!("empty key in {s:?}"));
    }
    Ok((k.to_string(), v.to_string()))
}

/// Parse `--rows`: `a..b` (half-open range) or a comma-separated list `3,17,42`.
/// A list is returned in the order given; see [`RequestedRows`].
pub fn parse_rows(s: &str) -> Result<RequestedRows> {
    let bad = |why: &str| Error::InvalidArgument(format!("bad --rows {s:?}: {why}"));
    let s = s.trim();
    if let Some((a, b)) = s.split_once("..") {
        let a: u64 = a
            .trim()
            .parse()
            .map_err(|_| bad("range start is not a number"))?;
        let b: u64 = b
            .trim()
            .parse()
            .map_err(|_| bad("range end is not a number"))?;
        if a > b {
            return Err(bad("range start is after its end"));
        }
        return Ok(RequestedRows::Range(a..b));
    }
    let rows = s
        .split(',')
        .map(|p| {
            p.trim()
                .parse::<u64>()
                .map_err(|_| bad("expected a..b or a list like 3,17,42"))
        })
        .collect::<Result<Vec<u64>>>()?;
    Ok(RequestedRows::List(rows))
}

/// Rows as the user asked for them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestedRows {
    /// A half-open range.
    Range(std::ops::Range<u64>),
    /// A list in the user's order (duplicates allowed).
    List(Vec<u64>),
}
