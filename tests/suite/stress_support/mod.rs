//! A mixed query workload over the in-process S3 test server, shared by the stress test
//! (`tests/suite/stress_mixed.rs`) and the peak-RSS example (`examples/stress_rss.rs`).
//!
//! Four kinds of operations, drawn deterministically from a seed:
//! * random-row reads of Lance files (flat, nested and 2.3 sparse columns, 2.1-2.3),
//! * BTree queries of `tests/fixtures/datasets/answers.json` (latest and pinned versions),
//! * `any_element` list-element queries of `tests/fixtures/list_element/answers.json`
//!   (and their NOT),
//! * ecp k-NN searches (several pages of "next k") of `tests/fixtures/ecp/expected`.
//!
//! [`Workload::baseline`] computes every distinct operation's answer one at a time on
//! fresh handles and caches; [`Workload::run_concurrent`] then runs many operations at once
//! over ONE set of shared caches and returns every answer for comparison.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::ecp::{EcpIndex, OpenOptions as EcpOpenOptions, QueryOptions, SearchParams};
use crate::index::list_element::parse_any_element_filter;
use crate::index::list_element::query::AnyElementOptions;
use crate::io::admission::{Admission, DEFAULT_MAX_IN_FLIGHT_BYTES};
use crate::io::list::ObjectStoreLister;
use crate::io::{FetchOptions, IoStats, OpenedUrl, RangeFetcher};
use crate::lance::dataset::{DatasetSession, DatasetStore, DatasetVersion};
use crate::lance::reader::{LanceFileReader, ReaderCaches, RowSelection};
use crate::suite::common::any_element::query_any_element;
use crate::suite::common::btree_query::{query_row_addresses, QueryOptions as BTreeQueryOptions};
use arrow_array::RecordBatch;
use futures::StreamExt;
use object_store::path::Path;
use serde_json::Value;

use crate::suite::common::S3TestServer;

/// Lance files read by random takes: (key under `files/`, rows).
const FILES: &[&str] = &[
    "nested/v2_3_sparse/nested.lance",
    "nested/v2_3_sparse/detections.lance",
    "nested/v2_3/nested.lance",
    "nested/v2_2/nested.lance",
    "nested/v2_2/detections.lance",
    "v2_3/strings.lance",
    "v2_2/multipage.lance",
    "v2_2/nulls_constants.lance",
    "v2_1/vectors.lance",
    "v2_3/rle.lance",
];

/// ecp fixtures searched (the two largest are left out to keep uploads quick).
const ECP: &[&str] = &["l1_ip_f32", "l2_ip_u8", "l2_l2_f32"];

/// List-element datasets queried.
const LIST_ELEMENT: &[&str] = &["detections", "types", "renamed"];

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn read_json(rel: &str) -> Value {
    let text = std::fs::read_to_string(fixtures().join(rel)).expect("fixture json");
    serde_json::from_str(&text).expect("fixture json parses")
}

/// One operation of the workload.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Op {
    /// Read `rows` (sorted) or a row range of top-level `columns` of a file.
    File {
        /// Index into the opened files.
        file: usize,
        /// Top-level field indices.
        columns: Vec<usize>,
        /// Which rows.
        selection: RowSelection,
    },
    /// A BTree (or allowed scan) query.
    BTree {
        /// Dataset name under `ds/`.
        dataset: String,
        /// Pinned version.
        version: Option<u64>,
        /// Filter.
        filter: String,
        /// Allow evaluating on data.
        allow_scan: bool,
    },
    /// An `any_element` query.
    ListElement {
        /// Dataset name under `le/`.
        dataset: String,
        /// Filter.
        filter: String,
        /// Ask for its NOT.
        negated: bool,
    },
    /// `pages` of k-NN results of a fixture case.
    Ecp {
        /// Index into [`ECP`].
        index: usize,
        /// Query vector.
        query: Vec<f32>,
        /// Excluded ids.
        exclude: Vec<u32>,
        /// Search parameters.
        search_exp: u32,
        /// Search parameters.
        max_increments: i64,
        /// k of each page.
        pages: Vec<usize>,
    },
}

impl Op {
    /// Short kind name for reports.
    pub(super) fn kind(&self) -> &'static str {
        match self {
            Op::File { .. } => "file",
            Op::BTree { .. } => "btree",
            Op::ListElement { .. } => "list_element",
            Op::Ecp { .. } => "ecp",
        }
    }
}

/// The result of an operation, compared exactly (scores by bit pattern).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Answer {
    /// Row addresses, ascending.
    Rows(Vec<u64>),
    /// A read batch.
    Batch(RecordBatch),
    /// Per page: ids and score bits.
    Ecp(Vec<(Vec<u32>, Vec<u32>)>),
    /// The operation failed with this message.
    Error(String),
}

/// A deterministic pseudo-random sequence (splitmix64).
#[derive(Debug, Clone)]
pub(super) struct Rng(u64);

impl Rng {
    /// Seeded sequence.
    pub(super) fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// Next 64 bits.
    pub(super) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// Handles over one S3 client: a dataset store, a fetcher and the opened ecp indices.
#[derive(Clone)]
pub(super) struct Handles {
    opened: OpenedUrl,
    store: DatasetStore,
    fetcher: RangeFetcher,
    session: Arc<DatasetSession>,
    ecp: Vec<EcpIndex>,
}

impl Handles {
    /// Open everything through a new client of `s3`; `cache_bytes` sizes each cache of
    /// the dataset session and each ecp node cache.
    pub(super) async fn open(s3: &S3TestServer, cache_bytes: u64) -> Self {
        Self::open_limited(s3, cache_bytes, crate::DEFAULT_MAX_REQUESTS).await
    }

    /// [`open`](Self::open) with every request (GETs of files, datasets, indices and ecp
    /// nodes, and LISTs) through ONE admission control of `max_requests` slots, as a
    /// session shares it.
    pub(super) async fn open_limited(
        s3: &S3TestServer,
        cache_bytes: u64,
        max_requests: usize,
    ) -> Self {
        let opened = s3.open("");
        let admission = Some(Admission::new(max_requests, DEFAULT_MAX_IN_FLIGHT_BYTES));
        let lister = Arc::new(
            ObjectStoreLister::for_scheme(Arc::clone(&opened.store), &opened.scheme)
                .with_admission(admission.clone()),
        );
        let mut store = DatasetStore::new(Arc::clone(&opened.source), lister);
        store.fetcher = store.fetcher.with_admission(admission.clone());
        let fetcher = RangeFetcher::new(Arc::clone(&opened.source), FetchOptions::default())
            .with_admission(admission.clone());
        let session = Arc::new(DatasetSession::new(cache_bytes));
        let mut ecp = Vec::new();
        for name in ECP {
            let index = EcpIndex::open_with(
                fetcher.clone(),
                None,
                Path::from(format!("idx/{name}")),
                &s3.url(&format!("idx/{name}")),
                EcpOpenOptions {
                    node_cache_bytes: cache_bytes,
                    ..EcpOpenOptions::default()
                },
            )
            .await
            .expect("open ecp fixture");
            ecp.push(index);
        }
        Self {
            opened,
            store,
            fetcher,
            session,
            ecp,
        }
    }

    /// The admission control every request of these handles goes through.
    pub(super) fn admission(&self) -> Option<&Arc<Admission>> {
        self.fetcher.admission()
    }

    /// The shared dataset session.
    pub(super) fn session(&self) -> &Arc<DatasetSession> {
        &self.session
    }

    /// The shared ecp indices.
    pub(super) fn ecp(&self) -> &[EcpIndex] {
        &self.ecp
    }

    /// The store handle.
    pub(super) fn opened(&self) -> &OpenedUrl {
        &self.opened
    }

    /// Run one operation.
    pub(super) async fn run(&self, op: &Op) -> Answer {
        let stats = IoStats::new();
        let result = match op {
            Op::File {
                file,
                columns,
                selection,
            } => self.read_file(*file, columns, selection, &stats).await,
            Op::BTree {
                dataset,
                version,
                filter,
                allow_scan,
            } => {
                self.btree(dataset, *version, filter, *allow_scan, &stats)
                    .await
            }
            Op::ListElement {
                dataset,
                filter,
                negated,
            } => self.list_element(dataset, filter, *negated, &stats).await,
            Op::Ecp {
                index,
                query,
                exclude,
                search_exp,
                max_increments,
                pages,
            } => {
                let options = QueryOptions {
                    params: SearchParams {
                        search_exp: *search_exp,
                        max_increments: *max_increments,
                    },
                    exclude: exclude.clone(),
                    prefetch: None,
                };
                self.ecp_pages(*index, query, options, pages).await
            }
        };
        result.unwrap_or_else(|e| Answer::Error(e.to_string()))
    }

    async fn read_file(
        &self,
        file: usize,
        columns: &[usize],
        selection: &RowSelection,
        stats: &IoStats,
    ) -> crate::Result<Answer> {
        let path = Path::from(format!("files/{}", FILES[file]));
        let reader = LanceFileReader::open(
            self.fetcher.clone(),
            path,
            None,
            Arc::clone(&self.session.reader_caches),
            stats,
        )
        .await?;
        Ok(Answer::Batch(
            reader.read_rows(columns, selection, stats).await?,
        ))
    }

    async fn btree(
        &self,
        dataset: &str,
        version: Option<u64>,
        filter: &str,
        allow_scan: bool,
        stats: &IoStats,
    ) -> crate::Result<Answer> {
        let ds = DatasetVersion::open(
            self.store.clone(),
            Path::from(format!("ds/{dataset}.lance")),
            version,
            Arc::clone(&self.session),
            stats,
        )
        .await?;
        let a = query_row_addresses(&ds, filter, BTreeQueryOptions { allow_scan }, stats).await?;
        Ok(Answer::Rows(a.row_addresses.iter().collect()))
    }

    async fn list_element(
        &self,
        dataset: &str,
        filter: &str,
        negated: bool,
        stats: &IoStats,
    ) -> crate::Result<Answer> {
        let ds = DatasetVersion::open(
            self.store.clone(),
            Path::from(format!("le/{dataset}.lance")),
            None,
            Arc::clone(&self.session),
            stats,
        )
        .await?;
        let mut call = parse_any_element_filter(filter)?;
        call.negated = negated;
        let a = query_any_element(&ds, &call, AnyElementOptions::default(), stats).await?;
        Ok(Answer::Rows(a.row_addresses.iter().collect()))
    }

    async fn ecp_pages(
        &self,
        index: usize,
        query: &[f32],
        options: QueryOptions,
        pages: &[usize],
    ) -> crate::Result<Answer> {
        let mut q = self.ecp[index].query(query.to_vec(), options)?;
        let mut out = Vec::new();
        for k in pages {
            let page = q.next_k(*k).await?;
            out.push((page.ids, page.scores.iter().map(|s| s.to_bits()).collect()));
        }
        Ok(Answer::Ecp(out))
    }
}

/// File facts needed to draw reads: top-level field count and row count.
#[derive(Debug, Clone)]
struct FileShape {
    fields: usize,
    rows: u64,
}

/// The fixtures uploaded to a server plus the pools operations are drawn from.
pub(super) struct Workload {
    files: Vec<FileShape>,
    btree: Vec<Op>,
    list_element: Vec<Op>,
    ecp: Vec<Op>,
}

impl Workload {
    /// Upload every fixture the workload reads to `s3` and collect the query pools.
    pub(super) async fn upload(s3: &S3TestServer) -> Self {
        let root = fixtures();
        for file in FILES {
            let data = std::fs::read(root.join("files").join(file)).expect("fixture file");
            s3.put(&format!("files/{file}"), data).await;
        }
        let answers = read_json("datasets/answers.json");
        let mut btree = Vec::new();
        for (name, ds) in answers["datasets"].as_object().expect("datasets") {
            s3.upload_dir(
                &root.join(format!("datasets/{name}.lance")),
                &format!("ds/{name}.lance"),
            )
            .await;
            let unindexed: Vec<&str> = ds["unindexed_filters"]
                .as_array()
                .map(|v| v.iter().filter_map(|x| x.as_str()).collect())
                .unwrap_or_default();
            for q in ds["queries"].as_array().expect("queries") {
                let filter = q["filter"].as_str().expect("filter");
                btree.push(Op::BTree {
                    dataset: name.clone(),
                    version: q["version"].as_u64(),
                    filter: filter.to_string(),
                    allow_scan: unindexed.contains(&filter),
                });
            }
        }
        let answers = read_json("list_element/answers.json");
        let mut list_element = Vec::new();
        for name in LIST_ELEMENT {
            s3.upload_dir(
                &root.join(format!("list_element/datasets/{name}.lance")),
                &format!("le/{name}.lance"),
            )
            .await;
            for q in answers["datasets"][name]["queries"]
                .as_array()
                .expect("queries")
            {
                for negated in [false, true] {
                    list_element.push(Op::ListElement {
                        dataset: name.to_string(),
                        filter: q["filter"].as_str().expect("filter").to_string(),
                        negated,
                    });
                }
            }
        }
        let mut ecp = Vec::new();
        for (index, name) in ECP.iter().enumerate() {
            s3.upload_dir(&root.join(format!("ecp/{name}")), &format!("idx/{name}"))
                .await;
            let expected = read_json(&format!("ecp/expected/{name}.json"));
            for case in expected["cases"].as_array().expect("cases") {
                let floats = |v: &Value| -> Vec<f32> {
                    v.as_array()
                        .expect("array")
                        .iter()
                        .map(|x| x.as_f64().expect("number") as f32)
                        .collect()
                };
                ecp.push(Op::Ecp {
                    index,
                    query: floats(&case["query"]),
                    exclude: case["exclude"]
                        .as_array()
                        .expect("exclude")
                        .iter()
                        .map(|x| x.as_u64().expect("id") as u32)
                        .collect(),
                    search_exp: case["search_exp"].as_u64().expect("search_exp") as u32,
                    max_increments: case["max_increments"].as_i64().expect("max_increments"),
                    pages: case["pages"]
                        .as_array()
                        .expect("pages")
                        .iter()
                        .map(|p| p["k"].as_u64().expect("k") as usize)
                        .collect(),
                });
            }
        }
        // File shapes, read once through a throwaway client.
        let handles = Handles::open(s3, 64 << 20).await;
        let mut files = Vec::new();
        for file in FILES {
            let stats = IoStats::new();
            let reader = LanceFileReader::open(
                handles.fetcher.clone(),
                Path::from(format!("files/{file}")),
                None,
                Arc::new(ReaderCaches::default()),
                &stats,
            )
            .await
            .expect("open fixture file");
            files.push(FileShape {
                fields: reader.schema().fields.len(),
                rows: reader.num_rows(),
            });
        }
        Self {
            files,
            btree,
            list_element,
            ecp,
        }
    }

    /// Query pool sizes: (btree, list element, ecp).
    pub(super) fn pool_sizes(&self) -> (usize, usize, usize) {
        (self.btree.len(), self.list_element.len(), self.ecp.len())
    }

    /// `n` distinct-ish operations drawn from `rng`: 40 % file reads, 30 % BTree,
    /// 20 % list element, 10 % ecp.
    pub(super) fn draw(&self, rng: &mut Rng, n: usize) -> Vec<Op> {
        (0..n)
            .map(|_| match rng.below(10) {
                0..=3 => self.file_op(rng),
                4..=6 => self.btree[rng.below(self.btree.len())].clone(),
                7..=8 => self.list_element[rng.below(self.list_element.len())].clone(),
                _ => self.ecp[rng.below(self.ecp.len())].clone(),
            })
            .collect()
    }

    fn file_op(&self, rng: &mut Rng) -> Op {
        let file = rng.below(self.files.len());
        let shape = &self.files[file];
        let mut columns: Vec<usize> = (0..shape.fields).filter(|_| rng.below(2) == 0).collect();
        if columns.is_empty() {
            columns.push(rng.below(shape.fields));
        }
        let selection = if rng.below(4) == 0 {
            let start = rng.below(shape.rows as usize) as u64;
            let len = 1 + rng.below(64) as u64;
            RowSelection::Range(start..(start + len).min(shape.rows))
        } else {
            let n = 1 + rng.below(24);
            let mut rows: Vec<u64> = (0..n)
                .map(|_| rng.below(shape.rows as usize) as u64)
                .collect();
            rows.sort_unstable();
            RowSelection::Rows(rows)
        };
        Op::File {
            file,
            columns,
            selection,
        }
    }
}

/// The answers of `ops` computed one at a time, in order, through `handles`.
pub(super) async fn baseline(handles: &Handles, ops: &[Op]) -> Vec<Answer> {
    let mut out = Vec::with_capacity(ops.len());
    for op in ops {
        out.push(handles.run(op).await);
    }
    out
}

/// Run `schedule` (indices into `ops`) with up to `in_flight` operations at once, each
/// on its own tokio task, all over `handles`' shared caches. Returns (schedule position,
/// answer) pairs in completion order.
pub(super) async fn run_concurrent(
    handles: &Handles,
    ops: &Arc<Vec<Op>>,
    schedule: &[usize],
    in_flight: usize,
) -> Vec<(usize, Answer)> {
    let tasks = schedule.iter().enumerate().map(|(pos, &op)| {
        let handles = handles.clone();
        let ops = Arc::clone(ops);
        async move {
            tokio::spawn(async move { (pos, handles.run(&ops[op]).await) })
                .await
                .expect("query task panicked")
        }
    });
    futures::stream::iter(tasks)
        .buffer_unordered(in_flight.max(1))
        .collect()
        .await
}

/// Busy threads beside a test (a CPU hog, like another build on CI's 2 cores): they spin
/// until the hog is dropped, and stop by themselves after `max` at the latest (a bound, so a
/// failing test cannot leave them running; nothing is timed).
pub(super) struct CpuHog {
    stop: Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<u64>>,
}

impl CpuHog {
    /// Start `threads` busy threads.
    pub(super) fn start(threads: usize, max: std::time::Duration) -> Self {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let threads = (0..threads)
            .map(|i| {
                let stop = Arc::clone(&stop);
                std::thread::Builder::new()
                    .name(format!("cpu-hog-{i}"))
                    .spawn(move || {
                        let started = std::time::Instant::now();
                        let mut x = i as u64 + 1;
                        while !stop.load(std::sync::atomic::Ordering::Relaxed)
                            && started.elapsed() < max
                        {
                            for _ in 0..10_000 {
                                x = std::hint::black_box(x.wrapping_mul(6364136223846793005) + 1);
                            }
                        }
                        x
                    })
                    .expect("spawn a CPU hog thread")
            })
            .collect();
        Self { stop, threads }
    }
}

impl Drop for CpuHog {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// A number from the environment, or `default`.
pub(super) fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// Count answers per kind: (kind, total, errors).
pub(super) fn summary(ops: &[Op], answers: &[Answer]) -> HashMap<&'static str, (usize, usize)> {
    let mut out: HashMap<&'static str, (usize, usize)> = HashMap::new();
    for (op, a) in ops.iter().zip(answers) {
        let e = out.entry(op.kind()).or_default();
        e.0 += 1;
        if matches!(a, Answer::Error(_)) {
            e.1 += 1;
        }
    }
    out
}
