//! Human-readable descriptions of compression trees and codec coverage names.

use super::general::scheme_name;
use crate::lance::proto::encodings::compressive_encoding::Compression;
use crate::lance::proto::encodings::{BufferCompression, CompressiveEncoding};

/// Short name of a codec variant.
pub(super) fn node_name(compression: &Compression) -> &'static str {
    match compression {
        Compression::Flat(_) => "Flat",
        Compression::Variable(_) => "Variable",
        Compression::Constant(_) => "Constant",
        Compression::OutOfLineBitpacking(_) => "OutOfLineBitpacking",
        Compression::InlineBitpacking(_) => "InlineBitpacking",
        Compression::Fsst(_) => "Fsst",
        Compression::Dictionary(_) => "Dictionary",
        Compression::Rle(_) => "Rle",
        Compression::ByteStreamSplit(_) => "ByteStreamSplit",
        Compression::General(_) => "General",
        Compression::FixedSizeList(_) => "FixedSizeList",
        Compression::PackedStruct(_) => "PackedStruct",
        Compression::VariablePackedStruct(_) => "VariablePackedStruct",
        Compression::Range(_) => "Range",
        Compression::Delta(_) => "Delta",
    }
}

fn child_text(child: &Option<Box<CompressiveEncoding>>) -> String {
    child
        .as_deref()
        .map(describe)
        .unwrap_or_else(|| "<missing>".to_string())
}

fn buffer_suffix(compression: &Option<BufferCompression>) -> String {
    compression
        .as_ref()
        .map(|c| format!(", {}", scheme_name(Some(c))))
        .unwrap_or_default()
}

/// The compression tree as text, e.g. `General(zstd, Variable(offsets: Flat(32)))`.
pub(crate) fn describe(encoding: &CompressiveEncoding) -> String {
    let Some(compression) = &encoding.compression else {
        return "<unset>".to_string();
    };
    match compression {
        Compression::Flat(f) => format!("Flat({}{})", f.bits_per_value, buffer_suffix(&f.data)),
        Compression::Variable(v) => format!(
            "Variable(offsets: {}{})",
            child_text(&v.offsets),
            buffer_suffix(&v.values)
        ),
        Compression::Constant(c) => match &c.value {
            Some(v) => format!("Constant({} bytes)", v.len()),
            None => "Constant(none)".to_string(),
        },
        Compression::OutOfLineBitpacking(b) => {
            format!(
                "OutOfLineBitpacking({}, {})",
                b.uncompressed_bits_per_value,
                child_text(&b.values)
            )
        }
        Compression::InlineBitpacking(b) => {
            format!(
                "InlineBitpacking({}{})",
                b.uncompressed_bits_per_value,
                buffer_suffix(&b.values)
            )
        }
        Compression::Fsst(f) => format!("Fsst({})", child_text(&f.values)),
        Compression::Dictionary(d) => format!(
            "Dictionary(indices: {}, items: {}, {} items)",
            child_text(&d.indices),
            child_text(&d.items),
            d.num_dictionary_items
        ),
        Compression::Rle(r) => format!(
            "Rle(values: {}, run_lengths: {})",
            child_text(&r.values),
            child_text(&r.run_lengths)
        ),
        Compression::ByteStreamSplit(b) => format!("ByteStreamSplit({})", child_text(&b.values)),
        Compression::General(g) => format!(
            "General({}, {})",
            scheme_name(g.compression.as_ref()),
            child_text(&g.values)
        ),
        Compression::FixedSizeList(f) => format!(
            "FixedSizeList({}{}, {})",
            f.items_per_value,
            if f.has_validity { ", nullable" } else { "" },
            child_text(&f.values)
        ),
        Compression::PackedStruct(p) => format!(
            "PackedStruct({:?}, {})",
            p.bits_per_value,
            child_text(&p.values)
        ),
        Compression::VariablePackedStruct(v) => describe_variable_packed(v),
        Compression::Range(r) => {
            format!(
                "Range({}, start {}, step {})",
                r.uncompressed_bits_per_value, r.start, r.step
            )
        }
        Compression::Delta(d) => format!(
            "Delta({}, base {}, {})",
            d.uncompressed_bits_per_value,
            d.base,
            child_text(&d.deltas)
        ),
    }
}

fn describe_variable_packed(v: &crate::lance::proto::encodings::VariablePackedStruct) -> String {
    let fields: Vec<String> = v
        .fields
        .iter()
        .map(|f| {
            f.value
                .as_ref()
                .map(describe)
                .unwrap_or_else(|| "<missing>".into())
        })
        .collect();
    format!("VariablePackedStruct([{}])", fields.join(", "))
}

/// Names of every codec node of the tree, pre-order ("General(lz4)" for general compression).
pub(crate) fn codec_names(encoding: &CompressiveEncoding) -> Vec<String> {
    let mut names = Vec::new();
    collect(encoding, &mut names);
    names
}

fn collect(encoding: &CompressiveEncoding, names: &mut Vec<String>) {
    let Some(compression) = &encoding.compression else {
        return;
    };
    let name = match compression {
        Compression::General(g) => format!("General({})", scheme_name(g.compression.as_ref())),
        other => node_name(other).to_string(),
    };
    names.push(name);
    let mut visit = |child: &Option<Box<CompressiveEncoding>>| {
        if let Some(child) = child.as_deref() {
            collect(child, names);
        }
    };
    match compression {
        Compression::Flat(_)
        | Compression::Constant(_)
        | Compression::InlineBitpacking(_)
        | Compression::Range(_) => {}
        Compression::Variable(v) => visit(&v.offsets),
        Compression::OutOfLineBitpacking(b) => visit(&b.values),
        Compression::Fsst(f) => visit(&f.values),
        Compression::Dictionary(d) => {
            visit(&d.indices);
            visit(&d.items);
        }
        Compression::Rle(r) => {
            visit(&r.values);
            visit(&r.run_lengths);
        }
        Compression::ByteStreamSplit(b) => visit(&b.values),
        Compression::General(g) => visit(&g.values),
        Compression::FixedSizeList(f) => visit(&f.values),
        Compression::PackedStruct(p) => visit(&p.values),
        Compression::VariablePackedStruct(v) => {
            for field in &v.fields {
                if let Some(value) = &field.value {
                    collect(value, names);
                }
            }
        }
        Compression::Delta(d) => visit(&d.deltas),
    }
}
