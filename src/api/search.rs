//! [`Search`]: full-text search of columns with an INVERTED index, with pylance 14.0.2's
//! tokens, matches and BM25 scores: match (OR / AND, boost, fuzziness, prefix), phrase
//! (slop), and [`FullTextQuery`] trees (boolean, multi-match, boost).

use arrow_array::RecordBatch;

use super::Dataset;
use crate::error::{Error, Result};
use crate::index::engine::FilterOptions;
use crate::index::filter::filter_row_addresses;
use crate::index::fts::query::{FtsQuery, MatchLeaf};
use crate::index::fts::search::{search, Operator, SearchRequest};
use crate::io::IoStats;
use crate::lance::dataset::take::take_rows;

/// How the tokens of a full-text query combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SearchOperator {
    /// A row matches when it has any token (pylance's default).
    #[default]
    Or,
    /// A row matches only when it has every token.
    And,
}

/// A full-text query tree, as pylance's `lance.query` classes build them (run it with
/// [`Dataset::search_query`]).
///
/// Scores combine as pylance 14.0.2 combines them: a match's BM25 score times its boost;
/// a boolean query keeps rows matching every `must` clause (or, without one, some
/// `should`) and no `must_not`, scoring the sum of its matching `must` and `should`
/// clauses; a multi-match scores a row by its best column (each column's boost applied);
/// a boost query lowers the positive query's score by `negative_boost` times the negative
/// query's score where that matches. A fuzzy match searches the indexed fragments only
/// (pylance does not tokenize unindexed rows for it).
///
/// ```
/// use lakeseek::{FullTextQuery, SearchOperator};
/// let q = FullTextQuery::boolean()
///     .must(FullTextQuery::phrase("lazy dog", "body").with_slop(1))
///     .should(FullTextQuery::matching("river", "body").with_boost(2.0))
///     .must_not(FullTextQuery::matching("rivr", "title").with_fuzziness(1));
/// let multi = FullTextQuery::multi_match("river fox", &["body", "title"])
///     .with_boosts(&[2.0, 1.0])
///     .with_operator(SearchOperator::And);
/// # let _ = (q, multi);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum FullTextQuery {
    /// Rows with the text's tokens (pylance's `MatchQuery`).
    Match {
        /// Query text.
        text: String,
        /// The column (it needs an INVERTED index).
        column: String,
        /// How the tokens combine.
        operator: SearchOperator,
        /// Score factor (1 by default).
        boost: f32,
        /// Most edits per token for fuzzy matching (0, the default: exact).
        fuzziness: u32,
        /// Leading characters a fuzzy token keeps unchanged.
        prefix_length: u32,
        /// Most dictionary tokens the fuzzy query expands to (50 by default).
        max_expansions: usize,
    },
    /// Rows with the text's tokens in order, at most `slop` positions apart (pylance's
    /// `PhraseQuery`; the index needs positions).
    Phrase {
        /// Query text.
        text: String,
        /// The column.
        column: String,
        /// Positions allowed between the tokens (0: adjacent).
        slop: u32,
    },
    /// Clauses that must, should and must not match (pylance's `BooleanQuery`).
    Boolean {
        /// Every one matches; their scores add.
        must: Vec<FullTextQuery>,
        /// Matching ones add their scores; with no `must`, one of them must match.
        should: Vec<FullTextQuery>,
        /// None may match.
        must_not: Vec<FullTextQuery>,
    },
    /// A match on each of several columns, a row scoring its best column (pylance's
    /// `MultiMatchQuery`).
    MultiMatch {
        /// Query text.
        text: String,
        /// The columns.
        columns: Vec<String>,
        /// Per column score factors (all 1 when empty).
        boosts: Vec<f32>,
        /// How the tokens combine, per column.
        operator: SearchOperator,
    },
    /// The positive query's rows, each score less `negative_boost` times the negative
    /// query's score where that matches (pylance's `BoostQuery`).
    Boost {
        /// The rows and scores.
        positive: Box<FullTextQuery>,
        /// Rows whose score is lowered.
        negative: Box<FullTextQuery>,
        /// The factor of the negative score (0.5 in pylance by default).
        negative_boost: f32,
    },
}

impl FullTextQuery {
    /// A match of `text` on `column` (OR, boost 1, exact).
    pub fn matching(text: &str, column: &str) -> Self {
        Self::Match {
            text: text.into(),
            column: column.into(),
            operator: SearchOperator::Or,
            boost: 1.0,
            fuzziness: 0,
            prefix_length: 0,
            max_expansions: 50,
        }
    }

    /// A phrase `text` on `column` (slop 0).
    pub fn phrase(text: &str, column: &str) -> Self {
        Self::Phrase {
            text: text.into(),
            column: column.into(),
            slop: 0,
        }
    }

    /// A match of `text` on each of `columns`.
    pub fn multi_match(text: &str, columns: &[&str]) -> Self {
        Self::MultiMatch {
            text: text.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            boosts: Vec::new(),
            operator: SearchOperator::Or,
        }
    }

    /// An empty boolean query (add clauses with [`must`](Self::must),
    /// [`should`](Self::should), [`must_not`](Self::must_not)).
    pub fn boolean() -> Self {
        Self::Boolean {
            must: Vec::new(),
            should: Vec::new(),
            must_not: Vec::new(),
        }
    }

    /// `positive`'s rows, less `negative_boost` times `negative`'s score where it matches.
    pub fn boosting(positive: Self, negative: Self, negative_boost: f32) -> Self {
        Self::Boost {
            positive: Box::new(positive),
            negative: Box::new(negative),
            negative_boost,
        }
    }

    /// Add a clause that must match (turns a non-boolean query into `must(self)` first).
    pub fn must(self, clause: Self) -> Self {
        self.clause(clause, 0)
    }

    /// Add a clause that adds its score where it matches.
    pub fn should(self, clause: Self) -> Self {
        self.clause(clause, 1)
    }

    /// Add a clause that must not match.
    pub fn must_not(self, clause: Self) -> Self {
        self.clause(clause, 2)
    }

    fn clause(self, clause: Self, occur: u8) -> Self {
        let (mut must, mut should, mut must_not) = match self {
            Self::Boolean {
                must,
                should,
                must_not,
            } => (must, should, must_not),
            other => (vec![other], Vec::new(), Vec::new()),
        };
        match occur {
            0 => must.push(clause),
            1 => should.push(clause),
            _ => must_not.push(clause),
        }
        Self::Boolean {
            must,
            should,
            must_not,
        }
    }

    /// Set a match's score factor (other queries are unchanged).
    pub fn with_boost(mut self, factor: f32) -> Self {
        if let Self::Match { boost, .. } = &mut self {
            *boost = factor;
        }
        self
    }

    /// Set a match's (or multi-match's) operator.
    pub fn with_operator(mut self, op: SearchOperator) -> Self {
        match &mut self {
            Self::Match { operator, .. } | Self::MultiMatch { operator, .. } => *operator = op,
            _ => {}
        }
        self
    }

    /// Set a match's most edits per token.
    pub fn with_fuzziness(mut self, edits: u32) -> Self {
        if let Self::Match { fuzziness, .. } = &mut self {
            *fuzziness = edits;
        }
        self
    }

    /// Set how many leading characters a fuzzy match keeps (prefix matching).
    pub fn with_prefix_length(mut self, chars: u32) -> Self {
        if let Self::Match { prefix_length, .. } = &mut self {
            *prefix_length = chars;
        }
        self
    }

    /// Set a fuzzy match's most expansions.
    pub fn with_max_expansions(mut self, n: usize) -> Self {
        if let Self::Match { max_expansions, .. } = &mut self {
            *max_expansions = n;
        }
        self
    }

    /// Set a phrase's slop.
    pub fn with_slop(mut self, positions: u32) -> Self {
        if let Self::Phrase { slop, .. } = &mut self {
            *slop = positions;
        }
        self
    }

    /// Set a multi-match's per column boosts.
    pub fn with_boosts(mut self, factors: &[f32]) -> Self {
        if let Self::MultiMatch { boosts, .. } = &mut self {
            *boosts = factors.to_vec();
        }
        self
    }

    pub(crate) fn lower(&self) -> FtsQuery {
        let op = |o: &SearchOperator| match o {
            SearchOperator::Or => Operator::Or,
            SearchOperator::And => Operator::And,
        };
        let all = |v: &[Self]| v.iter().map(Self::lower).collect();
        match self {
            Self::Match {
                text,
                column,
                operator,
                boost,
                fuzziness,
                prefix_length,
                max_expansions,
            } => FtsQuery::Match(MatchLeaf {
                boost: *boost,
                fuzziness: *fuzziness,
                prefix_length: *prefix_length,
                max_expansions: *max_expansions,
                ..MatchLeaf::new(text, column, op(operator))
            }),
            Self::Phrase { text, column, slop } => FtsQuery::Phrase {
                text: text.clone(),
                column: column.clone(),
                slop: *slop,
            },
            Self::Boolean {
                must,
                should,
                must_not,
            } => FtsQuery::Boolean {
                must: all(must),
                should: all(should),
                must_not: all(must_not),
            },
            Self::MultiMatch {
                text,
                columns,
                boosts,
                operator,
            } => FtsQuery::MultiMatch {
                text: text.clone(),
                columns: columns.clone(),
                boosts: boosts.clone(),
                operator: op(operator),
            },
            Self::Boost {
                positive,
                negative,
                negative_boost,
            } => FtsQuery::Boost {
                positive: Box::new(positive.lower()),
                negative: Box::new(negative.lower()),
                negative_boost: *negative_boost,
            },
        }
    }
}

/// A full-text search, built by [`Dataset::search`] (a match or phrase on one column) or
/// [`Dataset::search_query`] (any [`FullTextQuery`]).
///
/// ```no_run
/// # async fn f(dataset: lakeseek::Dataset) -> lakeseek::Result<()> {
/// let found = dataset.search("quick fox").column("body").k(10).execute().await?;
/// for (address, score) in found.row_addresses.iter().zip(&found.scores) {
///     println!("{address} {score}");
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Search<'a> {
    dataset: &'a Dataset,
    text: String,
    column: Option<String>,
    operator: SearchOperator,
    phrase: bool,
    slop: u32,
    boost: f32,
    fuzziness: u32,
    prefix_length: u32,
    query: Option<FullTextQuery>,
    k: Option<usize>,
    index_only: bool,
    filter: Option<String>,
    allow_scan: bool,
    columns: Vec<String>,
    stats: Option<IoStats>,
}

/// What a [`Search`] found: row addresses and BM25 scores, best first.
#[derive(Debug, Clone)]
pub struct SearchResult {
    /// Row addresses (`fragment << 32 | offset`), best first (ties by ascending address).
    pub row_addresses: Vec<u64>,
    /// The `_score` of each row, as pylance computes it.
    pub scores: Vec<f32>,
    /// The asked columns of the rows, in that order (after a `_rowaddr` column), if any.
    pub batch: Option<RecordBatch>,
    /// What the search read and counted: index, segments, partitions, the query's tokens,
    /// corpus statistics, unindexed fragments.
    pub explain: serde_json::Value,
}

impl<'a> Search<'a> {
    pub(crate) fn new(dataset: &'a Dataset, text: &str) -> Self {
        Self {
            dataset,
            text: text.to_string(),
            column: None,
            operator: SearchOperator::Or,
            phrase: false,
            slop: 0,
            boost: 1.0,
            fuzziness: 0,
            prefix_length: 0,
            query: None,
            k: None,
            index_only: false,
            filter: None,
            allow_scan: false,
            columns: Vec::new(),
            stats: None,
        }
    }

    /// The column to search (required; it must have an INVERTED index).
    pub fn column(mut self, column: &str) -> Self {
        self.column = Some(column.to_string());
        self
    }

    /// How the query's tokens combine (OR by default).
    pub fn operator(mut self, operator: SearchOperator) -> Self {
        self.operator = operator;
        self
    }

    /// Search the text as a phrase: its tokens in order (within [`slop`](Self::slop)
    /// positions); the index must have been built with positions.
    pub fn phrase(mut self, phrase: bool) -> Self {
        self.phrase = phrase;
        self
    }

    /// Positions allowed between a phrase's tokens (0 by default; implies
    /// [`phrase`](Self::phrase)).
    pub fn slop(mut self, slop: u32) -> Self {
        self.slop = slop;
        self.phrase = true;
        self
    }

    /// Multiply the match's scores by `boost`.
    pub fn boost(mut self, boost: f32) -> Self {
        self.boost = boost;
        self
    }

    /// Match each token to the index's tokens within `edits` edits (fuzzy matching).
    pub fn fuzziness(mut self, edits: u32) -> Self {
        self.fuzziness = edits;
        self
    }

    /// With [`fuzziness`](Self::fuzziness): keep the first `chars` characters of each
    /// token unchanged.
    pub fn prefix_length(mut self, chars: u32) -> Self {
        self.prefix_length = chars;
        self
    }

    /// Keep the best `k` rows (all matches by default).
    pub fn k(mut self, k: usize) -> Self {
        self.k = Some(k);
        self
    }

    /// Search only the fragments the index covers (by default, fragments appended after
    /// the index was built are read and tokenized, as pylance does).
    pub fn index_only(mut self, index_only: bool) -> Self {
        self.index_only = index_only;
        self
    }

    /// Only rows where the SQL `filter` is TRUE (applied before `k`: the best `k` of the
    /// filtered rows).
    pub fn filter(mut self, filter: &str) -> Self {
        self.filter = Some(filter.to_string());
        self
    }

    /// Let the filter scan data where no index answers it.
    pub fn allow_scan(mut self, allow: bool) -> Self {
        self.allow_scan = allow;
        self
    }

    /// Read these top-level columns of the found rows.
    pub fn columns(mut self, columns: &[&str]) -> Self {
        self.columns = columns.iter().map(|c| c.to_string()).collect();
        self
    }

    /// Count this search's requests into `stats` (instead of the dataset handle's stats).
    pub fn stats(mut self, stats: &IoStats) -> Self {
        self.stats = Some(stats.clone());
        self
    }

    /// Run the search.
    pub async fn execute(&self) -> Result<SearchResult> {
        self.run().await.map_err(|e| self.dataset.named(e))
    }

    /// The query this search runs.
    fn query(&self) -> Result<FullTextQuery> {
        if let Some(q) = &self.query {
            return Ok(q.clone());
        }
        let column = self
            .column
            .as_deref()
            .ok_or_else(|| Error::InvalidArgument("full-text search needs a column".into()))?;
        if self.phrase {
            if self.fuzziness > 0 || self.operator == SearchOperator::And {
                return Err(Error::InvalidArgument(
                    "a phrase search takes no fuzziness or operator".into(),
                ));
            }
            return Ok(FullTextQuery::phrase(&self.text, column).with_slop(self.slop));
        }
        Ok(FullTextQuery::matching(&self.text, column)
            .with_operator(self.operator)
            .with_boost(self.boost)
            .with_fuzziness(self.fuzziness)
            .with_prefix_length(self.prefix_length))
    }

    async fn run(&self) -> Result<SearchResult> {
        let query = self.query()?.lower();
        let version = self.dataset.version_handle();
        let stats = self.stats.as_ref().unwrap_or(self.dataset.stats_handle());
        let request = SearchRequest {
            query,
            k: if self.filter.is_some() { None } else { self.k },
            index_only: self.index_only,
        };
        let searching = search(version, &request, stats);
        let filtering = async {
            match &self.filter {
                Some(f) => {
                    let options = FilterOptions {
                        allow_scan: self.allow_scan,
                    };
                    filter_row_addresses(version, f, options, stats)
                        .await
                        .map(Some)
                }
                None => Ok(None),
            }
        };
        let (mut found, allowed) = futures::try_join!(searching, filtering)?;
        if let Some(allowed) = allowed {
            found.hits.retain(|h| allowed.contains(h.row_address));
            if let Some(k) = self.k {
                found.hits.truncate(k);
            }
        }
        let row_addresses: Vec<u64> = found.hits.iter().map(|h| h.row_address).collect();
        let scores = found.hits.iter().map(|h| h.score).collect();
        let batch = if self.columns.is_empty() {
            None
        } else {
            Some(take_rows(version, &row_addresses, &self.columns, stats).await?)
        };
        Ok(SearchResult {
            row_addresses,
            scores,
            batch,
            explain: found.explain,
        })
    }
}

impl Dataset {
    /// A full-text search for `text` (tokenized by the column's INVERTED index, matched
    /// and scored with BM25 as pylance 14.0.2 does); set the column with
    /// [`Search::column`].
    pub fn search(&self, text: &str) -> Search<'_> {
        Search::new(self, text)
    }

    /// A full-text search for any [`FullTextQuery`] (boolean, multi-match, boost, ...);
    /// `k`, filter, columns and stats are set on the returned [`Search`] as usual.
    pub fn search_query(&self, query: FullTextQuery) -> Search<'_> {
        let mut search = Search::new(self, "");
        search.query = Some(query);
        search
    }
}
