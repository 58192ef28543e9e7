//! Fuzz body `fts_postings`: the INVERTED index's posting-block and token-dictionary
//! decoders on arbitrary bytes.
//!
//! Input: byte 0 picks the layout (bit 0: 256-doc blocks, bit 1: the `fixed32_v1` tail,
//! bit 2: decode the rest as an FST token dictionary instead); bytes 1..5 the posting
//! length (u32 LE), 5..9 the partition's documents (u32 LE); then blocks, each a u16 LE
//! length and that many bytes. A successful decode must return `length` postings, doc ids
//! ascending below the document count.

use crate::index::fts::posting::{decode_postings, PostingLayout, TailCodec};
use crate::index::fts::tokens::TokenSet;

/// Decode `data` as described in the module docs; never panics.
pub fn fts_postings(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    if flags & 4 != 0 {
        if let Ok(map) = fst::Map::new(rest.to_vec()) {
            let set = TokenSet::Fst(map);
            for token in ["a", "the", "zebra", "", "\u{10ffff}"] {
                let _ = set.get(token, 1 << 20);
            }
        }
        return;
    }
    if rest.len() < 8 {
        return;
    }
    let length = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
    let num_docs = u32::from_le_bytes([rest[4], rest[5], rest[6], rest[7]]);
    let mut blocks: Vec<&[u8]> = Vec::new();
    let mut body = &rest[8..];
    while body.len() >= 2 {
        let n = usize::from(u16::from_le_bytes([body[0], body[1]])).min(body.len() - 2);
        blocks.push(&body[2..2 + n]);
        body = &body[2 + n..];
    }
    let block_size = if flags & 1 != 0 { 256 } else { 128 };
    let tail = if flags & 2 != 0 {
        TailCodec::Fixed32
    } else {
        TailCodec::VarintDelta
    };
    let Ok(layout) = PostingLayout::new(block_size, tail) else {
        return;
    };
    if let Ok(p) = decode_postings(&blocks, length, num_docs, layout) {
        assert_eq!(p.doc_ids.len(), length as usize);
        assert_eq!(p.frequencies.len(), length as usize);
        assert!(p.doc_ids.windows(2).all(|w| w[0] < w[1]));
        assert!(p.doc_ids.iter().all(|d| *d < num_docs));
    }
}
