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
use std::sync::Arc;

use arrow_array::cast::AsArray;
use roaring::RoaringBitmap;

use super::cache::{fts_cache, key, FtsCache, FtsEntry, FtsItem};
use super::files::{open_segment, FtsSegment, Partition};
use super::live::{all_rows_live, live_hits};
use super::params::{build_analyzer, tokenize};
use super::phrase::{flat_phrase_matches, indexed_phrase_matches, Clause, FuzzyTerm};
use super::query::{evaluate, FtsQuery};
use super::read::{no_positions, read_postings, TermPostings};
use super::score::Corpus;
use super::topk::{score_candidates, Liveness, Scoring, TopK};
use crate::error::{Error, Result};
use crate::io::IoStats;
use crate::lance::dataset::take::take_rows;
use crate::lance::dataset::{DatasetVersion, IndexSegment};

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

/// One full-text search: a query tree, `k`, and whether unindexed fragments are scanned.
#[derive(Debug, Clone)]
pub(crate) struct SearchRequest {
    /// What to find.
    pub(crate) query: FtsQuery,
    /// Best `k` rows (all matches when `None`).
    pub(crate) k: Option<usize>,
    /// Skip fragments no segment covers instead of scanning them.
    pub(crate) index_only: bool,
}

impl SearchRequest {
    /// A match query for `text` on `column`.
    #[cfg(test)]
    pub(crate) fn matching(text: &str, column: &str, operator: Operator, k: Option<usize>) -> Self {
        Self {
            query: FtsQuery::Match(super::query::MatchLeaf::new(text, column, operator)),
            k,
            index_only: false,
        }
    }
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
    let (scores, explain) = evaluate(
        dataset,
        &request.query,
        request.index_only,
        request.k,
        stats,
    )
    .await?;
    let mut hits: Vec<Hit> = scores
        .into_iter()
        .map(|(row_address, score)| Hit { row_address, score })
        .collect();
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.row_address.cmp(&b.row_address))
    });
    if let Some(k) = request.k {
        hits.truncate(k);
    }
    Ok(SearchOutput { hits, explain })
}

/// One leaf search: match (OR / AND, fuzzy) or phrase, on one column.
#[derive(Debug, Clone)]
pub(crate) struct Leaf<'a> {
    /// Query text.
    pub(crate) text: &'a str,
    /// The indexed column.
    pub(crate) column: &'a str,
    /// OR / AND (a phrase is AND).
    pub(crate) operator: Operator,
    /// `Some(slop)` for a phrase.
    pub(crate) phrase_slop: Option<u32>,
    /// Fuzzy expansion of each token.
    pub(crate) fuzzy: Option<Fuzzy>,
    /// Only the best `limit` rows are wanted (the others may be left out).
    pub(crate) limit: Option<usize>,
}

/// Fuzzy matching of a match query's tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fuzzy {
    /// Most edits.
    pub(crate) distance: u32,
    /// Leading characters kept exactly.
    pub(crate) prefix_length: u32,
    /// Most dictionary tokens the whole query expands to.
    pub(crate) max_expansions: usize,
}

/// The query's terms: tokens with their query positions, and for AND the group of each
/// (fuzzy expansions of one token share a group).
#[derive(Debug, Clone, Default)]
struct Terms {
    tokens: Vec<String>,
    positions: Vec<u32>,
    groups: Vec<usize>,
    num_groups: usize,
}

/// Every matching row of `leaf` with its score (unsorted), and what was read.
pub(crate) async fn search_leaf(
    dataset: &DatasetVersion,
    leaf: &Leaf<'_>,
    index_only: bool,
    stats: &IoStats,
) -> Result<(Vec<Hit>, serde_json::Value)> {
    if leaf.text.trim().is_empty() {
        return Err(Error::InvalidArgument(
            "full-text query text is empty".into(),
        ));
    }
    let (name, segments) = inverted_segments(dataset, leaf.column)?;
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
    let opens = covered
        .iter()
        .map(|(s, _)| cached_segment(dataset, s, stats));
    let (opened, deletions) = futures::try_join!(
        futures::future::try_join_all(opens),
        dataset.deletion_vectors(&frags, stats)
    )?;
    let params = match opened.first() {
        Some(s) => s.params.clone(),
        None => Default::default(),
    };
    let mut analyzer = build_analyzer(&params)?;
    let phrase = leaf.phrase_slop.is_some();
    if phrase && !opened.is_empty() && !params.with_position {
        return Err(no_positions());
    }
    // pylance matches unindexed rows with the query's own tokens, indexed ones with their
    // fuzzy expansions.
    let flat_terms = query_terms(&mut analyzer, leaf.text, phrase)?;
    let terms = match leaf.fuzzy {
        Some(fuzzy) => expand_fuzzy(&flat_terms, &opened, fuzzy),
        None => flat_terms.clone(),
    };
    let tokens = &terms.tokens;
    let unindexed: Vec<u64> = current
        .iter()
        .filter(|f| !all_covered.contains(*f))
        .map(u64::from)
        .collect();
    let scan_unindexed = !index_only && !unindexed.is_empty();
    let operator = if phrase { Operator::And } else { leaf.operator };

    // Wave 2: postings of every partition, and the unindexed rows' text.
    let cache = fts_cache(dataset);
    let postings = futures::future::try_join_all(opened.iter().flat_map(|seg| {
        seg.partitions
            .iter()
            .map(|p| partition_postings(&cache, p, tokens, phrase, stats))
    }));
    let flat = async {
        if scan_unindexed {
            scan_fragments(
                dataset,
                leaf.column,
                &unindexed,
                &mut build_analyzer(&params)?,
                &flat_terms.tokens,
                phrase,
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
    let flat_corpus = flat_statistics(&corpus, &terms, &flat_terms, &flat, leaf.fuzzy.is_some());

    // Wave 3: lengths and row ids of the matching documents (for a best-`k` search only
    // of those that may be among the best).
    let parts: Vec<(&FtsSegment, &Partition)> = opened
        .iter()
        .flat_map(|s| s.partitions.iter().map(move |p| (s.as_ref(), p)))
        .collect();
    let candidates = postings
        .iter()
        .map(|tp| {
            let mut candidates = match_docs(tp, &terms, operator);
            if let Some(slop) = leaf.phrase_slop {
                candidates.retain(|doc, _| phrase_in_postings(tp, &terms, *doc, slop));
            }
            candidates
        })
        .collect();
    let flat_hits = flat_hits(&flat, &flat_terms, operator, leaf.phrase_slop, &flat_corpus);
    let live =
        |i: usize, hits: Vec<Hit>| live_hits(dataset, &covered, &deletions, parts[i].0, hits);
    let flat_scores: Vec<f32> = flat_hits.iter().map(|h| h.score).collect();
    let top = leaf.limit.map(|k| TopK {
        k,
        other_scores: &flat_scores,
        live: if all_rows_live(dataset, &covered, &opened, &deletions) {
            Liveness::All
        } else {
            Liveness::Check(&live)
        },
    });
    let counted: Vec<bool> = (0..tokens.len())
        .map(|t| !tokens[..t].contains(&tokens[t]))
        .collect();
    let part_refs: Vec<&Partition> = parts.iter().map(|(_, p)| *p).collect();
    let scoring = Scoring {
        parts: &part_refs,
        postings: &postings,
        candidates,
        counted: &counted,
        corpus: &corpus,
        weights: &weights,
    };
    let scored = score_candidates(dataset, scoring, top, stats).await?;
    let mut hits = Vec::new();
    for (i, part_hits) in scored.hits.into_iter().enumerate() {
        hits.extend(live(i, part_hits));
    }
    hits.extend(flat_hits);
    let mut explain = explain_json(
        &name,
        &opened,
        tokens,
        &flat_corpus,
        &unindexed,
        scan_unindexed,
    );
    explain["candidates"] = scored.candidates.into();
    explain["scored_documents"] = scored.scored.into();
    if scored.bounds_broken {
        explain["score_bounds_broken"] = true.into();
    }
    Ok((hits, explain))
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

/// What `inspect` shows of an INVERTED index: the first segment's tokenizer params,
/// format and partitions (`{"error": ...}` when the segment does not open).
pub(crate) async fn describe_inverted(
    dataset: &DatasetVersion,
    segment: &IndexSegment,
    stats: &IoStats,
) -> Option<serde_json::Value> {
    if !is_inverted(segment) {
        return None;
    }
    Some(match cached_segment(dataset, segment, stats).await {
        Ok(s) => serde_json::json!({
            "tokenizer": tokenizer_json(&s),
            "format_version": s.format_version,
            "partitions": s.partitions.iter().map(|p| serde_json::json!({
                "id": p.id, "documents": p.num_docs, "tokens": p.num_tokens,
            })).collect::<Vec<_>>(),
        }),
        Err(e) => serde_json::json!({ "error": e.to_string() }),
    })
}

fn tokenizer_json(s: &FtsSegment) -> serde_json::Value {
    let p = &s.params;
    serde_json::json!({
        "base_tokenizer": p.base_tokenizer, "language": p.language,
        "stem": p.stem, "remove_stop_words": p.remove_stop_words,
        "custom_stop_words": p.custom_stop_words,
        "lower_case": p.lower_case, "ascii_folding": p.ascii_folding,
        "max_token_length": p.max_token_length,
        "min_ngram_length": p.min_ngram_length, "max_ngram_length": p.max_ngram_length,
        "prefix_only": p.prefix_only, "with_position": p.with_position,
    })
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

/// The statistics the unindexed rows are scored with: the index's plus the scanned rows'
/// (pylance's `MemBM25Scorer` updated by its flat search), per flat term; a fuzzy query's
/// flat terms count the indexed documents of the same token among its expansions.
fn flat_statistics(
    corpus: &Corpus,
    terms: &Terms,
    flat_terms: &Terms,
    flat: &FlatDocs,
    fuzzy: bool,
) -> Corpus {
    let mut out = Corpus {
        num_docs: corpus.num_docs + flat.num_docs,
        total_tokens: corpus.total_tokens + flat.total_tokens,
        token_docs: flat.token_docs.clone(),
    };
    out.token_docs.resize(flat_terms.tokens.len(), 0);
    for (t, docs) in out.token_docs.iter_mut().enumerate() {
        *docs += if fuzzy {
            let same = terms.tokens.iter().position(|x| *x == flat_terms.tokens[t]);
            same.map_or(0, |i| corpus.token_docs[i])
        } else {
            corpus.token_docs[t]
        };
    }
    out
}

/// The query's terms: for a match its distinct tokens in first-seen order (the AND and
/// the score count each once), for a phrase every token at its position.
fn query_terms(
    analyzer: &mut lance_tokenizer::TextAnalyzer,
    text: &str,
    phrase: bool,
) -> Result<Terms> {
    let mut out = Terms::default();
    for (t, position) in tokenize(analyzer, text) {
        if !phrase && out.tokens.contains(&t) {
            continue;
        }
        if out.tokens.len() == MAX_QUERY_TOKENS {
            return Err(Error::InvalidArgument(format!(
                "full-text query has more than {MAX_QUERY_TOKENS} distinct tokens"
            )));
        }
        out.groups.push(out.tokens.len());
        out.tokens.push(t);
        out.positions.push(position);
    }
    out.num_groups = out.tokens.len();
    Ok(out)
}

/// Each term replaced by the dictionary tokens within its edit distance (ascending, at
/// most `max_expansions` over the whole query; lance's `expand_fuzzy_tokens`), over every
/// partition of every segment.
fn expand_fuzzy(terms: &Terms, opened: &[Arc<FtsSegment>], fuzzy: Fuzzy) -> Terms {
    let mut out = Terms {
        num_groups: terms.num_groups,
        ..Default::default()
    };
    let mut seen = std::collections::HashSet::new();
    for (i, token) in terms.tokens.iter().enumerate() {
        let remaining = fuzzy.max_expansions.saturating_sub(out.tokens.len());
        if remaining == 0 {
            break;
        }
        let term = FuzzyTerm::new(token, fuzzy.distance, fuzzy.prefix_length);
        let mut found = std::collections::BTreeSet::new();
        for p in opened.iter().flat_map(|s| &s.partitions) {
            found.extend(p.tokens.tokens_where(|c| term.matches(c)));
        }
        for candidate in found.into_iter().take(remaining) {
            if seen.insert((candidate.clone(), terms.positions[i])) {
                out.tokens.push(candidate);
                out.positions.push(terms.positions[i]);
                out.groups.push(terms.groups[i]);
            }
        }
    }
    out
}

/// `segment`, opened, from the session cache or read (and cached).
async fn cached_segment(
    dataset: &DatasetVersion,
    segment: &IndexSegment,
    stats: &IoStats,
) -> Result<Arc<FtsSegment>> {
    let cache = fts_cache(dataset);
    let path = dataset
        .index_file_path(segment, "metadata.lance")?
        .to_string();
    let k = key(&path, FtsItem::Segment);
    if let Some(FtsEntry::Segment(s)) = cache.get(&k).await.as_deref() {
        return Ok(Arc::clone(s));
    }
    let s = Arc::new(open_segment(dataset, segment, stats).await?);
    cache
        .insert(k, Arc::new(FtsEntry::Segment(Arc::clone(&s))))
        .await;
    Ok(s)
}

/// The postings of `tokens` in `part` (empty for tokens it lacks), with positions for a
/// phrase: from the session cache, the others read (and cached).
async fn partition_postings(
    cache: &FtsCache,
    part: &Partition,
    tokens: &[String],
    with_positions: bool,
    stats: &IoStats,
) -> Result<Vec<TermPostings>> {
    let path = part.invert.path().to_string();
    let item = |token| FtsItem::Postings {
        token,
        positions: with_positions,
    };
    let mut found: HashMap<u32, Arc<TermPostings>> = HashMap::new();
    let mut ids = Vec::with_capacity(tokens.len());
    let mut missing = Vec::new();
    for token in tokens {
        let id = part
            .tokens
            .get(token, part.num_tokens)
            .map_err(|e| e.at(part.invert.path().as_ref(), None))?;
        if let Some(id) = id {
            if !found.contains_key(&id) && !missing.contains(&id) {
                match cache.get(&key(&path, item(id))).await.as_deref() {
                    Some(FtsEntry::Postings(p)) => {
                        found.insert(id, Arc::clone(p));
                    }
                    _ => missing.push(id),
                }
            }
        }
        ids.push(id);
    }
    let read = read_postings(part, &missing, with_positions, stats).await?;
    for (id, p) in missing.into_iter().zip(read) {
        let p = Arc::new(p);
        cache
            .insert(
                key(&path, item(id)),
                Arc::new(FtsEntry::Postings(Arc::clone(&p))),
            )
            .await;
        found.insert(id, p);
    }
    Ok(ids
        .into_iter()
        .map(|id| {
            id.and_then(|id| found.get(&id))
                .map_or_else(TermPostings::default, |p| p.as_ref().clone())
        })
        .collect())
}

/// Whether document `doc` of a partition holds the phrase of `terms` within `slop`.
fn phrase_in_postings(postings: &[TermPostings], terms: &Terms, doc: u64, slop: u32) -> bool {
    let mut clauses = Vec::with_capacity(postings.len());
    for (t, p) in postings.iter().enumerate() {
        let (Ok(i), Some(positions)) = (p.docs.binary_search(&doc), &p.positions) else {
            return false;
        };
        clauses.push(Clause {
            positions: &positions[i],
            query_position: terms.positions[t],
        });
    }
    indexed_phrase_matches(&clauses, slop)
}

/// Document key → frequency of each query term, for the documents `operator` admits.
fn match_docs(
    postings: &[TermPostings],
    terms: &Terms,
    operator: Operator,
) -> BTreeMap<u64, Vec<u32>> {
    let mut entries: Vec<(u64, usize, u32)> = Vec::new();
    for (t, p) in postings.iter().enumerate() {
        entries.extend(p.docs.iter().zip(&p.frequencies).map(|(d, f)| (*d, t, *f)));
    }
    if postings.len() > 1 {
        entries.sort_unstable_by_key(|e| e.0);
    }
    let mut docs: Vec<(u64, Vec<u32>)> = Vec::new();
    for (d, t, f) in entries {
        match docs.last_mut() {
            Some((last, freqs)) if *last == d => freqs[t] = f,
            _ => {
                let mut freqs = vec![0; terms.tokens.len()];
                freqs[t] = f;
                docs.push((d, freqs));
            }
        }
    }
    // Sorted input: the map is built in one pass.
    docs.into_iter()
        .filter(|(_, freqs)| matches_operator(freqs, terms, operator))
        .collect()
}

/// OR: some term is there; AND: every group (a token, or its fuzzy expansions) has one.
fn matches_operator(freqs: &[u32], terms: &Terms, operator: Operator) -> bool {
    match operator {
        Operator::Or => freqs.iter().any(|f| *f > 0),
        Operator::And => {
            let mut seen = vec![false; terms.num_groups];
            for (f, g) in freqs.iter().zip(&terms.groups) {
                if *f > 0 {
                    seen[*g] = true;
                }
            }
            terms.num_groups > 0 && seen.iter().all(|s| *s)
        }
    }
}

/// The scanned rows that match, scored.
fn flat_hits(
    flat: &FlatDocs,
    flat_terms: &Terms,
    operator: Operator,
    phrase_slop: Option<u32>,
    flat_corpus: &Corpus,
) -> Vec<Hit> {
    let weights: Vec<f32> = (0..flat_terms.tokens.len())
        .map(|t| flat_corpus.query_weight(t))
        .collect();
    let mut hits = Vec::new();
    for doc in &flat.docs {
        if doc.length == 0 || !matches_operator(&doc.freqs, flat_terms, operator) {
            continue;
        }
        if let Some(slop) = phrase_slop {
            let clauses: Vec<Clause<'_>> = (0..flat_terms.tokens.len())
                .map(|t| Clause {
                    positions: &doc.positions[t],
                    query_position: flat_terms.positions[t],
                })
                .collect();
            if !flat_phrase_matches(&clauses, slop) {
                continue;
            }
        }
        let score = flat_corpus.score(&doc.freqs, doc.length, &weights);
        if score > 0.0 {
            hits.push(Hit {
                row_address: doc.address,
                score,
            });
        }
    }
    hits
}

/// One unindexed row, tokenized: its address, query-term frequencies and positions, and
/// length.
#[derive(Debug)]
struct FlatDoc {
    address: u64,
    freqs: Vec<u32>,
    positions: Vec<Vec<u32>>,
    length: u32,
}

/// The unindexed rows, tokenized.
#[derive(Debug, Default)]
struct FlatDocs {
    num_docs: u64,
    total_tokens: u64,
    token_docs: Vec<u64>,
    docs: Vec<FlatDoc>,
}

/// Read and tokenize `column` of `fragments` (live rows).
async fn scan_fragments(
    dataset: &DatasetVersion,
    column: &str,
    fragments: &[u64],
    analyzer: &mut lance_tokenizer::TextAnalyzer,
    tokens: &[String],
    with_positions: bool,
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
        let mut positions = vec![Vec::new(); if with_positions { tokens.len() } else { 0 }];
        let mut len = 0u32;
        for (t, position) in tokenize(analyzer, value) {
            len += 1;
            for (slot, q) in tokens.iter().enumerate() {
                if *q == t {
                    freqs[slot] += 1;
                    if with_positions {
                        positions[slot].push(position);
                    }
                }
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
        out.docs.push(FlatDoc {
            address: rows.value(i),
            freqs,
            positions,
            length: len,
        });
    }
    Ok(out)
}

fn explain_json(
    name: &str,
    opened: &[Arc<FtsSegment>],
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
        "tokenizer": opened.first().map(|s| tokenizer_json(s)),
        "segments": segments,
        "query_tokens": tokens,
        "documents": corpus.num_docs,
        "token_documents": corpus.token_docs,
        "unindexed_fragments": unindexed,
        "unindexed_scanned": scanned,
    })
}
