//! Zone map I/O: load `zonemap.lance` (one suffix read for a small file; decoded and cached
//! in the session). The filter engine rechecks the candidate zones' rows on the column.

use std::sync::Arc;

use super::{ZoneMap, ZONEMAP_FILE};
use crate::error::Result;
use crate::index::bitmap_file::exec::buffer_index;
use crate::index::caches::session_cache;
use crate::index::zones::{read_all, NULL_BITMAP_KEY};
use crate::io::budget::CacheShare;
use crate::io::cache::CacheKey;
use crate::io::IoStats;
use crate::lance::data_file::DataFileReader;
use crate::lance::dataset::{DatasetVersion, IndexSegment};

/// The zone map of `segment` (decoded once per session) and its open file.
pub(crate) async fn load_zone_map(
    dataset: &DatasetVersion,
    segment: &IndexSegment,
    stats: &IoStats,
) -> Result<(DataFileReader, Arc<ZoneMap>)> {
    let reader = dataset
        .open_index_file(segment, ZONEMAP_FILE, stats)
        .await?;
    let key = CacheKey {
        path: reader.path().to_string(),
        version: reader.version().clone(),
        item: (),
    };
    let map = session_cache::<(), ZoneMap>(dataset.session(), CacheShare::ZoneMaps)
        .get_or_try_load(key, async {
            let null_buffer = buffer_index(&reader, NULL_BITMAP_KEY)?;
            let batch = read_all(&reader, stats).await?;
            ZoneMap::decode(&batch, null_buffer).map_err(|e| e.at(reader.path().as_ref(), None))
        })
        .await?;
    let manifest = dataset.manifest();
    map.check_fragments(&|f| manifest.fragment(u64::from(f)).map(|fr| fr.physical_rows))
        .map_err(|e| e.at(reader.path().as_ref(), None))?;
    Ok((reader, map))
}
