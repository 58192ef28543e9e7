//! Deletion files (pure decoders): which row offsets of a fragment are deleted.
//!
//! * Arrow (`.arrow`): an Arrow IPC *file* with one non-null UInt32 column `row_id` of
//!   deleted offsets (lance writes it while a fragment has at most 5000 deleted rows).
//! * Bitmap (`.bin`): a portable 32-bit roaring bitmap of deleted offsets (above 5000).

use std::io::Cursor;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, UInt32Type};
use arrow_array::Array;
use arrow_schema::DataType;
use bytes::Bytes;
use roaring::RoaringBitmap;

use crate::error::{Error, Result};
use crate::io::cache::DeepSize;
use crate::lance::dataset::manifest::DeletionKind;

/// Deleted row offsets of one fragment.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeletionVector(pub RoaringBitmap);

impl DeepSize for DeletionVector {
    fn deep_size(&self) -> usize {
        64 + self.0.serialized_size()
    }
}

/// Decode a deletion file of the given kind.
pub fn decode_deletion_file(kind: DeletionKind, bytes: &Bytes) -> Result<DeletionVector> {
    match kind {
        DeletionKind::Bitmap => RoaringBitmap::deserialize_from(&bytes[..])
            .map(DeletionVector)
            .map_err(|e| Error::corrupt(format!("deletion bitmap: {e}"))),
        DeletionKind::Arrow => decode_arrow(bytes),
    }
}

fn decode_arrow(bytes: &Bytes) -> Result<DeletionVector> {
    let corrupt = |what: String| Error::corrupt(format!("arrow deletion file: {what}"));
    check_ipc_file(bytes).map_err(corrupt)?;
    // `arrow_ipc` trusts offsets inside the file; the checks above refuse what we know it
    // panics on, and any panic left is contained here and reported as corrupt input (the
    // fuzz regression `arrow-deletion-buffer-offset` reaches one).
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read_arrow_row_ids(bytes)))
        .unwrap_or_else(|_| {
            Err(corrupt(
                "the Arrow IPC reader failed on its buffers (inconsistent offsets)".into(),
            ))
        })
}

fn read_arrow_row_ids(bytes: &Bytes) -> Result<DeletionVector> {
    let corrupt = |what: String| Error::corrupt(format!("arrow deletion file: {what}"));
    let reader = arrow_ipc::reader::FileReader::try_new(Cursor::new(bytes.clone()), None)
        .map_err(|e| corrupt(e.to_string()))?;
    let schema = reader.schema();
    if schema.fields().len() != 1 {
        return Err(corrupt(format!(
            "{} columns, expected 1 (row_id)",
            schema.fields().len()
        )));
    }
    let mut deleted = RoaringBitmap::new();
    for batch in reader {
        let batch = batch.map_err(|e| corrupt(e.to_string()))?;
        let column = batch.column(0);
        if column.null_count() > 0 {
            return Err(corrupt("null row offsets".into()));
        }
        match column.data_type() {
            DataType::UInt32 => {
                deleted.extend(column.as_primitive::<UInt32Type>().values().iter().copied())
            }
            DataType::Int32 => {
                for v in column.as_primitive::<Int32Type>().values().iter() {
                    let v = u32::try_from(*v)
                        .map_err(|_| corrupt(format!("negative row offset {v}")))?;
                    deleted.insert(v);
                }
            }
            other => {
                return Err(corrupt(format!(
                    "row_id column has type {other}, expected UInt32"
                )))
            }
        }
    }
    Ok(DeletionVector(deleted))
}

/// Validate the framing of an Arrow IPC file before `arrow_ipc`'s `FileReader` sees it:
/// that reader trusts block offsets and lengths (it unwraps negative lengths, allocates
/// `bodyLength` bytes up front and slices buffers without bounds checks), so every block,
/// message and buffer must be checked to lie inside the file first. Deletion files are
/// small, uncompressed and have no dictionaries; anything else is refused.
fn check_ipc_file(bytes: &[u8]) -> std::result::Result<(), String> {
    let len = bytes.len();
    if len < 18 || &bytes[..6] != b"ARROW1" || &bytes[len - 6..] != b"ARROW1" {
        return Err("not an Arrow IPC file (magic)".into());
    }
    let footer_len = i32::from_le_bytes(bytes[len - 10..len - 6].try_into().expect("4 bytes"));
    let footer_len = usize::try_from(footer_len)
        .ok()
        .filter(|n| *n <= len - 18)
        .ok_or_else(|| format!("footer length {footer_len} does not fit the {len}-byte file"))?;
    let footer = arrow_ipc::root_as_footer(&bytes[len - 10 - footer_len..len - 10])
        .map_err(|e| format!("footer: {e}"))?;
    if footer.dictionaries().is_some_and(|d| !d.is_empty()) {
        return Err("dictionary batches in a deletion file".into());
    }
    check_row_id_schema(footer.schema())?;
    if footer.recordBatches().is_none() {
        return Err("footer lists no record batches".into());
    }
    for block in footer.recordBatches().iter().flatten() {
        let start = u64::try_from(block.offset()).map_err(|_| "negative block offset")?;
        let meta = u64::try_from(block.metaDataLength()).map_err(|_| "negative metadata length")?;
        let body = u64::try_from(block.bodyLength()).map_err(|_| "negative body length")?;
        start
            .checked_add(meta)
            .and_then(|e| e.checked_add(body))
            .filter(|e| *e <= len as u64)
            .ok_or_else(|| format!("record batch block {start}+{meta}+{body} beyond the file"))?;
        let message = &bytes[start as usize..(start + meta) as usize];
        let skip = if message.get(..4) == Some(&[0xff; 4][..]) {
            8
        } else {
            4
        };
        let message = message
            .get(skip..)
            .ok_or("record batch message shorter than its prefix")?;
        let message = arrow_ipc::root_as_message(message).map_err(|e| format!("message: {e}"))?;
        let batch = message
            .header_as_record_batch()
            .ok_or("a record batch block does not hold a record batch")?;
        check_row_id_batch(
            &batch,
            &bytes[(start + meta) as usize..(start + meta + body) as usize],
        )?;
    }
    Ok(())
}

/// The footer schema must be one 32-bit integer field without children or dictionary
/// (arrow_ipc's schema conversion unwraps and panics on anything malformed).
fn check_row_id_schema(schema: Option<arrow_ipc::Schema<'_>>) -> std::result::Result<(), String> {
    let schema = schema.ok_or("footer has no schema")?;
    if !schema.endianness().equals_to_target_endianness() {
        return Err("big-endian deletion file".into());
    }
    let fields: Vec<_> = schema.fields().iter().flatten().collect();
    let [field] = fields.as_slice() else {
        return Err(format!("{} columns, expected 1 (row_id)", fields.len()));
    };
    let is_int32 = field.type_type() == arrow_ipc::Type::Int
        && field.type_as_int().is_some_and(|i| i.bitWidth() == 32);
    if !is_int32 || field.dictionary().is_some() || field.children().is_some_and(|c| !c.is_empty())
    {
        return Err("row_id column is not a plain 32-bit integer".into());
    }
    Ok(())
}

/// Largest decompressed buffer accepted (lance writes Arrow deletion files only up to
/// 5000 deleted rows, i.e. 20 KB of offsets).
const MAX_DELETION_BUFFER: u64 = 16 << 20;

/// One non-null 32-bit column: one field node, a validity and a values buffer inside the
/// body, no nulls (arrow_ipc would otherwise build a validity bitmap without checking its
/// length), and compressed buffers that declare at most [`MAX_DELETION_BUFFER`] bytes.
fn check_row_id_batch(
    batch: &arrow_ipc::RecordBatch<'_>,
    body: &[u8],
) -> std::result::Result<(), String> {
    let nodes: Vec<_> = batch.nodes().iter().flatten().collect();
    let [node] = nodes.as_slice() else {
        return Err(format!("{} field nodes, expected 1", nodes.len()));
    };
    if node.length() < 0 || node.null_count() != 0 {
        return Err(format!(
            "row_id column of length {} with {} nulls",
            node.length(),
            node.null_count()
        ));
    }
    if batch.variadicBufferCounts().is_some_and(|v| !v.is_empty()) {
        return Err("variadic buffers in a deletion file".into());
    }
    let buffers: Vec<_> = batch.buffers().iter().flatten().collect();
    if buffers.len() != 2 {
        return Err(format!("{} buffers, expected 2", buffers.len()));
    }
    for buffer in &buffers {
        let offset = u64::try_from(buffer.offset()).map_err(|_| "negative buffer offset")?;
        let length = u64::try_from(buffer.length()).map_err(|_| "negative buffer length")?;
        offset
            .checked_add(length)
            .filter(|e| *e <= body.len() as u64)
            .ok_or_else(|| {
                format!(
                    "buffer {offset}+{length} outside the {}-byte body",
                    body.len()
                )
            })?;
        if batch.compression().is_some() && length >= 8 {
            let at = offset as usize;
            let declared = i64::from_le_bytes(body[at..at + 8].try_into().expect("8 bytes"));
            if declared > MAX_DELETION_BUFFER as i64 {
                return Err(format!("buffer decompresses to {declared} bytes"));
            }
        } else if batch.compression().is_none() && length > MAX_DELETION_BUFFER {
            return Err(format!("buffer of {length} bytes"));
        }
    }
    let values = u64::try_from(buffers[1].length()).unwrap_or(0);
    if batch.compression().is_none() && (values as u128) < node.length() as u128 * 4 {
        return Err(format!(
            "{} values in a {values}-byte buffer",
            node.length()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use arrow_array::{RecordBatch, UInt32Array};
    use arrow_schema::{Field, Schema};

    fn arrow_file(values: &[u32]) -> Bytes {
        let schema = Arc::new(Schema::new(vec![Field::new(
            "row_id",
            DataType::UInt32,
            false,
        )]));
        let batch = RecordBatch::try_new(
            schema.clone(),
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

    /// Regression (fuzz target `manifest`): arrow_ipc's reader sliced a buffer beyond the
    /// body (`fuzz/regressions/manifest/arrow-deletion-buffer-offset`), and would unwrap
    /// negative lengths or allocate a huge body; every single-byte corruption of a real
    /// deletion file must now be an error or a valid decode, never a panic.
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
