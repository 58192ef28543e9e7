//! URL → object store. Reads credentials and endpoints from the environment the way
//! object_store's builders do (`AWS_ENDPOINT`, `AWS_ALLOW_HTTP`, `GOOGLE_SERVICE_ACCOUNT`,
//! `AZURE_STORAGE_ACCOUNT_NAME`, ...) and applies `key=value` storage options on top.

use std::str::FromStr;
use std::sync::Arc;

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use object_store::http::HttpBuilder;
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ClientConfigKey, ObjectStore, ObjectStoreScheme};
use url::Url;

use crate::error::{Error, Result};
use crate::io::source::{ObjectStoreSource, RangeSource};

/// Coalescing gap for remote stores: a request costs ~10-50 ms, 256 KiB costs less.
pub const REMOTE_COALESCE_GAP: u64 = 256 * 1024;
/// Coalescing gap for local files: no benefit from reading gap bytes.
pub const LOCAL_COALESCE_GAP: u64 = 0;

/// A URL opened into a store, with the object path inside it.
#[derive(Debug, Clone)]
pub struct OpenedUrl {
    /// The object store handle (shared with zarrs and anything else that needs one).
    pub store: Arc<dyn ObjectStore>,
    /// lakeseek's I/O trait over the same store.
    pub source: Arc<dyn RangeSource>,
    /// Path of the object (or dataset/index root) inside the store.
    pub path: Path,
    /// Which kind of backend this is.
    pub scheme: ObjectStoreScheme,
}

/// Parse `url` (a URL or a plain local path) and open its store with `options`
/// (`key=value` pairs as accepted by object_store's builders, e.g. `aws_endpoint`,
/// `allow_http`, `google_service_account`).
pub fn open_url(url: &str, options: &[(String, String)]) -> Result<OpenedUrl> {
    let parsed = parse_url_or_path(url)?;
    let (scheme, path) = ObjectStoreScheme::parse(&parsed)
        .map_err(|e| Error::InvalidArgument(format!("cannot parse store URL {url}: {e}")))?;
    let store: Arc<dyn ObjectStore> = match scheme {
        ObjectStoreScheme::Local => {
            if !options.is_empty() {
                return Err(Error::InvalidArgument(
                    "local files take no storage options".into(),
                ));
            }
            Arc::new(LocalFileSystem::new())
        }
        ObjectStoreScheme::Memory => Arc::new(InMemory::new()),
        ObjectStoreScheme::AmazonS3 => {
            let mut b = AmazonS3Builder::from_env().with_url(parsed.as_str());
            for (k, v) in options {
                let key = AmazonS3ConfigKey::from_str(k).map_err(|_| {
                    Error::InvalidArgument(format!("unknown S3 storage option {k}"))
                })?;
                b = b.with_config(key, v);
            }
            Arc::new(b.build().map_err(|e| builder_error(url, e))?)
        }
        ObjectStoreScheme::GoogleCloudStorage => {
            let mut b = GoogleCloudStorageBuilder::from_env().with_url(parsed.as_str());
            for (k, v) in options {
                let key = GoogleConfigKey::from_str(k).map_err(|_| {
                    Error::InvalidArgument(format!("unknown GCS storage option {k}"))
                })?;
                b = b.with_config(key, v);
            }
            Arc::new(b.build().map_err(|e| builder_error(url, e))?)
        }
        ObjectStoreScheme::MicrosoftAzure => {
            let mut b = MicrosoftAzureBuilder::from_env().with_url(parsed.as_str());
            for (k, v) in options {
                let key = AzureConfigKey::from_str(k).map_err(|_| {
                    Error::InvalidArgument(format!("unknown Azure storage option {k}"))
                })?;
                b = b.with_config(key, v);
            }
            Arc::new(b.build().map_err(|e| builder_error(url, e))?)
        }
        ObjectStoreScheme::Http => {
            let base = format!("{}://{}", parsed.scheme(), parsed.authority());
            let mut b = HttpBuilder::new().with_url(base);
            for (k, v) in options {
                let key = ClientConfigKey::from_str(k).map_err(|_| {
                    Error::InvalidArgument(format!("unknown HTTP storage option {k}"))
                })?;
                b = b.with_config(key, v);
            }
            Arc::new(b.build().map_err(|e| builder_error(url, e))?)
        }
        other => {
            return Err(Error::InvalidArgument(format!(
                "unsupported store scheme {other:?}"
            )))
        }
    };
    let gap = match scheme {
        ObjectStoreScheme::Local | ObjectStoreScheme::Memory => LOCAL_COALESCE_GAP,
        _ => REMOTE_COALESCE_GAP,
    };
    let label = format!("{}://{}", parsed.scheme(), parsed.host_str().unwrap_or(""));
    let source: Arc<dyn RangeSource> = Arc::new(ObjectStoreSource::new(store.clone(), gap, label));
    Ok(OpenedUrl {
        store,
        source,
        path,
        scheme,
    })
}

fn builder_error(url: &str, e: object_store::Error) -> Error {
    Error::InvalidArgument(format!("cannot open store for {url}: {e}"))
}

/// Accept `s3://...`, `file:///...` and plain (relative or absolute) local paths.
fn parse_url_or_path(url: &str) -> Result<Url> {
    if url.contains("://") {
        return Url::parse(url).map_err(|e| Error::InvalidArgument(format!("bad URL {url}: {e}")));
    }
    let abs = std::path::absolute(url)
        .map_err(|e| Error::InvalidArgument(format!("bad local path {url}: {e}")))?;
    Url::from_file_path(&abs).map_err(|_| Error::InvalidArgument(format!("bad local path {url}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_paths_become_local_urls() {
        let o = open_url("/tmp/x.lance", &[]).unwrap();
        assert_eq!(o.scheme, ObjectStoreScheme::Local);
        assert_eq!(o.path.as_ref(), "tmp/x.lance");
    }

    #[test]
    fn s3_urls_take_options() {
        let opts = vec![
            ("aws_endpoint".to_string(), "http://127.0.0.1:1".to_string()),
            ("allow_http".to_string(), "true".to_string()),
            ("aws_access_key_id".to_string(), "k".to_string()),
            ("aws_secret_access_key".to_string(), "s".to_string()),
            ("aws_region".to_string(), "us-east-1".to_string()),
        ];
        let o = open_url("s3://bucket/a/b.lance", &opts).unwrap();
        assert_eq!(o.scheme, ObjectStoreScheme::AmazonS3);
        assert_eq!(o.path.as_ref(), "a/b.lance");
        assert!(open_url("s3://bucket/a", &[("bogus".into(), "1".into())]).is_err());
    }
}
