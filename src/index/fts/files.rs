//! Opening the segments of an INVERTED index: `metadata.lance` and each partition's token
//! dictionary, invert and docs files (partitioned layout), or `tokens.lance`, `invert.lance`
//! and `docs.lance` (the older single-partition layout). Files open concurrently: when the
//! manifest lists a segment's files, the partition files open in the same wave as
//! `metadata.lance`.

use std::sync::Arc;

use arrow_array::{cast::AsArray, Array};
use roaring::RoaringBitmap;

use super::params::{parse_params, TokenizerParams};
use super::posting::{PostingLayout, TailCodec};
use super::tokens::{decode_arrow, decode_fst, TokenSet};
use crate::error::{Error, Result};
use crate::io::IoStats;
use crate::lance::data_file::DataFileReader;
use crate::lance::dataset::{DatasetVersion, IndexFileReads, IndexSegment};
use crate::lance::selection::RowSelection;

const METADATA_FILE: &str = "metadata.lance";

/// How a segment's files open when the manifest lists their sizes: `metadata.lance` and
/// token dictionaries up to 1 MiB whole (the dictionary comes with the open), the invert
/// and docs files by a 16 KiB suffix (pylance 14 writes metadata regions of under 2 KiB;
/// a larger one costs one more read of what is missing).
const FILE_READS: IndexFileReads = IndexFileReads {
    whole: 1 << 20,
    tail: 16 << 10,
};

test_override! {
    TEST_FILE_READS: IndexFileReads = FILE_READS;
    /// The file reads in effect ([`FILE_READS`] but inside [`with_file_reads`]).
    file_reads;
    /// Run `f` with other file reads: tests scale them down so that a small fixture is read
    /// as a large index of the same layout is.
    with_file_reads
}

/// At most this many pages of a partition have their page init read by the open.
const MAX_PREFETCHED_INITS: usize = 64;
const LEGACY_TOKENS: &str = "tokens.lance";
const LEGACY_INVERT: &str = "invert.lance";
const LEGACY_DOCS: &str = "docs.lance";

/// One opened segment of an INVERTED index.
#[derive(Debug)]
pub(crate) struct FtsSegment {
    /// The segment, as the manifest lists it.
    pub(crate) segment: IndexSegment,
    /// Its tokenizer params.
    pub(crate) params: TokenizerParams,
    /// Fragments whose rows the index still lists but search must skip.
    pub(crate) deleted_fragments: RoaringBitmap,
    /// Its partitions.
    pub(crate) partitions: Vec<Partition>,
    /// Format version (1-3; the older layout reads as 0).
    pub(crate) format_version: u32,
}

/// How a partition's postings are stored.
#[derive(Debug)]
pub(crate) enum PartitionKind {
    /// Block-coded posting lists, one invert row per token; doc ids are docs-file rows.
    Blocks(PostingLayout),
    /// The older layout: invert rows `(_rowid, _frequency)`, token `i` owning rows
    /// `offsets[i]..offsets[i + 1]`; doc ids are row ids.
    Legacy {
        /// Start row of each token's postings, and the row count at the end.
        offsets: Vec<u64>,
        /// Row id → document length (the whole docs file: it is keyed by row id).
        lengths: Arc<std::collections::HashMap<u64, u32>>,
    },
}

/// One partition of a segment.
#[derive(Debug)]
pub(crate) struct Partition {
    /// Partition id (0 in the older layout).
    pub(crate) id: u64,
    /// The token dictionary.
    pub(crate) tokens: Arc<TokenSet>,
    /// Posting lists (one row per token, or per posting in the older layout).
    pub(crate) invert: DataFileReader,
    /// Document lengths and row ids.
    pub(crate) docs: DataFileReader,
    /// Documents (docs rows: rows with at least one token; deleted rows included, as BM25
    /// counts them).
    pub(crate) num_docs: u64,
    /// Tokens in all documents.
    pub(crate) total_tokens: u64,
    /// Posting lists in the partition.
    pub(crate) num_tokens: u64,
    /// The posting storage.
    pub(crate) kind: PartitionKind,
}

/// The error for a file at `path` that does not hold what the layout says.
pub(crate) fn bad(reader: &DataFileReader, what: impl Into<String>) -> Error {
    Error::corrupt(what).at(reader.path().as_ref(), None)
}

/// Open `segment`: the partitioned layout, or the older one when the segment has no
/// `metadata.lance` but a `tokens.lance`.
pub(crate) async fn open_segment(
    dataset: &DatasetVersion,
    segment: &IndexSegment,
    stats: &IoStats,
) -> Result<FtsSegment> {
    let listed = |name: &str| segment.files.iter().any(|f| f.path == name);
    if !segment.files.is_empty() && !listed(METADATA_FILE) && listed(LEGACY_TOKENS) {
        return open_legacy(dataset, segment, stats).await;
    }
    let guessed = partition_ids_from_files(segment);
    let metadata = dataset.open_index_file_sized(segment, METADATA_FILE, file_reads(), stats);
    let early = futures::future::try_join_all(
        guessed
            .iter()
            .map(|id| open_partition_files(dataset, segment, *id, stats)),
    );
    let (metadata, early) = match futures::join!(metadata, early) {
        (Err(Error::NotFound { .. }), _) if segment.files.is_empty() => {
            return open_legacy(dataset, segment, stats).await
        }
        (m, e) => (m?, e?),
    };
    let meta = SegmentMeta::parse(&metadata)?;
    let deleted = read_deleted_fragments(&metadata, stats);
    let opened = async {
        if meta.partitions == guessed {
            Ok(early)
        } else {
            let opens = meta.partitions.iter();
            futures::future::try_join_all(
                opens.map(|id| open_partition_files(dataset, segment, *id, stats)),
            )
            .await
        }
    };
    let (deleted_fragments, files) = futures::try_join!(deleted, opened)?;
    let loads = files.into_iter().map(|f| load_partition(f, &meta, stats));
    let partitions = futures::future::try_join_all(loads).await?;
    Ok(FtsSegment {
        segment: segment.clone(),
        params: meta.params,
        deleted_fragments,
        partitions,
        format_version: meta.format_version,
    })
}

/// What `metadata.lance`'s schema metadata says.
struct SegmentMeta {
    params: TokenizerParams,
    partitions: Vec<u64>,
    fst: bool,
    format_version: u32,
    layout: PostingLayout,
}

impl SegmentMeta {
    fn parse(reader: &DataFileReader) -> Result<Self> {
        let md = &reader.schema().metadata;
        let get = |k: &str| md.get(k).map(String::as_str);
        let params = get("params").ok_or_else(|| bad(reader, "no `params` metadata"))?;
        let params = parse_params(params, "metadata.lance")
            .map_err(|e| e.at(reader.path().as_ref(), None))?;
        let partitions =
            get("partitions").ok_or_else(|| bad(reader, "no `partitions` metadata"))?;
        let partitions: Vec<u64> = serde_json::from_str(partitions)
            .map_err(|e| bad(reader, "`partitions` is not a JSON list of u64").with_source(e))?;
        let fst = match get("token_set_format") {
            None | Some("") | Some("arrow") => false,
            Some("fst") => true,
            Some(other) => return Err(bad(reader, format!("token set format {other:?}"))),
        };
        let format_version = match get("format_version") {
            None => 1,
            Some(v) => v
                .parse()
                .map_err(|_| bad(reader, format!("format_version {v:?}")))?,
        };
        let block_size = match get("posting_block_size") {
            None => 128,
            Some(v) => v
                .parse()
                .map_err(|_| bad(reader, format!("posting_block_size {v:?}")))?,
        };
        let tail = TailCodec::parse(get("posting_tail_codec"), format_version)
            .map_err(|e| e.at(reader.path().as_ref(), None))?;
        let layout =
            PostingLayout::new(block_size, tail).map_err(|e| e.at(reader.path().as_ref(), None))?;
        Ok(Self {
            params,
            partitions,
            fst,
            format_version,
            layout,
        })
    }
}

/// Partition ids named by the segment's listed files (`part_<id>_tokens.lance`), sorted.
fn partition_ids_from_files(segment: &IndexSegment) -> Vec<u64> {
    let mut ids: Vec<u64> = segment
        .files
        .iter()
        .filter_map(|f| {
            f.path
                .strip_prefix("part_")?
                .strip_suffix("_tokens.lance")?
                .parse()
                .ok()
        })
        .collect();
    ids.sort_unstable();
    ids
}

/// The one-row `deleted_fragments` bitmap of `metadata.lance` (empty when absent).
async fn read_deleted_fragments(reader: &DataFileReader, stats: &IoStats) -> Result<RoaringBitmap> {
    let Ok(idx) = reader.field_indices(&["deleted_fragments"]) else {
        return Ok(RoaringBitmap::new());
    };
    if reader.num_rows() == 0 {
        return Ok(RoaringBitmap::new());
    }
    let batch = reader
        .read_rows(&idx, &RowSelection::Range(0..1), stats)
        .await?;
    let column = batch.column(0);
    let bytes = column
        .as_binary_opt::<i32>()
        .ok_or_else(|| bad(reader, "deleted_fragments is not Binary"))?;
    if bytes.is_null(0) {
        return Ok(RoaringBitmap::new());
    }
    RoaringBitmap::deserialize_from(bytes.value(0))
        .map_err(|e| bad(reader, "deleted_fragments bitmap does not decode").with_source(e))
}

/// The three files of partition `id`, opened.
struct PartitionFiles {
    id: u64,
    tokens: DataFileReader,
    invert: DataFileReader,
    docs: DataFileReader,
}

async fn open_partition_files(
    dataset: &DatasetVersion,
    segment: &IndexSegment,
    id: u64,
    stats: &IoStats,
) -> Result<PartitionFiles> {
    let names = [
        format!("part_{id}_tokens.lance"),
        format!("part_{id}_invert.lance"),
        format!("part_{id}_docs.lance"),
    ];
    let (tokens, invert, docs) = futures::try_join!(
        dataset.open_index_file_sized(segment, &names[0], file_reads(), stats),
        dataset.open_index_file_sized(segment, &names[1], file_reads(), stats),
        dataset.open_index_file_sized(segment, &names[2], file_reads(), stats),
    )?;
    Ok(PartitionFiles {
        id,
        tokens,
        invert,
        docs,
    })
}

/// Read a partition's token dictionary and statistics.
async fn load_partition(
    files: PartitionFiles,
    meta: &SegmentMeta,
    stats: &IoStats,
) -> Result<Partition> {
    let PartitionFiles {
        id,
        tokens,
        invert,
        docs,
    } = files;
    let rows = RowSelection::Range(0..tokens.num_rows());
    let columns: Vec<usize> = (0..tokens.schema().fields.len()).collect();
    // Every search reads the invert rows of its tokens and the docs rows it scores: their
    // page init comes with the dictionary, not in a wave of its own per query.
    let invert_pages = search_init_pages(&invert, &["_posting", "_length"]);
    let docs_pages = search_init_pages(&docs, &[]);
    let (batch, (), ()) = futures::try_join!(
        tokens.read_rows(&columns, &rows, stats),
        invert.prefetch_page_inits(&invert_pages, stats),
        docs.prefetch_page_inits(&docs_pages, stats),
    )?;
    let set = if meta.fst {
        decode_fst(&batch)
    } else {
        decode_arrow(&batch)
    };
    let set = set.map_err(|e| e.at(tokens.path().as_ref(), None))?;
    let total_tokens = docs
        .schema()
        .metadata
        .get("total_tokens")
        .ok_or_else(|| bad(&docs, "no `total_tokens` metadata"))?
        .parse::<u64>()
        .map_err(|_| bad(&docs, "`total_tokens` is not a number"))?;
    Ok(Partition {
        id,
        tokens: Arc::new(set),
        num_docs: docs.num_rows(),
        num_tokens: invert.num_rows(),
        total_tokens,
        invert,
        docs,
        kind: PartitionKind::Blocks(meta.layout),
    })
}

/// `(column, page)` of the pages of fields `names` of `file` (every field when empty) whose
/// reads need page init: none when there are more than [`MAX_PREFETCHED_INITS`] (the
/// searches then read the init of the pages they touch).
fn search_init_pages(file: &DataFileReader, names: &[&str]) -> Vec<(usize, usize)> {
    let fields = if names.is_empty() {
        None
    } else {
        match file.field_indices(names) {
            Ok(fields) => Some(fields),
            Err(_) => return Vec::new(),
        }
    };
    file.pages_needing_init(fields.as_deref(), 0, MAX_PREFETCHED_INITS)
}

/// Open the older single-partition layout.
async fn open_legacy(
    dataset: &DatasetVersion,
    segment: &IndexSegment,
    stats: &IoStats,
) -> Result<FtsSegment> {
    let (tokens, invert, docs) = futures::try_join!(
        dataset.open_index_file(segment, LEGACY_TOKENS, stats),
        dataset.open_index_file(segment, LEGACY_INVERT, stats),
        dataset.open_index_file(segment, LEGACY_DOCS, stats),
    )?;
    let params = match tokens.schema().metadata.get("tokenizer") {
        Some(json) => {
            parse_params(json, "tokens.lance").map_err(|e| e.at(tokens.path().as_ref(), None))?
        }
        None => TokenizerParams::default(),
    };
    let columns: Vec<usize> = (0..tokens.schema().fields.len()).collect();
    let batch = tokens
        .read_rows(&columns, &RowSelection::Range(0..tokens.num_rows()), stats)
        .await?;
    let set = decode_arrow(&batch).map_err(|e| e.at(tokens.path().as_ref(), None))?;
    let offsets = legacy_offsets(&invert)?;
    let num_tokens = offsets.len() as u64 - 1;
    let lengths = super::read::legacy_doc_lengths(&docs, stats).await?;
    let total_tokens = lengths.values().map(|n| u64::from(*n)).sum();
    Ok(FtsSegment {
        segment: segment.clone(),
        params,
        deleted_fragments: RoaringBitmap::new(),
        partitions: vec![Partition {
            id: 0,
            tokens: Arc::new(set),
            num_docs: docs.num_rows(),
            total_tokens,
            num_tokens,
            invert,
            docs,
            kind: PartitionKind::Legacy {
                offsets,
                lengths: Arc::new(lengths),
            },
        }],
        format_version: 0,
    })
}

/// The older layout's posting offsets (schema metadata `offsets`), validated ascending and
/// within the invert file, with the row count appended.
fn legacy_offsets(invert: &DataFileReader) -> Result<Vec<u64>> {
    let text = invert
        .schema()
        .metadata
        .get("offsets")
        .ok_or_else(|| bad(invert, "no `offsets` metadata"))?;
    let mut offsets: Vec<u64> = serde_json::from_str(text)
        .map_err(|e| bad(invert, "`offsets` is not a JSON list of u64").with_source(e))?;
    offsets.push(invert.num_rows());
    if offsets.windows(2).any(|w| w[1] < w[0]) {
        return Err(bad(
            invert,
            "`offsets` are not ascending within the file's rows",
        ));
    }
    Ok(offsets)
}
