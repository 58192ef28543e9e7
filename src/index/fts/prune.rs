//! Which scored documents' lengths a top-`k` search must read: pure bounds and plans.
//!
//! A BM25 term score falls as the document grows, so a lower bound on a document's length
//! gives an upper bound on its score. Two bounds need no docs-file bytes:
//!
//! * a document holds at least the query tokens it matched (the sum of their frequencies);
//! * lance stores each 128-doc posting block's max score (`calculate_block_max_scores`:
//!   `idf(n, N) * (K1 + 1) * max f / (f + K1 * (1 - B + B * len / avgdl))` over the block,
//!   with the partition's own `N`, `n` and `avgdl`), so every posting of that block scores at
//!   most that, which bounds its document's length from below.
//!
//! Only documents whose bound reaches the `k`-th best exact score found so far are read
//! ([`super::topk`]); the rest cannot enter the best `k`. The same block max scores put a
//! floor under the `k`-th best score before anything is read ([`kth_best_floor`]: each is
//! the exact score of one document of its block), so candidates bounded below it are never
//! read at all.

use super::read::TermPostings;
use super::score::{idf, B, K1};

/// Relative slack on a stored block max score (lance computes it in f32; the bound stays
/// safe for any rounding far below this).
const SLACK: f64 = 1e-3;

/// Candidates scored in the first wave of a top-`k` search: enough for a `k`-th best
/// score that prunes well, few enough to cost little.
pub(crate) fn first_wave_len(k: usize, candidates: usize) -> usize {
    k.saturating_mul(4).max(32).min(candidates)
}

/// How many candidates, of score bounds `bounds`, the first length wave of a best-`k`
/// search reads (those of highest bound), the rows outside the index scoring `other`.
///
/// The `k`-th best exact score is at most the `k`-th best bound, so every candidate whose
/// bound reaches the latter is read whatever the first wave finds: the first wave takes
/// all of them (bounds tied at the top then give an exact `k`-th best close to the final
/// one, not one from an arbitrary few of the tied) and at least [`first_wave_len`]. When
/// a second wave could spare at most twice that many reads (a few lengths, each a small
/// chunk; or flat bounds: short documents put a short one in nearly every posting block),
/// the first reads every candidate: a second would cost a round trip (and often a third,
/// for the row ids of documents that displace the first's best) to spare little.
pub(crate) fn first_wave(k: usize, bounds: &[f32], other: &[f32]) -> usize {
    let n0 = first_wave_len(k, bounds.len());
    let all = bounds.iter().chain(other).copied();
    let Some(kth) = kth_best(all, k) else {
        return bounds.len();
    };
    let certain = bounds.iter().filter(|b| **b >= kth).count();
    let first = n0.max(certain);
    if bounds.len() - first <= 2 * n0 {
        bounds.len()
    } else {
        first
    }
}

/// A floor under the `k`-th best score of a search over one partition whose statistics
/// are the search's own, before any length is read: lance's max score of a posting block
/// is the exact score, for that term, of one of the block's documents, so when every
/// document of the block is a candidate, some candidate scores at least that term's share
/// of it (`weights[t]` over the partition's idf of `t`; the other terms add nothing
/// negative, so only with weights ≥ 0). Blocks of one term hold distinct documents: the
/// floor is the best over terms of the `k`-th best of one term's blocks (and the rows
/// outside the index scoring `other`). `candidates`: the candidate documents, ascending.
/// `None` when nothing bounds it.
///
/// A caller must check the floor afterwards (the `k`-th best exact score found is at
/// least it): an index whose block max scores are not lance's would make it wrong.
pub(crate) fn kth_best_floor(
    postings: &[TermPostings],
    weights: &[f32],
    candidates: &[u64],
    block_size: usize,
    stats: PartitionStats,
    k: usize,
    other: &[f32],
) -> Option<f32> {
    if block_size == 0 || weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
        return None;
    }
    let mut best: Option<f32> = None;
    for (tp, w) in postings.iter().zip(weights) {
        let token_docs = tp.docs.len() as u64;
        let partition_idf = idf(token_docs, stats.num_docs);
        if tp.block_max.len() != tp.docs.len().div_ceil(block_size)
            || !partition_idf.is_finite()
            || partition_idf <= 0.0
        {
            continue;
        }
        let share = f64::from(*w) / f64::from(partition_idf) * (1.0 - SLACK);
        // Both ascending: gallop from the last candidate found to the first not below
        // each posting (linear when the candidates are the postings, a few probes per
        // posting when they are many more: a term costs its postings, not every candidate).
        let mut from = 0;
        let mut is_candidate = |d: &u64| {
            let rest = &candidates[from..];
            let mut step = 1;
            while step < rest.len() && rest[step - 1] < *d {
                step *= 2;
            }
            let (lo, hi) = (step / 2, step.min(rest.len()));
            from += lo + rest[lo..hi].partition_point(|c| c < d);
            candidates.get(from) == Some(d)
        };
        let floors = tp
            .docs
            .chunks(block_size)
            .zip(&tp.block_max)
            .filter(|(docs, max)| {
                docs.iter()
                    .fold(max.is_finite(), |all, d| is_candidate(d) && all)
            })
            .map(|(_, max)| (f64::from(*max) * share) as f32);
        if let Some(kth) = kth_best(floors.chain(other.iter().copied()), k) {
            best = Some(best.map_or(kth, |b| b.max(kth)));
        }
    }
    best
}

/// One partition's statistics as the index wrote them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PartitionStats {
    /// Documents.
    pub(crate) num_docs: u64,
    /// Tokens in all documents.
    pub(crate) total_tokens: u64,
}

/// The least length (tokens) of a document holding a token `freq` times, when the posting
/// block holding it has lance's max score `block_max`, for a token of `token_docs`
/// documents in a partition of `stats` (0 when the score says nothing).
pub(crate) fn length_floor(
    freq: u32,
    block_max: f32,
    token_docs: u64,
    stats: PartitionStats,
) -> u32 {
    if stats.num_docs == 0 || token_docs == 0 || freq == 0 {
        return 0;
    }
    let avgdl = f64::from(stats.total_tokens as f32 / stats.num_docs as f32);
    let scale = f64::from(idf(token_docs, stats.num_docs)) * f64::from(K1 + 1.0);
    let m = f64::from(block_max) / scale * (1.0 + SLACK);
    if !m.is_finite() || m <= 0.0 || m >= 1.0 || !avgdl.is_finite() || avgdl <= 0.0 {
        return 0;
    }
    let (f, k1, b) = (f64::from(freq), f64::from(K1), f64::from(B));
    // f / (f + K1 (1 - B + B len / avgdl)) <= m  <=>  len >= (f / m - f - K1 (1 - B)) avgdl / (K1 B)
    let floor = (f / m - f - k1 * (1.0 - b)) * avgdl / (k1 * b);
    if floor <= 1.0 {
        return 0;
    }
    // Lengths are whole tokens: one at least `floor` is at least its ceiling (the slack
    // above keeps `floor` below the best document's length whatever lance's rounding).
    floor.ceil().min(f64::from(u32::MAX)) as u32
}

/// Each candidate document's least length (`docs`: document keys, ascending; `freqs`: its
/// frequency per query term), from the postings of the query's terms in one partition
/// with `block_size`-doc blocks. `counted[t]` says whether term `t`'s frequency counts
/// toward the matched-token bound (false for a repeat of an earlier term's token).
pub(crate) fn length_floors(
    docs: &[u64],
    freqs: &[&[u32]],
    postings: &[TermPostings],
    counted: &[bool],
    block_size: usize,
    stats: PartitionStats,
) -> Vec<u32> {
    let mut floors: Vec<u32> = freqs
        .iter()
        .map(|f| {
            let matched: u64 = f
                .iter()
                .zip(counted)
                .filter(|(_, c)| **c)
                .map(|(x, _)| u64::from(*x))
                .sum();
            matched.clamp(1, u64::from(u32::MAX)) as u32
        })
        .collect();
    if block_size == 0 {
        return floors;
    }
    for tp in postings {
        let expected = tp.docs.len().div_ceil(block_size);
        if tp.block_max.len() != expected {
            continue;
        }
        let token_docs = tp.docs.len() as u64;
        // Both ascending: walk them together.
        let mut slot = 0;
        for (i, (doc, freq)) in tp.docs.iter().zip(&tp.frequencies).enumerate() {
            while slot < docs.len() && docs[slot] < *doc {
                slot += 1;
            }
            if slot == docs.len() {
                break;
            }
            if docs[slot] != *doc {
                continue;
            }
            let floor = length_floor(*freq, tp.block_max[i / block_size], token_docs, stats);
            floors[slot] = floors[slot].max(floor);
        }
    }
    floors
}

/// The `k`-th best of `scores` (`None` with fewer than `k`).
pub(crate) fn kth_best(scores: impl IntoIterator<Item = f32>, k: usize) -> Option<f32> {
    if k == 0 {
        return None;
    }
    let mut all: Vec<f32> = scores.into_iter().collect();
    if all.len() < k {
        return None;
    }
    let (_, kth, _) = all.select_nth_unstable_by(k - 1, |a, b| b.total_cmp(a));
    Some(*kth)
}

#[cfg(test)]
mod tests {
    use super::super::score::Corpus;
    use super::*;

    /// lance's block max score of postings `(freq, len)` in a partition.
    fn lance_block_max(postings: &[(u32, u32)], token_docs: u64, stats: PartitionStats) -> f32 {
        let avgdl = stats.total_tokens as f32 / stats.num_docs as f32;
        let mut max = f32::MIN;
        for (f, len) in postings {
            let norm = K1 * (1.0 - B + B * *len as f32 / avgdl);
            let f = *f as f32;
            max = max.max(f / (f + norm));
        }
        max * idf(token_docs, stats.num_docs) * (K1 + 1.0)
    }

    #[test]
    fn the_floor_never_passes_the_best_documents_length_and_is_tight() {
        let stats = PartitionStats {
            num_docs: 1000,
            total_tokens: 10_000,
        };
        for (f, len) in [(1, 1), (1, 4), (2, 3), (1, 10), (3, 40), (1, 200), (7, 7)] {
            let max = lance_block_max(&[(f, len), (1, 500)], 128, stats);
            let floor = length_floor(f, max, 128, stats);
            assert!(floor <= len, "f {f} len {len}: floor {floor}");
            assert!(
                floor + 1 >= len || floor == 0,
                "f {f} len {len}: floor {floor}"
            );
            // Any other document of the block scores at most the max: its floor holds too.
            let other = length_floor(1, max, 128, stats);
            assert!(other <= 500);
        }
    }

    #[test]
    fn a_useless_or_garbled_block_max_gives_no_floor() {
        let stats = PartitionStats {
            num_docs: 10,
            total_tokens: 50,
        };
        for max in [f32::NAN, f32::INFINITY, -1.0, 0.0, 1e9] {
            assert_eq!(length_floor(1, max, 3, stats), 0, "{max}");
        }
        assert_eq!(length_floor(0, 1.0, 3, stats), 0);
        let empty = PartitionStats {
            num_docs: 0,
            total_tokens: 0,
        };
        assert_eq!(length_floor(1, 1.0, 3, empty), 0);
    }

    #[test]
    fn floors_take_the_best_bound_and_bound_the_exact_score() {
        let stats = PartitionStats {
            num_docs: 1000,
            total_tokens: 10_000,
        };
        // Term 0: docs 1 (len 30), 5 (len 4) in one block; term 1: doc 5 only, twice.
        let block = lance_block_max(&[(1, 30), (1, 4)], 2, stats);
        let t0 = TermPostings {
            docs: vec![1, 5],
            frequencies: vec![1, 1],
            block_max: vec![block],
            ..Default::default()
        };
        let t1 = TermPostings {
            docs: vec![5],
            frequencies: vec![2],
            block_max: vec![lance_block_max(&[(2, 4)], 1, stats)],
            ..Default::default()
        };
        let freqs: [&[u32]; 2] = [&[1, 0], &[1, 2]];
        let postings = [t0, t1];
        let floors = length_floors(&[1, 5], &freqs, &postings, &[true, true], 128, stats);
        // Doc 5 matched 3 tokens and its block says at least ~4; doc 1 shares doc 5's block.
        assert!(floors[0] <= 30, "{floors:?}");
        assert!((3..=4).contains(&floors[1]), "{floors:?}");
        let corpus = Corpus {
            num_docs: 1000,
            total_tokens: 10_000,
            token_docs: vec![2, 1],
        };
        let w = [corpus.query_weight(0), corpus.query_weight(1)];
        assert!(corpus.score(freqs[0], floors[0], &w) >= corpus.score(freqs[0], 30, &w));
        // Blocks that do not match the postings are ignored.
        let mut broken = postings.clone();
        broken[0].block_max.push(0.5);
        let plain = length_floors(&[1, 5], &freqs, &broken, &[true, false], 128, stats);
        assert_eq!(plain[0], 1);
    }

    #[test]
    fn kth_best_and_first_wave() {
        assert_eq!(kth_best([1.0, 3.0, 2.0], 2), Some(2.0));
        assert_eq!(kth_best([1.0], 2), None);
        assert_eq!(kth_best([1.0], 0), None);
        assert_eq!(first_wave_len(10, 1000), 40);
        assert_eq!(first_wave_len(1, 1000), 32);
        assert_eq!(first_wave_len(10, 7), 7);
    }

    #[test]
    fn flat_bounds_are_read_in_one_wave() {
        // 100 candidates bounded alike: a second wave could prune none of them.
        let flat = vec![9.5; 100];
        assert_eq!(first_wave(10, &flat, &[]), 100);
        // Spread bounds: 160 below the 10th best bound may be pruned.
        let spread: Vec<f32> = (0..200).map(|i| i as f32).collect();
        assert_eq!(first_wave(10, &spread, &[]), 40);
        // 60 below it: not worth a second wave.
        assert_eq!(first_wave(10, &spread[..100], &[]), 100);
        // 50 tied at the top are read in any case: all of them first.
        let tied: Vec<f32> = (0..200)
            .map(|i| if i < 50 { 9.0 } else { i as f32 / 100.0 })
            .collect();
        assert_eq!(first_wave(10, &tied, &[]), 50);
        // Fewer candidates and other rows than k: every one is among the best.
        assert_eq!(first_wave(10, &spread[..5], &[1.0]), 5);
        // Other rows' exact scores raise the bar: all 200 are below the 10th best.
        assert_eq!(first_wave(10, &spread, &[1000.0; 10]), 40);
    }

    #[test]
    fn the_block_max_floor_is_under_the_kth_best_score() {
        let stats = PartitionStats {
            num_docs: 1000,
            total_tokens: 10_000,
        };
        // One term, blocks of 2: docs 1..=6 with (freq, len).
        let docs_fl = [
            (1, (1, 12)),
            (2, (2, 5)),
            (3, (1, 4)),
            (4, (1, 30)),
            (5, (3, 9)),
            (6, (1, 7)),
        ];
        let n = docs_fl.len() as u64;
        let block_max: Vec<f32> = docs_fl
            .chunks(2)
            .map(|b| lance_block_max(&b.iter().map(|(_, p)| *p).collect::<Vec<_>>(), n, stats))
            .collect();
        let tp = TermPostings {
            docs: docs_fl.iter().map(|(d, _)| *d).collect(),
            frequencies: docs_fl.iter().map(|(_, (f, _))| *f).collect(),
            block_max,
            ..Default::default()
        };
        let corpus = Corpus {
            num_docs: 1000,
            total_tokens: 10_000,
            token_docs: vec![n],
        };
        let w = [corpus.query_weight(0)];
        let mut exact: Vec<f32> = docs_fl
            .iter()
            .map(|(_, (f, l))| corpus.score(&[*f], *l, &w))
            .collect();
        exact.sort_by(|a, b| b.total_cmp(a));
        let all: Vec<u64> = docs_fl.iter().map(|(d, _)| *d).collect();
        for k in 1..=3 {
            let floor =
                kth_best_floor(std::slice::from_ref(&tp), &w, &all, 2, stats, k, &[]).unwrap();
            assert!(floor <= exact[k - 1], "k {k}: {floor} > {}", exact[k - 1]);
            assert!(
                floor >= exact[k - 1] * 0.99 || k > 1,
                "k {k}: {floor} loose"
            );
        }
        // Three blocks: no 4th distinct document is vouched for.
        assert_eq!(
            kth_best_floor(std::slice::from_ref(&tp), &w, &all, 2, stats, 4, &[]),
            None
        );
        // A block with a document that is not a candidate (filtered out) vouches for nothing.
        let some: Vec<u64> = all.iter().copied().filter(|d| *d != 2).collect();
        let with_all = kth_best_floor(std::slice::from_ref(&tp), &w, &all, 2, stats, 3, &[]);
        let without = kth_best_floor(std::slice::from_ref(&tp), &w, &some, 2, stats, 3, &[]);
        assert!(with_all.is_some() && without.is_none());
        // Negative weights (a negative boost) or blocks that do not match give nothing.
        assert_eq!(
            kth_best_floor(std::slice::from_ref(&tp), &[-1.0], &all, 2, stats, 1, &[]),
            None
        );
        assert_eq!(
            kth_best_floor(std::slice::from_ref(&tp), &w, &all, 4, stats, 1, &[]),
            None
        );
    }
}
