//! Row counts of fragments whose manifest records none: manifests written by the earliest
//! pylance releases (0.6.5 here) leave `DataFragment.physical_rows` unset (0), and lance
//! reads the count from the fragment's first data file. So does lakeseek, once per manifest
//! (the result is cached with it): one metadata read per such fragment, all in one
//! concurrent wave, through the session's file caches (a later take or filter on the
//! fragment opens the file without another request). A manifest that records every count
//! costs nothing here.

use std::sync::Arc;

use futures::future::try_join_all;
use object_store::path::Path;

use super::files::legacy_hint;
use super::manifest::{Fragment, Manifest};
use super::{join, DatasetSession, DatasetStore};
use crate::error::{Error, Result};
use crate::io::IoStats;
use crate::lance::data_file::DataFileReader;

/// Whether the manifest entry of `fragment` records no row count although it has data
/// (lance writes `physical_rows` for every fragment it has written since 0.7 or so).
pub(crate) fn lacks_row_count(fragment: &Fragment) -> bool {
    fragment.physical_rows == 0 && !fragment.files.is_empty()
}

/// Give every fragment of `manifest` without a recorded row count the row count of its
/// first data file (read concurrently, one metadata read per fragment).
pub(crate) async fn fill_missing_physical_rows(
    manifest: &mut Manifest,
    store: &DatasetStore,
    session: &DatasetSession,
    root: &Path,
    stats: &IoStats,
) -> Result<()> {
    let missing: Vec<usize> = (0..manifest.fragments.len())
        .filter(|&i| lacks_row_count(&manifest.fragments[i]))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let schema = &manifest.schema;
    let counts = try_join_all(missing.iter().map(|&i| {
        let fragment = &manifest.fragments[i];
        let file = &fragment.files[0];
        let path = join(root, &format!("data/{}", file.path));
        let hint = legacy_hint(schema, file);
        let id = fragment.id;
        async move {
            let reader = DataFileReader::open(
                store.fetcher.clone(),
                path,
                file.size_bytes,
                Arc::clone(&session.reader_caches),
                hint,
                stats,
            )
            .await
            .map_err(|e| e.context(format!("row count of fragment {id} (not in the manifest)")))?;
            checked_rows(id, &reader)
        }
    }))
    .await?;
    for (i, rows) in missing.into_iter().zip(counts) {
        manifest.fragments[i].physical_rows = rows;
    }
    Ok(())
}

/// The row count of `reader` as the rows of fragment `id` (row addresses hold 32-bit
/// offsets).
fn checked_rows(id: u64, reader: &DataFileReader) -> Result<u64> {
    let rows = reader.num_rows();
    if rows > u64::from(u32::MAX) + 1 {
        return Err(Error::corrupt(format!(
            "data file of fragment {id} has {rows} rows, more than a fragment can address"
        ))
        .at(reader.path().as_ref(), None));
    }
    Ok(rows)
}
