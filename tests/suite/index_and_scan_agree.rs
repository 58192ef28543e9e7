//! One evaluator: a leaf a BTree answers (its pages filtered by the one three-valued
//! evaluator, `index::sql::eval`) and the same leaf evaluated on the column's data (a scan,
//! planned with no index kind) return the same rows, for the values where two evaluators
//! could drift: NaN, -0.0, NULL, `IN (.., NULL)`, `NOT` over NULL, `IS [NOT] TRUE | FALSE |
//! UNKNOWN`, unsigned values above `i32::MAX`, strings and binaries as bytes. The fixture
//! is `types.lance` (tests/fixtures/datasets/gen_datasets.py): BTrees with 32-row pages on
//! float64/float32 columns holding -0.0, NaN and ±inf, nulls in every column, an
//! unindexed fragment and deletions.

use std::sync::Arc;

use crate::index::engine::{self, FilterOptions};
use crate::index::filter::{execute_filter, plan_filter};
use crate::index::sql::parsed::ParsedFilter;
use crate::io::IoStats;
use crate::lance::dataset::{DatasetSession, DatasetVersion};
use crate::suite::common::dataset_fixture;
use crate::suite::common::explain_kinds as kinds;

/// Filters whose leaves the BTree answers.
const INDEXED: &[&str] = &[
    "f = -0.0",
    "f = 0.0",
    "f != 0.0",
    "f < 0",
    "f >= -0.0",
    "f BETWEEN -0.0 AND 0.0",
    "f = CAST('NaN' AS DOUBLE)",
    "f >= CAST('NaN' AS DOUBLE)",
    "f < CAST('NaN' AS DOUBLE)",
    // -NaN sorts first, NaN last: one session's scans must not take one for the other
    // (their texts differ only in the NaN's sign).
    "f > CAST('-NaN' AS DOUBLE)",
    "f > CAST('NaN' AS DOUBLE)",
    "f IN (-0.0, CAST('NaN' AS DOUBLE), NULL)",
    "f IN (1.5, NULL)",
    "NOT (f IN (1.5, NULL))",
    "f NOT IN (0.0, NULL)",
    "(f > -0.0) IS NOT TRUE",
    "(f = 1.5) IS FALSE",
    "f32 = CAST('NaN' AS FLOAT)",
    "f32 IN (0.0, 0.1, NULL)",
    "NOT (f32 < -0.0)",
    "f32 > 0.1",
    "(f32 = 2.25) IS NOT FALSE",
    "i IN (7, NULL)",
    "NOT (i IN (7, NULL))",
    "i = NULL",
    "u32 >= 3900000000",
    "u32 < 100000000 OR u32 IS NULL",
    "s IN ('', 'a', NULL)",
    "s < 'ab'",
    "b = X'00'",
    "b < X'0100'",
    "bl IS NOT TRUE",
];

/// Filters whose leaves no index answers (evaluated on data on both paths): they agree
/// trivially, and are here to check the forms bind and run.
const EVALUATED: &[&str] = &[
    "(f = 1.5) IS UNKNOWN",
    "f IS DISTINCT FROM -0.0",
    "f IS NOT DISTINCT FROM CAST('NaN' AS DOUBLE)",
];

/// The filters no row makes TRUE: a value not in a list holding NULL is NULL, and so is
/// its negation; `= NULL` is NULL everywhere; nothing is above NaN.
const NEVER_TRUE: &[&str] = &[
    "f > CAST('NaN' AS DOUBLE)",
    "NOT (f IN (1.5, NULL))",
    "f NOT IN (0.0, NULL)",
    "NOT (i IN (7, NULL))",
    "i = NULL",
];

fn explained_kinds(plan: &engine::FilterPlan) -> Vec<String> {
    let mut found = Vec::new();
    kinds(&plan.explain(), &mut found);
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_indexed_leaf_and_its_scan_return_the_same_rows() {
    let stats = IoStats::new();
    let path = dataset_fixture("types");
    let session = Arc::new(DatasetSession::default());
    let dataset = DatasetVersion::open_url(path.to_str().unwrap(), &[], None, session, &stats)
        .await
        .unwrap();
    let options = FilterOptions { allow_scan: true };
    for filter in INDEXED.iter().chain(EVALUATED) {
        let indexed_plan = plan_filter(&dataset, filter, options, &stats)
            .await
            .unwrap();
        let answered_by = explained_kinds(&indexed_plan);
        assert_eq!(
            answered_by.iter().any(|k| k == "btree"),
            INDEXED.contains(filter),
            "{filter}: {answered_by:?}"
        );
        let indexed = execute_filter(&dataset, &indexed_plan, &stats)
            .await
            .unwrap();
        let scan_plan = engine::plan(
            &dataset,
            &ParsedFilter::parse(filter).unwrap(),
            options,
            &[],
            &stats,
        )
        .await
        .unwrap();
        let scanned_by = explained_kinds(&scan_plan);
        assert!(
            !scanned_by.iter().any(|k| k == "btree"),
            "{filter}: {scanned_by:?}"
        );
        let scanned = engine::execute(&dataset, &scan_plan, &stats)
            .await
            .unwrap()
            .row_addresses;
        assert_eq!(indexed, scanned, "{filter}");
        assert_eq!(indexed.is_empty(), NEVER_TRUE.contains(filter), "{filter}");
    }
}
