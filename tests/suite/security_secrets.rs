//! No credential or signed URL ever appears in errors (Display and Debug), logs or CLI
//! output (`--explain`, `--stats`, error messages), whatever goes wrong: access denied
//! (a real 403 from the SigV4-checking S3 test server), NotFound, an endpoint that refuses
//! connections, malformed keys, or credentials embedded in the URL itself.

use crate::suite::common;

use std::process::Command;
use std::sync::Arc;

use crate::ecp::{EcpIndex, OpenOptions as EcpOpenOptions};
use crate::io::{open_url, IoStats, OpenOptions, RangeFetcher};
use crate::lance::dataset::{DatasetSession, DatasetVersion};
use common::{s3, S3TestServer};

/// Every secret below contains this marker (the base64 Azure key is checked separately).
const MARKER: &str = "d0n0tl3ak";
const AWS_SECRET: &str = "AWSSECRETd0n0tl3akAWSSECRET";
const AWS_TOKEN: &str = "SESSIONTOKENd0n0tl3akSESSION";
/// base64("AZUREKEYd0n0tl3akAZUREKEY!!!")
const AZURE_KEY: &str = "QVpVUkVLRVlkMG4wdGwzYWtBWlVSRUtFWSEhIQ==";
const AZURE_KEY_PREFIX: &str = "QVpVUkVLRVlkMG4wdGwzYWtBWlVSRUtFWSEhIQ";
const SAS: &str =
    "sv=2021-08-06&ss=b&srt=sco&sp=rl&se=2030-01-01T00:00:00Z&sig=SASSIGd0n0tl3akSASSIG";
const GCS_KEY: &str = r#"{"type":"service_account","project_id":"p","private_key_id":"GCSKEYIDd0n0tl3ak","private_key":"-----BEGIN PRIVATE KEY-----\nMIIGCSd0n0tl3akGCSd0n0tl3ak\n-----END PRIVATE KEY-----\n","client_email":"x@p.iam.gserviceaccount.com","client_id":"1","token_uri":"http://127.0.0.1:1/token"}"#;

fn assert_clean(what: &str, text: &str) {
    let lower = text.to_ascii_lowercase();
    assert!(
        !lower.contains(MARKER) && !text.contains(AZURE_KEY_PREFIX),
        "{what} leaks a secret:\n{text}"
    );
}

fn assert_error_clean(what: &str, e: &crate::Error) {
    assert_clean(&format!("{what} (Display)"), &e.to_string());
    assert_clean(&format!("{what} (Debug)"), &format!("{e:?}"));
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        assert_clean(&format!("{what} (source)"), &s.to_string());
        source = s.source();
    }
}

fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn fast_fail() -> Vec<(&'static str, &'static str)> {
    vec![
        ("max_retries", "0"),
        ("retry_timeout_secs", "2"),
        ("timeout", "5s"),
        ("connect_timeout", "2s"),
    ]
}

fn s3_options(endpoint: &str, secret: &str, token: Option<&str>) -> Vec<(String, String)> {
    let mut o = vec![
        ("aws_endpoint", endpoint),
        ("allow_http", "true"),
        ("aws_access_key_id", s3::ACCESS_KEY),
        ("aws_secret_access_key", secret),
        ("aws_region", s3::REGION),
    ];
    if let Some(t) = token {
        o.push(("aws_session_token", t));
    }
    o.extend(fast_fail());
    kv(&o)
}

fn azure_options(extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut o = vec![
        ("azure_storage_account_name", "acct"),
        ("azure_storage_endpoint", "http://127.0.0.1:1"),
        ("allow_http", "true"),
    ];
    o.extend_from_slice(extra);
    o.extend(fast_fail());
    kv(&o)
}

/// Open a dataset and a plain file read through `url`; both must fail, cleanly.
async fn provoke(what: &str, url: &str, options: &[(String, String)]) {
    let stats = IoStats::new();
    let ds = DatasetVersion::open_url(
        url,
        options,
        None,
        Arc::new(DatasetSession::default()),
        &stats,
    )
    .await;
    let e = ds.expect_err(what);
    assert_error_clean(&format!("{what}: dataset open"), &e);
    match open_url(url, options) {
        Err(e) => assert_error_clean(&format!("{what}: open_url"), &e),
        Ok(opened) => {
            let fetcher = RangeFetcher::new(Arc::clone(&opened.source), Default::default());
            let e = fetcher
                .tail(&opened.path, 100, &stats)
                .await
                .expect_err(what);
            assert_error_clean(&format!("{what}: tail read"), &e);
        }
    }
    let e = EcpIndex::open_url(url, options, EcpOpenOptions::default())
        .await
        .expect_err(what);
    assert_error_clean(&format!("{what}: ecp open"), &e);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_never_show_credentials() {
    let server = S3TestServer::start().await;
    server.put("x/obj.bin", vec![1u8; 100]).await;
    let ep = server.endpoint().to_string();

    // 403 SignatureDoesNotMatch from a server that checks SigV4.
    provoke(
        "wrong secret",
        &server.url("x/obj.bin"),
        &s3_options(&ep, AWS_SECRET, Some(AWS_TOKEN)),
    )
    .await;
    // NotFound with a session token.
    provoke(
        "missing object",
        &server.url("nothing/here.lance"),
        &s3_options(&ep, s3::SECRET_KEY, Some(AWS_TOKEN)),
    )
    .await;
    // Nobody listening.
    provoke(
        "bad endpoint",
        "s3://test-bucket/x/obj.bin",
        &s3_options("http://127.0.0.1:1", AWS_SECRET, Some(AWS_TOKEN)),
    )
    .await;
    // Azure account key and SAS token against a dead endpoint.
    provoke(
        "azure key",
        "az://container/t.lance",
        &azure_options(&[("azure_storage_account_key", AZURE_KEY)]),
    )
    .await;
    provoke(
        "azure sas",
        "az://container/t.lance",
        &azure_options(&[("azure_storage_sas_key", SAS)]),
    )
    .await;
    // A GCS service account key whose private key is garbage.
    let mut gcs = kv(&[("google_service_account_key", GCS_KEY)]);
    gcs.extend(kv(&fast_fail()));
    provoke("gcs key", "gs://bucket/t.lance", &gcs).await;
    // A malformed Azure key (not base64) must not be echoed either.
    provoke(
        "bad azure key",
        "az://container/t.lance",
        &azure_options(&[(
            "azure_storage_account_key",
            "not-base64-d0n0tl3ak-not-base64",
        )]),
    )
    .await;
    // Credentials and signatures inside the URL.
    provoke(
        "userinfo in URL",
        "http://user:PASSd0n0tl3ak@127.0.0.1:1/t.lance",
        &kv(&fast_fail()),
    )
    .await;
    provoke(
        "presigned URL",
        "http://127.0.0.1:1/test-bucket/t.lance?X-Amz-Credential=AKIA&X-Amz-Signature=SIGd0n0tl3ak",
        &kv(&fast_fail()),
    )
    .await;
    provoke(
        "SAS in URL",
        &format!("https://acct.blob.core.windows.net/container/t.lance?{SAS}"),
        &kv(&[
            ("azure_storage_endpoint", "http://127.0.0.1:1"),
            ("allow_http", "true"),
            ("max_retries", "0"),
        ]),
    )
    .await;
    // Unparseable URL carrying a password and a signature.
    let e =
        open_url("http://user:PASSd0n0tl3ak@[::bad/x?sig=SIGd0n0tl3ak", &[]).expect_err("bad URL");
    assert_error_clean("bad URL", &e);
}

#[test]
fn open_options_debug_hides_secret_values() {
    let options = OpenOptions::new(&kv(&[
        ("aws_secret_access_key", AWS_SECRET),
        ("aws_session_token", AWS_TOKEN),
        ("azure_storage_account_key", AZURE_KEY),
        ("azure_storage_sas_key", SAS),
        ("google_service_account_key", GCS_KEY),
        ("aws_region", "us-east-1"),
    ]));
    let debug = format!("{options:?}");
    assert_clean("OpenOptions Debug", &debug);
    assert!(
        debug.contains("aws_secret_access_key") && debug.contains("us-east-1"),
        "keys and harmless values stay visible: {debug}"
    );
}

/// (what, arguments, storage options) of one CLI run.
type CliCase<'a> = (&'a str, Vec<&'a str>, Vec<(String, String)>);

fn lakeseek(args: &[&str], options: &[(String, String)]) -> (bool, String, String) {
    let mut cmd = Command::new(crate::suite::common::lakeseek_bin());
    cmd.env_clear().args(args);
    for (k, v) in options {
        cmd.arg("--storage-option").arg(format!("{k}={v}"));
    }
    let out = cmd.output().expect("run lakeseek");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_output_never_shows_credentials() {
    let server = S3TestServer::start().await;
    let fixtures = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    server
        .upload_dir(&fixtures.join("datasets/types.lance"), "ds/types.lance")
        .await;
    server
        .put(
            "f/strings.lance",
            std::fs::read(fixtures.join("files/v2_3/strings.lance")).unwrap(),
        )
        .await;
    let ep = server.endpoint().to_string();
    let dataset = server.url("ds/types.lance");

    // Success with a session token: --explain and --stats print the plan, never the token.
    let good = s3_options(&ep, s3::SECRET_KEY, Some(AWS_TOKEN));
    let (ok, stdout, stderr) = lakeseek(
        &[
            "query",
            &dataset,
            "--filter",
            "i = 7",
            "--explain",
            "--stats",
        ],
        &good,
    );
    assert!(ok, "query failed: {stderr}");
    assert!(stderr.contains("page"), "explain printed: {stderr}");
    assert_clean("query --explain stdout", &stdout);
    assert_clean("query --explain stderr", &stderr);

    // Failures: 403, NotFound, dead endpoints, malformed keys, secrets in URLs.
    let bad_secret = s3_options(&ep, AWS_SECRET, Some(AWS_TOKEN));
    let dead = s3_options("http://127.0.0.1:1", AWS_SECRET, Some(AWS_TOKEN));
    let missing = server.url("ds/nothing.lance");
    let file = server.url("f/strings.lance");
    let cases: Vec<CliCase> = vec![
        (
            "query 403",
            vec!["query", &dataset, "--filter", "i = 7", "--explain"],
            bad_secret.clone(),
        ),
        (
            "query not found",
            vec!["query", &missing, "--filter", "i = 7", "--explain"],
            good.clone(),
        ),
        (
            "query dead endpoint",
            vec!["query", &dataset, "--filter", "i = 7", "--explain"],
            dead.clone(),
        ),
        (
            "read 403",
            vec!["read", &file, "--column", "s", "--rows", "0..3", "--stats"],
            bad_secret.clone(),
        ),
        ("inspect 403", vec!["inspect", &file], bad_secret.clone()),
        (
            "take dead endpoint",
            vec!["take", &dataset, "--rows", "0,1", "--columns", "id"],
            dead.clone(),
        ),
        (
            "ecp info 403",
            vec!["ecp", "info", &dataset],
            bad_secret.clone(),
        ),
        (
            "query azure key",
            vec!["query", "az://c/t.lance", "--filter", "i = 7", "--explain"],
            azure_options(&[("azure_storage_account_key", AZURE_KEY)]),
        ),
        (
            "query azure sas",
            vec!["query", "az://c/t.lance", "--filter", "i = 7", "--explain"],
            azure_options(&[("azure_storage_sas_key", SAS)]),
        ),
        (
            "query gcs key",
            vec!["query", "gs://b/t.lance", "--filter", "i = 7", "--explain"],
            kv(&[
                ("google_service_account_key", GCS_KEY),
                ("max_retries", "0"),
            ]),
        ),
        (
            "query presigned URL",
            vec![
                "query",
                "http://127.0.0.1:1/b/t.lance?X-Amz-Signature=SIGd0n0tl3ak",
                "--filter",
                "i = 7",
                "--explain",
            ],
            kv(&[("max_retries", "0")]),
        ),
        (
            "inspect userinfo URL",
            vec!["inspect", "http://u:PASSd0n0tl3ak@127.0.0.1:1/f.lance"],
            kv(&[("max_retries", "0")]),
        ),
    ];
    for (what, args, options) in cases {
        let (ok, stdout, stderr) = lakeseek(&args, &options);
        assert!(!ok, "{what}: should fail");
        assert!(stderr.contains("error"), "{what}: {stderr}");
        assert_clean(&format!("{what} stdout"), &stdout);
        assert_clean(&format!("{what} stderr"), &stderr);
    }
}
