//! Bloom-filter I/O: load `bloomfilter.lance` (decoded once per session). The filter
//! engine rechecks the candidate zones' rows on the column.

use std::sync::Arc;

use super::{BloomIndex, BLOOM_FILE};
use crate::error::{Error, Result};
use crate::index::bitmap_file::exec::buffer_index;
use crate::index::caches::session_cache;
use crate::index::zones::{read_all, NULL_BITMAP_KEY};
use crate::io::budget::CacheShare;
use crate::io::cache::CacheKey;
use crate::io::IoStats;
use crate::lance::data_file::DataFileReader;
use crate::lance::dataset::{DatasetVersion, IndexSegment};

/// The bloom-filter index of `segment` (decoded once per session) and its open file.
pub(crate) async fn load_bloom(
    dataset: &DatasetVersion,
    segment: &IndexSegment,
    stats: &IoStats,
) -> Result<(DataFileReader, Arc<BloomIndex>)> {
    let reader = dataset.open_index_file(segment, BLOOM_FILE, stats).await?;
    let key = CacheKey {
        path: reader.path().to_string(),
        version: reader.version().clone(),
        item: (),
    };
    let index = session_cache::<(), BloomIndex>(dataset.session(), CacheShare::Blooms)
        .get_or_try_load(key, async {
            let null_buffer = buffer_index(&reader, NULL_BITMAP_KEY)?;
            let batch = read_all(&reader, stats).await?;
            BloomIndex::decode(&batch, null_buffer).map_err(|e| e.at(reader.path().as_ref(), None))
        })
        .await?;
    let manifest = dataset.manifest();
    for (i, z) in index.zones.iter().enumerate() {
        if let Some(f) = manifest.fragment(u64::from(z.bound.fragment)) {
            if z.bound.start + z.bound.length > f.physical_rows {
                return Err(Error::corrupt(format!(
                    "zone {i} (rows {}+{}) leaves fragment {} of {} rows",
                    z.bound.start, z.bound.length, f.id, f.physical_rows
                ))
                .at(reader.path().as_ref(), None));
            }
        }
    }
    Ok((reader, index))
}
