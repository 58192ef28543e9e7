//! Pure pieces of phrase and fuzzy matching, as lance 14.0.2 does them: the position check
//! of an indexed phrase (`wand.rs`: exact for slop 0, lance's cursor walk otherwise), the
//! check of a scanned row's phrase (`flat_search.rs`), and fuzzy term matching (Levenshtein
//! over characters, an exact prefix of `prefix_length` characters).

/// One phrase clause of a document: its positions there and its position in the query.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clause<'a> {
    /// The clause token's positions in the document, ascending.
    pub(crate) positions: &'a [u32],
    /// The token's position in the query.
    pub(crate) query_position: u32,
}

/// Whether an indexed document's clauses form the phrase within `slop`.
pub(crate) fn indexed_phrase_matches(clauses: &[Clause<'_>], slop: u32) -> bool {
    if clauses.is_empty() || clauses.iter().any(|c| c.positions.is_empty()) {
        return false;
    }
    if slop == 0 {
        return exact(clauses);
    }
    sloppy(clauses, slop as i64)
}

/// Some `r` with `r + query_position` in every clause's positions.
fn exact(clauses: &[Clause<'_>]) -> bool {
    let anchor = clauses
        .iter()
        .min_by_key(|c| c.positions.len())
        .expect("clauses are not empty");
    anchor.positions.iter().any(|&p| {
        let r = i64::from(p) - i64::from(anchor.query_position);
        clauses.iter().all(|c| {
            let want = r + i64::from(c.query_position);
            u32::try_from(want).is_ok_and(|w| c.positions.binary_search(&w).is_ok())
        })
    })
}

/// lance's walk: cursors in query order; consecutive relative positions `last <= next <=
/// last + slop` everywhere, else every cursor advances to the largest bound seen.
fn sloppy(clauses: &[Clause<'_>], slop: i64) -> bool {
    let mut order: Vec<&Clause<'_>> = clauses.iter().collect();
    order.sort_by_key(|c| c.query_position);
    let mut at = vec![0usize; order.len()];
    let rel = |i: usize, at: &[usize]| -> Option<i64> {
        let c = order[i];
        c.positions
            .get(at[i])
            .map(|p| i64::from(*p) - i64::from(c.query_position))
    };
    loop {
        let mut bound: Option<i64> = None;
        let mut all_fit = true;
        for i in 0..order.len().saturating_sub(1) {
            let (Some(last), Some(next)) = (rel(i, &at), rel(i + 1, &at)) else {
                return false;
            };
            let move_to = if last > next {
                last
            } else {
                (last + 1).max(next - slop)
            };
            bound = bound.max(Some(move_to));
            if !(last <= next && next <= last + slop) {
                all_fit = false;
                break;
            }
        }
        if all_fit {
            return true;
        }
        let bound = bound.expect("a failed window sets the bound");
        for (i, c) in order.iter().enumerate() {
            let least = (bound + i64::from(c.query_position)).max(0);
            let rest = &c.positions[at[i].min(c.positions.len())..];
            at[i] += rest.partition_point(|p| i64::from(*p) < least);
        }
    }
}

/// Whether a scanned row's clause positions (in query order) form the phrase within
/// `slop` (lance's flat check: each next clause within `slop` after a surviving
/// candidate of the previous one).
pub(crate) fn flat_phrase_matches(clauses: &[Clause<'_>], slop: u32) -> bool {
    let Some(first) = clauses.first() else {
        return false;
    };
    let mut candidates: Vec<u32> = first.positions.to_vec();
    if candidates.is_empty() {
        return false;
    }
    for pair in clauses.windows(2) {
        let Some(delta) = pair[1].query_position.checked_sub(pair[0].query_position) else {
            return false;
        };
        let next: Vec<u32> = pair[1]
            .positions
            .iter()
            .copied()
            .filter(|&p| {
                candidates.iter().any(|&c| {
                    let least = u64::from(c) + u64::from(delta);
                    least <= u64::from(p) && u64::from(p) <= least + u64::from(slop)
                })
            })
            .collect();
        if next.is_empty() {
            return false;
        }
        candidates = next;
    }
    true
}

/// A fuzzy term: matches dictionary tokens within `distance` edits that keep the first
/// `prefix_length` characters.
#[derive(Debug, Clone)]
pub(crate) struct FuzzyTerm {
    prefix: String,
    whole: String,
    suffix: String,
    ascii: bool,
    distance: u32,
}

impl FuzzyTerm {
    /// The fuzzy form of query token `token`.
    pub(crate) fn new(token: &str, distance: u32, prefix_length: u32) -> Self {
        let end = token
            .char_indices()
            .nth(prefix_length as usize)
            .map_or(token.len(), |(i, _)| i);
        Self {
            prefix: token[..end].to_string(),
            whole: token.to_string(),
            suffix: token[end..].to_string(),
            ascii: token.is_ascii(),
            distance,
        }
    }

    /// Whether dictionary token `candidate` matches (lance: the whole token's distance for
    /// ASCII query tokens, the suffix's otherwise; the prefix exactly).
    pub(crate) fn matches(&self, candidate: &str) -> bool {
        let Some(rest) = candidate.strip_prefix(&self.prefix) else {
            return false;
        };
        let (query, candidate) = if self.ascii {
            (self.whole.as_str(), candidate)
        } else {
            (self.suffix.as_str(), rest)
        };
        // The lengths alone rule most dictionary tokens out before the edit distance.
        let (q, c) = (query.chars().count(), candidate.chars().count());
        q.abs_diff(c) <= self.distance as usize
            && strsim::levenshtein(query, candidate) <= self.distance as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(positions: &[u32], query_position: u32) -> Clause<'_> {
        Clause {
            positions,
            query_position,
        }
    }

    #[test]
    fn exact_and_sloppy_phrases() {
        // "a b": a at 3, b at 4.
        assert!(indexed_phrase_matches(&[c(&[3], 0), c(&[4], 1)], 0));
        assert!(!indexed_phrase_matches(&[c(&[3], 0), c(&[5], 1)], 0));
        assert!(indexed_phrase_matches(&[c(&[3], 0), c(&[5], 1)], 1));
        // Order matters: b before a is not within slop 1 (relative 2 then 2 - 1 = 1... ).
        assert!(!indexed_phrase_matches(&[c(&[5], 0), c(&[3], 1)], 1));
        assert!(flat_phrase_matches(&[c(&[3], 0), c(&[5], 1)], 1));
        assert!(!flat_phrase_matches(&[c(&[3], 0), c(&[6], 1)], 1));
        // A stop word between: query positions 0 and 2.
        assert!(indexed_phrase_matches(&[c(&[1], 0), c(&[3], 2)], 0));
    }

    #[test]
    fn fuzzy_terms() {
        let t = FuzzyTerm::new("rivr", 1, 0);
        assert!(t.matches("river") && t.matches("rivr") && !t.matches("rover"));
        let t = FuzzyTerm::new("seerch", 2, 2);
        assert!(t.matches("search") && !t.matches("reerch"));
        assert!(FuzzyTerm::new("été", 1, 1).matches("éte"));
    }
}
