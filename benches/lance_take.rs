//! Warm in-process random take from local Lance files and datasets (criterion), through the
//! public API: 100 random rows of a flat int column, a string column and the sparse 2.3
//! `detections` list<struct> column of a file ([`LanceFile::take`]), with file metadata and
//! page init cached (the steady state of a service doing random take); and 100 random rows
//! by row address through a dataset ([`Dataset::take`]: manifest, deletion vectors, file
//! metadata, page init and structural plans cached in its session).
//!
//! ```sh
//! cargo bench --bench lance_take
//! # plus the 1,000,000-row `detections` files and datasets of the peer benchmark (2.2
//! # dense, 2.3 sparse), e.g. as `../shared/peer-bench/gen_data.py --no-upload` writes them:
//! LAKESEEK_BENCH_DATA=/path/to/lakeseek-anchors/data cargo bench --bench lance_take
//! ```
//! The S3 side-by-side comparison with pylance is `benches/peer/take_file_compare.py`
//! (it drives `lakeseek bench take`).

use std::path::{Path, PathBuf};

use criterion::Criterion;
use lakeseek::{Dataset, LanceFile};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Deterministic distinct sorted rows (`n` of `0..total`).
fn rows(seed: u64, n: usize, total: u64) -> Vec<u64> {
    let mut state = seed;
    let mut set = std::collections::BTreeSet::new();
    while set.len() < n.min(total as usize) {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        set.insert((state >> 33) % total);
    }
    set.into_iter().collect()
}

fn utf8(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// Warm take of 100 random rows of `column` from the file at `path`.
fn bench_file(c: &mut Criterion, rt: &tokio::runtime::Runtime, path: &Path, column: &str) {
    let file = rt.block_on(LanceFile::open(utf8(path))).expect("open file");
    let n = file.num_rows();
    // Warm every page's init once.
    rt.block_on(file.read_range(&[column], 0..n))
        .expect("warm-up");
    let name = path.strip_prefix(fixtures()).unwrap_or(path).display();
    let mut seed = 1u64;
    c.bench_function(&format!("take 100 random rows: {name} {column}"), |b| {
        b.iter(|| {
            seed += 1;
            rt.block_on(file.take(&[column], &rows(seed, 100, n)))
                .expect("take")
        })
    });
}

/// Warm take of 100 random live rows by row address through the dataset at `dir` (all
/// fragments' rows drawn uniformly). The live addresses come from a scan of `id` once;
/// the take is warmed by one take of every 997th of them (touches every page).
fn bench_dataset(c: &mut Criterion, rt: &tokio::runtime::Runtime, dir: &Path, column: &str) {
    let dataset = rt.block_on(Dataset::open(utf8(dir))).expect("open dataset");
    let live = rt
        .block_on(dataset.query().filter("id >= 0").allow_scan(true).execute())
        .expect("scan ids")
        .row_addresses;
    let warm: Vec<u64> = live.iter().step_by(997).copied().collect();
    rt.block_on(dataset.take(&warm, &[column]))
        .expect("warm-up");
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut seed = 1u64;
    c.bench_function(
        &format!("dataset take 100 random rows: {name} {column}"),
        |b| {
            b.iter(|| {
                seed += 1;
                let addresses: Vec<u64> = rows(seed, 100, live.len() as u64)
                    .into_iter()
                    .map(|i| live[i as usize])
                    .collect();
                rt.block_on(dataset.take(&addresses, &[column]))
                    .expect("take")
            })
        },
    );
}

/// The one `.lance` data file of a single-fragment dataset.
fn data_file(dataset: &Path) -> PathBuf {
    std::fs::read_dir(dataset.join("data"))
        .expect("dataset data dir")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "lance"))
        .expect("a data file")
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut c = Criterion::default().configure_from_args();
    let files = fixtures().join("files");
    bench_file(&mut c, &rt, &files.join("v2_2/ints.lance"), "i64_small");
    bench_file(&mut c, &rt, &files.join("v2_2/strings.lance"), "s_fsst");
    bench_file(
        &mut c,
        &rt,
        &files.join("nested/v2_3_sparse/detections.lance"),
        "detections",
    );
    let datasets = fixtures().join("datasets/take");
    bench_dataset(
        &mut c,
        &rt,
        &datasets.join("v2_3_sparse.lance"),
        "detections",
    );
    if let Ok(dir) = std::env::var("LAKESEEK_BENCH_DATA") {
        for name in ["take_1000000_v2.2.lance", "take_1000000_v2.3s.lance"] {
            let dataset = PathBuf::from(&dir).join(name);
            bench_file(&mut c, &rt, &data_file(&dataset), "detections");
            bench_dataset(&mut c, &rt, &dataset, "detections");
        }
    }
    c.final_summary();
}
