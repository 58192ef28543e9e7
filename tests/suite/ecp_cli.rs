//! `lakeseek ecp search` arguments parse as documented and print the reference pages.

use crate::suite::ecp_support;

use crate::cli::ecp::{search_pages, EcpInfoArgs, EcpSearchArgs};
use clap::Parser;
use ecp_support::*;

#[derive(Parser)]
struct SearchCli {
    #[command(flatten)]
    args: EcpSearchArgs,
}

#[derive(Parser)]
struct InfoCli {
    #[command(flatten)]
    args: EcpInfoArgs,
}

fn parse(extra: &[&str]) -> EcpSearchArgs {
    let mut argv = vec!["ecp-search".to_string()];
    argv.extend(extra.iter().map(|s| s.to_string()));
    SearchCli::try_parse_from(argv).unwrap().args
}

#[tokio::test]
async fn search_prints_reference_pages_with_next_and_exclude() {
    let exp = expected("l3_l2_i8");
    let dir = fixture_dir("l3_l2_i8").to_string_lossy().to_string();
    for case in &exp.cases {
        let query = case
            .query
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let exclude = case
            .exclude
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let mut argv = vec![
            dir.as_str(),
            "--query",
            &query,
            "-k",
            "0",
            "--search-exp",
            "0",
            "--max-increments",
            "0",
            "--next",
            "0",
        ];
        let (k, e, m, n) = (
            case.k.to_string(),
            case.search_exp.to_string(),
            case.max_increments.to_string(),
            (case.pages.len() - 1).to_string(),
        );
        argv[4] = &k;
        argv[6] = &e;
        argv[8] = &m;
        argv[10] = &n;
        if !exclude.is_empty() {
            argv.extend(["--exclude", &exclude]);
        }
        let args = parse(&argv);
        let (pages, stats) = search_pages(&args).await.unwrap();
        assert_eq!(pages.len(), case.pages.len());
        for (got, want) in pages.iter().zip(&case.pages) {
            assert_eq!(got.ids, want.ids, "{}", case.name);
            assert_scores_close(&case.name, &got.scores, &want.scores);
        }
        assert!(stats.requests > 0 && stats.round_trips > 0);
    }
}

#[tokio::test]
async fn query_file_and_bad_arguments() {
    let dir = fixture_dir("l3_l2_i8").to_string_lossy().to_string();
    let case = &expected("l3_l2_i8").cases[0];
    // a .npy query file equals --query
    let tmp = tempfile::tempdir().unwrap();
    let mut header = format!(
        "{{'descr': '<f4', 'fortran_order': False, 'shape': ({},), }}",
        case.query.len()
    );
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    npy.extend_from_slice(&(header.len() as u16).to_le_bytes());
    npy.extend_from_slice(header.as_bytes());
    for v in &case.query {
        npy.extend_from_slice(&v.to_le_bytes());
    }
    let qfile = tmp.path().join("q.npy");
    std::fs::write(&qfile, npy).unwrap();
    let k = case.k.to_string();
    let e = case.search_exp.to_string();
    let args = parse(&[
        &dir,
        "--query-file",
        &qfile.to_string_lossy(),
        "-k",
        &k,
        "--search-exp",
        &e,
    ]);
    let (pages, _) = search_pages(&args).await.unwrap();
    assert_eq!(pages[0].ids, case.pages[0].ids);
    // defaults
    let args = parse(&[&dir, "--query", "1,2,3"]);
    assert_eq!(
        (args.k, args.search_exp, args.max_increments, args.next),
        (10, 4, -1, 0)
    );
    // wrong dimension, negative numbers parse
    let args = parse(&[&dir, "--query", "-1,2.5,3"]);
    assert!(search_pages(&args).await.is_err());
    // both or neither query source
    assert!(
        SearchCli::try_parse_from(["x", &dir, "--query", "1", "--query-file", "q.npy"]).is_err()
    );
    let args = parse(&[&dir]);
    assert!(search_pages(&args).await.is_err());
    // storage options are key=value
    assert!(InfoCli::try_parse_from(["x", &dir, "--storage-option", "novalue"]).is_err());
    let info = InfoCli::try_parse_from(["x", &dir, "--stats"])
        .unwrap()
        .args;
    crate::cli::ecp::run_info(info).await.unwrap();
}
