//! Warm in-process random take from local Lance files (criterion): 100 random rows of a flat
//! int column, a string column, and the sparse 2.3 `detections` list<struct> column, with
//! file metadata and page init cached (the steady state of a service doing random take).
//!
//! ```sh
//! cargo bench --bench lance_take
//! # plus the 1,000,000-row `detections` files of the peer benchmark (2.2 dense, 2.3 sparse):
//! LAKESEEK_BENCH_DATA=/path/to/lakeseek-anchors/data cargo bench --bench lance_take
//! ```
//! The S3 side-by-side comparison with pylance is `benches/peer/take_file_compare.py`
//! (it drives `lakeseek bench take`).

use std::path::PathBuf;

use criterion::Criterion;
use lakeseek::LanceFile;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/files")
}

/// Deterministic distinct sorted rows.
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

fn bench_file(c: &mut Criterion, rt: &tokio::runtime::Runtime, relative: &str, column: &str) {
    bench_file_in(c, rt, fixtures(), relative, column)
}

fn bench_file_in(
    c: &mut Criterion,
    rt: &tokio::runtime::Runtime,
    root: PathBuf,
    relative: &str,
    column: &str,
) {
    let path = root.join(relative);
    let file = rt
        .block_on(LanceFile::open(path.to_str().expect("UTF-8 path")))
        .expect("open fixture");
    let n = file.num_rows();
    // Warm every page's init once.
    rt.block_on(file.read_range(&[column], 0..n))
        .expect("warm-up");
    let mut seed = 1u64;
    c.bench_function(&format!("take 100 random rows: {relative} {column}"), |b| {
        b.iter(|| {
            seed += 1;
            let rows = rows(seed, 100, n);
            rt.block_on(file.take(&[column], &rows)).expect("take")
        })
    });
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut c = Criterion::default().configure_from_args();
    bench_file(&mut c, &rt, "v2_2/ints.lance", "i64_small");
    bench_file(&mut c, &rt, "v2_2/strings.lance", "s_fsst");
    bench_file(
        &mut c,
        &rt,
        "nested/v2_3_sparse/detections.lance",
        "detections",
    );
    if let Ok(dir) = std::env::var("LAKESEEK_BENCH_DATA") {
        for dataset in ["take_1000000_v2.2.lance", "take_1000000_v2.3s.lance"] {
            let data = PathBuf::from(&dir).join(dataset).join("data");
            let file = std::fs::read_dir(&data)
                .expect("dataset data dir")
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .find(|name| name.ends_with(".lance"))
                .expect("a data file");
            bench_file_in(&mut c, &rt, data, &file, "detections");
        }
    }
    c.final_summary();
}
