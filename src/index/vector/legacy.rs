//! Legacy (v1) IVF_PQ index files: pylance's default before 0.25 (and `index_file_version=
//! "Legacy"` since). One `index.idx`: per partition its PQ codes (row-major, one byte per
//! sub-vector) then its row ids (u64), partitions at the byte offsets of the IVF stage;
//! then, at the footer's metadata position, a length-prefixed protobuf `Index` whose
//! `VectorIndex` holds the stages IVF (centroids, partition offsets and lengths) and PQ
//! (codebook). The last 16 bytes are `u64 metadata position, u16 0, u16 1, "LANC"`: a
//! major version 0 tells it from a v3 index (Lance 2.x file).
//!
//! The decoders are pure and check every offset and length against the file size before
//! they size anything; [`open`] and [`read_partitions`] do the I/O (one suffix read that
//! usually holds the metadata; one wave for the probed partitions).

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use object_store::path::Path;
use prost::Message;

use super::format::{
    decode_matrix, IndexHeader, IvfProto, Matrix, Metric, ProductQuantizer, Quantizer, SubIndex,
    TensorProto,
};
use super::partition::{Codes, Partition};
use crate::error::{Error, Result};
use crate::io::fetch::{RangeFetcher, ReadRequest, Tail};
use crate::io::{IoStats, ObjectVersion};
use crate::lance::dataset::{DatasetVersion, IndexSegment};
use crate::lance::file::DEFAULT_TAIL_BYTES;

/// Bytes of the footer.
const FOOTER: usize = 16;
/// Largest metadata message accepted (a codebook of 256 × 64k f32 values is 64 MiB).
const MAX_METADATA: u64 = 256 << 20;

/// `lance.index.pb.Index`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct IndexProto {
    /// Index name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Indexed columns.
    #[prost(string, repeated, tag = "2")]
    pub columns: Vec<String>,
    /// Dataset version the index was built on.
    #[prost(uint64, tag = "3")]
    pub dataset_version: u64,
    /// `VECTOR = 0`.
    #[prost(int32, tag = "4")]
    pub index_type: i32,
    /// The vector index.
    #[prost(message, optional, tag = "5")]
    pub vector_index: Option<VectorIndexProto>,
}

/// `lance.index.pb.VectorIndex`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct VectorIndexProto {
    /// Format version of the spec.
    #[prost(uint32, tag = "1")]
    pub spec_version: u32,
    /// Vector dimension.
    #[prost(uint32, tag = "2")]
    pub dimension: u32,
    /// The stages, applied in order.
    #[prost(message, repeated, tag = "3")]
    pub stages: Vec<StageProto>,
    /// `L2 = 0, COSINE = 1, DOT = 2, HAMMING = 3`.
    #[prost(int32, tag = "4")]
    pub metric_type: i32,
}

/// `lance.index.pb.VectorIndexStage` (its `oneof` as optional fields).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct StageProto {
    /// An OPQ transform (not read).
    #[prost(bytes = "vec", optional, tag = "1")]
    pub transform: Option<Vec<u8>>,
    /// The IVF stage.
    #[prost(message, optional, tag = "2")]
    pub ivf: Option<IvfProto>,
    /// The PQ stage.
    #[prost(message, optional, tag = "3")]
    pub pq: Option<PqProto>,
    /// A DiskANN stage (removed from lance).
    #[prost(bytes = "vec", optional, tag = "4")]
    pub diskann: Option<Vec<u8>>,
}

/// `lance.index.pb.PQ`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct PqProto {
    /// Bits per code.
    #[prost(uint32, tag = "1")]
    pub num_bits: u32,
    /// Sub-vectors.
    #[prost(uint32, tag = "2")]
    pub num_sub_vectors: u32,
    /// Vector dimension.
    #[prost(uint32, tag = "3")]
    pub dimension: u32,
    /// Deprecated f32 codebook.
    #[prost(float, repeated, tag = "4")]
    pub codebook: Vec<f32>,
    /// The codebook `[2^bits, dimension]`.
    #[prost(message, optional, tag = "5")]
    pub codebook_tensor: Option<TensorProto>,
}

/// Where a Lance-style footer says the file's metadata is, and which format it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Footer {
    /// A legacy (v1) index: the metadata (length-prefixed `Index`) at this position.
    Legacy {
        /// Byte position of the length prefix.
        metadata_pos: u64,
    },
    /// A Lance 2.x file (a v3 index file).
    V2,
}

/// Tell the versions apart from the last bytes of a file of `size` bytes.
pub(crate) fn footer(last: &[u8], size: u64) -> Result<Footer> {
    let Some(f) = last.len().checked_sub(FOOTER).map(|at| &last[at..]) else {
        return Err(Error::corrupt(format!(
            "{} bytes: no Lance footer",
            last.len()
        )));
    };
    if &f[12..16] != b"LANC" {
        return Err(Error::corrupt(
            "the file does not end with the Lance magic \"LANC\"",
        ));
    }
    // Legacy index files end with version 0.1 (Lance v1's 0.2 accepted too); Lance 2.0
    // files end with 0.3, later ones with 2.x.
    let (major, minor) = (
        u16::from_le_bytes([f[8], f[9]]),
        u16::from_le_bytes([f[10], f[11]]),
    );
    if major != 0 || minor > 2 {
        return Ok(Footer::V2);
    }
    let metadata_pos = u64::from_le_bytes(f[..8].try_into().unwrap_or([0; 8]));
    if metadata_pos
        .checked_add(4)
        .is_none_or(|end| end > size - FOOTER as u64)
    {
        return Err(Error::corrupt(format!(
            "legacy index metadata at byte {metadata_pos} of a {size}-byte file"
        )));
    }
    Ok(Footer::Legacy { metadata_pos })
}

/// A decoded legacy index: what a query needs before reading partitions.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LegacyIndex {
    /// Type (`IVF_PQ`), metric and centroids.
    pub header: IndexHeader,
    /// The product quantizer (codes row-major).
    pub pq: ProductQuantizer,
    /// Byte range of each partition (codes then row ids).
    pub byte_ranges: Vec<Range<u64>>,
    /// Rows of each partition, as consecutive row ranges.
    pub rows: Vec<Range<u64>>,
}

/// Decode the metadata message `bytes` (without its length prefix) of a legacy index file
/// whose partitions must end by `metadata_pos`.
pub(crate) fn decode_index(bytes: &[u8], metadata_pos: u64) -> Result<LegacyIndex> {
    let index = IndexProto::decode(bytes).map_err(|e| {
        Error::corrupt(format!(
            "legacy index metadata is not an Index message: {e}"
        ))
        .with_source(e)
    })?;
    let vi = index
        .vector_index
        .ok_or_else(|| Error::corrupt("legacy index metadata holds no vector index"))?;
    let metric = match vi.metric_type {
        0 => Metric::L2,
        other @ 1..=3 => {
            // Only L2 is verified against pylance's answers (the fixtures' legacy indices).
            let name = ["cosine", "dot", "hamming"][other as usize - 1];
            return Err(Error::unsupported(format!(
                "legacy (v1) IVF_PQ with the {name} metric (lakeseek reads legacy L2 indices)"
            )));
        }
        other => return Err(Error::corrupt(format!("legacy index metric type {other}"))),
    };
    let (ivf, pq) = match &vi.stages[..] {
        [StageProto { ivf: Some(ivf), .. }, StageProto { pq: Some(pq), .. }] => (ivf, pq),
        _ => {
            return Err(Error::unsupported(format!(
                "legacy vector index with stages {} (lakeseek reads IVF then PQ)",
                stage_names(&vi.stages)
            )))
        }
    };
    let centroids = legacy_centroids(ivf)?;
    let pq = legacy_pq(pq, centroids.dim)?;
    let (byte_ranges, rows) = partition_layout(ivf, centroids.rows, pq.code_bytes(), metadata_pos)?;
    Ok(LegacyIndex {
        header: IndexHeader {
            index_type: "IVF_PQ".to_string(),
            metric,
            sub_index: SubIndex::Flat,
            centroids,
        },
        pq,
        byte_ranges,
        rows,
    })
}

fn stage_names(stages: &[StageProto]) -> String {
    let names: Vec<&str> = stages
        .iter()
        .map(|s| match s {
            StageProto { ivf: Some(_), .. } => "IVF",
            StageProto { pq: Some(_), .. } => "PQ",
            StageProto {
                transform: Some(_), ..
            } => "transform (OPQ)",
            StageProto {
                diskann: Some(_), ..
            } => "DiskANN",
            _ => "unknown",
        })
        .collect();
    format!("[{}]", names.join(", "))
}

fn legacy_centroids(ivf: &IvfProto) -> Result<Matrix> {
    let tensor = ivf
        .centroids_tensor
        .as_ref()
        .ok_or_else(|| Error::corrupt("legacy IVF stage has no centroids tensor"))?;
    let m = decode_matrix(tensor, "legacy IVF centroids")?;
    if m.rows == 0 || m.rows != ivf.lengths.len() || m.rows != ivf.offsets.len() {
        return Err(Error::corrupt(format!(
            "legacy IVF stage: {} centroids, {} lengths, {} offsets",
            m.rows,
            ivf.lengths.len(),
            ivf.offsets.len()
        )));
    }
    Ok(m)
}

fn legacy_pq(pq: &PqProto, dim: usize) -> Result<ProductQuantizer> {
    let m = pq.num_sub_vectors as usize;
    if pq.num_bits != 8 {
        return Err(Error::unsupported(format!(
            "legacy IVF_PQ with {}-bit codes (8 expected)",
            pq.num_bits
        )));
    }
    if m == 0 || pq.dimension as usize != dim || !dim.is_multiple_of(m) {
        return Err(Error::corrupt(format!(
            "legacy PQ stage: {m} sub-vectors of dimension {}, centroids of dimension {dim}",
            pq.dimension
        )));
    }
    let tensor = pq
        .codebook_tensor
        .as_ref()
        .ok_or_else(|| Error::corrupt("legacy PQ stage has no codebook tensor"))?;
    let book = decode_matrix(tensor, "legacy PQ codebook")?;
    if book.rows != 256 || book.dim != dim {
        return Err(Error::corrupt(format!(
            "legacy PQ codebook of shape [{}, {}], [256, {dim}] expected",
            book.rows, book.dim
        )));
    }
    Ok(ProductQuantizer {
        dim,
        num_sub_vectors: m,
        num_bits: 8,
        transposed: false,
        codebook: book.values,
    })
}

type Layout = (Vec<Range<u64>>, Vec<Range<u64>>);

/// Byte and row ranges of the partitions: each `rows * (code bytes + 8)` bytes at its
/// offset, inside the data before the metadata, not overlapping.
fn partition_layout(ivf: &IvfProto, n: usize, code_bytes: usize, end: u64) -> Result<Layout> {
    let (mut bytes, mut rows) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut next_row = 0u64;
    for (p, (&offset, &len)) in ivf.offsets.iter().zip(&ivf.lengths).enumerate() {
        let size = u64::from(len) * (code_bytes as u64 + 8);
        let range = offset..offset.saturating_add(size);
        if range.end > end || offset.checked_add(size).is_none() {
            return Err(Error::corrupt(format!(
                "legacy partition {p} (bytes {}..{}) runs past the data, which ends at byte {end}",
                range.start, range.end
            )));
        }
        rows.push(next_row..next_row + u64::from(len));
        next_row += u64::from(len);
        bytes.push(range);
    }
    let mut sorted: Vec<&Range<u64>> = bytes.iter().filter(|r| !r.is_empty()).collect();
    sorted.sort_by_key(|r| r.start);
    if sorted.windows(2).any(|w| w[0].end > w[1].start) {
        return Err(Error::corrupt("legacy partitions overlap"));
    }
    Ok((bytes, rows))
}

/// Decode one partition's bytes: `rows` PQ code rows, then `rows` u64 row ids.
pub(crate) fn decode_partition(
    bytes: &[u8],
    rows: usize,
    pq: &ProductQuantizer,
) -> Result<Partition> {
    let codes_len = rows.checked_mul(pq.code_bytes());
    let total = codes_len.and_then(|c| rows.checked_mul(8).and_then(|r| c.checked_add(r)));
    let (Some(codes_len), Some(total)) = (codes_len, total) else {
        return Err(Error::corrupt(format!("legacy partition of {rows} rows")));
    };
    if bytes.len() != total {
        return Err(Error::corrupt(format!(
            "legacy partition of {rows} rows is {} bytes, {total} expected",
            bytes.len()
        )));
    }
    let row_ids = bytes[codes_len..]
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect();
    Ok(Partition {
        row_ids,
        codes: Codes::Pq(bytes[..codes_len].to_vec()),
        graph: None,
    })
}

/// An opened legacy index file.
#[derive(Debug, Clone)]
pub(crate) struct LegacyFile {
    /// Object path of `index.idx`.
    pub path: Path,
    /// Its size.
    pub size: u64,
    /// Byte range of each partition.
    pub byte_ranges: Vec<Range<u64>>,
    /// The dataset's fetcher.
    pub fetcher: RangeFetcher,
}

/// Suffix-read `index.idx` of `segment` (no HEAD: a size from the manifest or none).
pub(crate) async fn read_tail(
    dataset: &DatasetVersion,
    path: &Path,
    size: Option<u64>,
    stats: &IoStats,
) -> Result<Tail> {
    let known = size.map(|size| ObjectVersion { size, etag: None });
    dataset
        .store()
        .fetcher
        .tail_of(path, DEFAULT_TAIL_BYTES, known.as_ref(), stats)
        .await
}

/// Open the legacy index of `segment` from the `tail` of its `index.idx` whose footer put
/// its metadata at `metadata_pos` (read again only when the tail does not hold it).
pub(crate) async fn open(
    dataset: &DatasetVersion,
    segment: &IndexSegment,
    path: Path,
    tail: Tail,
    metadata_pos: u64,
    stats: &IoStats,
) -> Result<(LegacyIndex, Arc<LegacyFile>)> {
    let size = tail.version.size;
    let at = |e: Error| e.at(path.as_ref(), Some(metadata_pos..size));
    let meta_end = size - FOOTER as u64;
    if meta_end - metadata_pos > MAX_METADATA {
        return Err(at(Error::corrupt(format!(
            "legacy index metadata of {} bytes",
            meta_end - metadata_pos
        ))));
    }
    let meta = match tail.slice(metadata_pos..meta_end) {
        Some(b) => b,
        None => {
            let request = ReadRequest::sized(path.clone(), metadata_pos..meta_end, size);
            let mut got = dataset.store().fetcher.fetch(&[request], stats).await?;
            got.pop().unwrap_or_default()
        }
    };
    let msg = length_prefixed(&meta).map_err(at)?;
    let index = decode_index(msg, metadata_pos).map_err(at)?;
    let _ = segment;
    let file = LegacyFile {
        path,
        size,
        byte_ranges: index.byte_ranges.clone(),
        fetcher: dataset.store().fetcher.clone(),
    };
    Ok((index, Arc::new(file)))
}

/// The message after a u32 length prefix, which must fill `meta`.
fn length_prefixed(meta: &Bytes) -> Result<&[u8]> {
    let len = meta
        .get(..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .ok_or_else(|| Error::corrupt("legacy index metadata shorter than its length prefix"))?;
    meta.get(4..4 + len)
        .filter(|m| 4 + m.len() <= meta.len())
        .ok_or_else(|| {
            Error::corrupt(format!(
                "legacy index metadata of {len} bytes in {} bytes",
                meta.len().saturating_sub(4)
            ))
        })
}

/// Read and decode `partitions` (ids; rows per partition in `rows`) of `file` in one wave.
pub(crate) async fn read_partitions(
    file: &LegacyFile,
    rows: &[Range<u64>],
    quantizer: &Quantizer,
    partitions: &[usize],
    stats: &IoStats,
) -> Result<Vec<Partition>> {
    let Quantizer::Pq(pq) = quantizer else {
        return Err(Error::corrupt("internal: legacy index without PQ"));
    };
    let ranges: Vec<Range<u64>> = partitions
        .iter()
        .map(|&p| file.byte_ranges.get(p).cloned().unwrap_or(0..0))
        .collect();
    let requests: Vec<ReadRequest> = ranges
        .iter()
        .filter(|r| !r.is_empty())
        .map(|r| ReadRequest::sized(file.path.clone(), r.clone(), file.size))
        .collect();
    let mut got = if requests.is_empty() {
        Vec::new()
    } else {
        file.fetcher.fetch(&requests, stats).await?
    }
    .into_iter();
    let mut out = Vec::with_capacity(partitions.len());
    for (&p, range) in partitions.iter().zip(&ranges) {
        let n = rows.get(p).map_or(0, |r| (r.end - r.start) as usize);
        let bytes = if range.is_empty() {
            Bytes::new()
        } else {
            got.next().unwrap_or_default()
        };
        let part = decode_partition(&bytes, n, pq).map_err(|e| {
            e.context(format!("partition {p}"))
                .at(file.path.as_ref(), Some(range.clone()))
        })?;
        out.push(part);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(rows: u32, dim: u32) -> TensorProto {
        TensorProto {
            data_type: 2,
            shape: vec![rows, dim],
            data: vec![0; (rows * dim * 4) as usize],
        }
    }

    /// An `Index` of 2 partitions of dimension 4, 2 sub-vectors.
    fn index(lengths: Vec<u32>, offsets: Vec<u64>, stages: usize) -> Vec<u8> {
        let ivf = StageProto {
            ivf: Some(IvfProto {
                offsets,
                lengths,
                centroids_tensor: Some(tensor(2, 4)),
                ..Default::default()
            }),
            ..Default::default()
        };
        let pq = StageProto {
            pq: Some(PqProto {
                num_bits: 8,
                num_sub_vectors: 2,
                dimension: 4,
                codebook_tensor: Some(tensor(256, 4)),
                ..Default::default()
            }),
            ..Default::default()
        };
        IndexProto {
            name: "i".into(),
            vector_index: Some(VectorIndexProto {
                dimension: 4,
                stages: [ivf, pq].into_iter().take(stages).collect(),
                ..Default::default()
            }),
            ..Default::default()
        }
        .encode_to_vec()
    }

    #[test]
    fn the_footer_tells_the_versions_apart() {
        let mut legacy = vec![0u8; 40];
        legacy.extend_from_slice(&20u64.to_le_bytes());
        legacy.extend_from_slice(&[0, 0, 1, 0]);
        legacy.extend_from_slice(b"LANC");
        assert_eq!(
            footer(&legacy, 56).unwrap(),
            Footer::Legacy { metadata_pos: 20 }
        );
        // Metadata past the end, no magic, too short.
        assert!(footer(&legacy, 30).is_err());
        for version in [[2, 0, 2, 0], [0, 0, 3, 0]] {
            let mut v2 = legacy.clone();
            v2[48..52].copy_from_slice(&version);
            assert_eq!(footer(&v2, 56).unwrap(), Footer::V2);
        }
        let mut bad = legacy.clone();
        bad[55] = b'X';
        assert!(footer(&bad, 56).is_err());
        assert!(footer(&legacy[..10], 10).is_err());
    }

    #[test]
    fn partitions_are_checked_against_the_data() {
        // 3 + 2 rows of 2 code bytes + 8 row id bytes: 30 + 20 bytes.
        let ok = decode_index(&index(vec![3, 2], vec![0, 30], 2), 50).unwrap();
        assert_eq!(ok.byte_ranges, vec![0..30, 30..50]);
        assert_eq!(ok.rows, vec![0..3, 3..5]);
        assert_eq!(ok.header.index_type, "IVF_PQ");
        for (lengths, offsets, end) in [
            (vec![3, 2], vec![0, 30], 49), // past the data
            (vec![3, 2], vec![0, 20], 60), // overlapping
            (vec![3], vec![0], 60),        // fewer lengths than centroids
            (vec![u32::MAX, 1], vec![0, u64::MAX], u64::MAX),
        ] {
            let err = decode_index(&index(lengths, offsets, 2), end).unwrap_err();
            assert!(matches!(err, Error::Corrupt { .. }), "{err}");
        }
        let one_stage = decode_index(&index(vec![3, 2], vec![0, 30], 1), 50).unwrap_err();
        assert!(
            matches!(one_stage, Error::Unsupported { .. }),
            "{one_stage}"
        );
        assert!(decode_index(b"\xff\xff\xff", 50).is_err());
    }

    #[test]
    fn a_partition_is_codes_then_row_ids() {
        let pq = ProductQuantizer {
            dim: 4,
            num_sub_vectors: 2,
            num_bits: 8,
            transposed: false,
            codebook: vec![0.0; 256 * 4],
        };
        let mut bytes = vec![1, 2, 3, 4];
        bytes.extend_from_slice(&7u64.to_le_bytes());
        bytes.extend_from_slice(&(1u64 << 32).to_le_bytes());
        let part = decode_partition(&bytes, 2, &pq).unwrap();
        assert_eq!(part.row_ids, vec![7, 1 << 32]);
        assert_eq!(part.codes, Codes::Pq(vec![1, 2, 3, 4]));
        assert!(decode_partition(&bytes[1..], 2, &pq).is_err());
        assert!(decode_partition(&bytes, usize::MAX, &pq).is_err());
    }
}
