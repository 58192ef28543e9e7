//! The differential test against pylance 14.0.2 (issue 32): every old-lake dataset and
//! lance's compatibility datasets, a few hundred generated filters each (every filterable
//! column x `=`, `<>`, `<`, `>=`, `IN` with and without NULL, `NOT IN`, `BETWEEN`,
//! `IS [NOT] NULL`, list tests, combined under AND / OR / NOT) and random takes, with
//! pylance's answers from `tests/fixtures/old/gen_differential.py`
//! (`tests/fixtures/datasets/old/differential.json`).
//!
//! Each filter runs twice:
//! * with scans allowed (the answer lakeseek always gives): its rows must be pylance's
//!   (its default plan's, or its `use_scalar_index=False` scan's where the two differ);
//! * index only, on a freshly opened dataset (no keys or pages cached by earlier filters):
//!   where lakeseek's plan answers without a scan, exact or rechecked, its rows must be
//!   pylance's too; a refusal is counted by reason.
//!
//! Filters pylance itself fails on are skipped and counted. Summary lines print with
//! `--nocapture`.

use std::collections::BTreeMap;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use serde_json::Value;

use crate::{Dataset, FilterExactness};

/// A path under this crate's `tests/fixtures/` (this checkout's, not the one
/// `lakeseek-testing` was built from).
fn fixture(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

fn differential() -> Value {
    let path = fixture("datasets/old/differential.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn undelta(v: &Value) -> Vec<u64> {
    let mut acc = 0u64;
    v.as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let d = d.as_u64().unwrap();
            acc = if i == 0 { d } else { acc + d };
            acc
        })
        .collect()
}

/// The addresses of `universe` whose bits are set in the hex bitset `hex`.
fn from_bitset(universe: &[u64], hex: &str) -> Vec<u64> {
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    assert_eq!(bytes.len(), universe.len().div_ceil(8), "bitset length");
    universe
        .iter()
        .enumerate()
        .filter(|(i, _)| bytes[i / 8] & (1 << (i % 8)) != 0)
        .map(|(_, a)| *a)
        .collect()
}

/// Filters whose pylance 14.0.2 answer is wrong by SQL semantics (DataFusion's simplifier
/// drops conjuncts next to an `IN (.., NULL)` under NOT): (dataset, filter, the rows SQL
/// gives, why). lakeseek must give that many rows.
const PYLANCE_WRONG: &[(&str, &str, usize, &str)] = &[
    (
        "p0_17_0_v2_0_nodcat",
        "NOT ((day IN (DATE '2020-02-24', DATE '2020-07-02', DATE '2022-08-22')) AND (day IN \
         (DATE '2025-03-24', DATE '2025-04-19', NULL)))",
        656,
        "pylance returns all 734 rows, the 74 NULL days included (NOT NULL is NULL) and the 4 \
         rows in the first list (TRUE AND NULL is NULL)",
    ),
    (
        "p0_17_0_legacy_then_p14_0_2",
        "NOT ((id NOT IN (536, 856)) AND (id IN (274, 196, NULL)) AND (NOT (ts BETWEEN \
         TIMESTAMP '2024-03-01 13:14:08.012949' AND TIMESTAMP '2024-03-09 07:37:08.594695')))",
        555,
        "pylance's plan drops `id NOT IN (536, 856)`; id 856 (ts 2024-03-10) makes it FALSE, \
         so the NOT is TRUE there",
    ),
];

/// What one dataset's run found.
#[derive(Default)]
struct Tally {
    filters: usize,
    pylance_wrong: usize,
    pylance_refused: usize,
    index_answered: usize,
    index_exact: usize,
    index_refused: BTreeMap<String, usize>,
    takes: usize,
    bad: Vec<String>,
}

fn refusal_reason(e: &crate::Error) -> String {
    let text = e.to_string();
    let text = text.split(" (").next().unwrap_or(&text).to_string();
    // Keep the kind of refusal, not the column or literal.
    text.split(':').take(2).collect::<Vec<_>>().join(":")
}

async fn check_filter(
    name: &str,
    dataset: &Dataset,
    url: &str,
    want: &[Vec<u64>],
    filter: &str,
    tally: &mut Tally,
) {
    let shown = |rows: &[u64]| rows.iter().take(4).copied().collect::<Vec<_>>();
    let scanned = dataset
        .query()
        .filter(filter)
        .allow_scan(true)
        .execute()
        .await;
    match scanned {
        Ok(r) if want.contains(&r.row_addresses) => {}
        Ok(r) => tally.bad.push(format!(
            "{name}: {filter}: {} rows {:?}.., pylance {} {:?}..",
            r.row_addresses.len(),
            shown(&r.row_addresses),
            want[0].len(),
            shown(&want[0])
        )),
        Err(e) => tally.bad.push(format!("{name}: {filter}: {e}")),
    }
    let fresh = match Dataset::open(url).await {
        Ok(d) => d,
        Err(e) => return tally.bad.push(format!("{name}: open: {e}")),
    };
    let plan = match fresh.query().filter(filter).plan().await {
        Ok(p) => p,
        Err(e) => {
            *tally.index_refused.entry(refusal_reason(&e)).or_default() += 1;
            return;
        }
    };
    tally.index_answered += 1;
    let exact = plan.exactness() == FilterExactness::Exact;
    if exact {
        tally.index_exact += 1;
    }
    match fresh.execute_planned_filter(&plan).await {
        Ok(rows) if want.contains(&rows) => {}
        Ok(rows) => tally.bad.push(format!(
            "{name}: {filter} (index only, {}): {} rows {:?}.., pylance {} {:?}.. plan {}",
            if exact { "exact" } else { "rechecked" },
            rows.len(),
            shown(&rows),
            want[0].len(),
            shown(&want[0]),
            plan.explain()
        )),
        Err(e) => tally
            .bad
            .push(format!("{name}: {filter} (index only): {e}")),
    }
}

async fn check_take(name: &str, dataset: &Dataset, column: &str, take: &Value, tally: &mut Tally) {
    let addresses: Vec<u64> = take["addresses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_u64().unwrap())
        .collect();
    tally.takes += 1;
    let got = dataset.take(&addresses, &[column]).await;
    match (got, take.get("ids")) {
        (Ok(batch), Some(ids)) => {
            let want: Vec<i64> = ids
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i.as_i64().unwrap())
                .collect();
            let got: Vec<i64> = batch
                .column_by_name(column)
                .unwrap()
                .as_primitive::<Int64Type>()
                .values()
                .to_vec();
            if got != want {
                tally.bad.push(format!(
                    "{name}: take {addresses:?}: {got:?}, pylance {want:?}"
                ));
            }
        }
        (Err(e), Some(_)) => tally.bad.push(format!("{name}: take {addresses:?}: {e}")),
        (Ok(_), None) => tally.bad.push(format!(
            "{name}: take {addresses:?} answered, pylance failed: {}",
            take["error"]
        )),
        (Err(_), None) => {}
    }
}

async fn run_dataset(entry: &Value) -> Tally {
    let name = entry["name"].as_str().unwrap();
    let path = fixture(&format!("datasets/{}", entry["path"].as_str().unwrap()));
    let url = path.to_str().unwrap().to_string();
    let mut tally = Tally::default();
    let dataset = match Dataset::open(&url).await {
        Ok(d) => d,
        Err(e) => {
            tally.bad.push(format!("{name}: open: {e}"));
            return tally;
        }
    };
    let universe = undelta(&entry["universe"]);
    for f in entry["filters"].as_array().unwrap() {
        let filter = f["f"].as_str().unwrap();
        let Some(a) = f["a"].as_str() else {
            tally.pylance_refused += 1;
            continue;
        };
        tally.filters += 1;
        let mut want = vec![from_bitset(&universe, a)];
        if let Some(s) = f["scan"].as_str() {
            want.push(from_bitset(&universe, s));
        }
        if let Some(s) = f["alt"].as_str() {
            want.push(from_bitset(&universe, s));
        }
        if let Some((_, _, rows, _)) = PYLANCE_WRONG
            .iter()
            .find(|(d, flt, _, _)| *d == name && *flt == filter)
        {
            tally.pylance_wrong += 1;
            // lakeseek's answer has the SQL count; pylance's is checked to differ.
            let got = dataset
                .query()
                .filter(filter)
                .allow_scan(true)
                .execute()
                .await;
            match got {
                Ok(r) if r.row_addresses.len() == *rows && !want.contains(&r.row_addresses) => {}
                Ok(r) => tally.bad.push(format!(
                    "{name}: {filter}: {} rows, want {rows} (pylance is wrong here)",
                    r.row_addresses.len()
                )),
                Err(e) => tally.bad.push(format!("{name}: {filter}: {e}")),
            }
            continue;
        }
        check_filter(name, &dataset, &url, &want, filter, &mut tally).await;
    }
    let column = entry["id_column"].as_str().unwrap();
    for take in entry["takes"].as_array().unwrap() {
        check_take(name, &dataset, column, take, &mut tally).await;
    }
    tally
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn old_lakes_answer_generated_filters_and_takes_as_pylance() {
    let all = differential();
    let datasets = all["datasets"].as_array().unwrap();
    assert!(datasets.len() >= 23, "only {} datasets", datasets.len());
    let mut total = Tally::default();
    for entry in datasets {
        let t = run_dataset(entry).await;
        println!(
            "{}: {} filters ({} index-only: {} exact), {} refused by pylance, {} takes, {} wrong",
            entry["name"].as_str().unwrap(),
            t.filters,
            t.index_answered,
            t.index_exact,
            t.pylance_refused,
            t.takes,
            t.bad.len()
        );
        total.filters += t.filters;
        total.pylance_refused += t.pylance_refused;
        total.pylance_wrong += t.pylance_wrong;
        total.index_answered += t.index_answered;
        total.index_exact += t.index_exact;
        total.takes += t.takes;
        for (reason, n) in t.index_refused {
            *total.index_refused.entry(reason).or_default() += n;
        }
        total.bad.extend(t.bad);
    }
    println!(
        "total: {} filters checked ({} answered index-only, {} of them exact), {} skipped \
         (pylance fails), {} takes",
        total.filters, total.index_answered, total.index_exact, total.pylance_refused, total.takes
    );
    for (reason, n) in &total.index_refused {
        println!("  index-only refused {n}x: {reason}");
    }
    println!(
        "  {} filters where pylance is wrong (PYLANCE_WRONG)",
        total.pylance_wrong
    );
    assert_eq!(
        total.pylance_wrong,
        PYLANCE_WRONG.len(),
        "a PYLANCE_WRONG filter is gone"
    );
    assert!(total.filters >= 5000, "only {} filters", total.filters);
    assert!(
        total.index_answered >= 1000,
        "{} index answers",
        total.index_answered
    );
    assert!(total.takes >= 100, "only {} takes", total.takes);
    assert!(
        total.bad.is_empty(),
        "{} mismatches:\n{}",
        total.bad.len(),
        total.bad.join("\n")
    );
}
