//! The one public error type of lakeseek.
//!
//! Every variant says what the caller can do about it and, where it is about bytes of an
//! object, carries the object path and the byte range that was being read or decoded.

use std::ops::Range;
use std::sync::Arc;

/// Result alias used throughout lakeseek.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An upstream error (a protobuf, JSON, zarr, compression or Arrow error, ...) kept as the
/// [`std::error::Error::source`] of a lakeseek [`Error`]; shared so the error stays `Clone`.
pub type ErrorSource = Arc<dyn std::error::Error + Send + Sync + 'static>;

/// Everything that can go wrong in lakeseek.
///
/// `Clone` (sources are shared behind `Arc`), so an error that passes through a cache keeps
/// its variant and its source for every caller that waited on the same load.
///
/// ```
/// let err = lakeseek::Error::InvalidArgument("bad --rows".into());
/// match err.clone() {
///     lakeseek::Error::InvalidArgument(why) => assert_eq!(why, "bad --rows"),
///     _ => unreachable!(),
/// }
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The object, dataset, column, index or node does not exist.
    #[error("not found: {path}: {what}")]
    NotFound {
        /// Object path or logical name that was looked up.
        path: String,
        /// What was missing.
        what: String,
    },
    /// Bytes read from storage violate the format.
    #[error("corrupt: {path}{}: {what}", fmt_range(.range))]
    Corrupt {
        /// Object path (empty while a pure decoder has not been told it yet).
        path: String,
        /// Absolute byte range of the object that was being decoded, when known.
        range: Option<Range<u64>>,
        /// Which rule was broken.
        what: String,
        /// The upstream error the rule was found broken by (a protobuf or zarr decoder,
        /// a decompressor, ...), when there was one.
        #[source]
        source: Option<ErrorSource>,
    },
    /// Valid input that uses a feature lakeseek does not implement.
    #[error("unsupported: {path}: {what}")]
    Unsupported {
        /// Object path or logical name.
        path: String,
        /// What is not supported.
        what: String,
        /// The upstream error that refused the input, when there was one.
        #[source]
        source: Option<ErrorSource>,
    },
    /// The caller passed something invalid (a bad row range, URL, predicate, ...).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The object store failed (after its retries).
    #[error("store error reading {path}{}: {source}", fmt_range(.range))]
    Store {
        /// Object path.
        path: String,
        /// Byte range requested, when the call was a range read.
        range: Option<Range<u64>>,
        /// The underlying object_store error.
        #[source]
        source: Arc<object_store::Error>,
    },
    /// The object was replaced between the read its metadata came from and a later read
    /// (its size or etag changed, or the store refused an `If-Match`). Not retried: reopen
    /// the dataset, file or index to read the new version.
    #[error("object changed: {path}{}: {what}", fmt_range(.range))]
    ObjectChanged {
        /// Object path.
        path: String,
        /// Byte range that was being read, when the call was a range read.
        range: Option<Range<u64>>,
        /// Which versions disagreed.
        what: String,
    },
    /// Local I/O failed (writing output, reading a query file, ...).
    #[error("i/o error: {0}")]
    Io(#[source] Arc<std::io::Error>),
    /// Arrow rejected data we built (a bug or corrupt data that slipped past validation).
    #[error("arrow error: {0}")]
    Arrow(#[source] Arc<arrow_schema::ArrowError>),
    /// A commit lost to a concurrent writer and could not be rebased onto the new
    /// version (or ran out of retries); nothing of it was committed.
    #[error("commit conflict: {path}: {what}")]
    Conflict {
        /// Dataset (or manifest) path.
        path: String,
        /// What the concurrent change was and what to do.
        what: String,
    },
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(Arc::new(e))
    }
}

impl From<arrow_schema::ArrowError> for Error {
    fn from(e: arrow_schema::ArrowError) -> Self {
        Error::Arrow(Arc::new(e))
    }
}

fn fmt_range(range: &Option<Range<u64>>) -> String {
    match range {
        Some(r) => format!(" [bytes {}..{}]", r.start, r.end),
        None => String::new(),
    }
}

impl Error {
    /// A `Corrupt` error with no path yet; callers attach context with [`Error::at`].
    pub fn corrupt(what: impl Into<String>) -> Self {
        Error::Corrupt {
            path: String::new(),
            range: None,
            what: what.into(),
            source: None,
        }
    }

    /// An `Unsupported` error with no path yet.
    pub fn unsupported(what: impl Into<String>) -> Self {
        Error::Unsupported {
            path: String::new(),
            what: what.into(),
            source: None,
        }
    }

    /// Keep `upstream` as the [`std::error::Error::source`] of a `Corrupt` or `Unsupported`
    /// error (one that has none yet); the message is unchanged, so it may still quote the
    /// upstream error. Other variants are returned as they are.
    ///
    /// ```
    /// use std::error::Error as _;
    ///
    /// let upstream = serde_json::from_str::<u32>("x").unwrap_err();
    /// let err = lakeseek::Error::corrupt(format!("bad details: {upstream}"))
    ///     .with_source(upstream)
    ///     .at("data/index.json", None);
    /// assert!(err.to_string().starts_with("corrupt: data/index.json: bad details: "));
    /// assert!(err.source().is_some());
    /// ```
    pub fn with_source(mut self, upstream: impl std::error::Error + Send + Sync + 'static) -> Self {
        match &mut self {
            Error::Corrupt { source, .. } | Error::Unsupported { source, .. }
                if source.is_none() =>
            {
                *source = Some(Arc::new(upstream));
            }
            _ => {}
        }
        self
    }

    /// Fill in the object path and byte range of a `Corrupt`/`Unsupported`/`Store` error
    /// if they are not set yet (inner context wins: it is more precise).
    pub fn at(mut self, object_path: &str, byte_range: Option<Range<u64>>) -> Self {
        match &mut self {
            Error::Corrupt { path, range, .. }
            | Error::Store { path, range, .. }
            | Error::ObjectChanged { path, range, .. } => {
                if path.is_empty() {
                    *path = object_path.to_string();
                }
                if range.is_none() {
                    *range = byte_range;
                }
            }
            Error::Unsupported { path, .. } | Error::NotFound { path, .. } if path.is_empty() => {
                *path = object_path.to_string();
            }
            _ => {}
        }
        self
    }

    /// Name `object` (the file, dataset or index a public call was made on) in a `Corrupt`
    /// or `Unsupported` error that names no object yet. The public calls (`src/api`)
    /// apply it to what they return, so no such error leaves the library without the object
    /// it is about; an inner path (the exact file) wins, other variants are unchanged.
    pub(crate) fn naming(mut self, object: &str) -> Self {
        match &mut self {
            Error::Corrupt { path, .. } | Error::Unsupported { path, .. } if path.is_empty() => {
                *path = object.to_string();
            }
            _ => {}
        }
        self
    }

    /// Whether this is a `Corrupt` or `Unsupported` error that names no object (what
    /// [`Error::naming`] fills in; the bad-input tests check that none leaves a public call).
    #[cfg(test)]
    pub(crate) fn names_no_object(&self) -> bool {
        matches!(self, Error::Corrupt { path, .. } | Error::Unsupported { path, .. } if path.is_empty())
    }

    /// Prefix the `what` of a `Corrupt`/`Unsupported` error with more context
    /// (e.g. "column 3 page 2").
    pub fn context(mut self, ctx: impl std::fmt::Display) -> Self {
        match &mut self {
            Error::Corrupt { what, .. } | Error::Unsupported { what, .. } => {
                *what = format!("{ctx}: {what}");
            }
            _ => {}
        }
        self
    }
}

/// Return `Error::Corrupt` with a formatted message unless the condition holds.
#[macro_export]
macro_rules! ensure_corrupt {
    ($cond:expr, $($arg:tt)+) => {
        if !($cond) {
            return Err($crate::error::Error::corrupt(format!($($arg)+)));
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn naming_fills_only_an_empty_path_of_corrupt_and_unsupported() {
        let named = Error::corrupt("bad footer").naming("data/a.lance");
        assert_eq!(named.to_string(), "corrupt: data/a.lance: bad footer");
        assert!(!named.names_no_object());
        let inner = Error::corrupt("bad footer").at("data/exact.lance", Some(3..9));
        let kept = inner.naming("data/dataset.lance");
        assert_eq!(
            kept.to_string(),
            "corrupt: data/exact.lance [bytes 3..9]: bad footer"
        );
        let unsupported = Error::unsupported("FSST v9").naming("f.lance");
        assert_eq!(unsupported.to_string(), "unsupported: f.lance: FSST v9");
        let invalid = Error::InvalidArgument("bad --rows".into()).naming("f.lance");
        assert_eq!(invalid.to_string(), "invalid argument: bad --rows");
        assert!(Error::corrupt("x").names_no_object());
        assert!(Error::unsupported("x").names_no_object());
    }

    #[test]
    fn with_source_keeps_the_upstream_error_and_the_message() {
        let upstream = std::io::Error::other("zstd: unexpected end");
        let err = Error::corrupt(format!("zstd frame is invalid: {upstream}"))
            .with_source(upstream)
            .at("f.lance", None);
        assert_eq!(
            err.to_string(),
            "corrupt: f.lance: zstd frame is invalid: zstd: unexpected end"
        );
        let source = err.source().expect("a source");
        assert_eq!(source.to_string(), "zstd: unexpected end");
        let cloned = err.clone();
        assert!(cloned.source().is_some(), "the source survives a clone");
        let unsupported = Error::unsupported("x").with_source(std::io::Error::other("y"));
        assert_eq!(
            unsupported.source().map(|s| s.to_string()),
            Some("y".into())
        );
        let invalid = Error::InvalidArgument("x".into()).with_source(std::io::Error::other("y"));
        assert!(
            invalid.source().is_none(),
            "variants without a source slot are unchanged"
        );
    }
}
