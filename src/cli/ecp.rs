//! `lakeseek ecp info|search` argument structs and runners (wired by `src/bin/lakeseek.rs`).

use crate::cli::parse_key_value;
use crate::ecp::{parse_npy, EcpIndex, OpenOptions, QueryOptions, SearchParams, SearchResult};
use crate::{Error, IoStatsSnapshot, Result};

/// `lakeseek ecp info URL`: print the index settings as JSON.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct EcpInfoArgs {
    /// Index URL (s3://, gs://, az://, http(s)://, file:// or a local path).
    pub url: String,
    /// Object store option `key=value` (repeatable), e.g. `aws_endpoint=http://127.0.0.1:4566`.
    #[arg(long = "storage-option", value_parser = parse_key_value)]
    pub storage_options: Vec<(String, String)>,
    /// Print `{"requests":..,"bytes":..,"round_trips":..}` on stderr.
    #[arg(long)]
    pub stats: bool,
}

/// `lakeseek ecp search URL --query ... -k 10`: print one JSON line per page.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct EcpSearchArgs {
    /// Index URL (s3://, gs://, az://, http(s)://, file:// or a local path).
    pub url: String,
    /// Query vector as comma-separated numbers.
    #[arg(
        long,
        value_delimiter = ',',
        allow_hyphen_values = true,
        conflicts_with = "query_file"
    )]
    pub query: Option<Vec<f32>>,
    /// Query vector from a `.npy` file (float32/float64/float16, shape (d,) or (1, d)).
    #[arg(long)]
    pub query_file: Option<std::path::PathBuf>,
    /// Items per page.
    #[arg(short = 'k', default_value_t = 10)]
    pub k: usize,
    /// Leaves to scan before checking for k items (doubles while fewer are found).
    #[arg(long, default_value_t = 4)]
    pub search_exp: u32,
    /// How many times search_exp may double (-1: unlimited).
    #[arg(long, default_value_t = -1, allow_hyphen_values = true)]
    pub max_increments: i64,
    /// Item ids to exclude, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub exclude: Vec<u32>,
    /// Also print the next N pages of k items.
    #[arg(long, default_value_t = 0)]
    pub next: usize,
    /// Heap entries loaded concurrently (1 disables prefetch).
    #[arg(long, default_value_t = 8)]
    pub prefetch: usize,
    /// Object store option `key=value` (repeatable).
    #[arg(long = "storage-option", value_parser = parse_key_value)]
    pub storage_options: Vec<(String, String)>,
    /// Print `{"requests":..,"bytes":..,"round_trips":..}` on stderr.
    #[arg(long)]
    pub stats: bool,
}

fn print_stats(enabled: bool, stats: IoStatsSnapshot) -> Result<()> {
    if enabled {
        let line =
            serde_json::to_string(&stats).map_err(|e| Error::InvalidArgument(e.to_string()))?;
        eprintln!("{line}");
    }
    Ok(())
}

/// Open the index at `url` with the process's session: its node cache, and its admission
/// control bounding the requests (`--max-requests`).
async fn open_index(
    url: &str,
    storage_options: &[(String, String)],
    options: OpenOptions,
) -> Result<EcpIndex> {
    EcpIndex::builder(url)
        .storage_options(storage_options.iter().cloned())
        .options(options)
        .session(&crate::cli::process_session())
        .open()
        .await
}

/// Run `ecp info`.
pub(crate) async fn run_info(args: EcpInfoArgs) -> Result<()> {
    let index = open_index(&args.url, &args.storage_options, OpenOptions::default()).await?;
    let line =
        serde_json::to_string(index.info()).map_err(|e| Error::InvalidArgument(e.to_string()))?;
    println!("{line}");
    print_stats(args.stats, index.total_stats())
}

fn read_query(args: &EcpSearchArgs) -> Result<Vec<f32>> {
    match (&args.query, &args.query_file) {
        (Some(q), None) => Ok(q.clone()),
        (None, Some(path)) => {
            let bytes = std::fs::read(path)?;
            let mut rows = parse_npy(&bytes)?;
            if rows.len() != 1 {
                return Err(Error::InvalidArgument(format!(
                    "query file holds {} vectors, expected 1",
                    rows.len()
                )));
            }
            Ok(rows.remove(0))
        }
        _ => Err(Error::InvalidArgument(
            "give exactly one of --query and --query-file".into(),
        )),
    }
}

/// The pages `ecp search` prints (first page, then `--next` more) and the I/O it took.
pub(crate) async fn search_pages(
    args: &EcpSearchArgs,
) -> Result<(Vec<SearchResult>, IoStatsSnapshot)> {
    let query = read_query(args)?;
    let options = OpenOptions {
        prefetch: args.prefetch.max(1),
        ..OpenOptions::default()
    };
    let index = open_index(&args.url, &args.storage_options, options).await?;
    let params = SearchParams {
        search_exp: args.search_exp,
        max_increments: args.max_increments,
    };
    let mut q = index.query(
        query,
        QueryOptions {
            params,
            exclude: args.exclude.clone(),
            prefetch: None,
        },
    )?;
    let mut pages = Vec::with_capacity(args.next + 1);
    for _ in 0..=args.next {
        pages.push(q.next_k(args.k).await?);
    }
    Ok((pages, index.total_stats()))
}

/// Run `ecp search`: one JSON line `{"ids":[...],"scores":[...]}` per page.
pub(crate) async fn run_search(args: EcpSearchArgs) -> Result<()> {
    let (pages, stats) = search_pages(&args).await?;
    for page in pages {
        let line =
            serde_json::to_string(&page).map_err(|e| Error::InvalidArgument(e.to_string()))?;
        println!("{line}");
    }
    print_stats(args.stats, stats)
}
