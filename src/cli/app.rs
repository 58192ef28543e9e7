//! The command line's subcommands and their dispatch. Each subcommand's flags and output
//! shapes are contracts (see the README).

use std::io::Write;
use std::process::ExitCode;

use crate::cli::ecp as ecp_cli;
use crate::cli::query as index_cli;
use crate::cli::{demo, file_commands, index_create, prewarm};
use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "lakeseek",
    version,
    about = "Read Lance files and indices straight from object storage with the fewest requests",
    after_help = "Long inputs: `--rows-file F` and `--filter-file F` (F = `-` reads stdin) stand for \
                  `--rows` and `--filter` of any command that takes them."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    cache: crate::cli::CacheArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The main job on bundled sample data: index lookups, a sparse take, a vector search,
    /// each with what it cost (no credentials, no network).
    Demo(demo::DemoArgs),
    /// Show a Lance file's version, schema, pages, layouts and compression trees.
    Inspect(file_commands::InspectArgs),
    /// Read rows of a Lance file as JSON lines.
    Read(file_commands::ReadArgs),
    /// Answer a filter on a Lance dataset from its scalar indices (BTree, bitmap, label list,
    /// zone map, bloom filter, NGRAM, list element).
    Query(index_cli::QueryArgs),
    /// Read rows of a Lance dataset by row address (a blob column prints its descriptors:
    /// where each blob is and its size, not its bytes).
    Take(index_cli::TakeArgs),
    /// Write the blobs of a blob column (rows by address) to files, one JSON line per row.
    Blob(crate::cli::blob::BlobArgs),
    /// Load a dataset's index lookups (and pages, and column page inits) into the caches.
    Prewarm(prewarm::PrewarmArgs),
    /// Build and commit indices on a Lance dataset.
    #[command(subcommand)]
    Index(IndexCommand),
    /// ecpfs vector indices.
    #[command(subcommand)]
    Ecp(EcpCommand),
    /// Benchmarks to point at your own bucket: random take, point lookups, blob takes, load.
    #[command(subcommand)]
    Bench(crate::bench::BenchCommand),
    /// SQL over Lance datasets on DataFusion (`sql --table NAME=URL ... "SQL"`; runs the
    /// lakeseek-sql companion binary).
    #[command(disable_help_flag = true)]
    Sql(crate::cli::companion::CompanionArgs),
    /// Serve distributed SQL tasks (`worker --listen HOST:PORT`; runs lakeseek-sql).
    #[command(disable_help_flag = true)]
    Worker(crate::cli::companion::CompanionArgs),
}

#[derive(Debug, Subcommand)]
enum IndexCommand {
    /// Build a list element index and commit it as a new dataset version.
    Create(index_create::IndexCreateArgs),
}

#[derive(Debug, Subcommand)]
enum EcpCommand {
    /// Print an index's settings as JSON.
    Info(ecp_cli::EcpInfoArgs),
    /// k-NN search: one JSON line `{"ids":[...],"scores":[...]}` per page of k.
    Search(ecp_cli::EcpSearchArgs),
}

/// Parse the process arguments, run the command, print errors; the `lakeseek` binary's `main`.
pub fn main() -> ExitCode {
    let args = match crate::cli::arg_files::expand(std::env::args_os().collect()) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let cli = Cli::parse_from(args);
    match &cli.command {
        Command::Sql(args) => return crate::cli::companion::run("sql", args, &cli.cache),
        Command::Worker(args) => return crate::cli::companion::run("worker", args, &cli.cache),
        _ => {}
    }
    match cli.cache.session() {
        Ok(session) => crate::cli::install_process_session(session),
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let result = runtime.block_on(async {
        match &cli.command {
            Command::Demo(args) => demo::run_demo(args, &mut out).await,
            Command::Inspect(args) => file_commands::run_inspect(args, &mut out).await,
            Command::Read(args) => file_commands::run_read(args, &mut out).await,
            Command::Query(args) => {
                index_cli::run_query_to(args, &mut out, &mut std::io::stderr()).await
            }
            Command::Take(args) => {
                index_cli::run_take_to(args, &mut out, &mut std::io::stderr()).await
            }
            Command::Blob(args) => {
                crate::cli::blob::run_blob_to(args, &mut out, &mut std::io::stderr()).await
            }
            Command::Prewarm(args) => prewarm::run_prewarm(args, &mut out).await,
            Command::Index(IndexCommand::Create(args)) => {
                index_create::run_index_create(args, &mut out).await
            }
            Command::Ecp(EcpCommand::Info(args)) => ecp_cli::run_info(args.clone()).await,
            Command::Ecp(EcpCommand::Search(args)) => ecp_cli::run_search(args.clone()).await,
            Command::Bench(crate::bench::BenchCommand::Load(args)) => {
                let flags = crate::cli::process_session();
                crate::bench::load::run_load_bench(args, &flags, &mut out)
                    .await
                    .map(|_| ())
            }
            Command::Bench(command) => crate::bench::run_bench(command, &mut out).await.map(|_| ()),
            Command::Sql(_) | Command::Worker(_) => Ok(()), // ran above
        }
    });
    let flushed = out.flush();
    match (result, flushed) {
        (Ok(()), Ok(())) => ExitCode::SUCCESS,
        (Err(e), _) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
        (_, Err(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        (_, Err(e)) => {
            eprintln!("error: writing output: {e}");
            ExitCode::FAILURE
        }
    }
}
