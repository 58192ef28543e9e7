//! The 2.3 generic unsigned block grammar (sparse positions and counts, generic Variable
//! offsets, indexed dictionary indices): u32/u64 values whose cardinality comes from the
//! container.
//!
//! Leaves: `Flat` (exact payload), `Constant` (no payload; without a scalar = the empty
//! sequence), `Range` (no payload, `start + step*i`, ≥ 2 values), `InlineBitpacking`,
//! `OutOfLineBitpacking` (0 < W < T). Composites (only at the top): `Delta` (leaf child holding
//! `n-1` deltas), `General` over plain `Flat` (exact size), `Rle` (`[u64 values_bytes][values]
//! [u32 run lengths]` when a child has a payload), `Dictionary` (`[u64 idx_bytes][u64
//! items_bytes][u32 indices][items]`, 1..=4096 items).

use bytes::Bytes;

use super::bitpacking::{decode_inline, decode_out_of_line};
use super::common::{
    check_output, read_u64, require_no_payload, require_payload, to_usize, variant,
    vec_with_capacity, words_to_u64,
};
use super::general::{self, Scheme};
use crate::error::{Error, Result};
use crate::lance::proto::encodings::compressive_encoding::Compression;
use crate::lance::proto::encodings::CompressiveEncoding;

/// Most items a compressive `Dictionary` may declare.
const MAX_DICTIONARY_ITEMS: u32 = 4096;

/// How the run count of a generic RLE is recovered.
#[derive(Debug, Clone, Copy)]
enum RunCount {
    Constant(u64),
    Range { start: u64, step: u64 },
    FlatValues,
    FlatRunLengths,
}

/// A validated node of the grammar.
#[derive(Debug)]
enum Node {
    Flat,
    Constant(Option<u64>),
    Range {
        start: u64,
        step: u64,
    },
    Inline,
    OutOfLine {
        width: u64,
    },
    Delta {
        base: u64,
        deltas: Box<Node>,
    },
    General {
        scheme: Scheme,
        inner: Box<Node>,
    },
    Rle {
        values: Box<Node>,
        lengths: Box<Node>,
        run_count: RunCount,
    },
    Dictionary {
        indices: Box<Node>,
        items: Box<Node>,
        num_items: u32,
    },
}

fn constant_scalar(value: &[u8], bits: u64) -> Result<u64> {
    crate::ensure_corrupt!(
        value.len() as u64 * 8 == bits,
        "Constant scalar has {} bytes, expected {}",
        value.len(),
        bits / 8
    );
    let mut buf = [0u8; 8];
    buf[..value.len()].copy_from_slice(value);
    Ok(u64::from_le_bytes(buf))
}

fn is_plain_flat(encoding: &CompressiveEncoding, bits: u64) -> bool {
    matches!(&encoding.compression, Some(Compression::Flat(f)) if f.bits_per_value == bits && f.data.is_none())
}

fn build(encoding: &CompressiveEncoding, bits: u64, top: bool) -> Result<Node> {
    let check_bits = |declared: u64, codec: &str| -> Result<()> {
        crate::ensure_corrupt!(
            declared == bits,
            "{codec} declares {declared}-bit values, expected {bits}"
        );
        Ok(())
    };
    Ok(match variant(encoding)? {
        Compression::Flat(flat) => {
            check_bits(flat.bits_per_value, "Flat")?;
            crate::ensure_corrupt!(
                flat.data.is_none(),
                "generic Flat cannot carry buffer compression"
            );
            Node::Flat
        }
        Compression::Constant(constant) => Node::Constant(
            constant
                .value
                .as_ref()
                .map(|v| constant_scalar(v, bits))
                .transpose()?,
        ),
        Compression::Range(range) => {
            check_bits(range.uncompressed_bits_per_value, "Range")?;
            Node::Range {
                start: range.start,
                step: range.step,
            }
        }
        Compression::InlineBitpacking(inline) => {
            check_bits(inline.uncompressed_bits_per_value, "InlineBitpacking")?;
            crate::ensure_corrupt!(
                inline.values.is_none(),
                "generic InlineBitpacking cannot carry buffer compression"
            );
            Node::Inline
        }
        Compression::OutOfLineBitpacking(ool) => {
            check_bits(ool.uncompressed_bits_per_value, "OutOfLineBitpacking")?;
            build_out_of_line(ool, bits)?
        }
        Compression::Delta(delta) if top => {
            check_bits(delta.uncompressed_bits_per_value, "Delta")?;
            let deltas = build(super::common::child(&delta.deltas, "Delta")?, bits, false)?;
            Node::Delta {
                base: delta.base,
                deltas: Box::new(deltas),
            }
        }
        Compression::General(g) if top => {
            let inner = super::common::child(&g.values, "General")?;
            crate::ensure_corrupt!(
                is_plain_flat(inner, bits),
                "generic General must wrap plain Flat {bits}-bit values"
            );
            Node::General {
                scheme: general::scheme_of(g.compression.as_ref())?,
                inner: Box::new(Node::Flat),
            }
        }
        Compression::Rle(rle) if top => build_rle(rle, bits)?,
        Compression::Dictionary(dict) if top => build_dictionary(dict, bits)?,
        other => {
            return Err(Error::corrupt(format!(
                "{} is not allowed at this position of a generic block sequence",
                super::describe::node_name(other)
            )))
        }
    })
}

/// `OutOfLineBitpacking` over plain Flat values of a width below `bits`.
fn build_out_of_line(
    ool: &crate::lance::proto::encodings::OutOfLineBitpacking,
    bits: u64,
) -> Result<Node> {
    let values = super::common::child(&ool.values, "OutOfLineBitpacking")?;
    let Some(Compression::Flat(flat)) = &values.compression else {
        return Err(Error::corrupt(
            "OutOfLineBitpacking values must be plain Flat",
        ));
    };
    let width = flat.bits_per_value;
    crate::ensure_corrupt!(
        flat.data.is_none() && width > 0 && width < bits,
        "OutOfLineBitpacking width {width} is invalid for {bits}-bit values"
    );
    Ok(Node::OutOfLine { width })
}

/// A top-level `Rle`: its two leaf children and how its run count is recovered.
fn build_rle(rle: &crate::lance::proto::encodings::Rle, bits: u64) -> Result<Node> {
    let values_enc = super::common::child(&rle.values, "Rle values")?;
    let lengths_enc = super::common::child(&rle.run_lengths, "Rle run lengths")?;
    let run_count = match &lengths_enc.compression {
        Some(Compression::Constant(c)) => {
            let scalar = c
                .value
                .as_ref()
                .ok_or_else(|| Error::corrupt("Rle constant run length has no value"))?;
            RunCount::Constant(constant_scalar(scalar, 32)?)
        }
        Some(Compression::Range(r)) if r.uncompressed_bits_per_value == 32 => RunCount::Range {
            start: r.start,
            step: r.step,
        },
        _ if is_plain_flat(values_enc, bits) => RunCount::FlatValues,
        _ if is_plain_flat(lengths_enc, 32) => RunCount::FlatRunLengths,
        _ => {
            return Err(Error::corrupt(
                "Rle needs metadata run lengths or one plain Flat child to know its run count",
            ))
        }
    };
    Ok(Node::Rle {
        values: Box::new(build(values_enc, bits, false)?),
        lengths: Box::new(build(lengths_enc, 32, false)?),
        run_count,
    })
}

/// A top-level `Dictionary` of 1..=[`MAX_DICTIONARY_ITEMS`] items with 32-bit indices.
fn build_dictionary(dict: &crate::lance::proto::encodings::Dictionary, bits: u64) -> Result<Node> {
    crate::ensure_corrupt!(
        (1..=MAX_DICTIONARY_ITEMS).contains(&dict.num_dictionary_items),
        "Dictionary declares {} items, expected 1..={MAX_DICTIONARY_ITEMS}",
        dict.num_dictionary_items
    );
    Ok(Node::Dictionary {
        indices: Box::new(build(
            super::common::child(&dict.indices, "Dictionary indices")?,
            32,
            false,
        )?),
        items: Box::new(build(
            super::common::child(&dict.items, "Dictionary items")?,
            bits,
            false,
        )?),
        num_items: dict.num_dictionary_items,
    })
}

fn node_has_payload(node: &Node) -> bool {
    match node {
        Node::Flat | Node::Inline | Node::OutOfLine { .. } | Node::General { .. } => true,
        Node::Constant(_) | Node::Range { .. } => false,
        Node::Delta { deltas, .. } => node_has_payload(deltas),
        Node::Rle {
            values, lengths, ..
        } => node_has_payload(values) || node_has_payload(lengths),
        Node::Dictionary { indices, items, .. } => {
            node_has_payload(indices) || node_has_payload(items)
        }
    }
}

/// The value width (32 or 64) a generic offsets encoding produces.
pub(super) fn infer_bits(encoding: &CompressiveEncoding) -> Result<u64> {
    fn infer(encoding: &CompressiveEncoding, depth: u8) -> Result<u64> {
        crate::ensure_corrupt!(depth <= 2, "generic block encoding is nested too deeply");
        Ok(match variant(encoding)? {
            Compression::Flat(f) => f.bits_per_value,
            Compression::Constant(c) => c
                .value
                .as_ref()
                .map(|v| v.len() as u64 * 8)
                .ok_or_else(|| Error::corrupt("typed Constant has no value"))?,
            Compression::Range(r) => r.uncompressed_bits_per_value,
            Compression::Delta(d) => d.uncompressed_bits_per_value,
            Compression::InlineBitpacking(b) => b.uncompressed_bits_per_value,
            Compression::OutOfLineBitpacking(b) => b.uncompressed_bits_per_value,
            Compression::General(g) => {
                infer(super::common::child(&g.values, "General")?, depth + 1)?
            }
            Compression::Rle(r) => infer(super::common::child(&r.values, "Rle")?, depth + 1)?,
            Compression::Dictionary(d) => {
                infer(super::common::child(&d.items, "Dictionary")?, depth + 1)?
            }
            other => {
                return Err(Error::corrupt(format!(
                    "cannot infer a fixed width from {}",
                    super::describe::node_name(other)
                )))
            }
        })
    }
    let bits = infer(encoding, 0)?;
    crate::ensure_corrupt!(
        matches!(bits, 32 | 64),
        "generic block values must be 32 or 64 bits, got {bits}"
    );
    Ok(bits)
}

/// Whether the encoding (validated for `bits`-bit values) has a payload buffer.
pub(super) fn has_payload(encoding: &CompressiveEncoding, bits: u64) -> Result<bool> {
    Ok(node_has_payload(&build(encoding, bits, true)?))
}

/// Decodes `num_values` values of width `bits` (32/64) widened to u64.
pub(super) fn decode(
    encoding: &CompressiveEncoding,
    payload: Option<Bytes>,
    num_values: usize,
    bits: u64,
) -> Result<Vec<u64>> {
    crate::ensure_corrupt!(
        matches!(bits, 32 | 64),
        "generic block values must be 32 or 64 bits, got {bits}"
    );
    let node = build(encoding, bits, true)?;
    check_output(num_values, 8, "generic block sequence")?;
    decode_node(&node, payload, num_values, bits)
}

/// Checks the cardinality contract of a top-level sequence: the empty sequence is exactly a
/// Constant without a scalar.
pub(super) fn check_cardinality(encoding: &CompressiveEncoding, num_values: usize) -> Result<()> {
    let empty_constant =
        matches!(&encoding.compression, Some(Compression::Constant(c)) if c.value.is_none());
    crate::ensure_corrupt!(
        empty_constant == (num_values == 0),
        "an empty sequence must be a Constant without value (cardinality {num_values})"
    );
    Ok(())
}

fn checked_range_last(bits: u64, start: u64, step: u64, num_values: usize) -> Result<u64> {
    crate::ensure_corrupt!(step > 0, "Range step must be positive");
    crate::ensure_corrupt!(
        num_values >= 2,
        "Range needs at least 2 values, got {num_values}"
    );
    let last = step
        .checked_mul(num_values as u64 - 1)
        .and_then(|d| start.checked_add(d))
        .ok_or_else(|| {
            Error::corrupt(format!(
                "Range start {start} step {step} overflows over {num_values} values"
            ))
        })?;
    crate::ensure_corrupt!(
        bits == 64 || last <= u32::MAX as u64,
        "Range last value {last} exceeds u32"
    );
    Ok(last)
}

fn decode_node(node: &Node, payload: Option<Bytes>, n: usize, bits: u64) -> Result<Vec<u64>> {
    match node {
        Node::Flat => {
            let payload = require_payload(payload, "Flat")?;
            let expected = n as u128 * (bits / 8) as u128;
            crate::ensure_corrupt!(
                payload.len() as u128 == expected,
                "Flat payload has {} bytes, expected {expected} for {n} values",
                payload.len()
            );
            words_to_u64(&payload, bits, "Flat")
        }
        Node::Constant(value) => {
            require_no_payload(&payload, "Constant")?;
            decode_constant(*value, n, bits)
        }
        Node::Range { start, step } => {
            require_no_payload(&payload, "Range")?;
            checked_range_last(bits, *start, *step, n)?;
            let mut out = vec_with_capacity(n, "Range")?;
            out.extend((0..n as u64).map(|i| start + step * i));
            Ok(out)
        }
        Node::Inline => {
            let payload = require_payload(payload, "InlineBitpacking")?;
            words_to_u64(&decode_inline(bits, &payload, n)?, bits, "InlineBitpacking")
        }
        Node::OutOfLine { width } => {
            let payload = require_payload(payload, "OutOfLineBitpacking")?;
            words_to_u64(
                &decode_out_of_line(bits, *width, &payload, n)?,
                bits,
                "OutOfLineBitpacking",
            )
        }
        Node::Delta { base, deltas } => {
            crate::ensure_corrupt!(n >= 2, "Delta needs at least 2 values, got {n}");
            crate::ensure_corrupt!(
                bits == 64 || *base <= u32::MAX as u64,
                "Delta base {base} exceeds u32"
            );
            let deltas = decode_node(deltas, payload, n - 1, bits)?;
            prefix_sums(*base, &deltas, n, bits)
        }
        Node::General { scheme, inner } => {
            let payload = require_payload(payload, "General")?;
            let expected = super::common::packed_len(n, bits, "General")?;
            let raw = general::decompress_exact(*scheme, &payload, expected)?;
            decode_node(inner, Some(Bytes::from(raw)), n, bits)
        }
        Node::Rle {
            values,
            lengths,
            run_count,
        } => decode_rle(values, lengths, *run_count, payload, n, bits),
        Node::Dictionary {
            indices,
            items,
            num_items,
        } => decode_dictionary(indices, items, *num_items, payload, n, bits),
    }
}

/// `n` copies of a Constant's scalar (absent exactly when `n == 0`).
fn decode_constant(value: Option<u64>, n: usize, bits: u64) -> Result<Vec<u64>> {
    crate::ensure_corrupt!(
        value.is_none() == (n == 0),
        "Constant scalar must be absent exactly when the sequence is empty"
    );
    crate::ensure_corrupt!(
        bits == 64 || value.is_none_or(|v| v <= u32::MAX as u64),
        "Constant exceeds u32"
    );
    let mut out = vec_with_capacity(n, "Constant")?;
    out.resize(n, value.unwrap_or(0));
    Ok(out)
}

/// `base` then its running sums with `deltas` (`n` values), none above the `bits` range.
fn prefix_sums(base: u64, deltas: &[u64], n: usize, bits: u64) -> Result<Vec<u64>> {
    let max = if bits == 32 {
        u32::MAX as u64
    } else {
        u64::MAX
    };
    let mut out = vec_with_capacity(n, "Delta")?;
    let mut current = base;
    out.push(current);
    for (i, delta) in deltas.iter().enumerate() {
        current = current
            .checked_add(*delta)
            .filter(|v| *v <= max)
            .ok_or_else(|| {
                Error::corrupt(format!("Delta prefix sum overflows at index {}", i + 1))
            })?;
        out.push(current);
    }
    Ok(out)
}

/// Splits a `[u64 first_size][first][rest]` frame, or checks there is none for metadata-only
/// children.
fn split_rle_frame(
    payload: Option<Bytes>,
    first: bool,
    second: bool,
) -> Result<(Option<Bytes>, Option<Bytes>)> {
    if !first && !second {
        require_no_payload(&payload, "metadata-only Rle")?;
        return Ok((None, None));
    }
    let payload = require_payload(payload, "Rle")?;
    let size = to_usize(read_u64(&payload, 0, "Rle frame")?, "Rle values size")?;
    let end = size
        .checked_add(8)
        .filter(|end| *end <= payload.len())
        .ok_or_else(|| {
            Error::corrupt(format!(
                "Rle values of {size} bytes overrun the {}-byte payload",
                payload.len()
            ))
        })?;
    crate::ensure_corrupt!(
        first || size == 0,
        "metadata-only Rle values child has {size} framed bytes"
    );
    crate::ensure_corrupt!(
        second || end == payload.len(),
        "metadata-only Rle run lengths child has framed bytes"
    );
    Ok((
        first.then(|| payload.slice(8..end)),
        second.then(|| payload.slice(end..)),
    ))
}

fn decode_rle(
    values: &Node,
    lengths: &Node,
    run_count: RunCount,
    payload: Option<Bytes>,
    n: usize,
    bits: u64,
) -> Result<Vec<u64>> {
    crate::ensure_corrupt!(n > 0, "generic Rle cannot hold an empty sequence");
    let (values_payload, lengths_payload) =
        split_rle_frame(payload, node_has_payload(values), node_has_payload(lengths))?;
    let runs = match run_count {
        RunCount::Constant(length) => {
            crate::ensure_corrupt!(
                length > 0 && (n as u64).is_multiple_of(length),
                "Rle constant run length {length} does not divide {n} values"
            );
            n / length as usize
        }
        RunCount::Range { start, step } => range_run_count(start, step, n as u64)?,
        RunCount::FlatValues => flat_run_count(values_payload.as_ref(), bits, n)?,
        RunCount::FlatRunLengths => flat_run_count(lengths_payload.as_ref(), 32, n)?,
    };
    crate::ensure_corrupt!(runs > 0, "Rle describes zero runs");
    let values = decode_node(values, values_payload, runs, bits)?;
    let lengths = decode_node(lengths, lengths_payload, runs, 32)?;
    let mut total = 0u64;
    for (i, length) in lengths.iter().enumerate() {
        crate::ensure_corrupt!(*length > 0, "Rle run {i} has length 0");
        total += length;
    }
    crate::ensure_corrupt!(
        total == n as u64,
        "Rle run lengths sum to {total}, expected {n}"
    );
    let mut out = vec_with_capacity(n, "Rle")?;
    for (value, length) in values.iter().zip(&lengths) {
        out.extend(std::iter::repeat_n(*value, *length as usize));
    }
    Ok(out)
}

fn flat_run_count(payload: Option<&Bytes>, bits: u64, max_runs: usize) -> Result<usize> {
    let payload = payload.ok_or_else(|| Error::corrupt("Rle run count needs a Flat payload"))?;
    let width = (bits / 8) as usize;
    crate::ensure_corrupt!(
        payload.len() % width == 0,
        "Rle Flat child has {} bytes, not a multiple of {width}",
        payload.len()
    );
    let runs = payload.len() / width;
    crate::ensure_corrupt!(
        runs <= max_runs,
        "Rle has {runs} runs for {max_runs} values"
    );
    Ok(runs)
}

/// Number of runs k with `sum_{i<k} (start + step*i) == n`.
fn range_run_count(start: u64, step: u64, n: u64) -> Result<usize> {
    crate::ensure_corrupt!(
        start > 0 && step > 0,
        "Rle range run lengths must be positive"
    );
    let sum = |k: u64| -> u128 {
        let k = k as u128;
        let span = (k - 1)
            .saturating_mul(step as u128)
            .saturating_add(2 * start as u128);
        k.saturating_mul(span) / 2
    };
    let (mut low, mut high) = (1u64, n);
    while low <= high {
        let mid = low + (high - low) / 2;
        match sum(mid).cmp(&(n as u128)) {
            std::cmp::Ordering::Less => low = mid + 1,
            std::cmp::Ordering::Greater => high = mid - 1,
            std::cmp::Ordering::Equal => return to_usize(mid, "Rle run count"),
        }
    }
    Err(Error::corrupt(format!(
        "Rle range run lengths start {start} step {step} cannot sum to {n}"
    )))
}

fn decode_dictionary(
    indices: &Node,
    items: &Node,
    num_items: u32,
    payload: Option<Bytes>,
    n: usize,
    bits: u64,
) -> Result<Vec<u64>> {
    let (has_indices, has_items) = (node_has_payload(indices), node_has_payload(items));
    let (indices_payload, items_payload) = if !has_indices && !has_items {
        require_no_payload(&payload, "metadata-only Dictionary")?;
        (None, None)
    } else {
        let payload = require_payload(payload, "Dictionary")?;
        let indices_size = to_usize(
            read_u64(&payload, 0, "Dictionary frame")?,
            "Dictionary indices size",
        )?;
        let items_size = to_usize(
            read_u64(&payload, 8, "Dictionary frame")?,
            "Dictionary items size",
        )?;
        let items_start = 16usize.checked_add(indices_size);
        let end = items_start.and_then(|s| s.checked_add(items_size));
        crate::ensure_corrupt!(
            end == Some(payload.len()),
            "Dictionary frame describes {end:?} bytes, payload has {}",
            payload.len()
        );
        let items_start = 16 + indices_size;
        crate::ensure_corrupt!(
            has_indices || indices_size == 0,
            "metadata-only Dictionary indices have framed bytes"
        );
        crate::ensure_corrupt!(
            has_items || items_size == 0,
            "metadata-only Dictionary items have framed bytes"
        );
        (
            has_indices.then(|| payload.slice(16..items_start)),
            has_items.then(|| payload.slice(items_start..)),
        )
    };
    let indices = decode_node(indices, indices_payload, n, 32)?;
    let items = decode_node(items, items_payload, num_items as usize, bits)?;
    let mut out = vec_with_capacity(n, "Dictionary")?;
    for (position, index) in indices.iter().enumerate() {
        let value = items.get(*index as usize).ok_or_else(|| {
            Error::corrupt(format!("Dictionary index {index} at position {position} is out of range for {num_items} items"))
        })?;
        out.push(*value);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lance::proto::encodings::*;

    fn enc(c: Compression) -> CompressiveEncoding {
        CompressiveEncoding {
            compression: Some(c),
        }
    }
    fn flat(bits: u64) -> CompressiveEncoding {
        enc(Compression::Flat(Flat {
            bits_per_value: bits,
            data: None,
        }))
    }
    fn range(bits: u64, start: u64, step: u64) -> CompressiveEncoding {
        enc(Compression::Range(crate::lance::proto::encodings::Range {
            uncompressed_bits_per_value: bits,
            start,
            step,
        }))
    }
    fn constant(value: Option<&[u8]>) -> CompressiveEncoding {
        enc(Compression::Constant(Constant {
            value: value.map(Bytes::copy_from_slice),
        }))
    }
    fn delta(base: u64, child: CompressiveEncoding) -> CompressiveEncoding {
        enc(Compression::Delta(Delta {
            uncompressed_bits_per_value: 64,
            base,
            deltas: Some(Box::new(child)),
        }))
    }
    fn le64(values: &[u64]) -> Bytes {
        Bytes::from(
            values
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn doc_example_sparse_positions_and_counts() {
        // non_empty_positions Delta(base 2, Range(2,2)) = [2,4,8]; counts Range(1,1) = [1,2,3].
        let positions = delta(2, range(64, 2, 2));
        assert!(!has_payload(&positions, 64).unwrap());
        assert_eq!(decode(&positions, None, 3, 64).unwrap(), vec![2, 4, 8]);
        assert_eq!(
            decode(&range(64, 1, 1), None, 3, 64).unwrap(),
            vec![1, 2, 3]
        );
        // Constant with value 1 (single null slot), and the empty sequence.
        assert_eq!(
            decode(&constant(Some(&1u64.to_le_bytes())), None, 1, 64).unwrap(),
            vec![1]
        );
        assert!(decode(&constant(None), None, 0, 64).unwrap().is_empty());
        assert!(decode(&constant(None), None, 2, 64).is_err());
        assert!(check_cardinality(&constant(None), 0).is_ok());
        assert!(check_cardinality(&range(64, 1, 1), 0).is_err());
    }

    #[test]
    fn flat_delta_and_range_validation() {
        assert_eq!(
            decode(&flat(64), Some(le64(&[5, 9])), 2, 64).unwrap(),
            vec![5, 9]
        );
        assert!(decode(&flat(64), Some(le64(&[5, 9])), 3, 64).is_err());
        assert!(decode(&flat(32), Some(le64(&[5])), 2, 64).is_err());
        assert_eq!(
            decode(&delta(10, flat(64)), Some(le64(&[1, 2])), 3, 64).unwrap(),
            vec![10, 11, 13]
        );
        assert!(decode(&delta(u64::MAX, flat(64)), Some(le64(&[1])), 2, 64).is_err());
        assert!(decode(&range(64, 0, 0), None, 3, 64).is_err());
        assert!(decode(&range(64, u64::MAX, 1), None, 2, 64).is_err());
        assert!(decode(&range(64, 0, 1), None, 1, 64).is_err());
        // Nested composites are rejected.
        assert!(decode(&delta(0, delta(0, flat(64))), Some(le64(&[1])), 3, 64).is_err());
    }

    #[test]
    fn general_over_flat_and_rle_and_dictionary() {
        let raw: Vec<u8> = le64(&[3, 1, 4, 1]).to_vec();
        let mut framed = (raw.len() as u32).to_le_bytes().to_vec();
        framed.extend(lz4_flex::block::compress(&raw));
        let general = enc(Compression::General(General {
            compression: Some(BufferCompression {
                scheme: 1,
                level: None,
            }),
            values: Some(Box::new(flat(64))),
        }));
        assert_eq!(
            decode(&general, Some(Bytes::from(framed)), 4, 64).unwrap(),
            vec![3, 1, 4, 1]
        );

        // Rle(values Flat64 [7, 9], run lengths Flat32 [2, 3]).
        let rle = enc(Compression::Rle(Rle {
            values: Some(Box::new(flat(64))),
            run_lengths: Some(Box::new(flat(32))),
        }));
        let mut payload = 16u64.to_le_bytes().to_vec();
        payload.extend(le64(&[7, 9]));
        payload.extend([2u32, 3].iter().flat_map(|v| v.to_le_bytes()));
        assert_eq!(
            decode(&rle, Some(Bytes::from(payload.clone())), 5, 64).unwrap(),
            vec![7, 7, 9, 9, 9]
        );
        assert!(decode(&rle, Some(Bytes::from(payload)), 6, 64).is_err());

        // Dictionary(indices Flat32, items Flat64, 2 items).
        let dict = enc(Compression::Dictionary(Dictionary {
            indices: Some(Box::new(flat(32))),
            items: Some(Box::new(flat(64))),
            num_dictionary_items: 2,
        }));
        let mut payload = 12u64.to_le_bytes().to_vec();
        payload.extend(16u64.to_le_bytes());
        payload.extend([1u32, 0, 1].iter().flat_map(|v| v.to_le_bytes()));
        payload.extend(le64(&[100, 200]));
        assert_eq!(
            decode(&dict, Some(Bytes::from(payload.clone())), 3, 64).unwrap(),
            vec![200, 100, 200]
        );
        let mut bad = payload;
        bad[16] = 2; // index out of range
        assert!(decode(&dict, Some(Bytes::from(bad)), 3, 64).is_err());
    }

    #[test]
    fn rle_with_metadata_run_lengths() {
        // Values Flat64 [1, 2, 3], run lengths Range(32, 1, 1) = [1, 2, 3] → 6 values.
        let rle = enc(Compression::Rle(Rle {
            values: Some(Box::new(flat(64))),
            run_lengths: Some(Box::new(range(32, 1, 1))),
        }));
        let mut payload = 24u64.to_le_bytes().to_vec();
        payload.extend(le64(&[1, 2, 3]));
        assert_eq!(
            decode(&rle, Some(Bytes::from(payload)), 6, 64).unwrap(),
            vec![1, 2, 2, 3, 3, 3]
        );
        assert!(range_run_count(1, 1, 7).is_err());
    }
}
