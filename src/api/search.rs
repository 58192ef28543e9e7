//! [`Search`]: full-text search of a column with an INVERTED index, with pylance 14.0.2's
//! tokens, matches and BM25 scores.

use arrow_array::RecordBatch;

use super::Dataset;
use crate::error::{Error, Result};
use crate::index::engine::FilterOptions;
use crate::index::filter::filter_row_addresses;
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

/// A full-text search, built by [`Dataset::search`].
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

    async fn run(&self) -> Result<SearchResult> {
        let column = self
            .column
            .clone()
            .ok_or_else(|| Error::InvalidArgument("full-text search needs a column".into()))?;
        let version = self.dataset.version_handle();
        let stats = self.stats.as_ref().unwrap_or(self.dataset.stats_handle());
        let request = SearchRequest {
            text: self.text.clone(),
            column,
            operator: match self.operator {
                SearchOperator::Or => Operator::Or,
                SearchOperator::And => Operator::And,
            },
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
}
