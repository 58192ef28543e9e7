//! `lakeseek demo`: the main job on bundled sample data — no credentials, no network.
//!
//! A Lance 2.2 file written by pylance 14.0.2 (several pages per column, different encodings
//! per page) is embedded in the binary, put into an in-memory object store, then inspected,
//! read cold and read warm, printing the I/O each step cost.

use std::io::Write;
use std::sync::Arc;

use bytes::Bytes;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStoreExt, PutPayload};

use crate::cli::{write_json_lines, RequestedRows};
use crate::error::{Error, Result};
use crate::io::{FetchOptions, IoStats, ObjectStoreSource, RangeFetcher};
use crate::lance::reader::{LanceFileReader, ReaderCaches};

/// The bundled sample: `multipage.lance` from the test fixtures (3000 rows).
pub const SAMPLE_FILE: &[u8] = include_bytes!("../../tests/fixtures/files/v2_2/multipage.lance");

/// Run the demo, writing a short report to `out`.
pub async fn run_demo(out: &mut dyn Write) -> Result<()> {
    let store = Arc::new(InMemory::new());
    let path = Path::from("sample/multipage.lance");
    store
        .put(&path, PutPayload::from(Bytes::from_static(SAMPLE_FILE)))
        .await
        .map_err(|e| Error::Store {
            path: path.to_string(),
            range: None,
            source: std::sync::Arc::new(e),
        })?;
    let source = Arc::new(ObjectStoreSource::new(store, 0, "memory://"));
    let fetcher = RangeFetcher::new(source, FetchOptions::default());
    let caches = Arc::new(ReaderCaches::default());

    let open_stats = IoStats::new();
    let reader = LanceFileReader::open(
        fetcher.clone(),
        path.clone(),
        None,
        Arc::clone(&caches),
        &open_stats,
    )
    .await?;
    let inspection = reader.inspect();
    writeln!(
        out,
        "lakeseek demo — bundled sample memory:///{path}: Lance {}, {} rows, {} columns, {} bytes",
        inspection.version,
        inspection.num_rows,
        inspection.columns.len(),
        inspection.object_size
    )?;
    writeln!(
        out,
        "open (one tail read): {}",
        json(&open_stats.snapshot())
    )?;
    for c in &inspection.columns {
        let layouts: Vec<String> = c
            .pages
            .iter()
            .map(|p| format!("{} {}", p.layout, p.compression))
            .collect();
        writeln!(
            out,
            "  column {} {:<12} {} pages: {}",
            c.index,
            c.field,
            c.pages.len(),
            summarize(&layouts)
        )?;
    }

    let columns: Vec<usize> = (0..reader.schema().fields.len()).collect();
    for (label, rows) in [
        (
            "rows 1000..1003, cold page init",
            RequestedRows::Range(1000..1003),
        ),
        (
            "rows 2999,7,1500 (random take)",
            RequestedRows::List(vec![2999, 7, 1500]),
        ),
        (
            "rows 1000..1003 again, warm",
            RequestedRows::Range(1000..1003),
        ),
    ] {
        let stats = IoStats::new();
        let (selection, order) = rows.to_selection();
        let batch = reader.read_rows(&columns, &selection, &stats).await?;
        let batch = match order {
            Some(order) => crate::cli::file_commands::reorder(&batch, &order)?,
            None => batch,
        };
        writeln!(out, "\nread {label}: {}", json(&stats.snapshot()))?;
        write_json_lines(out, &batch)?;
    }
    writeln!(out, "\nTry: lakeseek inspect <file.lance> | lakeseek read <url> --column C --rows 0..100 --stats")?;
    Ok(())
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|e| format!("<{e}>"))
}

/// "a, a, b" → "2× a; b".
fn summarize(items: &[String]) -> String {
    let mut groups: Vec<(String, usize)> = Vec::new();
    for item in items {
        match groups.last_mut() {
            Some((last, n)) if last == item => *n += 1,
            _ => groups.push((item.clone(), 1)),
        }
    }
    groups
        .into_iter()
        .map(|(s, n)| if n > 1 { format!("{n}× {s}") } else { s })
        .collect::<Vec<_>>()
        .join("; ")
}
