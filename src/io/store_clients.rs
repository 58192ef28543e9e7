//! The clients of the stores [`open_url`](crate::io::open_url) builds: object_store's retry
//! configuration of the read store (none: lakeseek retries, [`crate::io::retry`]) and a
//! connector that lets the two stores built for one URL share their HTTP client.

use object_store::client::{HttpClient, HttpConnector};
use object_store::{ClientOptions, RetryConfig};

use super::SharedConnector;

/// object_store's retries of the read store: none (lakeseek's retry loop owns them, each
/// attempt through admission control; [`crate::io::retry`]).
pub(super) fn no_store_retries() -> RetryConfig {
    RetryConfig {
        max_retries: 0,
        ..RetryConfig::default()
    }
}

/// A connector that hands out one HTTP client per distinct [`ClientOptions`]: the two stores
/// built for a URL (with and without object_store's retries) share their connection pools.
#[derive(Debug)]
pub(super) struct SharedClients {
    /// The caller's connector, else object_store's reqwest client.
    inner: Option<SharedConnector>,
    built: std::sync::Mutex<Vec<(String, HttpClient)>>,
}

impl SharedClients {
    pub(super) fn new(inner: Option<SharedConnector>) -> Self {
        Self {
            inner,
            built: std::sync::Mutex::new(Vec::new()),
        }
    }

    fn connect_new(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        match &self.inner {
            Some(c) => c.connect(options),
            #[cfg(any(feature = "aws", feature = "gcp", feature = "azure", feature = "http"))]
            None => object_store::client::ReqwestConnector::default().connect(options),
            #[cfg(not(any(
                feature = "aws",
                feature = "gcp",
                feature = "azure",
                feature = "http"
            )))]
            None => Err(object_store::Error::NotSupported {
                source: "no HTTP client in this build".into(),
            }),
        }
    }
}

impl HttpConnector for SharedClients {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        // `ClientOptions` has no equality; its `Debug` shows every field (no credentials).
        let key = format!("{options:?}");
        let mut built = self.built.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, client)) = built.iter().find(|(k, _)| *k == key) {
            return Ok(client.clone());
        }
        let client = self.connect_new(options)?;
        built.push((key, client.clone()));
        Ok(client)
    }
}
