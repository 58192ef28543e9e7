//! What a full-text query reads: a cold one-term query (fresh session, dataset already
//! open) in at most 5 round trips over S3; a warm repeat at most one. (On this small
//! fixture every index file fits in the suffix read that opens it, so the cold query reads
//! the whole 13.7 KB index in one wave.) On 100,000 documents (`cost_100k`), a best-10
//! search of a word in 24,000 of them reads the lengths of only a few hundred documents
//! (the docs file's chunks covering them), not the whole docs file, when its files are
//! read as a large index's are (scaled down, [`with_file_reads`]); with the default sizes
//! the open reads its files of under 1 MiB whole and the search needs no other request.

use std::sync::Arc;

use crate::index::fts::files::with_file_reads;
use crate::index::fts::search::{search, Operator, SearchRequest};
use crate::io::IoStats;
use crate::lance::dataset::{DatasetSession, DatasetVersion, IndexFileReads};
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

/// Bytes of the index file `file` of the dataset's (one) index segment.
fn file_bytes(name: &str, file: &str) -> u64 {
    let dir = fixtures().join("datasets").join(name).join("_indices");
    let seg = std::fs::read_dir(dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::metadata(seg.join(file)).unwrap().len()
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

/// The session cache (`CacheShare::FullText`) holds what a phrase, boolean or fuzzy query
/// read: the same query again reads nothing over S3, and a query whose tokens, postings
/// and scored documents were all read before reads nothing either.
#[tokio::test]
async fn warm_queries_read_no_index_bytes_again() {
    use crate::index::fts::cache::fts_cache;
    use crate::index::fts::query::{FtsQuery, MatchLeaf};
    let s3 = S3TestServer::start().await;
    s3.upload_dir(
        &fixtures().join("datasets").join("positions"),
        "fts/positions",
    )
    .await;
    let session = Arc::new(DatasetSession::default());
    let opened = s3.open("fts/positions");
    let dataset = DatasetVersion::open_opened(&opened, None, session, &IoStats::new())
        .await
        .unwrap();
    let phrase = SearchRequest {
        query: FtsQuery::Phrase {
            text: "lazy dog".into(),
            column: "body".into(),
            slop: 1,
        },
        k: Some(10),
        index_only: false,
    };
    let mut fuzzy = MatchLeaf::new("rivr", "body", Operator::Or);
    fuzzy.fuzziness = 1;
    let boolean = SearchRequest {
        query: FtsQuery::Boolean {
            must: vec![FtsQuery::Match(fuzzy)],
            should: Vec::new(),
            must_not: vec![FtsQuery::Match(MatchLeaf::new("fox", "body", Operator::Or))],
        },
        k: None,
        index_only: false,
    };
    for request in [&phrase, &boolean] {
        let cold = IoStats::new();
        let first = search(&dataset, request, &cold).await.unwrap();
        let c = cold.snapshot();
        assert!(!first.hits.is_empty());
        assert!(c.round_trips <= 5, "cold {c:?}");
        let warm = IoStats::new();
        let again = search(&dataset, request, &warm).await.unwrap();
        let w = warm.snapshot();
        eprintln!("cold {c:?}; warm {w:?}");
        assert_eq!(again.hits, first.hits);
        assert_eq!((w.requests, w.bytes), (0, 0), "warm {w:?}");
    }
    let cache = fts_cache(&dataset);
    cache.run_pending_tasks().await;
    // The segment, postings of lazi, dog, river, fox (positions and not), documents.
    assert!(cache.entry_count() > 10, "{}", cache.entry_count());
    // The phrase's tokens without positions are new postings, but "river" alone is not.
    let warm = IoStats::new();
    let river = SearchRequest::matching("river", "body", Operator::Or, None);
    search(&dataset, &river, &warm).await.unwrap();
    assert_eq!(warm.snapshot().requests, 0, "{:?}", warm.snapshot());
}

/// A cold best-10 search of the most common word of `cost_100k` (24,085 documents) over S3:
/// the lengths of a few hundred of them are read, leaving at least half of the docs file
/// unread that the same search reads whole when it scores every match (`k` = none), in at
/// most 5 round trips when read as a large index is (files, page inits, postings, two waves
/// of lengths, the second with the row ids of the best), a rare word in 4; a warm repeat
/// reads nothing.
#[tokio::test]
async fn a_best_k_search_reads_the_lengths_of_few_documents() {
    let s3 = S3TestServer::start().await;
    s3.upload_dir(
        &fixtures().join("datasets").join("cost_100k"),
        "fts/cost_100k",
    )
    .await;
    let open = || async {
        let session = Arc::new(DatasetSession::default());
        let opened = s3.open("fts/cost_100k");
        DatasetVersion::open_opened(&opened, None, session, &IoStats::new())
            .await
            .unwrap()
    };
    // Read as the 1M-document index is: dictionary whole, invert and docs by suffix.
    let scaled = IndexFileReads {
        whole: 16 << 10,
        tail: 4 << 10,
    };
    let dataset = open().await;
    let best = SearchRequest::matching("baba", "body", Operator::Or, Some(10));
    let cold = IoStats::new();
    let out = with_file_reads(scaled, search(&dataset, &best, &cold))
        .await
        .unwrap();
    let c = cold.snapshot();
    assert_eq!(out.hits.len(), 10);
    let e = &out.explain;
    assert_eq!(e["candidates"], 24085, "{e}");
    let scored = e["scored_documents"].as_u64().unwrap();
    let warm = IoStats::new();
    let again = search(&dataset, &best, &warm).await.unwrap();
    assert_eq!(again.hits, out.hits);
    let w = warm.snapshot();
    // The same search scoring every match, in a fresh session.
    let all = SearchRequest::matching("baba", "body", Operator::Or, None);
    let every = IoStats::new();
    let full = with_file_reads(scaled, async { search(&open().await, &all, &every).await })
        .await
        .unwrap();
    let f = every.snapshot();
    assert_eq!(full.hits.len(), 24085);
    eprintln!(
        "best-10: scored {scored}, {} requests, {} bytes, {} round trips; warm {w:?}; \
         every match: {} requests, {} bytes, {} round trips; index {} bytes",
        c.requests,
        c.bytes,
        c.round_trips,
        f.requests,
        f.bytes,
        f.round_trips,
        index_bytes("cost_100k")
    );
    assert!(scored <= 600, "{scored} documents scored");
    // Both read the same dictionary and postings; the best 10 leave most of the docs file
    // (rows and lengths of 100,000 documents) unread.
    let docs_file = file_bytes("cost_100k", "part_0_docs.lance");
    assert!(
        f.bytes.saturating_sub(c.bytes) * 2 >= docs_file,
        "best-10 {c:?}, every match {f:?}, docs file {docs_file} bytes"
    );
    // Index file suffixes; page inits of the invert and docs files (with the dictionary's
    // read when it is not in the first); postings; a first wave of lengths; the other
    // possibly-best lengths with the row ids of the best so far (a last wave only for
    // documents displacing them).
    assert!(c.round_trips <= 5, "{c:?}");
    assert_eq!((w.requests, w.bytes), (0, 0), "warm {w:?}");
    // A rare word (fewer matches than a first wave of lengths): its lengths and rows come
    // in one wave, 4 round trips in all.
    let rare = SearchRequest::matching("zozoko", "body", Operator::Or, Some(10));
    let r = IoStats::new();
    let found = with_file_reads(scaled, async { search(&open().await, &rare, &r).await })
        .await
        .unwrap();
    assert_eq!(found.hits.len(), 10);
    assert!(r.snapshot().round_trips <= 4, "{:?}", r.snapshot());
    // With the default sizes every file of this index (under 1 MiB each) is read whole by
    // the open: one wave, the same rows.
    let whole = IoStats::new();
    let again = search(&open().await, &best, &whole).await.unwrap();
    assert_eq!(again.hits, out.hits);
    let h = whole.snapshot();
    assert_eq!(
        (h.round_trips, h.bytes),
        (1, index_bytes("cost_100k")),
        "{h:?}"
    );
}
