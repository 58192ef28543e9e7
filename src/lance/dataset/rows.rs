//! Row counts of fragments whose manifest records none, or none to trust: manifests written
//! by the earliest pylance releases (0.6.5 here) leave `DataFragment.physical_rows` unset
//! (0); lance 0.8.0 migrated such manifests wrongly, recording the *live* row count as
//! `physical_rows` (lance's `test_data/v0.8.0/migrated_from_v0.7.5`: fragment 0 holds 100
//! rows, 10 deleted, its manifest says 90), and those writers recorded no
//! `writer_version`. lance trusts `physical_rows` only when the manifest has a writer
//! version (`FileFragment::physical_rows`, lance issue 1531), else it reads the count from
//! the fragment's first data file. So does lakeseek, once per manifest
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

/// Whether the row count the manifest records for `fragment` is not to be trusted: none
/// recorded, or recorded by a writer that put no `writer_version` in the manifest (lance
/// 0.8.0's broken migration recorded live rows instead of physical ones).
pub(crate) fn untrusted_row_count(manifest: &Manifest, fragment: &Fragment) -> bool {
    !fragment.files.is_empty() && (lacks_row_count(fragment) || manifest.writer.is_none())
}

/// Give every fragment of `manifest` without a trusted row count ([`untrusted_row_count`])
/// the row count of its first data file (read concurrently, one metadata read per
/// fragment).
pub(crate) async fn fill_missing_physical_rows(
    manifest: &mut Manifest,
    store: &DatasetStore,
    session: &DatasetSession,
    root: &Path,
    stats: &IoStats,
) -> Result<()> {
    let missing: Vec<usize> = (0..manifest.fragments.len())
        .filter(|&i| untrusted_row_count(manifest, &manifest.fragments[i]))
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
