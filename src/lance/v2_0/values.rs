//! Planners and decoders of the value encodings of 2.0 pages: `Flat` (fixed width, 1-bit
//! bitmaps, whole-buffer zstd/LZ4), `Nullable`, `FixedSizeList`. A read of page-local rows
//! asks only for the bytes of those rows (bitmaps: the bytes holding their bits); a
//! compressed buffer is read whole.

use std::ops::Range;

use arrow_buffer::{BooleanBuffer, BooleanBufferBuilder, Buffer, MutableBuffer};
use arrow_schema::DataType;
use bytes::Bytes;

use super::walk::{all, Walk};
use crate::error::{Error, Result};
use crate::lance::compression::{decompress_general, fsst_expand_values, MAX_DECODED_BYTES};
use crate::lance::page::array_encoding::{FlatCompression, Node, Nullability};

/// Page-local rows: sorted, disjoint, non-empty ranges.
pub(crate) type Rows = [Range<u64>];

/// Decoded values of some rows of a page, before they become an Arrow array.
#[derive(Debug, Clone)]
pub(crate) enum Decoded {
    /// `len` values of `bits` bits (1 = bitmap at bit 0).
    Fixed {
        /// Bits per value.
        bits: u64,
        /// Number of values.
        len: usize,
        /// The packed values.
        data: Buffer,
        /// Validity (1 = valid).
        validity: Option<BooleanBuffer>,
    },
    /// Variable-width values; `offsets[0] == 0`.
    Variable {
        /// `len + 1` offsets into `data`.
        offsets: Vec<u64>,
        /// The bytes.
        data: Buffer,
        /// Validity (1 = valid).
        validity: Option<BooleanBuffer>,
    },
    /// Fixed-size lists.
    FixedSizeList {
        /// Items per list.
        dimension: u64,
        /// `len * dimension` items.
        items: Box<Decoded>,
        /// Validity of the lists.
        validity: Option<BooleanBuffer>,
    },
    /// `len` nulls.
    AllNull(usize),
    /// A finished array (dictionary pages decode through their items).
    Array(arrow_array::ArrayRef),
}

impl Decoded {
    /// Number of values.
    pub(crate) fn len(&self) -> usize {
        match self {
            Decoded::Fixed { len, .. } => *len,
            Decoded::Variable { offsets, .. } => offsets.len().saturating_sub(1),
            Decoded::FixedSizeList {
                dimension, items, ..
            } => items.len() / (*dimension).max(1) as usize,
            Decoded::AllNull(len) => *len,
            Decoded::Array(a) => a.len(),
        }
    }

    fn with_validity(self, v: BooleanBuffer) -> Result<Decoded> {
        crate::ensure_corrupt!(
            v.len() == self.len(),
            "validity of {} values for {} values",
            v.len(),
            self.len()
        );
        let v = Some(v);
        Ok(match self {
            Decoded::Fixed {
                bits, len, data, ..
            } => Decoded::Fixed {
                bits,
                len,
                data,
                validity: v,
            },
            Decoded::Variable { offsets, data, .. } => Decoded::Variable {
                offsets,
                data,
                validity: v,
            },
            Decoded::FixedSizeList {
                dimension, items, ..
            } => Decoded::FixedSizeList {
                dimension,
                items,
                validity: v,
            },
            other => {
                return Err(Error::corrupt(format!(
                    "validity around a {} node",
                    other.kind()
                )))
            }
        })
    }

    fn kind(&self) -> &'static str {
        match self {
            Decoded::Fixed { .. } => "fixed-width",
            Decoded::Variable { .. } => "variable-width",
            Decoded::FixedSizeList { .. } => "fixed-size list",
            Decoded::AllNull(_) => "all-null",
            Decoded::Array(_) => "dictionary",
        }
    }
}

/// Total rows of `rows`.
pub(crate) fn count(rows: &Rows) -> u64 {
    rows.iter().map(|r| r.end - r.start).sum()
}

/// Decode `rows` of a value node (`Flat`, `Nullable`, `FixedSizeList`, `Binary`,
/// `Dictionary`); `None` until every byte is known. `dictionary_type` is the value type
/// of a dictionary node's items, `shifted_dictionary` whether index 0 means null.
pub(crate) fn decode(
    node: &Node,
    rows: &Rows,
    w: &mut Walk<'_>,
    items: &super::binary::ItemsType<'_>,
) -> Result<Option<Decoded>> {
    match node {
        Node::Flat {
            bits,
            buffer,
            compression,
        } => flat(*bits, buffer, *compression, rows, w),
        Node::Nullable(Nullability::NoNull(values)) => decode(values, rows, w, items),
        Node::Nullable(Nullability::AllNull) => Ok(Some(Decoded::AllNull(checked_len(rows)?))),
        Node::Nullable(Nullability::SomeNull { validity, values }) => {
            let validity = bitmap(validity, rows, w)?;
            let values = decode(values, rows, w, items)?;
            match (validity, values) {
                (Some(v), Some(values)) => values.with_validity(v).map(Some),
                _ => Ok(None),
            }
        }
        Node::FixedSizeList {
            dimension,
            items: inner,
        } => {
            let expanded = rows
                .iter()
                .map(|r| {
                    let start = r.start.checked_mul(*dimension);
                    let end = r.end.checked_mul(*dimension);
                    match (start, end) {
                        (Some(s), Some(e)) => Ok(s..e),
                        _ => Err(Error::corrupt("fixed-size list item position overflows")),
                    }
                })
                .collect::<Result<Vec<_>>>()?;
            let decoded = decode(inner, &expanded, w, items)?;
            Ok(decoded.map(|d| Decoded::FixedSizeList {
                dimension: *dimension,
                items: Box::new(d),
                validity: None,
            }))
        }
        Node::Binary { .. } => super::binary::binary(node, rows, w),
        Node::Fsst { binary, symbols } => match super::binary::binary(binary, rows, w)? {
            Some(Decoded::Variable {
                offsets,
                data,
                validity,
            }) => {
                let (offsets, data) =
                    fsst_expand_values(symbols, &offsets, &bytes::Bytes::from(data.to_vec()))?;
                Ok(Some(Decoded::Variable {
                    offsets,
                    data: arrow_buffer::Buffer::from(data),
                    validity,
                }))
            }
            Some(_) => Err(Error::corrupt("fsst values are not binary")),
            None => Ok(None),
        },
        Node::Dictionary { .. } => super::binary::dictionary(node, rows, w, items),
        Node::List { .. } | Node::Struct => Err(Error::corrupt(format!(
            "{} encoding where values were expected",
            node.name()
        ))),
        Node::Unsupported(name) => Err(Error::unsupported(format!("Lance 2.0 {name} encoding"))),
    }
}

fn checked_len(rows: &Rows) -> Result<usize> {
    let n = count(rows);
    usize::try_from(n)
        .ok()
        .filter(|&n| n <= MAX_DECODED_BYTES * 8)
        .ok_or_else(|| Error::corrupt(format!("{n} values in one read")))
}

/// A 1-bit node (the validity of `Nullable`): its bits for `rows`.
fn bitmap(node: &Node, rows: &Rows, w: &mut Walk<'_>) -> Result<Option<BooleanBuffer>> {
    let Node::Flat {
        bits: 1,
        buffer,
        compression,
    } = node
    else {
        return Err(Error::corrupt(format!(
            "validity is a {} encoding, not a 1-bit flat",
            node.describe()
        )));
    };
    Ok(flat(1, buffer, *compression, rows, w)?.map(|d| match d {
        Decoded::Fixed { data, len, .. } => BooleanBuffer::new(data, 0, len),
        _ => BooleanBuffer::new_unset(0),
    }))
}

/// Byte span of `rows` of `bits`-bit values, relative to the buffer start.
fn byte_span(bits: u64, r: &Range<u64>) -> Result<Range<u64>> {
    let overflow = || Error::corrupt("flat value position overflows");
    if bits == 1 {
        return Ok(r.start / 8..r.end.div_ceil(8));
    }
    let width = bits / 8;
    Ok(r.start.checked_mul(width).ok_or_else(overflow)?
        ..r.end.checked_mul(width).ok_or_else(overflow)?)
}

/// `rows` of a flat buffer of `bits`-bit values.
pub(crate) fn flat(
    bits: u64,
    buffer: &Range<u64>,
    compression: Option<FlatCompression>,
    rows: &Rows,
    w: &mut Walk<'_>,
) -> Result<Option<Decoded>> {
    let len = checked_len(rows)?;
    let buffer_len = buffer.end - buffer.start;
    let spans = rows
        .iter()
        .map(|r| byte_span(bits, r))
        .collect::<Result<Vec<_>>>()?;
    let pieces: Vec<Option<Bytes>> = match compression {
        None => spans
            .iter()
            .map(|s| {
                crate::ensure_corrupt!(
                    s.end <= buffer_len,
                    "values at bytes {}..{} of a {buffer_len}-byte buffer",
                    s.start,
                    s.end
                );
                Ok(w.get(buffer.start + s.start..buffer.start + s.end))
            })
            .collect::<Result<_>>()?,
        Some(c) => {
            let Some(whole) = w.get(buffer.clone()) else {
                return Ok(None);
            };
            let plain = Bytes::from(
                decompress_general(c == FlatCompression::Zstd, &whole)
                    .map_err(|e| e.at("", Some(buffer.clone())))?,
            );
            spans
                .iter()
                .map(|s| {
                    crate::ensure_corrupt!(
                        s.end <= plain.len() as u64,
                        "values at bytes {}..{} of a {}-byte decompressed buffer",
                        s.start,
                        s.end,
                        plain.len()
                    );
                    Ok(Some(plain.slice(s.start as usize..s.end as usize)))
                })
                .collect::<Result<_>>()?
        }
    };
    let Some(pieces) = all(pieces) else {
        return Ok(None);
    };
    let data = if bits == 1 {
        let mut out = BooleanBufferBuilder::new(len);
        for (r, piece) in rows.iter().zip(&pieces) {
            let first = (r.start % 8) as usize;
            out.append_packed_range(first..first + (r.end - r.start) as usize, piece);
        }
        out.finish().into_inner()
    } else {
        let total: usize = pieces.iter().map(|p| p.len()).sum();
        let mut out = MutableBuffer::new(total);
        for piece in &pieces {
            out.extend_from_slice(piece);
        }
        out.into()
    };
    Ok(Some(Decoded::Fixed {
        bits,
        len,
        data,
        validity: None,
    }))
}

/// The end offsets that bound `rows` of an offsets node (binary indices, list offsets): for
/// each run the offset before its first row (the previous row's end) and one per row, as
/// `u64`s. `None` while the walk still lacks bytes.
pub(crate) fn decode_offsets(
    node: &Node,
    rows: &Rows,
    w: &mut Walk<'_>,
    what: &str,
) -> Result<Option<Vec<u64>>> {
    let offset_rows: Vec<Range<u64>> = rows
        .iter()
        .map(|r| r.start.saturating_sub(1)..r.end)
        .collect();
    let plain = super::binary::ItemsType {
        value_type: &DataType::UInt64,
        shifted: false,
    };
    match decode(node, &offset_rows, w, &plain)? {
        Some(decoded) => as_u64s(&decoded, what).map(Some),
        None => Ok(None),
    }
}

/// Fixed 64-bit values as `u64`s (offsets, indices).
pub(crate) fn as_u64s(decoded: &Decoded, what: &str) -> Result<Vec<u64>> {
    match decoded {
        Decoded::Fixed {
            bits, len, data, ..
        } => {
            let width = (*bits / 8) as usize;
            crate::ensure_corrupt!(
                (1..=8).contains(&width) && *bits % 8 == 0 && data.len() >= len * width,
                "{what}: {bits}-bit values"
            );
            Ok(data
                .chunks_exact(width)
                .take(*len)
                .map(|c| {
                    let mut w = [0u8; 8];
                    w[..width].copy_from_slice(c);
                    u64::from_le_bytes(w)
                })
                .collect())
        }
        other => Err(Error::corrupt(format!(
            "{what}: {} values where integers were expected",
            other.kind()
        ))),
    }
}

/// The validity of decoded values, if any.
pub(crate) fn validity_of(decoded: &Decoded) -> Option<&BooleanBuffer> {
    match decoded {
        Decoded::Fixed { validity, .. }
        | Decoded::Variable { validity, .. }
        | Decoded::FixedSizeList { validity, .. } => validity.as_ref(),
        _ => None,
    }
}
