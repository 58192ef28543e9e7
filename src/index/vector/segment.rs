//! Opening one vector index segment (`_indices/<uuid>/index.idx` + `auxiliary.idx`) and
//! reading its partitions: the I/O around the pure decoders of [`super::format`] and
//! [`super::partition`].
//!
//! Waves: both files' suffixes in parallel (sizes from the manifest: no HEAD), together
//! with a speculative read of the first bytes of `auxiliary.idx`, where pylance writes its
//! global buffers (IVF message, codebook); then any global buffer the suffix and prefix did
//! not hold; then one read of every probed partition's rows.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::RecordBatch;
use bytes::Bytes;

use super::format::{
    decode_index_header, decode_ivf, decode_storage_spec, ivf_buffer_index, partition_ranges,
    quantizer_of, IndexHeader, Quantizer, StorageSpec, SubIndex,
};
use super::hnsw::GraphFile;
use super::partition::{decode_partition, Partition, ROW_ID_COLUMN};
use crate::error::{Error, Result};
use crate::io::fetch::ReadRequest;
use crate::io::IoStats;
use crate::lance::data_file::DataFileReader;
use crate::lance::dataset::{DatasetVersion, IndexSegment};
use crate::lance::file::DEFAULT_TAIL_BYTES;
use crate::lance::selection::RowSelection;

/// File of the sub-index and IVF centroids.
pub(crate) const INDEX_FILE: &str = "index.idx";
/// File of the quantized storage.
pub(crate) const AUXILIARY_FILE: &str = "auxiliary.idx";
/// Bytes read speculatively from the start of `auxiliary.idx` (its global buffers: the IVF
/// message and a PQ codebook of up to ~1000 dimensions).
const AUX_PREFIX_BYTES: u64 = 1 << 20;
/// Bytes read speculatively from the start of `index.idx` (the centroids: a flat
/// sub-index's `index.idx` holds nothing else).
const INDEX_PREFIX_BYTES: u64 = 16 << 20;

/// An opened segment: what a query needs before reading partitions.
#[derive(Debug, Clone)]
pub(crate) struct OpenSegment {
    /// `index.idx`: type, metric, centroids.
    pub header: Arc<IndexHeader>,
    /// Row range of each partition in `auxiliary.idx`.
    pub partitions: Arc<Vec<Range<u64>>>,
    /// The quantizer (with its codebook).
    pub quantizer: Arc<Quantizer>,
    /// The reader of `auxiliary.idx`.
    pub aux: DataFileReader,
    /// Fields of `auxiliary.idx` read per partition: `_rowid`, the codes.
    pub columns: [usize; 2],
    /// The graphs' file, for an HNSW sub-index.
    pub graph: Option<Arc<GraphFile>>,
}

impl OpenSegment {
    /// The object path of `auxiliary.idx`.
    pub(crate) fn aux_path(&self) -> String {
        self.aux.path().to_string()
    }

    /// Bytes the decoded header holds (for a cache weigher).
    pub(crate) fn size_bytes(&self) -> usize {
        let codebook = match &*self.quantizer {
            Quantizer::Pq(pq) => pq.codebook.len() * 4,
            _ => 0,
        };
        let graph = self.graph.as_ref().map_or(0, |g| g.size_bytes());
        self.header.centroids.values.len() * 4
            + self.partitions.len() * 16
            + codebook
            + graph
            + 1024
    }
}

/// Open `segment` of `dataset`: two waves at most (one when the suffix reads hold the
/// global buffers).
pub(crate) async fn open_segment(
    dataset: &DatasetVersion,
    segment: &IndexSegment,
    stats: &IoStats,
) -> Result<OpenSegment> {
    if segment.index_version > 1 {
        return Err(Error::unsupported(format!(
            "vector index {:?} has index version {}",
            segment.name, segment.index_version
        )));
    }
    if !segment.files.is_empty() && segment.file_size(AUXILIARY_FILE).is_none() {
        // A v3 index always has auxiliary.idx; a legacy v1 IVF_PQ index is index.idx alone.
        return Err(Error::unsupported(format!(
            "vector index {:?} is a legacy (v1) IVF_PQ index, which is not searched yet",
            segment.name
        )));
    }
    let index_path = dataset.index_file_path(segment, INDEX_FILE)?;
    let aux_path = dataset.index_file_path(segment, AUXILIARY_FILE)?;
    let index_prefix = prefix_read(
        dataset,
        &index_path,
        segment.file_size(INDEX_FILE),
        INDEX_PREFIX_BYTES,
        stats,
    );
    let aux_prefix = prefix_read(
        dataset,
        &aux_path,
        segment.file_size(AUXILIARY_FILE),
        AUX_PREFIX_BYTES,
        stats,
    );
    let (index, aux, index_prefix, aux_prefix) = futures::try_join!(
        dataset.open_index_file(segment, INDEX_FILE, stats),
        dataset.open_index_file(segment, AUXILIARY_FILE, stats),
        index_prefix,
        aux_prefix
    )?;
    if index.is_legacy() {
        return Err(Error::unsupported(
            "legacy (v1) vector index files; lakeseek reads v3 vector indices",
        )
        .at(index.path().as_ref(), None));
    }
    let index_at = |e: Error| e.at(index.path().as_ref(), None);
    let aux_at = |e: Error| e.at(aux.path().as_ref(), None);
    let index_meta = &index.schema().metadata;
    let aux_meta = &aux.schema().metadata;
    let index_ivf = ivf_buffer_index(index_meta).map_err(index_at)?;
    let aux_ivf = ivf_buffer_index(aux_meta).map_err(aux_at)?;
    let (code_column, width) = code_column(&aux).map_err(aux_at)?;
    let spec = decode_storage_spec(aux_meta, &code_column, width).map_err(aux_at)?;
    let codebook_buffer = match &spec {
        StorageSpec::Pq {
            codebook_buffer, ..
        } => *codebook_buffer,
        _ => None,
    };
    let prefix = aux_prefix.as_ref();
    let (index_ivf, aux_ivf, codebook) = futures::try_join!(
        global_buffer(&index, index_ivf, index_prefix.as_ref(), stats),
        global_buffer(&aux, aux_ivf, prefix, stats),
        async {
            match codebook_buffer {
                Some(b) => global_buffer(&aux, b, prefix, stats).await.map(Some),
                None => Ok(None),
            }
        }
    )?;
    let header = decode_index_header(index_meta, &index_ivf).map_err(index_at)?;
    let ivf = decode_ivf(&aux_ivf).map_err(aux_at)?;
    let partitions = partition_ranges(&ivf, aux.num_rows()).map_err(aux_at)?;
    let quantizer = quantizer_of(&spec, codebook.as_deref()).map_err(aux_at)?;
    check_header(&header, &partitions, &spec).map_err(aux_at)?;
    let columns = aux.field_indices(&[ROW_ID_COLUMN, &code_column])?;
    let graph = match header.sub_index {
        SubIndex::Hnsw => Some(Arc::new(GraphFile::open(
            index.clone(),
            index_meta,
            &index_ivf,
        )?)),
        SubIndex::Flat => None,
    };
    Ok(OpenSegment {
        header: Arc::new(header),
        partitions: Arc::new(partitions),
        quantizer: Arc::new(quantizer),
        aux,
        columns: [columns[0], columns[1]],
        graph,
    })
}

/// The first bytes of `path` (where pylance writes the global buffers), read in the same
/// wave as the file's suffix: only when the size is known, the file is larger than that
/// suffix read and its metadata is not cached yet (a cold open).
async fn prefix_read(
    dataset: &DatasetVersion,
    path: &object_store::path::Path,
    size: Option<u64>,
    limit: u64,
    stats: &IoStats,
) -> Result<Option<Bytes>> {
    let Some(size) = size else { return Ok(None) };
    if size <= DEFAULT_TAIL_BYTES || dataset.is_file_metadata_cached(path, size).await {
        return Ok(None);
    }
    let end = (size - DEFAULT_TAIL_BYTES).min(limit);
    let request = ReadRequest::sized(path.clone(), 0..end, size);
    Ok(dataset
        .store()
        .fetcher
        .fetch(&[request], stats)
        .await?
        .pop())
}

/// The quantizer column of `auxiliary.idx` and its fixed list width.
fn code_column(aux: &DataFileReader) -> Result<(String, usize)> {
    let schema = aux.arrow_schema();
    for name in ["__pq_code", "__sq_code", "flat"] {
        if let Ok(field) = schema.field_with_name(name) {
            return match field.data_type() {
                arrow_schema::DataType::FixedSizeList(_, n) if *n > 0 => {
                    Ok((name.to_string(), *n as usize))
                }
                other => Err(Error::corrupt(format!(
                    "column {name:?} is {other}, a fixed-size list expected"
                ))),
            };
        }
    }
    if schema.field_with_name("_rabit_codes").is_ok() {
        return Err(Error::unsupported(
            "IVF_RQ (RaBitQ) vector indices are not read yet",
        ));
    }
    Err(Error::corrupt(
        "no quantizer column (__pq_code, __sq_code or flat) in auxiliary.idx",
    ))
}

/// The centroids, partitions and storage agree.
fn check_header(header: &IndexHeader, partitions: &[Range<u64>], spec: &StorageSpec) -> Result<()> {
    if header.centroids.rows != partitions.len() {
        return Err(Error::corrupt(format!(
            "index.idx has {} centroids, auxiliary.idx {} partitions",
            header.centroids.rows,
            partitions.len()
        )));
    }
    if header.centroids.dim != spec.dim() {
        return Err(Error::corrupt(format!(
            "centroids of dimension {}, storage of dimension {}",
            header.centroids.dim,
            spec.dim()
        )));
    }
    Ok(())
}

/// Global buffer `index` of `file`: from the speculative prefix when it holds it, else read.
async fn global_buffer(
    file: &DataFileReader,
    index: usize,
    prefix: Option<&Bytes>,
    stats: &IoStats,
) -> Result<Bytes> {
    if let (Some(range), Some(prefix)) = (file.global_buffer_range(index), prefix) {
        if range.end <= prefix.len() as u64 {
            return Ok(prefix.slice(range.start as usize..range.end as usize));
        }
    }
    file.read_global_buffer(index, stats).await
}

/// Read and decode `partitions` (ids) of `open` in one wave (their rows of
/// `auxiliary.idx` and, for HNSW, their graphs' rows of `index.idx`): the partitions in
/// the order asked.
pub(crate) async fn read_partitions(
    open: &OpenSegment,
    partitions: &[usize],
    stats: &IoStats,
) -> Result<Vec<Partition>> {
    let mut sorted: Vec<usize> = partitions.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let ranges: Vec<Range<u64>> = sorted
        .iter()
        .map(|&p| open.partitions.get(p).cloned().unwrap_or(0..0))
        .filter(|r| r.start < r.end)
        .collect();
    let rows: Vec<u64> = ranges.iter().flat_map(|r| r.clone()).collect();
    let storage = async {
        if rows.is_empty() {
            Ok(None)
        } else {
            let selection = RowSelection::Rows(rows);
            open.aux
                .read_rows(&open.columns, &selection, stats)
                .await
                .map(Some)
        }
    };
    let graphs = async {
        match &open.graph {
            Some(g) => g.read(&sorted, stats).await,
            None => Ok(None),
        }
    };
    let (batch, graphs) = futures::try_join!(storage, graphs)?;
    let mut graph_at = 0usize;
    let mut decoded = Vec::with_capacity(sorted.len());
    let mut at = 0usize;
    for &p in &sorted {
        let range = open.partitions.get(p).cloned().unwrap_or(0..0);
        let len = (range.end - range.start) as usize;
        let part = match &batch {
            Some(b) if len > 0 => slice_partition(b, at, len, &open.quantizer).map_err(|e| {
                e.context(format!("partition {p}"))
                    .at(open.aux.path().as_ref(), None)
            })?,
            _ => Partition {
                row_ids: Vec::new(),
                codes: empty_codes(&open.quantizer),
                graph: None,
            },
        };
        at += len;
        let part = match &open.graph {
            Some(g) => {
                let graph = g.decode(graphs.as_ref(), graph_at, p, len)?;
                graph_at += g.meta.get(p).map_or(0, |m| m.rows() as usize);
                Partition {
                    graph: Some(Arc::new(graph)),
                    ..part
                }
            }
            None => part,
        };
        decoded.push((p, part));
    }
    Ok(partitions
        .iter()
        .filter_map(|p| decoded.iter().find(|(q, _)| q == p).map(|(_, d)| d.clone()))
        .collect())
}

fn slice_partition(batch: &RecordBatch, at: usize, len: usize, q: &Quantizer) -> Result<Partition> {
    if at + len > batch.num_rows() {
        return Err(Error::corrupt("fewer rows read than the partitions hold"));
    }
    decode_partition(&batch.slice(at, len), q)
}

fn empty_codes(q: &Quantizer) -> super::partition::Codes {
    use super::partition::Codes;
    match q {
        Quantizer::Flat { .. } => Codes::Flat(Vec::new()),
        Quantizer::Pq(_) => Codes::Pq(Vec::new()),
        Quantizer::Sq { .. } => Codes::Sq(Vec::new()),
    }
}
