//! Body of the fuzz target `decompress`: derives a compression tree, a value count and payload buffers
//! from the input bytes and runs every public decoder of `crate::lance::compression`.
//!
//! Input layout (every read past the end yields zeros):
//! `[mode][count selector...][encoding tree...][buffer count][buffers: (u16 len, bytes)...]`.
//! Mode bit 7 instead decodes the encoding from protobuf bytes (exercising prost parsing).
//! Successful decodes are checked against the output contract of `DecodedValues`.

use crate::lance::compression::*;
use crate::lance::proto::encodings::compressive_encoding::Compression;
use crate::lance::proto::encodings::*;
use bytes::Bytes;
use prost::Message;

struct Input<'a> {
    data: &'a [u8],
}

impl Input<'_> {
    fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((b, rest)) => {
                self.data = rest;
                *b
            }
            None => 0,
        }
    }

    fn take(&mut self, n: usize) -> Vec<u8> {
        let n = n.min(self.data.len());
        let (head, rest) = self.data.split_at(n);
        self.data = rest;
        head.to_vec()
    }

    fn u64(&mut self, bytes: usize) -> u64 {
        let mut buf = [0u8; 8];
        for b in buf.iter_mut().take(bytes) {
            *b = self.byte();
        }
        u64::from_le_bytes(buf)
    }

    /// Small numbers, interesting widths and absurd values.
    fn number(&mut self) -> u64 {
        let b = self.byte();
        let hi = (b >> 5) as usize;
        match b & 7 {
            0..=3 => (b >> 3) as u64,
            4 => [0, 1, 3, 8, 16, 32, 64, 128][hi],
            5 => self.u64(2),
            6 => self.u64(8),
            _ => [
                u64::MAX,
                u32::MAX as u64,
                1 << 40,
                1024,
                4096,
                255,
                256,
                65535,
            ][hi],
        }
    }

    fn bits(&mut self) -> u64 {
        let b = self.byte();
        if b & 8 != 0 {
            return self.number();
        }
        [1, 8, 16, 32, 64, 3, 10, 0][(b & 7) as usize]
    }

    fn buffer_compression(&mut self) -> Option<BufferCompression> {
        let b = self.byte();
        (b & 3 == 3).then_some(BufferCompression {
            scheme: ((b >> 2) % 4) as i32,
            level: None,
        })
    }

    fn child(&mut self, depth: u32) -> Option<Box<CompressiveEncoding>> {
        if self.byte() == 0xff {
            None
        } else {
            Some(Box::new(self.encoding(depth + 1)))
        }
    }

    fn fsst_table(&mut self) -> Bytes {
        let b = self.byte();
        if b & 1 == 0 {
            let n = (b >> 1) as usize;
            return Bytes::from(self.take(n));
        }
        // A table of the real size: header (magic, switch bit, symbol count), symbols, lengths.
        let mut table = vec![0u8; 2312];
        let symbols = self.byte() as usize;
        let header = (0x4653_5354u64 << 32) | (((b >> 1) & 1) as u64) << 24 | symbols as u64;
        table[..8].copy_from_slice(&header.to_le_bytes());
        for i in 0..symbols {
            let symbol = self.u64(8);
            table[8 + i * 8..16 + i * 8].copy_from_slice(&symbol.to_le_bytes());
        }
        for i in 0..symbols {
            table[8 + symbols * 8 + i] = 1 + self.byte() % 9;
        }
        Bytes::from(table)
    }

    /// An encoding tree: tags 0-5 are leaves (no child encodings), 6-16 nest (only below
    /// depth 5).
    fn encoding(&mut self, depth: u32) -> CompressiveEncoding {
        let tag = self.byte() % if depth >= 5 { 6 } else { 17 };
        let compression = if tag <= 5 {
            self.leaf_compression(tag)
        } else {
            self.nested_compression(tag, depth)
        };
        CompressiveEncoding { compression }
    }

    /// The compression of leaf tag `tag` (0-5; 0 is none, 5 and above the last leaf).
    fn leaf_compression(&mut self, tag: u8) -> Option<Compression> {
        match tag {
            0 => None,
            1 => Some(Compression::Flat(Flat {
                bits_per_value: self.bits(),
                data: self.buffer_compression(),
            })),
            2 => {
                let value = (self.byte() & 1 == 1).then(|| {
                    let n = self.byte() as usize % 34;
                    Bytes::from(self.take(n))
                });
                Some(Compression::Constant(Constant { value }))
            }
            3 => Some(Compression::InlineBitpacking(InlineBitpacking {
                uncompressed_bits_per_value: self.bits(),
                values: self.buffer_compression(),
            })),
            4 => Some(Compression::Range(Range {
                uncompressed_bits_per_value: self.bits(),
                start: self.number(),
                step: self.number(),
            })),
            _ => Some(Compression::OutOfLineBitpacking(OutOfLineBitpacking {
                uncompressed_bits_per_value: self.bits(),
                values: Some(Box::new(CompressiveEncoding {
                    compression: Some(Compression::Flat(Flat {
                        bits_per_value: self.bits(),
                        data: None,
                    })),
                })),
            })),
        }
    }

    /// The compression of nesting tag `tag` (6-16) at `depth`.
    fn nested_compression(&mut self, tag: u8, depth: u32) -> Option<Compression> {
        match tag {
            6 => Some(Compression::Variable(Variable {
                offsets: self.child(depth),
                values: self.buffer_compression(),
            })),
            7 => Some(Compression::OutOfLineBitpacking(OutOfLineBitpacking {
                uncompressed_bits_per_value: self.bits(),
                values: self.child(depth),
            })),
            8 => Some(Compression::Fsst(Fsst {
                symbol_table: self.fsst_table(),
                values: self.child(depth),
            })),
            9 => Some(Compression::Dictionary(Dictionary {
                indices: self.child(depth),
                items: self.child(depth),
                num_dictionary_items: self.number() as u32,
            })),
            10 => Some(Compression::Rle(Rle {
                values: self.child(depth),
                run_lengths: self.child(depth),
            })),
            11 => Some(Compression::ByteStreamSplit(ByteStreamSplit {
                values: self.child(depth),
            })),
            12 => Some(Compression::General(General {
                compression: Some(BufferCompression {
                    scheme: (self.byte() % 4) as i32,
                    level: None,
                }),
                values: self.child(depth),
            })),
            13 => Some(Compression::FixedSizeList(FixedSizeList {
                items_per_value: self.number(),
                has_validity: self.byte() & 1 == 1,
                values: self.child(depth),
            })),
            14 => Some(Compression::Delta(Delta {
                uncompressed_bits_per_value: self.bits(),
                base: self.number(),
                deltas: self.child(depth),
            })),
            15 => Some(Compression::PackedStruct(PackedStruct {
                bits_per_value: vec![self.bits()],
                values: self.child(depth),
            })),
            _ => Some(Compression::VariablePackedStruct(VariablePackedStruct {
                fields: vec![],
            })),
        }
    }

    fn count(&mut self) -> usize {
        let b = self.byte();
        match b & 3 {
            0 => self.u64(1) as usize,
            1 => self.u64(2) as usize,
            2 => 1024 * (b >> 2) as usize,
            _ => self.number() as usize,
        }
    }

    fn buffers(&mut self) -> Vec<Bytes> {
        let n = (self.byte() % 5) as usize;
        (0..n)
            .map(|i| {
                let len = if i + 1 == n {
                    self.data.len()
                } else {
                    self.u64(2) as usize
                };
                Bytes::from(self.take(len))
            })
            .collect()
    }
}

/// The output contract of `DecodedValues`.
fn check(values: &DecodedValues) {
    match values {
        DecodedValues::Fixed {
            bits_per_value,
            num_values,
            data,
        } => {
            let expected = (*num_values as u128 * *bits_per_value as u128).div_ceil(8);
            assert_eq!(data.len() as u128, expected, "fixed data length");
        }
        DecodedValues::Variable { offsets, data } => {
            assert!(!offsets.is_empty(), "variable values have offsets");
            assert!(
                offsets.windows(2).all(|w| w[0] <= w[1]),
                "offsets non-decreasing"
            );
            assert!(
                *offsets.last().unwrap() <= data.len() as u64,
                "offsets within data"
            );
        }
        DecodedValues::FixedSizeList {
            dimension,
            items,
            item_validity,
        } => {
            assert!(*dimension > 0);
            assert_eq!(items.num_values() as u64 % dimension, 0, "whole lists");
            if let Some(validity) = item_validity {
                assert_eq!(
                    validity.len(),
                    items.num_values().div_ceil(8),
                    "validity bitmap length"
                );
            }
            check(items);
        }
    }
}

/// Run every decoder on a compression tree and buffers derived from `data`.
pub fn decompress(data: &[u8]) {
    let mut input = Input { data };
    let mode = input.byte();
    let n = input.count();
    let encoding = if mode & 0x80 != 0 {
        let len = input.u64(1) as usize;
        match CompressiveEncoding::decode(input.take(len).as_slice()) {
            Ok(encoding) => encoding,
            Err(_) => return,
        }
    } else {
        input.encoding(0)
    };
    let buffers = input.buffers();
    let first = buffers.first().cloned();
    let _ = describe(&encoding);
    let _ = codec_names(&encoding);
    let _ = miniblock_buffer_count(&encoding);
    let _ = block_has_payload(&encoding);
    match mode & 7 {
        0 => {
            if let Ok(values) = decode_miniblock(&encoding, &buffers, n) {
                assert_eq!(values.num_values(), n);
                check(&values);
            }
        }
        1 => {
            if let Ok(values) = decode_block(&encoding, first, n) {
                assert_eq!(values.num_values(), n);
                check(&values);
            }
        }
        2 => {
            if let Ok(levels) = decode_levels(&encoding, first, n) {
                assert_eq!(levels.len(), n);
            }
        }
        3 => {
            if let Ok(values) = decode_u64_sequence(&encoding, first, n) {
                assert_eq!(values.len(), n);
            }
        }
        4 => {
            if let Ok(values) = decode_u32_sequence(&encoding, first, n) {
                assert_eq!(values.len(), n);
                assert!(values.iter().all(|v| *v <= u32::MAX as u64));
            }
        }
        5 => {
            if let Ok(values) = decode_fullzip_fixed(&encoding, first.unwrap_or_default(), n) {
                assert_eq!(values.num_values(), n);
                check(&values);
            }
        }
        6 => {
            let data = first.unwrap_or_default();
            let offsets: Vec<u64> = buffers.get(1).map_or(vec![0], |b| {
                b.chunks(2)
                    .map(|c| c.iter().rev().fold(0u64, |acc, x| acc << 8 | *x as u64))
                    .collect()
            });
            let expected = offsets.len().saturating_sub(1);
            if let Ok(values) = decode_fullzip_variable(&encoding, offsets, data) {
                assert_eq!(values.num_values(), expected);
                check(&values);
            }
        }
        _ => {
            if let Some(payload) = first {
                let _ = infer_level_count(&encoding, &payload);
            }
        }
    }
}
