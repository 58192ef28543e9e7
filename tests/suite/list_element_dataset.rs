//! `any_element` on the fixture datasets through lakeseek's own manifest, BTree and
//! nested readers: every recorded filter, and its NOT, returns exactly the brute-force
//! answer of the independent Python implementation (tests/fixtures/list_element), with the
//! index used as the spec says (exact / superset + recheck / complement / on data /
//! refused).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use crate::cli::query::{run_query_to, QueryArgs};
use crate::index::list_element::query::{plan_any_element_query, AnyElementOptions};
use crate::index::list_element::{parse_any_element_filter, CallStrategy, IndexAnswer};
use crate::io::IoStats;
use crate::lance::dataset::{DatasetSession, DatasetVersion};
use crate::suite::common::any_element::execute_any_element_query;
use crate::suite::common::{json_fixture, u64_set as set};
use crate::Error;
use serde_json::Value;

fn dir() -> PathBuf {
    crate::suite::common::fixture("list_element")
}

fn answers() -> Value {
    json_fixture("list_element/answers.json")
}

fn url(name: &str) -> String {
    dir()
        .join("datasets")
        .join(format!("{name}.lance"))
        .to_str()
        .unwrap()
        .to_string()
}

async fn open(name: &str, stats: &IoStats) -> DatasetVersion {
    DatasetVersion::open_url(
        &url(name),
        &[],
        None,
        Arc::new(DatasetSession::default()),
        stats,
    )
    .await
    .unwrap()
}

fn strategy_name(s: &CallStrategy) -> &'static str {
    match s {
        CallStrategy::IndexExact => "index_exact",
        CallStrategy::IndexThenRecheck => "recheck",
        CallStrategy::IndexComplement => "complement",
        CallStrategy::EvaluateOnData { .. } => "data",
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fixture_filter_and_its_not_match_the_brute_force() {
    let doc = answers();
    let mut failures = Vec::new();
    let mut checked = 0;
    for (name, d) in doc["datasets"].as_object().unwrap() {
        let stats = IoStats::new();
        let dataset = open(name, &stats).await;
        for q in d["queries"].as_array().unwrap() {
            let filter = q["filter"].as_str().unwrap();
            for negated in [false, true] {
                let mut call = parse_any_element_filter(filter).unwrap();
                call.negated = negated;
                let label = format!("{name}: {}{filter}", if negated { "NOT " } else { "" });
                let plan = match plan_any_element_query(
                    &dataset,
                    &call,
                    AnyElementOptions::default(),
                    &stats,
                )
                .await
                {
                    Ok(p) => p,
                    Err(e) => {
                        failures.push(format!("{label}: plan error {e}"));
                        continue;
                    }
                };
                // The index is used as the generator expects.
                let expected_strategy = match (
                    q["index"].as_str().unwrap(),
                    negated,
                    q["not"].as_str().unwrap(),
                ) {
                    ("refused" | "not_used", _, _) => "data",
                    (_, true, "index") => "complement",
                    (_, true, _) => "data",
                    ("exact", false, _) => "index_exact",
                    ("superset", false, _) => "recheck",
                    (other, _, _) => panic!("{other}"),
                };
                if strategy_name(&plan.strategy) != expected_strategy {
                    failures.push(format!(
                        "{label}: strategy {:?}, expected {expected_strategy}",
                        plan.strategy
                    ));
                }
                if q["index"] == "refused" && !plan.indices.iter().any(|l| l.contains("not used")) {
                    failures.push(format!("{label}: refusal not reported: {:?}", plan.indices));
                }
                if let (Some(c), "exact" | "superset") =
                    (&plan.chosen, q["index"].as_str().unwrap())
                {
                    let want = if q["index"] == "exact" {
                        IndexAnswer::Exact
                    } else {
                        IndexAnswer::SupersetWithRecheck
                    };
                    if c.plan.answer != want {
                        failures.push(format!("{label}: answer {:?}", c.plan.answer));
                    }
                }
                let got = execute_any_element_query(&dataset, &plan, &stats).await;
                checked += 1;
                match (got, q["error"].as_str()) {
                    (Err(Error::Unsupported { .. }), Some("unsupported")) => {}
                    (Ok(a), None) => {
                        let got: BTreeSet<u64> = a.row_addresses.iter().collect();
                        let want = set(&q[if negated { "false" } else { "true" }]);
                        if got != want {
                            let extra: Vec<_> = got.difference(&want).take(5).collect();
                            let missing: Vec<_> = want.difference(&got).take(5).collect();
                            failures.push(format!("{label}: extra {extra:?} missing {missing:?}"));
                        }
                    }
                    (other, expected_error) => failures.push(format!(
                        "{label}: {other:?}, expected error {expected_error:?}"
                    )),
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked >= 200, "{checked}");
}

#[tokio::test]
async fn exact_search_reads_only_the_touched_pages() {
    let stats = IoStats::new();
    let dataset = open("detections", &stats).await;
    let call =
        parse_any_element_filter("any_element(det, 'label = ''dog'' AND confidence <= 0.25')")
            .unwrap();
    let plan = plan_any_element_query(&dataset, &call, AnyElementOptions::default(), &stats)
        .await
        .unwrap();
    let chosen = plan.chosen.as_ref().unwrap();
    let target = &chosen.targets[0];
    let pages = target.opened.lookup.num_pages();
    assert!(pages > 10);
    assert!(
        !target.selection.is_empty() && target.selection.len() <= 3,
        "{:?}",
        target.selection
    );
    assert_eq!(chosen.plan.true_ranges.len(), 1);
    // The appended fragment is evaluated on data, the others come from the index.
    assert_eq!(plan.scans, vec![3]);
}

async fn cli(filter: &str, explain: bool) -> (Value, String) {
    let args = QueryArgs {
        dataset: url("detections"),
        filter: filter.to_string(),
        columns: vec![],
        version: None,
        explain,
        allow_scan: true,
        stats: true,
        storage_options: vec![],
        ..QueryArgs::default()
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    run_query_to(&args, &mut out, &mut err).await.unwrap();
    (
        serde_json::from_slice(&out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

fn find_query<'a>(doc: &'a Value, filter: &str) -> &'a Value {
    doc["datasets"]["detections"]["queries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["filter"] == filter)
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_query_with_not_and_other_predicates() {
    let doc = answers();
    let filter = "any_element(det, 'label = ''car'' AND confidence > 0.9')";
    let q = find_query(&doc, filter);
    let (out, err) = cli(filter, true).await;
    assert_eq!(set(&out["row_addresses"]), set(&q["true"]));
    assert!(err.contains("index (exact)"), "{err}");
    assert!(err.contains("encoded range(s) searched"), "{err}");
    assert!(err.contains("\"requests\""), "{err}");
    // NOT from the index.
    let (out, err) = cli(&format!("NOT {filter}"), true).await;
    assert_eq!(set(&out["row_addresses"]), set(&q["false"]));
    assert!(err.contains("index complement"), "{err}");
    // Combined by AND with a predicate on another column (scanned: no index on id).
    // ids: 80 rows per fragment, fragment 3 appended with ids 240..280.
    let (out, _) = cli(&format!("{filter} AND id < 100"), false).await;
    let id_of = |a: u64| (a >> 32) * 80 + (a & 0xFFFF_FFFF);
    let want: BTreeSet<u64> = set(&q["true"])
        .into_iter()
        .filter(|a| id_of(*a) < 100)
        .collect();
    assert_eq!(set(&out["row_addresses"]), want);
    // Two calls.
    let other = "any_element(det, 'label IS NULL')";
    let (out, _) = cli(&format!("{filter} AND NOT {other}"), false).await;
    let not_null: BTreeSet<u64> = set(&find_query(&doc, other)["false"]);
    let want: BTreeSet<u64> = set(&q["true"]).intersection(&not_null).copied().collect();
    assert_eq!(set(&out["row_addresses"]), want);
}

#[tokio::test]
async fn cli_explains_why_an_index_is_not_used() {
    let args = QueryArgs {
        dataset: url("dropped_key"),
        filter: "any_element(det, 'label = ''car''')".into(),
        columns: vec![],
        version: None,
        explain: true,
        allow_scan: false,
        stats: false,
        storage_options: vec![],
        ..QueryArgs::default()
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    run_query_to(&args, &mut out, &mut err).await.unwrap();
    let err = String::from_utf8(err).unwrap();
    assert!(
        err.contains("list element index not used: key 1 (field id 4"),
        "{err}"
    );
    assert!(err.contains("evaluate on data"), "{err}");
    // Misplaced calls and bad predicates are clear errors.
    for (filter, unsupported) in [
        // OR with an unindexed column: every row's id must be read -> needs --allow-scan.
        ("any_element(det, 'label = ''car''') OR id = 1", false),
        ("any_element(det, 'colour = ''red''')", false),
        ("any_element(det, 'label = ')", false),
        ("any_element(id, 'x = 1')", false),
    ] {
        let args = QueryArgs {
            filter: filter.into(),
            explain: false,
            ..args.clone()
        };
        let r = run_query_to(&args, &mut Vec::new(), &mut Vec::new()).await;
        match (r, unsupported) {
            (Err(Error::Unsupported { .. }), true) | (Err(Error::InvalidArgument(_)), false) => {}
            (other, _) => panic!("{filter}: {other:?}"),
        }
    }
}
