//! Pure decoders of a v3 vector index's metadata: the `lance:index` JSON and the IVF
//! global buffer of `index.idx` (type, metric, centroids), and the `lance:ivf` buffer and
//! `storage_metadata` JSON of `auxiliary.idx` (partition row ranges, quantizer, codebook).
//!
//! Every count, length and offset is checked against the bytes and the file's row count
//! before it sizes anything: malformed input is `Error::Corrupt` (the caller names the
//! file with [`Error::at`]).

use std::collections::HashMap;
use std::ops::Range;

use half::f16;
use prost::Message;

use crate::error::{Error, Result};

/// Schema metadata key of `index.idx`: `{"type": …, "distance_type": …}`.
pub(crate) const INDEX_METADATA_KEY: &str = "lance:index";
/// Schema metadata key naming the global buffer of the IVF message.
pub(crate) const IVF_METADATA_KEY: &str = "lance:ivf";
/// Schema metadata key of `auxiliary.idx`: a JSON array holding one JSON string.
pub(crate) const STORAGE_METADATA_KEY: &str = "storage_metadata";
/// Largest partition count accepted (lance writes at most 4096; a margin for the future).
const MAX_PARTITIONS: usize = 1 << 20;
/// Largest vector dimension accepted.
const MAX_DIMENSION: usize = 1 << 16;

/// `lance.index.pb.Tensor`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct TensorProto {
    /// BFLOAT16 = 0, FLOAT16 = 1, FLOAT32 = 2, FLOAT64 = 3, UINT8 = 4, …
    #[prost(int32, tag = "1")]
    pub data_type: i32,
    /// Shape, outermost first.
    #[prost(uint32, repeated, tag = "2")]
    pub shape: Vec<u32>,
    /// Little-endian values.
    #[prost(bytes = "vec", tag = "3")]
    pub data: Vec<u8>,
}

/// `lance.index.pb.IVF`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct IvfProto {
    /// Deprecated f32 centroids.
    #[prost(float, repeated, tag = "1")]
    pub centroids: Vec<f32>,
    /// Row offset of each partition (may be empty: prefix sums of `lengths`).
    #[prost(uint64, repeated, tag = "2")]
    pub offsets: Vec<u64>,
    /// Rows of each partition.
    #[prost(uint32, repeated, tag = "3")]
    pub lengths: Vec<u32>,
    /// Centroids `[partitions, dim]`.
    #[prost(message, optional, tag = "4")]
    pub centroids_tensor: Option<TensorProto>,
    /// KMeans loss.
    #[prost(double, optional, tag = "5")]
    pub loss: Option<f64>,
}

/// A vector distance, as lance names it in `distance_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Metric {
    /// Squared Euclidean distance.
    L2,
    /// `1 - cos(a, b)`.
    Cosine,
    /// `1 - a·b`.
    Dot,
    /// Bit differences (binary vectors).
    Hamming,
}

impl Metric {
    /// Parse lance's name (`l2`, `euclidean`, `cosine`, `dot`, `hamming`; any case).
    pub(crate) fn parse(name: &str) -> Result<Self> {
        match name.to_ascii_lowercase().as_str() {
            "l2" | "euclidean" => Ok(Self::L2),
            "cosine" => Ok(Self::Cosine),
            "dot" => Ok(Self::Dot),
            "hamming" => Ok(Self::Hamming),
            other => Err(Error::corrupt(format!("unknown distance type {other:?}"))),
        }
    }

    /// Lance's name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::L2 => "l2",
            Self::Cosine => "cosine",
            Self::Dot => "dot",
            Self::Hamming => "hamming",
        }
    }
}

/// The sub-index inside each partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SubIndex {
    /// A flat scan of the partition's storage.
    Flat,
    /// An HNSW graph per partition (rows of `index.idx`).
    Hnsw,
}

/// A dense row-major matrix of f32 values.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Matrix {
    /// Rows.
    pub rows: usize,
    /// Columns (the vector dimension).
    pub dim: usize,
    /// `rows * dim` values.
    pub values: Vec<f32>,
}

impl Matrix {
    /// Row `i`.
    pub(crate) fn row(&self, i: usize) -> &[f32] {
        &self.values[i * self.dim..(i + 1) * self.dim]
    }
}

/// What `index.idx` says: the index type, metric, sub-index and IVF centroids.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct IndexHeader {
    /// `IVF_PQ`, `IVF_FLAT`, `IVF_HNSW_SQ`, …
    pub index_type: String,
    /// The metric the index was built for.
    pub metric: Metric,
    /// The sub-index kind.
    pub sub_index: SubIndex,
    /// The IVF centroids, one row per partition.
    pub centroids: Matrix,
}

/// The quantizer of `auxiliary.idx`, with what it needs to score a partition.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Quantizer {
    /// Raw vectors in column `flat`.
    Flat {
        /// Vector dimension.
        dim: usize,
    },
    /// Product quantization: codes in `__pq_code`.
    Pq(ProductQuantizer),
    /// Scalar quantization: one u8 per dimension in `__sq_code`.
    Sq {
        /// Vector dimension.
        dim: usize,
        /// The one global value range the codes map.
        bounds: Range<f64>,
    },
    /// RaBitQ: binary (and extended) codes in `_rabit_codes` and its factor columns.
    Rq(super::rq::RabitQuantizer),
}

/// A product quantizer and its codebook.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ProductQuantizer {
    /// Vector dimension.
    pub dim: usize,
    /// Sub-vectors per vector.
    pub num_sub_vectors: usize,
    /// Bits per code (8 or 4).
    pub num_bits: u32,
    /// Whether each partition's codes are stored column-major (sub-vector major).
    pub transposed: bool,
    /// Codebook `[num_sub_vectors][2^num_bits][dim / num_sub_vectors]`.
    pub codebook: Vec<f32>,
}

impl ProductQuantizer {
    /// Codewords per sub-vector.
    pub(crate) fn num_centroids(&self) -> usize {
        1 << self.num_bits
    }

    /// Values per sub-vector.
    pub(crate) fn sub_dim(&self) -> usize {
        self.dim / self.num_sub_vectors
    }

    /// Stored bytes per row.
    pub(crate) fn code_bytes(&self) -> usize {
        if self.num_bits == 4 {
            self.num_sub_vectors.div_ceil(2)
        } else {
            self.num_sub_vectors
        }
    }
}

/// The quantizer column and metadata of `auxiliary.idx`, before its global buffers are read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum StorageSpec {
    /// Raw vectors.
    Flat {
        /// Vector dimension.
        dim: usize,
    },
    /// PQ: where the codebook is.
    Pq {
        /// Vector dimension.
        dim: usize,
        /// Sub-vectors.
        num_sub_vectors: usize,
        /// Bits per code.
        num_bits: u32,
        /// Codes stored column-major per partition.
        transposed: bool,
        /// Raw global buffer index of the codebook tensor (`None`: inline in the JSON).
        codebook_buffer: Option<usize>,
        /// The inline codebook tensor bytes (old v3 files).
        inline_codebook: Vec<u8>,
    },
    /// SQ.
    Sq {
        /// Vector dimension.
        dim: usize,
        /// Bits per code (8).
        num_bits: u32,
        /// Value range.
        bounds: Range<f64>,
    },
    /// RaBitQ (no global buffer with the "fast" rotation).
    Rq(super::rq::RabitQuantizer),
}

impl StorageSpec {
    /// The quantizer's code column name in `auxiliary.idx`.
    pub(crate) fn code_column(&self) -> &'static str {
        match self {
            Self::Flat { .. } => "flat",
            Self::Pq { .. } => "__pq_code",
            Self::Sq { .. } => "__sq_code",
            Self::Rq(_) => super::rq::CODE_COLUMN,
        }
    }

    /// Vector dimension (RaBitQ: the rotated dimension, which may pad the vectors').
    pub(crate) fn dim(&self) -> usize {
        match self {
            Self::Flat { dim } | Self::Pq { dim, .. } | Self::Sq { dim, .. } => *dim,
            Self::Rq(rq) => rq.code_dim,
        }
    }
}

/// The raw global-buffer index named by `lance:ivf` (raw GBO entry; 0 is the schema).
pub(crate) fn ivf_buffer_index(metadata: &HashMap<String, String>) -> Result<usize> {
    let text = metadata
        .get(IVF_METADATA_KEY)
        .ok_or_else(|| Error::corrupt(format!("schema metadata has no {IVF_METADATA_KEY:?}")))?;
    let index: usize = text.trim().parse().map_err(|_| {
        Error::corrupt(format!(
            "{IVF_METADATA_KEY:?} is {text:?}, not a buffer index"
        ))
    })?;
    if index == 0 {
        return Err(Error::corrupt(format!(
            "{IVF_METADATA_KEY:?} names global buffer 0 (the file's schema)"
        )));
    }
    Ok(index)
}

#[derive(serde::Deserialize)]
struct IndexMetadataJson {
    #[serde(rename = "type")]
    index_type: String,
    distance_type: String,
}

/// Decode `index.idx`: its schema metadata and the bytes of its IVF buffer.
pub(crate) fn decode_index_header(
    metadata: &HashMap<String, String>,
    ivf_bytes: &[u8],
) -> Result<IndexHeader> {
    let text = metadata
        .get(INDEX_METADATA_KEY)
        .ok_or_else(|| Error::corrupt(format!("schema metadata has no {INDEX_METADATA_KEY:?}")))?;
    let json: IndexMetadataJson = serde_json::from_str(text).map_err(|e| {
        Error::corrupt(format!(
            "{INDEX_METADATA_KEY:?} is not index metadata JSON: {e}"
        ))
        .with_source(e)
    })?;
    let metric = Metric::parse(&json.distance_type)?;
    let sub_index = if metadata.contains_key("lance:hnsw") {
        SubIndex::Hnsw
    } else if metadata.contains_key("lance:flat") {
        SubIndex::Flat
    } else {
        return Err(Error::corrupt(
            "schema metadata names no sub-index (neither \"lance:flat\" nor \"lance:hnsw\")",
        ));
    };
    let ivf = decode_ivf(ivf_bytes)?;
    let centroids = centroids_of(&ivf)?;
    let per_partition = metadata
        .get(if sub_index == SubIndex::Flat {
            "lance:flat"
        } else {
            "lance:hnsw"
        })
        .map(|t| serde_json::from_str::<Vec<String>>(t).map(|v| v.len()));
    if let Some(Ok(n)) = per_partition {
        if n != centroids.rows {
            return Err(Error::corrupt(format!(
                "sub-index metadata lists {n} partitions, the IVF has {} centroids",
                centroids.rows
            )));
        }
    }
    Ok(IndexHeader {
        index_type: json.index_type,
        metric,
        sub_index,
        centroids,
    })
}

/// Decode an `IVF` protobuf message.
pub(crate) fn decode_ivf(bytes: &[u8]) -> Result<IvfProto> {
    IvfProto::decode(bytes).map_err(|e| {
        Error::corrupt(format!("IVF buffer is not an IVF message: {e}")).with_source(e)
    })
}

/// The centroids of an IVF message (the tensor, or the deprecated f32 list).
fn centroids_of(ivf: &IvfProto) -> Result<Matrix> {
    let tensor = ivf
        .centroids_tensor
        .as_ref()
        .ok_or_else(|| Error::corrupt("IVF message of index.idx has no centroids"))?;
    let matrix = decode_matrix(tensor, "IVF centroids")?;
    if matrix.rows == 0 || matrix.rows > MAX_PARTITIONS {
        return Err(Error::corrupt(format!(
            "IVF centroids: {} partitions (1..={MAX_PARTITIONS} expected)",
            matrix.rows
        )));
    }
    Ok(matrix)
}

/// A 2-D float tensor as a matrix of f32 (f16, f32 and f64 data).
pub(crate) fn decode_matrix(tensor: &TensorProto, what: &str) -> Result<Matrix> {
    let [rows, dim] = tensor.shape[..] else {
        return Err(Error::corrupt(format!(
            "{what}: tensor of shape {:?}, 2 dimensions expected",
            tensor.shape
        )));
    };
    let (rows, dim) = (rows as usize, dim as usize);
    if dim == 0 || dim > MAX_DIMENSION {
        return Err(Error::corrupt(format!("{what}: dimension {dim}")));
    }
    let width = match tensor.data_type {
        1 => 2,
        2 => 4,
        3 => 8,
        // uint8: the centroids of a hamming index (binary vectors).
        4 => 1,
        other => {
            return Err(Error::corrupt(format!(
                "{what}: tensor data type {other} (f16, f32, f64 or uint8 expected)"
            )))
        }
    };
    let expected = rows.checked_mul(dim).and_then(|n| n.checked_mul(width));
    if expected != Some(tensor.data.len()) {
        return Err(Error::corrupt(format!(
            "{what}: tensor of shape [{rows}, {dim}] holds {} bytes, {} expected",
            tensor.data.len(),
            expected.map_or("too many".to_string(), |n| n.to_string())
        )));
    }
    let values = floats_of(&tensor.data, width);
    Ok(Matrix { rows, dim, values })
}

/// Little-endian floats of `width` bytes (2, 4 or 8; 1: uint8 values) as f32.
fn floats_of(data: &[u8], width: usize) -> Vec<f32> {
    match width {
        1 => data.iter().map(|&b| f32::from(b)).collect(),
        2 => data
            .chunks_exact(2)
            .map(|c| f16::from_le_bytes([c[0], c[1]]).to_f32())
            .collect(),
        4 => data
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
        _ => data
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])) as f32)
            .collect(),
    }
}

/// The row range of each partition in `auxiliary.idx` (its IVF message), checked against
/// the file's `num_rows`: ranges in order, adjacent, inside the file.
pub(crate) fn partition_ranges(ivf: &IvfProto, num_rows: u64) -> Result<Vec<Range<u64>>> {
    let n = ivf.lengths.len();
    if n == 0 || n > MAX_PARTITIONS {
        return Err(Error::corrupt(format!(
            "auxiliary IVF lists {n} partitions (1..={MAX_PARTITIONS} expected)"
        )));
    }
    if !ivf.offsets.is_empty() && ivf.offsets.len() != n {
        return Err(Error::corrupt(format!(
            "auxiliary IVF has {} offsets for {n} lengths",
            ivf.offsets.len()
        )));
    }
    let mut ranges = Vec::with_capacity(n);
    let mut next = 0u64;
    for (p, &len) in ivf.lengths.iter().enumerate() {
        let start = ivf.offsets.get(p).copied().unwrap_or(next);
        if start != next {
            return Err(Error::corrupt(format!(
                "partition {p} starts at row {start}, the previous one ends at row {next}"
            )));
        }
        next = start + u64::from(len);
        if next > num_rows {
            return Err(Error::corrupt(format!(
                "partition {p} (rows {start}..{next}) runs past the file's {num_rows} rows"
            )));
        }
        ranges.push(start..next);
    }
    if next != num_rows {
        return Err(Error::corrupt(format!(
            "partitions hold {next} rows, the file {num_rows}"
        )));
    }
    Ok(ranges)
}

#[derive(serde::Deserialize)]
struct PqMetadataJson {
    #[serde(default)]
    codebook_position: usize,
    nbits: u32,
    num_sub_vectors: usize,
    dimension: usize,
    #[serde(default)]
    codebook_tensor: Vec<u8>,
    #[serde(default)]
    transposed: bool,
}

#[derive(serde::Deserialize)]
struct SqBoundsJson {
    start: f64,
    end: f64,
}

#[derive(serde::Deserialize)]
struct SqMetadataJson {
    dim: usize,
    num_bits: u32,
    bounds: SqBoundsJson,
}

#[derive(serde::Deserialize)]
struct FlatMetadataJson {
    dim: usize,
}

/// Decode the `storage_metadata` of `auxiliary.idx`, given its quantizer column
/// (`flat`, `__pq_code` or `__sq_code`) and that column's fixed list width.
pub(crate) fn decode_storage_spec(
    metadata: &HashMap<String, String>,
    code_column: &str,
    code_width: usize,
) -> Result<StorageSpec> {
    let text = metadata.get(STORAGE_METADATA_KEY).ok_or_else(|| {
        Error::corrupt(format!("schema metadata has no {STORAGE_METADATA_KEY:?}"))
    })?;
    let bad = |e: serde_json::Error| {
        Error::corrupt(format!(
            "{STORAGE_METADATA_KEY:?} is not quantizer metadata: {e}"
        ))
        .with_source(e)
    };
    let outer: Vec<String> = serde_json::from_str(text).map_err(bad)?;
    let [inner] = &outer[..] else {
        return Err(Error::corrupt(format!(
            "{STORAGE_METADATA_KEY:?} holds {} entries, 1 expected",
            outer.len()
        )));
    };
    let spec = match code_column {
        "flat" => {
            let m: FlatMetadataJson = serde_json::from_str(inner).map_err(bad)?;
            StorageSpec::Flat { dim: m.dim }
        }
        "__pq_code" => pq_spec(serde_json::from_str(inner).map_err(bad)?)?,
        super::rq::CODE_COLUMN => StorageSpec::Rq(super::rq::decode_metadata(inner, code_width)?),
        "__sq_code" => {
            let m: SqMetadataJson = serde_json::from_str(inner).map_err(bad)?;
            if m.num_bits != 8
                || m.bounds
                    .start
                    .partial_cmp(&m.bounds.end)
                    .is_none_or(|o| o.is_gt())
            {
                return Err(Error::corrupt(format!(
                    "SQ metadata: {} bits, bounds {}..{} (8 bits, ordered bounds expected)",
                    m.num_bits, m.bounds.start, m.bounds.end
                )));
            }
            StorageSpec::Sq {
                dim: m.dim,
                num_bits: m.num_bits,
                bounds: m.bounds.start..m.bounds.end,
            }
        }
        other => {
            return Err(Error::unsupported(format!(
                "vector index storage with column {other:?} (flat, PQ, SQ and RQ are read)"
            )))
        }
    };
    check_code_width(&spec, code_width)?;
    Ok(spec)
}

fn pq_spec(m: PqMetadataJson) -> Result<StorageSpec> {
    if m.nbits != 8 && m.nbits != 4 {
        return Err(Error::corrupt(format!(
            "PQ metadata: {} bits (4 or 8 expected)",
            m.nbits
        )));
    }
    if m.num_sub_vectors == 0 || m.dimension == 0 || !m.dimension.is_multiple_of(m.num_sub_vectors)
    {
        return Err(Error::corrupt(format!(
            "PQ metadata: {} sub-vectors do not divide dimension {}",
            m.num_sub_vectors, m.dimension
        )));
    }
    Ok(StorageSpec::Pq {
        dim: m.dimension,
        num_sub_vectors: m.num_sub_vectors,
        num_bits: m.nbits,
        transposed: m.transposed,
        codebook_buffer: (m.codebook_position > 0).then_some(m.codebook_position),
        inline_codebook: m.codebook_tensor,
    })
}

fn check_code_width(spec: &StorageSpec, width: usize) -> Result<()> {
    let dim = spec.dim();
    if dim == 0 || dim > MAX_DIMENSION {
        return Err(Error::corrupt(format!("storage metadata: dimension {dim}")));
    }
    let expected = match spec {
        StorageSpec::Flat { dim } | StorageSpec::Sq { dim, .. } => *dim,
        StorageSpec::Rq(rq) => rq.code_bytes(),
        StorageSpec::Pq {
            num_sub_vectors,
            num_bits,
            ..
        } => {
            if *num_bits == 4 {
                num_sub_vectors.div_ceil(2)
            } else {
                *num_sub_vectors
            }
        }
    };
    if expected != width {
        return Err(Error::corrupt(format!(
            "column {:?} holds {width} values per row, the metadata implies {expected}",
            spec.code_column()
        )));
    }
    Ok(())
}

/// The quantizer of `spec`, with the PQ codebook decoded from its tensor bytes.
pub(crate) fn quantizer_of(spec: &StorageSpec, codebook: Option<&[u8]>) -> Result<Quantizer> {
    Ok(match spec {
        StorageSpec::Flat { dim } => Quantizer::Flat { dim: *dim },
        StorageSpec::Sq { dim, bounds, .. } => Quantizer::Sq {
            dim: *dim,
            bounds: bounds.clone(),
        },
        StorageSpec::Rq(rq) => Quantizer::Rq(rq.clone()),
        StorageSpec::Pq {
            dim,
            num_sub_vectors,
            num_bits,
            transposed,
            inline_codebook,
            ..
        } => {
            let bytes = codebook.unwrap_or(inline_codebook);
            let tensor = TensorProto::decode(bytes).map_err(|e| {
                Error::corrupt(format!("PQ codebook is not a tensor: {e}")).with_source(e)
            })?;
            let matrix = decode_matrix(&tensor, "PQ codebook")?;
            let centroids = 1usize << num_bits;
            if matrix.rows != centroids || matrix.dim != *dim {
                return Err(Error::corrupt(format!(
                    "PQ codebook of shape [{}, {}], [{centroids}, {dim}] expected",
                    matrix.rows, matrix.dim
                )));
            }
            Quantizer::Pq(ProductQuantizer {
                dim: *dim,
                num_sub_vectors: *num_sub_vectors,
                num_bits: *num_bits,
                transposed: *transposed,
                codebook: matrix.values,
            })
        }
    })
}
