//! Full-text search (INVERTED) against pylance 14.0.2's answers
//! (`tests/fixtures/fts/gen_fts.py`): every recorded match query (OR, AND, `k`) on every
//! fixture dataset — defaults, positions, format v1, French, custom stop words, an n-gram
//! base tokenizer, deletions, an appended unindexed fragment, two segments, and the older
//! single-partition layout written by pylance 0.27.2 — locally and over S3: the same rows,
//! `_score` within 1e-3 relative (ties in either order).

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use crate::index::fts::search::{search, Operator, SearchRequest};
use crate::io::IoStats;
use crate::lance::dataset::{DatasetSession, DatasetVersion};
use crate::suite::common::S3TestServer;

pub(super) fn fixtures() -> PathBuf {
    crate::suite::common::fixture("fts")
}

/// One recorded query.
pub(super) struct Case {
    pub(super) dataset: String,
    pub(super) label: String,
    pub(super) request: SearchRequest,
    pub(super) addresses: Vec<u64>,
    pub(super) scores: Vec<f32>,
}

/// The recorded match queries (phrase and boolean ones are not answered yet: skipped,
/// and counted by the caller).
pub(super) fn cases() -> (Vec<Case>, usize) {
    let text = std::fs::read_to_string(fixtures().join("answers.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let mut out = Vec::new();
    let mut skipped = 0;
    for (name, ds) in doc["datasets"].as_object().unwrap() {
        let column = if name == "ngram_base" { "name" } else { "body" };
        for q in ds["queries"].as_array().into_iter().flatten() {
            let query = &q["query"];
            let (text, operator, k) = match query {
                Value::String(s) => (s.clone(), Operator::Or, None),
                Value::Object(o) if o["kind"] == "match" => (
                    o["text"].as_str().unwrap().to_string(),
                    if o.get("operator").and_then(Value::as_str) == Some("and") {
                        Operator::And
                    } else {
                        Operator::Or
                    },
                    o.get("k").and_then(Value::as_u64).map(|k| k as usize),
                ),
                _ => {
                    skipped += 1;
                    continue;
                }
            };
            let nums = |k: &str| {
                q[k].as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_f64().unwrap())
                    .collect::<Vec<_>>()
            };
            out.push(Case {
                dataset: name.clone(),
                label: q["label"].as_str().unwrap().to_string(),
                request: SearchRequest {
                    text,
                    column: column.into(),
                    operator,
                    k,
                    index_only: false,
                },
                addresses: nums("row_addresses")
                    .into_iter()
                    .map(|v| v as u64)
                    .collect(),
                scores: nums("scores").into_iter().map(|v| v as f32).collect(),
            });
        }
    }
    (out, skipped)
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() <= 1e-3 * a.abs().max(b.abs()).max(1e-6)
}

/// Why `got` differs from the case's answer, if it does.
pub(super) fn mismatch(case: &Case, got: &[(u64, f32)]) -> Option<String> {
    let want: Vec<(u64, f32)> = case
        .addresses
        .iter()
        .copied()
        .zip(case.scores.iter().copied())
        .collect();
    if got.len() != want.len() {
        return Some(format!("{} rows, pylance {}", got.len(), want.len()));
    }
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        if !close(g.1, w.1) {
            return Some(format!("score #{i}: {} vs pylance {}", g.1, w.1));
        }
    }
    // Same rows, each with its score (rows tied with the last kept score may differ under k).
    let last = want.last().map(|w| w.1);
    for (a, s) in &want {
        let found = got.iter().find(|g| g.0 == *a);
        match found {
            Some(g) if close(g.1, *s) => {}
            None if case.request.k.is_some() && last.is_some_and(|l| close(l, *s)) => {}
            other => return Some(format!("row {a} (pylance {s}): {other:?}")),
        }
    }
    None
}

async fn check_all<F, Fut>(open: F) -> (usize, Vec<String>)
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = DatasetVersion>,
{
    let (cases, _) = cases();
    let mut failures = Vec::new();
    for case in &cases {
        let dataset = open(case.dataset.clone()).await;
        match search(&dataset, &case.request, &IoStats::new()).await {
            Ok(out) => {
                let got: Vec<(u64, f32)> =
                    out.hits.iter().map(|h| (h.row_address, h.score)).collect();
                if let Some(why) = mismatch(case, &got) {
                    failures.push(format!("{}/{}: {why}", case.dataset, case.label));
                }
            }
            Err(e) => failures.push(format!("{}/{}: error {e}", case.dataset, case.label)),
        }
    }
    (cases.len(), failures)
}

pub(super) async fn open_local(name: &str, session: Arc<DatasetSession>) -> DatasetVersion {
    let path = fixtures().join("datasets").join(name);
    DatasetVersion::open_url(path.to_str().unwrap(), &[], None, session, &IoStats::new())
        .await
        .unwrap()
}

#[tokio::test]
async fn match_queries_answer_as_pylance_locally() {
    let session = Arc::new(DatasetSession::default());
    let (checked, failures) = check_all(|name| {
        let session = Arc::clone(&session);
        async move { open_local(&name, session).await }
    })
    .await;
    let (_, skipped) = cases();
    assert!(checked >= 88, "{checked}");
    assert_eq!(skipped, 10, "phrase and boolean queries skipped");
    assert!(
        failures.is_empty(),
        "{} of {checked} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[tokio::test]
async fn match_queries_answer_as_pylance_over_s3() {
    let s3 = S3TestServer::start().await;
    s3.upload_dir(&fixtures().join("datasets"), "fts").await;
    let session = Arc::new(DatasetSession::default());
    let s3 = &s3;
    let (checked, failures) = check_all(|name| {
        let session = Arc::clone(&session);
        async move {
            let opened = s3.open(&format!("fts/{name}"));
            DatasetVersion::open_opened(&opened, None, session, &IoStats::new())
                .await
                .unwrap()
        }
    })
    .await;
    assert!(checked >= 88, "{checked}");
    assert!(
        failures.is_empty(),
        "{} of {checked} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(s3.http_counts().heads, 0, "no HEAD requests");
}

/// `lakeseek query --search` prints pylance's rows and scores, best first; an empty query
/// and a column without an INVERTED index are clear errors.
#[tokio::test]
async fn the_query_command_searches() {
    use crate::cli::query::{run_query_to, QueryArgs};
    let (cases, _) = cases();
    let case = cases
        .iter()
        .find(|c| c.dataset == "default" && c.label == "and2")
        .unwrap();
    let dataset = fixtures()
        .join("datasets")
        .join("default")
        .display()
        .to_string();
    let args = QueryArgs {
        dataset: dataset.clone(),
        search: Some("river lake".into()),
        search_column: Some("body".into()),
        operator: "and".into(),
        ..QueryArgs::default()
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    run_query_to(&args, &mut out, &mut err).await.unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let got: Vec<(u64, f32)> = v["row_addresses"]
        .as_array()
        .unwrap()
        .iter()
        .zip(v["scores"].as_array().unwrap())
        .map(|(a, s)| (a.as_u64().unwrap(), s.as_f64().unwrap() as f32))
        .collect();
    assert_eq!(mismatch(case, &got), None);
    for (text, column, want) in [("   ", "body", "empty"), ("fox", "id", "no INVERTED")] {
        let args = QueryArgs {
            dataset: dataset.clone(),
            search: Some(text.into()),
            search_column: Some(column.into()),
            operator: "or".into(),
            ..QueryArgs::default()
        };
        let e = run_query_to(&args, &mut Vec::new(), &mut Vec::new())
            .await
            .unwrap_err();
        assert!(e.to_string().contains(want), "{e}");
    }
    // 100,000 distinct terms: refused, not searched.
    let many: String = (0..100_000).map(|i| format!("w{i} ")).collect();
    let args = QueryArgs {
        dataset,
        search: Some(many),
        search_column: Some("body".into()),
        operator: "or".into(),
        ..QueryArgs::default()
    };
    let e = run_query_to(&args, &mut Vec::new(), &mut Vec::new())
        .await
        .unwrap_err();
    assert!(e.to_string().contains("distinct tokens"), "{e}");
}
