//! Store configuration from the environment, the way object_store's builders read it.
//! The environment is process-wide, so the checks run in a child process (this test binary,
//! running only the ignored `child_*` test) given the variables; the parent starts the S3
//! server and waits for the child.

use crate::io::{open_url, IoStats, RangeFetcher};
use crate::suite::common::{pattern, s3, S3TestServer};

/// Name of the child test, as the test harness filters it.
const CHILD: &str = "io_s3_env::child_reads_s3_settings_from_its_environment";
/// The object URL the parent passes to the child.
const URL_VAR: &str = "LAKESEEK_TEST_ENV_URL";

#[tokio::test]
async fn s3_settings_come_from_the_environment_and_options_override_them() {
    let server = S3TestServer::start().await;
    server.put("env/obj.bin", pattern(5000)).await;
    let exe = std::env::current_exe().expect("path of the test binary");
    let child = tokio::process::Command::new(exe)
        .args([CHILD, "--ignored", "--test-threads=1"])
        .env(URL_VAR, server.url("env/obj.bin"))
        .env("AWS_ENDPOINT", server.endpoint())
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_ACCESS_KEY_ID", s3::ACCESS_KEY)
        .env("AWS_SECRET_ACCESS_KEY", s3::SECRET_KEY)
        .env("AWS_REGION", s3::REGION)
        .env_remove("AWS_ENDPOINT_URL")
        .output();
    let out = tokio::time::timeout(std::time::Duration::from_secs(120), child)
        .await
        .expect("child test finishes")
        .expect("child test starts");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("1 passed"),
        "the child ran its test: {stdout}"
    );
}

#[tokio::test]
#[ignore = "run by s3_settings_come_from_the_environment_and_options_override_them in a child process"]
async fn child_reads_s3_settings_from_its_environment() {
    let url = std::env::var(URL_VAR).expect("started by the parent test");

    let opened = open_url(&url, &[]).unwrap();
    let fetcher = RangeFetcher::new(opened.source, Default::default());
    let tail = fetcher
        .tail(&opened.path, 100, &IoStats::new())
        .await
        .unwrap();
    assert_eq!(
        (tail.version.size, tail.bytes.as_ref()),
        (5000, &pattern(5000)[4900..])
    );

    // A wrong secret in the environment is overridden by an explicit option...
    std::env::set_var("AWS_SECRET_ACCESS_KEY", "wrong");
    let fix = vec![
        (
            "aws_secret_access_key".to_string(),
            s3::SECRET_KEY.to_string(),
        ),
        ("max_retries".into(), "0".into()),
    ];
    let opened = open_url(&url, &fix).unwrap();
    let fetcher = RangeFetcher::new(opened.source, Default::default());
    assert!(fetcher
        .tail(&opened.path, 10, &IoStats::new())
        .await
        .is_ok());
    // ...and without the override the server rejects the signature (SigV4 is checked).
    let opened = open_url(&url, &[("max_retries".to_string(), "0".to_string())]).unwrap();
    let fetcher = RangeFetcher::new(opened.source, Default::default());
    let err = fetcher
        .tail(&opened.path, 10, &IoStats::new())
        .await
        .unwrap_err();
    assert!(matches!(err, crate::Error::Store { .. }), "{err}");
}
