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
use crate::io::hedge::HedgeConfig;
use crate::io::retry::{RetryPolicy, ShortBody};

/// Identity of one version of an object: caches key decoded metadata by path + this.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ObjectVersion {
    /// Object size in bytes.
    pub size: u64,
    /// ETag when the backend reports one.
    pub etag: Option<String>,
}

impl std::fmt::Display for ObjectVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} bytes", self.size)?;
        if let Some(etag) = &self.etag {
            write!(f, ", etag {etag}")?;
        }
        Ok(())
    }
}

/// The object was replaced between the read its metadata came from and a later range read:
/// its size or etag differs from the expected one (or the store refused an `If-Match`).
/// Reported as [`Error::ObjectChanged`]; test for it with [`is_object_changed`]. Never retried: the caller's metadata is stale, so
/// the query must be restarted from fresh metadata (a new open reads the new version, and
/// caches are keyed by version, so nothing decoded from the old one is reused).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("object changed since its metadata was read: expected {expected}, the store now has {}",
    .found.as_ref().map(|v| v.to_string()).unwrap_or_else(|| "a different version (If-Match failed)".into()))]
pub(crate) struct ObjectChanged {
    /// The version the caller's metadata came from.
    pub expected: ObjectVersion,
    /// The version the store reported, when it said.
    pub found: Option<ObjectVersion>,
}

impl ObjectChanged {
    /// The [`Error::Store`] for a changed object at `path` / `range`.
    pub(crate) fn error(path: &Path, range: Option<Range<u64>>, changed: ObjectChanged) -> Error {
        Error::ObjectChanged {
            path: path.to_string(),
            range,
            what: changed.to_string(),
        }
    }
}

/// Whether `err` says the object changed between reads (an [`ObjectChanged`] or a failed
/// `If-Match` precondition).
pub(crate) fn is_object_changed(err: &Error) -> bool {
    matches!(err, Error::ObjectChanged { .. })
}

/// Ranged reads of objects. Implementations must not HEAD before a ranged read.
#[async_trait]
pub(crate) trait RangeSource: Send + Sync + Debug {
    /// Read `range` of `path`. The range must be non-empty and inside the object.
    ///
    /// `expected` is the version the caller's metadata came from (size, and etag when known).
    /// A source that can see the object's version in the response must check it and fail
    /// with [`ObjectChanged`] on a mismatch rather than return bytes of another version.
    async fn get_range(
        &self,
        path: &Path,
        range: Range<u64>,
        expected: Option<&ObjectVersion>,
    ) -> Result<Bytes>;

    /// Read the last `n` bytes of `path` (all of it when it is shorter), with the object's
    /// size and version taken from the same response (no HEAD).
    async fn get_suffix(&self, path: &Path, n: u64) -> Result<(Bytes, ObjectVersion)>;

    /// Read the whole object.
    async fn get_all(&self, path: &Path) -> Result<(Bytes, ObjectVersion)>;

    /// Largest gap (bytes) worth downloading to merge two ranges into one request.
    fn coalesce_gap(&self) -> u64;

    /// Human-readable name of the backend, e.g. `s3://bucket`.
    fn describe(&self) -> String;

    /// How readers over this source should retry transient failures (from the store's
    /// options); `None` leaves it to the fetcher's default. Wrappers forward it.
    fn retry_policy(&self) -> Option<RetryPolicy> {
        None
    }

    /// The waste ratio bounding coalescing ([`crate::io::coalesce`]); `None`: the gap alone
    /// decides. Wrappers forward it.
    fn coalesce_waste(&self) -> Option<f64> {
        None
    }

    /// When reads of this source are hedged ([`crate::io::hedge`]); off by default (local
    /// files, memory). Wrappers forward it.
    fn hedge_config(&self) -> HedgeConfig {
        HedgeConfig::off()
    }
}

/// [`RangeSource`] over any `object_store` implementation.
#[derive(Debug, Clone)]
pub(crate) struct ObjectStoreSource {
    store: Arc<dyn ObjectStore>,
    gap: u64,
    label: String,
    retry: Option<RetryPolicy>,
    waste: Option<f64>,
    hedge: HedgeConfig,
}

impl ObjectStoreSource {
    /// Wrap a store. `gap` is the coalescing gap: large (e.g. 64 KiB–1 MiB) for remote
    /// stores where a request costs far more than the gap bytes, 0 for local files.
    pub(crate) fn new(store: Arc<dyn ObjectStore>, gap: u64, label: impl Into<String>) -> Self {
        Self {
            store,
            gap,
            label: label.into(),
            retry: None,
            waste: None,
            hedge: HedgeConfig::off(),
        }
    }

    /// Bound coalescing by `ratio` (see [`RangeSource::coalesce_waste`]).
    pub(crate) fn with_coalesce_waste(mut self, ratio: Option<f64>) -> Self {
        self.waste = ratio;
        self
    }

    /// Hedge reads with `config` (see [`RangeSource::hedge_config`]).
    pub(crate) fn with_hedge(mut self, config: HedgeConfig) -> Self {
        self.hedge = config;
        self
    }

    /// Advertise `policy` as this source's [`RangeSource::retry_policy`].
    pub(crate) fn with_retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.retry = Some(policy);
        self
    }
}

fn store_error(path: &Path, range: Option<Range<u64>>, e: object_store::Error) -> Error {
    match e {
        object_store::Error::NotFound { .. } => Error::NotFound {
            path: path.to_string(),
            what: "object does not exist".into(),
        },
        object_store::Error::Precondition { source, .. } => Error::ObjectChanged {
            path: path.to_string(),
            range,
            what: format!("the store refused the read's precondition: {source}"),
        },
        other => Error::Store {
            path: path.to_string(),
            range,
            source: std::sync::Arc::new(other),
        },
    }
}

#[async_trait]
impl RangeSource for ObjectStoreSource {
    async fn get_range(
        &self,
        path: &Path,
        range: Range<u64>,
        expected: Option<&ObjectVersion>,
    ) -> Result<Bytes> {
        if range.start >= range.end {
            return Err(Error::InvalidArgument(format!(
                "empty range {}..{} of {path}",
                range.start, range.end
            )));
        }
        let opts = GetOptions {
            range: Some(GetRange::Bounded(range.clone())),
            // Weak etags (`W/"..."`) never pass If-Match's strong comparison: compare them
            // with the response's instead.
            if_match: expected
                .and_then(|v| v.etag.clone())
                .filter(|etag| !etag.starts_with("W/")),
            ..Default::default()
        };
        let result = self
            .store
            .get_opts(path, opts)
            .await
            .map_err(|e| match (e, expected) {
                // A failed If-Match; or 416 from a server that ignores If-Match: the range was
                // checked against the expected size before it was sent, so the object shrank.
                (e, Some(v))
                    if matches!(e, object_store::Error::Precondition { .. })
                        || crate::io::retry::store_error_status(&e) == Some(416) =>
                {
                    ObjectChanged::error(
                        path,
                        Some(range.clone()),
                        ObjectChanged {
                            expected: v.clone(),
                            found: None,
                        },
                    )
                }
                (e, _) => store_error(path, Some(range.clone()), e),
            })?;
        if let Some(v) = expected {
            let found = ObjectVersion {
                size: result.meta.size,
                etag: result.meta.e_tag.clone(),
            };
            let etag_differs = matches!((&v.etag, &found.etag), (Some(a), Some(b)) if a != b);
            if found.size != v.size || etag_differs {
                return Err(ObjectChanged::error(
                    path,
                    Some(range),
                    ObjectChanged {
                        expected: v.clone(),
                        found: Some(found),
                    },
                ));
            }
        }
        let bytes = result
            .bytes()
            .await
            .map_err(|e| store_error(path, Some(range.clone()), e))?;
        let wanted = range.end - range.start;
        if bytes.len() as u64 != wanted {
            return Err(ShortBody::error(
                path.as_ref(),
                Some(range),
                wanted,
                bytes.len() as u64,
            ));
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
        if bytes.len() as u64 != expected {
            return Err(ShortBody::error(
                path.as_ref(),
                Some(returned),
                expected,
                bytes.len() as u64,
            ));
        }
        if returned.end != version.size {
            return Err(Error::Corrupt {
                path: path.to_string(),
                range: Some(returned),
                what: format!(
                    "suffix read of {n} bytes of a {}-byte object returned a range that does not end at the end of the object",
                    version.size
                ),
                source: None,
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
            return Err(ShortBody::error(
                path.as_ref(),
                Some(0..version.size),
                version.size,
                bytes.len() as u64,
            ));
        }
        Ok((bytes, version))
    }

    fn coalesce_gap(&self) -> u64 {
        self.gap
    }

    fn describe(&self) -> String {
        self.label.clone()
    }

    fn retry_policy(&self) -> Option<RetryPolicy> {
        self.retry.clone()
    }

    fn coalesce_waste(&self) -> Option<f64> {
        self.waste
    }

    fn hedge_config(&self) -> HedgeConfig {
        self.hedge.clone()
    }
}
