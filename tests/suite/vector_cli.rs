//! `lakeseek query DS --nearest COL --vector ...`: the flags parse (negative components
//! with `--vector=-0.5,...` and `--vector -0.5,...`), the answer is pylance's, and bad
//! input is a clear error.

use clap::Parser;
use serde_json::Value;

use crate::cli::query::{run_query_to, QueryArgs};
use crate::suite::vector_catalog::{catalog, vector_fixture};

#[derive(Debug, Parser)]
struct Command {
    #[command(flatten)]
    query: QueryArgs,
}

fn parse(args: &[&str]) -> Result<QueryArgs, clap::Error> {
    Command::try_parse_from(std::iter::once("query").chain(args.iter().copied())).map(|c| c.query)
}

async fn run(args: &QueryArgs) -> crate::Result<String> {
    let mut out = Vec::new();
    run_query_to(args, &mut out, &mut Vec::new()).await?;
    Ok(String::from_utf8(out).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nearest_flags_answer_as_pylance_with_negative_components() {
    let c = catalog();
    let ds = &c["datasets"]["ivf_pq_l2"];
    let q = ds["queries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| {
            q["q"] == 0 && q["k"] == 10 && q["nprobes"] == 4 && q.as_object().unwrap().len() == 6
        })
        .expect("q0 k10 nprobes4");
    let vector: Vec<String> = ds["query_vectors"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap().to_string())
        .collect();
    let text = vector.join(",");
    assert!(
        text.starts_with('-') || text.contains(",-"),
        "the vector has negative components"
    );
    let path = vector_fixture("datasets/ivf_pq_l2");
    let path = path.to_str().unwrap();
    let joined = format!("--vector={text}");
    for form in [vec![joined.as_str()], vec!["--vector", text.as_str()]] {
        let mut args = vec![path, "--nearest", "vec", "-k", "10", "--nprobes", "4"];
        args.extend(form);
        let parsed = parse(&args).expect("flags parse");
        let out: Value = serde_json::from_str(run(&parsed).await.unwrap().trim()).unwrap();
        assert_eq!(out["row_addresses"], q["row_addresses"], "{out}");
        let d: Vec<f64> = out["distances"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let want: Vec<f64> = q["distances"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        for (a, b) in d.iter().zip(&want) {
            assert!(
                (a - b).abs() <= 1e-4 * b.abs().max(1e-2),
                "{d:?} vs {want:?}"
            );
        }
    }
    // --columns: JSON lines with _distance.
    let args = parse(&[
        path,
        "--nearest",
        "vec",
        &joined,
        "-k",
        "3",
        "--columns",
        "id",
    ])
    .unwrap();
    let out = run(&args).await.unwrap();
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert!(
        lines
            .iter()
            .all(|l| l["_distance"].is_number() && l["id"].is_number()),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_nearest_input_is_a_clear_error() {
    let path = vector_fixture("datasets/ivf_pq_l2");
    let path = path.to_str().unwrap();
    let sixteen = vec!["0.5"; 16].join(",");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["--vector=0.5,0.5".into()], "dimensions"),
        (
            vec![format!("--vector=NaN,{}", vec!["0.5"; 15].join(","))],
            "finite",
        ),
        (
            vec![format!("--vector={sixteen}"), "-k".into(), "0".into()],
            "k must be",
        ),
        (
            vec![
                format!("--vector={sixteen}"),
                "-k".into(),
                "100000000".into(),
            ],
            "k must be",
        ),
        (vec!["--vector=abc".into()], "not a number"),
    ];
    for (extra, want) in cases {
        let mut args: Vec<String> = vec![path.into(), "--nearest".into(), "vec".into()];
        args.extend(extra);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let err = run(&parse(&refs).unwrap()).await.unwrap_err().to_string();
        assert!(err.contains(want), "{args:?}: {err}");
    }
    for (column, want) in [("nope", "no column"), ("id", "not a fixed-size list")] {
        let args = parse(&[path, "--nearest", column, &format!("--vector={sixteen}")]).unwrap();
        let err = run(&args).await.unwrap_err().to_string();
        assert!(err.contains(want), "{column}: {err}");
    }
}
