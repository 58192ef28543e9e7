//! A full-text match query over an INVERTED index, with pylance 14.0.2's semantics and
//! scores: the query text tokenized by the index's analyzer, each partition's postings of
//! those tokens, BM25 with statistics over every partition of every segment (and the rows
//! of fragments no segment covers, scanned and tokenized unless the caller asks for the
//! index only), deleted rows and fragments left out, best `k` first.
//!
//! Waves: open every segment (metadata, partition files, token dictionaries) while the
//! deletion files load; the postings of the query's tokens in every partition (and the
//! unindexed rows' text); the lengths and row ids of the scored documents.

use std::collections::{BTreeMap, HashMap};

use arrow_array::cast::AsArray;
use roaring::RoaringBitmap;

use super::files::{open_segment, FtsSegment, Partition};
use super::params::{build_analyzer, tokenize};
use super::read::{read_docs, read_postings, TermPostings};
use super::score::Corpus;
use crate::error::{Error, Result};
use crate::index::kind::row_ids::resolve_rows;
use crate::io::IoStats;
use crate::lance::dataset::take::take_rows;
use crate::lance::dataset::{DatasetVersion, DeletionVector, IndexSegment};

/// Most distinct tokens a query may have.
pub(crate) const MAX_QUERY_TOKENS: usize = 1024;

/// How the query's tokens combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Operator {
    /// A document matches with any token.
    #[default]
    Or,
    /// A document matches only with every token.
    And,
}

/// One full-text search.
#[derive(Debug, Clone)]
pub(crate) struct SearchRequest {
    /// Query text.
    pub(crate) text: String,
    /// The indexed column.
    pub(crate) column: String,
    /// OR / AND.
    pub(crate) operator: Operator,
    /// Best `k` rows (all matches when `None`).
    pub(crate) k: Option<usize>,
    /// Skip fragments no segment covers instead of scanning them.
    pub(crate) index_only: bool,
}

/// One matching row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Hit {
    /// Row address.
    pub(crate) row_address: u64,
    /// BM25 score.
    pub(crate) score: f32,
}

/// The answer and what it read.
#[derive(Debug, Clone)]
pub(crate) struct SearchOutput {
    /// Best first (ties by ascending address).
    pub(crate) hits: Vec<Hit>,
    /// What the search did (index, segments, tokens, statistics).
    pub(crate) explain: serde_json::Value,
}

/// Run `request` on `dataset`.
pub(crate) async fn search(
    dataset: &DatasetVersion,
    request: &SearchRequest,
    stats: &IoStats,
) -> Result<SearchOutput> {
    if request.text.trim().is_empty() {
        return Err(Error::InvalidArgument(
            "full-text query text is empty".into(),
        ));
    }
    let (name, segments) = inverted_segments(dataset, &request.column)?;
    let current = dataset.manifest().fragment_ids();
    let covered: Vec<(IndexSegment, RoaringBitmap)> = segments
        .into_iter()
        .map(|s| {
            let c = s.fragment_bitmap.clone().unwrap_or_default() & &current;
            (s, c)
        })
        .filter(|(_, c)| !c.is_empty())
        .collect();
    let mut all_covered = RoaringBitmap::new();
    for (_, c) in &covered {
        all_covered |= c;
    }
    let frags: Vec<_> = dataset.manifest().fragments.iter().collect();
    let opens = covered.iter().map(|(s, _)| open_segment(dataset, s, stats));
    let (opened, deletions) = futures::try_join!(
        futures::future::try_join_all(opens),
        dataset.deletion_vectors(&frags, stats)
    )?;
    let params = match opened.first() {
        Some(s) => s.params.clone(),
        None => Default::default(),
    };
    let mut analyzer = build_analyzer(&params)?;
    let tokens = distinct_tokens(&mut analyzer, &request.text)?;
    let unindexed: Vec<u64> = current
        .iter()
        .filter(|f| !all_covered.contains(*f))
        .map(u64::from)
        .collect();
    let scan_unindexed = !request.index_only && !unindexed.is_empty();

    // Wave 2: postings of every partition, and the unindexed rows' text.
    let postings = futures::future::try_join_all(opened.iter().flat_map(|seg| {
        seg.partitions
            .iter()
            .map(|p| partition_postings(p, &tokens, stats))
    }));
    let flat = async {
        if scan_unindexed {
            scan_fragments(
                dataset,
                &request.column,
                &unindexed,
                &mut build_analyzer(&params)?,
                &tokens,
                stats,
            )
            .await
        } else {
            Ok(FlatDocs::default())
        }
    };
    let (postings, flat) = futures::try_join!(postings, flat)?;

    let mut corpus = Corpus {
        token_docs: vec![0; tokens.len()],
        ..Default::default()
    };
    for seg in &opened {
        for p in &seg.partitions {
            corpus.num_docs += p.num_docs;
            corpus.total_tokens += p.total_tokens;
        }
    }
    for per_part in &postings {
        for (t, tp) in per_part.iter().enumerate() {
            corpus.token_docs[t] += tp.docs.len() as u64;
        }
    }
    // pylance scores indexed rows with the index's statistics, and the rows it scans with
    // those plus the scanned rows' (its `MemBM25Scorer` updated by the flat search).
    let weights: Vec<f32> = (0..tokens.len()).map(|t| corpus.query_weight(t)).collect();
    let mut flat_corpus = corpus.clone();
    flat_corpus.num_docs += flat.num_docs;
    flat_corpus.total_tokens += flat.total_tokens;
    for (t, n) in flat.token_docs.iter().enumerate() {
        flat_corpus.token_docs[t] += n;
    }
    let flat_weights: Vec<f32> = (0..tokens.len())
        .map(|t| flat_corpus.query_weight(t))
        .collect();

    // Wave 3: lengths and row ids of the matching documents.
    let parts: Vec<(&FtsSegment, &Partition)> = opened
        .iter()
        .flat_map(|s| s.partitions.iter().map(move |p| (s, p)))
        .collect();
    let scored =
        futures::future::try_join_all(parts.iter().zip(&postings).map(|((seg, part), tp)| {
            let candidates = match_docs(tp, tokens.len(), request.operator);
            score_partition(seg, part, candidates, &corpus, &weights, stats)
        }))
        .await?;

    let mut hits = Vec::new();
    for ((seg, _), part_hits) in parts.iter().zip(scored) {
        let coverage = covered
            .iter()
            .find(|(s, _)| s.uuid == seg.segment.uuid)
            .map(|(_, c)| c);
        let part_hits = resolve_rows(dataset, coverage, &deletions, part_hits, |h| {
            &mut h.row_address
        });
        for h in part_hits {
            if is_live(h.row_address, coverage, &seg.deleted_fragments, &deletions) {
                hits.push(h);
            }
        }
    }
    for (address, freqs, len) in &flat.docs {
        if len == &0 || !matches_operator(freqs, request.operator) {
            continue;
        }
        let score = flat_corpus.score(freqs, *len, &flat_weights);
        if score > 0.0 {
            hits.push(Hit {
                row_address: *address,
                score,
            });
        }
    }
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.row_address.cmp(&b.row_address))
    });
    if let Some(k) = request.k {
        hits.truncate(k);
    }
    let explain = explain_json(
        &name,
        &opened,
        &tokens,
        &flat_corpus,
        &unindexed,
        scan_unindexed,
    );
    Ok(SearchOutput { hits, explain })
}

/// The INVERTED index segments on `column` (the first index by name when there are several).
fn inverted_segments(
    dataset: &DatasetVersion,
    column: &str,
) -> Result<(String, Vec<IndexSegment>)> {
    let manifest = dataset.manifest();
    let field = manifest
        .schema
        .field_by_path(column)
        .ok_or_else(|| Error::InvalidArgument(format!("no column {column:?}")))?;
    let mut name = None;
    let mut out = Vec::new();
    for s in manifest
        .indices
        .iter()
        .filter(|s| s.fields == [field.id] && is_inverted(s))
    {
        let n = name.get_or_insert_with(|| s.name.clone());
        if *n == s.name {
            out.push(s.clone());
        }
    }
    match name {
        Some(n) => Ok((n, out)),
        None => Err(Error::InvalidArgument(format!(
            "column {column:?} has no INVERTED (full-text) index"
        ))),
    }
}

/// Whether `s` is an INVERTED index segment.
fn is_inverted(s: &IndexSegment) -> bool {
    match s.type_name() {
        Some(t) => t.to_ascii_lowercase().contains("inverted"),
        None => s
            .files
            .iter()
            .any(|f| f.path == "metadata.lance" || f.path == "invert.lance"),
    }
}

/// The distinct tokens of `text` in first-seen order (the AND and the score count each once).
fn distinct_tokens(
    analyzer: &mut lance_tokenizer::TextAnalyzer,
    text: &str,
) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for (t, _) in tokenize(analyzer, text) {
        if !out.contains(&t) {
            if out.len() == MAX_QUERY_TOKENS {
                return Err(Error::InvalidArgument(format!(
                    "full-text query has more than {MAX_QUERY_TOKENS} distinct tokens"
                )));
            }
            out.push(t);
        }
    }
    Ok(out)
}

/// The postings of `tokens` in `part` (empty for tokens it lacks).
async fn partition_postings(
    part: &Partition,
    tokens: &[String],
    stats: &IoStats,
) -> Result<Vec<TermPostings>> {
    let mut ids = Vec::new();
    let mut slots = Vec::new();
    for (t, token) in tokens.iter().enumerate() {
        let id = part
            .tokens
            .get(token, part.num_tokens)
            .map_err(|e| e.at(part.invert.path().as_ref(), None))?;
        if let Some(id) = id {
            ids.push(id);
            slots.push(t);
        }
    }
    let read = read_postings(part, &ids, stats).await?;
    let mut out = vec![TermPostings::default(); tokens.len()];
    for (slot, p) in slots.into_iter().zip(read) {
        out[slot] = p;
    }
    Ok(out)
}

/// Document key → frequency of each query token, for the documents `operator` admits.
fn match_docs(
    postings: &[TermPostings],
    num_tokens: usize,
    operator: Operator,
) -> BTreeMap<u64, Vec<u32>> {
    let mut docs: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
    for (t, p) in postings.iter().enumerate() {
        for (d, f) in p.docs.iter().zip(&p.frequencies) {
            docs.entry(*d).or_insert_with(|| vec![0; num_tokens])[t] = *f;
        }
    }
    docs.retain(|_, freqs| matches_operator(freqs, operator));
    docs
}

fn matches_operator(freqs: &[u32], operator: Operator) -> bool {
    match operator {
        Operator::Or => freqs.iter().any(|f| *f > 0),
        Operator::And => !freqs.is_empty() && freqs.iter().all(|f| *f > 0),
    }
}

/// Score `candidates` of `part` (reads their lengths and row ids).
async fn score_partition(
    seg: &FtsSegment,
    part: &Partition,
    candidates: BTreeMap<u64, Vec<u32>>,
    corpus: &Corpus,
    weights: &[f32],
    stats: &IoStats,
) -> Result<Vec<Hit>> {
    let _ = seg;
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    let keys: Vec<u64> = candidates.keys().copied().collect();
    let (row_ids, lengths) = read_docs(part, &keys, stats).await?;
    let mut out = Vec::with_capacity(keys.len());
    for ((freqs, row_id), len) in candidates.values().zip(row_ids).zip(lengths) {
        let score = corpus.score(freqs, len, weights);
        out.push(Hit {
            row_address: row_id,
            score,
        });
    }
    Ok(out)
}

/// Whether the row at `address` is still in the dataset and the segment still covers it.
fn is_live(
    address: u64,
    coverage: Option<&RoaringBitmap>,
    deleted_fragments: &RoaringBitmap,
    deletions: &HashMap<u64, std::sync::Arc<DeletionVector>>,
) -> bool {
    let fragment = address >> 32;
    let Ok(f32id) = u32::try_from(fragment) else {
        return false;
    };
    if !coverage.is_some_and(|c| c.contains(f32id)) || deleted_fragments.contains(f32id) {
        return false;
    }
    match deletions.get(&fragment) {
        Some(dv) => !dv.0.contains(address as u32),
        None => true,
    }
}

/// The unindexed rows, tokenized: per row its address, query-token frequencies and length.
#[derive(Debug, Default)]
struct FlatDocs {
    num_docs: u64,
    total_tokens: u64,
    token_docs: Vec<u64>,
    docs: Vec<(u64, Vec<u32>, u32)>,
}

/// Read and tokenize `column` of `fragments` (live rows).
async fn scan_fragments(
    dataset: &DatasetVersion,
    column: &str,
    fragments: &[u64],
    analyzer: &mut lance_tokenizer::TextAnalyzer,
    tokens: &[String],
    stats: &IoStats,
) -> Result<FlatDocs> {
    let manifest = dataset.manifest();
    let mut addresses = Vec::new();
    for id in fragments {
        let f = manifest
            .fragment(*id)
            .ok_or_else(|| Error::corrupt(format!("fragment {id} vanished")))?;
        addresses.extend((0..f.physical_rows).map(|o| (id << 32) | o));
    }
    let batch = take_rows(dataset, &addresses, &[column.to_string()], stats).await?;
    let rows = batch
        .column(0)
        .as_primitive::<arrow_array::types::UInt64Type>()
        .clone();
    let text = batch.column(1);
    let mut out = FlatDocs {
        token_docs: vec![0; tokens.len()],
        ..Default::default()
    };
    let values: Vec<Option<&str>> = match (text.as_string_opt::<i32>(), text.as_string_opt::<i64>())
    {
        (Some(s), _) => s.iter().collect(),
        (None, Some(s)) => s.iter().collect(),
        _ => {
            return Err(Error::unsupported(format!(
                "full-text search of a non-string column {column:?}"
            )))
        }
    };
    for (i, value) in values.into_iter().enumerate() {
        let Some(value) = value else { continue };
        let mut freqs = vec![0u32; tokens.len()];
        let mut len = 0u32;
        for (t, _) in tokenize(analyzer, value) {
            len += 1;
            if let Some(slot) = tokens.iter().position(|q| *q == t) {
                freqs[slot] += 1;
            }
        }
        if len == 0 {
            continue;
        }
        out.num_docs += 1;
        out.total_tokens += u64::from(len);
        for (slot, f) in freqs.iter().enumerate() {
            if *f > 0 {
                out.token_docs[slot] += 1;
            }
        }
        out.docs.push((rows.value(i), freqs, len));
    }
    Ok(out)
}

fn explain_json(
    name: &str,
    opened: &[FtsSegment],
    tokens: &[String],
    corpus: &Corpus,
    unindexed: &[u64],
    scanned: bool,
) -> serde_json::Value {
    let segments: Vec<_> = opened
        .iter()
        .map(|s| {
            serde_json::json!({
                "uuid": s.segment.uuid_string(),
                "format_version": s.format_version,
                "partitions": s.partitions.iter().map(|p| serde_json::json!({
                    "id": p.id, "documents": p.num_docs, "tokens": p.num_tokens,
                })).collect::<Vec<_>>(),
                "deleted_fragments": s.deleted_fragments.iter().collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::json!({
        "index": name,
        "tokenizer": opened.first().map(|s| serde_json::json!({
            "base_tokenizer": s.params.base_tokenizer, "language": s.params.language,
            "stem": s.params.stem, "remove_stop_words": s.params.remove_stop_words,
            "lower_case": s.params.lower_case, "ascii_folding": s.params.ascii_folding,
            "with_position": s.params.with_position,
        })),
        "segments": segments,
        "query_tokens": tokens,
        "documents": corpus.num_docs,
        "token_documents": corpus.token_docs,
        "unindexed_fragments": unindexed,
        "unindexed_scanned": scanned,
    })
}
