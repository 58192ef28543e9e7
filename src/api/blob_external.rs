//! External blobs (blob v2 descriptor kind 3): bytes in an object outside the dataset, named
//! by URI. The object is opened with the dataset's storage options (and with the store the
//! caller handed in when the URI names the dataset's own bucket); a URI of another scheme
//! than the dataset's is refused, so a dataset cannot make lakeseek read local files or
//! another cloud's objects. A descriptor of position 0 and size 0 is the whole object: its
//! size comes from one HEAD of it.

use std::collections::HashMap;
use std::sync::Arc;

use object_store::ObjectStoreExt;

use super::open::OpenParams;
use crate::error::{Error, Result};
use crate::io::{open_url_with, FetchOptions, OpenOptions, OpenedUrl, RangeFetcher};
use crate::lance::dataset::blobs::BlobRange;

/// The scheme of `url` (`file` for a plain path).
fn scheme_of(url: &str) -> &str {
    url.split_once("://").map_or("file", |(s, _)| s)
}

/// `scheme://authority` of `url`, when it has an authority (a bucket, a host).
fn bucket_of(url: &str) -> Option<&str> {
    let (scheme, rest) = url.split_once("://")?;
    let end = rest.find('/').unwrap_or(rest.len());
    (end > 0).then(|| &url[..scheme.len() + 3 + end])
}

/// Open the store of external blob `uri` of the dataset opened with `params`.
fn open_external(params: &OpenParams, uri: &str) -> Result<OpenedUrl> {
    let (ours, theirs) = (scheme_of(&params.url), scheme_of(uri));
    if !ours.eq_ignore_ascii_case(theirs) {
        return Err(Error::unsupported(format!(
            "external blob {uri:?}: its scheme {theirs:?} differs from the dataset's \
             ({ours:?}); lakeseek reads external blobs only from the dataset's kind of store"
        )));
    }
    let same_bucket = bucket_of(uri).is_some() && bucket_of(uri) == bucket_of(&params.url);
    let options = OpenOptions {
        storage_options: params.storage_options.clone(),
        object_store: params.object_store.clone().filter(|_| same_bucket),
        ..OpenOptions::default()
    };
    open_url_with(uri, &options).map_err(|e| e.context(format!("external blob {uri:?}")))
}

/// Each of `ranges` with the fetcher that reads it: the dataset's `fetcher`, or for an
/// external blob a fetcher over its object's store, its path there, and for a whole-object
/// blob its range from the object's size (objects opened once per call).
pub(crate) async fn resolve(
    params: &OpenParams,
    fetcher: &RangeFetcher,
    ranges: Vec<Option<BlobRange>>,
) -> Result<Vec<Option<(RangeFetcher, BlobRange)>>> {
    let mut opened: HashMap<String, (RangeFetcher, OpenedUrl, Option<u64>)> = HashMap::new();
    let mut out = Vec::with_capacity(ranges.len());
    for range in ranges {
        let Some(mut blob) = range else {
            out.push(None);
            continue;
        };
        let Some(external) = blob.external.clone() else {
            out.push(Some((fetcher.clone(), blob)));
            continue;
        };
        if !opened.contains_key(&external.uri) {
            let o = open_external(params, &external.uri)?;
            let f = RangeFetcher::new(Arc::clone(&o.source), FetchOptions::default());
            opened.insert(external.uri.clone(), (f, o, None));
        }
        let Some((f, o, size)) = opened.get_mut(&external.uri) else {
            return Err(Error::corrupt("internal: external blob store not opened"));
        };
        if external.whole && size.is_none() {
            let meta = o.store.head(&o.path).await.map_err(|e| Error::Store {
                path: external.uri.clone(),
                range: None,
                source: Arc::new(e),
            })?;
            *size = Some(meta.size);
        }
        blob.path = o.path.clone();
        if external.whole {
            let size = size.unwrap_or(0);
            blob.range = 0..size;
            blob.object_size = Some(size);
        }
        out.push(Some((f.clone(), blob)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes_and_buckets() {
        assert_eq!(scheme_of("/data/t.lance"), "file");
        assert_eq!(scheme_of("s3://b/t.lance"), "s3");
        assert_eq!(bucket_of("s3://b/k/o.bin"), Some("s3://b"));
        assert_eq!(bucket_of("s3://b"), Some("s3://b"));
        assert_eq!(bucket_of("file:///tmp/x"), None);
        assert_eq!(bucket_of("/tmp/x"), None);
    }
}
