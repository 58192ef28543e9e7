//! Golden and property tests of `LIST_ELEMENT_KEY_ENCODING_ARROW_ROW_V1`
//! (spec: list-element-index.md, "Key Encoding") and of encoded tuple ranges
//! ("Accelerated Queries": "the tuples whose encoding starts with the encoded fixed values
//! and whose next key lies in the range").
//!
//! Besides hand-written golden bytes, the tests carry `spec_encode`, a second encoder
//! written from the spec's text alone, and compare arrow-row's output with it.

use std::cmp::Ordering;
use std::ops::Bound;
use std::sync::Arc;

use crate::index::list_element::{ElementValue, EncodedRange, KeyEncoder, KeyType};
use arrow_array::builder::{Float32Builder, ListBuilder, StringBuilder, StructBuilder};
use arrow_array::{
    Array, ArrayRef, BinaryViewArray, Float32Array, LargeBinaryArray, LargeStringArray,
    StringArray, StringViewArray, TimestampMicrosecondArray, TimestampNanosecondArray,
};
use arrow_schema::{DataType, Field, Fields, TimeUnit};
use proptest::prelude::*;

fn hex(s: &str) -> Vec<u8> {
    s.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).unwrap())
        .collect()
}

fn enc1(key: KeyType, value: Option<ElementValue>) -> Vec<u8> {
    KeyEncoder::new(vec![key])
        .unwrap()
        .encode_key(0, value.as_ref())
        .unwrap()
}

fn bytes(s: &[u8]) -> Option<ElementValue> {
    Some(ElementValue::Bytes(s.to_vec()))
}

/// The spec's byte rules, written independently of arrow-row.
fn spec_encode(key: &KeyType, value: Option<&ElementValue>) -> Vec<u8> {
    let Some(value) = value else {
        return vec![0; 1 + key.fixed_width().unwrap_or(0)];
    };
    let flip_sign = |be: &mut Vec<u8>| be[0] ^= 0x80;
    let mut out = vec![0x01];
    match (key, value) {
        (KeyType::Bool, ElementValue::Bool(b)) => out.push(*b as u8),
        (_, ElementValue::UInt(u)) => {
            let w = key.fixed_width().unwrap();
            out.extend(&u.to_be_bytes()[8 - w..]);
        }
        (_, ElementValue::Int(i)) => {
            let w = key.fixed_width().unwrap();
            let mut be = i.to_be_bytes()[8 - w..].to_vec();
            flip_sign(&mut be);
            out.extend(be);
        }
        (_, ElementValue::Float32(f)) => {
            let bits = f.to_bits();
            let bits = if bits >> 31 == 1 {
                !bits
            } else {
                bits ^ (1 << 31)
            };
            out.extend(bits.to_be_bytes());
        }
        (_, ElementValue::Float(f)) => {
            let bits = f.to_bits();
            let bits = if bits >> 63 == 1 {
                !bits
            } else {
                bits ^ (1 << 63)
            };
            out.extend(bits.to_be_bytes());
        }
        (_, ElementValue::Bytes(b)) => {
            if b.is_empty() {
                return vec![0x01];
            }
            out = vec![0x02];
            let mut rest = b.as_slice();
            let mut block = 0;
            while !rest.is_empty() {
                let size = if block < 4 { 8 } else { 32 };
                let take = rest.len().min(size);
                out.extend(&rest[..take]);
                out.extend(std::iter::repeat_n(0u8, size - take));
                rest = &rest[take..];
                out.push(if rest.is_empty() { take as u8 } else { 0xFF });
                block += 1;
            }
        }
        other => panic!("bad test value {other:?}"),
    }
    out
}

#[test]
fn spec_example_car_half() {
    // Spec, "Key Encoding": ("car", 0.5) with label: string, confidence: float.
    let expected = hex("02 63 61 72 00 00 00 00 00 03 01 BF 00 00 00");
    let encoder = KeyEncoder::new(vec![KeyType::Utf8, KeyType::Float32]).unwrap();
    let tuple = encoder
        .encode_tuple(&[bytes(b"car"), Some(ElementValue::Float32(0.5))])
        .unwrap();
    assert_eq!(tuple, expected);
    // The same through whole columns (one arrow-row converter over both keys).
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(vec!["car"])),
        Arc::new(Float32Array::from(vec![0.5f32])),
    ];
    let encoded = encoder.encode_columns(&columns).unwrap();
    assert_eq!(encoded.value(0), expected.as_slice());
}

#[test]
fn strings_null_empty_and_block_boundaries() {
    // "A null is the byte 0x00 alone. An empty value is the byte 0x01."
    assert_eq!(enc1(KeyType::Utf8, None), hex("00"));
    assert_eq!(enc1(KeyType::Utf8, bytes(b"")), hex("01"));
    // One short block, padded, with its length.
    assert_eq!(
        enc1(KeyType::Utf8, bytes(b"a")),
        hex("02 61 00 00 00 00 00 00 00 01")
    );
    // Exactly 8 bytes: one full block ending with its length 08, not 0xFF.
    assert_eq!(
        enc1(KeyType::Utf8, bytes(b"abcdefgh")),
        hex("02 61 62 63 64 65 66 67 68 08")
    );
    // 9 bytes: first block continues (FF), second block holds one byte.
    assert_eq!(
        enc1(KeyType::Utf8, bytes(b"abcdefghi")),
        hex("02 61 62 63 64 65 66 67 68 FF 69 00 00 00 00 00 00 00 01")
    );
    // 32 bytes: four full 8-byte blocks, the last ending with 08.
    let s32: Vec<u8> = (0..32).map(|i| b'a' + (i % 26) as u8).collect();
    let e32 = enc1(KeyType::Utf8, bytes(&s32));
    assert_eq!(e32.len(), 37);
    assert_eq!(e32[9], 0xFF);
    assert_eq!(e32[18], 0xFF);
    assert_eq!(e32[27], 0xFF);
    assert_eq!(e32[36], 0x08);
    // 33 bytes: four 8-byte blocks ending FF, then a 32-byte block holding one byte.
    let s33: Vec<u8> = (0..33).map(|i| b'a' + (i % 26) as u8).collect();
    let e33 = enc1(KeyType::Utf8, bytes(&s33));
    assert_eq!(e33.len(), 70);
    assert_eq!(e33[36], 0xFF);
    assert_eq!(e33[37], s33[32]);
    assert!(e33[38..69].iter().all(|&b| b == 0));
    assert_eq!(e33[69], 0x01);
    // 64 bytes end with a full 32-byte block (length 0x20); 65 need a third block.
    let s64 = vec![b'x'; 64];
    let e64 = enc1(KeyType::Utf8, bytes(&s64));
    assert_eq!((e64.len(), e64[69]), (70, 0x20));
    let e65 = enc1(KeyType::Utf8, bytes(&[b'x'; 65]));
    assert_eq!((e65.len(), e65[69], e65[102]), (103, 0xFF, 0x01));
    // Every length from 0 to 140 matches the spec-text encoder.
    for n in 0..=140usize {
        let s: Vec<u8> = (0..n).map(|i| (i * 37 % 251) as u8).collect();
        for key in [KeyType::Utf8, KeyType::Binary, KeyType::LargeBinary] {
            if key == KeyType::Utf8 && std::str::from_utf8(&s).is_err() {
                continue;
            }
            let v = ElementValue::Bytes(s.clone());
            assert_eq!(
                enc1(key.clone(), Some(v.clone())),
                spec_encode(&key, Some(&v)),
                "n={n}"
            );
        }
    }
}

#[test]
fn empty_string_sorts_between_null_and_values() {
    let null = enc1(KeyType::Utf8, None);
    let empty = enc1(KeyType::Utf8, bytes(b""));
    let zero_byte = enc1(KeyType::Binary, bytes(&[0]));
    assert!(null < empty && empty < zero_byte);
}

#[test]
fn large_and_view_variants_give_the_same_bytes() {
    // "a type and its large or view variant give the same bytes".
    let texts = vec![
        Some("car"),
        None,
        Some(""),
        Some("a string longer than twelve"),
    ];
    let plain = KeyEncoder::new(vec![KeyType::Utf8]).unwrap();
    let large = KeyEncoder::new(vec![KeyType::LargeUtf8]).unwrap();
    let a = plain
        .encode_columns(&[Arc::new(StringArray::from(texts.clone())) as ArrayRef])
        .unwrap();
    let b = plain
        .encode_columns(&[Arc::new(StringViewArray::from(texts.clone())) as ArrayRef])
        .unwrap();
    let c = large
        .encode_columns(&[Arc::new(LargeStringArray::from(texts.clone())) as ArrayRef])
        .unwrap();
    let bin: Vec<Option<&[u8]>> = texts.iter().map(|t| t.map(str::as_bytes)).collect();
    let d = KeyEncoder::new(vec![KeyType::Binary])
        .unwrap()
        .encode_columns(&[Arc::new(BinaryViewArray::from(bin.clone())) as ArrayRef])
        .unwrap();
    let e = KeyEncoder::new(vec![KeyType::LargeBinary])
        .unwrap()
        .encode_columns(&[Arc::new(LargeBinaryArray::from(bin)) as ArrayRef])
        .unwrap();
    assert_eq!(a, b);
    assert_eq!(a, c);
    assert_eq!(a, d);
    assert_eq!(a, e);
    // A string key refuses a binary column and vice versa.
    assert!(plain
        .encode_columns(&[Arc::new(LargeStringArray::from(texts)) as ArrayRef])
        .is_err());
}

#[test]
fn fixed_width_goldens() {
    use ElementValue::*;
    let cases: Vec<(KeyType, Option<ElementValue>, &str)> = vec![
        // Boolean: 0x00 false, 0x01 true.
        (KeyType::Bool, Some(Bool(false)), "01 00"),
        (KeyType::Bool, Some(Bool(true)), "01 01"),
        (KeyType::Bool, None, "00 00"),
        // Unsigned: big-endian.
        (KeyType::UInt8, Some(UInt(0xAB)), "01 AB"),
        (KeyType::UInt16, Some(UInt(513)), "01 02 01"),
        (KeyType::UInt32, Some(UInt(7)), "01 00 00 00 07"),
        (
            KeyType::UInt64,
            Some(UInt(u64::MAX)),
            "01 FF FF FF FF FF FF FF FF",
        ),
        // Signed: two's complement big-endian, most significant bit inverted.
        (KeyType::Int8, Some(Int(-128)), "01 00"),
        (KeyType::Int8, Some(Int(-1)), "01 7F"),
        (KeyType::Int16, Some(Int(1)), "01 80 01"),
        (KeyType::Int32, Some(Int(-1)), "01 7F FF FF FF"),
        (KeyType::Int32, Some(Int(0)), "01 80 00 00 00"),
        (KeyType::Int32, Some(Int(i32::MIN as i64)), "01 00 00 00 00"),
        (KeyType::Int64, Some(Int(-2)), "01 7F FF FF FF FF FF FF FE"),
        (KeyType::Int64, None, "00 00 00 00 00 00 00 00 00"),
        // Floats: negative -> every bit inverted; otherwise only the sign bit.
        (KeyType::Float32, Some(Float32(0.5)), "01 BF 00 00 00"),
        (KeyType::Float32, Some(Float32(-0.0)), "01 7F FF FF FF"),
        (KeyType::Float32, Some(Float32(0.0)), "01 80 00 00 00"),
        (KeyType::Float32, Some(Float32(-1.0)), "01 40 7F FF FF"),
        (
            KeyType::Float32,
            Some(Float32(f32::INFINITY)),
            "01 FF 80 00 00",
        ),
        (KeyType::Float32, Some(Float32(f32::NAN)), "01 FF C0 00 00"),
        (KeyType::Float32, None, "00 00 00 00 00"),
        (
            KeyType::Float64,
            Some(Float(-2.5)),
            "01 3F FB FF FF FF FF FF FF",
        ),
        (
            KeyType::Float64,
            Some(Float(f64::NAN)),
            "01 FF F8 00 00 00 00 00 00",
        ),
        (
            KeyType::Float64,
            Some(Float(f64::from_bits(0xFFF8_0000_0000_0000))),
            "01 00 07 FF FF FF FF FF FF",
        ),
        // Dates and timestamps encode as Int32 / Int64.
        (KeyType::Date32, Some(Int(1)), "01 80 00 00 01"),
        (
            KeyType::Date64,
            Some(Int(86_400_000)),
            "01 80 00 00 00 05 26 5C 00",
        ),
        (
            KeyType::Timestamp {
                unit: TimeUnit::Microsecond,
                tz: Some("UTC".into()),
            },
            Some(Int(-1)),
            "01 7F FF FF FF FF FF FF FF",
        ),
        (
            KeyType::Timestamp {
                unit: TimeUnit::Second,
                tz: None,
            },
            None,
            "00 00 00 00 00 00 00 00 00",
        ),
    ];
    for (key, value, golden) in cases {
        let got = enc1(key.clone(), value.clone());
        assert_eq!(got, hex(golden), "{key} {value:?}");
        assert_eq!(
            got,
            spec_encode(&key, value.as_ref()),
            "{key} {value:?} vs spec text"
        );
    }
}

#[test]
fn timestamp_unit_and_zone_do_not_change_bytes() {
    let a = KeyEncoder::new(vec![KeyType::from_logical_type("timestamp:us:UTC").unwrap()])
        .unwrap()
        .encode_columns(&[Arc::new(
            TimestampMicrosecondArray::from(vec![Some(5), None, Some(-7)]).with_timezone("UTC"),
        ) as ArrayRef])
        .unwrap();
    let b = KeyEncoder::new(vec![KeyType::from_logical_type("timestamp:ns:-").unwrap()])
        .unwrap()
        .encode_columns(&[Arc::new(TimestampNanosecondArray::from(vec![
            Some(5),
            None,
            Some(-7),
        ])) as ArrayRef])
        .unwrap();
    assert_eq!(a, b);
}

#[test]
fn tuple_with_null_keys_concatenates_null_encodings() {
    let encoder = KeyEncoder::new(vec![KeyType::Utf8, KeyType::Float32]).unwrap();
    assert_eq!(
        encoder
            .encode_tuple(&[None, Some(ElementValue::Float32(0.5))])
            .unwrap(),
        hex("00 01 BF 00 00 00")
    );
    assert_eq!(
        encoder.encode_tuple(&[None, None]).unwrap(),
        hex("00 00 00 00 00 00")
    );
    // A prefix of the keys encodes alone.
    assert_eq!(encoder.encode_tuple(&[bytes(b"")]).unwrap(), hex("01"));
}

/// list<struct<label: string, confidence: float, area: float>> rows:
/// [ {car,0.95,1}, {person,0.3,2} ], null, [], [ null element, {NULL label,0.5,3} ].
fn detections() -> ArrayRef {
    let fields = Fields::from(vec![
        Field::new("label", DataType::Utf8, true),
        Field::new("confidence", DataType::Float32, true),
        Field::new("area", DataType::Float32, true),
    ]);
    type Builder = ListBuilder<StructBuilder>;
    let push =
        |list: &mut Builder, label: Option<&str>, conf: Option<f32>, area: f32, valid: bool| {
            let s = list.values();
            s.field_builder::<StringBuilder>(0)
                .unwrap()
                .append_option(label);
            s.field_builder::<Float32Builder>(1)
                .unwrap()
                .append_option(conf);
            s.field_builder::<Float32Builder>(2)
                .unwrap()
                .append_value(area);
            s.append(valid);
        };
    let mut list = ListBuilder::new(StructBuilder::from_fields(fields, 0));
    push(&mut list, Some("car"), Some(0.95), 1.0, true);
    push(&mut list, Some("person"), Some(0.3), 2.0, true);
    list.append(true);
    list.append(false);
    list.append(true);
    // A null element whose child slots hold a non-null label: must still encode as nulls.
    push(&mut list, Some("ghost"), Some(0.1), 9.0, false);
    push(&mut list, None, Some(0.5), 3.0, true);
    list.append(true);
    Arc::new(list.finish())
}

#[test]
fn entries_follow_storage_layout() {
    // Spec, "Storage Layout": one entry per element; a null element is a tuple of null
    // keys (its value is not null); a null list is one entry with a null value; an empty
    // list has none.
    let encoder = KeyEncoder::new(vec![KeyType::Utf8, KeyType::Float32]).unwrap();
    let entries = encoder
        .encode_entries(detections().as_ref(), &[0, 1])
        .unwrap();
    assert_eq!(entries.rows, vec![0, 0, 1, 3, 3]);
    let values = &entries.values;
    let tuple = |label: Option<&[u8]>, conf: Option<f32>| {
        encoder
            .encode_tuple(&[label.and_then(bytes), conf.map(ElementValue::Float32)])
            .unwrap()
    };
    assert_eq!(values.value(0), tuple(Some(b"car"), Some(0.95)).as_slice());
    assert_eq!(
        values.value(1),
        tuple(Some(b"person"), Some(0.3)).as_slice()
    );
    assert!(values.is_null(2));
    assert!(values.is_valid(3));
    assert_eq!(values.value(3), hex("00 00 00 00 00 00").as_slice());
    assert_eq!(values.value(4), tuple(None, Some(0.5)).as_slice());
    // Key children may be chosen in any order.
    let reversed = KeyEncoder::new(vec![KeyType::Float32, KeyType::Utf8])
        .unwrap()
        .encode_entries(detections().as_ref(), &[1, 0])
        .unwrap();
    assert_eq!(
        reversed.values.value(0),
        hex("01 BF 73 33 33 02 63 61 72 00 00 00 00 00 03")
    );
    // A wrong child type or position is an error, not a panic.
    assert!(encoder
        .encode_entries(detections().as_ref(), &[0, 0])
        .is_err());
    assert!(encoder
        .encode_entries(detections().as_ref(), &[0, 7])
        .is_err());
}

// ---------------------------------------------------------------------------------------
// Property tests: order and ranges.

fn arb_string() -> impl Strategy<Value = Option<Vec<u8>>> {
    // Short strings over a tiny alphabet (to get shared prefixes, zero bytes and exact
    // block sizes), and occasionally long ones crossing the 8- and 32-byte blocks.
    prop_oneof![
        1 => Just(None),
        6 => prop::collection::vec(prop::sample::select(vec![0u8, 1, b'a', b'b', 0xFF]), 0..10)
            .prop_map(Some),
        2 => prop::collection::vec(prop::sample::select(vec![0u8, b'a', 0xFF]), 30..70)
            .prop_map(Some),
    ]
}

fn arb_u8() -> impl Strategy<Value = Option<u64>> {
    prop_oneof![1 => Just(None), 6 => prop::sample::select(vec![0u64, 1, 127, 254, 255]).prop_map(Some)]
}

fn arb_f32() -> impl Strategy<Value = Option<f32>> {
    prop_oneof![
        1 => Just(None),
        6 => prop::sample::select(vec![
            f32::NEG_INFINITY, -2.5, -0.0, 0.0, 0.5, 1.0, f32::INFINITY, f32::NAN,
            f32::from_bits(0xFFC0_0000),
        ]).prop_map(Some),
    ]
}

type Tuple = (Option<Vec<u8>>, Option<u64>, Option<f32>);

fn tuple_values(t: &Tuple) -> Vec<Option<ElementValue>> {
    vec![
        t.0.clone().map(ElementValue::Bytes),
        t.1.map(ElementValue::UInt),
        t.2.map(ElementValue::Float32),
    ]
}

/// Tuple order from the spec: key by key, a null key first.
fn tuple_cmp(a: &Tuple, b: &Tuple) -> Ordering {
    let (va, vb) = (tuple_values(a), tuple_values(b));
    for (x, y) in va.iter().zip(&vb) {
        let o = match (x, y) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(x), Some(y)) => x.compare(y).unwrap(),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

fn encoder3() -> KeyEncoder {
    KeyEncoder::new(vec![KeyType::Binary, KeyType::UInt8, KeyType::Float32]).unwrap()
}

fn key_cmp(x: &Option<ElementValue>, y: &Option<ElementValue>) -> Ordering {
    match (x, y) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(x), Some(y)) => x.compare(y).unwrap(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// "Under this comparison, the encoded tuples sort as the tuples do."
    #[test]
    fn encoded_order_is_tuple_order(a in (arb_string(), arb_u8(), arb_f32()),
                                    b in (arb_string(), arb_u8(), arb_f32())) {
        let e = encoder3();
        let ea = e.encode_tuple(&tuple_values(&a)).unwrap();
        let eb = e.encode_tuple(&tuple_values(&b)).unwrap();
        prop_assert_eq!(ea.cmp(&eb), tuple_cmp(&a, &b));
        // And each key's bytes are the spec-text bytes.
        let spec: Vec<u8> = e.key_types().iter().zip(tuple_values(&a))
            .flat_map(|(k, v)| spec_encode(k, v.as_ref())).collect();
        prop_assert_eq!(ea, spec);
    }

    /// A prefix of fixed keys plus a range on the next key is exactly one byte range.
    #[test]
    fn prefix_and_next_key_range_is_exact(
        t in (arb_string(), arb_u8(), arb_f32()),
        fixed in arb_string(),
        fix_two in any::<bool>(),
        fixed_u8 in arb_u8(),
        lo in arb_f32(), lo_incl in any::<bool>(),
        hi in arb_f32(), hi_incl in any::<bool>(),
        hi_present in any::<bool>(),
        u8_lo in arb_u8(), u8_hi in arb_u8(),
    ) {
        let e = encoder3();
        let encoded = e.encode_tuple(&tuple_values(&t)).unwrap();
        let values = tuple_values(&t);
        let fixed_v = fixed.clone().map(ElementValue::Bytes);
        let (range, expected) = if fix_two {
            // Keys 0 and 1 fixed (possibly to null), range on key 2 (float).
            let fixed_u8_v = fixed_u8.map(ElementValue::UInt);
            let prefix = e.encode_tuple(&[fixed_v.clone(), fixed_u8_v.clone()]).unwrap();
            let lo_v = lo.map(ElementValue::Float32);
            let hi_v = hi.map(ElementValue::Float32);
            // lo None means "no lower bound": k > NULL (non-null keys only).
            let lo_enc = e.encode_key(2, lo_v.as_ref()).unwrap();
            let hi_enc = e.encode_key(2, hi_v.as_ref()).unwrap();
            let lower = match (&lo_v, lo_incl) {
                (None, _) => Bound::Excluded(lo_enc.as_slice()),
                (Some(_), true) => Bound::Included(lo_enc.as_slice()),
                (Some(_), false) => Bound::Excluded(lo_enc.as_slice()),
            };
            let upper = match (&hi_v, hi_incl, hi_present) {
                (Some(_), true, true) => Bound::Included(hi_enc.as_slice()),
                (Some(_), false, true) => Bound::Excluded(hi_enc.as_slice()),
                _ => Bound::Unbounded,
            };
            let range = EncodedRange::with_prefix_and_next_key(&prefix, lower, upper);
            let k = &values[2];
            let in_lower = match &lo_v {
                None => k.is_some(),
                Some(_) if lo_incl => key_cmp(k, &lo_v) != Ordering::Less,
                Some(_) => key_cmp(k, &lo_v) == Ordering::Greater,
            };
            let in_upper = match (&hi_v, hi_present) {
                (Some(_), true) if hi_incl => key_cmp(k, &hi_v) != Ordering::Greater,
                (Some(_), true) => key_cmp(k, &hi_v) == Ordering::Less,
                _ => true,
            };
            let expected = key_cmp(&values[0], &fixed_v) == Ordering::Equal
                && key_cmp(&values[1], &fixed_u8_v) == Ordering::Equal
                && in_lower && in_upper;
            (range, expected)
        } else {
            // Key 0 fixed, inclusive range on key 1 (u8).
            let prefix = e.encode_tuple(std::slice::from_ref(&fixed_v)).unwrap();
            let (lo_v, hi_v) = (u8_lo.map(ElementValue::UInt), u8_hi.map(ElementValue::UInt));
            let lo_enc = e.encode_key(1, lo_v.as_ref()).unwrap();
            let hi_enc = e.encode_key(1, hi_v.as_ref()).unwrap();
            let lower = if lo_v.is_some() { Bound::Included(lo_enc.as_slice()) } else { Bound::Excluded(lo_enc.as_slice()) };
            let upper = if hi_v.is_some() { Bound::Included(hi_enc.as_slice()) } else { Bound::Unbounded };
            let range = EncodedRange::with_prefix_and_next_key(&prefix, lower, upper);
            let k = &values[1];
            let expected = key_cmp(&values[0], &fixed_v) == Ordering::Equal
                && k.is_some()
                && (lo_v.is_none() || key_cmp(k, &lo_v) != Ordering::Less)
                && (hi_v.is_none() || key_cmp(k, &hi_v) != Ordering::Greater);
            (range, expected)
        };
        let got = range.as_ref().is_some_and(|r| r.contains(&encoded));
        prop_assert_eq!(got, expected, "range {:?}", range);
    }

    /// "the tuples whose encoding starts with the encoded fixed values": the prefix range
    /// of a fixed string never admits another string that merely starts with it.
    #[test]
    fn prefix_range_excludes_longer_strings(base in prop::collection::vec(any::<u8>(), 0..40),
                                            ext in prop::collection::vec(any::<u8>(), 1..40)) {
        let e = encoder3();
        let prefix = e.encode_tuple(&[Some(ElementValue::Bytes(base.clone()))]).unwrap();
        let range = EncodedRange::with_prefix(prefix);
        let longer = [base.clone(), ext].concat();
        let t = e.encode_tuple(&[Some(ElementValue::Bytes(longer)), None, None]).unwrap();
        prop_assert!(!range.contains(&t));
        let same = e.encode_tuple(&[Some(ElementValue::Bytes(base)), Some(ElementValue::UInt(255)),
                                    Some(ElementValue::Float32(f32::NAN))]).unwrap();
        prop_assert!(range.contains(&same));
    }
}
