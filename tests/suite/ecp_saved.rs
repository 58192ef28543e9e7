//! Saving query state (`close()`): a saved query resumes with exactly the pages of the
//! uninterrupted search; read-only indices refuse; exhausted queries are erased.

use crate::suite::ecp_support;

use crate::ecp::{EcpIndex, OpenOptions, QueryOptions, SearchParams};
use crate::Error;
use ecp_support::*;

const NAME: &str = "l3_l2n_f16";

async fn open(path: &std::path::Path, writable: bool) -> EcpIndex {
    EcpIndex::open_url(
        &path.to_string_lossy(),
        &[],
        OpenOptions {
            writable,
            ..OpenOptions::default()
        },
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn saved_state_resumes_like_uninterrupted_search() {
    let exp = expected(NAME);
    let tmp = temp_copy(NAME);
    let params = SearchParams {
        search_exp: 2,
        max_increments: 0,
    };
    for (i, case) in exp.cases.iter().enumerate() {
        let exclude = vec![case.brute_force_ids[1], case.brute_force_ids[3]];
        let options = QueryOptions {
            params,
            exclude: exclude.clone(),
            prefetch: None,
        };
        // uninterrupted: 1 + 4 pages
        let index = open(tmp.path(), true).await;
        let mut full = index.query(case.query.clone(), options.clone()).unwrap();
        let mut pages = Vec::new();
        for _ in 0..5 {
            pages.push(full.next_k(3).await.unwrap());
        }
        // interrupted after page 1, saved, reopened, resumed
        let mut first = index.query(case.query.clone(), options.clone()).unwrap();
        assert_eq!(first.next_k(3).await.unwrap(), pages[0]);
        let qid = 100 + i as u64;
        first.save(qid).await.unwrap();
        let reopened = open(tmp.path(), false).await;
        let mut resumed = reopened
            .load_query(
                qid,
                QueryOptions {
                    params,
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        for (p, want) in pages.iter().enumerate().skip(1) {
            let got = resumed.next_k(3).await.unwrap();
            assert_eq!(got.ids, want.ids, "case {i} page {p}");
            assert_eq!(got.scores, want.scores, "case {i} page {p}");
            for id in &exclude {
                assert!(!got.ids.contains(id), "saved exclude set applies");
            }
        }
    }
}

#[tokio::test]
async fn read_only_index_refuses_to_save() {
    let index = open(&fixture_dir(NAME), false).await;
    let mut q = index
        .query(
            expected(NAME).cases[0].query.clone(),
            QueryOptions::default(),
        )
        .unwrap();
    q.next_k(5).await.unwrap();
    let e = q.save(1).await.unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("read-only") && m.contains("queries/1")),
        "{e}"
    );
}

#[tokio::test]
async fn exhausted_query_is_erased_instead_of_saved() {
    let tmp = temp_copy("l1_ip_f32");
    let index = open(tmp.path(), true).await;
    let case = &expected("l1_ip_f32").cases[0];
    let mut q = index
        .query(case.query.clone(), QueryOptions::default())
        .unwrap();
    q.next_k(5).await.unwrap();
    q.save(5).await.unwrap();
    assert!(index.load_query(5, QueryOptions::default()).await.is_ok());
    // drain everything (300 items) so heap and buffer are empty
    while !q.next_k(100).await.unwrap().ids.is_empty() {}
    q.save(5).await.unwrap();
    assert!(matches!(
        index.load_query(5, QueryOptions::default()).await,
        Err(Error::NotFound { .. })
    ));
}

/// zarr-python reads what `save` wrote (skipped with a notice when the pinned venv of
/// tests/fixtures/ecp/requirements.txt is not installed; set LAKESEEK_ZARR_PYTHON to its python).
#[tokio::test]
async fn zarr_python_reads_saved_state() {
    let python = std::env::var("LAKESEEK_ZARR_PYTHON")
        .unwrap_or_else(|_| "/work/.venv-zarr/bin/python".into());
    if !std::path::Path::new(&python).exists() {
        eprintln!("SKIPPED: {python} not found (create the venv from tests/fixtures/ecp/requirements.txt)");
        return;
    }
    let tmp = temp_copy(NAME);
    let index = open(tmp.path(), true).await;
    let case = &expected(NAME).cases[1];
    let options = QueryOptions {
        exclude: vec![3, 1],
        ..Default::default()
    };
    let mut q = index.query(case.query.clone(), options).unwrap();
    q.next_k(4).await.unwrap();
    q.save(11).await.unwrap();
    let script = r#"
import sys, json, zarr, numpy as np
s = zarr.storage.LocalStore(sys.argv[1], read_only=True)
g = lambda n: zarr.open_array(s, path="queries/11/" + n, mode="r")
out = {n: g(n)[...].tolist() for n in ["query", "tree_pq_score", "tree_pq_is_leaf", "tree_pq_level", "tree_pq_node_id", "items_score", "items_id", "exclude"]}
out["dtypes"] = {n: str(g(n).dtype) for n in ["tree_pq_is_leaf", "tree_pq_level", "items_id", "exclude"]}
out["persisted_at"] = int(g("persisted_at")[()])
print(json.dumps(out))
"#;
    let output = std::process::Command::new(&python)
        .arg("-c")
        .arg(script)
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let query: Vec<f32> = serde_json::from_value(v["query"].clone()).unwrap();
    assert_eq!(query, case.query);
    assert_eq!(v["exclude"], serde_json::json!([1, 3]));
    assert_eq!(v["dtypes"]["tree_pq_is_leaf"], "int32");
    assert_eq!(v["dtypes"]["tree_pq_level"], "uint32");
    let heap_len = v["tree_pq_score"].as_array().unwrap().len();
    assert!(heap_len > 0);
    assert_eq!(v["tree_pq_node_id"].as_array().unwrap().len(), heap_len);
    assert_eq!(v["items_id"].as_array().unwrap().len(), q.buffered());
    assert!(v["persisted_at"].as_u64().unwrap() > 1_700_000_000);
}
