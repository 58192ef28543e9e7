//! Opening one vector index segment (`_indices/<uuid>/index.idx` + `auxiliary.idx`) and
//! reading its partitions: the I/O around the pure decoders of [`super::format`] and
//! [`super::partition`].
//!
//! Waves of a cold query: (1) both files in parallel (sizes from the manifest: no HEAD),
//! each read whole when small, else by its suffix; (2) only when (1) did not hold them,
//! the global buffers (IVF messages, codebook: wherever pylance wrote them, mid-file in a
//! large `auxiliary.idx`) together with the page init of the large partition pages;
//! (3) one read of every probed partition's rows, small pages read whole (their init
//! from the same bytes).

use std::ops::Range;
use std::sync::Arc;

use arrow_array::RecordBatch;

use super::format::{
    decode_index_header, decode_ivf, decode_storage_spec, ivf_buffer_index, partition_ranges,
    quantizer_of, IndexHeader, Quantizer, StorageSpec, SubIndex,
};
use super::hnsw::GraphFile;
use super::legacy::{self, Footer, LegacyFile};
use super::partition::{decode_partition, Partition, ROW_ID_COLUMN};
use crate::error::{Error, Result};
use crate::io::IoStats;
use crate::lance::data_file::DataFileReader;
use crate::lance::dataset::{DatasetVersion, IndexFileReads, IndexSegment};
use crate::lance::selection::RowSelection;

/// File of the sub-index and IVF centroids.
pub(crate) const INDEX_FILE: &str = "index.idx";
/// File of the quantized storage.
pub(crate) const AUXILIARY_FILE: &str = "auxiliary.idx";
/// What the open reads whole: files and pages up to these sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadSizes {
    /// Index files up to this size are read whole by the open (one request; a flat
    /// sub-index's `index.idx` is its centroids and metadata, a small `auxiliary.idx`
    /// holds its global buffers and partitions).
    pub whole_file: u64,
    /// Pages of `auxiliary.idx` up to this size are read whole with the partitions when
    /// their init is not cached (no init wave before the partition read); the larger
    /// ones have their init read in the open's global-buffer wave.
    pub whole_page: u64,
}

impl ReadSizes {
    /// 1 MiB files (less than a round trip of transfer time on a store serving ~80 MB/s
    /// per connection), 256 KiB pages.
    pub(crate) const DEFAULT: ReadSizes = ReadSizes {
        whole_file: 1 << 20,
        whole_page: 256 << 10,
    };
}

/// At most this many large pages have their init read in the open's global-buffer wave.
const MAX_PREFETCHED_INITS: usize = 32;

test_override! {
    READ_SIZES: ReadSizes = ReadSizes::DEFAULT;
    /// The read sizes in effect ([`ReadSizes::DEFAULT`] but inside [`with_read_sizes`]).
    read_sizes;
    /// Run `f` with other read sizes: tests scale them down so that a small fixture is read
    /// as a large index of the same layout is.
    with_read_sizes
}

/// An opened segment: what a query needs before reading partitions.
#[derive(Debug, Clone)]
pub(crate) struct OpenSegment {
    /// `index.idx`: type, metric, centroids.
    pub header: Arc<IndexHeader>,
    /// Row range of each partition in `auxiliary.idx`.
    pub partitions: Arc<Vec<Range<u64>>>,
    /// The quantizer (with its codebook).
    pub quantizer: Arc<Quantizer>,
    /// Where the partitions are read from.
    pub store: PartitionStore,
    /// The graphs' file, for an HNSW sub-index.
    pub graph: Option<Arc<GraphFile>>,
}

/// Where a segment's partitions are read from.
#[derive(Debug, Clone)]
pub(crate) enum PartitionStore {
    /// `auxiliary.idx` of a v3 index.
    Aux {
        /// Its reader.
        reader: Box<DataFileReader>,
        /// Fields read per partition: `_rowid`, the codes (RaBitQ: and its factor columns).
        columns: Vec<usize>,
    },
    /// The `index.idx` of a legacy (v1) IVF_PQ index.
    Legacy(Arc<LegacyFile>),
}

impl OpenSegment {
    /// The object path of the file holding the partitions (`auxiliary.idx`; a legacy
    /// index's `index.idx`).
    pub(crate) fn aux_path(&self) -> String {
        match &self.store {
            PartitionStore::Aux { reader, .. } => reader.path().to_string(),
            PartitionStore::Legacy(f) => f.path.to_string(),
        }
    }

    /// The size of that file.
    pub(crate) fn aux_size(&self) -> u64 {
        match &self.store {
            PartitionStore::Aux { reader, .. } => reader.version().size,
            PartitionStore::Legacy(f) => f.size,
        }
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
    // IVF_RQ writes index version 2; the others 1.
    if segment.index_version > 2 {
        return Err(Error::unsupported(format!(
            "vector index {:?} has index version {}",
            segment.name, segment.index_version
        )));
    }
    let index_path = dataset.index_file_path(segment, INDEX_FILE)?;
    // A v3 index always has auxiliary.idx; a legacy v1 IVF_PQ index is index.idx alone.
    // Without a file list (older writers) the footer of index.idx tells.
    let legacy_by_manifest =
        !segment.files.is_empty() && segment.file_size(AUXILIARY_FILE).is_none();
    if legacy_by_manifest || segment.files.is_empty() {
        let size = segment.file_size(INDEX_FILE);
        let tail = legacy::read_tail(dataset, &index_path, size, stats).await?;
        let at = |e: Error| e.at(index_path.as_ref(), None);
        match legacy::footer(&tail.bytes, tail.version.size).map_err(at)? {
            Footer::Legacy { metadata_pos } => {
                let path = index_path.clone();
                let (index, file) =
                    legacy::open(dataset, segment, path, tail, metadata_pos, stats).await?;
                return Ok(OpenSegment {
                    header: Arc::new(index.header),
                    partitions: Arc::new(index.rows),
                    quantizer: Arc::new(Quantizer::Pq(index.pq)),
                    store: PartitionStore::Legacy(file),
                    graph: None,
                });
            }
            Footer::V2 if legacy_by_manifest => return Err(at(Error::corrupt(
                "the manifest lists no auxiliary.idx, yet index.idx is a Lance 2 file (a v3 index)",
            ))),
            Footer::V2 => {}
        }
    }
    let sizes = read_sizes();
    let (index, aux) = futures::try_join!(
        dataset.open_index_file_sized(segment, INDEX_FILE, file_reads(sizes), stats),
        dataset.open_index_file_sized(segment, AUXILIARY_FILE, file_reads(sizes), stats),
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
    let mut aux_buffers = vec![aux_ivf];
    if let StorageSpec::Pq {
        codebook_buffer: Some(b),
        ..
    } = &spec
    {
        aux_buffers.push(*b);
    }
    // One wave for what the first read did not hold: the global buffers (the two of
    // auxiliary.idx are adjacent: one request) and, when that wave is needed anyway, the
    // init of the large pages the partition reads use (partition rows in auxiliary.idx,
    // HNSW graph rows in index.idx; small pages are read whole with the partitions).
    let index_buffers = [index_ivf];
    let fetch_buffers =
        !holds_buffers(&index, &index_buffers) || !holds_buffers(&aux, &aux_buffers);
    let (large_index, large_aux) = if fetch_buffers {
        let whole = sizes.whole_page;
        (large_pages(&index, whole), large_pages(&aux, whole))
    } else {
        (Vec::new(), Vec::new())
    };
    let (index_ivf, aux_read, (), ()) = futures::try_join!(
        index.read_global_buffers(&index_buffers, stats),
        aux.read_global_buffers(&aux_buffers, stats),
        index.prefetch_page_inits(&large_index, stats),
        aux.prefetch_page_inits(&large_aux, stats),
    )?;
    let index_ivf = index_ivf
        .into_iter()
        .next()
        .ok_or_else(|| index_at(Error::corrupt("no IVF buffer read")))?;
    let mut aux_read = aux_read.into_iter();
    let aux_ivf = aux_read
        .next()
        .ok_or_else(|| aux_at(Error::corrupt("no IVF buffer read")))?;
    let codebook = aux_read.next();
    let header = decode_index_header(index_meta, &index_ivf).map_err(index_at)?;
    let ivf = decode_ivf(&aux_ivf).map_err(aux_at)?;
    let partitions = partition_ranges(&ivf, aux.num_rows()).map_err(aux_at)?;
    let quantizer = quantizer_of(&spec, codebook.as_deref()).map_err(aux_at)?;
    check_header(&header, &partitions, &spec).map_err(aux_at)?;
    let mut names = vec![ROW_ID_COLUMN, code_column.as_str()];
    if let Quantizer::Rq(rq) = &quantizer {
        names = vec![ROW_ID_COLUMN];
        names.extend(rq.columns());
    }
    let columns = aux.field_indices(&names)?;
    let graph = match header.sub_index {
        SubIndex::Hnsw => Some(Arc::new(GraphFile::open(
            index.clone().with_whole_page_bytes(sizes.whole_page),
            index_meta,
            &index_ivf,
        )?)),
        SubIndex::Flat => None,
    };
    Ok(OpenSegment {
        header: Arc::new(header),
        partitions: Arc::new(partitions),
        quantizer: Arc::new(quantizer),
        store: PartitionStore::Aux {
            reader: Box::new(aux.with_whole_page_bytes(sizes.whole_page)),
            columns,
        },
        graph,
    })
}

/// Whether `file`'s first read holds its global buffers `indices` (nothing to fetch).
fn holds_buffers(file: &DataFileReader, indices: &[usize]) -> bool {
    indices
        .iter()
        .all(|&i| file.global_buffer_range(i).is_some_and(|r| file.holds(&r)))
}

/// `(column, page)` of the pages of `file` larger than `whole_page` whose reads need page
/// init data: none when there are more than [`MAX_PREFETCHED_INITS`].
fn large_pages(file: &DataFileReader, whole_page: u64) -> Vec<(usize, usize)> {
    file.pages_needing_init(None, whole_page, MAX_PREFETCHED_INITS)
}

/// Index files read whole up to `sizes.whole_file`, larger ones by the default suffix.
fn file_reads(sizes: ReadSizes) -> IndexFileReads {
    IndexFileReads {
        whole: sizes.whole_file,
        tail: crate::lance::file::DEFAULT_TAIL_BYTES,
    }
}

/// The quantizer column of `auxiliary.idx` and its fixed list width.
fn code_column(aux: &DataFileReader) -> Result<(String, usize)> {
    let schema = aux.arrow_schema();
    for name in ["__pq_code", "__sq_code", "flat", super::rq::CODE_COLUMN] {
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
    Err(Error::corrupt(
        "no quantizer column (__pq_code, __sq_code, flat or _rabit_codes) in auxiliary.idx",
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
    // RaBitQ rotates into a code dimension that may pad the vectors'.
    let rq_pads = matches!(spec, StorageSpec::Rq(_)) && header.centroids.dim <= spec.dim();
    if header.centroids.dim != spec.dim() && !rq_pads {
        return Err(Error::corrupt(format!(
            "centroids of dimension {}, storage of dimension {}",
            header.centroids.dim,
            spec.dim()
        )));
    }
    Ok(())
}

/// Read and decode `partitions` (ids) of `open` in one wave (their rows of
/// `auxiliary.idx` and, for HNSW, their graphs' rows of `index.idx`): the partitions in
/// the order asked.
pub(crate) async fn read_partitions(
    open: &OpenSegment,
    partitions: &[usize],
    stats: &IoStats,
) -> Result<Vec<Partition>> {
    let (aux, columns) = match &open.store {
        PartitionStore::Aux { reader, columns } => (reader, columns),
        PartitionStore::Legacy(file) => {
            return legacy::read_partitions(
                file,
                &open.partitions,
                &open.quantizer,
                partitions,
                stats,
            )
            .await
        }
    };
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
            aux.read_rows(columns, &selection, stats).await.map(Some)
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
                    .at(aux.path().as_ref(), None)
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
        Quantizer::Rq(_) => Codes::Rq(super::rq::RabitCodes::empty()),
    }
}
