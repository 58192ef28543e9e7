//! [`BlobHandle`] and [`BlobReader`]: the blobs of a blob column, read by range on demand.

use std::future::Future;
use std::io::SeekFrom;
use std::ops::Range;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;

use crate::error::{Error, Result};
use crate::io::fetch::{RangeFetcher, ReadRequest};
use crate::io::IoStats;
use crate::lance::dataset::blobs::BlobRange;

/// Largest range one request of a blob read asks for: a larger read is split into requests
/// of at most this many bytes (sent in one wave), and a [`BlobReader`] holds at most this
/// much at a time.
pub const BLOB_READ_CHUNK_BYTES: u64 = 8 << 20;

/// Default read-ahead of a [`BlobReader`].
const READER_BUFFER_BYTES: u64 = 1 << 20;

/// One blob of a blob column, from [`Dataset::take_blobs`](crate::Dataset::take_blobs):
/// its size and where it is, its bytes read on demand (nothing is read until asked). Cheap
/// to clone; `Send + Sync`.
#[derive(Debug, Clone)]
pub struct BlobHandle {
    inner: Arc<HandleInner>,
}

#[derive(Debug)]
struct HandleInner {
    fetcher: RangeFetcher,
    stats: IoStats,
    blob: BlobRange,
}

impl BlobHandle {
    pub(crate) fn new(fetcher: RangeFetcher, stats: IoStats, blob: BlobRange) -> Self {
        Self {
            inner: Arc::new(HandleInner {
                fetcher,
                stats,
                blob,
            }),
        }
    }

    /// The blob's size in bytes.
    pub fn size(&self) -> u64 {
        let r = &self.inner.blob.range;
        r.end - r.start
    }

    /// The object holding the blob (a data file or a `.blob` sidecar), relative to the
    /// store's root.
    pub fn object_path(&self) -> &str {
        self.inner.blob.path.as_ref()
    }

    /// The blob's byte range in [`BlobHandle::object_path`].
    pub fn object_range(&self) -> Range<u64> {
        self.inner.blob.range.clone()
    }

    /// Bytes `range` of the blob (blob-relative offsets; `InvalidArgument` past its end).
    /// A read larger than [`BLOB_READ_CHUNK_BYTES`] is split into requests sent in one wave.
    pub async fn read_range(&self, range: Range<u64>) -> Result<Bytes> {
        if range.start > range.end || range.end > self.size() {
            return Err(Error::InvalidArgument(format!(
                "range {}..{} of a {}-byte blob",
                range.start,
                range.end,
                self.size()
            )));
        }
        let start = self.inner.blob.range.start;
        let parts = fetch_parts(
            &self.inner.fetcher,
            &self.inner.stats,
            &[(&self.inner.blob, start + range.start..start + range.end)],
        )
        .await?;
        Ok(parts.into_iter().next().unwrap_or_default())
    }

    /// The whole blob.
    pub async fn read_all(&self) -> Result<Bytes> {
        self.read_range(0..self.size()).await
    }

    /// The whole of each of `handles` (from one dataset), read in one wave: the fetcher
    /// merges the ranges of small blobs lying close together into few requests. Holds all
    /// their bytes at once: group large blobs into several calls, or stream them.
    pub async fn read_all_of(handles: &[&BlobHandle]) -> Result<Vec<Bytes>> {
        let Some(first) = handles.first() else {
            return Ok(Vec::new());
        };
        let wanted: Vec<_> = handles
            .iter()
            .map(|h| (&h.inner.blob, h.inner.blob.range.clone()))
            .collect();
        fetch_parts(&first.inner.fetcher, &first.inner.stats, &wanted).await
    }

    /// A reader of the blob implementing tokio's `AsyncRead` and `AsyncSeek`: it reads ahead
    /// 1 MiB at a time and never holds more than one such range.
    pub fn reader(&self) -> BlobReader {
        BlobReader::new(self.clone(), READER_BUFFER_BYTES)
    }

    /// A reader reading ahead `buffer_bytes` (at least 1, at most
    /// [`BLOB_READ_CHUNK_BYTES`]) at a time.
    pub fn reader_with_buffer(&self, buffer_bytes: u64) -> BlobReader {
        BlobReader::new(self.clone(), buffer_bytes.clamp(1, BLOB_READ_CHUNK_BYTES))
    }
}

/// Read every `(blob, absolute range)` in one wave (ranges split into
/// [`BLOB_READ_CHUNK_BYTES`] requests, merged by the fetcher); one `Bytes` per entry. A read
/// failing because the object is shorter than the descriptor says is `Corrupt` naming it.
pub(crate) async fn fetch_parts(
    fetcher: &RangeFetcher,
    stats: &IoStats,
    wanted: &[(&BlobRange, Range<u64>)],
) -> Result<Vec<Bytes>> {
    let mut requests = Vec::new();
    let mut spans = Vec::with_capacity(wanted.len());
    for (blob, range) in wanted {
        let first = requests.len();
        let mut at = range.start;
        while at < range.end {
            let end = range.end.min(at + BLOB_READ_CHUNK_BYTES);
            requests.push(match blob.object_size {
                Some(size) => ReadRequest::sized(blob.path.clone(), at..end, size),
                None => ReadRequest::new(blob.path.clone(), at..end),
            });
            at = end;
        }
        spans.push(first..requests.len());
    }
    if requests.is_empty() {
        return Ok(vec![Bytes::new(); wanted.len()]);
    }
    let fetched = fetcher
        .fetch(&requests, stats)
        .await
        .map_err(shorter_than_described)?;
    Ok(spans
        .into_iter()
        .map(|span| match span.len() {
            0 => Bytes::new(),
            1 => fetched[span.start].clone(),
            _ => {
                let mut joined = Vec::new();
                for part in &fetched[span] {
                    joined.extend_from_slice(part);
                }
                Bytes::from(joined)
            }
        })
        .collect())
}

/// A range read past the end of a blob's object means its descriptor is wrong (or the file
/// was truncated): `Corrupt`, naming the object and range, keeping the store's error.
fn shorter_than_described(e: Error) -> Error {
    let past_end = match &e {
        Error::Store { source, .. } => is_range_error(source.as_ref()),
        _ => false,
    };
    if !past_end {
        return e;
    }
    let Error::Store {
        path,
        range,
        source,
    } = e
    else {
        return e;
    };
    let source: crate::error::ErrorSource = source;
    Error::Corrupt {
        path,
        range,
        what: "the blob's object is shorter than its descriptor says".into(),
        source: Some(source),
    }
}

/// Whether an object store error says the range asked lies (partly) past the object's end.
fn is_range_error(e: &object_store::Error) -> bool {
    let text = e.to_string().to_ascii_lowercase();
    [
        "range",
        "out of bounds",
        "416",
        "short read",
        "body ended early",
    ]
    .iter()
    .any(|w| text.contains(w))
}

/// A blob's bytes as tokio `AsyncRead + AsyncSeek`, from [`BlobHandle::reader`]: reads one
/// bounded range ahead at a time, never the whole blob.
pub struct BlobReader {
    handle: BlobHandle,
    buffer_bytes: u64,
    position: u64,
    buffer: Bytes,
    buffer_start: u64,
    pending: Option<Pending>,
}

type Pending = (u64, Pin<Box<dyn Future<Output = Result<Bytes>> + Send>>);

impl std::fmt::Debug for BlobReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlobReader")
            .field("handle", &self.handle)
            .field("position", &self.position)
            .finish_non_exhaustive()
    }
}

impl BlobReader {
    fn new(handle: BlobHandle, buffer_bytes: u64) -> Self {
        Self {
            handle,
            buffer_bytes,
            position: 0,
            buffer: Bytes::new(),
            buffer_start: 0,
            pending: None,
        }
    }

    /// The blob's size in bytes.
    pub fn size(&self) -> u64 {
        self.handle.size()
    }

    /// Bytes held now (at most the read-ahead size).
    pub fn buffered_bytes(&self) -> usize {
        self.buffer.len()
    }

    /// The buffered bytes from the current position, if the buffer covers it.
    fn buffered(&self) -> Option<&[u8]> {
        let end = self.buffer_start + self.buffer.len() as u64;
        (self.position >= self.buffer_start && self.position < end)
            .then(|| &self.buffer[(self.position - self.buffer_start) as usize..])
    }
}

fn io_error(e: Error) -> std::io::Error {
    std::io::Error::other(e)
}

impl tokio::io::AsyncRead for BlobReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        loop {
            if out.remaining() == 0 || this.position >= this.size() {
                return Poll::Ready(Ok(()));
            }
            if let Some(bytes) = this.buffered() {
                let n = bytes.len().min(out.remaining());
                out.put_slice(&bytes[..n]);
                this.position += n as u64;
                return Poll::Ready(Ok(()));
            }
            let position = this.position;
            if this.pending.as_ref().is_none_or(|(at, _)| *at != position) {
                let end = this.size().min(position + this.buffer_bytes);
                let handle = this.handle.clone();
                this.pending = Some((
                    position,
                    Box::pin(async move { handle.read_range(position..end).await }),
                ));
            }
            let Some((_, future)) = this.pending.as_mut() else {
                continue;
            };
            match future.as_mut().poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(result) => {
                    this.pending = None;
                    this.buffer = result.map_err(io_error)?;
                    this.buffer_start = position;
                    if this.buffer.is_empty() {
                        return Poll::Ready(Err(std::io::Error::new(
                            std::io::ErrorKind::UnexpectedEof,
                            "empty read inside the blob",
                        )));
                    }
                }
            }
        }
    }
}

impl tokio::io::AsyncSeek for BlobReader {
    fn start_seek(self: Pin<&mut Self>, position: SeekFrom) -> std::io::Result<()> {
        let this = self.get_mut();
        let target = match position {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => this.size().checked_add_signed(d),
            SeekFrom::Current(d) => this.position.checked_add_signed(d),
        };
        this.position = target.ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "seek before the start of the blob",
            )
        })?;
        Ok(())
    }

    fn poll_complete(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<u64>> {
        Poll::Ready(Ok(self.position))
    }
}
