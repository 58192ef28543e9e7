//! Vector indices in `inspect` (`Dataset::describe`), `Dataset::prewarm` and `lakeseek bench
//! nearest` / `bench search`, on the pylance-written fixtures of tests/fixtures/vector and
//! tests/fixtures/fts. Nothing here is timed.

use std::io::Write;

use serde_json::Value;

use crate::bench::nearest::{run_nearest_bench, NearestBenchArgs};
use crate::bench::search::{run_search_bench, SearchBenchArgs};
use crate::bench::CommonBenchArgs;
use crate::suite::vector_catalog::{catalog, vector_fixture};
use crate::{Dataset, IoStats, Session};

fn dataset_path(name: &str) -> String {
    vector_fixture(&format!("datasets/{name}"))
        .to_string_lossy()
        .into_owned()
}

async fn open(name: &str, session: &Session, stats: &IoStats) -> Dataset {
    Dataset::builder(&dataset_path(name))
        .session(session)
        .stats(stats)
        .open()
        .await
        .unwrap()
}

#[tokio::test]
async fn describe_shows_each_vector_index() {
    let cat = catalog();
    for (name, quantizer, sub_vectors, bits) in [
        ("ivf_pq_l2", "PQ", Some(4), Some(8)),
        ("ivf_pq4_l2", "PQ", Some(8), Some(4)),
        ("ivf_sq_l2", "SQ", None, Some(8)),
        ("ivf_flat_cosine", "FLAT", None, None),
        ("ivf_hnsw_sq_l2", "SQ", None, Some(8)),
        ("ivf_hnsw_pq_l2", "PQ", Some(4), Some(8)),
    ] {
        let ds = &cat["datasets"][name];
        let dataset = open(name, &Session::default(), &IoStats::new()).await;
        let description = dataset.describe().await.unwrap();
        let index = &description.indices[0];
        assert_eq!(index.kind, "VECTOR", "{name}");
        let v = index.vector.as_ref().expect("a vector description");
        assert_eq!(v.error, None, "{name}");
        assert_eq!(
            v.index_type.as_deref(),
            ds["index"]["type"].as_str(),
            "{name}"
        );
        assert_eq!(
            v.metric.as_deref(),
            ds["index"]["metric"].as_str(),
            "{name}"
        );
        assert_eq!(
            v.partitions,
            ds["index"]["num_partitions"].as_u64().map(|p| p as usize),
            "{name}"
        );
        assert_eq!(v.dim, ds["dim"].as_u64().map(|d| d as usize), "{name}");
        assert_eq!(v.quantizer.as_deref(), Some(quantizer), "{name}");
        assert_eq!((v.sub_vectors, v.bits), (sub_vectors, bits), "{name}");
        assert_eq!(v.rows, ds["rows"].as_u64(), "{name}");
        let files: u64 = ds["segments"][0]["files"]
            .as_object()
            .unwrap()
            .values()
            .map(|s| s.as_u64().unwrap())
            .sum();
        assert_eq!(v.size_bytes, files, "{name}");
    }
    // A scalar index has no vector part; the JSON leaves the key out.
    let scalar = open("ivf_pq_l2_btree", &Session::default(), &IoStats::new()).await;
    let description = scalar.describe().await.unwrap();
    let btree = description
        .indices
        .iter()
        .find(|i| i.kind == "BTREE")
        .unwrap();
    assert!(btree.vector.is_none());
    let json = serde_json::to_value(btree).unwrap();
    assert!(json.get("vector").is_none(), "{json}");
}

#[tokio::test]
async fn inspect_prints_the_vector_index_line() {
    let mut out = Vec::new();
    crate::cli::inspect_dataset::run_inspect_dataset(
        &dataset_path("ivf_pq_l2"),
        &crate::cli::StoreArgs::default(),
        false,
        &mut out,
    )
    .await
    .unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("IVF_PQ, metric l2, 4 partitions, dim 16, PQ 4 sub-vectors x 8 bits, 1024 rows, 26319 bytes"),
        "{text}"
    );
}

#[tokio::test]
async fn prewarm_loads_the_index_so_a_query_reads_nothing() {
    let session = Session::default();
    let dataset = open("ivf_pq_l2", &session, &IoStats::new()).await;
    let report = dataset.prewarm().run().await.unwrap();
    assert_eq!(report.indices, vec!["vec_idx".to_string()]);
    assert_eq!(report.vector_partitions, 4);
    assert!(report.stats.requests > 0);
    let stats = IoStats::new();
    let query = vec![0.5f32; 16];
    let batch = dataset
        .nearest("vec", &query)
        .k(10)
        .nprobes(4)
        .stats(&stats)
        .execute()
        .await
        .unwrap();
    assert_eq!(batch.num_rows(), 10);
    assert_eq!(stats.snapshot().requests, 0, "{:?}", stats.snapshot());
    // Without the prewarm the same query reads the index.
    let cold = IoStats::new();
    let fresh = open("ivf_pq_l2", &Session::default(), &IoStats::new()).await;
    let again = fresh.nearest("vec", &query).k(10).nprobes(4).stats(&cold);
    assert_eq!(again.execute().await.unwrap(), batch);
    assert!(cold.snapshot().requests > 0);
    // A budget too small for the codebook and partitions: the header only.
    let tiny = Session::with_budget(64 * 1024);
    let small = open("ivf_pq_l2", &tiny, &IoStats::new()).await;
    let report = small.prewarm().run().await.unwrap();
    assert_eq!(report.vector_partitions, 0);
}

/// Write `rows` as a float32 `.npy` file of shape `(n, d)`.
fn write_npy(path: &std::path::Path, rows: &[Vec<f32>]) {
    let shape = format!("({}, {})", rows.len(), rows[0].len());
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut f = std::fs::File::create(path).unwrap();
    f.write_all(b"\x93NUMPY\x01\x00").unwrap();
    f.write_all(&(header.len() as u16).to_le_bytes()).unwrap();
    f.write_all(header.as_bytes()).unwrap();
    for v in rows.iter().flatten() {
        f.write_all(&v.to_le_bytes()).unwrap();
    }
}

/// pylance's recorded k=10, nprobes=4 queries of `ivf_pq_l2` (no filter, no refine): the
/// query vectors and the answers.
fn recorded_queries() -> (Vec<Vec<f32>>, Vec<Vec<u64>>) {
    let cat = catalog();
    let ds = &cat["datasets"]["ivf_pq_l2"];
    let plain = |q: &Value| {
        q.as_object().unwrap().keys().all(|k| {
            matches!(
                k.as_str(),
                "q" | "k" | "nprobes" | "row_addresses" | "distances" | "ids"
            )
        }) && q["k"] == 10
            && q["nprobes"] == 4
    };
    let mut vectors = Vec::new();
    let mut answers = Vec::new();
    for q in ds["queries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| plain(q))
    {
        let v = &ds["query_vectors"][q["q"].as_u64().unwrap() as usize];
        vectors.push(
            v.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
                .collect(),
        );
        answers.push(
            q["row_addresses"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_u64().unwrap())
                .collect(),
        );
    }
    (vectors, answers)
}

fn nearest_args(
    queries_file: &std::path::Path,
    truth: &std::path::Path,
    warm: bool,
) -> NearestBenchArgs {
    NearestBenchArgs {
        dataset: dataset_path("ivf_pq_l2"),
        column: "vec".into(),
        queries_file: Some(queries_file.to_path_buf()),
        ground_truth: Some(truth.to_path_buf()),
        queries: 6,
        k: 10,
        nprobes: 4,
        refine: None,
        ef: None,
        filter: None,
        version: None,
        allow_scan: false,
        budget_bytes: None,
        prewarm: false,
        common: CommonBenchArgs {
            warm,
            cold: !warm,
            ..CommonBenchArgs::default()
        },
    }
}

#[tokio::test]
async fn bench_nearest_reports_cost_and_recall_against_the_ground_truth() {
    let (vectors, answers) = recorded_queries();
    assert!(vectors.len() >= 2, "{} recorded queries", vectors.len());
    let dir = tempfile::tempdir().unwrap();
    let qfile = dir.path().join("q.npy");
    write_npy(&qfile, &vectors);
    let truth = dir.path().join("gt.txt");
    let lines: Vec<String> = answers
        .iter()
        .map(|a| a.iter().map(u64::to_string).collect::<Vec<_>>().join(","))
        .collect();
    std::fs::write(&truth, lines.join("\n")).unwrap();
    for warm in [false, true] {
        let report = run_nearest_bench(&nearest_args(&qfile, &truth, warm))
            .await
            .unwrap();
        assert_eq!(report.operations_completed, 6);
        assert_eq!(report.settings.command, "nearest");
        assert_eq!(report.settings.nprobes, Some(4));
        // pylance's answers are the ground truth here: lakeseek finds every row.
        let recall = report.recall.unwrap();
        assert_eq!((recall.min, recall.max), (1.0, 1.0), "warm {warm}");
        assert!(report.operations.iter().all(|o| o.rows == 10));
        if warm {
            // Opened before measuring: the first query reads partitions, repeats none.
            assert!(report.operations.iter().any(|o| o.requests == 0));
        } else {
            assert!(report
                .operations
                .iter()
                .all(|o| o.open.is_some() && o.requests > 0));
        }
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["operations"][0]["recall"], 1.0);
        assert_eq!(json["settings"]["k"], 10);
    }
    // A ground truth that disagrees lowers the recall; one line too few is refused.
    let shifted: Vec<String> = answers
        .iter()
        .map(|a| {
            a.iter()
                .map(|r| (r + 1_000_000).to_string())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    std::fs::write(&truth, shifted.join("\n")).unwrap();
    let report = run_nearest_bench(&nearest_args(&qfile, &truth, true))
        .await
        .unwrap();
    assert_eq!(report.recall.unwrap().max, 0.0);
    std::fs::write(&truth, "1,2,3\n").unwrap();
    let err = run_nearest_bench(&nearest_args(&qfile, &truth, true))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("1 lines for"), "{err}");
}

#[tokio::test]
async fn bench_nearest_prewarms_and_reports_its_session_budget() {
    let (vectors, answers) = recorded_queries();
    let dir = tempfile::tempdir().unwrap();
    let qfile = dir.path().join("q.npy");
    write_npy(&qfile, &vectors);
    let truth = dir.path().join("gt.txt");
    let lines: Vec<String> = answers
        .iter()
        .map(|a| a.iter().map(u64::to_string).collect::<Vec<_>>().join(","))
        .collect();
    std::fs::write(&truth, lines.join("\n")).unwrap();
    // Default: the library's default budget, reported; no prewarm.
    let report = run_nearest_bench(&nearest_args(&qfile, &truth, true))
        .await
        .unwrap();
    assert_eq!(
        report.settings.budget_bytes,
        Some(crate::DEFAULT_SESSION_BUDGET)
    );
    assert!(!report.settings.prewarm);
    // Prewarmed in a 64 MiB session: every partition of the small index is cached before
    // the first measured query, so no measured query reads anything.
    let mut args = nearest_args(&qfile, &truth, true);
    args.budget_bytes = Some(64 << 20);
    args.prewarm = true;
    let report = run_nearest_bench(&args).await.unwrap();
    assert_eq!(report.settings.budget_bytes, Some(64 << 20));
    assert!(report.settings.prewarm);
    assert!(report.setup.requests > 0, "{:?}", report.setup);
    let reads: Vec<u64> = report.operations.iter().map(|o| o.requests).collect();
    assert_eq!(reads, vec![0; reads.len()]);
    assert_eq!(report.recall.unwrap().min, 1.0);
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["settings"]["budget_bytes"], 64 << 20);
    assert_eq!(json["settings"]["prewarm"], true);
}

#[tokio::test]
async fn bench_nearest_samples_query_vectors_from_the_column() {
    let mut args = nearest_args(std::path::Path::new("-"), std::path::Path::new("-"), false);
    args.queries_file = None;
    args.ground_truth = None;
    args.queries = 3;
    let report = run_nearest_bench(&args).await.unwrap();
    assert_eq!(report.operations_completed, 3);
    assert!(report.recall.is_none());
    assert!(report
        .settings
        .queries_from
        .unwrap()
        .starts_with("random rows of vec"));
    args.column = "id".into();
    let err = run_nearest_bench(&args).await.unwrap_err().to_string();
    assert!(err.contains("not a vector"), "{err}");
}

#[tokio::test]
async fn bench_search_runs_full_text_queries() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fts/datasets/default")
        .to_string_lossy()
        .into_owned();
    let args = SearchBenchArgs {
        dataset: path,
        column: "body".into(),
        text: Some("river lake".into()),
        texts: None,
        queries: 3,
        k: Some(3),
        operator: "or".into(),
        filter: None,
        index_only: false,
        phrase: false,
        slop: None,
        version: None,
        allow_scan: false,
        common: CommonBenchArgs {
            warm: true,
            ..CommonBenchArgs::default()
        },
    };
    // --phrase searches the text as a phrase (the positions fixture: "lazy dog" as a
    // phrase matches fewer rows than its words do).
    let positions = SearchBenchArgs {
        dataset: args
            .dataset
            .replace("datasets/default", "datasets/positions"),
        text: Some("lazy dog".into()),
        k: Some(50),
        phrase: true,
        ..args.clone()
    };
    let phrase = run_search_bench(&positions).await.unwrap();
    let matched = run_search_bench(&SearchBenchArgs {
        phrase: false,
        ..positions.clone()
    })
    .await
    .unwrap();
    let (p, m) = (phrase.operations[0].rows, matched.operations[0].rows);
    assert!(p > 0 && p < m, "phrase {p} rows, match {m}");
    let report = run_search_bench(&args).await.unwrap();
    assert_eq!(report.operations_completed, 3);
    assert_eq!(report.settings.command, "search");
    assert!(report.operations.iter().all(|o| o.rows == 3));
    let mut table = Vec::new();
    report.write_table(&mut table).unwrap();
    let table = String::from_utf8(table).unwrap();
    assert!(table.contains("column body, k 3, operator or"), "{table}");
}
