//! Fixed-width codecs: `Flat`, `Constant`, `ByteStreamSplit` and `FixedSizeList`.
//!
//! `FixedSizeList` flattens one or more FSL layers down to a `Flat` leaf (or a value-less
//! `Constant` leaf when every item is null). A layer with `has_validity` carries a bitmap of
//! its child items:
//! * mini-block: one buffer per such layer (outer first, `ceil(items/8)` bytes each), then the
//!   value buffer;
//! * per value (full-zip, block): every row is `[validity bytes of each such layer (ceil(cum_dim/8)
//!   each)][row value bytes]`.

use bytes::Bytes;

use super::common::{packed_len, repeat_scalar, require_no_payload};
use super::{DecodedValues, MAX_DECODED_BYTES};
use crate::error::{Error, Result};
use crate::lance::proto::encodings::compressive_encoding::Compression;
use crate::lance::proto::encodings::{ByteStreamSplit, Constant, FixedSizeList, Flat};

/// Plain fixed-width values in exactly `ceil(n*bits/8)` bytes.
pub(super) fn decode_flat(flat: &Flat, data: Bytes, num_values: usize) -> Result<DecodedValues> {
    crate::ensure_corrupt!(flat.bits_per_value > 0, "Flat has 0 bits per value");
    if flat.data.is_some() {
        return Err(Error::unsupported(
            "Flat with buffer compression (not written by lance 14.0.2)",
        ));
    }
    let expected = packed_len(num_values, flat.bits_per_value, "Flat")?;
    crate::ensure_corrupt!(
        data.len() == expected,
        "Flat buffer has {} bytes, expected {expected} for {num_values} values of {} bits",
        data.len(),
        flat.bits_per_value
    );
    Ok(DecodedValues::Fixed {
        bits_per_value: flat.bits_per_value,
        num_values,
        data,
    })
}

/// A constant: the scalar repeated, or (no scalar) `num_values` null values of width 0.
pub(super) fn decode_constant(
    constant: &Constant,
    payload: &Option<Bytes>,
    num_values: usize,
) -> Result<DecodedValues> {
    require_no_payload(payload, "Constant")?;
    Ok(match &constant.value {
        Some(scalar) => {
            crate::ensure_corrupt!(!scalar.is_empty(), "Constant scalar is empty");
            DecodedValues::Fixed {
                bits_per_value: scalar.len() as u64 * 8,
                num_values,
                data: repeat_scalar(scalar, num_values, "Constant")?,
            }
        }
        None => DecodedValues::Fixed {
            bits_per_value: 0,
            num_values,
            data: Bytes::new(),
        },
    })
}

/// Byte-stream split: byte plane 0 of all values, then plane 1, ...
pub(super) fn decode_byte_stream_split(
    bss: &ByteStreamSplit,
    buffers: &[Bytes],
    num_values: usize,
) -> Result<DecodedValues> {
    let inner = super::common::child(&bss.values, "ByteStreamSplit")?;
    let Some(Compression::Flat(flat)) = &inner.compression else {
        return Err(Error::corrupt("ByteStreamSplit values must be Flat"));
    };
    let bits = flat.bits_per_value;
    crate::ensure_corrupt!(
        matches!(bits, 32 | 64) && flat.data.is_none(),
        "ByteStreamSplit needs plain Flat 32/64, got {bits} bits"
    );
    let [buffer] = buffers else {
        return Err(Error::corrupt(format!(
            "ByteStreamSplit chunk has {} buffers, expected 1",
            buffers.len()
        )));
    };
    let width = (bits / 8) as usize;
    let expected = packed_len(num_values, bits, "ByteStreamSplit")?;
    crate::ensure_corrupt!(
        buffer.len() == expected,
        "ByteStreamSplit buffer has {} bytes, expected {expected}",
        buffer.len()
    );
    let mut out = vec![0u8; expected];
    for (plane, bytes) in buffer.chunks(num_values.max(1)).enumerate().take(width) {
        for (i, byte) in bytes.iter().enumerate() {
            out[i * width + plane] = *byte;
        }
    }
    Ok(DecodedValues::Fixed {
        bits_per_value: bits,
        num_values,
        data: Bytes::from(out),
    })
}

/// A parsed chain of FSL layers.
struct FslLayers {
    /// (dimension, has_validity), outer first.
    layers: Vec<(u64, bool)>,
    /// Bits per leaf item; 0 for an all-null (Constant) leaf.
    item_bits: u64,
}

impl FslLayers {
    fn parse(fsl: &FixedSizeList) -> Result<Self> {
        let mut layers = Vec::new();
        let mut current = fsl;
        loop {
            crate::ensure_corrupt!(current.items_per_value > 0, "FixedSizeList dimension is 0");
            crate::ensure_corrupt!(layers.len() < 64, "FixedSizeList nesting is too deep");
            layers.push((current.items_per_value, current.has_validity));
            let inner = super::common::child(&current.values, "FixedSizeList")?;
            match super::common::variant(inner)? {
                Compression::FixedSizeList(next) => current = next,
                Compression::Flat(flat) => {
                    crate::ensure_corrupt!(
                        flat.bits_per_value > 0 && flat.data.is_none(),
                        "FixedSizeList leaf must be plain Flat with a positive width"
                    );
                    return Ok(FslLayers {
                        layers,
                        item_bits: flat.bits_per_value,
                    });
                }
                Compression::Constant(_) => {
                    return Ok(FslLayers {
                        layers,
                        item_bits: 0,
                    })
                }
                other => {
                    return Err(Error::corrupt(format!(
                        "FixedSizeList leaf must be Flat or Constant, got {}",
                        super::describe::node_name(other)
                    )))
                }
            }
        }
    }

    /// Items per row below each layer (cumulative dimension), outer first.
    fn cumulative_dims(&self) -> Result<Vec<u64>> {
        let mut dims = Vec::with_capacity(self.layers.len());
        let mut cum = 1u64;
        for (dim, _) in &self.layers {
            cum = cum
                .checked_mul(*dim)
                .ok_or_else(|| Error::corrupt("FixedSizeList dimensions overflow"))?;
            dims.push(cum);
        }
        Ok(dims)
    }

    /// Validity bytes of each layer per row (0 without validity) and the bits of one row.
    fn row_bits(&self, dims: &[u64]) -> Result<(Vec<usize>, u128)> {
        let validity_bytes: Vec<usize> = self
            .layers
            .iter()
            .zip(dims)
            .map(|((_, v), cum)| if *v { cum.div_ceil(8) as usize } else { 0 })
            .collect();
        let validity_bits: u128 = validity_bytes.iter().map(|b| *b as u128 * 8).sum();
        let items_per_row = *dims.last().unwrap_or(&1) as u128;
        let row_bits = (self.item_bits as u128)
            .checked_mul(items_per_row)
            .and_then(|bits| bits.checked_add(validity_bits))
            .ok_or_else(|| Error::corrupt("FixedSizeList row size overflows"))?;
        Ok((validity_bytes, row_bits))
    }

    fn validity_count(&self) -> usize {
        self.layers.iter().filter(|(_, v)| *v).count()
    }

    /// Wraps the leaf items in the layers, innermost first.
    fn assemble(&self, items: DecodedValues, mut validity: Vec<Option<Bytes>>) -> DecodedValues {
        let mut current = items;
        for (dim, _) in self.layers.iter().rev() {
            let item_validity = validity.pop().flatten();
            current = DecodedValues::FixedSizeList {
                dimension: *dim,
                items: Box::new(current),
                item_validity,
            };
        }
        current
    }
}

fn count_mul(a: usize, b: u64) -> Result<usize> {
    (a as u128)
        .checked_mul(b as u128)
        .filter(|n| *n <= usize::MAX as u128 / 2)
        .map(|n| n as usize)
        .ok_or_else(|| Error::corrupt("FixedSizeList item count overflows"))
}

/// Mini-block FSL: validity buffers (outer first) then the value buffer.
pub(super) fn decode_fsl_miniblock(
    fsl: &FixedSizeList,
    buffers: &[Bytes],
    num_values: usize,
) -> Result<DecodedValues> {
    let layers = FslLayers::parse(fsl)?;
    let expected = layers.validity_count() + 1;
    crate::ensure_corrupt!(
        buffers.len() == expected,
        "FixedSizeList chunk has {} buffers, expected {expected}",
        buffers.len()
    );
    let mut buffer_iter = buffers.iter();
    let mut validity = Vec::with_capacity(layers.layers.len());
    let mut items = num_values;
    for (dim, has_validity) in &layers.layers {
        items = count_mul(items, *dim)?;
        if *has_validity {
            let buffer = buffer_iter.next().cloned().unwrap_or_default();
            let expected = packed_len(items, 1, "FixedSizeList validity")?;
            crate::ensure_corrupt!(
                buffer.len() == expected,
                "FixedSizeList validity buffer has {} bytes, expected {expected}",
                buffer.len()
            );
            validity.push(Some(buffer));
        } else {
            validity.push(None);
        }
    }
    let data = buffer_iter.next().cloned().unwrap_or_default();
    let expected = packed_len(items, layers.item_bits, "FixedSizeList values")?;
    crate::ensure_corrupt!(
        data.len() == expected,
        "FixedSizeList value buffer has {} bytes, expected {expected}",
        data.len()
    );
    let leaf = DecodedValues::Fixed {
        bits_per_value: layers.item_bits,
        num_values: items,
        data,
    };
    Ok(layers.assemble(leaf, validity))
}

/// Appends bits to an LSB-first bitmap.
struct BitmapBuilder {
    bytes: Vec<u8>,
    len: usize,
}

impl BitmapBuilder {
    fn append(&mut self, source: &[u8], bits: usize) {
        for i in 0..bits {
            if self.len.is_multiple_of(8) {
                self.bytes.push(0);
            }
            if source[i / 8] >> (i % 8) & 1 == 1 {
                if let Some(last) = self.bytes.last_mut() {
                    *last |= 1 << (self.len % 8);
                }
            }
            self.len += 1;
        }
    }
}

/// Per-value FSL (full-zip values, blocks): rows of `[validity bytes...][values]`.
pub(super) fn decode_fsl_per_value(
    fsl: &FixedSizeList,
    data: Bytes,
    num_values: usize,
) -> Result<DecodedValues> {
    let layers = FslLayers::parse(fsl)?;
    let dims = layers.cumulative_dims()?;
    let items_per_row = *dims.last().unwrap_or(&1);
    let items = count_mul(num_values, items_per_row)?;
    let (validity_bytes, row_bits) = layers.row_bits(&dims)?;
    let expected = row_bits
        .checked_mul(num_values as u128)
        .map(|bits| bits.div_ceil(8))
        .filter(|bytes| *bytes <= MAX_DECODED_BYTES as u128)
        .ok_or_else(|| {
            Error::corrupt(format!(
                "FixedSizeList rows of {row_bits} bits x {num_values} are too large"
            ))
        })?;
    crate::ensure_corrupt!(
        data.len() as u128 == expected,
        "FixedSizeList values have {} bytes, expected {expected} for {num_values} rows",
        data.len()
    );
    if num_values == 0 || validity_bytes.iter().all(|b| *b == 0) {
        let leaf = DecodedValues::Fixed {
            bits_per_value: layers.item_bits,
            num_values: items,
            data,
        };
        let validity = layers
            .layers
            .iter()
            .map(|(_, v)| v.then(Bytes::new))
            .collect();
        return Ok(layers.assemble(leaf, validity));
    }
    crate::ensure_corrupt!(
        layers.item_bits % 8 == 0,
        "nullable FixedSizeList items must be whole bytes, got {} bits",
        layers.item_bits
    );
    // At least one row fits in `data` (checked above), so these sizes fit in usize.
    let row_validity: usize = validity_bytes.iter().sum();
    let row_bytes = (row_bits / 8) as usize;
    let row_value_bytes = row_bytes - row_validity;
    let mut builders: Vec<BitmapBuilder> = validity_bytes
        .iter()
        .map(|_| BitmapBuilder {
            bytes: Vec::new(),
            len: 0,
        })
        .collect();
    let mut values = Vec::with_capacity(row_value_bytes * num_values);
    for row in data.chunks_exact(row_bytes.max(1)).take(num_values) {
        let mut pos = 0;
        for ((builder, bytes), cum) in builders.iter_mut().zip(&validity_bytes).zip(&dims) {
            if *bytes > 0 {
                builder.append(&row[pos..pos + bytes], *cum as usize);
                pos += bytes;
            }
        }
        values.extend_from_slice(&row[pos..]);
    }
    let validity = builders
        .into_iter()
        .zip(&layers.layers)
        .map(|(b, (_, has))| has.then(|| Bytes::from(b.bytes)))
        .collect();
    let leaf = DecodedValues::Fixed {
        bits_per_value: layers.item_bits,
        num_values: items,
        data: Bytes::from(values),
    };
    Ok(layers.assemble(leaf, validity))
}

/// Bytes of a per-value FSL block of `num_values` rows (validity bytes included).
pub(super) fn fsl_per_value_bytes(fsl: &FixedSizeList, num_values: usize) -> Result<usize> {
    let layers = FslLayers::parse(fsl)?;
    let (_, row_bits) = layers.row_bits(&layers.cumulative_dims()?)?;
    row_bits
        .checked_mul(num_values as u128)
        .map(|bits| bits.div_ceil(8))
        .filter(|bytes| *bytes <= MAX_DECODED_BYTES as u128)
        .map(|bytes| bytes as usize)
        .ok_or_else(|| {
            Error::corrupt(format!(
                "FixedSizeList block of {num_values} rows is too large"
            ))
        })
}

/// Number of mini-block buffers of an FSL encoding.
pub(super) fn fsl_buffer_count(fsl: &FixedSizeList) -> Result<usize> {
    Ok(FslLayers::parse(fsl)?.validity_count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lance::proto::encodings::CompressiveEncoding;

    fn fsl(dim: u64, has_validity: bool, inner: Compression) -> FixedSizeList {
        FixedSizeList {
            items_per_value: dim,
            has_validity,
            values: Some(Box::new(CompressiveEncoding {
                compression: Some(inner),
            })),
        }
    }
    fn flat(bits: u64) -> Compression {
        Compression::Flat(Flat {
            bits_per_value: bits,
            data: None,
        })
    }

    #[test]
    fn flat_exact_lengths_and_bits() {
        let f = Flat {
            bits_per_value: 32,
            data: None,
        };
        assert_eq!(
            decode_flat(&f, Bytes::from(vec![0; 40]), 10)
                .unwrap()
                .num_values(),
            10
        );
        assert!(decode_flat(&f, Bytes::from(vec![0; 41]), 10).is_err());
        let bools = Flat {
            bits_per_value: 1,
            data: None,
        };
        assert!(decode_flat(&bools, Bytes::from(vec![0; 2]), 9).is_ok());
        assert!(decode_flat(
            &Flat {
                bits_per_value: 0,
                data: None
            },
            Bytes::new(),
            0
        )
        .is_err());
    }

    #[test]
    fn byte_stream_split_transposes() {
        // Two f32 values 0x04030201 and 0x08070605 split into planes.
        let bss = ByteStreamSplit {
            values: Some(Box::new(CompressiveEncoding {
                compression: Some(flat(32)),
            })),
        };
        let planes = Bytes::from_static(&[1, 5, 2, 6, 3, 7, 4, 8]);
        let DecodedValues::Fixed { data, .. } =
            decode_byte_stream_split(&bss, &[planes], 2).unwrap()
        else {
            panic!()
        };
        assert_eq!(&data[..], &[1, 2, 3, 4, 5, 6, 7, 8]);
    }

    #[test]
    fn fsl_miniblock_with_validity() {
        // 2 rows of FSL<f32, 3> with item validity 0b101_110.
        let enc = fsl(3, true, flat(32));
        let validity = Bytes::from_static(&[0b0010_1110]);
        let values = Bytes::from(vec![0u8; 24]);
        let decoded = decode_fsl_miniblock(&enc, &[validity.clone(), values], 2).unwrap();
        let DecodedValues::FixedSizeList {
            dimension: 3,
            items,
            item_validity,
        } = &decoded
        else {
            panic!()
        };
        assert_eq!(items.num_values(), 6);
        assert_eq!(item_validity.as_ref(), Some(&validity));
        assert_eq!(decoded.num_values(), 2);
        assert!(decode_fsl_miniblock(&enc, &[Bytes::from(vec![0u8; 24])], 2).is_err());
    }

    #[test]
    fn fsl_per_value_unzips_row_validity() {
        // Rows: [validity byte][3 x u8]; validity bits 0b011 and 0b110.
        let enc = fsl(3, true, flat(8));
        let data = Bytes::from_static(&[0b011, 10, 11, 12, 0b110, 20, 21, 22]);
        let decoded = decode_fsl_per_value(&enc, data, 2).unwrap();
        let DecodedValues::FixedSizeList {
            items,
            item_validity,
            ..
        } = decoded
        else {
            panic!()
        };
        assert_eq!(item_validity.unwrap()[0], 0b110_011);
        let DecodedValues::Fixed { data, .. } = *items else {
            panic!()
        };
        assert_eq!(&data[..], &[10, 11, 12, 20, 21, 22]);
    }

    #[test]
    fn fsl_vectors_without_validity_and_nested() {
        let enc = fsl(128, false, flat(32));
        let decoded = decode_fsl_per_value(&enc, Bytes::from(vec![0u8; 2 * 512]), 2).unwrap();
        assert_eq!(decoded.num_values(), 2);
        assert!(decode_fsl_per_value(&enc, Bytes::from(vec![0u8; 1000]), 2).is_err());
        let nested = fsl(
            2,
            false,
            Compression::FixedSizeList(fsl(3, false, flat(16))),
        );
        let decoded = decode_fsl_per_value(&nested, Bytes::from(vec![0u8; 24]), 2).unwrap();
        let DecodedValues::FixedSizeList {
            dimension: 2,
            items,
            ..
        } = decoded
        else {
            panic!()
        };
        assert_eq!(items.num_values(), 4);
    }
}
