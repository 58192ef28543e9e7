//! Golden tests against the pylance 14.0.2 fixtures in `tests/fixtures/files`:
//! * every page encoding decodes with our prost messages and prints exactly the Debug text
//!   pylance reported (`encoding_debug` in `catalog.json`), which pins field numbers/types;
//! * every chunk, dictionary, level buffer, full-zip value and sparse sequence of every page
//!   decodes, with counts and structural invariants checked;
//! * for the flat-column files, decoded values equal pylance's own read (the Arrow oracle).
//!
//! A minimal test-only container parser (footer → column metadata → pages) stands in for the
//! reader; it is not part of the library.

use std::collections::HashMap;
use std::path::PathBuf;

use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use bytes::Bytes;
use prost::Message;

use super::*;
use crate::lance::proto::encodings::*;

#[derive(Clone, PartialEq, prost::Message)]
struct ColumnMeta {
    #[prost(message, repeated, tag = "2")]
    pages: Vec<PageMeta>,
}
#[derive(Clone, PartialEq, prost::Message)]
struct PageMeta {
    #[prost(uint64, repeated, tag = "1")]
    buffer_offsets: Vec<u64>,
    #[prost(uint64, repeated, tag = "2")]
    buffer_sizes: Vec<u64>,
    #[prost(uint64, tag = "3")]
    length: u64,
    #[prost(message, optional, tag = "4")]
    encoding: Option<EncodingMeta>,
}
#[derive(Clone, PartialEq, prost::Message)]
struct EncodingMeta {
    #[prost(message, optional, tag = "2")]
    direct: Option<DirectMeta>,
}
#[derive(Clone, PartialEq, prost::Message)]
struct DirectMeta {
    #[prost(bytes = "bytes", tag = "1")]
    encoding: Bytes,
}

fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/files")
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Pages of every physical column: (buffers, length, Any).
fn read_columns(file: &Bytes) -> Vec<Vec<(Vec<Bytes>, u64, prost_types::Any)>> {
    let footer = &file[file.len() - 40..];
    assert_eq!(&footer[36..], b"LANC");
    let cmo_start = u64_at(footer, 8) as usize;
    let num_columns = u32::from_le_bytes(footer[28..32].try_into().unwrap()) as usize;
    (0..num_columns)
        .map(|c| {
            let pos = u64_at(file, cmo_start + 16 * c) as usize;
            let size = u64_at(file, cmo_start + 16 * c + 8) as usize;
            let meta = ColumnMeta::decode(&file[pos..pos + size]).unwrap();
            meta.pages
                .into_iter()
                .map(|p| {
                    let buffers = p
                        .buffer_offsets
                        .iter()
                        .zip(&p.buffer_sizes)
                        .map(|(o, s)| file.slice(*o as usize..(*o + *s) as usize))
                        .collect();
                    let direct = p.encoding.unwrap().direct.unwrap().encoding;
                    (buffers, p.length, prost_types::Any::decode(direct).unwrap())
                })
                .collect()
        })
        .collect()
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for byte in data {
        crc ^= *byte as u32;
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// FSST symbol tables of a Debug string, in order, replaced by `<N bytes crc32=...>`.
fn replace_symbol_tables(debug: &str, tables: &[Bytes]) -> String {
    let mut out = String::new();
    let mut rest = debug;
    for table in tables {
        let key = "symbol_table: b\"";
        let start = rest.find(key).expect("symbol table in Debug text") + key.len();
        let mut end = start;
        let bytes = rest.as_bytes();
        while bytes[end] != b'"' {
            end += if bytes[end] == b'\\' { 2 } else { 1 };
        }
        out.push_str(&rest[..start - 2]);
        out.push_str(&format!(
            "<{} bytes crc32={:08x}>",
            table.len(),
            crc32(table)
        ));
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

fn fsst_tables(encoding: &CompressiveEncoding, out: &mut Vec<Bytes>) {
    if let Some(Compression::Fsst(f)) = &encoding.compression {
        out.push(f.symbol_table.clone());
    }
    // Children of interest for FSST (values of General/Fsst) are walked through Debug order.
    if let Some(Compression::General(g)) = &encoding.compression {
        if let Some(inner) = &g.values {
            fsst_tables(inner, out);
        }
    }
}

/// The page encoding: a 2.1/2.2 `PageLayout` or a 2.3 `PlanarLayout`.
enum Layout {
    Page(PageLayout),
    Planar(PlanarLayout),
}

fn decode_layout(any: &prost_types::Any) -> (Layout, String) {
    match any.type_url.as_str() {
        PAGE_LAYOUT_TYPE_URL => {
            let layout = PageLayout::decode(any.value.as_slice()).unwrap();
            let debug = format!("{layout:?}");
            (Layout::Page(layout), debug)
        }
        PLANAR_LAYOUT_TYPE_URL => {
            let layout = PlanarLayout::decode(any.value.as_slice()).unwrap();
            let debug = format!("{layout:?}");
            (Layout::Planar(layout), debug)
        }
        other => panic!("unexpected page encoding {other}"),
    }
}

/// The value encodings of a page, for FSST table lookup.
fn value_encodings(layout: &Layout) -> Vec<&CompressiveEncoding> {
    let mut out = Vec::new();
    match layout {
        Layout::Page(p) => match &p.layout {
            Some(page_layout::Layout::MiniBlockLayout(m)) => {
                out.extend(m.value_compression.as_ref())
            }
            Some(page_layout::Layout::FullZipLayout(z)) => out.extend(z.value_compression.as_ref()),
            _ => {}
        },
        Layout::Planar(p) => match p.values.as_ref().and_then(|v| v.codec.as_ref()) {
            Some(value_plane::Codec::Chunked(c)) => out.extend(c.compression.as_ref()),
            Some(value_plane::Codec::Zipped(z)) => out.extend(z.compression.as_ref()),
            Some(value_plane::Codec::Indexed(i)) => {
                out.extend(i.items.as_ref().and_then(|z| z.compression.as_ref()))
            }
            _ => {}
        },
    }
    out
}

/// A mini-block page, from either layout.
struct MiniBlockView<'a> {
    values: &'a CompressiveEncoding,
    rep: Option<&'a CompressiveEncoding>,
    def: Option<&'a CompressiveEncoding>,
    dictionary: Option<(&'a CompressiveEncoding, u64)>,
    num_buffers: u64,
    num_items: u64,
    large: bool,
}

/// Decoded mini-block page: per chunk values, plus all def levels and the dictionary.
struct MiniBlockPage {
    chunks: Vec<DecodedValues>,
    def: Vec<u16>,
    dictionary: Option<DecodedValues>,
}

fn decode_miniblock_page(view: &MiniBlockView, buffers: &[Bytes]) -> MiniBlockPage {
    assert_eq!(
        miniblock_buffer_count(view.values).unwrap() as u64,
        view.num_buffers
    );
    let meta = &buffers[0];
    let words: Vec<u32> = if view.large {
        meta.chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    } else {
        meta.chunks(2)
            .map(|c| u16::from_le_bytes(c.try_into().unwrap()) as u32)
            .collect()
    };
    let dictionary = view.dictionary.map(|(encoding, n)| {
        let payload = block_has_payload(encoding)
            .unwrap()
            .then(|| buffers[2].clone());
        let dict = decode_block(encoding, payload, n as usize).unwrap();
        assert_eq!(dict.num_values(), n as usize);
        dict
    });
    let data = &buffers[1];
    let (mut pos, mut seen) = (0usize, 0u64);
    let (mut chunks, mut def) = (Vec::new(), Vec::new());
    for (i, word) in words.iter().enumerate() {
        let size = ((word >> 4) as usize + 1) * 8;
        let count = if i + 1 == words.len() {
            view.num_items - seen
        } else {
            1 << (word & 0xF)
        };
        seen += count;
        let chunk = data.slice(pos..pos + size);
        pos += size;
        let mut at = 0usize;
        let u16_at = |at: usize| u16::from_le_bytes([chunk[at], chunk[at + 1]]) as usize;
        let num_levels = u16_at(at);
        at += 2;
        let rep_size = view.rep.map(|_| {
            at += 2;
            u16_at(at - 2)
        });
        let def_size = view.def.map(|_| {
            at += 2;
            u16_at(at - 2)
        });
        let sizes: Vec<usize> = (0..view.num_buffers)
            .map(|_| {
                if view.large {
                    at += 4;
                    u32::from_le_bytes(chunk[at - 4..at].try_into().unwrap()) as usize
                } else {
                    at += 2;
                    u16_at(at - 2)
                }
            })
            .collect();
        let mut take = |n: usize| {
            at = at.div_ceil(8) * 8;
            let out = chunk.slice(at..at + n);
            at += n;
            out
        };
        let rep = rep_size.map(&mut take);
        let defs = def_size.map(&mut take);
        let value_buffers: Vec<Bytes> = sizes.iter().map(|n| take(*n)).collect();
        let values = decode_miniblock(view.values, &value_buffers, count as usize).unwrap();
        assert_eq!(values.num_values(), count as usize);
        if let (Some(encoding), Some(payload)) = (view.rep, rep) {
            assert_eq!(
                decode_levels(encoding, Some(payload), num_levels)
                    .unwrap()
                    .len(),
                num_levels
            );
        }
        if let (Some(encoding), Some(payload)) = (view.def, defs) {
            def.extend(decode_levels(encoding, Some(payload), num_levels).unwrap());
        }
        chunks.push(values);
    }
    assert_eq!(pos, data.len(), "chunk sizes cover the data buffer");
    MiniBlockPage {
        chunks,
        def,
        dictionary,
    }
}

/// A full-zip page, from either layout.
struct ZipView<'a> {
    values: &'a CompressiveEncoding,
    bits_rep: u32,
    bits_def: u32,
    bits_per_value: Option<u32>,
    bits_per_offset: Option<u32>,
    num_items: u64,
    max_visible_def: u16,
}

/// Decodes a full-zip page; returns the values and the def level of every item.
fn decode_zip_page(view: &ZipView, data: &Bytes) -> (DecodedValues, Vec<u16>) {
    let ctrl_bits = view.bits_rep + view.bits_def;
    let ctrl_bytes = match ctrl_bits {
        0 => 0,
        1..=8 => 1,
        9..=16 => 2,
        _ => 4,
    };
    let (mut at, mut defs) = (0usize, Vec::new());
    let (mut fixed, mut offsets, mut var) = (Vec::new(), vec![0u64], Vec::new());
    let mut visible = 0usize;
    for _ in 0..view.num_items {
        let mut ctrl = [0u8; 4];
        ctrl[..ctrl_bytes].copy_from_slice(&data[at..at + ctrl_bytes]);
        at += ctrl_bytes;
        let def = (u32::from_le_bytes(ctrl) & ((1u32 << view.bits_def) - 1)) as u16;
        defs.push(def);
        if def > view.max_visible_def {
            continue;
        }
        visible += 1;
        if let Some(bits) = view.bits_per_value {
            let n = bits as usize / 8;
            fixed.extend_from_slice(&data[at..at + n]);
            at += n;
        } else if def == 0 {
            let width = view.bits_per_offset.unwrap() as usize / 8;
            let mut len = [0u8; 8];
            len[..width].copy_from_slice(&data[at..at + width]);
            at += width;
            let len = u64::from_le_bytes(len) as usize;
            var.extend_from_slice(&data[at..at + len]);
            at += len;
            offsets.push(var.len() as u64);
        }
    }
    assert_eq!(at, data.len(), "full-zip items cover the buffer");
    let values = if view.bits_per_value.is_some() {
        decode_fullzip_fixed(view.values, Bytes::from(fixed), visible).unwrap()
    } else {
        decode_fullzip_variable(view.values, offsets, Bytes::from(var)).unwrap()
    };
    (values, defs)
}

fn max_visible_def(layers: &[i32]) -> u16 {
    let mut sum = 0;
    for layer in layers {
        match RepDefLayer::try_from(*layer).unwrap() {
            RepDefLayer::RepdefNullableItem => sum += 1,
            RepDefLayer::RepdefAllValidItem => {}
            _ => break,
        }
    }
    sum
}

/// Decodes a sparse structure (outer → inner); returns the leaf slot count.
fn decode_sparse(
    structure: &SparseStructure,
    length: u64,
    buffers: &mut impl Iterator<Item = Bytes>,
) -> u64 {
    let scale: u64 = structure
        .layers
        .iter()
        .filter_map(|l| match &l.layer {
            Some(sparse_structural_layer::Layer::FixedSizeList(f)) => Some(f.dimension),
            _ => None,
        })
        .product();
    let mut domain = length / scale;
    let mut sequence = |encoding: &Option<CompressiveEncoding>,
                        n: u64,
                        domain: u64,
                        increasing: bool| {
        let encoding = encoding.as_ref().unwrap();
        let payload = block_has_payload(encoding)
            .unwrap()
            .then(|| buffers.next().unwrap());
        let values = decode_u64_sequence(encoding, payload, n as usize).unwrap();
        assert_eq!(values.len() as u64, n);
        if increasing {
            assert!(values.windows(2).all(|w| w[0] < w[1]) && values.iter().all(|v| *v < domain));
        }
        values
    };
    for layer in &structure.layers {
        match layer.layer.as_ref().unwrap() {
            sparse_structural_layer::Layer::Validity(v) => {
                sequence(&v.positions, v.num_positions, domain, true);
            }
            sparse_structural_layer::Layer::List(list) => {
                sequence(
                    &list.non_empty_positions,
                    list.num_non_empty_positions,
                    domain,
                    true,
                );
                let counts = sequence(&list.counts, list.num_non_empty_positions, u64::MAX, false);
                assert_eq!(counts.iter().sum::<u64>(), list.num_child_slots);
                assert!(counts.iter().all(|c| *c > 0));
                let v = list.validity.as_ref().unwrap();
                sequence(&v.positions, v.num_positions, domain, true);
                domain = list.num_child_slots;
            }
            sparse_structural_layer::Layer::FixedSizeList(f) => {
                let v = f.validity.as_ref().unwrap();
                sequence(&v.positions, v.num_positions, domain, true);
                domain *= f.dimension;
            }
        }
    }
    domain
}

/// Row values of a flat page: `None` = null.
type Rows = Vec<Option<Vec<u8>>>;

fn value_bytes(values: &DecodedValues, i: usize) -> Vec<u8> {
    match values {
        DecodedValues::Fixed {
            bits_per_value: 1,
            data,
            ..
        } => vec![data[i / 8] >> (i % 8) & 1],
        DecodedValues::Fixed {
            bits_per_value,
            data,
            ..
        } => {
            let w = *bits_per_value as usize / 8;
            data[i * w..(i + 1) * w].to_vec()
        }
        DecodedValues::Variable { offsets, data } => {
            data[offsets[i] as usize..offsets[i + 1] as usize].to_vec()
        }
        DecodedValues::FixedSizeList {
            dimension, items, ..
        } => {
            let d = *dimension as usize;
            (i * d..(i + 1) * d)
                .flat_map(|j| value_bytes(items, j))
                .collect()
        }
    }
}

fn index_at(values: &DecodedValues, i: usize) -> usize {
    let bytes = value_bytes(values, i);
    let mut buf = [0u8; 8];
    buf[..bytes.len()].copy_from_slice(&bytes);
    u64::from_le_bytes(buf) as usize
}

fn miniblock_rows(page: &MiniBlockPage) -> Rows {
    let mut rows = Vec::new();
    for chunk in &page.chunks {
        for i in 0..chunk.num_values() {
            let row = rows.len();
            if page.def.get(row).is_some_and(|def| *def != 0) {
                rows.push(None);
                continue;
            }
            rows.push(Some(match &page.dictionary {
                Some(dict) => value_bytes(dict, index_at(chunk, i)),
                None => value_bytes(chunk, i),
            }));
        }
    }
    rows
}

fn zip_rows(values: &DecodedValues, defs: &[u16], fixed: bool) -> Rows {
    let mut next = 0;
    defs.iter()
        .map(|def| {
            let value = (fixed || *def == 0).then(|| {
                next += 1;
                value_bytes(values, next - 1)
            });
            if *def == 0 {
                value
            } else {
                None
            }
        })
        .collect()
}

/// pylance's value of row `i`: `None` = null, `Some(None)` = not comparable (null FSL items).
fn oracle_bytes(array: &dyn Array, i: usize) -> Option<Option<Vec<u8>>> {
    if array.is_null(i) {
        return None;
    }
    let data = array.to_data();
    let offset = data.offset() + i;
    let bytes = match data.data_type() {
        DataType::Boolean => vec![data.buffers()[0].as_slice()[offset / 8] >> (offset % 8) & 1],
        DataType::Utf8 | DataType::Binary => {
            let o: &[i32] = data.buffers()[0].typed_data();
            data.buffers()[1].as_slice()[o[offset] as usize..o[offset + 1] as usize].to_vec()
        }
        DataType::LargeUtf8 | DataType::LargeBinary => {
            let o: &[i64] = data.buffers()[0].typed_data();
            data.buffers()[1].as_slice()[o[offset] as usize..o[offset + 1] as usize].to_vec()
        }
        DataType::FixedSizeBinary(w) => {
            let w = *w as usize;
            data.buffers()[0].as_slice()[offset * w..(offset + 1) * w].to_vec()
        }
        DataType::FixedSizeList(_, d) => {
            let child = arrow_array::make_array(data.child_data()[0].clone());
            let d = *d as usize;
            let mut out = Vec::new();
            for j in offset * d..(offset + 1) * d {
                match oracle_bytes(child.as_ref(), j) {
                    Some(Some(b)) => out.extend(b),
                    _ => return Some(None),
                }
            }
            out
        }
        other => {
            let w = other
                .primitive_width()
                .unwrap_or_else(|| panic!("unexpected oracle type {other}"));
            data.buffers()[0].as_slice()[offset * w..(offset + 1) * w].to_vec()
        }
    };
    Some(Some(bytes))
}

fn load_oracle(path: &str) -> RecordBatch {
    let file = std::fs::File::open(fixtures_dir().join(path)).unwrap();
    let mut reader = arrow_ipc::reader::FileReader::try_new(file, None).unwrap();
    reader.next().unwrap().unwrap()
}

/// Decodes one page; returns its rows when it is a flat page whose values we can compare.
fn decode_page(layout: &Layout, buffers: Vec<Bytes>, length: u64) -> Option<Rows> {
    // A flat page has a single item layer (nullable or not).
    let flat = |layers: &[i32]| layers.len() == 1;
    match layout {
        Layout::Page(p) => match p.layout.as_ref().unwrap() {
            page_layout::Layout::MiniBlockLayout(m) => {
                let view = MiniBlockView {
                    values: m.value_compression.as_ref().unwrap(),
                    rep: m.rep_compression.as_ref(),
                    def: m.def_compression.as_ref(),
                    dictionary: m.dictionary.as_ref().map(|d| (d, m.num_dictionary_items)),
                    num_buffers: m.num_buffers,
                    num_items: m.num_items,
                    large: m.has_large_chunk,
                };
                let page = decode_miniblock_page(&view, &buffers);
                (flat(&m.layers) && m.rep_compression.is_none()).then(|| miniblock_rows(&page))
            }
            page_layout::Layout::FullZipLayout(z) => {
                let view = ZipView {
                    values: z.value_compression.as_ref().unwrap(),
                    bits_rep: z.bits_rep,
                    bits_def: z.bits_def,
                    bits_per_value: match z.details {
                        Some(full_zip_layout::Details::BitsPerValue(b)) => Some(b),
                        _ => None,
                    },
                    bits_per_offset: match z.details {
                        Some(full_zip_layout::Details::BitsPerOffset(b)) => Some(b),
                        _ => None,
                    },
                    num_items: z.num_items as u64,
                    max_visible_def: max_visible_def(&z.layers),
                };
                let (values, defs) = decode_zip_page(&view, &buffers[0]);
                (flat(&z.layers) && z.bits_rep == 0)
                    .then(|| zip_rows(&values, &defs, view.bits_per_value.is_some()))
            }
            page_layout::Layout::ConstantLayout(c) => {
                let levels = [
                    (&c.rep_compression, c.num_rep_values),
                    (&c.def_compression, c.num_def_values),
                ];
                for (i, (encoding, n)) in levels.iter().enumerate() {
                    if let Some(encoding) = encoding {
                        let payload = block_has_payload(encoding)
                            .unwrap()
                            .then(|| buffers[i].clone());
                        assert_eq!(
                            decode_levels(encoding, payload, *n as usize).unwrap().len(),
                            *n as usize
                        );
                    }
                }
                None
            }
            page_layout::Layout::BlobLayout(_) => None,
        },
        Layout::Planar(p) => {
            let values = p.values.as_ref().unwrap().codec.as_ref().unwrap();
            match p.structure.as_ref().unwrap().codec.as_ref().unwrap() {
                structural_plane::Codec::Dense(dense) => match values {
                    value_plane::Codec::Chunked(c) => {
                        let levels = c.levels.as_ref().unwrap();
                        let view = MiniBlockView {
                            values: c.compression.as_ref().unwrap(),
                            rep: levels.repetition.as_ref(),
                            def: levels.definition.as_ref(),
                            dictionary: c.dictionary.as_ref().map(|d| (d, c.num_dictionary_items)),
                            num_buffers: c.num_buffers,
                            num_items: c.num_items,
                            large: true,
                        };
                        let page = decode_miniblock_page(&view, &buffers);
                        (flat(&dense.layers) && levels.repetition.is_none())
                            .then(|| miniblock_rows(&page))
                    }
                    value_plane::Codec::Zipped(z) => {
                        let levels = z.levels.clone().unwrap_or_default();
                        let view = ZipView {
                            values: z.compression.as_ref().unwrap(),
                            bits_rep: levels.bits_repetition,
                            bits_def: levels.bits_definition,
                            bits_per_value: match z.addressing {
                                Some(zipped_values::Addressing::BitsPerValue(b)) => Some(b),
                                _ => None,
                            },
                            bits_per_offset: match z.addressing {
                                Some(zipped_values::Addressing::BitsPerOffset(b)) => Some(b),
                                _ => None,
                            },
                            num_items: z.num_items,
                            max_visible_def: max_visible_def(&dense.layers),
                        };
                        let (values, defs) = decode_zip_page(&view, &buffers[0]);
                        (flat(&dense.layers) && view.bits_rep == 0)
                            .then(|| zip_rows(&values, &defs, view.bits_per_value.is_some()))
                    }
                    _ => None,
                },
                structural_plane::Codec::Sparse(sparse) => {
                    let value_buffers = match values {
                        value_plane::Codec::Chunked(c) => 2 + usize::from(c.dictionary.is_some()),
                        value_plane::Codec::Zipped(z) => {
                            1 + usize::from(matches!(
                                z.addressing,
                                Some(zipped_values::Addressing::BitsPerOffset(_))
                            ))
                        }
                        value_plane::Codec::Indexed(_) => 3,
                        _ => 0,
                    };
                    let mut structural = buffers[value_buffers..].iter().cloned();
                    let leaf_slots = decode_sparse(sparse, length, &mut structural);
                    assert!(
                        structural.next().is_none(),
                        "every structural buffer consumed"
                    );
                    if let value_plane::Codec::Chunked(c) = values {
                        let view = MiniBlockView {
                            values: c.compression.as_ref().unwrap(),
                            rep: None,
                            def: None,
                            dictionary: c.dictionary.as_ref().map(|d| (d, c.num_dictionary_items)),
                            num_buffers: c.num_buffers,
                            num_items: leaf_slots,
                            large: true,
                        };
                        decode_miniblock_page(&view, &buffers);
                    }
                    None
                }
            }
        }
    }
}

#[test]
fn fixtures_decode_and_match_pylance() {
    let catalog_path = fixtures_dir().join("catalog.json");
    let catalog: serde_json::Value = serde_json::from_slice(
        &std::fs::read(&catalog_path).expect("fixtures catalog (merge the fixtures branch)"),
    )
    .unwrap();
    let (mut pages_checked, mut values_compared) = (0usize, 0usize);
    let mut codecs: HashMap<String, usize> = HashMap::new();
    for entry in catalog["files"].as_array().unwrap() {
        if entry["version"] == "2.0" {
            continue; // ArrayEncoding pages: covered by lance::v2_0's fixture tests
        }
        let path = entry["path"].as_str().unwrap();
        let file = Bytes::from(std::fs::read(fixtures_dir().join(path)).unwrap());
        let columns = read_columns(&file);
        let oracle = entry["oracle_full"]
            .as_str()
            .filter(|_| !path.starts_with("nested/"))
            .map(load_oracle);
        for (column, pages) in entry["physical_columns"]
            .as_array()
            .unwrap()
            .iter()
            .zip(&columns)
        {
            let leaf = column["leaf"].as_str().unwrap();
            let mut rows: Option<Rows> = Some(Vec::new());
            for (expected, (buffers, length, any)) in
                column["pages"].as_array().unwrap().iter().zip(pages)
            {
                let (layout, debug) = decode_layout(any);
                let mut tables = Vec::new();
                for encoding in value_encodings(&layout) {
                    fsst_tables(encoding, &mut tables);
                    for name in codec_names(encoding) {
                        *codecs.entry(name).or_default() += 1;
                    }
                }
                assert_eq!(
                    replace_symbol_tables(&debug, &tables),
                    expected["encoding_debug"].as_str().unwrap(),
                    "{path}:{leaf}"
                );
                let page_rows =
                    std::panic::catch_unwind(|| decode_page(&layout, buffers.clone(), *length))
                        .unwrap_or_else(|_| panic!("decoding {path}:{leaf} failed"));
                rows = rows.zip(page_rows).map(|(mut all, page)| {
                    all.extend(page);
                    all
                });
                pages_checked += 1;
            }
            if let (Some(rows), Some(batch)) = (rows, &oracle) {
                let array = batch
                    .column_by_name(leaf)
                    .unwrap_or_else(|| panic!("oracle column {leaf}"));
                assert_eq!(rows.len(), array.len(), "{path}:{leaf} row count");
                for (i, row) in rows.iter().enumerate() {
                    match oracle_bytes(array.as_ref(), i) {
                        None => assert!(row.is_none(), "{path}:{leaf} row {i} should be null"),
                        Some(None) => {}
                        Some(Some(expected)) => {
                            assert_eq!(
                                row.as_deref(),
                                Some(expected.as_slice()),
                                "{path}:{leaf} row {i}"
                            );
                            values_compared += 1;
                        }
                    }
                }
            }
        }
    }
    eprintln!(
        "golden: {pages_checked} pages, {values_compared} values compared, codecs {codecs:?}"
    );
    assert!(pages_checked > 300 && values_compared > 50_000);
    for codec in [
        "Fsst",
        "InlineBitpacking",
        "Rle",
        "ByteStreamSplit",
        "General(zstd)",
        "General(lz4)",
        "FixedSizeList",
        "Range",
        "Delta",
    ] {
        assert!(codecs.contains_key(codec), "fixtures exercise {codec}");
    }
}
