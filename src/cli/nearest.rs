//! `lakeseek query DATASET --nearest COL --vector=0.1,-0.2,... | --vector-file q.npy -k K
//! [--nprobes N] [--refine R] [--ef E] [--filter F] [--postfilter] [--fast-search]
//! [--columns a,b] [--explain] [--stats]`: the nearest rows to a query vector through the
//! column's vector index, printed as `{"row_addresses":[...],"distances":[...]}` nearest
//! first, or with `--columns` one JSON object per row (`_rowaddr`, `_distance`, the columns).

use std::io::Write;

use crate::ecp::parse_npy;
use crate::{Dataset, Error, Result};

/// The nearest-neighbour flags of `lakeseek query`.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct NearestArgs {
    /// Find the rows nearest to a query vector in this vector column (its vector index:
    /// IVF_FLAT, IVF_PQ, IVF_SQ) instead of filtering.
    #[arg(long, value_name = "COLUMN")]
    pub nearest: Option<String>,
    /// The query vector, comma-separated: `--vector=0.1,-0.2,...` or `--vector -0.5,0.1`.
    #[arg(
        long,
        allow_hyphen_values = true,
        conflicts_with = "vector_file",
        requires = "nearest"
    )]
    pub vector: Option<String>,
    /// The query vector from a `.npy` file (float32/float64/float16, shape (d,) or (1, d)).
    #[arg(long, requires = "nearest")]
    pub vector_file: Option<std::path::PathBuf>,
    /// Rows to return: with `--nearest` the K nearest (default 10), with `--search` the K
    /// best (default: every match).
    #[arg(short = 'k', long = "k")]
    pub k: Option<usize>,
    /// IVF partitions to probe per index segment (default 20).
    #[arg(long, requires = "nearest")]
    pub nprobes: Option<usize>,
    /// Re-rank k * R candidates with exact distances read from the data.
    #[arg(long, requires = "nearest")]
    pub refine: Option<u32>,
    /// HNSW indices: candidates each probed partition's graph search keeps (at least
    /// k × refine; default 1.5 × k × refine, as pylance). Other kinds ignore it.
    #[arg(long, requires = "nearest")]
    pub ef: Option<u32>,
    /// Apply --filter to the search's candidates instead of before the search.
    #[arg(long, requires = "nearest")]
    pub postfilter: bool,
    /// Search only the rows the index covers (no exact search of unindexed fragments).
    #[arg(long, requires = "nearest")]
    pub fast_search: bool,
}

/// The query vector of the flags: `--vector` text or a `.npy` file.
pub(crate) fn query_vector(args: &NearestArgs) -> Result<Vec<f32>> {
    match (&args.vector, &args.vector_file) {
        (Some(text), None) => parse_vector(text),
        (None, Some(path)) => {
            let bytes = std::fs::read(path)?;
            let mut rows = parse_npy(&bytes)?;
            if rows.len() != 1 {
                return Err(Error::InvalidArgument(format!(
                    "{} holds {} vectors, 1 expected",
                    path.display(),
                    rows.len()
                )));
            }
            Ok(rows.remove(0))
        }
        _ => Err(Error::InvalidArgument(
            "--nearest needs the query vector: --vector or --vector-file".into(),
        )),
    }
}

/// Parse `0.1,-0.2,...` (finite numbers only).
pub(crate) fn parse_vector(text: &str) -> Result<Vec<f32>> {
    text.split(',')
        .map(|s| {
            let v: f32 = s
                .trim()
                .parse()
                .map_err(|_| Error::InvalidArgument(format!("--vector: {s:?} is not a number")))?;
            if v.is_finite() {
                Ok(v)
            } else {
                Err(Error::InvalidArgument(format!(
                    "--vector: {s:?} is not finite"
                )))
            }
        })
        .collect()
}

/// Run the nearest query and print its answer.
#[allow(clippy::too_many_arguments)] // the query command's flags, passed through
pub(crate) async fn run_nearest(
    dataset: &Dataset,
    args: &NearestArgs,
    column: &str,
    filter: Option<&str>,
    columns: &[String],
    explain: bool,
    allow_scan: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<()> {
    let vector = query_vector(args)?;
    let names: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut query = dataset
        .nearest(column, &vector)
        .k(args.k.unwrap_or(10))
        .columns(&names)
        .postfilter(args.postfilter)
        .fast_search(args.fast_search)
        .allow_scan(allow_scan);
    if let Some(n) = args.nprobes {
        query = query.nprobes(n);
    }
    if let Some(r) = args.refine {
        query = query.refine(r);
    }
    if let Some(ef) = args.ef {
        query = query.ef(ef);
    }
    if let Some(f) = filter {
        query = query.filter(f);
    }
    if explain {
        let plan = query.explain().await?;
        let text = serde_json::to_string_pretty(&plan)
            .map_err(|e| Error::InvalidArgument(format!("JSON output: {e}")))?;
        writeln!(err, "{text}")?;
    }
    let batch = query.execute().await?;
    if columns.is_empty() {
        use arrow_array::cast::AsArray;
        use arrow_array::types::{Float32Type, UInt64Type};
        let rows = batch
            .column(0)
            .as_primitive::<UInt64Type>()
            .values()
            .to_vec();
        let distances = batch
            .column(1)
            .as_primitive::<Float32Type>()
            .values()
            .to_vec();
        let line = serde_json::json!({ "row_addresses": rows, "distances": distances });
        writeln!(out, "{line}")?;
    } else {
        let mut writer = arrow_json::LineDelimitedWriter::new(out);
        writer.write_batches(&[&batch])?;
        writer.finish()?;
    }
    Ok(())
}
