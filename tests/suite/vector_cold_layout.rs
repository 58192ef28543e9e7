//! A cold nearest query on an index whose `auxiliary.idx` has a large index's layout
//! (`tests/fixtures/vector/cold_layout/`, pylance 14.0.2): its global buffers (the
//! partitions' row ranges, the codebook) sit mid-file, in neither the file's suffix nor its
//! first bytes, and its partitions are on mini-block pages whose reads need their chunk
//! tables. On the 200k × 768 benchmark index that layout cost a 6th round trip (global
//! buffers, then page init, then partitions); the open now reads the buffers together with
//! the large pages' init and the partition read takes the small pages whole: 5 round trips,
//! open included.
//!
//! The fixture is ~120 KB, read whole by the open at the default sizes; the read sizes are
//! scaled down ([`with_read_sizes`]) so it is read as the 20 MB index is.

use serde_json::Value;

use crate::index::vector::segment::{with_read_sizes, ReadSizes};
use crate::suite::common::S3TestServer;
use crate::suite::vector_catalog::{compare, vector_fixture};
use crate::{Dataset, IoStats, Session};

/// Scaled to the fixture as the defaults are to the 20 MB `auxiliary.idx`: the file is
/// not read whole, its `_rowid` pages (~30 KB) are too large to be read whole.
const SCALED: ReadSizes = ReadSizes {
    whole_file: 8 << 10,
    whole_page: 16 << 10,
};

fn answers() -> Value {
    let text = std::fs::read_to_string(vector_fixture("cold_layout/answers.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

async fn server() -> S3TestServer {
    let s3 = S3TestServer::start().await;
    s3.upload_dir(&vector_fixture("cold_layout/dataset"), "cold")
        .await;
    s3
}

async fn open(s3: &S3TestServer, session: &Session, stats: &IoStats) -> Dataset {
    Dataset::builder(&s3.url("cold"))
        .object_store(s3.open("cold").store)
        .session(session)
        .stats(stats)
        .open()
        .await
        .unwrap()
}

/// Run answer `a` on `dataset`; `None` when it matches pylance's.
async fn check(dataset: &Dataset, a: &Value, stats: &IoStats) -> Option<String> {
    let query: Vec<f32> = a["query"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() as f32)
        .collect();
    let batch = dataset
        .nearest("vec", &query)
        .k(10)
        .nprobes(a["nprobes"].as_u64().unwrap() as usize)
        .stats(stats)
        .execute()
        .await
        .unwrap();
    let rows = batch["_rowaddr"]
        .as_any()
        .downcast_ref::<arrow_array::UInt64Array>()
        .unwrap()
        .values()
        .to_vec();
    let distances = batch["_distance"]
        .as_any()
        .downcast_ref::<arrow_array::Float32Array>()
        .unwrap()
        .values()
        .to_vec();
    compare(&rows, &distances, a)
}

#[test]
fn the_fixture_has_the_layout_of_a_large_index() {
    let a = answers();
    let size = a["auxiliary_size"].as_u64().unwrap();
    let ivf = a["auxiliary_global_buffers"][0][0].as_u64().unwrap();
    // Neither in the first read of the old open (a 64 KiB suffix) nor at the start.
    assert!(ivf > 0 && size - ivf > 64 << 10, "{a}");
    assert!(size > SCALED.whole_file, "{size}");
}

// One thread: requests issued together are all in flight before any answer is seen.
#[tokio::test(flavor = "current_thread")]
async fn a_cold_query_reads_mid_file_global_buffers_with_the_page_init_in_five_round_trips() {
    let s3 = server().await;
    let all = answers();
    for a in all["answers"].as_array().unwrap() {
        let (session, stats) = (Session::default(), IoStats::new());
        let before = s3.http_counts();
        let differs = with_read_sizes(SCALED, async {
            let dataset = open(&s3, &session, &stats).await;
            check(&dataset, a, &stats).await
        })
        .await;
        assert_eq!(differs, None, "{a}");
        let cold = stats.snapshot();
        let http = s3.http_counts().since(&before);
        assert_eq!(http.heads, 0, "{http:?}");
        // hint, manifest, index files, global buffers + large pages' init, partitions.
        assert!(cold.round_trips <= 5, "{cold:?}");
        // Each file read once at most: no speculative prefix read again later.
        assert!(cold.bytes < 121_746 + 1_158 + 20_000, "{cold:?}");
        eprintln!("scaled cold {cold:?}");
    }
}

#[tokio::test(flavor = "current_thread")]
async fn at_the_default_sizes_the_small_index_is_read_whole_and_answers_as_pylance() {
    let s3 = server().await;
    let (session, stats) = (Session::default(), IoStats::new());
    let dataset = open(&s3, &session, &stats).await;
    let all = answers();
    for (i, a) in all["answers"].as_array().unwrap().iter().enumerate() {
        if i == 0 {
            // Open included: hint, manifest, both index files whole.
            assert_eq!(check(&dataset, a, &stats).await, None, "{a}");
            let cold = stats.snapshot();
            assert!(cold.round_trips <= 3, "{cold:?}");
            continue;
        }
        // Later queries, other partitions too: the files' bytes are held, no request.
        let query = IoStats::new();
        assert_eq!(check(&dataset, a, &query).await, None, "{a}");
        assert_eq!(query.snapshot().requests, 0, "{:?}", query.snapshot());
    }
}
