//! Lance 2.0 files: pages encoded as `lance.encodings.ArrayEncoding` trees.
//!
//! A 2.0 file has the same container as 2.1+ (footer `(0,3)`/`(2,0)`, column metadata,
//! pages), but a different page model: every field (struct and list headers included) has a
//! column of its own, pages count the rows *of their column* (a list's item column counts
//! items), and each page's encoding is a tree of array encodings. Written by pylance
//! 0.18–0.39 by default (and by later releases on request); the 2.0 writers of those
//! releases emit `Flat`, `Nullable`, `FixedSizeList`, `Binary`, `Dictionary`, `List` and
//! `SimpleStruct` pages, plus `Fsst` for fields that ask for it; all are read here.
//!
//! A page's encoding tree is a page layout like any other: the container resolves it into
//! [`Node`]s at file open ([`crate::lance::page::array_encoding`]) and keeps it in the cached
//! file metadata as [`crate::lance::page::PageLayout::V2_0`]; this module reads 2.0 files
//! from that metadata.
//!
//! * [`values`], [`binary`]: pure planners/decoders per encoding family.
//! * [`fields`]: fields over columns (structs, lists, leaves).
//! * [`walk`]: the read as a pure walk over the bytes known so far; [`read_fields`] is the
//!   thin async loop that fetches what each walk found missing, one wave per step of the
//!   dependency chain.

pub(crate) mod arrow;
pub(crate) mod binary;
pub(crate) mod fields;
pub(crate) mod values;
pub(crate) mod walk;

use std::collections::HashMap;
use std::ops::Range;

use arrow_array::ArrayRef;
use bytes::Bytes;

use crate::error::{Error, Result};
use crate::lance::file::FileMetadata;
use crate::lance::page::array_encoding::{Node, Nullability};
use crate::lance::page::PageLayout;
use walk::{all, ByteStore, Walk};

/// Most waves one read may take (a schema nests far less deeply; more means a loop).
const MAX_WAVES: usize = 64;

/// Where a 2.0 read gets bytes and page dictionaries from (the reader; tests: memory).
pub(crate) trait ReadSource: Sync {
    /// The bytes of `ranges` (one wave), in order.
    fn fetch(
        &self,
        ranges: &[Range<u64>],
    ) -> impl std::future::Future<Output = Result<Vec<Bytes>>> + Send;
    /// A cached page dictionary of (column, page).
    fn cached_dictionary(
        &self,
        column: usize,
        page: usize,
    ) -> impl std::future::Future<Output = Option<ArrayRef>> + Send;
    /// Cache the dictionary of (column, page).
    fn cache_dictionary(
        &self,
        column: usize,
        page: usize,
        dictionary: ArrayRef,
    ) -> impl std::future::Future<Output = ()> + Send;
}

/// Read `ranges` (top-level rows, sorted, disjoint) of the top-level fields `fields` of a
/// 2.0 file: one array per field, in the fields' storage types (dictionary fields as their
/// values). Also returns the byte ranges of every wave, in order.
pub(crate) async fn read_fields(
    metadata: &FileMetadata,
    path: &str,
    fields: &[usize],
    ranges: &[Range<u64>],
    source: &impl ReadSource,
) -> Result<(Vec<ArrayRef>, Vec<Vec<Range<u64>>>)> {
    let firsts = fields::first_columns(metadata).map_err(|e| e.at(path, None))?;
    let mut dictionaries = HashMap::new();
    for &f in fields {
        let first = *firsts
            .get(f)
            .ok_or_else(|| Error::InvalidArgument(format!("no field {f}")))?;
        let span = fields::column_count(&metadata.schema.fields[f], metadata, first);
        for column in first..first + span {
            for (page, info) in metadata.columns[column].pages.iter().enumerate() {
                let is_dictionary =
                    matches!(&info.layout, PageLayout::V2_0(n) if has_dictionary(n));
                if is_dictionary {
                    if let Some(d) = source.cached_dictionary(column, page).await {
                        dictionaries.insert((column, page), d);
                    }
                }
            }
        }
    }
    let reader = fields::FieldReader { metadata, path };
    let mut store = ByteStore::default();
    let mut fresh = Vec::new();
    let mut waves = Vec::new();
    for _ in 0..MAX_WAVES {
        let mut w = Walk::new(&store, &mut dictionaries, &mut fresh);
        let mut arrays = Vec::with_capacity(fields.len());
        for &f in fields {
            let field = &metadata.schema.fields[f];
            arrays.push(reader.read(field, firsts[f], ranges, &mut w)?);
        }
        let needs = w.into_needs();
        if needs.is_empty() {
            for key in &fresh {
                if let Some(d) = dictionaries.get(key) {
                    source
                        .cache_dictionary(key.0, key.1, ArrayRef::clone(d))
                        .await;
                }
            }
            let arrays = all(arrays)
                .ok_or_else(|| Error::corrupt("internal: 2.0 read stalled").at(path, None))?;
            return Ok((arrays, waves));
        }
        let bytes = source.fetch(&needs).await?;
        crate::ensure_corrupt!(
            bytes.len() == needs.len(),
            "internal: fetched {} of {} ranges",
            bytes.len(),
            needs.len()
        );
        for (range, b) in needs.iter().zip(bytes) {
            if b.len() as u64 != range.end - range.start {
                return Err(Error::corrupt(format!(
                    "read {} bytes for a {}-byte range",
                    b.len(),
                    range.end - range.start
                ))
                .at(path, Some(range.clone())));
            }
            store.insert(range.clone(), b);
        }
        waves.push(needs);
    }
    Err(Error::corrupt(format!("2.0 read needs more than {MAX_WAVES} waves")).at(path, None))
}

fn has_dictionary(node: &Node) -> bool {
    matches!(node, Node::Dictionary { .. })
        || matches!(node, Node::Nullable(Nullability::NoNull(v)) if has_dictionary(v))
}

/// Decode page-local `rows` of one page whose bytes all lie in `file` (absolute
/// positions): the same walk as a read, run against memory (tests and fuzzing). A range
/// outside `file` is `Corrupt`.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn decode_page_in_memory(
    node: &Node,
    rows: &[Range<u64>],
    data_type: &arrow_schema::DataType,
    file: &[u8],
) -> Result<ArrayRef> {
    decode_page_waves(node, rows, data_type, file).map(|(array, _)| array)
}

/// [`decode_page_in_memory`], also returning the ranges of each wave.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn decode_page_waves(
    node: &Node,
    rows: &[Range<u64>],
    data_type: &arrow_schema::DataType,
    file: &[u8],
) -> Result<(ArrayRef, Vec<Vec<Range<u64>>>)> {
    let mut dictionaries = HashMap::new();
    let mut fresh = Vec::new();
    let mut store = ByteStore::default();
    let items = binary::ItemsType {
        value_type: fields::storage_type(data_type),
        shifted: !matches!(data_type, arrow_schema::DataType::Dictionary(..)),
    };
    let mut waves = Vec::new();
    for _ in 0..MAX_WAVES {
        let mut w = Walk::new(&store, &mut dictionaries, &mut fresh);
        let decoded = values::decode(node, rows, &mut w, &items)?;
        let needs = w.into_needs();
        if needs.is_empty() {
            let decoded =
                decoded.ok_or_else(|| Error::corrupt("internal: 2.0 page decode stalled"))?;
            let array = arrow::to_array(decoded, items.value_type)?;
            return Ok((array, waves));
        }
        for range in &needs {
            let bytes = usize::try_from(range.start)
                .ok()
                .zip(usize::try_from(range.end).ok())
                .and_then(|(s, e)| file.get(s..e))
                .ok_or_else(|| {
                    Error::corrupt(format!(
                        "page bytes {}..{} outside the {}-byte file",
                        range.start,
                        range.end,
                        file.len()
                    ))
                })?;
            store.insert(range.clone(), Bytes::copy_from_slice(bytes));
        }
        waves.push(needs);
    }
    Err(Error::corrupt(format!(
        "2.0 page needs more than {MAX_WAVES} waves"
    )))
}
