//! The full-text query tree pylance 14.0.2 accepts (`lance.query`): match (OR / AND,
//! boost, fuzziness, prefix length), phrase (slop), boolean (must / should / must_not),
//! multi-match over columns, and boost (a negative query lowering scores); and how
//! the leaves' BM25 scores combine, as pylance combines them:
//!
//! * match: the leaf's scores times `boost`;
//! * boolean: every `must` clause matches (or, without one, some `should`), no `must_not`
//!   does; the score is the sum of the matching `must` and `should` scores;
//! * multi-match: one match per column (its boost applied); a row scores its best column;
//! * boost: the positive query's rows, less `negative_boost` times the negative query's
//!   score where it matches too.
//!
//! Each leaf is searched on its own (its own statistics), all leaves of a tree at once.

use std::collections::HashMap;

use futures::future::BoxFuture;
use futures::FutureExt;

use super::search::{search_leaf, Fuzzy, Leaf, Operator};
use crate::error::{Error, Result};
use crate::io::IoStats;
use crate::lance::dataset::DatasetVersion;

/// A match query on one column.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MatchLeaf {
    /// Query text.
    pub(crate) text: String,
    /// The indexed column.
    pub(crate) column: String,
    /// OR / AND.
    pub(crate) operator: Operator,
    /// Score factor.
    pub(crate) boost: f32,
    /// Most edits per token (0: exact).
    pub(crate) fuzziness: u32,
    /// Leading characters a fuzzy token keeps.
    pub(crate) prefix_length: u32,
    /// Most dictionary tokens a fuzzy query expands to.
    pub(crate) max_expansions: usize,
}

impl MatchLeaf {
    /// An exact match of `text` on `column`.
    pub(crate) fn new(text: &str, column: &str, operator: Operator) -> Self {
        Self {
            text: text.to_string(),
            column: column.to_string(),
            operator,
            boost: 1.0,
            fuzziness: 0,
            prefix_length: 0,
            max_expansions: 50,
        }
    }
}

/// A full-text query.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FtsQuery {
    /// Match tokens.
    Match(MatchLeaf),
    /// The tokens in order, at most `slop` positions apart.
    Phrase {
        /// Query text.
        text: String,
        /// The indexed column.
        column: String,
        /// Positions allowed between the tokens.
        slop: u32,
    },
    /// Clauses that must, should and must not match.
    Boolean {
        /// Every one matches; scores add.
        must: Vec<FtsQuery>,
        /// Matching ones add their scores (one must match when there is no `must`).
        should: Vec<FtsQuery>,
        /// None may match.
        must_not: Vec<FtsQuery>,
    },
    /// One match per column; a row scores its best column.
    MultiMatch {
        /// Query text.
        text: String,
        /// The indexed columns.
        columns: Vec<String>,
        /// Per column score factor (1 when empty).
        boosts: Vec<f32>,
        /// OR / AND, per column.
        operator: Operator,
    },
    /// `positive`'s rows, less `negative_boost` times `negative`'s score where it matches.
    Boost {
        /// The rows and scores.
        positive: Box<FtsQuery>,
        /// Rows whose score is lowered.
        negative: Box<FtsQuery>,
        /// The factor of the negative score.
        negative_boost: f32,
    },
}

/// Row address → score.
pub(crate) type Scores = HashMap<u64, f32>;

/// Every matching row of `query` with its score (with `limit`, a lone leaf may leave out
/// rows that cannot be among its best `limit`), and what the leaves read (a single leaf's
/// explain as is; otherwise `{"query": kind, "leaves": [...]}`).
pub(crate) async fn evaluate(
    dataset: &DatasetVersion,
    query: &FtsQuery,
    index_only: bool,
    limit: Option<usize>,
    stats: &IoStats,
) -> Result<(Scores, serde_json::Value)> {
    let mut leaves = Vec::new();
    // Only a lone leaf of boost 1 may leave out rows past the best `limit`: a tree
    // combines its leaves' scores, and a boost can tie scores a leaf told apart.
    let limit = match query {
        FtsQuery::Match(m) if m.boost == 1.0 => limit,
        FtsQuery::Phrase { .. } => limit,
        _ => None,
    };
    let scores = eval(dataset, query, index_only, limit, stats, &mut leaves).await?;
    let explain = match (query, leaves.len()) {
        (FtsQuery::Match(_) | FtsQuery::Phrase { .. }, 1) => leaves.pop().unwrap_or_default(),
        _ => serde_json::json!({ "query": kind(query), "leaves": leaves }),
    };
    Ok((scores, explain))
}

fn kind(query: &FtsQuery) -> &'static str {
    match query {
        FtsQuery::Match(_) => "match",
        FtsQuery::Phrase { .. } => "phrase",
        FtsQuery::Boolean { .. } => "boolean",
        FtsQuery::MultiMatch { .. } => "multi_match",
        FtsQuery::Boost { .. } => "boost",
    }
}

fn eval<'a>(
    dataset: &'a DatasetVersion,
    query: &'a FtsQuery,
    index_only: bool,
    limit: Option<usize>,
    stats: &'a IoStats,
    explain: &'a mut Vec<serde_json::Value>,
) -> BoxFuture<'a, Result<Scores>> {
    async move {
        match query {
            FtsQuery::Match(m) => {
                let fuzzy = (m.fuzziness > 0).then_some(Fuzzy {
                    distance: m.fuzziness,
                    prefix_length: m.prefix_length,
                    max_expansions: m.max_expansions,
                });
                let leaf = Leaf {
                    text: &m.text,
                    column: &m.column,
                    operator: m.operator,
                    phrase_slop: None,
                    fuzzy,
                    limit,
                };
                leaf_scores(dataset, &leaf, m.boost, index_only, stats, explain).await
            }
            FtsQuery::Phrase { text, column, slop } => {
                let leaf = Leaf {
                    text,
                    column,
                    operator: Operator::And,
                    phrase_slop: Some(*slop),
                    fuzzy: None,
                    limit,
                };
                leaf_scores(dataset, &leaf, 1.0, index_only, stats, explain).await
            }
            FtsQuery::Boolean {
                must,
                should,
                must_not,
            } => {
                if must.is_empty() && should.is_empty() {
                    return Err(Error::InvalidArgument(
                        "boolean query must have at least one should/must query".into(),
                    ));
                }
                let all: Vec<&FtsQuery> = must.iter().chain(should).chain(must_not).collect();
                let mut results = all_of(dataset, &all, index_only, stats, explain).await?;
                let excluded = results.split_off(must.len() + should.len());
                let optional = results.split_off(must.len());
                Ok(combine_boolean(results, optional, excluded))
            }
            FtsQuery::MultiMatch {
                text,
                columns,
                boosts,
                operator,
            } => {
                if columns.is_empty() || (!boosts.is_empty() && boosts.len() != columns.len()) {
                    return Err(Error::InvalidArgument(
                        "multi-match needs columns (and one boost per column, if any)".into(),
                    ));
                }
                let leaves: Vec<FtsQuery> = columns
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        let mut m = MatchLeaf::new(text, c, *operator);
                        m.boost = boosts.get(i).copied().unwrap_or(1.0);
                        FtsQuery::Match(m)
                    })
                    .collect();
                let refs: Vec<&FtsQuery> = leaves.iter().collect();
                let results = all_of(dataset, &refs, index_only, stats, explain).await?;
                let mut out = Scores::new();
                for r in results {
                    for (row, s) in r {
                        let e = out.entry(row).or_insert(s);
                        *e = e.max(s);
                    }
                }
                Ok(out)
            }
            FtsQuery::Boost {
                positive,
                negative,
                negative_boost,
            } => {
                let both = [positive.as_ref(), negative.as_ref()];
                let mut r = all_of(dataset, &both, index_only, stats, explain).await?;
                let negative = r.pop().unwrap_or_default();
                let mut positive = r.pop().unwrap_or_default();
                for (row, s) in positive.iter_mut() {
                    if let Some(n) = negative.get(row) {
                        *s -= negative_boost * n;
                    }
                }
                Ok(positive)
            }
        }
    }
    .boxed()
}

/// The scores of `queries`, searched concurrently, in order.
async fn all_of(
    dataset: &DatasetVersion,
    queries: &[&FtsQuery],
    index_only: bool,
    stats: &IoStats,
    explain: &mut Vec<serde_json::Value>,
) -> Result<Vec<Scores>> {
    let mut explains: Vec<Vec<serde_json::Value>> = vec![Vec::new(); queries.len()];
    let runs = queries
        .iter()
        .zip(explains.iter_mut())
        .map(|(q, e)| eval(dataset, q, index_only, None, stats, e));
    let out = futures::future::try_join_all(runs).await?;
    explain.extend(explains.into_iter().flatten());
    Ok(out)
}

async fn leaf_scores(
    dataset: &DatasetVersion,
    leaf: &Leaf<'_>,
    boost: f32,
    index_only: bool,
    stats: &IoStats,
    explain: &mut Vec<serde_json::Value>,
) -> Result<Scores> {
    let (hits, e) = search_leaf(dataset, leaf, index_only, stats).await?;
    explain.push(e);
    Ok(hits
        .into_iter()
        .map(|h| (h.row_address, h.score * boost))
        .collect())
}

/// Boolean combination: rows in every `must` (or, with none, in some `should`) and in no
/// `must_not`; scores summed over the matching `must` and `should` clauses.
fn combine_boolean(must: Vec<Scores>, should: Vec<Scores>, must_not: Vec<Scores>) -> Scores {
    let mut out = Scores::new();
    if let Some((first, rest)) = must.split_first() {
        'rows: for (row, s) in first {
            let mut total = *s;
            for m in rest {
                match m.get(row) {
                    Some(x) => total += x,
                    None => continue 'rows,
                }
            }
            out.insert(*row, total);
        }
        for s in &should {
            for (row, total) in out.iter_mut() {
                if let Some(x) = s.get(row) {
                    *total += x;
                }
            }
        }
    } else {
        for s in &should {
            for (row, x) in s {
                *out.entry(*row).or_insert(0.0) += x;
            }
        }
    }
    out.retain(|row, _| !must_not.iter().any(|n| n.contains_key(row)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scores(pairs: &[(u64, f32)]) -> Scores {
        pairs.iter().copied().collect()
    }

    #[test]
    fn boolean_combines_like_pylance() {
        let must = vec![scores(&[(1, 1.0), (2, 2.0)])];
        let should = vec![scores(&[(2, 0.5), (3, 9.0)])];
        let not = vec![scores(&[(1, 0.1)])];
        assert_eq!(combine_boolean(must, should, not), scores(&[(2, 2.5)]));
        let should = vec![scores(&[(2, 0.5), (3, 9.0)]), scores(&[(3, 1.0)])];
        assert_eq!(
            combine_boolean(Vec::new(), should, Vec::new()),
            scores(&[(2, 0.5), (3, 10.0)])
        );
    }
}
