//! Listing objects under a prefix, lazily: callers stop as soon as they have what they need,
//! so on stores that list in lexical order (S3, GCS, Azure) finding the first name costs
//! one LIST request whatever the number of objects.
//!
//! A listing goes through the store's admission control (taking a LIST's weight of its
//! limit) and lakeseek's retry loop ([`crate::io::retry`]), like every GET: a LIST that times
//! out or is throttled tells the limit, and its retry waits for a slot again and spends a
//! token of the store's retry budget. A retry resumes after the last object visited (stores
//! that list in lexical order), so the visitor never sees an object twice.

use std::fmt::Debug;
use std::sync::Arc;

use async_trait::async_trait;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreScheme};

use crate::error::{Error, Result};
use crate::io::adaptive_limit::RequestKind;
use crate::io::admission::Admission;
use crate::io::retry::{with_admitted_retries, ListNotResumable, ReadSpan, RetryPolicy};
use crate::io::stats::IoStats;

/// Objects a LIST request returns per page on S3 (and the default on GCS/Azure); used to
/// count requests while a listing stream is consumed.
pub(crate) const LIST_PAGE_SIZE: usize = 1000;

/// One listed object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ListedObject {
    /// Full object path.
    pub path: Path,
    /// Size in bytes.
    pub size: u64,
    /// ETag when the backend reports one.
    pub etag: Option<String>,
}

/// What a [`ObjectLister::list`] visitor wants next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListControl {
    /// Keep listing.
    Continue,
    /// Stop: no further LIST pages are requested.
    Stop,
}

/// Lazy listing of the objects under a prefix.
#[async_trait]
pub(crate) trait ObjectLister: Send + Sync + Debug {
    /// Visit the objects directly or indirectly under `prefix` in the store's order until the
    /// visitor says [`ListControl::Stop`]. Requests are counted in `stats` (one per
    /// [`LIST_PAGE_SIZE`] objects started).
    async fn list(
        &self,
        prefix: &Path,
        stats: &IoStats,
        visit: &mut (dyn FnMut(ListedObject) -> ListControl + Send),
    ) -> Result<()>;

    /// True when the store lists names in ascending lexical (byte) order (S3 general
    /// purpose buckets, GCS, Azure, in-memory), false when the order is arbitrary (local
    /// file systems, HTTP/WebDAV).
    fn lexically_ordered(&self) -> bool;
}

/// [`ObjectLister`] over any `object_store` implementation.
#[derive(Debug, Clone)]
pub(crate) struct ObjectStoreLister {
    store: Arc<dyn ObjectStore>,
    ordered: bool,
    admission: Option<Arc<Admission>>,
    retry: RetryPolicy,
}

impl ObjectStoreLister {
    /// A lister over `store`; `ordered` says whether it lists in lexical order.
    pub(crate) fn new(store: Arc<dyn ObjectStore>, ordered: bool) -> Self {
        Self {
            store,
            ordered,
            admission: None,
            retry: RetryPolicy::default(),
        }
    }

    /// Retry failed LISTs with `policy` (the store's, from [`crate::io::open_url`]; else
    /// [`RetryPolicy::default`]).
    pub(crate) fn with_retry_policy(mut self, policy: Option<RetryPolicy>) -> Self {
        self.retry = policy.unwrap_or_default();
        self
    }

    /// Wait for a slot of `admission` before listing (a listing's pages are requested one
    /// after another, so one slot covers them), and before each retry, like every GET of the
    /// store.
    pub(crate) fn with_admission(mut self, admission: Option<Arc<Admission>>) -> Self {
        self.admission = admission;
        self
    }

    /// A lister for a store opened from a URL of the given scheme.
    pub(crate) fn for_scheme(store: Arc<dyn ObjectStore>, scheme: &ObjectStoreScheme) -> Self {
        let ordered = matches!(
            scheme,
            ObjectStoreScheme::AmazonS3
                | ObjectStoreScheme::GoogleCloudStorage
                | ObjectStoreScheme::MicrosoftAzure
                | ObjectStoreScheme::Memory
        );
        Self::new(store, ordered)
    }
}

#[async_trait]
impl ObjectLister for ObjectStoreLister {
    async fn list(
        &self,
        prefix: &Path,
        stats: &IoStats,
        visit: &mut (dyn FnMut(ListedObject) -> ListControl + Send),
    ) -> Result<()> {
        // Each attempt takes a LIST's weight of the store's limit and tells the limit how it
        // ended; a retry resumes after the last object visited.
        let resume = futures::lock::Mutex::new(Resume { visit, last: None });
        let attempt = || async {
            let mut resume = resume.lock().await;
            self.list_pages(prefix, stats, &mut resume).await
        };
        with_admitted_retries(
            &self.retry,
            self.admission.as_ref(),
            RequestKind::List,
            stats,
            prefix.as_ref(),
            ReadSpan::List,
            attempt,
        )
        .await
    }

    fn lexically_ordered(&self) -> bool {
        self.ordered
    }
}

/// Where a listing is: the visitor, and the last object it saw (a retry resumes after it).
struct Resume<'a> {
    visit: &'a mut (dyn FnMut(ListedObject) -> ListControl + Send),
    last: Option<Path>,
}

impl ObjectStoreLister {
    /// One attempt at the listing (pages requested one after another), from the start or
    /// after `resume.last`, counted in `stats`.
    async fn list_pages(
        &self,
        prefix: &Path,
        stats: &IoStats,
        resume: &mut Resume<'_>,
    ) -> Result<()> {
        let mut stream = match &resume.last {
            Some(last) if self.ordered => self.store.list_with_offset(Some(prefix), last),
            _ => self.store.list(Some(prefix)),
        };
        let resumed = resume.last.is_some();
        let mut seen = 0usize;
        let mut guard = Some(stats.start_request());
        while let Some(item) = stream.next().await {
            let meta = match item {
                Ok(meta) => meta,
                Err(e) => return Err(self.list_error(prefix, e, resumed || seen > 0)),
            };
            seen += 1;
            if seen % LIST_PAGE_SIZE == 1 && seen > 1 {
                drop(guard.take());
                guard = Some(stats.start_request());
            }
            resume.last = Some(meta.location.clone());
            let listed = ListedObject {
                path: meta.location,
                size: meta.size,
                etag: meta.e_tag,
            };
            if (resume.visit)(listed) == ListControl::Stop {
                break;
            }
        }
        drop(guard);
        Ok(())
    }

    /// The error of a failed LIST page; final (not retried) when objects were already
    /// visited and the store has no listing order to resume from.
    fn list_error(&self, prefix: &Path, e: object_store::Error, visited: bool) -> Error {
        let source = if visited && !self.ordered {
            Arc::new(object_store::Error::Generic {
                store: "lakeseek",
                source: Box::new(ListNotResumable(Arc::new(e))),
            })
        } else {
            Arc::new(e)
        };
        Error::Store {
            path: prefix.to_string(),
            range: None,
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use object_store::memory::InMemory;
    use object_store::{ObjectStoreExt, PutPayload};

    #[tokio::test]
    async fn stops_early_and_counts_requests() {
        let store = Arc::new(InMemory::new());
        for name in ["p/c", "p/a", "p/b", "q/z"] {
            store
                .put(
                    &Path::from(name),
                    PutPayload::from(Bytes::from_static(b"xy")),
                )
                .await
                .unwrap();
        }
        let lister = ObjectStoreLister::for_scheme(store, &ObjectStoreScheme::Memory);
        assert!(lister.lexically_ordered());
        let stats = IoStats::new();
        let mut names = Vec::new();
        lister
            .list(&Path::from("p"), &stats, &mut |o| {
                names.push(o.path.to_string());
                ListControl::Continue
            })
            .await
            .unwrap();
        assert_eq!(names, vec!["p/a", "p/b", "p/c"]);
        let mut first = None;
        lister
            .list(&Path::from("p"), &stats, &mut |o| {
                first = Some(o);
                ListControl::Stop
            })
            .await
            .unwrap();
        let first = first.unwrap();
        assert_eq!(first.path.as_ref(), "p/a");
        assert_eq!(first.size, 2);
        assert_eq!(stats.snapshot().requests, 2);
        assert_eq!(stats.snapshot().round_trips, 2);
    }
}

#[cfg(test)]
#[path = "list_tests.rs"]
mod retry_tests;
