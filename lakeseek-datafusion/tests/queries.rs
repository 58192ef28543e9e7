//! The `nearest(..)` and `search(..)` table functions, `_rowid` and blob descriptor columns
//! against the root crate's fixtures and pylance 14.0.2's recorded answers
//! (tests/fixtures/vector, fts, rowids, blobs): the SQL answer equals pylance's (and the
//! library's, exactly); joins; clear errors for wrong arguments.

use std::path::PathBuf;

use datafusion::arrow::array::{Array, Float32Array, UInt64Array};
use datafusion::prelude::SessionContext;
use lakeseek::Dataset;
use serde_json::Value;

use crate::common::{lakeseek_ctx, rows, try_rows};

/// `tests/fixtures/<rel>` of the root crate of this checkout.
pub(crate) fn root_fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(rel)
        .canonicalize()
        .unwrap_or_else(|e| panic!("fixture {rel}: {e}"))
}

pub(crate) async fn open_fixture(rel: &str) -> Dataset {
    Dataset::open(root_fixture(rel).to_str().unwrap())
        .await
        .expect("open fixture")
}

fn json(rel: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(root_fixture(rel)).unwrap()).unwrap()
}

/// Row addresses and distances / scores of the first two columns of `sql`'s answer.
pub(crate) async fn ranked(ctx: &SessionContext, sql: &str) -> (Vec<u64>, Vec<f32>) {
    let frame = ctx.sql(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    let batches = frame
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let (mut addresses, mut scores) = (Vec::new(), Vec::new());
    for b in &batches {
        let a = b.column(0).as_any().downcast_ref::<UInt64Array>().unwrap();
        let s = b.column(1).as_any().downcast_ref::<Float32Array>().unwrap();
        addresses.extend(a.values().iter());
        scores.extend(s.values().iter());
    }
    (addresses, scores)
}

fn close(a: f32, b: f32, tolerance: f32) -> bool {
    (a - b).abs() <= tolerance * a.abs().max(b.abs()).max(1e-2)
}

/// `None` when `got` equals `want` (rows and scores within `tolerance` relative; rows of
/// equal score in either order), else what differs.
pub(crate) fn differs(
    got: &(Vec<u64>, Vec<f32>),
    want: &(Vec<u64>, Vec<f32>),
    tolerance: f32,
) -> Option<String> {
    if got.0.len() != want.0.len() {
        return Some(format!(
            "{} rows, want {}: {got:?} vs {want:?}",
            got.0.len(),
            want.0.len()
        ));
    }
    for (i, (a, b)) in got.1.iter().zip(&want.1).enumerate() {
        if !close(*a, *b, tolerance) {
            return Some(format!("score {i}: {a} vs {b}; {got:?} vs {want:?}"));
        }
    }
    for (row, score) in got.0.iter().zip(&got.1) {
        let tied = want
            .1
            .iter()
            .zip(&want.0)
            .any(|(s, r)| close(*s, *score, tolerance) && !got.0.contains(r));
        if !want.0.contains(row) && !tied {
            return Some(format!("row {row} ({score}) not in {want:?}"));
        }
    }
    None
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// The SQL options of catalog record `q` (None: a record this test does not replay).
fn nearest_options(q: &Value) -> Option<Vec<String>> {
    let fixed =
        q.get("nprobes").is_some() || q.get("maximum_nprobes").is_some() || q["use_index"] == false;
    if q.get("error").is_some() || q.get("distance_range").is_some() || !fixed {
        return None;
    }
    let mut options = vec!["allow_scan=true".to_string()];
    for key in [
        "nprobes",
        "minimum_nprobes",
        "maximum_nprobes",
        "refine_factor",
        "ef",
    ] {
        if let Some(v) = q[key].as_u64() {
            options.push(format!("{key}={v}"));
        }
    }
    if let Some(f) = q["filter"].as_str() {
        if f.contains('%') {
            return None;
        }
        options.push(format!("filter={f}"));
        // pylance's default is a postfilter.
        options.push(format!("prefilter={}", q["prefilter"] == true));
    }
    if q["use_index"] == false {
        options.push("use_index=false".into());
    }
    if q["fast_search"] == true {
        options.push("fast_search=true".into());
    }
    if let Some(m) = q["metric"].as_str() {
        options.push(format!("metric={m}"));
    }
    Some(options)
}

/// The library's answer to the same query, built as `nearest(..)` builds it.
async fn library_nearest(
    dataset: &Dataset,
    vector: &[f32],
    k: u64,
    options: &[String],
) -> (Vec<u64>, Vec<f32>) {
    let mut n = dataset
        .nearest("vec", vector)
        .k(k as usize)
        .allow_scan(true);
    for o in options {
        let (key, v) = o.split_once('=').unwrap();
        n = match key {
            "nprobes" => n.nprobes(v.parse().unwrap()),
            "minimum_nprobes" => n.minimum_nprobes(v.parse().unwrap()),
            "maximum_nprobes" => n.maximum_nprobes(v.parse().unwrap()),
            "refine_factor" => n.refine(v.parse().unwrap()),
            "ef" => n.ef(v.parse().unwrap()),
            "filter" => n.filter(v),
            "prefilter" => n.postfilter(v == "false"),
            "use_index" => n.use_index(v == "true"),
            "fast_search" => n.fast_search(v == "true"),
            "metric" => n.metric(v).unwrap(),
            _ => n,
        };
    }
    let batch = n.execute().await.expect("library nearest");
    let a = batch
        .column(0)
        .as_any()
        .downcast_ref::<UInt64Array>()
        .unwrap();
    let d = batch
        .column(1)
        .as_any()
        .downcast_ref::<Float32Array>()
        .unwrap();
    (a.values().to_vec(), d.values().to_vec())
}

fn sql_vector(v: &[f32]) -> String {
    let parts: Vec<String> = v.iter().map(|x| format!("{x:?}")).collect();
    format!("[{}]", parts.join(", "))
}

fn sql_string(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// Datasets of tests/fixtures/vector replayed here: every quantizer lakeseek searches, the
/// three metrics, deletions, a delta index, an unindexed fragment, f64 vectors.
const VECTOR_DATASETS: &[&str] = &[
    "ivf_pq_l2",
    "ivf_pq_cosine",
    "ivf_flat_dot",
    "ivf_sq_l2",
    "ivf_pq4_l2",
    "ivf_pq_l2_deleted",
    "ivf_pq_l2_delta",
    "ivf_flat_l2_f64",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nearest_equals_pylance_and_the_library() {
    let catalog = json("vector/catalog.json");
    let mut checked = 0;
    for name in VECTOR_DATASETS {
        let ds = &catalog["datasets"][name];
        let dataset = open_fixture(&format!("vector/datasets/{name}")).await;
        let ctx = lakeseek_ctx(&[("t", &dataset)]);
        for q in ds["queries"].as_array().unwrap() {
            let Some(options) = nearest_options(q) else {
                continue;
            };
            let vector: Vec<f32> = numbers(&ds["query_vectors"][q["q"].as_u64().unwrap() as usize])
                .into_iter()
                .map(|x| x as f32)
                .collect();
            let k = q["k"].as_u64().unwrap();
            let args: Vec<String> = options.iter().map(|o| sql_string(o)).collect();
            let sql = format!(
                "SELECT _rowaddr, _distance FROM nearest('t', 'vec', {}, {k}, {})",
                sql_vector(&vector),
                args.join(", ")
            );
            let got = ranked(&ctx, &sql).await;
            let want = (
                numbers(&q["row_addresses"])
                    .iter()
                    .map(|&a| a as u64)
                    .collect(),
                numbers(&q["distances"]).iter().map(|&d| d as f32).collect(),
            );
            if let Some(d) = differs(&got, &want, 1e-4) {
                panic!("{name} {q}: pylance differs: {d}");
            }
            let library = library_nearest(&dataset, &vector, k, &options).await;
            assert_eq!(got, library, "{name} {q}: the library differs");
            checked += 1;
        }
    }
    assert!(checked >= 100, "only {checked} queries replayed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nearest_rows_carry_the_tables_columns_and_join_with_it() {
    let catalog = json("vector/catalog.json");
    let ds = &catalog["datasets"]["ivf_pq_l2"];
    let q = &ds["queries"][0];
    assert_eq!(
        (q["k"].as_u64(), q["nprobes"].as_u64()),
        (Some(10), Some(1))
    );
    let vector: Vec<f32> = numbers(&ds["query_vectors"][0])
        .iter()
        .map(|&x| x as f32)
        .collect();
    let dataset = open_fixture("vector/datasets/ivf_pq_l2").await;
    let ctx = lakeseek_ctx(&[("t", &dataset)]);
    let call = format!(
        "nearest('t', 'vec', {}, 10, 'nprobes=1')",
        sql_vector(&vector)
    );
    let want_ids: Vec<u64> = numbers(&q["ids"]).iter().map(|&i| i as u64).collect();
    // The table's columns come with the rows, nearest first.
    let got = rows(&ctx, &format!("SELECT id FROM {call}"), true).await;
    let want: Vec<String> = want_ids.iter().map(|i| format!("{{\"id\":{i}}}")).collect();
    assert_eq!(got, want);
    // Joined with the table on `_rowaddr`: the same rows, with the table's columns.
    let joined = format!(
        "SELECT t.id, t.cat FROM {call} n JOIN t ON t._rowaddr = n._rowaddr ORDER BY n._distance"
    );
    let direct = format!("SELECT id, cat FROM {call} ORDER BY _distance");
    assert_eq!(
        rows(&ctx, &joined, true).await,
        rows(&ctx, &direct, true).await
    );
    // A string vector is the same query.
    let text: Vec<String> = vector.iter().map(|x| format!("{x:?}")).collect();
    let as_text = format!(
        "SELECT id FROM nearest('t', 'vec', '{}', 10, 'nprobes=1')",
        text.join(",")
    );
    assert_eq!(rows(&ctx, &as_text, true).await, want);
    // A WHERE on the function's rows filters after the search; count(*) reads no column.
    let cats = rows(
        &ctx,
        &format!("SELECT count(*) AS n FROM {call} WHERE cat = 2"),
        false,
    )
    .await;
    let ds_cat = rows(&ctx, &format!("SELECT count(*) AS n FROM t WHERE _rowaddr IN (SELECT _rowaddr FROM {call}) AND cat = 2"), false).await;
    assert_eq!(cats, ds_cat);
}

/// The recorded plain match queries (text, operator, k) of tests/fixtures/fts on these
/// datasets (boost, fuzziness, phrase and boolean records are the library's suite's).
const FTS_DATASETS: &[&str] = &["default", "deletions", "appended", "segments", "french"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_equals_pylance_and_the_library() {
    let answers = json("fts/answers.json");
    let mut checked = 0;
    for name in FTS_DATASETS {
        let dataset = open_fixture(&format!("fts/datasets/{name}")).await;
        let ctx = lakeseek_ctx(&[("d", &dataset)]);
        for q in answers["datasets"][name]["queries"].as_array().unwrap() {
            let (text, and, k) = match &q["query"] {
                Value::String(s) => (s.clone(), false, None),
                Value::Object(o)
                    if o["kind"] == "match"
                        && q.get("error").is_none()
                        && o.keys()
                            .all(|k| ["kind", "text", "operator", "k"].contains(&k.as_str())) =>
                {
                    (
                        o["text"].as_str().unwrap().to_string(),
                        o.get("operator").and_then(Value::as_str) == Some("and"),
                        o.get("k").and_then(Value::as_u64),
                    )
                }
                _ => continue,
            };
            let mut args = vec![sql_string(&text)];
            args.extend(k.map(|k| k.to_string()));
            if and {
                args.push("'operator=and'".into());
            }
            let sql = format!(
                "SELECT _rowaddr, _score FROM search('d', 'body', {})",
                args.join(", ")
            );
            let got = ranked(&ctx, &sql).await;
            let want = (
                numbers(&q["row_addresses"])
                    .iter()
                    .map(|&a| a as u64)
                    .collect(),
                numbers(&q["scores"]).iter().map(|&s| s as f32).collect(),
            );
            if let Some(d) = differs(&got, &want, 1e-3) {
                panic!("{name} {}: pylance differs: {d}", q["label"]);
            }
            let mut s = dataset.search(&text).column("body");
            if let Some(k) = k {
                s = s.k(k as usize);
            }
            if and {
                s = s.operator(lakeseek::SearchOperator::And);
            }
            let library = s.execute().await.expect("library search");
            assert_eq!(
                got,
                (library.row_addresses, library.scores),
                "{name} {}",
                q["label"]
            );
            checked += 1;
        }
    }
    assert!(checked >= 30, "only {checked} searches replayed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_rows_carry_columns_filter_and_join() {
    let dataset = open_fixture("fts/datasets/default").await;
    let ctx = lakeseek_ctx(&[("d", &dataset)]);
    let call = "search('d', 'body', 'river dog fox', 5)";
    let direct = rows(&ctx, &format!("SELECT id, body FROM {call}"), true).await;
    let joined = rows(
        &ctx,
        &format!("SELECT d.id, d.body FROM {call} s JOIN d ON d._rowaddr = s._rowaddr ORDER BY s._score DESC, s._rowaddr"),
        true,
    )
    .await;
    assert_eq!(direct.len(), 5);
    // Ties in score may come in either order: compare as sets.
    let (mut a, mut b) = (direct.clone(), joined);
    a.sort();
    b.sort();
    assert_eq!(a, b);
    // The filter option applies before k (the best 5 of the filtered rows).
    let filtered = rows(&ctx, "SELECT id FROM search('d', 'body', 'river dog fox', 5, 'filter=id < 100', 'allow_scan=true')", false).await;
    assert_eq!(filtered.len(), 5, "{filtered:?}");
    let library = dataset
        .search("river dog fox")
        .column("body")
        .k(5)
        .filter("id < 100")
        .allow_scan(true)
        .columns(&["id"])
        .execute()
        .await
        .unwrap();
    let ids = library.batch.unwrap();
    let ids = ids.column_by_name("id").unwrap();
    let mut want: Vec<String> = (0..ids.len())
        .map(|i| {
            format!(
                "{{\"id\":{}}}",
                datafusion::arrow::util::display::array_value_to_string(ids, i).unwrap()
            )
        })
        .collect();
    want.sort();
    assert_eq!(filtered, want);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_arguments_are_clear_errors() {
    let dataset = open_fixture("vector/datasets/ivf_pq_l2").await;
    let text = open_fixture("fts/datasets/default").await;
    let ctx = lakeseek_ctx(&[("t", &dataset), ("d", &text)]);
    ctx.sql("CREATE TABLE m AS VALUES (1)")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let v16 = "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]";
    let cases: Vec<(String, &str)> = vec![
        (
            "SELECT * FROM nearest('t', 'vec')".into(),
            "at least 3 needed",
        ),
        (
            format!("SELECT * FROM nearest('nope', 'vec', {v16})"),
            "no table named \"nope\"",
        ),
        (
            format!("SELECT * FROM nearest('m', 'vec', {v16})"),
            "not a lakeseek table",
        ),
        (
            format!("SELECT * FROM nearest('t', 'vex', {v16})"),
            "has no column \"vex\"",
        ),
        (
            format!("SELECT * FROM nearest('t', 'vec', {v16}, -1)"),
            "k must be a whole number",
        ),
        (
            format!("SELECT * FROM nearest('t', 'vec', {v16}, 5, 'nprobs=2')"),
            "unknown option \"nprobs\"",
        ),
        (
            format!("SELECT * FROM nearest('t', 'vec', {v16}, 5, 'nprobes=two')"),
            "'nprobes=two' wants a whole number",
        ),
        (
            format!("SELECT * FROM nearest('t', 'vec', {v16}, 5, 'nprobes')"),
            "is not 'key=value'",
        ),
        (
            format!("SELECT * FROM nearest('t', 'vec', {v16}, 5, 7)"),
            "options are 'key=value' strings",
        ),
        (
            "SELECT * FROM nearest('t', 'vec', '1,x')".into(),
            "holds \"x\"",
        ),
        (
            "SELECT * FROM nearest('t', 'vec', 42)".into(),
            "array of numbers or a string",
        ),
        (
            "SELECT * FROM nearest('t', 'vec', [1, NULL])".into(),
            "holds a NULL",
        ),
        (
            "SELECT * FROM nearest('t', 'vec', [1, 2])".into(),
            "the query has 2 dimensions",
        ),
        (
            format!("SELECT * FROM nearest('t', 'vec', {v16}, 0)"),
            "k must be 1..=100000",
        ),
        (
            format!("SELECT * FROM nearest('t', 'id', {v16})"),
            "nearest(..) on",
        ),
        (
            "SELECT * FROM search('d', 'body', 'fox', 5, 'operator=xor')".into(),
            "'or' or 'and'",
        ),
        (
            "SELECT * FROM search('d', 'body', 12)".into(),
            "the text must be a string",
        ),
        (
            "SELECT * FROM search('d', 'body', '   ')".into(),
            "search(..) on",
        ),
        (
            format!("SELECT * FROM nearest('t', 'vec', {v16}, 5, 'filter=cat = 2')"),
            "in SQL: the option 'allow_scan=true'",
        ),
    ];
    for (sql, want) in cases {
        let e = try_rows(&ctx, &sql, false)
            .await
            .expect_err(&sql)
            .to_string();
        assert!(e.contains(want), "{sql}: {e}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rowid_column_equals_pylance_with_row_id() {
    let answers = json("rowids/answers.json");
    for name in ["srid", "srid_btree_v0"] {
        let a = &answers[name];
        for (label, version) in a["versions"].as_object().unwrap() {
            let dataset = Dataset::builder(
                root_fixture(&format!("rowids/{name}.lance"))
                    .to_str()
                    .unwrap(),
            )
            .version(version.as_u64().unwrap())
            .open()
            .await
            .unwrap();
            assert!(dataset.has_stable_row_ids());
            let table = lakeseek_datafusion::LakeseekTable::new(dataset.clone())
                .and_then(|t| t.with_row_address())
                .and_then(|t| t.with_row_id())
                .unwrap();
            let ctx = lakeseek_datafusion::session_context(&[]).unwrap();
            ctx.register_table("r", std::sync::Arc::new(table)).unwrap();
            // Every live row as [_rowaddr, _rowid, id], as pylance's with_row_id scan.
            let mut want: Vec<String> = a["rows"][label]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    format!(
                        "{{\"_rowaddr\":{},\"_rowid\":{},\"id\":{}}}",
                        r[0], r[1], r[2]
                    )
                })
                .collect();
            want.sort();
            let got = rows(&ctx, "SELECT _rowaddr, _rowid, id FROM r", false).await;
            assert_eq!(got, want, "{name} {label}");
            // Rows by stable id, as pylance's _take_rows (a deleted id: no row).
            for take in a["takes"][label].as_array().unwrap() {
                let ids: Vec<String> = take["ids"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(Value::to_string)
                    .collect();
                let sql = format!(
                    "SELECT DISTINCT _rowid, k FROM r WHERE _rowid IN ({})",
                    ids.join(", ")
                );
                let mut want: Vec<String> = take["rows"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| match &r[1] {
                        Value::Null => format!("{{\"_rowid\":{}}}", r[0]),
                        k => format!("{{\"_rowid\":{},\"k\":{k}}}", r[0]),
                    })
                    .collect();
                want.sort();
                want.dedup();
                assert_eq!(rows(&ctx, &sql, false).await, want, "{name} {label} {sql}");
            }
            // Filters answered from the indices keep working next to `_rowid` (those
            // DataFusion's SQL parses).
            let mut filters = 0;
            for f in a["filters"][label].as_array().unwrap() {
                let filter = f["filter"].as_str().unwrap();
                let sql = format!("SELECT _rowaddr FROM r WHERE {filter}");
                let Ok(got) = try_rows(&ctx, &sql, false).await else {
                    continue;
                };
                filters += 1;
                let mut want: Vec<String> = f["addresses"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| format!("{{\"_rowaddr\":{x}}}"))
                    .collect();
                want.sort();
                assert_eq!(got, want, "{name} {label} {filter}");
            }
            assert!(filters >= 3, "{name} {label}: {filters} filters checked");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blob_columns_are_their_descriptors_as_pylance_returns_them() {
    let answers = json("blobs/answers.json");
    for (name, a) in answers["datasets"].as_object().unwrap() {
        let dataset = open_fixture(&format!("blobs/{name}")).await;
        let ctx = lakeseek_ctx(&[("b", &dataset)]);
        // As JSON values: the descriptor's fields in any order.
        let mut got: Vec<String> = rows(&ctx, "SELECT _rowaddr, id, img FROM b", false)
            .await
            .iter()
            .map(|l| serde_json::from_str::<Value>(l).unwrap().to_string())
            .collect();
        got.sort();
        let mut want: Vec<String> = a["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let mut row = serde_json::Map::new();
                row.insert("_rowaddr".into(), r["address"].clone());
                row.insert("id".into(), r["id"].clone());
                if !r["descriptor"].is_null() {
                    row.insert("img".into(), r["descriptor"].clone());
                }
                Value::Object(row).to_string()
            })
            .collect();
        want.sort();
        assert_eq!(got, want, "{name}");
        // Descriptor fields work in expressions: sizes of the non-null blobs.
        let sizes = rows(
            &ctx,
            "SELECT sum(img['size']) AS s, count(img) AS n FROM b",
            false,
        )
        .await;
        let non_null: Vec<&Value> = a["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| !r["descriptor"].is_null())
            .collect();
        let total: u64 = non_null
            .iter()
            .map(|r| r["descriptor"]["size"].as_u64().unwrap())
            .sum();
        assert_eq!(
            sizes,
            vec![format!("{{\"s\":{total},\"n\":{}}}", non_null.len())],
            "{name}"
        );
    }
}
