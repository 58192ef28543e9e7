//! The `lakeseek` command line. Its one public item is [`main`], the `lakeseek` binary's
//! entry point; the commands inside are a client of the library's public API (checked by
//! `scripts/check_layers.py`) and private to the crate — a program that wants what a command
//! does calls the library (`lakeseek::Dataset`, `LanceFile`, `ecp::EcpIndex`, ...), and a
//! command line built on the library shares its flags through [`crate::args`].
//!
//! Output shapes are contracts other tools parse: `read` prints one JSON object per row
//! (arrow-json line-delimited form) on stdout; `--stats` prints
//! `{"requests":..,"bytes":..,"round_trips":..}` on stderr.
#![allow(clippy::future_not_send)] // the commands write to `&mut dyn Write` on the main task; they are never spawned

mod app;
mod arg_files;
pub(crate) mod blob;
mod companion;
pub(crate) mod demo;
pub(crate) mod ecp;
pub(crate) mod file_commands;
pub(crate) mod index_create;
pub(crate) mod inspect_dataset;
pub(crate) mod nearest;
pub(crate) mod prewarm;
pub(crate) mod query;

pub use app::main;

use std::io::Write;

use arrow_array::RecordBatch;

use crate::{IoStatsSnapshot, Result};

pub(crate) use crate::args::{parse_key_value, parse_rows, CacheArgs};

static PROCESS_SESSION: std::sync::OnceLock<crate::Session> = std::sync::OnceLock::new();

/// Make `session` the one every command of this process opens datasets with (the binary's
/// `main` does, from [`CacheArgs`]).
pub(crate) fn install_process_session(session: crate::Session) {
    let _ = PROCESS_SESSION.set(session);
}

/// The process's session, or a new default one when none was installed (commands run
/// in-process by tests get fresh caches each).
pub(crate) fn process_session() -> crate::Session {
    PROCESS_SESSION.get().cloned().unwrap_or_default()
}

/// Flags every command that opens a store takes.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct StoreArgs {
    /// Storage option `key=value` (repeatable), e.g. `aws_endpoint=http://127.0.0.1:4566`,
    /// `allow_http=true`, `max_retries=2`. Environment variables are read as object_store does.
    #[arg(long = "storage-option", value_name = "KEY=VALUE", value_parser = parse_key_value)]
    pub storage_options: Vec<(String, String)>,
    /// Print `{"requests":..,"bytes":..,"round_trips":..}` as JSON on stderr at the end.
    #[arg(long)]
    pub stats: bool,
}

/// Write a batch as line-delimited JSON objects (one per row) with arrow-json.
pub(crate) fn write_json_lines(out: &mut dyn Write, batch: &RecordBatch) -> Result<()> {
    let mut writer = arrow_json::LineDelimitedWriter::new(out);
    writer.write(batch)?;
    writer.finish()?;
    Ok(())
}

/// Print the `--stats` JSON line on stderr.
pub(crate) fn print_stats(stats: &IoStatsSnapshot) {
    match serde_json::to_string(stats) {
        Ok(json) => eprintln!("{json}"),
        Err(e) => eprintln!("{{\"error\":\"cannot serialize stats: {e}\"}}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::RequestedRows;

    #[test]
    fn rows_parse_as_range_or_list() {
        assert_eq!(parse_rows("0..100").unwrap(), RequestedRows::Range(0..100));
        let list = parse_rows("42,3,17,3").unwrap();
        assert_eq!(list, RequestedRows::List(vec![42, 3, 17, 3]));
        assert!(parse_rows("5..2").is_err());
        assert!(parse_rows("a,b").is_err());
        assert!(parse_rows("").is_err());
    }

    #[test]
    fn key_values_need_an_equals_sign() {
        assert_eq!(
            parse_key_value("a=b=c").unwrap(),
            ("a".into(), "b=c".into())
        );
        assert!(parse_key_value("novalue").is_err());
        assert!(parse_key_value("=x").is_err());
    }
}
