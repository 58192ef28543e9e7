//! Retries of listings: through admission control, the adaptive limit and the retry budget,
//! resuming after the last object visited.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    ObjectStoreExt, PutMultipartOptions, PutOptions, PutPayload, PutResult,
};

use super::*;
use crate::io::adaptive_limit::LimitConfig;
use crate::io::retry::RetryPolicy;

/// An in-memory store whose first listing yields `good` objects and then fails with a
/// timeout (as object_store's S3 client reports one); later listings work.
#[derive(Debug)]
struct FlakyList {
    inner: InMemory,
    good: usize,
    /// Listings started.
    lists: AtomicUsize,
    /// Offsets listings resumed after.
    offsets: Mutex<Vec<String>>,
}

impl fmt::Display for FlakyList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FlakyList")
    }
}

fn timed_out() -> object_store::Error {
    object_store::Error::Generic {
        store: "S3",
        source: Box::new(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "list timed out",
        )),
    }
}

impl FlakyList {
    async fn with(names: &[&str], good: usize) -> Arc<Self> {
        let inner = InMemory::new();
        for name in names {
            let payload = PutPayload::from(Bytes::from_static(b"xy"));
            inner.put(&Path::from(*name), payload).await.unwrap();
        }
        Arc::new(Self {
            inner,
            good,
            lists: AtomicUsize::new(0),
            offsets: Mutex::new(Vec::new()),
        })
    }

    fn listed(
        &self,
        stream: BoxStream<'static, object_store::Result<ObjectMeta>>,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        if self.lists.fetch_add(1, Ordering::SeqCst) > 0 {
            return stream;
        }
        stream
            .take(self.good)
            .chain(futures::stream::once(async { Err(timed_out()) }))
            .boxed()
    }
}

#[async_trait]
impl ObjectStore for FlakyList {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        self.inner.get_opts(location, options).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.listed(self.inner.list(prefix))
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.offsets.lock().unwrap().push(offset.to_string());
        self.listed(self.inner.list_with_offset(prefix, offset))
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

/// lakeseek owns the retries (the store's client does not retry), fast backoff.
fn own_retries() -> Option<RetryPolicy> {
    Some(RetryPolicy {
        init_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(2),
        store_retries: false,
        ..RetryPolicy::default()
    })
}

const NAMES: [&str; 4] = ["p/a", "p/b", "p/c", "p/d"];

async fn list_all(lister: &ObjectStoreLister, stats: &IoStats) -> Result<Vec<String>> {
    let mut names = Vec::new();
    lister
        .list(&Path::from("p"), stats, &mut |o| {
            names.push(o.path.to_string());
            ListControl::Continue
        })
        .await?;
    Ok(names)
}

#[tokio::test]
async fn a_timed_out_list_is_retried_through_admission_and_the_limit_sees_it() {
    let store = FlakyList::with(&NAMES, 0).await;
    let admission = Admission::with_limit(LimitConfig::on_loss(256), u64::MAX);
    let lister = ObjectStoreLister::new(Arc::clone(&store) as Arc<dyn ObjectStore>, true)
        .with_admission(Some(Arc::clone(&admission)))
        .with_retry_policy(own_retries());
    let stats = IoStats::new();
    let names = list_all(&lister, &stats).await.unwrap();
    assert_eq!(names, NAMES);
    assert_eq!(store.lists.load(Ordering::SeqCst), 2, "one retry");
    let snap = admission.snapshot();
    assert_eq!(snap.admitted, 2, "the retry was admitted again: {snap:?}");
    assert_eq!(
        snap.limit.decreases, 1,
        "the limit saw the timeout: {snap:?}"
    );
    assert_eq!(snap.limit.limit, 128, "{snap:?}");
    assert_eq!(stats.snapshot().retries, 1);
    assert_eq!(stats.snapshot().requests, 2);
    // The limit was lowered since the failed LIST was sent: its retry is free.
    assert_eq!(admission.retry_budget().available(), 20.0);
}

#[tokio::test]
async fn under_a_pinned_limit_a_list_retry_spends_a_retry_budget_token() {
    let store = FlakyList::with(&NAMES, 0).await;
    let admission = Admission::new(256, u64::MAX);
    let lister = ObjectStoreLister::new(Arc::clone(&store) as Arc<dyn ObjectStore>, true)
        .with_admission(Some(Arc::clone(&admission)))
        .with_retry_policy(own_retries());
    let stats = IoStats::new();
    assert_eq!(list_all(&lister, &stats).await.unwrap(), NAMES);
    assert_eq!(admission.snapshot().admitted, 2);
    assert_eq!(admission.snapshot().limit.decreases, 0, "pinned");
    let left = admission.retry_budget().available();
    assert!(
        (left - 19.1).abs() < 1e-9,
        "one token spent, 0.1 earned: {left}"
    );
}

#[tokio::test]
async fn an_empty_retry_budget_makes_a_timed_out_list_final() {
    let store = FlakyList::with(&NAMES, 0).await;
    let admission = Admission::new(256, u64::MAX);
    while admission.retry_budget().try_spend() {}
    let lister = ObjectStoreLister::new(Arc::clone(&store) as Arc<dyn ObjectStore>, true)
        .with_admission(Some(admission))
        .with_retry_policy(own_retries());
    let err = list_all(&lister, &IoStats::new()).await.unwrap_err();
    assert!(err.to_string().contains("list timed out"), "{err}");
    assert_eq!(store.lists.load(Ordering::SeqCst), 1, "no retry");
}

#[tokio::test]
async fn a_listing_cut_part_way_resumes_after_the_last_object_seen() {
    let store = FlakyList::with(&NAMES, 2).await;
    let lister = ObjectStoreLister::new(Arc::clone(&store) as Arc<dyn ObjectStore>, true)
        .with_retry_policy(own_retries());
    let stats = IoStats::new();
    assert_eq!(list_all(&lister, &stats).await.unwrap(), NAMES, "each once");
    assert_eq!(*store.offsets.lock().unwrap(), vec!["p/b".to_string()]);
    assert_eq!(stats.snapshot().retries, 1);
}

#[tokio::test]
async fn without_a_listing_order_a_listing_cut_part_way_is_not_retried() {
    let store = FlakyList::with(&NAMES, 2).await;
    let lister = ObjectStoreLister::new(Arc::clone(&store) as Arc<dyn ObjectStore>, false)
        .with_retry_policy(own_retries());
    let err = list_all(&lister, &IoStats::new()).await.unwrap_err();
    assert!(err.to_string().contains("not resumable"), "{err}");
    assert_eq!(store.lists.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_store_that_retries_on_its_own_is_not_retried_again() {
    // A store handed in by the caller (default policy): an S3 error has been retried by
    // its own client already.
    let store = FlakyList::with(&NAMES, 0).await;
    let lister = ObjectStoreLister::new(Arc::clone(&store) as Arc<dyn ObjectStore>, true);
    assert!(list_all(&lister, &IoStats::new()).await.is_err());
    assert_eq!(store.lists.load(Ordering::SeqCst), 1);
}
