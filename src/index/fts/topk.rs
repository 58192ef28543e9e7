//! Scoring a leaf's candidate documents (docs-file rows of each partition, with their
//! query-term frequencies): every one when the caller wants every match, or for a best-`k`
//! search only those whose score bound ([`super::prune`]) reaches the `k`-th best exact
//! score, in waves:
//!
//! 1. the lengths of the `max(4k, 32)` candidates of highest bound (every candidate when
//!    a second wave could spare little, [`super::prune::first_wave`]; none bounded below a
//!    floor under the `k`-th best score, [`super::prune::kth_best_floor`]; with their row ids
//!    when liveness needs them, or when this wave reads every candidate that may be among the
//!    best and they are few) give a `k`-th best score;
//! 2. the lengths of the other candidates whose bound reaches it;
//! 3. when every indexed document is a live row, the row ids of the best `k` only (those
//!    tied with the `k`-th best score taken in document order: ties come in either order):
//!    the best `k` after wave 1 have theirs read with wave 2, and a last wave reads those
//!    of wave-2 documents that displaced them (none, usually).
//!
//! Lengths and row ids come from the session cache when an earlier query read them. A
//! document whose length turns out below its bound (an index whose block max scores are
//! not lance's) turns pruning off: every remaining candidate is read.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::cache::{fts_cache, key, FtsEntry, FtsItem};
use super::files::{Partition, PartitionKind};
use super::prune::{
    first_wave, first_wave_len, kth_best, kth_best_floor, length_floors, PartitionStats,
};
use super::read::{read_doc_columns, read_docs, TermPostings};
use super::score::Corpus;
use super::search::Hit;
use crate::error::{Error, Result};
use crate::io::IoStats;
use crate::lance::dataset::DatasetVersion;

/// Documents per row id read with a single length wave, at most ([`score_candidates`]).
const ROW_ID_SPREAD: u64 = 8 * 1024;

/// The candidates of one leaf and how they score.
pub(crate) struct Scoring<'a> {
    /// Every partition searched, in `postings` order.
    pub(crate) parts: &'a [&'a Partition],
    /// Per partition, the postings of each query term.
    pub(crate) postings: &'a [Vec<TermPostings>],
    /// Per partition, document key → frequency of each query term.
    pub(crate) candidates: Vec<BTreeMap<u64, Vec<u32>>>,
    /// Per query term: whether its frequency counts toward a document's matched tokens
    /// (false for a repeat of an earlier term's token).
    pub(crate) counted: &'a [bool],
    /// Statistics of the search.
    pub(crate) corpus: &'a Corpus,
    /// Per query term, its weight.
    pub(crate) weights: &'a [f32],
}

/// Which indexed documents are live rows.
pub(crate) enum Liveness<'a> {
    /// Every one (no deletions, no stable row ids, nothing compacted away): row ids are
    /// read only for the best documents.
    All,
    /// Partition `i`'s hits (row ids) → its live hits (row addresses).
    Check(&'a (dyn Fn(usize, Vec<Hit>) -> Vec<Hit> + Sync)),
}

/// A best-`k` search.
pub(crate) struct TopK<'a> {
    /// Rows wanted.
    pub(crate) k: usize,
    /// Scores of the rows found outside the index (scanned fragments).
    pub(crate) other_scores: &'a [f32],
    /// Which indexed documents are live.
    pub(crate) live: Liveness<'a>,
}

/// Per partition its hits (row ids, not yet resolved or checked for liveness), and what
/// the scoring read.
#[derive(Debug, Default)]
pub(crate) struct Scored {
    /// Per partition, the hits that may be among the best (all of them without `k`).
    pub(crate) hits: Vec<Vec<Hit>>,
    /// Candidates over all partitions.
    pub(crate) candidates: usize,
    /// Candidates whose length was read (or found in the session cache).
    pub(crate) scored: usize,
    /// A length was below its bound: pruning was turned off.
    pub(crate) bounds_broken: bool,
}

/// One partition's candidates (ascending) and their length floors.
struct Floors {
    docs: Vec<u64>,
    floors: Vec<u32>,
}

impl Floors {
    fn of(&self, doc: u64) -> Option<u32> {
        self.docs.binary_search(&doc).ok().map(|i| self.floors[i])
    }
}

/// What is known of one scored document.
#[derive(Debug, Clone, Copy)]
struct Known {
    row: Option<u64>,
    score: f32,
}

/// Score `s`'s candidates: all of them, or for `top` only those that may be among its best.
pub(crate) async fn score_candidates(
    dataset: &DatasetVersion,
    s: Scoring<'_>,
    top: Option<TopK<'_>>,
    stats: &IoStats,
) -> Result<Scored> {
    let candidates = s.candidates.iter().map(BTreeMap::len).sum();
    let legacy = s
        .parts
        .iter()
        .any(|p| matches!(p.kind, PartitionKind::Legacy { .. }));
    let top = match top {
        // No rows wanted: nothing to read.
        Some(t) if t.k == 0 => {
            return Ok(Scored {
                hits: vec![Vec::new(); s.parts.len()],
                candidates,
                ..Scored::default()
            })
        }
        Some(t) if !legacy => t,
        _ => return score_all(dataset, &s, candidates, stats).await,
    };
    let mut bounds: Vec<(f32, usize, u64)> = Vec::with_capacity(candidates);
    let mut floors: Vec<Floors> = Vec::with_capacity(s.parts.len());
    for (i, (part, cands)) in s.parts.iter().zip(&s.candidates).enumerate() {
        let block_size = match part.kind {
            PartitionKind::Blocks(layout) => layout.block_size,
            PartitionKind::Legacy { .. } => 0,
        };
        let docs: Vec<u64> = cands.keys().copied().collect();
        let freqs: Vec<&[u32]> = cands.values().map(Vec::as_slice).collect();
        let stats_p = PartitionStats {
            num_docs: part.num_docs,
            total_tokens: part.total_tokens,
        };
        let fl = length_floors(
            &docs,
            &freqs,
            &s.postings[i],
            s.counted,
            block_size,
            stats_p,
        );
        for ((d, f), floor) in docs.iter().zip(&freqs).zip(&fl) {
            bounds.push((s.corpus.score(f, *floor, s.weights), i, *d));
        }
        floors.push(Floors { docs, floors: fl });
    }
    // Candidates bounded below a floor under the k-th best score cannot be among the best.
    let floor = kth_floor(&s, &top, &floors);
    let eligible: Vec<f32> = bounds
        .iter()
        .map(|b| b.0)
        .filter(|b| floor.is_none_or(|f| *b >= f))
        .collect();
    let n0 = first_wave(top.k, &eligible, top.other_scores);
    let by_bound = |a: &(f32, usize, u64), b: &(f32, usize, u64)| {
        b.0.total_cmp(&a.0).then((a.1, a.2).cmp(&(b.1, b.2)))
    };
    if n0 > 0 && n0 < bounds.len() {
        bounds.select_nth_unstable_by(n0 - 1, by_bound);
    }
    // Row ids come with the first wave's lengths when there are few candidates, or when
    // that wave reads every one that may be among the best and they are few next to the
    // documents (a row id costs a chunk of ~1,000 rows: at most one in 8 of the row-id
    // chunks): that spares the round trip reading the best's row ids after.
    let documents: u64 = s.parts.iter().map(|p| p.num_docs).sum();
    let one_wave = n0 == eligible.len()
        && n0 <= first_wave_len(top.k, usize::MAX).saturating_mul(4)
        && n0 as u64 <= documents / ROW_ID_SPREAD;
    let few = bounds.len() <= first_wave_len(top.k, usize::MAX) || one_wave;
    let rows_always = matches!(top.live, Liveness::Check(_)) || few;
    let mut known: Vec<HashMap<u64, Known>> = vec![HashMap::new(); s.parts.len()];
    let wave: Vec<(usize, u64)> = bounds[..n0].iter().map(|b| (b.1, b.2)).collect();
    let mut broken =
        score_wave(dataset, &s, &floors, &wave, rows_always, &mut known, stats).await?;
    let bar = threshold(&top, &known)
        .unwrap_or(f32::NEG_INFINITY)
        .max(floor.unwrap_or(f32::NEG_INFINITY));
    let rest: Vec<(usize, u64)> = bounds[n0..]
        .iter()
        .filter(|b| broken || b.0 >= bar)
        .map(|b| (b.1, b.2))
        .collect();
    // The best so far usually stay the best: their row ids come with the second wave, so
    // the last wave is needed only for documents of the second that displace them.
    let early: Vec<Vec<u64>> = match top.live {
        Liveness::All if !rows_always && !broken && !rest.is_empty() => {
            missing_rows(&known, &best_of(&known, top.k, top.other_scores))
        }
        _ => vec![Vec::new(); s.parts.len()],
    };
    let (broken_rest, early_rows) = futures::try_join!(
        score_wave(dataset, &s, &floors, &rest, rows_always, &mut known, stats),
        row_ids_of(dataset, &s, &early, stats),
    )?;
    broken |= broken_rest;
    set_rows(&mut known, &early, early_rows);
    // Bounds that broke (a length below its floor: every candidate is read) or a floor
    // that did not hold (an index whose block max scores are not lance's: every candidate
    // whose bound reaches the k-th best exact score is) leave some unread: read them, and
    // everything left when that wave finds bounds broken.
    loop {
        let kth = threshold(&top, &known).unwrap_or(f32::NEG_INFINITY);
        if !broken && !floor.is_some_and(|f| kth < f) {
            break;
        }
        let unread: Vec<(usize, u64)> = bounds[n0..]
            .iter()
            .filter(|b| (broken || b.0 >= kth) && !known[b.1].contains_key(&b.2))
            .map(|b| (b.1, b.2))
            .collect();
        if unread.is_empty() {
            break;
        }
        broken |= score_wave(
            dataset,
            &s,
            &floors,
            &unread,
            rows_always,
            &mut known,
            stats,
        )
        .await?;
    }
    let selected = if broken || matches!(top.live, Liveness::Check(_)) {
        known.iter().map(sorted_keys).collect()
    } else {
        best_of(&known, top.k, top.other_scores)
    };
    if !rows_always {
        read_missing_rows(dataset, &s, &mut known, &selected, stats).await?;
    }
    let scored = known.iter().map(HashMap::len).sum();
    let hits = known
        .iter()
        .zip(&selected)
        .map(|(docs, keys)| {
            keys.iter()
                .filter_map(|d| {
                    let k = docs.get(d)?;
                    k.row.map(|row| Hit {
                        row_address: row,
                        score: k.score,
                    })
                })
                .collect()
        })
        .collect();
    Ok(Scored {
        hits,
        candidates,
        scored,
        bounds_broken: broken,
    })
}

/// [`kth_best_floor`] where it holds: one partition whose statistics are the search's,
/// every indexed document live.
fn kth_floor(s: &Scoring<'_>, top: &TopK<'_>, floors: &[Floors]) -> Option<f32> {
    let ([part], [postings], [candidates]) = (s.parts, s.postings, floors) else {
        return None;
    };
    let PartitionKind::Blocks(layout) = part.kind else {
        return None;
    };
    let same_stats = s.corpus.num_docs == part.num_docs
        && s.corpus.total_tokens == part.total_tokens
        && postings.len() == s.weights.len()
        && postings.len() == s.corpus.token_docs.len()
        && postings
            .iter()
            .zip(&s.corpus.token_docs)
            .all(|(tp, n)| tp.docs.len() as u64 == *n);
    if !matches!(top.live, Liveness::All) || !same_stats {
        return None;
    }
    let stats = PartitionStats {
        num_docs: part.num_docs,
        total_tokens: part.total_tokens,
    };
    kth_best_floor(
        postings,
        s.weights,
        &candidates.docs,
        layout.block_size,
        stats,
        top.k,
        top.other_scores,
    )
}

/// The `k`-th best score among the known (live) documents and the other rows.
fn threshold(top: &TopK<'_>, known: &[HashMap<u64, Known>]) -> Option<f32> {
    let mut scores: Vec<f32> = top.other_scores.to_vec();
    for (i, docs) in known.iter().enumerate() {
        match top.live {
            Liveness::All => scores.extend(docs.values().map(|k| k.score)),
            Liveness::Check(live) => {
                let hits = docs
                    .values()
                    .filter_map(|k| {
                        k.row.map(|row| Hit {
                            row_address: row,
                            score: k.score,
                        })
                    })
                    .collect();
                scores.extend(live(i, hits).into_iter().map(|h| h.score));
            }
        }
    }
    kth_best(scores, top.k)
}

/// Score the documents `wave` (partition, key) names: read their lengths (and row ids
/// when `rows`) in one wave over every partition. True when some length is below its
/// bound.
async fn score_wave(
    dataset: &DatasetVersion,
    s: &Scoring<'_>,
    floors: &[Floors],
    wave: &[(usize, u64)],
    rows: bool,
    known: &mut [HashMap<u64, Known>],
    stats: &IoStats,
) -> Result<bool> {
    let mut per_part: Vec<Vec<u64>> = vec![Vec::new(); s.parts.len()];
    for (i, d) in wave {
        per_part[*i].push(*d);
    }
    for docs in &mut per_part {
        docs.sort_unstable();
    }
    let reads = s
        .parts
        .iter()
        .zip(&per_part)
        .map(|(part, docs)| cached_lengths(dataset, part, docs, rows, stats));
    let read = futures::future::try_join_all(reads).await?;
    let mut broken = false;
    for (i, (docs, facts)) in per_part.iter().zip(read).enumerate() {
        for (d, (row, len)) in docs.iter().zip(facts) {
            broken |= floors[i].of(*d).is_some_and(|f| len < f);
            let freqs = &s.candidates[i][d];
            let score = s.corpus.score(freqs, len, s.weights);
            known[i].insert(*d, Known { row, score });
        }
    }
    Ok(broken)
}

/// Per partition, the known documents (all live) among the best `k` with the rows
/// scoring `other`: every one scoring above the `k`-th best score, and of those tied with
/// it the first `k` by partition and document order (ties may come in either order).
fn best_of(known: &[HashMap<u64, Known>], k: usize, other: &[f32]) -> Vec<Vec<u64>> {
    let all = known.iter().flat_map(|d| d.values().map(|k| k.score));
    let Some(kth) = kth_best(all.chain(other.iter().copied()), k) else {
        return known.iter().map(sorted_keys).collect();
    };
    let mut tied: Vec<(usize, u64)> = Vec::new();
    let mut out: Vec<Vec<u64>> = vec![Vec::new(); known.len()];
    for (i, docs) in known.iter().enumerate() {
        for (d, kn) in docs {
            if kn.score > kth {
                out[i].push(*d);
            } else if kn.score == kth {
                tied.push((i, *d));
            }
        }
    }
    tied.sort_unstable();
    for (i, d) in tied.into_iter().take(k) {
        out[i].push(d);
    }
    for docs in &mut out {
        docs.sort_unstable();
    }
    out
}

/// The documents `docs` knows, ascending (docs-file reads take their rows in order).
fn sorted_keys(docs: &HashMap<u64, Known>) -> Vec<u64> {
    let mut keys: Vec<u64> = docs.keys().copied().collect();
    keys.sort_unstable();
    keys
}

/// Read the row ids of the `selected` documents that lack them, one wave over every
/// partition.
async fn read_missing_rows(
    dataset: &DatasetVersion,
    s: &Scoring<'_>,
    known: &mut [HashMap<u64, Known>],
    selected: &[Vec<u64>],
    stats: &IoStats,
) -> Result<()> {
    let missing = missing_rows(known, selected);
    let rows = row_ids_of(dataset, s, &missing, stats).await?;
    set_rows(known, &missing, rows);
    Ok(())
}

/// Per partition, the `selected` documents whose row id is not known yet.
fn missing_rows(known: &[HashMap<u64, Known>], selected: &[Vec<u64>]) -> Vec<Vec<u64>> {
    known
        .iter()
        .zip(selected)
        .map(|(docs, keys)| {
            keys.iter()
                .filter(|d| docs.get(*d).is_some_and(|k| k.row.is_none()))
                .copied()
                .collect()
        })
        .collect()
}

/// The row ids of `docs` (per partition), one wave over every partition.
async fn row_ids_of(
    dataset: &DatasetVersion,
    s: &Scoring<'_>,
    docs: &[Vec<u64>],
    stats: &IoStats,
) -> Result<Vec<Vec<u64>>> {
    let reads = s
        .parts
        .iter()
        .zip(docs)
        .map(|(part, docs)| cached_row_ids(dataset, part, docs, stats));
    futures::future::try_join_all(reads).await
}

/// Record `rows` (per partition, in `docs` order) as the row ids of `docs`.
fn set_rows(known: &mut [HashMap<u64, Known>], docs: &[Vec<u64>], rows: Vec<Vec<u64>>) {
    for ((docs, rows), part_known) in docs.iter().zip(rows).zip(known.iter_mut()) {
        for (d, row) in docs.iter().zip(rows) {
            if let Some(k) = part_known.get_mut(d) {
                k.row = Some(row);
            }
        }
    }
}

/// Score every candidate (row ids and lengths of all of them, one wave).
async fn score_all(
    dataset: &DatasetVersion,
    s: &Scoring<'_>,
    candidates: usize,
    stats: &IoStats,
) -> Result<Scored> {
    let runs = s
        .parts
        .iter()
        .zip(&s.candidates)
        .map(|(part, cands)| async move {
            let docs: Vec<u64> = cands.keys().copied().collect();
            let facts = cached_lengths(dataset, part, &docs, true, stats).await?;
            let mut out = Vec::with_capacity(docs.len());
            for (freqs, (row, len)) in cands.values().zip(facts) {
                let row = row.ok_or_else(|| Error::corrupt("a scored document has no row id"))?;
                out.push(Hit {
                    row_address: row,
                    score: s.corpus.score(freqs, len, s.weights),
                });
            }
            Ok::<_, Error>(out)
        });
    let hits = futures::future::try_join_all(runs).await?;
    Ok(Scored {
        hits,
        candidates,
        scored: candidates,
        bounds_broken: false,
    })
}

/// Lengths (and row ids when `rows`) of `docs` (ascending) of `part`: cached ones, the
/// others read (and cached).
async fn cached_lengths(
    dataset: &DatasetVersion,
    part: &Partition,
    docs: &[u64],
    rows: bool,
    stats: &IoStats,
) -> Result<Vec<(Option<u64>, u32)>> {
    if docs.is_empty() {
        return Ok(Vec::new());
    }
    if matches!(part.kind, PartitionKind::Legacy { .. }) {
        let (ids, lens) = read_docs(part, docs, stats).await?;
        return Ok(ids.into_iter().map(Some).zip(lens).collect());
    }
    let cache = fts_cache(dataset);
    let path = part.docs.path().to_string();
    let mut found: HashMap<u64, (Option<u64>, u32)> = HashMap::new();
    let mut missing = Vec::new();
    for d in docs {
        let fact = match cache.get(&key(&path, FtsItem::Doc(*d))).await.as_deref() {
            Some(FtsEntry::Doc(row, len)) => Some((Some(*row), *len)),
            _ if rows => None,
            _ => match cache.get(&key(&path, FtsItem::Length(*d))).await.as_deref() {
                Some(FtsEntry::Length(len)) => Some((None, *len)),
                _ => None,
            },
        };
        match fact {
            Some(f) => {
                found.insert(*d, f);
            }
            None => missing.push(*d),
        }
    }
    if !missing.is_empty() {
        let read = read_doc_columns(part, &missing, rows, true, stats).await?;
        let lens = read.lengths.unwrap_or_default();
        for (j, (d, len)) in missing.iter().zip(lens).enumerate() {
            let row = read.rows.as_ref().and_then(|r| r.get(j).copied());
            let (item, entry) = match row {
                Some(r) => (FtsItem::Doc(*d), FtsEntry::Doc(r, len)),
                None => (FtsItem::Length(*d), FtsEntry::Length(len)),
            };
            cache.insert(key(&path, item), Arc::new(entry)).await;
            found.insert(*d, (row, len));
        }
    }
    in_doc_order(docs, &found)
}

/// Row ids of `docs` (ascending, lengths already cached) of a partitioned-layout `part`:
/// cached ones, the others read (only the row id column) and cached with their lengths.
async fn cached_row_ids(
    dataset: &DatasetVersion,
    part: &Partition,
    docs: &[u64],
    stats: &IoStats,
) -> Result<Vec<u64>> {
    if docs.is_empty() {
        return Ok(Vec::new());
    }
    let cache = fts_cache(dataset);
    let path = part.docs.path().to_string();
    let mut found: HashMap<u64, u64> = HashMap::new();
    let mut missing = Vec::new();
    for d in docs {
        match cache.get(&key(&path, FtsItem::Doc(*d))).await.as_deref() {
            Some(FtsEntry::Doc(row, _)) => {
                found.insert(*d, *row);
            }
            _ => missing.push(*d),
        }
    }
    if !missing.is_empty() {
        let read = read_doc_columns(part, &missing, true, false, stats).await?;
        for (d, row) in missing.iter().zip(read.rows.unwrap_or_default()) {
            if let Some(FtsEntry::Length(len)) =
                cache.get(&key(&path, FtsItem::Length(*d))).await.as_deref()
            {
                let entry = Arc::new(FtsEntry::Doc(row, *len));
                cache.insert(key(&path, FtsItem::Doc(*d)), entry).await;
            }
            found.insert(*d, row);
        }
    }
    in_doc_order(docs, &found)
}

/// The facts `found` holds for `docs`, in `docs` order (corrupt when one is missing).
fn in_doc_order<T: Copy>(docs: &[u64], found: &HashMap<u64, T>) -> Result<Vec<T>> {
    docs.iter()
        .map(|d| {
            found
                .get(d)
                .copied()
                .ok_or_else(|| Error::corrupt("docs rows are missing"))
        })
        .collect()
}
