//! [`Nearest`]: a nearest-neighbour query on a vector column — the `k` rows nearest to a
//! query vector, found through the column's Lance vector index (IVF_FLAT, IVF_PQ, IVF_SQ,
//! IVF_HNSW_FLAT/SQ/PQ) with pylance's semantics, returned as a record batch with `_rowaddr` and `_distance`.

use std::sync::Arc;

use arrow_array::{ArrayRef, Float32Array, RecordBatch, UInt64Array};
use arrow_schema::{DataType, Field, Schema};

use super::dataset::Dataset;
use crate::error::{Error, Result};
use crate::index::filter::{execute_filter, plan_filter, FilterOptions};
use crate::index::vector::caches::vector_cache;
use crate::index::vector::format::Metric;
use crate::index::vector::search::{nearest, Hit, NearestParams, RowFilter};
use crate::io::IoStats;
use crate::lance::dataset::take::take_rows;

/// Name of the distance column of a nearest query's result.
pub const DISTANCE_COLUMN: &str = "_distance";

/// A nearest-neighbour query, built with [`Dataset::nearest`].
///
/// Same rows and `_distance` as pylance's `to_table(nearest={...})` for the same
/// parameters: the IVF partitions nearest the query (`nprobes`), scored as lance scores
/// them (PQ lookup tables, SQ codes, raw vectors; an HNSW sub-index's graph searched with
/// [`Nearest::ef`] candidates), deleted rows left out, fragments no
/// index segment covers searched exactly (unless [`Nearest::fast_search`]), optionally
/// re-ranked with exact distances ([`Nearest::refine`]), filtered before the search
/// ([`Nearest::filter`]; after it with [`Nearest::postfilter`]).
#[derive(Debug, Clone)]
pub struct Nearest<'a> {
    dataset: &'a Dataset,
    params: NearestParams,
    filter: Option<String>,
    postfilter: bool,
    columns: Vec<String>,
    ef: Option<u32>,
    stats: Option<IoStats>,
}

impl Dataset {
    /// A nearest-neighbour query: the rows of vector column `column` nearest to `query`
    /// (10 by default, 20 partitions probed, as LanceDB's defaults).
    ///
    /// On the bundled sample's IVF_PQ index (the answer pylance 14.0.2 gives, recorded in
    /// `assets/demo/answers.json`):
    ///
    /// ```
    /// # #[tokio::main] async fn main() -> lakeseek::Result<()> {
    /// use arrow_array::cast::AsArray;
    /// use arrow_array::types::{Float32Type, UInt64Type};
    ///
    /// let dataset = lakeseek::Dataset::builder(lakeseek::sample::VECTORS_URL)
    ///     .object_store(lakeseek::sample::store().await?)
    ///     .open()
    ///     .await?;
    /// // Row 1234's vector, each component moved by 0.01.
    /// let query = [
    ///     2.834, 2.365, 1.189, -2.988, -6.731, 7.064, 3.085, -3.663, -0.233, -2.367, -8.941, 2.373,
    ///     -7.71, 1.339, 3.242, 7.401,
    /// ];
    /// let stats = lakeseek::IoStats::new();
    /// let batch = dataset
    ///     .nearest("vec", &query)
    ///     .k(5)
    ///     .nprobes(4)
    ///     .columns(&["id"])
    ///     .stats(&stats)
    ///     .execute()
    ///     .await?;
    /// let rows = batch.column(0).as_primitive::<UInt64Type>().values();
    /// assert_eq!(rows.to_vec(), [1234, 866, 1609, 635, 160]);
    /// let distances = batch.column_by_name("_distance").unwrap().as_primitive::<Float32Type>();
    /// assert!((distances.value(0) - 2.7085).abs() < 1e-3);
    /// assert!(stats.snapshot().requests > 0);
    /// # Ok(()) }
    /// ```
    pub fn nearest(&self, column: &str, query: &[f32]) -> Nearest<'_> {
        Nearest {
            dataset: self,
            params: NearestParams {
                column: column.to_string(),
                query: query.to_vec(),
                k: 10,
                minimum_nprobes: 20,
                maximum_nprobes: None,
                refine_factor: None,
                fast_search: false,
                use_index: true,
                allow_scan: false,
                distance_range: (None, None),
                metric: None,
                half_precision: false,
                ef: None,
                float32: false,
            },
            filter: None,
            postfilter: false,
            columns: Vec::new(),
            ef: None,
            stats: None,
        }
    }
}

impl<'a> Nearest<'a> {
    /// Rows to return (1..=100000).
    pub fn k(mut self, k: usize) -> Self {
        self.params.k = k;
        self
    }

    /// Partitions to probe per index segment: pylance's `nprobes` (sets the minimum and
    /// the maximum).
    pub fn nprobes(mut self, n: usize) -> Self {
        self.params.minimum_nprobes = n;
        self.params.maximum_nprobes = Some(n);
        self
    }

    /// Partitions probed at least (default 20). Without a fixed `nprobes`, the first probes
    /// are widened from the centroid distances as pylance 14.0.2's automatic probing does
    /// (`minimum_nprobes(1)` without a maximum is pylance's default).
    pub fn minimum_nprobes(mut self, n: usize) -> Self {
        self.params.minimum_nprobes = n;
        self
    }

    /// Partitions probed at most: more than the minimum only while fewer than `k` rows
    /// were found (a selective filter).
    pub fn maximum_nprobes(mut self, n: usize) -> Self {
        self.params.maximum_nprobes = Some(n);
        self
    }

    /// Re-rank `k * factor` candidates with exact distances read from the data.
    pub fn refine(mut self, factor: u32) -> Self {
        self.params.refine_factor = Some(factor);
        self
    }

    /// HNSW's `ef`: the candidates each partition's graph search keeps (at least `k`
    /// times the refine factor; default 1.5 times that, as lance). Other index kinds
    /// ignore it.
    pub fn ef(mut self, ef: u32) -> Self {
        self.ef = Some(ef);
        self.params.ef = Some(ef as usize);
        self
    }

    /// A SQL filter (any filter [`Dataset::query`] takes), applied before the search
    /// (pylance's prefilter) unless [`Nearest::postfilter`].
    pub fn filter(mut self, sql: &str) -> Self {
        self.filter = Some(sql.to_string());
        self
    }

    /// Apply the filter to the search's candidates instead (may return fewer than `k`).
    pub fn postfilter(mut self, post: bool) -> Self {
        self.postfilter = post;
        self
    }

    /// Read these columns of the result rows too.
    pub fn columns(mut self, columns: &[&str]) -> Self {
        self.columns = columns.iter().map(|c| c.to_string()).collect();
        self
    }

    /// Search only what the index covers (pylance's `fast_search`).
    pub fn fast_search(mut self, fast: bool) -> Self {
        self.params.fast_search = fast;
        self
    }

    /// `false`: ignore the index and search every vector exactly (needs
    /// [`Nearest::allow_scan`]).
    pub fn use_index(mut self, use_index: bool) -> Self {
        self.params.use_index = use_index;
        self
    }

    /// Allow an exact search over every vector when no index answers (refused by default:
    /// it reads the whole column). Also lets filters scan, as [`crate::Query::allow_scan`].
    pub fn allow_scan(mut self, allow: bool) -> Self {
        self.params.allow_scan = allow;
        self
    }

    /// Keep rows with `lower <= _distance < upper` (either bound optional).
    pub fn distance_range(mut self, lower: Option<f32>, upper: Option<f32>) -> Self {
        self.params.distance_range = (lower, upper);
        self
    }

    /// The metric of an exact search (`l2`, `cosine`, `dot`, `hamming`; default `l2`,
    /// `hamming` on uint8 vectors); an index searches with its own metric.
    pub fn metric(mut self, metric: &str) -> Result<Self> {
        let parsed = Metric::parse(metric)
            .map_err(|_| Error::InvalidArgument(format!("unknown metric {metric:?}")))?;
        self.params.metric = Some(parsed);
        Ok(self)
    }

    /// Count this query's requests into `stats`.
    pub fn stats(mut self, stats: &IoStats) -> Self {
        self.stats = Some(stats.clone());
        self
    }

    /// Run the query: `_rowaddr` (UInt64), `_distance` (Float32), then the asked columns,
    /// nearest first.
    pub async fn execute(&self) -> Result<RecordBatch> {
        self.run().await.map_err(|e| self.dataset.named(e))
    }

    /// Run the query and describe how it ran: the index, its type and metric, segments,
    /// partitions probed (and served from the cache), rows scored, the fragments searched
    /// exactly, candidates refined, the filter's plan.
    pub async fn explain(&self) -> Result<serde_json::Value> {
        let (hits, mut value) = self.hits().await.map_err(|e| self.dataset.named(e))?;
        value["k"] = self.params.k.into();
        value["rows"] = hits.len().into();
        value["filter"] = self.filter.clone().into();
        value["postfilter"] = self.postfilter.into();
        Ok(value)
    }

    async fn run(&self) -> Result<RecordBatch> {
        let (hits, _) = Box::pin(self.hits()).await?;
        self.batch_of(&hits).await
    }

    async fn hits(&self) -> Result<(Vec<Hit>, serde_json::Value)> {
        if self.ef == Some(0) {
            return Err(Error::InvalidArgument("ef must be at least 1".into()));
        }
        let version = self.dataset.version_handle();
        let stats = self.cost_stats();
        let filter = match &self.filter {
            Some(sql) => {
                let options = FilterOptions {
                    allow_scan: self.params.allow_scan,
                };
                let plan = Box::pin(plan_filter(version, sql, options, stats)).await?;
                Some(RowFilter {
                    allowed: Box::pin(execute_filter(version, &plan, stats)).await?,
                    postfilter: self.postfilter,
                })
            }
            None => None,
        };
        let cache = vector_cache(version);
        let answer = Box::pin(nearest(
            version,
            &self.params,
            filter.as_ref(),
            &cache,
            stats,
        ))
        .await?;
        let report = serde_json::to_value(&answer.report)
            .map_err(|e| Error::InvalidArgument(format!("explain: {e}")))?;
        Ok((answer.hits, report))
    }

    async fn batch_of(&self, hits: &[Hit]) -> Result<RecordBatch> {
        let rows: Vec<u64> = hits.iter().map(|h| h.row).collect();
        let distances: ArrayRef = Arc::new(Float32Array::from_iter_values(
            hits.iter().map(|h| h.distance),
        ));
        let mut fields = vec![
            Field::new("_rowaddr", DataType::UInt64, false),
            Field::new(DISTANCE_COLUMN, DataType::Float32, false),
        ];
        let mut arrays: Vec<ArrayRef> = vec![Arc::new(UInt64Array::from(rows.clone())), distances];
        if !self.columns.is_empty() {
            let version = self.dataset.version_handle();
            let taken =
                Box::pin(take_rows(version, &rows, &self.columns, self.cost_stats())).await?;
            if taken.num_rows() != rows.len() {
                return Err(Error::corrupt("take returned another row count than asked"));
            }
            for (field, array) in taken.schema().fields().iter().zip(taken.columns()).skip(1) {
                fields.push(field.as_ref().clone());
                arrays.push(Arc::clone(array));
            }
        }
        Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)?)
    }

    fn cost_stats(&self) -> &IoStats {
        self.stats
            .as_ref()
            .unwrap_or_else(|| self.dataset.stats_handle())
    }
}
