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
