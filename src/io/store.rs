//! URL → object store.
//!
//! Credentials and endpoints come from the environment the way object_store's builders read
//! it (`AWS_ENDPOINT`, `AWS_ALLOW_HTTP`, `AWS_ACCESS_KEY_ID`, `GOOGLE_SERVICE_ACCOUNT`,
//! `AZURE_STORAGE_ACCOUNT_NAME`, ...), then `key=value` storage options are applied on top
//! (the CLI's `--storage-option key=value`). Keys are object_store's own config keys
//! (`aws_endpoint`, `allow_http`, `timeout`, `connect_timeout`, ...) plus a few that lakeseek
//! parses itself, listed in [`LAKESEEK_OPTION_KEYS`]:
//!
//! | key | meaning | default |
//! |---|---|---|
//! | `max_retries` | retries of a read or LIST by lakeseek's retry loop (0 disables), each attempt one HTTP request through admission control and the store's retry budget; also object_store's retries of writes | 3; writes: object_store's (10) |
//! | `retry_timeout_secs` | stop retrying this long after the first attempt (time queued for admission not counted) | 30; writes: object_store's (180) |
//! | `retry_init_backoff_ms` | first backoff | 50; writes: object_store's (100) |
//! | `retry_max_backoff_ms` | backoff cap | 2000; writes: object_store's (15000) |
//! | `coalesce_gap` | merge ranges whose gap is at most this many bytes | 64 KiB remote, 0 local |
//! | `coalesce_waste` | a merged GET may waste at most this many bytes per byte wanted (`off`: the gap alone decides; see [`crate::io::coalesce`]) | 8 remote, unless `coalesce_gap` is given alone; off local |
//! | `hedge_fraction` | hedge (duplicate) GETs still outstanding past the threshold, at most this fraction of a wave and of all requests (0 = off; see [`crate::io::hedge`]) | 0.1 remote, 0 local |
//! | `hedge_quantile` | the latency quantile past which a GET is hedged | 0.95 |
//!
//! Reads and listings are retried by lakeseek alone: the stores built here read through an
//! object_store client with its retries off ([`OpenedUrl::read_store`]), so a timed-out or
//! throttled request goes back through the store's adaptive limit and retry budget before it
//! is sent again, and one read sends at most `max_retries + 1` HTTP requests (plus at most
//! one hedge per attempt), a listing of `k` pages at most `k + max_retries` (see
//! [`crate::io::retry`]). Writes go through [`OpenedUrl::store`],
//! the same client with object_store's retries (the options above, else its defaults).
//!
//! Timeouts of remote stores fit the request rather than one 30 s total: object_store's
//! `connect_timeout` (5 s) bounds connecting, [`DEFAULT_READ_TIMEOUT`] bounds the wait for
//! the first byte and then every wait for more of the body (reset by each read, so a large
//! body that keeps arriving is never cut off, and a stalled one is), and
//! [`DEFAULT_TOTAL_TIMEOUT`] is only a backstop. Give `timeout`, `read_timeout` or
//! `connect_timeout` to override. None of them counts time a request waited for admission
//! ([`crate::io::admission`]): a request is sent, and its timeouts start, once admitted.
//!
//! `memory://` URLs open a new, empty in-memory store on every call (useful in doctests).
//!
//! An [`HttpConnector`] can be passed with [`OpenOptions::http_connector`] (e.g. the
//! [`CountingConnector`](crate::io::wrappers::CountingConnector) to count requests or inject
//! latency at the HTTP layer); it applies to the S3, GCS, Azure and HTTP backends.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

#[cfg(feature = "aws")]
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
#[cfg(feature = "azure")]
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
#[cfg(feature = "cloud")]
use object_store::client::{HttpClient, HttpConnector};
#[cfg(feature = "gcp")]
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
#[cfg(feature = "http")]
use object_store::http::HttpBuilder;
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path;
#[cfg(feature = "http")]
use object_store::ClientConfigKey;
#[cfg(feature = "cloud")]
use object_store::{ClientOptions, RetryConfig};
use object_store::{ObjectStore, ObjectStoreScheme};
use url::Url;

use crate::error::{Error, Result};
use crate::io::coalesce::REMOTE_WASTE_RATIO;
use crate::io::hedge::HedgeConfig;
use crate::io::retry::RetryPolicy;
use crate::io::source::{ObjectStoreSource, RangeSource};

/// Coalescing gap for remote stores: ranges of one object closer than this are read by one
/// GET. On object stores a request costs a first-byte latency (tens of ms) and a request
/// charge, while a few KiB of gap cost well under a millisecond, so the gap is sized to the
/// request, not to the rows. Measured against pylance 14.0.2 on S3 (moto behind a 20 ms
/// proxy, 100 random rows of a 1M-row file, `docs/bench-vs-pylance.md`): at 8 KiB lakeseek
/// sent 56-81 requests per take and was 2-5x slower than pylance; at 64 KiB it sends the
/// same requests and bytes as pylance and is as fast or faster; 256 KiB saves a few more
/// requests for up to 1.9x the bytes. Override with the `coalesce_gap` storage option (e.g.
/// lower it when egress bytes are billed).
pub(crate) const REMOTE_COALESCE_GAP: u64 = 64 * 1024;
/// Default `read_timeout` of remote stores: the longest wait for the first byte of a
/// response and then for each further read of its body.
pub(crate) const DEFAULT_READ_TIMEOUT: &str = "30s";
/// Default `timeout` (whole request) of remote stores: a backstop for bodies that trickle.
pub(crate) const DEFAULT_TOTAL_TIMEOUT: &str = "600s";

/// `passthrough` with lakeseek's default timeouts first (later options override them).
fn with_default_timeouts(passthrough: &[(String, String)]) -> Vec<(String, String)> {
    let given = |key: &str| passthrough.iter().any(|(k, _)| k == key);
    let mut out = Vec::with_capacity(passthrough.len() + 2);
    if !given("read_timeout") {
        out.push(("read_timeout".to_string(), DEFAULT_READ_TIMEOUT.to_string()));
    }
    if !given("timeout") {
        out.push(("timeout".to_string(), DEFAULT_TOTAL_TIMEOUT.to_string()));
    }
    out.extend(passthrough.iter().cloned());
    out
}

/// Coalescing gap for local files: no benefit from reading gap bytes.
pub(crate) const LOCAL_COALESCE_GAP: u64 = 0;

/// A URL opened into a store, with the object path inside it.
#[derive(Debug, Clone)]
pub(crate) struct OpenedUrl {
    /// The object store handle (shared with zarrs, writers and anything else that needs
    /// one), with object_store's own retries.
    pub store: Arc<dyn ObjectStore>,
    /// The handle lakeseek reads and lists through (`source` wraps it): for the stores this
    /// module builds, the same store without object_store's retries (they are lakeseek's,
    /// through admission control, see [`crate::io::retry`]) and sharing `store`'s HTTP
    /// client; otherwise `store` itself.
    pub read_store: Arc<dyn ObjectStore>,
    /// lakeseek's I/O trait over the same store.
    pub source: Arc<dyn RangeSource>,
    /// Path of the object (or dataset/index root) inside the store.
    pub path: Path,
    /// Which kind of backend this is.
    pub scheme: ObjectStoreScheme,
    /// What names this store across processes (scheme, bucket/host, endpoint), for keys of
    /// the disk tier; `None` (never cached on disk) for in-memory stores and stores handed
    /// in by the caller.
    pub store_identity: Option<String>,
}

/// Everything [`open_url_with`] accepts besides the URL. Its `Debug` shows option keys
/// but hides the values of secret ones (see [`is_secret_option`]).
#[derive(Clone, Default)]
pub(crate) struct OpenOptions {
    /// `key=value` storage options (object_store config keys and [`LAKESEEK_OPTION_KEYS`]).
    pub storage_options: Vec<(String, String)>,
    /// HTTP client factory for the remote backends; `None` uses object_store's reqwest client.
    #[cfg(feature = "cloud")]
    pub http_connector: Option<Arc<dyn HttpConnector>>,
    /// Read through this store instead of building one from the URL (the URL then only
    /// gives the scheme, which picks the coalescing defaults, and the path inside it).
    pub object_store: Option<Arc<dyn ObjectStore>>,
    /// With `object_store`: the same store without object_store's own retries, to read and
    /// list through (lakeseek then retries every read itself; an [`OpenedUrl::read_store`]
    /// of an earlier open). `None`: reads go through `object_store`, its retries assumed.
    pub read_store: Option<Arc<dyn ObjectStore>>,
}

impl OpenOptions {
    /// Options from `key=value` pairs, no custom connector.
    pub(crate) fn new(storage_options: &[(String, String)]) -> Self {
        Self {
            storage_options: storage_options.to_vec(),
            ..Self::default()
        }
    }

    /// Use `connector` for every HTTP request of the opened store.
    #[cfg(all(test, feature = "cloud"))]
    pub(crate) fn with_http_connector(mut self, connector: Arc<dyn HttpConnector>) -> Self {
        self.http_connector = Some(connector);
        self
    }
}

impl std::fmt::Debug for OpenOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let options: Vec<(&str, &str)> = self
            .storage_options
            .iter()
            .map(|(k, v)| {
                let shown = if is_secret_option(k) { "<redacted>" } else { v };
                (k.as_str(), shown)
            })
            .collect();
        let mut out = f.debug_struct("OpenOptions");
        out.field("storage_options", &options);
        #[cfg(feature = "cloud")]
        out.field("http_connector", &self.http_connector);
        out.finish()
    }
}

/// Whether the value of storage option `key` may be a credential (keys, secrets, tokens,
/// SAS, passwords): such values are never shown.
pub(crate) fn is_secret_option(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    [
        "secret",
        "token",
        "key",
        "password",
        "sas",
        "signature",
        "credential",
    ]
    .iter()
    .any(|word| key.contains(word))
}

/// `url` as it may appear in a message: without a `user:password@` part and without the
/// query string or fragment (which can carry signatures or SAS tokens).
pub(crate) fn redact_url(url: &str) -> String {
    let cut = url.find(['?', '#']).unwrap_or(url.len());
    let url = &url[..cut];
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.to_string();
    };
    let rest = &url[scheme_end..];
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{}{}", &url[..scheme_end], &rest[at + 1..]),
        None => url.to_string(),
    }
}

/// Parse `url` (a URL or a plain local path) and open its store with `options`
/// (`key=value` pairs, see the module docs).
pub(crate) fn open_url(url: &str, options: &[(String, String)]) -> Result<OpenedUrl> {
    open_url_with(url, &OpenOptions::new(options))
}

/// [`open_url`] with an optional [`HttpConnector`].
pub(crate) fn open_url_with(url: &str, options: &OpenOptions) -> Result<OpenedUrl> {
    let parsed = parse_url_or_path(url)?;
    let (scheme, path) = ObjectStoreScheme::parse(&parsed).map_err(|e| {
        Error::InvalidArgument(format!("cannot parse store URL {}: {e}", redact_url(url)))
    })?;
    let (tuning, passthrough) = split_options(&options.storage_options)?;
    #[cfg(feature = "cloud")]
    let connector = options.http_connector.clone().map(SharedConnector);
    #[cfg(not(feature = "cloud"))]
    let connector: Option<SharedConnector> = None;
    let built = match (&options.object_store, &scheme) {
        (Some(given), _) => match &options.read_store {
            Some(reads) => Built {
                store: Arc::clone(given),
                reads: Arc::clone(reads),
                reads_retry: false,
            },
            None => Built::same(Arc::clone(given)),
        },
        (None, scheme) => build_store(url, &parsed, scheme, &tuning, &passthrough, connector)?,
    };
    let identity = match (&options.object_store, &scheme) {
        (Some(_), _) | (None, ObjectStoreScheme::Memory) => None,
        (None, _) => Some(store_identity(&parsed, &passthrough)),
    };
    let mut opened = finish_open(built, parsed, scheme, path, &tuning)?;
    opened.store_identity = identity;
    Ok(opened)
}

/// The disk tier's name of a store: scheme and host of the URL plus every endpoint-like
/// option (`aws_endpoint=…`, `endpoint=…`, `AWS_ENDPOINT_URL` from the environment) and the
/// Azure account name, so two servers or accounts with the same bucket or container name
/// never share entries. Credentials are never part of it (it is stored in entry headers).
fn store_identity(parsed: &Url, passthrough: &[(String, String)]) -> String {
    let mut id = format!("{}://{}", parsed.scheme(), parsed.authority());
    let mut endpoints: Vec<String> = passthrough
        .iter()
        .filter(|(k, _)| {
            let k = k.to_ascii_lowercase();
            k.contains("endpoint") || k == "url" || k.ends_with("account_name") || k == "account"
        })
        .map(|(k, v)| format!("{}={v}", k.to_ascii_lowercase()))
        .collect();
    let env_vars: &[&str] = match parsed.scheme() {
        "s3" | "s3a" => &["AWS_ENDPOINT", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"],
        "az" | "azure" | "abfs" | "abfss" | "adl" => {
            &["AZURE_STORAGE_ACCOUNT_NAME", "AZURE_STORAGE_ENDPOINT"]
        }
        _ => &[],
    };
    for var in env_vars {
        if let Ok(v) = std::env::var(var) {
            endpoints.push(format!("{var}={v}"));
        }
    }
    endpoints.sort();
    for e in endpoints {
        id.push(' ');
        id.push_str(&e);
    }
    id
}

/// The stores built for a URL: one with object_store's retries (writes, the exported
/// handle) and one without (lakeseek's reads and listings, retried by lakeseek).
struct Built {
    store: Arc<dyn ObjectStore>,
    reads: Arc<dyn ObjectStore>,
    /// Whether `reads` retries on its own (unknown for a store handed in: assumed so).
    reads_retry: bool,
}

impl Built {
    /// One store for both (local, in-memory, or handed in by the caller).
    fn same(store: Arc<dyn ObjectStore>) -> Self {
        Self {
            reads: Arc::clone(&store),
            store,
            reads_retry: true,
        }
    }
}

/// Build the object store a URL names, from storage options and the environment.
fn build_store(
    url: &str,
    parsed: &Url,
    scheme: &ObjectStoreScheme,
    tuning: &IoTuning,
    passthrough: &[(String, String)],
    connector: Option<SharedConnector>,
) -> Result<Built> {
    let _ = (&connector, tuning, url, parsed); // only the cloud backends use them
    if matches!(scheme, ObjectStoreScheme::Local | ObjectStoreScheme::Memory) {
        return local_store(scheme, passthrough).map(Built::same);
    }
    #[cfg(feature = "cloud")]
    let connector = Some(SharedConnector(Arc::new(SharedClients::new(connector))));
    let remote_options = with_default_timeouts(passthrough);
    let _ = &remote_options; // only the cloud backends use them
    match scheme {
        #[cfg(feature = "aws")]
        ObjectStoreScheme::AmazonS3 => s3_store(url, parsed, tuning, &remote_options, connector),
        #[cfg(feature = "gcp")]
        ObjectStoreScheme::GoogleCloudStorage => {
            gcs_store(url, parsed, tuning, &remote_options, connector)
        }
        #[cfg(feature = "azure")]
        ObjectStoreScheme::MicrosoftAzure => {
            azure_store(url, parsed, tuning, &remote_options, connector)
        }
        #[cfg(feature = "http")]
        ObjectStoreScheme::Http => http_store(url, parsed, tuning, &remote_options, connector),
        other => Err(Error::InvalidArgument(format!(
            "unsupported store scheme {other:?}{}",
            missing_feature_hint(other)
        ))),
    }
}

/// The local file system or a new in-memory store; no storage option applies to them.
fn local_store(
    scheme: &ObjectStoreScheme,
    passthrough: &[(String, String)],
) -> Result<Arc<dyn ObjectStore>> {
    if let Some((k, _)) = passthrough.first() {
        return Err(Error::InvalidArgument(format!(
            "storage option {k} does not apply to local or in-memory stores"
        )));
    }
    Ok(if *scheme == ObjectStoreScheme::Local {
        Arc::new(LocalFileSystem::new())
    } else {
        Arc::new(InMemory::new())
    })
}

/// A cloud store from its builder: the environment, then `passthrough` (each key parsed as
/// the builder's config key), retries and connector. One body for S3, GCS and Azure, whose
/// builders share these methods but no trait.
macro_rules! cloud_store {
    ($name:ident, $feature:literal, $builder:ty, $key:ty, $label:literal) => {
        #[doc = concat!("A ", $label, " store for `parsed` (see `cloud_store!`).")]
        #[cfg(feature = $feature)]
        fn $name(
            url: &str,
            parsed: &Url,
            tuning: &IoTuning,
            passthrough: &[(String, String)],
            connector: Option<SharedConnector>,
        ) -> Result<Built> {
            let mut b = <$builder>::from_env().with_url(parsed.as_str());
            for (k, v) in passthrough {
                b = b.with_config(config_key::<$key>(k, $label)?, v);
            }
            if let Some(c) = connector {
                b = b.with_http_connector(c);
            }
            let reads = b.clone().with_retry(no_store_retries());
            if let Some(retry) = tuning.retry_config() {
                b = b.with_retry(retry);
            }
            Ok(Built {
                store: Arc::new(b.build().map_err(|e| builder_error(url, e))?),
                reads: Arc::new(reads.build().map_err(|e| builder_error(url, e))?),
                reads_retry: false,
            })
        }
    };
}

cloud_store!(s3_store, "aws", AmazonS3Builder, AmazonS3ConfigKey, "S3");
cloud_store!(
    gcs_store,
    "gcp",
    GoogleCloudStorageBuilder,
    GoogleConfigKey,
    "GCS"
);
cloud_store!(
    azure_store,
    "azure",
    MicrosoftAzureBuilder,
    AzureConfigKey,
    "Azure"
);

/// A plain HTTP(S) store for the origin of `parsed` (`http://` allows plain HTTP), with
/// `passthrough` as client options, retries and connector.
#[cfg(feature = "http")]
fn http_store(
    url: &str,
    parsed: &Url,
    tuning: &IoTuning,
    passthrough: &[(String, String)],
    connector: Option<SharedConnector>,
) -> Result<Built> {
    let base = format!("{}://{}", parsed.scheme(), parsed.authority());
    // An explicit http:// URL means plain HTTP is wanted (reqwest refuses it otherwise).
    let mut options = ClientOptions::new().with_allow_http(parsed.scheme() == "http");
    for (k, v) in passthrough {
        options = options.with_config(config_key::<ClientConfigKey>(k, "HTTP")?, v);
    }
    let mut b = HttpBuilder::new()
        .with_url(base)
        .with_client_options(options);
    if let Some(c) = connector {
        b = b.with_http_connector(c);
    }
    let reads = b.clone().with_retry(no_store_retries());
    if let Some(retry) = tuning.retry_config() {
        b = b.with_retry(retry);
    }
    Ok(Built {
        store: Arc::new(b.build().map_err(|e| builder_error(url, e))?),
        reads: Arc::new(reads.build().map_err(|e| builder_error(url, e))?),
        reads_retry: false,
    })
}

/// " (lakeseek was built without the `aws` feature)" and the like, when that is why.
fn missing_feature_hint(scheme: &ObjectStoreScheme) -> &'static str {
    match scheme {
        ObjectStoreScheme::AmazonS3 => " (lakeseek was built without the `aws` feature)",
        ObjectStoreScheme::GoogleCloudStorage => " (lakeseek was built without the `gcp` feature)",
        ObjectStoreScheme::MicrosoftAzure => " (lakeseek was built without the `azure` feature)",
        ObjectStoreScheme::Http => " (lakeseek was built without the `http` feature)",
        _ => "",
    }
}

/// Wrap an object store in lakeseek's [`RangeSource`] with the scheme's coalescing gap and
/// the options' retry policy.
fn finish_open(
    built: Built,
    parsed: Url,
    scheme: ObjectStoreScheme,
    path: Path,
    tuning: &IoTuning,
) -> Result<OpenedUrl> {
    let gap = tuning.coalesce_gap.unwrap_or(match scheme {
        ObjectStoreScheme::Local | ObjectStoreScheme::Memory => LOCAL_COALESCE_GAP,
        _ => REMOTE_COALESCE_GAP,
    });
    let label = format!("{}://{}", parsed.scheme(), parsed.host_str().unwrap_or(""));
    let mut object_source = ObjectStoreSource::new(Arc::clone(&built.reads), gap, label);
    if !matches!(scheme, ObjectStoreScheme::Local | ObjectStoreScheme::Memory) {
        object_source = object_source
            .with_coalesce_waste(tuning.remote_waste_ratio())
            .with_hedge(tuning.remote_hedge());
    }
    let policy = match tuning.read_retry_policy() {
        // The read store does not retry: every retry is lakeseek's.
        _ if !built.reads_retry => Some(RetryPolicy {
            store_retries: false,
            ..tuning.read_retry_policy().unwrap_or_default()
        }),
        given => given,
    };
    if let Some(policy) = policy {
        object_source = object_source.with_retry_policy(policy);
    }
    let source: Arc<dyn RangeSource> = Arc::new(object_source);
    Ok(OpenedUrl {
        store: built.store,
        read_store: built.reads,
        source,
        path,
        scheme,
        store_identity: None,
    })
}

/// The storage options lakeseek parses itself (see [`LAKESEEK_OPTION_KEYS`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct IoTuning {
    /// `max_retries`.
    pub max_retries: Option<usize>,
    /// `retry_timeout_secs`.
    pub retry_timeout: Option<Duration>,
    /// `retry_init_backoff_ms`.
    pub init_backoff: Option<Duration>,
    /// `retry_max_backoff_ms`.
    pub max_backoff: Option<Duration>,
    /// `coalesce_gap` in bytes.
    pub coalesce_gap: Option<u64>,
    /// `coalesce_waste`: `Some(None)` for `off`.
    pub(crate) coalesce_waste: Option<Option<f64>>,
    /// `hedge_fraction`.
    pub(crate) hedge_fraction: Option<f64>,
    /// `hedge_quantile`.
    pub(crate) hedge_quantile: Option<f64>,
}

impl IoTuning {
    /// The waste ratio for a remote store: the option's, else the default unless
    /// `coalesce_gap` was given alone (then the gap alone decides, as it always did).
    pub(crate) fn remote_waste_ratio(&self) -> Option<f64> {
        match self.coalesce_waste {
            Some(w) => w,
            None if self.coalesce_gap.is_some() => None,
            None => Some(REMOTE_WASTE_RATIO),
        }
    }

    /// The hedging policy for a remote store.
    pub(crate) fn remote_hedge(&self) -> HedgeConfig {
        let mut hedge = HedgeConfig::remote();
        if let Some(f) = self.hedge_fraction {
            hedge.fraction = f;
        }
        if let Some(q) = self.hedge_quantile {
            hedge.quantile = q;
        }
        hedge
    }
}

impl IoTuning {
    /// object_store's retry config with the given fields replaced, or `None` when no retry
    /// option was given (object_store's defaults then apply).
    #[cfg(feature = "cloud")]
    pub(crate) fn retry_config(&self) -> Option<RetryConfig> {
        if self.max_retries.is_none()
            && self.retry_timeout.is_none()
            && self.init_backoff.is_none()
            && self.max_backoff.is_none()
        {
            return None;
        }
        let mut retry = RetryConfig::default();
        if let Some(n) = self.max_retries {
            retry.max_retries = n;
        }
        if let Some(t) = self.retry_timeout {
            retry.retry_timeout = t;
        }
        if let Some(d) = self.init_backoff {
            retry.backoff.init_backoff = d;
        }
        if let Some(d) = self.max_backoff {
            retry.backoff.max_backoff = d;
        }
        if retry.backoff.max_backoff < retry.backoff.init_backoff {
            retry.backoff.max_backoff = retry.backoff.init_backoff;
        }
        Some(retry)
    }
}

impl IoTuning {
    /// lakeseek's own read retries ([`RetryPolicy`], around object_store's) with the same
    /// retry options, or `None` when no retry option was given (the fetcher's default then
    /// applies). See [`crate::io::retry`] for the resulting bound on attempts.
    pub(crate) fn read_retry_policy(&self) -> Option<RetryPolicy> {
        if self.max_retries.is_none()
            && self.retry_timeout.is_none()
            && self.init_backoff.is_none()
            && self.max_backoff.is_none()
        {
            return None;
        }
        let mut policy = RetryPolicy::default();
        if let Some(n) = self.max_retries {
            policy.max_retries = n;
        }
        if let Some(t) = self.retry_timeout {
            policy.retry_timeout = t;
        }
        if let Some(d) = self.init_backoff {
            policy.init_backoff = d;
        }
        if let Some(d) = self.max_backoff {
            policy.max_backoff = d;
        }
        if policy.max_backoff < policy.init_backoff {
            policy.max_backoff = policy.init_backoff;
        }
        Some(policy)
    }
}

/// Split `options` into lakeseek's own (parsed) and the rest (for object_store's builders,
/// in the given order). Keys are matched case-insensitively, as object_store does.
pub(crate) fn split_options(
    options: &[(String, String)],
) -> Result<(IoTuning, Vec<(String, String)>)> {
    let mut tuning = IoTuning::default();
    let mut rest = Vec::new();
    for (key, value) in options {
        let lower = key.to_ascii_lowercase();
        match lower.as_str() {
            "max_retries" => tuning.max_retries = Some(parse_number(key, value)? as usize),
            "retry_timeout_secs" => tuning.retry_timeout = Some(parse_seconds(key, value)?),
            "retry_init_backoff_ms" => {
                tuning.init_backoff = Some(Duration::from_millis(parse_number(key, value)?))
            }
            "retry_max_backoff_ms" => {
                tuning.max_backoff = Some(Duration::from_millis(parse_number(key, value)?))
            }
            "coalesce_gap" => tuning.coalesce_gap = Some(parse_number(key, value)?),
            "coalesce_waste" => {
                tuning.coalesce_waste = Some(match value.trim() {
                    "off" | "none" => None,
                    _ => Some(parse_fraction(key, value, f64::MAX)?),
                })
            }
            "hedge_fraction" => tuning.hedge_fraction = Some(parse_fraction(key, value, 1.0)?),
            "hedge_quantile" => tuning.hedge_quantile = Some(parse_fraction(key, value, 1.0)?),
            _ => rest.push((lower, value.clone())),
        }
    }
    Ok((tuning, rest))
}

/// A number in `0..=max`.
fn parse_fraction(key: &str, value: &str, max: f64) -> Result<f64> {
    match value.trim().parse::<f64>() {
        Ok(v) if (0.0..=max).contains(&v) => Ok(v),
        _ => Err(Error::InvalidArgument(format!(
            "storage option {key}={value}: expected a number from 0 to {max}"
        ))),
    }
}

fn parse_number(key: &str, value: &str) -> Result<u64> {
    value.trim().parse::<u64>().map_err(|_| {
        Error::InvalidArgument(format!(
            "storage option {key}={value}: expected a whole number"
        ))
    })
}

fn parse_seconds(key: &str, value: &str) -> Result<Duration> {
    let secs: f64 = value.trim().parse().map_err(|_| {
        Error::InvalidArgument(format!("storage option {key}={value}: expected seconds"))
    })?;
    Duration::try_from_secs_f64(secs)
        .map_err(|_| Error::InvalidArgument(format!("storage option {key}={value}: out of range")))
}

fn config_key<K: FromStr>(key: &str, store: &str) -> Result<K> {
    K::from_str(key)
        .map_err(|_| Error::InvalidArgument(format!("unknown {store} storage option {key}")))
}

fn builder_error(url: &str, e: object_store::Error) -> Error {
    Error::InvalidArgument(format!("cannot open store for {}: {e}", redact_url(url)))
}

/// Adapts a shared `Arc<dyn HttpConnector>` to the builders' generic `with_http_connector`.
#[cfg(feature = "cloud")]
#[derive(Debug, Clone)]
struct SharedConnector(Arc<dyn HttpConnector>);

/// Without a cloud backend there is no HTTP client to adapt.
#[cfg(not(feature = "cloud"))]
#[derive(Debug, Clone)]
enum SharedConnector {}

#[cfg(feature = "cloud")]
impl HttpConnector for SharedConnector {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        self.0.connect(options)
    }
}

#[cfg(feature = "cloud")]
#[path = "store_clients.rs"]
mod clients;
#[cfg(feature = "cloud")]
use clients::{no_store_retries, SharedClients};

/// Accept `s3://...`, `file:///...` and plain (relative or absolute) local paths.
fn parse_url_or_path(url: &str) -> Result<Url> {
    if url.contains("://") {
        let parsed = Url::parse(url)
            .map_err(|e| Error::InvalidArgument(format!("bad URL {}: {e}", redact_url(url))))?;
        // Credentials in a URL would be echoed by error messages (object_store prints the
        // request URL) and a query string would be dropped silently: refuse both.
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(Error::InvalidArgument(format!(
                "URL {} carries credentials; pass them as storage options instead",
                redact_url(url)
            )));
        }
        if parsed.query().is_some() {
            return Err(Error::InvalidArgument(format!(
                "URL {} has a query string (e.g. a signature or SAS token), which lakeseek does \
                 not use; pass credentials as storage options instead",
                redact_url(url)
            )));
        }
        return Ok(parsed);
    }
    let abs = std::path::absolute(url)
        .map_err(|e| Error::InvalidArgument(format!("bad local path {url}: {e}")))?;
    Url::from_file_path(&abs).map_err(|_| Error::InvalidArgument(format!("bad local path {url}")))
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
