//! The narrow I/O trait every reader in lakeseek goes through, and its object_store
//! implementation.

use std::fmt::Debug;
use std::ops::Range;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStore};

use crate::error::{Error, Result};

/// Identity of one version of an object: caches key decoded metadata by path + this.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjectVersion {
    /// Object size in bytes.
    pub size: u64,
    /// ETag when the backend reports one.
    pub etag: Option<String>,
}

/// Ranged reads of objects. Implementations must not HEAD before a ranged read.
#[async_trait]
pub trait RangeSource: Send + Sync + Debug {
    /// Read `range` of `path`. The range must be non-empty and inside the object.
    async fn get_range(&self, path: &Path, range: Range<u64>) -> Result<Bytes>;

    /// Read the last `n` bytes of `path` (all of it when it is shorter), with the object's
    /// size and version taken from the same response (no HEAD).
    async fn get_suffix(&self, path: &Path, n: u64) -> Result<(Bytes, ObjectVersion)>;

    /// Read the whole object.
    async fn get_all(&self, path: &Path) -> Result<(Bytes, ObjectVersion)>;

    /// Largest gap (bytes) worth downloading to merge two ranges into one request.
    fn coalesce_gap(&self) -> u64;

    /// Human-readable name of the backend, e.g. `s3://bucket`.
    fn describe(&self) -> String;
}

/// [`RangeSource`] over any `object_store` implementation.
#[derive(Debug, Clone)]
pub struct ObjectStoreSource {
    store: Arc<dyn ObjectStore>,
    gap: u64,
    label: String,
}

impl ObjectStoreSource {
    /// Wrap a store. `gap` is the coalescing gap: large (e.g. 64 KiB–1 MiB) for remote
    /// stores where a request costs far more than the gap bytes, 0 for local files.
    pub fn new(store: Arc<dyn ObjectStore>, gap: u64, label: impl Into<String>) -> Self {
        Self {
            store,
            gap,
            label: label.into(),
        }
    }

    /// The wrapped store.
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }
}

fn store_error(path: &Path, range: Option<Range<u64>>, e: object_store::Error) -> Error {
    match e {
        object_store::Error::NotFound { .. } => Error::NotFound {
            path: path.to_string(),
            what: "object does not exist".into(),
        },
        other => Error::Store {
            path: path.to_string(),
            range,
            source: Box::new(other),
        },
    }
}

#[async_trait]
impl RangeSource for ObjectStoreSource {
    async fn get_range(&self, path: &Path, range: Range<u64>) -> Result<Bytes> {
        if range.start >= range.end {
            return Err(Error::InvalidArgument(format!(
                "empty range {}..{} of {path}",
                range.start, range.end
            )));
        }
        let opts = GetOptions {
            range: Some(GetRange::Bounded(range.clone())),
            ..Default::default()
        };
        let result = self
            .store
            .get_opts(path, opts)
            .await
            .map_err(|e| store_error(path, Some(range.clone()), e))?;
        let bytes = result
            .bytes()
            .await
            .map_err(|e| store_error(path, Some(range.clone()), e))?;
        if bytes.len() as u64 != range.end - range.start {
            return Err(Error::Corrupt {
                path: path.to_string(),
                range: Some(range.clone()),
                what: format!(
                    "short read: asked for {} bytes, got {}",
                    range.end - range.start,
                    bytes.len()
                ),
            });
        }
        Ok(bytes)
    }

    async fn get_suffix(&self, path: &Path, n: u64) -> Result<(Bytes, ObjectVersion)> {
        if n == 0 {
            return Err(Error::InvalidArgument(format!(
                "empty suffix read of {path}"
            )));
        }
        let opts = GetOptions {
            range: Some(GetRange::Suffix(n)),
            ..Default::default()
        };
        let result = self
            .store
            .get_opts(path, opts)
            .await
            .map_err(|e| store_error(path, None, e))?;
        let version = ObjectVersion {
            size: result.meta.size,
            etag: result.meta.e_tag.clone(),
        };
        let returned = result.range.clone();
        let bytes = result
            .bytes()
            .await
            .map_err(|e| store_error(path, Some(returned.clone()), e))?;
        let expected = n.min(version.size);
        if bytes.len() as u64 != expected || returned.end != version.size {
            return Err(Error::Corrupt {
                path: path.to_string(),
                range: Some(returned),
                what: format!(
                    "suffix read of {n} bytes of a {}-byte object returned {} bytes",
                    version.size,
                    bytes.len()
                ),
            });
        }
        Ok((bytes, version))
    }

    async fn get_all(&self, path: &Path) -> Result<(Bytes, ObjectVersion)> {
        let result = self
            .store
            .get_opts(path, GetOptions::default())
            .await
            .map_err(|e| store_error(path, None, e))?;
        let version = ObjectVersion {
            size: result.meta.size,
            etag: result.meta.e_tag.clone(),
        };
        let bytes = result
            .bytes()
            .await
            .map_err(|e| store_error(path, None, e))?;
        if bytes.len() as u64 != version.size {
            return Err(Error::Corrupt {
                path: path.to_string(),
                range: Some(0..version.size),
                what: format!(
                    "whole-object read returned {} of {} bytes",
                    bytes.len(),
                    version.size
                ),
            });
        }
        Ok((bytes, version))
    }

    fn coalesce_gap(&self) -> u64 {
        self.gap
    }

    fn describe(&self) -> String {
        self.label.clone()
    }
}
