//! The container of a legacy v1 file: 16-byte footer, length-prefixed `Metadata`, the page
//! table and the optional self-describing manifest. Pure functions of bytes; every
//! position and length is checked against the object before it is used.

use std::collections::HashMap;
use std::ops::Range;

use prost::Message;

use crate::error::{Error, Result};
use crate::lance::proto::file as file_pb;
use crate::lance::proto::legacy as pb;

/// Size of the v1 footer: metadata position (u64), major and minor version (u16 each),
/// magic `LANC`.
pub(crate) const FOOTER_LEN: u64 = 16;
/// Most batches a file may declare (the page table grows with fields × batches).
const MAX_BATCHES: usize = 1 << 24;
/// Most page-table entries accepted (16 bytes each: 256 MiB).
const MAX_PAGE_ENTRIES: u64 = 1 << 24;

/// The decoded footer of a v1 file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LegacyFooter {
    /// Position of the length-prefixed `Metadata` message.
    pub(crate) metadata_position: u64,
    /// Minor version (1 or 2; major is 0).
    pub(crate) minor_version: u16,
}

/// Whether the last 8 bytes of a file (version + magic) say "legacy v1" (`0.1`, `0.2`).
pub(crate) fn is_legacy_version(major: u16, minor: u16) -> bool {
    major == 0 && minor <= 2
}

/// Part of the error a v2 footer gives the legacy reader.
pub(crate) const NOT_LEGACY_MESSAGE: &str = "is not a legacy v1 file";

/// Decode the footer (the last 16 bytes of an object of `object_size` bytes).
pub(crate) fn parse_footer(bytes: &[u8], object_size: u64) -> Result<LegacyFooter> {
    let at = || Some(object_size.saturating_sub(FOOTER_LEN)..object_size);
    let Ok(footer) = <&[u8; 16]>::try_from(bytes) else {
        return Err(Error::corrupt(format!(
            "legacy footer must be {FOOTER_LEN} bytes, got {}",
            bytes.len()
        ))
        .at("", at()));
    };
    if &footer[12..16] != b"LANC" {
        return Err(Error::corrupt("not a Lance file: footer magic is not \"LANC\"").at("", at()));
    }
    let metadata_position = u64::from_le_bytes(footer[0..8].try_into().unwrap_or_default());
    let major = u16::from_le_bytes([footer[8], footer[9]]);
    let minor = u16::from_le_bytes([footer[10], footer[11]]);
    if !is_legacy_version(major, minor) {
        return Err(Error::unsupported(format!(
            "Lance file version {major}.{minor} {NOT_LEGACY_MESSAGE}"
        )));
    }
    if metadata_position.saturating_add(4) > object_size - FOOTER_LEN {
        return Err(Error::corrupt(format!(
            "legacy footer: metadata position {metadata_position} is not before the footer at {}",
            object_size - FOOTER_LEN
        ))
        .at("", at()));
    }
    Ok(LegacyFooter {
        metadata_position,
        minor_version: minor,
    })
}

/// The decoded `Metadata` of a v1 file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LegacyMetadata {
    /// Cumulative row counts, starting with 0 (`num_batches + 1` entries).
    pub(crate) batch_offsets: Vec<u64>,
    /// Position of the page table.
    pub(crate) page_table_position: u64,
    /// Position of the self-describing manifest, when the file carries one.
    pub(crate) manifest_position: Option<u64>,
    /// Whether page statistics are present.
    pub(crate) has_statistics: bool,
}

impl LegacyMetadata {
    /// Number of batches.
    pub(crate) fn num_batches(&self) -> usize {
        self.batch_offsets.len().saturating_sub(1)
    }

    /// Number of rows.
    pub(crate) fn num_rows(&self) -> u64 {
        self.batch_offsets.last().copied().unwrap_or(0)
    }

    /// Rows of batch `b`.
    pub(crate) fn batch_rows(&self, b: usize) -> Range<u64> {
        self.batch_offsets[b]..self.batch_offsets[b + 1]
    }
}

/// The length of the message that starts at `position` (its u32 prefix), checked to end
/// before `end`. `prefix` holds at least the 4 prefix bytes.
pub(crate) fn message_range(
    prefix: &[u8],
    position: u64,
    end: u64,
    what: &str,
) -> Result<Range<u64>> {
    let len = prefix
        .get(..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| Error::corrupt(format!("{what}: no length prefix at {position}")))?;
    let start = position + 4;
    let stop = start + u64::from(len);
    if stop > end {
        return Err(Error::corrupt(format!(
            "{what}: message of {len} bytes at {start} runs past {end}"
        ))
        .at("", Some(position..stop)));
    }
    Ok(start..stop)
}

/// Decode the `Metadata` message (its bytes without the length prefix), checking the batch
/// offsets ascend from 0 and the positions lie inside `0..data_end` (the metadata start).
pub(crate) fn parse_metadata(bytes: &[u8], data_end: u64) -> Result<LegacyMetadata> {
    let m = pb::Metadata::decode(bytes).map_err(|e| {
        Error::corrupt(format!("legacy metadata is not a Metadata protobuf: {e}")).with_source(e)
    })?;
    crate::ensure_corrupt!(
        m.batch_offsets.len() <= MAX_BATCHES + 1,
        "legacy metadata: {} batch offsets",
        m.batch_offsets.len()
    );
    let mut batch_offsets = Vec::with_capacity(m.batch_offsets.len().max(1));
    for (i, &o) in m.batch_offsets.iter().enumerate() {
        let o = u64::try_from(o)
            .map_err(|_| Error::corrupt(format!("legacy metadata: batch offset {i} is {o}")))?;
        let previous = batch_offsets.last().copied().unwrap_or(0);
        crate::ensure_corrupt!(
            (i == 0 && o == 0) || (i > 0 && o >= previous),
            "legacy metadata: batch offset {i} is {o} after {previous}"
        );
        batch_offsets.push(o);
    }
    if batch_offsets.is_empty() {
        batch_offsets.push(0);
    }
    crate::ensure_corrupt!(
        m.page_table_position <= data_end,
        "legacy metadata: page table at {} is past the metadata at {data_end}",
        m.page_table_position
    );
    crate::ensure_corrupt!(
        m.manifest_position <= data_end,
        "legacy metadata: manifest at {} is past the metadata at {data_end}",
        m.manifest_position
    );
    Ok(LegacyMetadata {
        batch_offsets,
        page_table_position: m.page_table_position,
        manifest_position: (m.manifest_position > 0).then_some(m.manifest_position),
        has_statistics: m.statistics.is_some(),
    })
}

/// One page: where a field's values of one batch start, and how many values it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct LegacyPage {
    /// Absolute position.
    pub(crate) position: u64,
    /// Number of values (rows + 1 for list offsets, items for list children).
    pub(crate) length: u64,
}

/// The page table: a page for every field id `first_field..=last_field` and every batch.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PageTable {
    /// Smallest field id covered.
    pub(crate) first_field: i32,
    /// Number of batches.
    pub(crate) num_batches: usize,
    /// Field-major entries.
    pub(crate) pages: Vec<LegacyPage>,
}

impl PageTable {
    /// Byte range of the page table of `fields` at `position` for `num_batches` batches.
    pub(crate) fn range(
        position: u64,
        fields: &Range<i32>,
        num_batches: usize,
    ) -> Result<Range<u64>> {
        let count = (fields.end as i64 - fields.start as i64).max(0) as u64 * num_batches as u64;
        crate::ensure_corrupt!(
            count <= MAX_PAGE_ENTRIES,
            "legacy page table of {count} entries is too large"
        );
        let end = position
            .checked_add(count * 16)
            .ok_or_else(|| Error::corrupt("legacy page table position overflows"))?;
        Ok(position..end)
    }

    /// Decode the table (`bytes` is exactly [`Self::range`]); every page must lie before
    /// `data_end`. A field's page of `length` values and `width` bytes per value is checked
    /// when it is read.
    pub(crate) fn parse(
        bytes: &[u8],
        fields: &Range<i32>,
        num_batches: usize,
        data_end: u64,
    ) -> Result<Self> {
        let mut pages = Vec::with_capacity(bytes.len() / 16);
        for (i, entry) in bytes.chunks_exact(16).enumerate() {
            let position = i64::from_le_bytes(entry[0..8].try_into().unwrap_or_default());
            let length = i64::from_le_bytes(entry[8..16].try_into().unwrap_or_default());
            let (Ok(position), Ok(length)) = (u64::try_from(position), u64::try_from(length))
            else {
                return Err(Error::corrupt(format!(
                    "legacy page table entry {i}: position {position}, length {length}"
                )));
            };
            crate::ensure_corrupt!(
                position <= data_end,
                "legacy page table entry {i}: page at {position} is past the data end {data_end}"
            );
            pages.push(LegacyPage { position, length });
        }
        Ok(Self {
            first_field: fields.start,
            num_batches,
            pages,
        })
    }

    /// The page of field `id` in batch `batch`.
    pub(crate) fn page(&self, id: i32, batch: usize) -> Option<LegacyPage> {
        let field = usize::try_from(i64::from(id) - i64::from(self.first_field)).ok()?;
        if batch >= self.num_batches {
            return None;
        }
        self.pages
            .get(field.checked_mul(self.num_batches)? + batch)
            .copied()
    }
}

/// Where a dictionary field's values are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DictionaryLocation {
    /// Position (of the positions array, for string values).
    pub(crate) offset: u64,
    /// Number of values.
    pub(crate) length: u64,
}

/// The schema a self-describing v1 file carries, with each field's dictionary location.
#[derive(Debug, Clone)]
pub(crate) struct ManifestSchema {
    /// The fields as `lance.file.Schema`.
    pub(crate) schema: file_pb::Schema,
    /// Dictionary locations by field id.
    pub(crate) dictionaries: HashMap<i32, DictionaryLocation>,
}

/// Decode the schema of a v1 manifest message (bytes without the length prefix).
pub(crate) fn parse_manifest_schema(bytes: &[u8]) -> Result<ManifestSchema> {
    let bad = |e: prost::DecodeError| {
        Error::corrupt(format!("legacy manifest is not a Manifest protobuf: {e}"))
    };
    let schema = pb::ManifestSchema::decode(bytes).map_err(bad)?;
    let encodings = pb::ManifestFieldEncodings::decode(bytes).map_err(bad)?;
    let dictionaries = dictionary_locations(&encodings.fields)?;
    Ok(ManifestSchema {
        schema: file_pb::Schema {
            fields: schema.fields,
            metadata: schema.metadata,
        },
        dictionaries,
    })
}

/// The dictionary locations of fields that have one.
pub(crate) fn dictionary_locations(
    fields: &[pb::FieldEncoding],
) -> Result<HashMap<i32, DictionaryLocation>> {
    let mut out = HashMap::new();
    for f in fields {
        if let Some(d) = f.dictionary {
            let (Ok(offset), Ok(length)) = (u64::try_from(d.offset), u64::try_from(d.length))
            else {
                return Err(Error::corrupt(format!(
                    "field {}: dictionary at {} of {} values",
                    f.id, d.offset, d.length
                )));
            };
            out.insert(f.id, DictionaryLocation { offset, length });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn footer(position: u64, major: u16, minor: u16) -> Vec<u8> {
        let mut b = position.to_le_bytes().to_vec();
        b.extend(major.to_le_bytes());
        b.extend(minor.to_le_bytes());
        b.extend(b"LANC");
        b
    }

    #[test]
    fn footers_are_checked() {
        assert_eq!(
            parse_footer(&footer(10, 0, 2), 100)
                .unwrap()
                .metadata_position,
            10
        );
        assert!(matches!(
            parse_footer(&footer(90, 0, 2), 100),
            Err(Error::Corrupt { .. })
        ));
        assert!(matches!(
            parse_footer(&footer(10, 2, 1), 100),
            Err(Error::Unsupported { .. })
        ));
        let mut bad = footer(10, 0, 2);
        bad[15] = b'X';
        assert!(matches!(
            parse_footer(&bad, 100),
            Err(Error::Corrupt { .. })
        ));
        assert!(parse_footer(&bad[..8], 100).is_err());
    }

    #[test]
    fn page_tables_are_field_major() {
        let mut bytes = Vec::new();
        for (p, l) in [(0i64, 4i64), (32, 2), (48, 4), (80, 2)] {
            bytes.extend(p.to_le_bytes());
            bytes.extend(l.to_le_bytes());
        }
        let t = PageTable::parse(&bytes, &(3..5), 2, 100).unwrap();
        assert_eq!(
            t.page(4, 0),
            Some(LegacyPage {
                position: 48,
                length: 4
            })
        );
        assert_eq!(
            t.page(3, 1),
            Some(LegacyPage {
                position: 32,
                length: 2
            })
        );
        assert_eq!(t.page(5, 0), None);
        assert_eq!(t.page(2, 0), None);
        assert_eq!(t.page(3, 2), None);
        assert!(PageTable::parse(&bytes, &(3..5), 2, 60).is_err());
        bytes[8..16].copy_from_slice(&(-1i64).to_le_bytes());
        assert!(PageTable::parse(&bytes, &(3..5), 2, 100).is_err());
    }

    #[test]
    fn batch_offsets_must_ascend_from_zero() {
        let m = pb::Metadata {
            batch_offsets: vec![0, 4, 3],
            ..Default::default()
        };
        assert!(parse_metadata(&m.encode_to_vec(), 10).is_err());
        let m = pb::Metadata {
            batch_offsets: vec![0, 4, 9],
            page_table_position: 5,
            ..Default::default()
        };
        let parsed = parse_metadata(&m.encode_to_vec(), 10).unwrap();
        assert_eq!((parsed.num_batches(), parsed.num_rows()), (2, 9));
        assert_eq!(parsed.batch_rows(1), 4..9);
    }
}
