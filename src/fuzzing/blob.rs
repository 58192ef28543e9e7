//! Body of the fuzz target `blob_descriptors`: blob column descriptors from arbitrary bytes.
//!
//! Input layout: `[mode][object size: 8 bytes LE][rows...]`. Mode bit 0 clear: blob v1, the
//! rows are 16-byte `(position, size)` values (mode bit 1: the 2.1+ null rule); set: blob
//! v2, each row is a length byte then that many bytes of a packed descriptor row (a length
//! of 255 makes a null row). Every decoded location is checked against the object size.
//! Decoding must never panic; errors are expected.

use std::sync::Arc;

use arrow_array::{ArrayRef, FixedSizeBinaryArray, LargeBinaryArray};

use crate::lance::blob::{descriptors_from_raw, locations, BlobFormat};

/// Run the blob descriptor decoders over `data`.
pub fn blob_descriptors(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (size, rows) = rest.split_at(rest.len().min(8));
    let mut object_size = [0u8; 8];
    object_size[..size.len()].copy_from_slice(size);
    let object_size = u64::from_le_bytes(object_size);
    let (raw, format): (ArrayRef, BlobFormat) = if mode & 1 == 0 {
        let values = rows.chunks_exact(16).map(Some);
        match FixedSizeBinaryArray::try_from_sparse_iter_with_size(values, 16) {
            Ok(a) => (Arc::new(a), BlobFormat::V1),
            Err(_) => return,
        }
    } else {
        (
            Arc::new(LargeBinaryArray::from(v2_rows(rows))),
            BlobFormat::V2,
        )
    };
    let Ok(descriptors) = descriptors_from_raw(raw.as_ref(), format, mode & 2 != 0) else {
        return;
    };
    let Ok(found) = locations(descriptors.as_ref(), format) else {
        return;
    };
    assert_eq!(found.len(), raw.len(), "one location per row");
    for location in found.into_iter().flatten() {
        if location.check_inside("fuzz", object_size).is_ok() {
            let range = location.range().expect("checked inside");
            assert!(range.end <= object_size);
        }
    }
}

fn v2_rows(mut rows: &[u8]) -> Vec<Option<&[u8]>> {
    let mut out = Vec::new();
    while let Some((&len, rest)) = rows.split_first() {
        if len == 255 {
            out.push(None);
            rows = rest;
            continue;
        }
        let (row, after) = rest.split_at(rest.len().min(len as usize));
        out.push(Some(row));
        rows = after;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::blob_descriptors;

    /// Seeds and past shapes: real-looking rows of every kind, truncated rows, nulls.
    #[test]
    fn blob_descriptor_inputs_never_panic() {
        let mut v2 = vec![1u8];
        v2.extend_from_slice(&1000u64.to_le_bytes());
        for kind in 0..5u8 {
            v2.push(25);
            v2.push(kind);
            v2.extend_from_slice(&(kind as u64 * 100).to_le_bytes());
            v2.extend_from_slice(&u64::MAX.to_le_bytes());
            v2.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
        }
        v2.extend_from_slice(&[255, 3, 1, 2, 3, 30]);
        let mut v1 = vec![2u8];
        v1.extend_from_slice(&64u64.to_le_bytes());
        for (p, s) in [(0u64, 0u64), (1, 0), (60, 4), (60, 5), (u64::MAX, 2)] {
            v1.extend_from_slice(&p.to_le_bytes());
            v1.extend_from_slice(&s.to_le_bytes());
        }
        for input in [vec![], vec![0], vec![1, 2, 3], v2, v1] {
            blob_descriptors(&input);
        }
    }
}
