//! Full-text search (INVERTED) against pylance 14.0.2's answers
//! (`tests/fixtures/fts/gen_fts.py`): every recorded match query (OR, AND, `k`) on every
//! fixture dataset — defaults, positions, format v1, French, custom stop words, an n-gram
//! base tokenizer, deletions, an appended unindexed fragment, two segments, and the older
//! single-partition layout written by pylance 0.27.2 and by lance 0.27.0 (lance's own
//! `test_data/` fixture; phrase queries refused there as pylance refuses them) — locally
//! and over S3: the same rows,
//! `_score` within 1e-3 relative (ties in either order).

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use crate::index::fts::query::{FtsQuery, MatchLeaf};
use crate::index::fts::search::{search, Operator, SearchRequest};
use crate::io::IoStats;
use crate::lance::dataset::{DatasetSession, DatasetVersion};
use crate::suite::common::S3TestServer;

/// `tests/fixtures/fts` of this checkout (not the one `lakeseek_testing` was built in).
pub(super) fn fixtures() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fts")
}

/// One recorded query.
pub(super) struct Case {
    pub(super) dataset: String,
    pub(super) label: String,
    pub(super) request: SearchRequest,
    pub(super) addresses: Vec<u64>,
    pub(super) scores: Vec<f32>,
    /// pylance's refusal, when it refused.
    pub(super) error: Option<String>,
}

fn operator(o: &serde_json::Map<String, Value>) -> Operator {
    if o.get("operator").and_then(Value::as_str) == Some("and") {
        Operator::And
    } else {
        Operator::Or
    }
}

/// The query a recorded JSON query stands for (as `gen_fts.py`'s `build_query` builds it).
pub(super) fn to_query(q: &Value, column: &str) -> FtsQuery {
    let o = match q {
        Value::String(s) => return FtsQuery::Match(MatchLeaf::new(s, column, Operator::Or)),
        Value::Object(o) => o,
        other => panic!("query {other}"),
    };
    let text = || o["text"].as_str().unwrap().to_string();
    let col = o.get("column").and_then(Value::as_str).unwrap_or(column);
    let all = |k: &str| -> Vec<(String, FtsQuery)> {
        o[k].as_array()
            .unwrap()
            .iter()
            .map(|c| (c[0].as_str().unwrap().to_string(), to_query(&c[1], column)))
            .collect()
    };
    match o["kind"].as_str().unwrap() {
        "match" => {
            let mut m = MatchLeaf::new(&text(), col, operator(o));
            m.boost = o.get("boost").and_then(Value::as_f64).unwrap_or(1.0) as f32;
            // pylance 14.0.2's Python `fuzziness=None` matches exactly (as 0), whatever its
            // docstring says: recorded as `null`.
            m.fuzziness = o.get("fuzziness").and_then(Value::as_u64).unwrap_or(0) as u32;
            m.prefix_length = o.get("prefix_length").and_then(Value::as_u64).unwrap_or(0) as u32;
            m.max_expansions = o
                .get("max_expansions")
                .and_then(Value::as_u64)
                .unwrap_or(50) as usize;
            FtsQuery::Match(m)
        }
        "phrase" => FtsQuery::Phrase {
            text: text(),
            column: col.to_string(),
            slop: o.get("slop").and_then(Value::as_u64).unwrap_or(0) as u32,
        },
        "boolean" => {
            let (mut must, mut should, mut must_not) = (Vec::new(), Vec::new(), Vec::new());
            for (occur, q) in all("clauses") {
                match occur.as_str() {
                    "must" => must.push(q),
                    "should" => should.push(q),
                    _ => must_not.push(q),
                }
            }
            FtsQuery::Boolean {
                must,
                should,
                must_not,
            }
        }
        "multi_match" => FtsQuery::MultiMatch {
            text: text(),
            columns: o["columns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap().to_string())
                .collect(),
            boosts: o
                .get("boosts")
                .and_then(Value::as_array)
                .map(|b| b.iter().map(|x| x.as_f64().unwrap() as f32).collect())
                .unwrap_or_default(),
            operator: operator(o),
        },
        "boost" => FtsQuery::Boost {
            positive: Box::new(to_query(&o["positive"], column)),
            negative: Box::new(to_query(&o["negative"], column)),
            negative_boost: o["negative_boost"].as_f64().unwrap() as f32,
        },
        other => panic!("query kind {other}"),
    }
}

/// The answer files: `gen_fts.py`'s, `gen_lance_0_27_0.py`'s (lance's own 0.27.0
/// single-partition fixture, and phrase refusals on that layout) and `gen_fts_cost.py`'s
/// (best-k queries on 100,000 documents).
const ANSWER_FILES: [&str; 3] = [
    "answers.json",
    "answers_lance_0_27_0.json",
    "answers_cost.json",
];

/// Every recorded query (match, phrase, boolean, multi-match, boost, fuzzy; and the ones
/// pylance refused).
pub(super) fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for file in ANSWER_FILES {
        cases_of(file, &mut out);
    }
    out
}

fn cases_of(file: &str, out: &mut Vec<Case>) {
    let text = std::fs::read_to_string(fixtures().join(file)).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    for (name, ds) in doc["datasets"].as_object().unwrap() {
        let column = if name == "ngram_base" { "name" } else { "body" };
        for q in ds["queries"].as_array().into_iter().flatten() {
            let query = &q["query"];
            let k = query.get("k").and_then(Value::as_u64).map(|k| k as usize);
            let nums = |k: &str| {
                q.get(k)
                    .and_then(Value::as_array)
                    .map(|a| a.iter().map(|v| v.as_f64().unwrap()).collect::<Vec<_>>())
                    .unwrap_or_default()
            };
            out.push(Case {
                dataset: name.clone(),
                label: q["label"].as_str().unwrap().to_string(),
                request: SearchRequest {
                    query: to_query(query, column),
                    k,
                    index_only: false,
                },
                addresses: nums("row_addresses")
                    .into_iter()
                    .map(|v| v as u64)
                    .collect(),
                scores: nums("scores").into_iter().map(|v| v as f32).collect(),
                error: q.get("error").and_then(Value::as_str).map(str::to_string),
            });
        }
    }
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
    let cases = cases();
    let mut failures = Vec::new();
    for case in &cases {
        let dataset = open(case.dataset.clone()).await;
        match (
            search(&dataset, &case.request, &IoStats::new()).await,
            &case.error,
        ) {
            (Err(e), Some(want)) => {
                // pylance's message starts with its error class; ours carries the same words.
                let words = want.trim_start_matches("Invalid user input: ");
                let words = words.split(", /").next().unwrap_or(words);
                if !e.to_string().contains(words) {
                    failures.push(format!(
                        "{}/{}: error {e}, pylance {want}",
                        case.dataset, case.label
                    ));
                }
            }
            (Ok(_), Some(want)) => failures.push(format!(
                "{}/{}: answered, pylance refused: {want}",
                case.dataset, case.label
            )),
            (Ok(out), None) => {
                let got: Vec<(u64, f32)> =
                    out.hits.iter().map(|h| (h.row_address, h.score)).collect();
                if let Some(why) = mismatch(case, &got) {
                    failures.push(format!("{}/{}: {why}", case.dataset, case.label));
                }
            }
            (Err(e), None) => failures.push(format!("{}/{}: error {e}", case.dataset, case.label)),
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
    assert!(checked >= 210, "{checked}");
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
    assert!(checked >= 210, "{checked}");
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
    let cases = cases();
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
    // --phrase [--slop N] answers as pylance (positions); without positions, pylance's error.
    let positions = fixtures()
        .join("datasets")
        .join("positions")
        .display()
        .to_string();
    let case = cases
        .iter()
        .find(|c| c.dataset == "positions" && c.label == "phrase_slop3")
        .unwrap();
    let args = QueryArgs {
        dataset: positions,
        search: Some("dog fox".into()),
        search_column: Some("body".into()),
        operator: "or".into(),
        phrase: true,
        slop: Some(3),
        ..QueryArgs::default()
    };
    let mut out = Vec::new();
    run_query_to(&args, &mut out, &mut Vec::new())
        .await
        .unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let got: Vec<(u64, f32)> = v["row_addresses"]
        .as_array()
        .unwrap()
        .iter()
        .zip(v["scores"].as_array().unwrap())
        .map(|(a, s)| (a.as_u64().unwrap(), s.as_f64().unwrap() as f32))
        .collect();
    assert_eq!(mismatch(case, &got), None);
    let args = QueryArgs {
        dataset: dataset.clone(),
        search: Some("lazy dog".into()),
        search_column: Some("body".into()),
        operator: "or".into(),
        phrase: true,
        ..QueryArgs::default()
    };
    let e = run_query_to(&args, &mut Vec::new(), &mut Vec::new())
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("recreating the index with position"),
        "{e}"
    );
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

/// `inspect` (`Dataset::describe`) shows an INVERTED index's tokenizer params, format and
/// partitions, as `metadata.lance` records them.
#[tokio::test]
async fn describe_shows_the_tokenizer() {
    for (name, language, positions, format) in [
        ("positions", "English", true, 2),
        ("positions_v1", "English", true, 1),
        ("french", "French", false, 2),
    ] {
        let path = fixtures().join("datasets").join(name);
        let dataset = crate::Dataset::open(path.to_str().unwrap()).await.unwrap();
        let d = dataset.describe().await.unwrap();
        let fts = d.indices[0].full_text.as_ref().expect("full_text");
        assert_eq!(fts["tokenizer"]["language"], language, "{fts}");
        assert_eq!(fts["tokenizer"]["with_position"], positions, "{fts}");
        assert_eq!(fts["format_version"], format, "{fts}");
        let documents = fts["partitions"][0]["documents"].as_u64().unwrap();
        assert!((250..=700).contains(&documents), "{fts}");
    }
}
