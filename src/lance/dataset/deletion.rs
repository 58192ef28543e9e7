//! Deletion files (pure decoders): which row offsets of a fragment are deleted.
//!
//! * Arrow (`.arrow`): an Arrow IPC *file* with one non-null UInt32 column `row_id` of
//!   deleted offsets (lance writes it while a fragment has at most 5000 deleted rows).
//! * Bitmap (`.bin`): a portable 32-bit roaring bitmap of deleted offsets (above 5000).

use std::io::Read;

use bytes::Bytes;
use roaring::RoaringBitmap;

use crate::error::{Error, Result};
use crate::io::cache::DeepSize;
use crate::lance::dataset::manifest::DeletionKind;

/// Deleted row offsets of one fragment.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct DeletionVector(pub RoaringBitmap);

impl DeepSize for DeletionVector {
    fn deep_size(&self) -> usize {
        64 + self.0.serialized_size()
    }
}

/// Decode a deletion file of the given kind.
pub(crate) fn decode_deletion_file(kind: DeletionKind, bytes: &Bytes) -> Result<DeletionVector> {
    match kind {
        DeletionKind::Bitmap => RoaringBitmap::deserialize_from(&bytes[..])
            .map(DeletionVector)
            .map_err(|e| Error::corrupt(format!("deletion bitmap: {e}")).with_source(e)),
        DeletionKind::Arrow => decode_arrow(bytes),
    }
}

fn decode_arrow(bytes: &Bytes) -> Result<DeletionVector> {
    let corrupt = |e: Error| e.context("arrow deletion file");
    let file = parse_ipc_file(bytes).map_err(corrupt)?;
    let mut deleted = RoaringBitmap::new();
    for batch in &file.batches {
        let values = batch.values(bytes).map_err(corrupt)?;
        for word in values.chunks_exact(4) {
            let raw = u32::from_le_bytes(word.try_into().expect("4 bytes"));
            if file.signed && raw > i32::MAX as u32 {
                return Err(corrupt(Error::corrupt(format!(
                    "negative row offset {}",
                    raw as i32
                ))));
            }
            deleted.insert(raw);
        }
    }
    Ok(DeletionVector(deleted))
}

/// What a validated Arrow IPC deletion file holds: one `row_id` column of 32-bit integers in
/// one or more record batches.
struct RowIdFile {
    /// `Int32` rather than `UInt32` (older writers); negative values are corrupt.
    signed: bool,
    batches: Vec<RowIdBatch>,
}

/// One record batch's `row_id` values buffer, located and bounds-checked inside the file.
struct RowIdBatch {
    rows: usize,
    /// Byte range of the values buffer inside the whole file.
    buffer: std::ops::Range<usize>,
    codec: Option<arrow_ipc::CompressionType>,
}

impl RowIdBatch {
    /// The batch's `rows * 4` value bytes, decompressed when the file is compressed.
    fn values<'a>(&self, file: &'a [u8]) -> Result<std::borrow::Cow<'a, [u8]>> {
        let want = self.rows * 4;
        let buffer = &file[self.buffer.clone()];
        let Some(codec) = self.codec else {
            return Ok(std::borrow::Cow::Borrowed(&buffer[..want]));
        };
        if self.rows == 0 && buffer.is_empty() {
            return Ok(std::borrow::Cow::Borrowed(&[]));
        }
        // Arrow IPC body compression: an i64 uncompressed length, then the codec's frame;
        // -1 means the bytes follow uncompressed.
        let declared = buffer
            .get(..8)
            .map(|b| i64::from_le_bytes(b.try_into().expect("8 bytes")))
            .ok_or_else(|| Error::corrupt("compressed buffer shorter than its length prefix"))?;
        let payload = &buffer[8..];
        if declared == -1 {
            return payload
                .get(..want)
                .map(std::borrow::Cow::Borrowed)
                .ok_or_else(|| {
                    Error::corrupt(format!(
                        "{} values in a {}-byte buffer",
                        self.rows,
                        payload.len()
                    ))
                });
        }
        if declared != want as i64 {
            return Err(Error::corrupt(format!(
                "buffer declares {declared} bytes, {} values need {want}",
                self.rows
            )));
        }
        let mut out = Vec::with_capacity(want);
        let mut limited = |reader: &mut dyn std::io::Read| {
            reader
                .take(want as u64 + 1)
                .read_to_end(&mut out)
                .map_err(|e| {
                    Error::corrupt(format!("buffer does not decompress: {e}")).with_source(e)
                })
        };
        match codec {
            arrow_ipc::CompressionType::LZ4_FRAME => {
                limited(&mut lz4_flex::frame::FrameDecoder::new(payload))?
            }
            arrow_ipc::CompressionType::ZSTD => limited(
                &mut zstd::stream::read::Decoder::with_buffer(payload).map_err(|e| {
                    Error::corrupt(format!("zstd decoder could not start: {e}")).with_source(e)
                })?,
            )?,
            other => {
                return Err(Error::corrupt(format!(
                    "unknown compression codec {}",
                    other.0
                )))
            }
        };
        if out.len() != want {
            return Err(Error::corrupt(format!(
                "buffer decompresses to {} bytes, declared {want}",
                out.len()
            )));
        }
        Ok(std::borrow::Cow::Owned(out))
    }
}

/// Parse and validate an Arrow IPC file holding a deletion vector.
///
/// The footer and messages are read with `arrow_ipc`'s verified flatbuffer accessors; the
/// values are then read here rather than by `arrow_ipc::reader::FileReader`, which trusts
/// block offsets, buffer offsets and lengths inside the file (it unwraps negative lengths,
/// allocates `bodyLength` up front and slices buffers without bounds checks, so a corrupt
/// file panics it). Every block, message and buffer is checked to lie inside the file.
/// Deletion files are small and have no dictionaries; anything else is refused.
fn parse_ipc_file(bytes: &[u8]) -> Result<RowIdFile> {
    let len = bytes.len();
    if len < 18 || &bytes[..6] != b"ARROW1" || &bytes[len - 6..] != b"ARROW1" {
        return Err(Error::corrupt("not an Arrow IPC file (magic)"));
    }
    let footer_len = i32::from_le_bytes(bytes[len - 10..len - 6].try_into().expect("4 bytes"));
    let footer_len = usize::try_from(footer_len)
        .ok()
        .filter(|n| *n <= len - 18)
        .ok_or_else(|| {
            Error::corrupt(format!(
                "footer length {footer_len} does not fit the {len}-byte file"
            ))
        })?;
    let footer = arrow_ipc::root_as_footer(&bytes[len - 10 - footer_len..len - 10])
        .map_err(|e| Error::corrupt(format!("footer: {e}")).with_source(e))?;
    if footer.dictionaries().is_some_and(|d| !d.is_empty()) {
        return Err(Error::corrupt("dictionary batches in a deletion file"));
    }
    let signed = check_row_id_schema(footer.schema())?;
    let blocks = footer
        .recordBatches()
        .ok_or_else(|| Error::corrupt("footer lists no record batches"))?;
    let mut batches = Vec::with_capacity(blocks.len().min(1024));
    let mut total_rows = 0usize;
    for block in blocks.iter() {
        let start =
            u64::try_from(block.offset()).map_err(|_| Error::corrupt("negative block offset"))?;
        let meta = u64::try_from(block.metaDataLength())
            .map_err(|_| Error::corrupt("negative metadata length"))?;
        let body = u64::try_from(block.bodyLength())
            .map_err(|_| Error::corrupt("negative body length"))?;
        start
            .checked_add(meta)
            .and_then(|e| e.checked_add(body))
            .filter(|e| *e <= len as u64)
            .ok_or_else(|| {
                Error::corrupt(format!(
                    "record batch block {start}+{meta}+{body} beyond the file"
                ))
            })?;
        let (start, meta, body) = (start as usize, meta as usize, body as usize);
        let message = &bytes[start..start + meta];
        let skip = if message.get(..4) == Some(&[0xff; 4][..]) {
            8
        } else {
            4
        };
        let message = message
            .get(skip..)
            .ok_or_else(|| Error::corrupt("record batch message shorter than its prefix"))?;
        let message = arrow_ipc::root_as_message(message)
            .map_err(|e| Error::corrupt(format!("message: {e}")).with_source(e))?;
        let batch = message
            .header_as_record_batch()
            .ok_or_else(|| Error::corrupt("a record batch block does not hold a record batch"))?;
        let mut located = check_row_id_batch(&batch, body)?;
        located.buffer = start + meta + located.buffer.start..start + meta + located.buffer.end;
        total_rows += located.rows;
        if total_rows as i64 > MAX_DELETION_ROWS {
            return Err(Error::corrupt(format!(
                "more than {MAX_DELETION_ROWS} deleted rows in an Arrow deletion file"
            )));
        }
        batches.push(located);
    }
    Ok(RowIdFile { signed, batches })
}

/// The footer schema must be one 32-bit integer field without children or dictionary.
/// Returns whether it is signed.
fn check_row_id_schema(schema: Option<arrow_ipc::Schema<'_>>) -> Result<bool> {
    let schema = schema.ok_or_else(|| Error::corrupt("footer has no schema"))?;
    if !schema.endianness().equals_to_target_endianness() {
        return Err(Error::corrupt("big-endian deletion file"));
    }
    let fields: Vec<_> = schema.fields().iter().flatten().collect();
    let [field] = fields.as_slice() else {
        return Err(Error::corrupt(format!(
            "{} columns, expected 1 (row_id)",
            fields.len()
        )));
    };
    let int = field
        .type_as_int()
        .filter(|i| field.type_type() == arrow_ipc::Type::Int && i.bitWidth() == 32);
    let Some(int) = int else {
        return Err(Error::corrupt("row_id column is not a 32-bit integer"));
    };
    if field.dictionary().is_some() || field.children().is_some_and(|c| !c.is_empty()) {
        return Err(Error::corrupt(
            "row_id column is not a plain 32-bit integer",
        ));
    }
    Ok(int.is_signed())
}

/// Most rows accepted in one file (lance writes Arrow deletion files only up to 5000
/// deleted rows; the limit bounds the work and memory a small compressed file can demand).
const MAX_DELETION_ROWS: i64 = 4 << 20;

/// One non-null 32-bit column: one field node and two buffers (validity, values) inside the
/// `body_len`-byte body. Returns the values buffer's range relative to the body.
fn check_row_id_batch(batch: &arrow_ipc::RecordBatch<'_>, body_len: usize) -> Result<RowIdBatch> {
    let nodes: Vec<_> = batch.nodes().iter().flatten().collect();
    let [node] = nodes.as_slice() else {
        return Err(Error::corrupt(format!(
            "{} field nodes, expected 1",
            nodes.len()
        )));
    };
    if !(0..=MAX_DELETION_ROWS).contains(&node.length()) || node.null_count() != 0 {
        return Err(Error::corrupt(format!(
            "row_id column of length {} with {} nulls",
            node.length(),
            node.null_count()
        )));
    }
    if batch.length() != node.length() {
        return Err(Error::corrupt(format!(
            "batch of {} rows holds a column of {}",
            batch.length(),
            node.length()
        )));
    }
    if batch.variadicBufferCounts().is_some_and(|v| !v.is_empty()) {
        return Err(Error::corrupt("variadic buffers in a deletion file"));
    }
    let buffers: Vec<_> = batch.buffers().iter().flatten().collect();
    let [_validity, values] = buffers.as_slice() else {
        return Err(Error::corrupt(format!(
            "{} buffers, expected 2",
            buffers.len()
        )));
    };
    let mut ranges = buffers.iter().map(|buffer| {
        let offset =
            u64::try_from(buffer.offset()).map_err(|_| Error::corrupt("negative buffer offset"))?;
        let length =
            u64::try_from(buffer.length()).map_err(|_| Error::corrupt("negative buffer length"))?;
        offset
            .checked_add(length)
            .filter(|e| *e <= body_len as u64)
            .map(|end| offset as usize..end as usize)
            .ok_or_else(|| {
                Error::corrupt(format!(
                    "buffer {offset}+{length} outside the {body_len}-byte body"
                ))
            })
    });
    ranges.next().expect("two buffers")?;
    let buffer = ranges.next().expect("two buffers")?;
    let rows = node.length() as usize;
    let codec = batch.compression().map(|c| c.codec());
    if codec.is_none() && buffer.len() < rows * 4 {
        return Err(Error::corrupt(format!(
            "{rows} values in a {}-byte buffer",
            values.length()
        )));
    }
    Ok(RowIdBatch {
        rows,
        buffer,
        codec,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use arrow_array::{RecordBatch, UInt32Array};
    use arrow_schema::{DataType, Field, Schema};

    fn arrow_file(values: &[u32]) -> Bytes {
        let schema = Arc::new(Schema::new(vec![Field::new(
            "row_id",
            DataType::UInt32,
            false,
        )]));
        let batch = RecordBatch::try_new(
            Arc::clone(&schema),
            vec![Arc::new(UInt32Array::from(values.to_vec()))],
        )
        .unwrap();
        let mut buf = Vec::new();
        let mut w = arrow_ipc::writer::FileWriter::try_new(&mut buf, &schema).unwrap();
        w.write(&batch).unwrap();
        w.finish().unwrap();
        drop(w);
        Bytes::from(buf)
    }

    #[test]
    fn decodes_both_kinds() {
        let got = decode_deletion_file(DeletionKind::Arrow, &arrow_file(&[5, 1, 9])).unwrap();
        assert_eq!(got.0.iter().collect::<Vec<_>>(), vec![1, 5, 9]);
        let mut buf = Vec::new();
        RoaringBitmap::from_iter(0u32..6000)
            .serialize_into(&mut buf)
            .unwrap();
        let got = decode_deletion_file(DeletionKind::Bitmap, &Bytes::from(buf)).unwrap();
        assert_eq!(got.0.len(), 6000);
    }

    /// Regression (fuzz target `manifest`): arrow_ipc's `FileReader` sliced a buffer beyond
    /// the body (`fuzz/regressions/manifest/arrow-deletion-buffer-offset`), and would unwrap
    /// negative lengths or allocate a huge body. The decoder no longer uses that reader; every
    /// single-byte corruption of a real deletion file must be an error or a decode of at most
    /// the file's own row count, never a panic.
    #[test]
    fn corrupt_arrow_deletion_files_are_errors_not_panics() {
        let crash =
            include_bytes!("../../../fuzz/regressions/manifest/arrow-deletion-buffer-offset");
        let e = decode_deletion_file(DeletionKind::Arrow, &Bytes::copy_from_slice(&crash[1..]))
            .unwrap_err();
        assert!(matches!(e, Error::Corrupt { .. }), "{e}");
        // A file as arrow writes it, and lance's own (compressed) deletion files.
        let mut files = vec![arrow_file(&[1, 5, 9, 4000]).to_vec()];
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/datasets/bitmap_del.lance/_deletions"
        );
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "arrow") {
                files.push(std::fs::read(p).unwrap());
            }
        }
        assert!(files.len() >= 2);
        for good in files {
            for at in 0..good.len() {
                for value in [0x00, 0x7f, 0x80, 0xff] {
                    let mut bad = good.to_vec();
                    bad[at] = value;
                    let _ = decode_deletion_file(DeletionKind::Arrow, &Bytes::from(bad));
                }
            }
        }
    }

    fn arrow_file_with(
        column: arrow_array::ArrayRef,
        compression: Option<arrow_ipc::CompressionType>,
    ) -> Bytes {
        let schema = Arc::new(Schema::new(vec![Field::new(
            "row_id",
            column.data_type().clone(),
            false,
        )]));
        let batch = RecordBatch::try_new(Arc::clone(&schema), vec![column]).unwrap();
        let options = arrow_ipc::writer::IpcWriteOptions::default()
            .try_with_compression(compression)
            .unwrap();
        let mut buf = Vec::new();
        let mut w = arrow_ipc::writer::FileWriter::try_new_with_options(&mut buf, &schema, options)
            .unwrap();
        w.write(&batch).unwrap();
        w.write(&batch.slice(1, 2)).unwrap();
        w.finish().unwrap();
        drop(w);
        Bytes::from(buf)
    }

    /// Arrow writes deletion files uncompressed, LZ4-frame or zstd compressed, in one or
    /// more batches; all decode to the same offsets. Int32 offsets (older writers) decode,
    /// a negative one is corrupt.
    #[test]
    fn decodes_compressed_and_signed_files() {
        let values: Vec<u32> = (0..3000).map(|i| i * 7).collect();
        let column: arrow_array::ArrayRef = Arc::new(UInt32Array::from(values.clone()));
        for codec in [
            None,
            Some(arrow_ipc::CompressionType::LZ4_FRAME),
            Some(arrow_ipc::CompressionType::ZSTD),
        ] {
            let file = arrow_file_with(Arc::clone(&column), codec);
            let got = decode_deletion_file(DeletionKind::Arrow, &file).unwrap();
            assert_eq!(
                got.0,
                RoaringBitmap::from_iter(values.iter().copied()),
                "{codec:?}"
            );
        }
        let signed: arrow_array::ArrayRef = Arc::new(arrow_array::Int32Array::from(vec![4, 2, 9]));
        let got =
            decode_deletion_file(DeletionKind::Arrow, &arrow_file_with(signed, None)).unwrap();
        assert_eq!(got.0.iter().collect::<Vec<_>>(), vec![2, 4, 9]);
        let negative: arrow_array::ArrayRef =
            Arc::new(arrow_array::Int32Array::from(vec![4, -2, 9]));
        let e = decode_deletion_file(DeletionKind::Arrow, &arrow_file_with(negative, None))
            .unwrap_err();
        assert!(e.to_string().contains("negative row offset -2"), "{e}");
    }

    /// Corrupting any byte of a compressed file gives an error or a decode, never a panic.
    #[test]
    fn corrupt_compressed_deletion_files_are_errors_not_panics() {
        // Compressible (runs of equal offsets), so the writer keeps the compressed form.
        let column: arrow_array::ArrayRef =
            Arc::new(UInt32Array::from_iter_values((0..256).map(|i| i / 64)));
        for codec in [
            arrow_ipc::CompressionType::LZ4_FRAME,
            arrow_ipc::CompressionType::ZSTD,
        ] {
            let good = arrow_file_with(Arc::clone(&column), Some(codec));
            for at in 0..good.len() {
                for value in [0x00, 0x7f, 0xff] {
                    let mut bad = good.to_vec();
                    bad[at] = value;
                    let _ = decode_deletion_file(DeletionKind::Arrow, &Bytes::from(bad));
                }
            }
            // A declared uncompressed length that disagrees with the row count, and a
            // truncated compressed payload, are refused.
            let values = parse_ipc_file(&good).unwrap().batches[0].buffer.clone();
            let mut bad = good.to_vec();
            bad[values.start] = bad[values.start].wrapping_add(4);
            let e = decode_deletion_file(DeletionKind::Arrow, &Bytes::from(bad)).unwrap_err();
            assert!(e.to_string().contains("declares"), "{codec:?}: {e}");
            let mut bad = good.to_vec();
            bad[values.start + 8..values.end].fill(0);
            let e = decode_deletion_file(DeletionKind::Arrow, &Bytes::from(bad)).unwrap_err();
            assert!(e.to_string().contains("decompress"), "{codec:?}: {e}");
        }
    }

    /// A small compressed file cannot make the decoder expand an unbounded row count.
    #[test]
    fn row_count_is_bounded_across_batches() {
        let half = MAX_DELETION_ROWS as u32 / 2 + 1;
        let column: arrow_array::ArrayRef = Arc::new(UInt32Array::from(vec![0u32; half as usize]));
        // Two zstd batches of just over half the limit each: a few KB in all.
        let schema = Arc::new(Schema::new(vec![Field::new(
            "row_id",
            DataType::UInt32,
            false,
        )]));
        let batch = RecordBatch::try_new(Arc::clone(&schema), vec![column]).unwrap();
        let options = arrow_ipc::writer::IpcWriteOptions::default()
            .try_with_compression(Some(arrow_ipc::CompressionType::ZSTD))
            .unwrap();
        let mut buf = Vec::new();
        let mut w = arrow_ipc::writer::FileWriter::try_new_with_options(&mut buf, &schema, options)
            .unwrap();
        w.write(&batch).unwrap();
        w.write(&batch).unwrap();
        w.finish().unwrap();
        drop(w);
        assert!(buf.len() < 64 << 10, "{} bytes", buf.len());
        let e = decode_deletion_file(DeletionKind::Arrow, &Bytes::from(buf)).unwrap_err();
        assert!(e.to_string().contains("deleted rows"), "{e}");
    }

    #[test]
    fn rejects_garbage() {
        let garbage = Bytes::from_static(b"not a deletion file at all");
        assert!(matches!(
            decode_deletion_file(DeletionKind::Arrow, &garbage),
            Err(Error::Corrupt { .. })
        ));
        assert!(matches!(
            decode_deletion_file(DeletionKind::Bitmap, &garbage),
            Err(Error::Corrupt { .. })
        ));
        let f = arrow_file(&[1, 2, 3]);
        let truncated = f.slice(0..f.len() - 9);
        assert!(matches!(
            decode_deletion_file(DeletionKind::Arrow, &truncated),
            Err(Error::Corrupt { .. })
        ));
    }

    #[test]
    fn decodes_the_fixture_files() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/datasets/bitmap_del.lance/_deletions");
        let mut kinds = Vec::new();
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let kind = if p.extension().unwrap() == "bin" {
                DeletionKind::Bitmap
            } else {
                DeletionKind::Arrow
            };
            let v = decode_deletion_file(kind, &Bytes::from(std::fs::read(&p).unwrap())).unwrap();
            match kind {
                DeletionKind::Bitmap => assert_eq!(v.0, RoaringBitmap::from_iter(0u32..5500)),
                DeletionKind::Arrow => assert_eq!(v.0, RoaringBitmap::from_iter(0u32..10)),
            }
            kinds.push(kind);
        }
        kinds.sort_by_key(|k| *k as u8);
        assert_eq!(kinds, vec![DeletionKind::Arrow, DeletionKind::Bitmap]);
    }
}
