//! `lakeseek blob DS --column img --rows A,B,... --out DIR [--stats]`: write each non-null
//! blob of a blob column to `DIR/<row address>` and print one JSON line per row,
//! `{"_rowaddr":A,"size":N,"path":"DIR/A"}` (`"size":null` and no file for a null blob).
//! Small blobs are read together (the fetcher merges close ranges), large ones in bounded
//! ranges, so memory stays bounded whatever the blobs' sizes.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cli::parse_key_value;
use crate::{BlobHandle, Dataset, Error, IoStats, Result, BLOB_READ_CHUNK_BYTES};

/// Blobs read together hold at most about this many bytes at once.
const GROUP_BYTES: u64 = 64 << 20;

/// `lakeseek blob`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct BlobArgs {
    /// Dataset URL.
    pub dataset: String,
    /// The blob column.
    #[arg(long)]
    pub column: String,
    /// Row addresses (fragment << 32 | offset), comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    pub rows: Vec<u64>,
    /// Directory to write the blobs to (created if missing), one file per row address.
    #[arg(long)]
    pub out: PathBuf,
    /// Dataset version (default: latest).
    #[arg(long)]
    pub version: Option<u64>,
    /// Print `{"requests":..,"bytes":..,"round_trips":..}` on stderr.
    #[arg(long)]
    pub stats: bool,
    /// Object store option `key=value` (repeatable).
    #[arg(long = "storage-option", value_parser = parse_key_value)]
    pub storage_options: Vec<(String, String)>,
}

/// Run `lakeseek blob`, writing JSON lines to `out` and stats to `err`.
pub(crate) async fn run_blob_to(
    args: &BlobArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<()> {
    let stats = IoStats::new();
    let result = blob_inner(args, &stats, out).await;
    if args.stats {
        let line = serde_json::to_string(&stats.snapshot())
            .map_err(|e| Error::InvalidArgument(format!("JSON output: {e}")))?;
        writeln!(err, "{line}")?;
    }
    result
}

async fn blob_inner(args: &BlobArgs, stats: &IoStats, out: &mut dyn Write) -> Result<()> {
    let session = crate::cli::process_session();
    let mut builder = Dataset::builder(&args.dataset)
        .storage_options(args.storage_options.iter().cloned())
        .session(&session)
        .stats(stats);
    if let Some(version) = args.version {
        builder = builder.version(version);
    }
    let dataset = builder.open().await?;
    let handles = dataset.take_blobs(&args.column, &args.rows).await?;
    std::fs::create_dir_all(&args.out)?;
    write_small_blobs(&args.rows, &handles, &args.out).await?;
    for (address, handle) in args.rows.iter().zip(&handles) {
        if let Some(h) = handle.as_ref().filter(|h| h.size() > BLOB_READ_CHUNK_BYTES) {
            stream_to_file(h, &args.out.join(address.to_string())).await?;
        }
    }
    for (address, handle) in args.rows.iter().zip(&handles) {
        let line = match handle {
            Some(h) => serde_json::json!({
                "_rowaddr": address,
                "size": h.size(),
                "path": args.out.join(address.to_string()).display().to_string(),
            }),
            None => serde_json::json!({ "_rowaddr": address, "size": null }),
        };
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// The blobs of at most [`BLOB_READ_CHUNK_BYTES`], read in groups of about
/// [`GROUP_BYTES`] (one wave each), written to their files.
async fn write_small_blobs(rows: &[u64], handles: &[Option<BlobHandle>], dir: &Path) -> Result<()> {
    let small: Vec<(u64, &BlobHandle)> = rows
        .iter()
        .zip(handles)
        .filter_map(|(a, h)| h.as_ref().map(|h| (*a, h)))
        .filter(|(_, h)| h.size() <= BLOB_READ_CHUNK_BYTES)
        .collect();
    let mut start = 0;
    while start < small.len() {
        let mut end = start;
        let mut bytes = 0;
        while end < small.len() && (end == start || bytes + small[end].1.size() <= GROUP_BYTES) {
            bytes += small[end].1.size();
            end += 1;
        }
        let group: Vec<&BlobHandle> = small[start..end].iter().map(|(_, h)| *h).collect();
        let data = BlobHandle::read_all_of(&group).await?;
        for ((address, _), bytes) in small[start..end].iter().zip(data) {
            std::fs::write(dir.join(address.to_string()), &bytes)?;
        }
        start = end;
    }
    Ok(())
}

/// A large blob written range by range (one [`BLOB_READ_CHUNK_BYTES`] range held at a time).
async fn stream_to_file(handle: &BlobHandle, path: &Path) -> Result<()> {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut at = 0;
    while at < handle.size() {
        let end = handle.size().min(at + BLOB_READ_CHUNK_BYTES);
        file.write_all(&handle.read_range(at..end).await?)?;
        at = end;
    }
    file.flush()?;
    Ok(())
}
