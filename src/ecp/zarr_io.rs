//! Reading (and writing) single zarr v3 arrays through zarrs, with a fixed request plan.
//!
//! zarrs parses the metadata, names the chunk keys and runs the codec chain; the bytes come
//! through lakeseek's I/O layer ([`FetcherStorage`] over a [`RangeFetcher`](crate::io::RangeFetcher):
//! retries, version checks, accounting). This module only decides *when* to send the GETs so
//! a typical array costs one round trip:
//!
//! * [`ZarrStore::fetch`] sends the array's `zarr.json` GET and, speculatively, the GET of its
//!   first chunk (key `c/0/0`, `c/0` or `c` under the default `/` chunk key encoding) at the same
//!   time. Once the metadata is parsed, the guess is checked against zarrs' own chunk key.
//! * [`FetchedArray::read_rows`] then GETs the remaining chunks (if any) concurrently, decodes
//!   each whole chunk with the array's codecs and trims the padding rows past the array's shape.
//!
//! No HEAD, no LIST, no group metadata. A missing `zarr.json` is `Ok(None)`; a missing chunk
//! decodes as the fill value, as zarr requires (but an object that existed when this index
//! handle first read it and is gone or replaced now is `ObjectChanged`, see [`FetcherStorage`]).

use std::borrow::Cow;
use std::sync::Arc;

use bytes::Bytes;
use futures::future::try_join_all;
use zarrs::array::{
    Array, ArrayBuilder, ArrayBytes, ArrayMetadata, ArrayMetadataV3, ArrayToBytesCodecTraits,
    ChunkShape, CodecOptions, DataType, ElementOwned, FromArrayBytes,
};
use zarrs::storage::{AsyncReadableWritableStorageTraits, StorageError, StoreKey};

use crate::ecp::zarr_storage::FetcherStorage;
use crate::error::{Error, Result};

/// Largest chunk (in elements) the reader decodes: 2^26 (256 MiB of f32). ecp-core's defaults
/// are 512 KiB node chunks and 8 MiB representative chunks.
pub(crate) const MAX_CHUNK_ELEMENTS: u64 = 1 << 26;

/// The zarrs storage arrays are opened on (reads go through [`FetcherStorage::get_object`]).
pub(crate) type Storage = dyn AsyncReadableWritableStorageTraits;

/// The index's [`FetcherStorage`], as itself (typed errors) and as a zarrs storage.
#[derive(Clone)]
pub(crate) struct ZarrStore {
    reader: Arc<FetcherStorage>,
    storage: Arc<Storage>,
    label: String,
}

impl std::fmt::Debug for ZarrStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZarrStore")
            .field("label", &self.label)
            .finish()
    }
}

/// An opened array: zarrs' view of its metadata plus the first chunk if it was fetched
/// speculatively together with the metadata.
pub struct FetchedArray {
    /// Array path inside the index, without a leading slash (e.g. `lvl_1/node_3/embeddings`).
    pub path: String,
    /// Full name for errors: `<index URL>/<path>`.
    pub label: String,
    array: Array<Storage>,
    first_chunk: Option<Option<Bytes>>,
    reader: Arc<FetcherStorage>,
}

fn storage_error(label: &str, e: StorageError) -> Error {
    Error::Store {
        path: label.to_string(),
        range: None,
        source: std::sync::Arc::new(object_store::Error::Generic {
            store: "zarrs",
            source: Box::new(e),
        }),
    }
}

/// Key of chunk `0,...,0` under the default chunk key encoding with `/` separator.
fn default_first_chunk_key(path: &str, rank: usize) -> String {
    let mut key = format!("{path}/c");
    for _ in 0..rank {
        key.push_str("/0");
    }
    key
}

impl ZarrStore {
    /// Read (and, when it has a writer, write) through `reader`; `label` names the index root
    /// in errors.
    pub(crate) fn new(reader: Arc<FetcherStorage>, label: impl Into<String>) -> Self {
        let storage: Arc<Storage> = Arc::<FetcherStorage>::clone(&reader);
        Self {
            reader,
            storage,
            label: label.into(),
        }
    }

    /// Full name of `path` for errors.
    pub(crate) fn label_of(&self, path: &str) -> String {
        format!("{}/{}", self.label.trim_end_matches('/'), path)
    }

    async fn get(&self, key: &str) -> Result<Option<Bytes>> {
        self.reader.get_object(key).await
    }

    /// GET `path/zarr.json` and (when `speculative_rank` is given) the first chunk of an array
    /// of that rank, concurrently. `Ok(None)` when the array does not exist.
    pub(crate) async fn fetch(
        &self,
        path: &str,
        speculative_rank: Option<usize>,
    ) -> Result<Option<FetchedArray>> {
        let label = self.label_of(path);
        let meta_key = format!("{path}/zarr.json");
        let guess = speculative_rank.map(|rank| default_first_chunk_key(path, rank));
        let (meta, chunk) = match &guess {
            Some(key) => {
                let (m, c) = futures::join!(self.get(&meta_key), self.get(key));
                (m?, Some(c?))
            }
            None => (self.get(&meta_key).await?, None),
        };
        let Some(meta) = meta else { return Ok(None) };
        let metadata: ArrayMetadataV3 = serde_json::from_slice(&meta).map_err(|e| {
            Error::corrupt(format!("invalid zarr.json: {e}"))
                .with_source(e)
                .at(&label, None)
        })?;
        if !metadata.storage_transformers.is_empty() {
            return Err(Error::unsupported("arrays with storage transformers").at(&label, None));
        }
        let array = Array::new_with_metadata(
            Arc::clone(&self.storage),
            &format!("/{path}"),
            ArrayMetadata::V3(metadata),
        )
        .map_err(|e| {
            Error::unsupported(format!("zarrs cannot open the array: {e}"))
                .with_source(e)
                .at(&label, None)
        })?;
        // Keep the speculative chunk only if it really is chunk 0 of this array.
        let first_chunk = match (guess, chunk) {
            (Some(key), Some(bytes)) => {
                let zeros = vec![0u64; array.dimensionality()];
                (array.chunk_key(&zeros).as_str() == key).then_some(bytes)
            }
            _ => None,
        };
        Ok(Some(FetchedArray {
            path: path.to_string(),
            label,
            array,
            first_chunk,
            reader: Arc::clone(&self.reader),
        }))
    }

    /// Write a 1-d array (`shape (n,)`, one chunk of `max(n,1)` rows, no compression) or a
    /// rank-0 scalar (`values.len() == 1`, `rank0`), the way ecp-core writes query state.
    pub(crate) async fn write_plain<T>(
        &self,
        path: &str,
        data_type: DataType,
        values: &[T],
        rank0: bool,
    ) -> Result<()>
    where
        T: zarrs::array::Element + Default + Clone + Send + Sync + 'static,
    {
        let label = self.label_of(path);
        let (shape, chunks): (Vec<u64>, Vec<u64>) = if rank0 {
            (vec![], vec![])
        } else {
            (vec![values.len() as u64], vec![values.len().max(1) as u64])
        };
        let fill: Vec<u8> = vec![0u8; data_type.fixed_size().unwrap_or(0)];
        let array = ArrayBuilder::new(shape, chunks, data_type, zarrs::array::FillValue::new(fill))
            .build(Arc::clone(&self.storage), &format!("/{path}"))
            .map_err(|e| Error::InvalidArgument(format!("cannot build array {label}: {e}")))?;
        array
            .async_store_metadata()
            .await
            .map_err(|e| storage_error(&label, e))?;
        if !values.is_empty() {
            let zeros = vec![0u64; if rank0 { 0 } else { 1 }];
            array
                .async_store_chunk(&zeros, values.to_vec())
                .await
                .map_err(|e| write_error(&label, e))?;
        }
        Ok(())
    }

    /// Delete an array's metadata and first chunk (query state is single-chunk).
    pub(crate) async fn erase_plain(&self, path: &str, rank: usize) -> Result<()> {
        for key in [
            format!("{path}/zarr.json"),
            default_first_chunk_key(path, rank),
        ] {
            let store_key = StoreKey::new(key.as_str())
                .map_err(|e| Error::InvalidArgument(format!("bad zarr key {key}: {e}")))?;
            self.storage
                .erase(&store_key)
                .await
                .map_err(|e| storage_error(&self.label_of(&key), e))?;
        }
        Ok(())
    }
}

fn write_error(label: &str, e: zarrs::array::ArrayError) -> Error {
    match e {
        zarrs::array::ArrayError::StorageError(s) => storage_error(label, s),
        other => Error::InvalidArgument(format!("cannot write {label}: {other}")),
    }
}

impl FetchedArray {
    /// The array's shape.
    pub fn shape(&self) -> &[u64] {
        self.array.shape()
    }

    /// The array's data type.
    pub fn data_type(&self) -> &DataType {
        self.array.data_type()
    }

    /// A short name of the data type for messages (e.g. `float32`).
    pub fn data_type_name(&self) -> String {
        match &self.array.metadata() {
            ArrayMetadata::V3(m) => m.data_type.name().to_string(),
            ArrayMetadata::V2(_) => format!("{:?}", self.array.data_type()),
        }
    }

    fn corrupt(&self, what: impl Into<String>) -> Error {
        Error::corrupt(what).at(&self.label, None)
    }

    /// Read the whole array as a flat row-major `Vec<T>` of `shape.iter().product()` elements.
    ///
    /// Supports rank 0, 1 and 2; a rank-2 array must be chunked along rows only. `T` must match
    /// the data type (the caller checks the data type first for a clear message). Arrays with
    /// more than `max_rows` rows, or chunks of more than [`MAX_CHUNK_ELEMENTS`] elements, are
    /// `Corrupt` (checked before anything is allocated).
    pub async fn read_rows<T>(&self, max_rows: u64) -> Result<Vec<T>>
    where
        T: ElementOwned + Clone,
        Vec<T>: FromArrayBytes,
    {
        let shape = self.array.shape().to_vec();
        let rank = shape.len();
        if rank > 2 {
            return Err(self.corrupt(format!("expected rank <= 2, got shape {shape:?}")));
        }
        let grid = self.array.chunk_grid_shape().to_vec();
        if rank == 2 && grid.get(1).copied().unwrap_or(1) != 1 {
            return Err(
                Error::unsupported("embeddings chunked along the vector dimension")
                    .at(&self.label, None),
            );
        }
        let rows = shape.first().copied().unwrap_or(1);
        let width = shape.get(1).copied().unwrap_or(1);
        let total = rows
            .checked_mul(width)
            .ok_or_else(|| self.corrupt("shape overflows"))?;
        let chunk_count = grid.first().copied().unwrap_or(1);
        if rows > max_rows {
            return Err(self.corrupt(format!(
                "{rows} rows, more than the index allows ({max_rows})"
            )));
        }
        if rows == 0 || width == 0 {
            return Ok(Vec::new());
        }
        let zeros = vec![0u64; rank];
        let chunk_elements: u64 = self
            .array
            .chunk_shape(&zeros)
            .map_err(|e| self.corrupt(format!("chunk shape: {e}")).with_source(e))?
            .iter()
            .map(|d| d.get())
            .try_fold(1u64, |acc, d| acc.checked_mul(d))
            .ok_or_else(|| self.corrupt("chunk shape overflows"))?;
        if chunk_elements > MAX_CHUNK_ELEMENTS {
            return Err(self.corrupt(format!(
                "chunks of {chunk_elements} elements exceed the limit {MAX_CHUNK_ELEMENTS}"
            )));
        }
        let chunk_indices: Vec<Vec<u64>> = (0..chunk_count)
            .map(|i| {
                if rank == 0 {
                    vec![]
                } else if rank == 1 {
                    vec![i]
                } else {
                    vec![i, 0]
                }
            })
            .collect();
        let decoded =
            try_join_all(chunk_indices.iter().map(|idx| self.read_chunk::<T>(idx))).await?;
        let mut out: Vec<T> = Vec::with_capacity(
            usize::try_from(total).map_err(|_| self.corrupt("array too large"))?,
        );
        for values in decoded {
            let remaining = (total as usize).saturating_sub(out.len());
            out.extend(values.into_iter().take(remaining));
        }
        if out.len() as u64 != total {
            return Err(self.corrupt(format!("chunks hold {} of {total} elements", out.len())));
        }
        Ok(out)
    }

    /// Decode the encoded chunk `indices` with the array's codecs. zarrs 0.23's `vlen-v2`
    /// decoder slices its input with the lengths it reads, so a corrupt chunk of a string
    /// array panics it: that panic is caught here and the chunk is `Corrupt`, as it is for
    /// every other decode failure.
    fn decode_chunk(
        &self,
        raw: Vec<u8>,
        chunk_shape: &ChunkShape,
        indices: &[u64],
    ) -> Result<ArrayBytes<'static>> {
        let decode = || {
            self.array.codecs().decode(
                Cow::Owned(raw),
                chunk_shape,
                self.array.data_type(),
                self.array.fill_value(),
                &CodecOptions::default(),
            )
        };
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(decode)) {
            Ok(decoded) => decoded.map_err(|e| {
                self.corrupt(format!("chunk {indices:?} does not decode: {e}"))
                    .with_source(e)
            }),
            Err(_) => Err(self.corrupt(format!(
                "chunk {indices:?} does not decode (the zarr decoder panicked)"
            ))),
        }
    }

    async fn read_chunk<T>(&self, indices: &[u64]) -> Result<Vec<T>>
    where
        T: ElementOwned + Clone,
        Vec<T>: FromArrayBytes,
    {
        let first = indices.iter().all(|&i| i == 0);
        let encoded = match (&self.first_chunk, first) {
            (Some(bytes), true) => bytes.clone(),
            _ => {
                let key = self.array.chunk_key(indices);
                self.reader.get_object(key.as_str()).await?
            }
        };
        let chunk_shape = self.array.chunk_shape(indices).map_err(|e| {
            self.corrupt(format!("chunk {indices:?}: {e}"))
                .with_source(e)
        })?;
        let elements: u64 = chunk_shape.iter().map(|d| d.get()).product();
        let bytes: ArrayBytes<'static> = match encoded {
            Some(raw) => {
                let decoded = self.decode_chunk(raw.to_vec(), &chunk_shape, indices)?;
                decoded
                    .validate(elements, self.array.data_type())
                    .map_err(|e| {
                        self.corrupt(format!("chunk {indices:?}: {e}"))
                            .with_source(e)
                    })?;
                decoded.into_owned()
            }
            None => ArrayBytes::new_fill_value(
                self.array.data_type(),
                elements,
                self.array.fill_value(),
            )
            .map_err(|e| self.corrupt(format!("fill value: {e}")).with_source(e))?,
        };
        let shape_u64: Vec<u64> = chunk_shape.iter().map(|d| d.get()).collect();
        Vec::<T>::from_array_bytes(bytes, &shape_u64, self.array.data_type()).map_err(|e| {
            self.corrupt(format!("chunk {indices:?}: {e}"))
                .with_source(e)
        })
    }
}
