//! Tests of URL → store.

use super::*;

fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn s3_options() -> Vec<(String, String)> {
    kv(&[
        ("aws_endpoint", "http://127.0.0.1:1"),
        ("allow_http", "true"),
        ("aws_access_key_id", "k"),
        ("aws_secret_access_key", "s"),
        ("aws_region", "us-east-1"),
    ])
}

#[test]
fn plain_paths_become_local_urls() {
    let o = open_url("/tmp/x.lance", &[]).unwrap();
    assert_eq!(o.scheme, ObjectStoreScheme::Local);
    assert_eq!(o.path.as_ref(), "tmp/x.lance");
    assert_eq!(o.source.coalesce_gap(), LOCAL_COALESCE_GAP);
    let o = open_url("file:///tmp/y", &[]).unwrap();
    assert_eq!(o.path.as_ref(), "tmp/y");
}

#[test]
fn s3_urls_take_options() {
    let o = open_url("s3://bucket/a/b.lance", &s3_options()).unwrap();
    assert_eq!(o.scheme, ObjectStoreScheme::AmazonS3);
    assert_eq!(o.path.as_ref(), "a/b.lance");
    assert_eq!(o.source.coalesce_gap(), REMOTE_COALESCE_GAP);
    assert_eq!(o.source.describe(), "s3://bucket");
    let id = |options: &[(&str, &str)]| {
        let kv: Vec<(String, String)> = options
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        store_identity(&Url::parse("s3://bucket/t.lance").unwrap(), &kv)
    };
    let a = id(&[
        ("aws_endpoint", "http://127.0.0.1:1"),
        ("aws_secret_access_key", "SECRET"),
    ]);
    let b = id(&[("aws_endpoint", "http://127.0.0.1:2")]);
    assert_ne!(a, b, "two endpoints, two stores");
    assert!(a.starts_with("s3://bucket") && !a.contains("SECRET"), "{a}");
    let err = open_url("s3://bucket/a", &kv(&[("bogus", "1")])).unwrap_err();
    assert!(err.to_string().contains("bogus"), "{err}");
}

#[test]
fn other_schemes_open() {
    let o = open_url("memory:///x/y", &[]).unwrap();
    assert_eq!(o.scheme, ObjectStoreScheme::Memory);
    let gcs_key = r#"{"gcs_base_url":"http://127.0.0.1:1","disable_oauth":true,"client_email":"","private_key":"","private_key_id":""}"#;
    let o = open_url(
        "gs://b/p/q",
        &kv(&[("google_service_account_key", gcs_key)]),
    )
    .unwrap();
    assert_eq!(
        (o.scheme, o.path.as_ref()),
        (ObjectStoreScheme::GoogleCloudStorage, "p/q")
    );
    let o = open_url(
        "http://127.0.0.1:1/dir/file.lance",
        &kv(&[("timeout", "5s")]),
    )
    .unwrap();
    assert_eq!(
        (o.scheme, o.path.as_ref()),
        (ObjectStoreScheme::Http, "dir/file.lance")
    );
    let az = kv(&[
        ("azure_storage_account_name", "acct"),
        ("azure_storage_account_key", "a2V5"),
    ]);
    let o = open_url("az://container/p", &az).unwrap();
    assert_eq!(o.scheme, ObjectStoreScheme::MicrosoftAzure);
    assert!(open_url("ftp://host/x", &[]).is_err());
}

#[test]
fn lakeseek_options_are_parsed_not_passed_on() {
    let opts = kv(&[
        ("max_retries", "2"),
        ("RETRY_TIMEOUT_SECS", "1.5"),
        ("retry_init_backoff_ms", "10"),
        ("coalesce_gap", "4096"),
        ("aws_region", "eu-west-1"),
    ]);
    let (tuning, rest) = split_options(&opts).unwrap();
    assert_eq!(rest, kv(&[("aws_region", "eu-west-1")]));
    assert_eq!(tuning.coalesce_gap, Some(4096));
    let retry = tuning.retry_config().unwrap();
    assert_eq!(retry.max_retries, 2);
    assert_eq!(retry.retry_timeout, Duration::from_millis(1500));
    assert_eq!(retry.backoff.init_backoff, Duration::from_millis(10));
    assert!(IoTuning::default().retry_config().is_none());
    assert!(split_options(&kv(&[("max_retries", "-1")])).is_err());
    assert!(split_options(&kv(&[("retry_timeout_secs", "soon")])).is_err());

    let mut s3 = s3_options();
    s3.extend(kv(&[("coalesce_gap", "7"), ("max_retries", "0")]));
    assert_eq!(
        open_url("s3://bucket/a", &s3)
            .unwrap()
            .source
            .coalesce_gap(),
        7
    );
    // Local stores accept lakeseek's options, reject backend ones.
    assert_eq!(
        open_url("/tmp/z", &kv(&[("coalesce_gap", "9")]))
            .unwrap()
            .source
            .coalesce_gap(),
        9
    );
    assert!(open_url("/tmp/z", &kv(&[("aws_region", "x")])).is_err());
}

/// Counts the HTTP clients built.
#[derive(Debug, Default)]
struct CountingClients(std::sync::atomic::AtomicUsize);

impl HttpConnector for CountingClients {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        object_store::client::ReqwestConnector::default().connect(options)
    }
}

#[test]
fn built_stores_read_without_object_store_retries_and_share_one_client() {
    let counting = Arc::new(CountingClients::default());
    let options = OpenOptions::new(&s3_options())
        .with_http_connector(Arc::clone(&counting) as Arc<dyn HttpConnector>);
    let o = open_url_with("s3://bucket/a", &options).unwrap();
    assert!(
        !Arc::ptr_eq(&o.store, &o.read_store),
        "reads go through their own store"
    );
    assert_eq!(
        counting.0.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "the two stores share one HTTP client"
    );
    let policy = o.source.retry_policy().unwrap();
    assert!(!policy.store_retries, "lakeseek owns the read retries");
    assert_eq!(policy.max_retries, RetryPolicy::default().max_retries);

    // A store handed in: read as given, its own retries assumed.
    let given = OpenOptions {
        object_store: Some(Arc::clone(&o.store)),
        ..OpenOptions::default()
    };
    let h = open_url_with("s3://bucket/a", &given).unwrap();
    assert!(Arc::ptr_eq(&h.store, &h.read_store));
    assert!(h.source.retry_policy().is_none_or(|p| p.store_retries));
}
