//! Store configuration from the environment, the way object_store's builders read it.
//! One test in its own binary: it sets process environment variables.

#[path = "suite/common/mod.rs"]
mod common;

use common::{pattern, s3, S3TestServer};
use lakeseek::io::{open_url, IoStats, RangeFetcher};

#[tokio::test]
async fn s3_settings_come_from_the_environment_and_options_override_them() {
    let server = S3TestServer::start().await;
    server.put("env/obj.bin", pattern(5000)).await;
    let url = server.url("env/obj.bin");
    let vars = [
        ("AWS_ENDPOINT", server.endpoint().to_string()),
        ("AWS_ALLOW_HTTP", "true".to_string()),
        ("AWS_ACCESS_KEY_ID", s3::ACCESS_KEY.to_string()),
        ("AWS_SECRET_ACCESS_KEY", s3::SECRET_KEY.to_string()),
        ("AWS_REGION", s3::REGION.to_string()),
    ];
    for (k, v) in &vars {
        std::env::set_var(k, v);
    }
    std::env::remove_var("AWS_ENDPOINT_URL");

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
    assert!(matches!(err, lakeseek::Error::Store { .. }), "{err}");
    for (k, _) in &vars {
        std::env::remove_var(k);
    }
}
