//! `lakeseek index create DATASET --column C --keys K1[,K2...] --name NAME [--page-rows N]`:
//! build a list element index and commit it (library call:
//! [`Dataset::list_element_index`](crate::Dataset::list_element_index)). Prints the
//! committed index as one JSON object on stdout: `{"name", "uuid", "version",
//! "read_version", "entries", "pages", "fragments", "files", "commit_attempts"}`.

use std::io::Write;

use crate::cli::{print_stats, StoreArgs};
use crate::{Dataset, IoStats, ListElementIndexBuilder, Result};

/// Flags of `lakeseek index create`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct IndexCreateArgs {
    /// Dataset URL or local path.
    pub dataset: String,
    /// The `list<struct>` column to index.
    #[arg(long)]
    pub column: String,
    /// Key fields (direct children of the element struct), comma-separated, in key order.
    #[arg(long, value_delimiter = ',', required = true)]
    pub keys: Vec<String>,
    /// Index name (must not exist yet).
    #[arg(long)]
    pub name: String,
    /// Rows per BTree page (lance's default zone size).
    #[arg(long, default_value_t = ListElementIndexBuilder::DEFAULT_PAGE_ROWS)]
    pub page_rows: u32,
    /// Memory the sort may hold before spilling to temporary files, in MiB.
    #[arg(long, default_value_t = ListElementIndexBuilder::DEFAULT_SORT_MEMORY_BYTES >> 20)]
    pub sort_memory_mb: usize,
    /// Storage options and `--stats`.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Run `lakeseek index create`, writing the result to `out`.
pub(crate) async fn run_index_create(args: &IndexCreateArgs, out: &mut dyn Write) -> Result<()> {
    let keys: Vec<&str> = args.keys.iter().map(String::as_str).collect();
    let stats = IoStats::new();
    let dataset = Dataset::builder(&args.dataset)
        .storage_options(args.store.storage_options.iter().cloned())
        .session(&crate::cli::process_session())
        .stats(&stats)
        .open()
        .await?;
    let created = dataset
        .list_element_index(&args.column, &keys, &args.name)
        .page_rows(args.page_rows)
        .sort_memory_bytes(args.sort_memory_mb.max(1) << 20)
        .create()
        .await?;
    serde_json::to_writer(&mut *out, &created).map_err(std::io::Error::other)?;
    writeln!(out)?;
    if args.store.stats {
        print_stats(&stats.snapshot());
    }
    Ok(())
}
