//! Opening a legacy v1 file: one suffix read (most files' metadata, page table, manifest
//! and dictionaries lie in its 64 KiB), a few more reads for larger files, and the decoded
//! result cached per object version in the session's reader caches.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::ArrayRef;
use arrow_schema::DataType;
use bytes::Bytes;
use object_store::path::Path;

use super::decode::{decode_binary, decode_fixed, fixed_width, read_offsets};
use super::format::{
    message_range, parse_footer, parse_manifest_schema, parse_metadata, LegacyFooter,
    LegacyMetadata, ManifestSchema, PageTable, FOOTER_LEN,
};
use crate::error::{Error, Result};
use crate::io::cache::{CacheKey, DeepSize, SizedCache};
use crate::io::fetch::Tail;
use crate::io::{IoStats, ObjectVersion, RangeFetcher, ReadRequest};
use crate::lance::file::DEFAULT_TAIL_BYTES;
use crate::lance::schema::LanceSchema;

/// Everything decoded from a legacy file that a read needs, cached per object version.
#[derive(Debug, Clone)]
pub(crate) struct LegacyFile {
    /// Object size.
    pub(crate) object_size: u64,
    /// ETag of the object version it was decoded from.
    pub(crate) etag: Option<String>,
    /// The footer.
    pub(crate) footer: LegacyFooter,
    /// Batches, page table and manifest positions.
    pub(crate) metadata: LegacyMetadata,
    /// The self-describing manifest's schema, when the file carries one.
    pub(crate) manifest: Option<ManifestSchema>,
    /// Field ids the page table covers.
    pub(crate) field_ids: Range<i32>,
    /// The page table.
    pub(crate) page_table: PageTable,
    /// Dictionary values by field id (from the file's own manifest).
    pub(crate) dictionaries: HashMap<i32, ArrayRef>,
    /// The bytes of the suffix read (served to later reads without a request).
    pub(crate) tail: Known,
}

impl LegacyFile {
    /// Where the data region ends (the metadata starts).
    pub(crate) fn data_end(&self) -> u64 {
        self.footer.metadata_position
    }

    /// Where the metadata region starts (page table, manifest, metadata: whichever is first).
    pub(crate) fn page_table_start(&self) -> u64 {
        let manifest = self.metadata.manifest_position.unwrap_or(u64::MAX);
        self.metadata
            .page_table_position
            .min(manifest)
            .min(self.footer.metadata_position)
    }

    /// The file's own schema (self-describing files).
    pub(crate) fn own_schema(&self) -> Result<Option<LanceSchema>> {
        self.manifest
            .as_ref()
            .map(|m| LanceSchema::from_proto(&m.schema))
            .transpose()
    }
}

impl DeepSize for LegacyFile {
    fn deep_size(&self) -> usize {
        let dictionaries: usize = self
            .dictionaries
            .values()
            .map(|a| a.get_array_memory_size())
            .sum();
        let manifest = self.manifest.as_ref().map_or(0, |m| {
            m.schema
                .fields
                .iter()
                .map(|f| 128 + f.name.len() + f.logical_type.len())
                .sum()
        });
        std::mem::size_of::<Self>()
            + self.metadata.batch_offsets.len() * 8
            + self.page_table.pages.len() * 16
            + dictionaries
            + manifest
            + self.tail.len()
    }
}

/// Cache of decoded legacy files, keyed by path + size (+ the field-id range the page table
/// was read for, when the caller gave one).
pub(crate) type LegacyCache = SizedCache<Option<(i32, i32)>, LegacyFile>;

/// Byte spans of one object already read.
#[derive(Debug, Clone, Default)]
pub(crate) struct Known {
    spans: Vec<(u64, Bytes)>,
}

impl Known {
    /// Remember `bytes` read at `start`.
    pub(crate) fn add(&mut self, start: u64, bytes: Bytes) {
        self.spans.push((start, bytes));
    }

    /// `range` when one span covers it.
    pub(crate) fn slice(&self, range: &Range<u64>) -> Option<Bytes> {
        self.spans.iter().find_map(|(start, bytes)| {
            let end = start + bytes.len() as u64;
            (range.start >= *start && range.end <= end && range.start <= range.end)
                .then(|| bytes.slice((range.start - start) as usize..(range.end - start) as usize))
        })
    }

    /// Total bytes held.
    pub(crate) fn len(&self) -> usize {
        self.spans.iter().map(|(_, b)| b.len()).sum()
    }
}

/// What an open reads with.
pub(crate) struct Source<'a> {
    /// The fetcher.
    pub(crate) fetcher: &'a RangeFetcher,
    /// The object.
    pub(crate) path: &'a Path,
    /// Its size.
    pub(crate) size: u64,
    /// Where requests are counted.
    pub(crate) stats: &'a IoStats,
}

impl Source<'_> {
    /// [`Self::ensure`] of one range.
    async fn ensure_one(&self, known: &mut Known, range: Range<u64>) -> Result<()> {
        self.ensure(known, std::slice::from_ref(&range)).await
    }

    /// Read the `ranges` not in `known` (one wave) and remember them.
    async fn ensure(&self, known: &mut Known, ranges: &[Range<u64>]) -> Result<()> {
        let missing: Vec<ReadRequest> = ranges
            .iter()
            .filter(|r| r.start < r.end && known.slice(r).is_none())
            .map(|r| ReadRequest {
                path: self.path.clone(),
                range: r.clone(),
                object_size: Some(self.size),
            })
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let fetched = self.fetcher.fetch(&missing, self.stats).await?;
        for (request, bytes) in missing.iter().zip(fetched) {
            known.add(request.range.start, bytes);
        }
        Ok(())
    }
}

/// Open the legacy file at `path` through `cache`. `field_ids` is the range of field ids
/// the page table covers when the caller knows it (a dataset's data file lists its field
/// ids); without it the file must carry its own manifest. `prefetched`: a suffix read the
/// caller already made (no second one).
pub(crate) async fn open_legacy_file(
    fetcher: &RangeFetcher,
    path: &Path,
    size_hint: Option<u64>,
    field_ids: Option<Range<i32>>,
    cache: &LegacyCache,
    prefetched: Option<Tail>,
    stats: &IoStats,
) -> Result<Arc<LegacyFile>> {
    let size_hint = size_hint.or_else(|| prefetched.as_ref().map(|t| t.version.size));
    let load = async {
        let known_version = size_hint.map(|size| ObjectVersion { size, etag: None });
        let tail = match prefetched {
            Some(tail) => tail,
            None => {
                fetcher
                    .tail_of(path, DEFAULT_TAIL_BYTES, known_version.as_ref(), stats)
                    .await?
            }
        };
        let mut known = Known::default();
        known.add(tail.start(), tail.bytes.clone());
        let source = Source {
            fetcher,
            path,
            size: tail.version.size,
            stats,
        };
        let mut file = decode_file(&source, known, field_ids.clone())
            .await
            .map_err(|e| e.at(path.as_ref(), None))?;
        file.etag = tail.version.etag;
        Ok(file)
    };
    match size_hint {
        Some(size) => {
            let key = legacy_key(path, size, field_ids.as_ref());
            cache.get_or_try_load(key, load).await
        }
        None => {
            let file = Arc::new(load.await?);
            let key = legacy_key(path, file.object_size, field_ids.as_ref());
            cache.insert(key, Arc::clone(&file)).await;
            Ok(file)
        }
    }
}

/// The cache key of `path` at `size` read for the field ids `field_ids`.
fn legacy_key(
    path: &Path,
    size: u64,
    field_ids: Option<&Range<i32>>,
) -> CacheKey<Option<(i32, i32)>> {
    CacheKey {
        path: path.to_string(),
        version: ObjectVersion { size, etag: None },
        item: field_ids.map(|r| (r.start, r.end)),
    }
}

/// Whether `cache` holds `path` at `size` read for the field ids `field_ids`.
pub(crate) async fn is_cached_legacy(
    cache: &LegacyCache,
    path: &Path,
    size: u64,
    field_ids: Option<&Range<i32>>,
) -> bool {
    cache
        .get(&legacy_key(path, size, field_ids))
        .await
        .is_some()
}

/// Decode footer, metadata, manifest, page table and dictionaries, reading what the
/// suffix read did not bring.
async fn decode_file(
    source: &Source<'_>,
    mut known: Known,
    field_ids: Option<Range<i32>>,
) -> Result<LegacyFile> {
    let size = source.size;
    crate::ensure_corrupt!(
        size >= FOOTER_LEN + 4,
        "object of {size} bytes is too small for a legacy Lance file"
    );
    let footer_range = size - FOOTER_LEN..size;
    source.ensure_one(&mut known, footer_range.clone()).await?;
    let footer = parse_footer(&known.slice(&footer_range).unwrap_or_default(), size)?;
    let metadata_end = size - FOOTER_LEN;
    source
        .ensure_one(&mut known, footer.metadata_position..metadata_end)
        .await?;
    let region = known
        .slice(&(footer.metadata_position..metadata_end))
        .unwrap_or_default();
    let message = message_range(
        &region,
        footer.metadata_position,
        metadata_end,
        "legacy metadata",
    )?;
    let metadata = parse_metadata(&slice(&known, &message)?, footer.metadata_position)
        .map_err(|e| e.at("", Some(message.clone())))?;
    let manifest = read_manifest(source, &mut known, &metadata, footer.metadata_position).await?;
    let field_ids = match (&field_ids, &manifest) {
        (Some(ids), _) => ids.clone(),
        (None, Some(m)) => id_range(m.schema.fields.iter().map(|f| f.id))?,
        (None, None) => {
            return Err(Error::unsupported(
                "legacy Lance file without its own schema (a dataset data file): open it through its dataset",
            ))
        }
    };
    let table_range = PageTable::range(
        metadata.page_table_position,
        &field_ids,
        metadata.num_batches(),
    )?;
    crate::ensure_corrupt!(
        table_range.end <= footer.metadata_position,
        "legacy page table {table_range:?} runs past the metadata at {}",
        footer.metadata_position
    );
    source.ensure_one(&mut known, table_range.clone()).await?;
    let page_table = PageTable::parse(
        &slice(&known, &table_range)?,
        &field_ids,
        metadata.num_batches(),
        footer.metadata_position,
    )
    .map_err(|e| e.at("", Some(table_range.clone())))?;
    let dictionaries = match &manifest {
        Some(m) => read_dictionaries(source, &mut known, m, footer.metadata_position).await?,
        None => HashMap::new(),
    };
    Ok(LegacyFile {
        object_size: size,
        etag: None,
        footer,
        metadata,
        manifest,
        field_ids,
        page_table,
        dictionaries,
        tail: known,
    })
}

/// `range` of the known bytes (the caller made sure it was read).
fn slice(known: &Known, range: &Range<u64>) -> Result<Bytes> {
    known
        .slice(range)
        .ok_or_else(|| Error::corrupt(format!("bytes {range:?} were not read")))
}

/// `min..max + 1` of field ids.
pub(crate) fn id_range(ids: impl Iterator<Item = i32>) -> Result<Range<i32>> {
    let (mut lo, mut hi) = (i32::MAX, i32::MIN);
    for id in ids {
        crate::ensure_corrupt!(id >= 0, "negative field id {id}");
        lo = lo.min(id);
        hi = hi.max(id);
    }
    crate::ensure_corrupt!(lo <= hi, "a legacy file without fields");
    Ok(lo..hi + 1)
}

async fn read_manifest(
    source: &Source<'_>,
    known: &mut Known,
    metadata: &LegacyMetadata,
    data_end: u64,
) -> Result<Option<ManifestSchema>> {
    let Some(position) = metadata.manifest_position else {
        return Ok(None);
    };
    source.ensure_one(known, position..data_end).await?;
    let region = slice(known, &(position..data_end))?;
    let message = message_range(&region, position, data_end, "legacy manifest")?;
    let schema = parse_manifest_schema(&slice(known, &message)?)
        .map_err(|e| e.at("", Some(message.clone())))?;
    Ok(Some(schema))
}

/// Read the dictionary values of every dictionary field of `manifest`.
async fn read_dictionaries(
    source: &Source<'_>,
    known: &mut Known,
    manifest: &ManifestSchema,
    data_end: u64,
) -> Result<HashMap<i32, ArrayRef>> {
    let schema = LanceSchema::from_proto(&manifest.schema)?;
    let mut out = HashMap::new();
    let mut stack: Vec<&crate::lance::schema::LanceField> = schema.fields.iter().collect();
    while let Some(field) = stack.pop() {
        stack.extend(field.children.iter());
        let DataType::Dictionary(_, value_type) = &field.data_type else {
            continue;
        };
        let location = manifest.dictionaries.get(&field.id).ok_or_else(|| {
            Error::corrupt(format!("dictionary field {} has no dictionary", field.id))
        })?;
        let values = read_dictionary(source, known, value_type, location, data_end)
            .await
            .map_err(|e| e.context(format!("dictionary of field {}", field.id)))?;
        out.insert(field.id, values);
    }
    Ok(out)
}

async fn read_dictionary(
    source: &Source<'_>,
    known: &mut Known,
    value_type: &DataType,
    location: &super::format::DictionaryLocation,
    data_end: u64,
) -> Result<ArrayRef> {
    let inside = |r: &Range<u64>| -> Result<()> {
        crate::ensure_corrupt!(r.end <= data_end, "dictionary bytes {r:?} past {data_end}");
        Ok(())
    };
    let n = location.length;
    if let Some(width) = fixed_width(value_type) {
        let bytes = width
            .byte_range(&(0..n))
            .ok_or_else(|| Error::corrupt("dictionary size overflows"))?;
        let range = location.offset + bytes.start..location.offset + bytes.end;
        inside(&range)?;
        source.ensure_one(known, range.clone()).await?;
        return decode_fixed(value_type, &[(0..n, slice(known, &range)?)]);
    }
    let positions = location.offset
        ..n.checked_add(1)
            .and_then(|c| c.checked_mul(8))
            .and_then(|b| location.offset.checked_add(b))
            .ok_or_else(|| Error::corrupt("dictionary size overflows"))?;
    inside(&positions)?;
    source.ensure_one(known, positions.clone()).await?;
    let positions = read_offsets(&slice(known, &positions)?, true)?;
    let values = positions[0]..positions[positions.len() - 1];
    inside(&values)?;
    source.ensure_one(known, values.clone()).await?;
    // Dictionary values are read as nullable (an empty value is null), like lance does.
    decode_binary(value_type, true, &[(positions, slice(known, &values)?)])
}
