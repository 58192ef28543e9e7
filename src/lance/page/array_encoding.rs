//! The `ArrayEncoding` tree of a 2.0 page, checked and resolved into [`Node`]s: every buffer
//! reference becomes the absolute byte range of a page buffer, every required child is
//! present, every count is plausible. Encodings the 2.0 writers of lance 0.18–14.x never emit
//! into 2.0 pages (bit-packing, packed structs, constants, fixed-size binary, 2.1
//! mini-block messages) become [`Node::Unsupported`]: the file opens, reading the column
//! says what is missing.

use std::ops::Range;

use bytes::Bytes;
use prost::Message;

use crate::error::{Error, Result};
use crate::lance::proto::encodings_v2_0::{self as pb, array_encoding::ArrayEncoding as E};

/// Deepest encoding tree accepted (real trees are at most ~6 deep).
const MAX_DEPTH: usize = 16;

/// General compression of a whole `Flat` buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FlatCompression {
    /// zstd (u64 length prefix, or a legacy bare frame).
    Zstd,
    /// LZ4 block with a u32 length prefix.
    Lz4,
}

/// Validity of a [`Node::Nullable`] (names as in the protobuf).
#[allow(clippy::enum_variant_names)]
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Nullability {
    /// No nulls: the values.
    NoNull(Box<Node>),
    /// A 1-bit validity and a slot for every value.
    SomeNull {
        /// Validity bitmap (a 1-bit `Flat`).
        validity: Box<Node>,
        /// The values.
        values: Box<Node>,
    },
    /// Every value is null (no buffers).
    AllNull,
}

/// One resolved node of a 2.0 page's encoding tree.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    /// Fixed-width values, `bits` each (1 = LSB-first bitmap) in `buffer`.
    Flat {
        /// Bits per value: 1 or a positive multiple of 8.
        bits: u64,
        /// Absolute byte range of the page buffer.
        buffer: Range<u64>,
        /// Whole-buffer compression.
        compression: Option<FlatCompression>,
    },
    /// Validity around values.
    Nullable(Nullability),
    /// `dimension` items per value.
    FixedSizeList {
        /// Items per list (> 0).
        dimension: u64,
        /// The items.
        items: Box<Node>,
    },
    /// u64 end offsets then bytes.
    Binary {
        /// End offset of each value (u64), null ones raised by `null_adjustment`.
        indices: Box<Node>,
        /// The bytes (an 8-bit `Flat`).
        bytes: Box<Node>,
        /// Added to a null value's offset (0 only in pages without values).
        null_adjustment: u64,
    },
    /// FSST-compressed binary values.
    Fsst {
        /// The compressed values (a `Binary` node).
        binary: Box<Node>,
        /// The serialized symbol table.
        symbols: Bytes,
    },
    /// Indices into a dictionary stored in the page.
    Dictionary {
        /// Index of each value.
        indices: Box<Node>,
        /// The items.
        items: Box<Node>,
        /// Number of items.
        num_items: u32,
    },
    /// Offsets of a list column (items in the child column).
    List {
        /// u64 end offsets relative to the page's first item.
        offsets: Box<Node>,
        /// Added to a null list's offset (> 0).
        null_offset_adjustment: u64,
        /// Items referenced by the page.
        num_items: u64,
    },
    /// A struct header page (no buffers).
    Struct,
    /// An encoding lakeseek does not read in 2.0 pages.
    Unsupported(String),
}

impl Node {
    /// Decode and resolve a page's serialized `ArrayEncoding`; `buffers` are the page's
    /// absolute buffer ranges.
    pub(crate) fn from_bytes(value: Bytes, buffers: &[Range<u64>]) -> Result<Node> {
        let encoding = pb::ArrayEncoding::decode(value).map_err(|e| {
            Error::corrupt(format!(
                "page encoding is not an ArrayEncoding protobuf: {e}"
            ))
            .with_source(e)
        })?;
        Node::resolve(&encoding, buffers, 0)
    }

    fn resolve(encoding: &pb::ArrayEncoding, buffers: &[Range<u64>], depth: usize) -> Result<Node> {
        crate::ensure_corrupt!(
            depth < MAX_DEPTH,
            "ArrayEncoding nested deeper than {MAX_DEPTH}"
        );
        let child = |e: &Option<Box<pb::ArrayEncoding>>, what: &str| -> Result<Box<Node>> {
            let e = e
                .as_deref()
                .ok_or_else(|| Error::corrupt(format!("ArrayEncoding is missing {what}")))?;
            Node::resolve(e, buffers, depth + 1).map(Box::new)
        };
        let encoding = encoding
            .array_encoding
            .as_ref()
            .ok_or_else(|| Error::corrupt("ArrayEncoding has no encoding"))?;
        Ok(match encoding {
            E::Flat(flat) => resolve_flat(flat, buffers)?,
            E::Nullable(n) => Node::Nullable(match &n.nullability {
                Some(pb::nullable::Nullability::NoNulls(v)) => {
                    Nullability::NoNull(child(&v.values, "nullable values")?)
                }
                Some(pb::nullable::Nullability::SomeNulls(s)) => Nullability::SomeNull {
                    validity: child(&s.validity, "validity")?,
                    values: child(&s.values, "nullable values")?,
                },
                Some(pb::nullable::Nullability::AllNulls(_)) => Nullability::AllNull,
                None => return Err(Error::corrupt("Nullable has no nullability")),
            }),
            E::FixedSizeList(f) => {
                crate::ensure_corrupt!(f.dimension > 0, "fixed-size list of dimension 0");
                Node::FixedSizeList {
                    dimension: u64::from(f.dimension),
                    items: child(&f.items, "fixed-size list items")?,
                }
            }
            E::Binary(b) => {
                // 0 when the page has no values (the writer's adjustment is last offset + 1).
                Node::Binary {
                    indices: child(&b.indices, "binary indices")?,
                    bytes: child(&b.bytes, "binary bytes")?,
                    null_adjustment: b.null_adjustment,
                }
            }
            E::Dictionary(d) => Node::Dictionary {
                indices: child(&d.indices, "dictionary indices")?,
                items: child(&d.items, "dictionary items")?,
                num_items: d.num_dictionary_items,
            },
            E::List(l) => {
                crate::ensure_corrupt!(
                    l.null_offset_adjustment > 0,
                    "list null offset adjustment is 0"
                );
                Node::List {
                    offsets: child(&l.offsets, "list offsets")?,
                    null_offset_adjustment: l.null_offset_adjustment,
                    num_items: l.num_items,
                }
            }
            E::Fsst(f) => Node::Fsst {
                binary: child(&f.binary, "fsst values")?,
                symbols: f.symbol_table.clone(),
            },
            E::Struct(_) => Node::Struct,
            E::PackedStruct(p) => resolve_packed(p, buffers)?,
            other => Node::Unsupported(unsupported_name(other).to_string()),
        })
    }

    /// Short name of the node for `inspect`.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Node::Flat { .. } => "flat",
            Node::Nullable(_) => "nullable",
            Node::FixedSizeList { .. } => "fixed_size_list",
            Node::Binary { .. } => "binary",
            Node::Fsst { .. } => "fsst",
            Node::Dictionary { .. } => "dictionary",
            Node::List { .. } => "list",
            Node::Struct => "struct",
            Node::Unsupported(_) => "unsupported",
        }
    }

    /// The tree as text, e.g. `nullable(some_null(flat(1),flat(32)))`.
    pub(crate) fn describe(&self) -> String {
        match self {
            Node::Flat {
                bits, compression, ..
            } => match compression {
                None => format!("flat({bits})"),
                Some(c) => format!("flat({bits},{})", compression_name(*c)),
            },
            Node::Nullable(Nullability::NoNull(v)) => format!("nullable(no_null,{})", v.describe()),
            Node::Nullable(Nullability::SomeNull { validity, values }) => format!(
                "nullable(some_null,{},{})",
                validity.describe(),
                values.describe()
            ),
            Node::Nullable(Nullability::AllNull) => "nullable(all_null)".to_string(),
            Node::FixedSizeList { dimension, items } => {
                format!("fixed_size_list({dimension},{})", items.describe())
            }
            Node::Binary { indices, bytes, .. } => {
                format!("binary({},{})", indices.describe(), bytes.describe())
            }
            Node::Fsst { binary, .. } => format!("fsst({})", binary.describe()),
            Node::Dictionary {
                indices,
                items,
                num_items,
            } => format!(
                "dictionary({num_items},{},{})",
                indices.describe(),
                items.describe()
            ),
            Node::List { offsets, .. } => format!("list({})", offsets.describe()),
            Node::Struct => "struct".to_string(),
            Node::Unsupported(name) => format!("unsupported({name})"),
        }
    }

    /// Names of every node kind in the tree (sorted, deduplicated).
    pub(crate) fn codec_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        self.collect_names(&mut names);
        names.sort();
        names.dedup();
        names
    }

    fn collect_names(&self, out: &mut Vec<String>) {
        out.push(match self {
            Node::Unsupported(name) => name.clone(),
            Node::Flat {
                compression: Some(c),
                ..
            } => format!("flat+{}", compression_name(*c)),
            other => other.name().to_string(),
        });
        for c in self.children() {
            c.collect_names(out);
        }
    }

    fn children(&self) -> Vec<&Node> {
        match self {
            Node::Nullable(Nullability::NoNull(v)) => vec![v],
            Node::Nullable(Nullability::SomeNull { validity, values }) => vec![validity, values],
            Node::FixedSizeList { items, .. } => vec![items],
            Node::Binary { indices, bytes, .. } => vec![indices, bytes],
            Node::Fsst { binary, .. } => vec![binary],
            Node::Dictionary { indices, items, .. } => vec![indices, items],
            Node::List { offsets, .. } => vec![offsets],
            _ => Vec::new(),
        }
    }

    /// The first unsupported node of the tree, if any.
    pub(crate) fn unsupported(&self) -> Option<&str> {
        match self {
            Node::Unsupported(name) => Some(name),
            other => other.children().into_iter().find_map(|c| c.unsupported()),
        }
    }
}

fn compression_name(c: FlatCompression) -> &'static str {
    match c {
        FlatCompression::Zstd => "zstd",
        FlatCompression::Lz4 => "lz4",
    }
}

/// A packed struct of fixed-width, never-null children (2.0 blob descriptors: two u64s) as
/// one `Flat` of the children's total width over the packed buffer: each row's bytes are the
/// children's bytes in order. Other packed structs stay unsupported.
fn resolve_packed(packed: &pb::PackedStruct, buffers: &[Range<u64>]) -> Result<Node> {
    let mut bits = 0u64;
    for child in &packed.inner {
        let flat = match &child.array_encoding {
            Some(E::Flat(f)) => f,
            Some(E::Nullable(nullable)) => match &nullable.nullability {
                Some(pb::nullable::Nullability::NoNulls(n)) => {
                    match n.values.as_deref().and_then(|v| v.array_encoding.as_ref()) {
                        Some(E::Flat(f)) => f,
                        _ => return Ok(Node::Unsupported("packed_struct".into())),
                    }
                }
                _ => return Ok(Node::Unsupported("packed_struct".into())),
            },
            _ => return Ok(Node::Unsupported("packed_struct".into())),
        };
        if flat.compression.is_some() || flat.bits_per_value % 8 != 0 {
            return Ok(Node::Unsupported("packed_struct".into()));
        }
        bits = bits
            .checked_add(flat.bits_per_value)
            .ok_or_else(|| Error::corrupt("packed struct width overflows"))?;
    }
    let buffer = packed
        .buffer
        .clone()
        .ok_or_else(|| Error::corrupt("packed struct has no buffer"))?;
    resolve_flat(
        &pb::Flat {
            bits_per_value: bits,
            buffer: Some(buffer),
            compression: None,
        },
        buffers,
    )
}

fn resolve_flat(flat: &pb::Flat, buffers: &[Range<u64>]) -> Result<Node> {
    let bits = flat.bits_per_value;
    crate::ensure_corrupt!(
        bits == 1 || (bits > 0 && bits.is_multiple_of(8) && bits <= 8 * 1024 * 1024),
        "flat encoding of {bits} bits per value"
    );
    let reference = flat
        .buffer
        .as_ref()
        .ok_or_else(|| Error::corrupt("flat encoding has no buffer"))?;
    match pb::BufferType::try_from(reference.buffer_type) {
        Ok(pb::BufferType::Page) => {}
        Ok(other) => {
            return Ok(Node::Unsupported(format!(
                "flat values in a {other:?} buffer"
            )))
        }
        Err(_) => {
            return Err(Error::corrupt(format!(
                "flat buffer type {} is not page, column or file",
                reference.buffer_type
            )))
        }
    }
    let index = reference.buffer_index as usize;
    let buffer = buffers.get(index).cloned().ok_or_else(|| {
        Error::corrupt(format!(
            "flat encoding names page buffer {index}, the page has {}",
            buffers.len()
        ))
    })?;
    let compression = match flat.compression.as_ref().map(|c| c.scheme.as_str()) {
        None | Some("none") | Some("") => None,
        Some("zstd") => Some(FlatCompression::Zstd),
        Some("lz4") => Some(FlatCompression::Lz4),
        Some(other) => {
            return Ok(Node::Unsupported(format!(
                "flat buffer compression {other:?}"
            )))
        }
    };
    Ok(Node::Flat {
        bits,
        buffer,
        compression,
    })
}

fn unsupported_name(encoding: &E) -> &'static str {
    match encoding {
        E::PackedStruct(_) => "packed_struct",
        E::Bitpacked(_) => "bitpacked",
        E::FixedSizeBinary(_) => "fixed_size_binary",
        E::BitpackedForNonNeg(_) => "bitpacked_for_non_neg",
        E::Constant(_) => "constant",
        E::InlineBitpacking(_) => "inline_bitpacking",
        E::OutOfLineBitpacking(_) => "out_of_line_bitpacking",
        E::Variable(_) => "variable",
        E::PackedStructFixedWidthMiniBlock(_) => "packed_struct_fixed_width_mini_block",
        E::Block(_) => "block",
        E::Rle(_) => "rle",
        E::GeneralMiniBlock(_) => "general_mini_block",
        E::ByteStreamSplit(_) => "byte_stream_split",
        E::Flat(_)
        | E::Nullable(_)
        | E::FixedSizeList(_)
        | E::List(_)
        | E::Struct(_)
        | E::Binary(_)
        | E::Fsst(_)
        | E::Dictionary(_) => "?",
    }
}
