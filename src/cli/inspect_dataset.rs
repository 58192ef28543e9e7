//! `lakeseek inspect DATASET`: a dataset's versions, fragments, files, indices and schema,
//! through the public [`Dataset::describe`](crate::Dataset::describe).

use std::io::Write;

use crate::cli::{print_stats, StoreArgs};
use crate::{Dataset, DatasetDescription, Error, IoStats, Result};

/// Describe the dataset at `url` (latest version) as JSON or text.
pub(crate) async fn run_inspect_dataset(
    url: &str,
    store: &StoreArgs,
    json: bool,
    out: &mut dyn Write,
) -> Result<()> {
    let stats = IoStats::new();
    let dataset = Dataset::builder(url)
        .storage_options(store.storage_options.iter().cloned())
        .session(&crate::cli::process_session())
        .stats(&stats)
        .open()
        .await?;
    let description = dataset.describe().await?;
    if json {
        serde_json::to_writer_pretty(&mut *out, &description)
            .map_err(|e| Error::from(std::io::Error::other(e)))?;
        writeln!(out)?;
    } else {
        write_description_text(out, &description)?;
    }
    if store.stats {
        print_stats(&stats.snapshot());
    }
    Ok(())
}

fn write_description_text(out: &mut dyn Write, d: &DatasetDescription) -> Result<()> {
    let when = d.timestamp.as_deref().unwrap_or("time not recorded");
    let writer = d.writer.as_deref().unwrap_or("writer not recorded");
    writeln!(
        out,
        "dataset version {} ({when}, {writer})  storage {}  {} rows in {} fragments",
        d.version,
        d.storage_version,
        d.num_rows,
        d.fragments.len()
    )?;
    writeln!(out, "schema:")?;
    for f in &d.schema {
        let null = if f.nullable { "" } else { " not null" };
        writeln!(out, "  [{}] {}: {}{null}", f.id, f.path, f.logical_type)?;
    }
    writeln!(out, "fragments:")?;
    for f in &d.fragments {
        writeln!(
            out,
            "  {}: {} rows, {} deleted",
            f.id, f.physical_rows, f.deleted_rows
        )?;
        for file in &f.files {
            writeln!(
                out,
                "    data/{}  Lance {}  fields {:?}",
                file.path, file.file_version, file.fields
            )?;
        }
    }
    writeln!(out, "indices:")?;
    for i in &d.indices {
        let inferred = if i.kind_inferred { " (inferred)" } else { "" };
        writeln!(
            out,
            "  {}: {}{inferred} on {}  {} segment(s), fragments {:?}",
            i.name,
            i.kind,
            i.columns.join(", "),
            i.segments.len(),
            i.fragments
        )?;
        if let Some(fts) = &i.full_text {
            writeln!(out, "    full text: {fts}")?;
        }
    }
    Ok(())
}
