//! What a full-text query reads: a cold one-term query (fresh session, dataset already
//! open) in at most 5 round trips over S3; a warm repeat at most one. (On this small
//! fixture every index file fits in the suffix read that opens it, so the cold query reads
//! the whole 13.7 KB index in one wave; the byte fraction needs a larger dataset.)

use std::sync::Arc;

use crate::index::fts::search::{search, Operator, SearchRequest};
use crate::io::IoStats;
use crate::lance::dataset::{DatasetSession, DatasetVersion};
use crate::suite::common::S3TestServer;
use crate::suite::fts_answers::fixtures;

fn request(text: &str) -> SearchRequest {
    SearchRequest::matching(text, "body", Operator::Or, Some(10))
}

/// Bytes of every file under the dataset's `_indices/`.
fn index_bytes(name: &str) -> u64 {
    let dir = fixtures().join("datasets").join(name).join("_indices");
    let mut total = 0;
    for seg in std::fs::read_dir(dir).unwrap() {
        for f in std::fs::read_dir(seg.unwrap().path()).unwrap() {
            total += f.unwrap().metadata().unwrap().len();
        }
    }
    total
}

#[tokio::test]
async fn a_cold_one_term_query_is_at_most_five_round_trips() {
    let s3 = S3TestServer::start().await;
    s3.upload_dir(&fixtures().join("datasets").join("default"), "fts/default")
        .await;
    let session = Arc::new(DatasetSession::default());
    let opened = s3.open("fts/default");
    let dataset = DatasetVersion::open_opened(&opened, None, session, &IoStats::new())
        .await
        .unwrap();
    let cold = IoStats::new();
    let out = search(&dataset, &request("zebra"), &cold).await.unwrap();
    assert_eq!(out.hits.len(), 10);
    let c = cold.snapshot();
    let warm = IoStats::new();
    let again = search(&dataset, &request("zebra"), &warm).await.unwrap();
    assert_eq!(again.hits, out.hits);
    let w = warm.snapshot();
    eprintln!(
        "cold: {} requests, {} bytes, {} round trips; warm: {} requests, {} bytes, {} round trips; index {} bytes",
        c.requests, c.bytes, c.round_trips, w.requests, w.bytes, w.round_trips, index_bytes("default")
    );
    assert!(c.round_trips <= 5, "{c:?}");
    assert!(w.round_trips <= 1, "{w:?}");
    assert!(
        c.requests >= 1 && c.bytes <= index_bytes("default"),
        "{c:?}"
    );
    assert_eq!(s3.http_counts().heads, 0, "no HEAD requests");
}
