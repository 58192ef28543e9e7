//! API-level tests of the compression decoders: hand-built payloads in the formats pylance
//! 14.0.2 writes, plus property tests that arbitrary bytes and encodings never panic.

use bytes::Bytes;
use lance_bitpacking::BitPacking;
use proptest::prelude::*;

use super::*;
use crate::lance::proto::encodings::*;

fn enc(c: Compression) -> CompressiveEncoding {
    CompressiveEncoding {
        compression: Some(c),
    }
}
fn boxed(c: Compression) -> Option<Box<CompressiveEncoding>> {
    Some(Box::new(enc(c)))
}
fn flat(bits: u64) -> Compression {
    Compression::Flat(Flat {
        bits_per_value: bits,
        data: None,
    })
}
fn variable(offsets: Compression) -> Compression {
    Compression::Variable(Variable {
        offsets: boxed(offsets),
        values: None,
    })
}
fn general(scheme: i32, inner: Compression) -> Compression {
    Compression::General(General {
        compression: Some(BufferCompression {
            scheme,
            level: None,
        }),
        values: boxed(inner),
    })
}
fn ool(t: u64, w: u64) -> Compression {
    Compression::OutOfLineBitpacking(OutOfLineBitpacking {
        uncompressed_bits_per_value: t,
        values: boxed(flat(w)),
    })
}
fn le32(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}
fn le64(values: &[u64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}
fn lz4_frame(raw: &[u8]) -> Vec<u8> {
    let mut out = (raw.len() as u32).to_le_bytes().to_vec();
    out.extend(lz4_flex::block::compress(raw));
    out
}
fn zstd_frame(raw: &[u8]) -> Vec<u8> {
    let mut out = (raw.len() as u64).to_le_bytes().to_vec();
    out.extend(zstd::bulk::compress(raw, 3).unwrap());
    out
}
fn strings(values: &DecodedValues) -> Vec<String> {
    let DecodedValues::Variable { offsets, data } = values else {
        panic!("not variable: {values:?}")
    };
    offsets
        .windows(2)
        .map(|w| String::from_utf8(data[w[0] as usize..w[1] as usize].to_vec()).unwrap())
        .collect()
}
fn u32s(values: &DecodedValues) -> Vec<u32> {
    let DecodedValues::Fixed {
        bits_per_value: 32,
        data,
        ..
    } = values
    else {
        panic!("not u32: {values:?}")
    };
    data.chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}
/// Legacy mini-block Variable buffer with u32 offsets from the buffer start, padded to 4.
fn legacy_variable_buffer(values: &[&str]) -> Vec<u8> {
    let header = (values.len() + 1) * 4;
    let mut offsets = vec![header as u32];
    let mut data: Vec<u8> = Vec::new();
    for v in values {
        data.extend(v.as_bytes());
        offsets.push((header + data.len()) as u32);
    }
    let mut out = le32(&offsets);
    out.extend(data);
    while !out.len().is_multiple_of(4) {
        out.push(0x48);
    }
    out
}
/// Packs 1024 values with the kernel crate (validated lengths).
fn pack_u64(values: &[u64], width: usize) -> Vec<u8> {
    let mut block = values.to_vec();
    block.resize(1024, 0);
    let mut out = vec![0u64; 1024 * width / 64];
    // SAFETY: 1024 inputs, 1024*W/64 outputs, W <= 64.
    unsafe { u64::unchecked_pack(width, &block, &mut out) };
    le64(&out)
}

#[test]
fn doc_example_flat_u32_chunk() {
    let values: Vec<u32> = (0..10).collect();
    let decoded = decode_miniblock(&enc(flat(32)), &[Bytes::from(le32(&values))], 10).unwrap();
    assert_eq!(u32s(&decoded), values);
    assert_eq!(miniblock_buffer_count(&enc(flat(32))).unwrap(), 1);
}

#[test]
fn variable_legacy_generic_and_general_forms() {
    let words = ["a", "bb", "", "ccc"];
    let legacy = enc(variable(flat(32)));
    let buffer = Bytes::from(legacy_variable_buffer(&words));
    assert_eq!(
        strings(&decode_miniblock(&legacy, std::slice::from_ref(&buffer), 4).unwrap()),
        words
    );

    // Generic offsets Delta(base 0, Flat32): buffers [deltas payload, value bytes].
    let generic = enc(variable(Compression::Delta(Delta {
        uncompressed_bits_per_value: 32,
        base: 0,
        deltas: boxed(flat(32)),
    })));
    assert_eq!(miniblock_buffer_count(&generic).unwrap(), 2);
    let buffers = [
        Bytes::from(le32(&[1, 2, 0, 3])),
        Bytes::from_static(b"abbccc"),
    ];
    assert_eq!(
        strings(&decode_miniblock(&generic, &buffers, 4).unwrap()),
        words
    );
    let short = [
        Bytes::from(le32(&[1, 2, 0, 3])),
        Bytes::from_static(b"abbcc"),
    ];
    assert!(decode_miniblock(&generic, &short, 4).is_err());

    // Generic offsets Range(32, 0, 2): no offsets buffer.
    let ranged = enc(variable(Compression::Range(Range {
        uncompressed_bits_per_value: 32,
        start: 0,
        step: 2,
    })));
    assert_eq!(miniblock_buffer_count(&ranged).unwrap(), 1);
    let decoded = decode_miniblock(&ranged, &[Bytes::from_static(b"aabbcc")], 3).unwrap();
    assert_eq!(strings(&decoded), ["aa", "bb", "cc"]);

    // General(zstd) over the legacy form compresses only the first buffer.
    let zstd = enc(general(2, variable(flat(32))));
    let decoded = decode_miniblock(&zstd, &[Bytes::from(zstd_frame(&buffer))], 4).unwrap();
    assert_eq!(strings(&decoded), words);
    assert_eq!(
        describe(&zstd),
        "General(zstd, Variable(offsets: Flat(32)))"
    );
    assert_eq!(codec_names(&zstd), ["General(zstd)", "Variable", "Flat"]);
}

#[test]
fn lz4_variable_dictionary_block() {
    // Dictionary = General(LZ4, Variable(Flat32)) over the block frame [32][data_start][offsets][bytes].
    let words = ["key-00000001", "key-00000002", "key-00000003"];
    let mut raw = le32(&[32, 8 + 16]);
    raw.extend(le32(&[0, 12, 24, 36]));
    for w in words {
        raw.extend(w.as_bytes());
    }
    let dictionary = enc(general(1, variable(flat(32))));
    let decoded = decode_block(&dictionary, Some(Bytes::from(lz4_frame(&raw))), 3).unwrap();
    assert_eq!(strings(&decoded), words);
    assert!(block_has_payload(&dictionary).unwrap());
    assert!(decode_block(&dictionary, Some(Bytes::from(lz4_frame(&raw))), 4).is_err());
    assert!(decode_block(&dictionary, None, 3).is_err());
}

#[test]
fn rle_dictionary_indices_chunk() {
    // Indices Rle(Flat32 values, Flat8 run lengths): [4 x 7, 3 x 1].
    let rle = enc(Compression::Rle(Rle {
        values: boxed(flat(32)),
        run_lengths: boxed(flat(8)),
    }));
    assert_eq!(miniblock_buffer_count(&rle).unwrap(), 2);
    let buffers = [Bytes::from(le32(&[7, 1])), Bytes::from_static(&[4, 3])];
    assert_eq!(
        u32s(&decode_miniblock(&rle, &buffers, 7).unwrap()),
        [7, 7, 7, 7, 1, 1, 1]
    );
}

#[test]
fn inline_bitpacking_chunk_and_limits() {
    let values: Vec<u64> = (0..1024).map(|i| (i * 37) % (1 << 20)).collect();
    let mut chunk = le64(&[20]);
    chunk.extend(pack_u64(&values, 20));
    let encoding = enc(Compression::InlineBitpacking(InlineBitpacking {
        uncompressed_bits_per_value: 64,
        values: None,
    }));
    let decoded = decode_miniblock(&encoding, &[Bytes::from(chunk.clone())], 1000).unwrap();
    let DecodedValues::Fixed {
        bits_per_value: 64,
        num_values: 1000,
        data,
    } = decoded
    else {
        panic!()
    };
    let got: Vec<u64> = data
        .chunks(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(got, values[..1000]);
    assert!(decode_miniblock(&encoding, &[Bytes::from(chunk)], 1025).is_err());
}

#[test]
fn rep_levels_out_of_line_one_bit() {
    // Rep levels OOL(16 -> 1 bit), 20 values, raw tail (20 u16 words).
    let levels: Vec<u16> = (0..20).map(|i| (i % 4 == 0) as u16).collect();
    let raw_tail: Vec<u8> = levels.iter().flat_map(|v| v.to_le_bytes()).collect();
    let encoding = enc(ool(16, 1));
    assert_eq!(
        decode_levels(&encoding, Some(Bytes::from(raw_tail)), 20).unwrap(),
        levels
    );
    // Def levels as Flat(16), and the wrong width is rejected.
    let flat16 = enc(flat(16));
    assert_eq!(
        decode_levels(&flat16, Some(Bytes::from_static(&[1, 0, 0, 0])), 2).unwrap(),
        [1, 0]
    );
    assert!(decode_levels(&enc(flat(32)), Some(Bytes::from_static(&[1, 0, 0, 0])), 1).is_err());
    // Constant levels (constant-layout pages).
    let constant = enc(Compression::Constant(Constant {
        value: Some(Bytes::from_static(&[3, 0])),
    }));
    assert_eq!(decode_levels(&constant, None, 3).unwrap(), [3, 3, 3]);
    assert!(!block_has_payload(&constant).unwrap());
}

#[test]
fn sparse_sequences() {
    // positions Delta(base 267, OOL 64 -> 10 bit) for 5 values, padded tail block.
    let deltas = [5u64, 1000, 3, 0];
    let positions = enc(Compression::Delta(Delta {
        uncompressed_bits_per_value: 64,
        base: 267,
        deltas: boxed(ool(64, 10)),
    }));
    assert!(block_has_payload(&positions).unwrap());
    let payload = Bytes::from(pack_u64(&deltas, 10));
    assert_eq!(payload.len(), 1280);
    assert_eq!(
        decode_u64_sequence(&positions, Some(payload), 5).unwrap(),
        [267, 272, 1272, 1275, 1275]
    );
    // Empty sequence: Constant without value, cardinality 0.
    let empty = enc(Compression::Constant(Constant { value: None }));
    assert!(decode_u64_sequence(&empty, None, 0).unwrap().is_empty());
    assert!(decode_u64_sequence(&empty, None, 1).is_err());
    // Range of u32 indices.
    let range = enc(Compression::Range(Range {
        uncompressed_bits_per_value: 32,
        start: 5,
        step: 3,
    }));
    assert_eq!(decode_u32_sequence(&range, None, 3).unwrap(), [5, 8, 11]);
    assert!(decode_u64_sequence(&range, None, 3).is_err());
    assert!(!block_has_payload(&range).unwrap());
    // Range/Delta are block-only codecs.
    assert!(matches!(
        decode_miniblock(&range, &[], 3),
        Err(Error::Corrupt { .. })
    ));
    let block = decode_block(&range, None, 2).unwrap();
    assert_eq!(u32s(&block), [5, 8]);
}

#[test]
fn fullzip_values() {
    let vectors = enc(Compression::FixedSizeList(FixedSizeList {
        items_per_value: 128,
        has_validity: false,
        values: boxed(flat(32)),
    }));
    let decoded = decode_fullzip_fixed(&vectors, Bytes::from(vec![1u8; 3 * 512]), 3).unwrap();
    assert_eq!(decoded.num_values(), 3);
    assert!(decode_fullzip_fixed(&vectors, Bytes::from(vec![1u8; 3 * 512 - 1]), 3).is_err());

    let plain = enc(variable(flat(32)));
    let decoded =
        decode_fullzip_variable(&plain, vec![0, 2, 2, 5], Bytes::from_static(b"abcde")).unwrap();
    assert_eq!(strings(&decoded), ["ab", "", "cde"]);
    assert!(decode_fullzip_variable(&plain, vec![0, 6], Bytes::from_static(b"abcde")).is_err());
    assert!(decode_fullzip_variable(&plain, vec![3, 2], Bytes::from_static(b"abcde")).is_err());

    // Per-value general compression: each value is its own zstd frame.
    let a = zstd_frame(b"first value");
    let b = zstd_frame(b"second");
    let mut data = a.clone();
    data.extend(&b);
    let offsets = vec![0, a.len() as u64, (a.len() + b.len()) as u64];
    let zipped = enc(general(2, variable(flat(32))));
    let decoded = decode_fullzip_variable(&zipped, offsets, Bytes::from(data)).unwrap();
    assert_eq!(strings(&decoded), ["first value", "second"]);
}

#[test]
fn fsst_miniblock_with_real_symbol_table() {
    let words: Vec<String> = (0..2000)
        .map(|i| format!("https://example.com/item/{}", i % 300))
        .collect();
    let mut input = Vec::new();
    let mut offsets = vec![0i32];
    for w in &words {
        input.extend(w.as_bytes());
        offsets.push(input.len() as i32);
    }
    let mut table = vec![0u8; fsst::fsst::FSST_SYMBOL_TABLE_SIZE];
    let mut out = vec![0u8; input.len() * 2];
    let mut out_offsets = vec![0i32; offsets.len() * 2];
    fsst::fsst::compress(&mut table, &input, &offsets, &mut out, &mut out_offsets).unwrap();
    // Build a legacy Variable chunk over the compressed values.
    let n = words.len();
    let header = (n + 1) * 4;
    let chunk_offsets: Vec<u32> = out_offsets[..=n]
        .iter()
        .map(|o| (*o as usize + header) as u32)
        .collect();
    let mut chunk = le32(&chunk_offsets);
    chunk.extend(&out[..out_offsets[n] as usize]);
    while !chunk.len().is_multiple_of(4) {
        chunk.push(0x48);
    }
    let encoding = enc(Compression::Fsst(Fsst {
        symbol_table: Bytes::from(table.clone()),
        values: boxed(variable(flat(32))),
    }));
    let decoded = decode_miniblock(&encoding, &[Bytes::from(chunk)], n).unwrap();
    assert_eq!(strings(&decoded), words);
    // A symbol table with a symbol longer than 8 bytes is corrupt.
    let mut bad = table;
    bad[..8].copy_from_slice(&((0x4653_5354u64 << 32) | (1 << 24) | 1).to_le_bytes());
    bad[16] = 200;
    let bad_encoding = enc(Compression::Fsst(Fsst {
        symbol_table: Bytes::from(bad),
        values: boxed(variable(flat(32))),
    }));
    assert!(decode_fullzip_variable(&bad_encoding, vec![0, 1], Bytes::from_static(b"a")).is_err());
}

#[test]
fn constant_without_value_is_all_null() {
    let none = enc(Compression::Constant(Constant { value: None }));
    let decoded = decode_block(&none, None, 5).unwrap();
    assert_eq!(
        decoded,
        DecodedValues::Fixed {
            bits_per_value: 0,
            num_values: 5,
            data: Bytes::new()
        }
    );
    assert!(decode_block(&none, Some(Bytes::from_static(&[1])), 5).is_err());
}

#[test]
fn unsupported_and_missing_codecs() {
    // Packed structs are read only as uncompressed byte-aligned rows of the children's total
    // width (blob v1 descriptors); any other packing stays unsupported.
    let packed = enc(Compression::PackedStruct(PackedStruct {
        bits_per_value: vec![32],
        values: boxed(flat(64)),
    }));
    assert!(matches!(
        decode_miniblock(&packed, &[], 1),
        Err(Error::Unsupported { .. })
    ));
    let rows = enc(Compression::PackedStruct(PackedStruct {
        bits_per_value: vec![64, 64],
        values: boxed(flat(128)),
    }));
    let bytes = Bytes::from((0u8..32).collect::<Vec<u8>>());
    match decode_miniblock(&rows, std::slice::from_ref(&bytes), 2).unwrap() {
        DecodedValues::Fixed {
            bits_per_value,
            num_values,
            data,
        } => {
            assert_eq!((bits_per_value, num_values), (128, 2));
            assert_eq!(data, bytes);
        }
        other => panic!("{other:?}"),
    }
    let unset = CompressiveEncoding { compression: None };
    assert!(matches!(
        decode_block(&unset, None, 1),
        Err(Error::Corrupt { .. })
    ));
    assert_eq!(describe(&unset), "<unset>");
    let flat_lz4 = enc(Compression::Flat(Flat {
        bits_per_value: 32,
        data: Some(BufferCompression {
            scheme: 1,
            level: None,
        }),
    }));
    assert!(matches!(
        decode_block(&flat_lz4, Some(Bytes::new()), 0),
        Err(Error::Unsupported { .. })
    ));
}

// ------------------------------------------------------------------------------------------
// Property tests
// ------------------------------------------------------------------------------------------

/// Small or absurd numbers, as a corrupt file might hold.
fn any_number() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..70,
        Just(1024u64),
        Just(4096),
        any::<u64>(),
        Just(u64::MAX),
        Just(1 << 40)
    ]
}

fn any_bits() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(1u64),
        Just(8),
        Just(16),
        Just(32),
        Just(64),
        Just(128),
        any_number()
    ]
}

fn any_buffer_compression() -> impl Strategy<Value = Option<BufferCompression>> {
    prop::option::weighted(
        0.2,
        (0i32..4).prop_map(|scheme| BufferCompression {
            scheme,
            level: None,
        }),
    )
}

fn any_encoding() -> impl Strategy<Value = CompressiveEncoding> {
    let leaf = prop_oneof![
        (any_bits(), any_buffer_compression()).prop_map(|(b, d)| enc(Compression::Flat(Flat {
            bits_per_value: b,
            data: d
        }))),
        prop::option::of(prop::collection::vec(any::<u8>(), 0..10)).prop_map(|v| enc(
            Compression::Constant(Constant {
                value: v.map(Bytes::from)
            })
        )),
        any_bits().prop_map(|b| enc(Compression::InlineBitpacking(InlineBitpacking {
            uncompressed_bits_per_value: b,
            values: None
        }))),
        (any_bits(), any_number(), any_number()).prop_map(|(b, start, step)| {
            enc(Compression::Range(Range {
                uncompressed_bits_per_value: b,
                start,
                step,
            }))
        }),
        (prop::collection::vec(any::<u8>(), 0..40), any::<bool>()).prop_map(|(mut table, real)| {
            if real {
                table.resize(fsst::fsst::FSST_SYMBOL_TABLE_SIZE, 1);
                table[4..8].copy_from_slice(b"TSSF");
            }
            enc(Compression::Fsst(Fsst {
                symbol_table: Bytes::from(table),
                values: boxed(variable(flat(32))),
            }))
        }),
        Just(CompressiveEncoding { compression: None }),
    ];
    leaf.prop_recursive(3, 16, 2, |inner| {
        let child = inner.clone().prop_map(|e| Some(Box::new(e)));
        prop_oneof![
            (child.clone(), any_buffer_compression()).prop_map(|(offsets, values)| enc(
                Compression::Variable(Variable { offsets, values })
            )),
            (any_bits(), child.clone()).prop_map(|(b, values)| {
                enc(Compression::OutOfLineBitpacking(OutOfLineBitpacking {
                    uncompressed_bits_per_value: b,
                    values,
                }))
            }),
            (child.clone(), child.clone(), any_number()).prop_map(|(indices, items, n)| {
                enc(Compression::Dictionary(Dictionary {
                    indices,
                    items,
                    num_dictionary_items: n as u32,
                }))
            }),
            (child.clone(), child.clone()).prop_map(|(values, run_lengths)| enc(Compression::Rle(
                Rle {
                    values,
                    run_lengths
                }
            ))),
            child
                .clone()
                .prop_map(|values| enc(Compression::ByteStreamSplit(ByteStreamSplit { values }))),
            ((0i32..4), child.clone()).prop_map(|(scheme, values)| {
                enc(Compression::General(General {
                    compression: Some(BufferCompression {
                        scheme,
                        level: None,
                    }),
                    values,
                }))
            }),
            (any_number(), any::<bool>(), child.clone()).prop_map(|(d, has_validity, values)| {
                enc(Compression::FixedSizeList(FixedSizeList {
                    items_per_value: d,
                    has_validity,
                    values,
                }))
            }),
            (any_bits(), any_number(), child).prop_map(|(b, base, deltas)| {
                enc(Compression::Delta(Delta {
                    uncompressed_bits_per_value: b,
                    base,
                    deltas,
                }))
            }),
        ]
    })
}

fn any_count() -> impl Strategy<Value = usize> {
    prop_oneof![0usize..3000, Just(usize::MAX), (1usize << 31)..usize::MAX]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_inputs_never_panic(
        encoding in any_encoding(),
        buffers in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..300), 0..4),
        num_values in any_count(),
        offsets in prop::collection::vec(any_number(), 0..20),
    ) {
        let buffers: Vec<Bytes> = buffers.into_iter().map(Bytes::from).collect();
        let first = buffers.first().cloned();
        let _ = describe(&encoding);
        let _ = codec_names(&encoding);
        let _ = miniblock_buffer_count(&encoding);
        let _ = block_has_payload(&encoding);
        if let Ok(values) = decode_miniblock(&encoding, &buffers, num_values) {
            prop_assert_eq!(values.num_values(), num_values);
        }
        let _ = decode_block(&encoding, first.clone(), num_values);
        let _ = decode_block(&encoding, None, num_values);
        let _ = decode_levels(&encoding, first.clone(), num_values);
        if let Ok(values) = decode_u64_sequence(&encoding, first.clone(), num_values) {
            prop_assert_eq!(values.len(), num_values);
        }
        let _ = decode_u32_sequence(&encoding, None, num_values);
        let _ = decode_fullzip_fixed(&encoding, first.clone().unwrap_or_default(), num_values);
        let _ = decode_fullzip_variable(&encoding, offsets, first.unwrap_or_default());
    }

    #[test]
    fn random_payloads_under_real_encodings_never_panic(
        which in 0usize..8,
        payload in prop::collection::vec(any::<u8>(), 0..2000),
        num_values in any_count(),
    ) {
        let encodings = [
            enc(Compression::Rle(Rle { values: boxed(flat(16)), run_lengths: boxed(flat(8)) })),
            enc(ool(16, 1)),
            enc(general(1, variable(flat(32)))),
            enc(general(2, variable(flat(64)))),
            enc(Compression::InlineBitpacking(InlineBitpacking { uncompressed_bits_per_value: 32, values: None })),
            enc(Compression::Delta(Delta { uncompressed_bits_per_value: 64, base: 3, deltas: boxed(ool(64, 10)) })),
            enc(Compression::Dictionary(Dictionary { indices: boxed(flat(32)), items: boxed(flat(64)), num_dictionary_items: 4 })),
            enc(variable(flat(32))),
        ];
        let encoding = &encodings[which];
        let payload = Bytes::from(payload);
        let _ = decode_block(encoding, Some(payload.clone()), num_values);
        let _ = decode_u64_sequence(encoding, Some(payload.clone()), num_values);
        let _ = decode_miniblock(encoding, &[payload.clone(), payload.clone()], num_values);
        let _ = decode_miniblock(encoding, &[payload], num_values);
    }

    #[test]
    fn rle_round_trip(runs in prop::collection::vec((any::<u32>(), 1u8..=255), 1..200)) {
        let values: Vec<u32> = runs.iter().map(|(v, _)| *v).collect();
        let lengths: Vec<u8> = runs.iter().map(|(_, l)| *l).collect();
        let expected: Vec<u32> = runs.iter().flat_map(|(v, l)| std::iter::repeat_n(*v, *l as usize)).collect();
        let rle = enc(Compression::Rle(Rle { values: boxed(flat(32)), run_lengths: boxed(flat(8)) }));
        let mut payload = ((values.len() * 4) as u64).to_le_bytes().to_vec();
        payload.extend(le32(&values));
        payload.extend(&lengths);
        let decoded = decode_block(&rle, Some(Bytes::from(payload)), expected.len()).unwrap();
        prop_assert_eq!(u32s(&decoded), expected);
    }

    #[test]
    fn out_of_line_round_trip(width in 0usize..64, n in 0usize..3000, seed in any::<u64>()) {
        let mask = if width == 0 { 0 } else { u64::MAX >> (64 - width) };
        let values: Vec<u64> = (0..n as u64).map(|i| (i.wrapping_mul(seed) ^ seed.rotate_left(i as u32)) & mask).collect();
        // Writer rule: the tail is packed (padded) only when padding costs fewer bits than
        // packing saves; otherwise it is appended raw.
        let mut payload = Vec::new();
        for block in values.chunks(1024) {
            let padding_cost = width * (1024 - block.len());
            let savings = (64 - width) * block.len();
            if block.len() == 1024 || padding_cost < savings {
                payload.extend(pack_u64(block, width));
            } else {
                payload.extend(le64(block));
            }
        }
        let decoded = decode_block(&enc(ool(64, width as u64)), Some(Bytes::from(payload)), n).unwrap();
        let DecodedValues::Fixed { data, .. } = decoded else { panic!() };
        let got: Vec<u64> = data.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
        prop_assert!(got == values, "round trip mismatch for width {} n {}", width, n);
    }

    #[test]
    fn legacy_variable_round_trip(words in prop::collection::vec("[a-z]{0,12}", 0..100)) {
        let refs: Vec<&str> = words.iter().map(|s| s.as_str()).collect();
        let buffer = Bytes::from(legacy_variable_buffer(&refs));
        let decoded = decode_miniblock(&enc(variable(flat(32))), &[buffer], words.len()).unwrap();
        prop_assert_eq!(strings(&decoded), words);
    }
}

/// Regression (found by the `decompress` fuzz target): FSL row sizes with absurd dimensions
/// overflowed while sizing a general-compressed block.
#[test]
fn fsl_with_absurd_dimensions_is_corrupt_not_overflow() {
    let inner = Compression::FixedSizeList(FixedSizeList {
        items_per_value: u64::MAX,
        has_validity: true,
        values: boxed(flat(64)),
    });
    let outer = Compression::FixedSizeList(FixedSizeList {
        items_per_value: u64::MAX,
        has_validity: true,
        values: boxed(inner),
    });
    let wrapped = enc(general(1, outer.clone()));
    assert!(decode_block(&wrapped, Some(Bytes::from(lz4_frame(b"x"))), 3).is_err());
    let nested = enc(outer);
    for n in [0, 1, usize::MAX] {
        assert!(decode_fullzip_fixed(&nested, Bytes::new(), n).is_err());
    }
    let wide = enc(Compression::FixedSizeList(FixedSizeList {
        items_per_value: 1 << 62,
        has_validity: true,
        values: boxed(flat(u64::MAX)),
    }));
    // Zero rows need no bytes and decode to an empty list; any row is impossibly large.
    assert_eq!(
        decode_fullzip_fixed(&wide, Bytes::new(), 0)
            .unwrap()
            .num_values(),
        0
    );
    for n in [1, 7] {
        assert!(decode_fullzip_fixed(&wide, Bytes::new(), n).is_err());
        assert!(decode_miniblock(&wide, &[Bytes::new(), Bytes::new()], n).is_err());
    }
}
