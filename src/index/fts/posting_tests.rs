//! Posting-block decoding: blocks encoded here the way lance's `encoding.rs` lays them out
//! (BitPacker from lance-bitpacking), then decoded; and garbled blocks refused.

use lance_bitpacking::{BitPacker, BitPacker4x};

use super::*;

/// A full 128-doc block: score, first doc, width + sorted deltas, width + frequencies.
fn full_block(docs: &[u32], freqs: &[u32]) -> Vec<u8> {
    let p = BitPacker4x::new();
    let mut out = 1.5f32.to_le_bytes().to_vec();
    let mut buf = vec![0u8; 128 * 4];
    let bits = p.num_bits_sorted(docs[0], docs);
    let n = p.compress_sorted(docs[0], docs, &mut buf, bits);
    out.extend_from_slice(&docs[0].to_le_bytes());
    out.push(bits);
    out.extend_from_slice(&buf[..n]);
    let bits = p.num_bits(freqs);
    let n = p.compress(freqs, &mut buf, bits);
    out.push(bits);
    out.extend_from_slice(&buf[..n]);
    out
}

fn varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn varint_tail(docs: &[u32], freqs: &[u32]) -> Vec<u8> {
    let mut out = 0.5f32.to_le_bytes().to_vec();
    let mut prev = 0;
    for (i, d) in docs.iter().enumerate() {
        varint(&mut out, if i == 0 { *d } else { d - prev });
        prev = *d;
    }
    for f in freqs {
        varint(&mut out, *f);
    }
    out
}

fn layout(tail: TailCodec) -> PostingLayout {
    PostingLayout::new(128, tail).unwrap()
}

fn sample() -> (Vec<u32>, Vec<u32>) {
    let docs: Vec<u32> = (0..200).map(|i| i * 3 + 1).collect();
    let freqs: Vec<u32> = (0..200).map(|i| i % 7 + 1).collect();
    (docs, freqs)
}

#[test]
fn full_block_and_varint_tail_round_trip() {
    let (docs, freqs) = sample();
    let b0 = full_block(&docs[..128], &freqs[..128]);
    let b1 = varint_tail(&docs[128..], &freqs[128..]);
    let p = decode_postings(&[&b0, &b1], 200, 1000, layout(TailCodec::VarintDelta)).unwrap();
    assert_eq!(p.doc_ids, docs);
    assert_eq!(p.frequencies, freqs);
    assert_eq!(p.block_max, [1.5, 0.5], "each block's max score prefix");
}

#[test]
fn fixed32_tail_round_trips() {
    let (docs, freqs) = sample();
    let mut tail = 0f32.to_le_bytes().to_vec();
    for v in docs[..5].iter().chain(&freqs[..5]) {
        tail.extend_from_slice(&v.to_le_bytes());
    }
    let p = decode_postings(&[&tail], 5, 1000, layout(TailCodec::Fixed32)).unwrap();
    assert_eq!(p.doc_ids, &docs[..5]);
    assert_eq!(p.frequencies, &freqs[..5]);
}

fn corrupt(blocks: &[&[u8]], length: u32, num_docs: u32) -> String {
    match decode_postings(blocks, length, num_docs, layout(TailCodec::VarintDelta)) {
        Err(e @ Error::Corrupt { .. }) => e.to_string(),
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

#[test]
fn bit_width_over_32_is_corrupt() {
    let (docs, freqs) = sample();
    let mut b0 = full_block(&docs[..128], &freqs[..128]);
    b0[8] = 40; // the doc-id width byte
    assert!(corrupt(&[&b0], 128, 1000).contains("bit width 40"));
}

#[test]
fn doc_ids_past_the_partition_are_corrupt() {
    let (docs, freqs) = sample();
    let b1 = varint_tail(&docs[..10], &freqs[..10]);
    assert!(corrupt(&[&b1], 10, 20).contains("past the partition"));
}

#[test]
fn lengths_that_lie_are_corrupt() {
    let (docs, freqs) = sample();
    let b0 = full_block(&docs[..128], &freqs[..128]);
    // The length says two blocks, one is there.
    assert!(corrupt(&[&b0], 200, 1000).contains("blocks"));
    // More documents than the partition has.
    assert!(corrupt(&[&b0], 128, 100).contains("partition of 100"));
    // A truncated block.
    assert!(corrupt(&[&b0[..40]], 128, 1000).contains("ends before"));
    // Trailing bytes.
    let mut long = b0.clone();
    long.push(0);
    assert!(corrupt(&[&long], 128, 1000).contains("trailing"));
    // A tail with fewer docs than the length says.
    let b1 = varint_tail(&docs[..3], &freqs[..3]);
    assert!(corrupt(&[&b1], 5, 1000).contains("ends before"));
}

#[test]
fn descending_doc_ids_are_corrupt() {
    let b1 = varint_tail(&[5, 5], &[1, 1]);
    assert!(corrupt(&[&b1], 2, 1000).contains("not ascending"));
}

#[test]
fn block_size_other_than_128_or_256_is_refused() {
    assert!(PostingLayout::new(64, TailCodec::Fixed32).is_err());
}
