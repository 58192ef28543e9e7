//! `lakeseek inspect DATASET`: a dataset's versions, fragments, files, indices and schema,
//! through the public [`Dataset::describe`](crate::Dataset::describe).

use std::io::Write;

use crate::cli::{print_stats, StoreArgs};
use crate::{Dataset, DatasetDescription, Error, IoStats, Result, VectorIndexDescription};

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
        if let Some(v) = &i.vector {
            writeln!(out, "    {}", vector_line(v))?;
        }
    }
    Ok(())
}

/// One line about a vector index: type, metric, partitions, quantizer, size.
fn vector_line(v: &VectorIndexDescription) -> String {
    if let Some(e) = &v.error {
        return format!("vector index, {} bytes: not described ({e})", v.size_bytes);
    }
    let mut parts = vec![
        v.index_type.clone().unwrap_or_default(),
        format!("metric {}", v.metric.as_deref().unwrap_or("?")),
        format!("{} partitions", v.partitions.unwrap_or(0)),
        format!("dim {}", v.dim.unwrap_or(0)),
    ];
    match (&v.quantizer, v.sub_vectors, v.bits) {
        (Some(q), Some(m), Some(b)) => parts.push(format!("{q} {m} sub-vectors x {b} bits")),
        (Some(q), None, Some(b)) => parts.push(format!("{q} {b} bits")),
        (Some(q), _, _) => parts.push(q.clone()),
        _ => {}
    }
    parts.push(format!("{} rows", v.rows.unwrap_or(0)));
    parts.push(format!("{} bytes", v.size_bytes));
    parts.join(", ")
}
