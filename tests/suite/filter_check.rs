//! `Query::check` decides, from the manifest alone, what `Query::plan` then decides by
//! reading: for every recorded filter of the scalar index fixtures (every kind, cross-column
//! mixes, unindexed columns) and every `any_element` call of the list element fixtures (and
//! its NOT), the check sends no request, fails exactly when planning fails, and gives the
//! plan's exactness (a negated call may be reported as candidates when its plan turns out
//! exact: the check does not know the truth value a leaf is asked for).

use crate::suite::common::{fixture, json_fixture};
use crate::{Dataset, FilterExactness, IoStats};

async fn open(dir: &str, name: &str, stats: &IoStats) -> Dataset {
    let path = fixture(dir).join(format!("{name}.lance"));
    Dataset::builder(path.to_str().unwrap())
        .stats(stats)
        .open()
        .await
        .unwrap()
}

/// Every `(dataset, filter)` recorded in `answers` (a fixture's `datasets.*.queries`).
fn recorded(answers: &str) -> Vec<(String, String)> {
    let doc = json_fixture(answers);
    let mut out = Vec::new();
    for (name, d) in doc["datasets"].as_object().unwrap() {
        for q in d["queries"].as_array().unwrap() {
            out.push((name.clone(), q["filter"].as_str().unwrap().to_string()));
        }
    }
    out
}

/// Check, then plan, `filter`: a failure line when they disagree.
async fn disagreement(dataset: &Dataset, stats: &IoStats, filter: &str) -> Option<String> {
    let query = dataset.query().filter(filter);
    let before = stats.snapshot();
    let checked = query.check();
    let after = stats.snapshot();
    if after.requests != before.requests {
        return Some(format!("{filter}: the check sent a request"));
    }
    let negated_call = filter.starts_with("NOT any_element");
    match (checked, query.plan().await) {
        (Ok(c), Ok(p)) if c == p.exactness() => None,
        (Ok(FilterExactness::Candidates), Ok(p))
            if negated_call && p.exactness() == FilterExactness::Exact =>
        {
            None
        }
        (Err(_), Err(_)) => None,
        (c, p) => Some(format!(
            "{filter}: check {c:?}, plan {:?}",
            p.map(|p| p.exactness())
        )),
    }
}

#[tokio::test]
async fn check_decides_without_reading_what_planning_decides() {
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut candidates = 0;
    let mut refused = 0;
    let cases = recorded("datasets/scalar_answers.json")
        .into_iter()
        .map(|(name, filter)| ("datasets", name, filter))
        .chain(
            recorded("list_element/answers.json")
                .into_iter()
                .flat_map(|(name, filter)| {
                    let not = format!("NOT {filter}");
                    [
                        ("list_element/datasets", name.clone(), filter),
                        ("list_element/datasets", name, not),
                    ]
                }),
        )
        .chain([
            // No index on the column: refused by both without a scan.
            (
                "datasets",
                "scalar_indices".to_string(),
                "nothing_here = 1".to_string(),
            ),
        ]);
    for (dir, name, filter) in cases {
        let stats = IoStats::new();
        let dataset = open(dir, &name, &stats).await;
        checked += 1;
        if let Ok(FilterExactness::Candidates) = dataset.query().filter(&filter).check() {
            candidates += 1;
        }
        if dataset.query().filter(&filter).check().is_err() {
            refused += 1;
        }
        failures.extend(disagreement(&dataset, &stats, &filter).await);
    }
    eprintln!("{checked} filters: {candidates} candidates, {refused} refused");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The corpus has all three outcomes.
    assert!(checked > 300, "{checked}");
    assert!(candidates > 10, "{candidates}");
    assert!(refused > 0, "{refused}");
}
