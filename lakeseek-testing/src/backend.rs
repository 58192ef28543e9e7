//! The storage behind [`S3Server`](crate::S3Server): s3s-fs, plus fixes where it answers unlike S3.
//!
//! s3s-fs 0.14.1 answers a suffix range longer than the object (`Range: bytes=-N`, N > size)
//! with `500 InternalError` (it seeks before the start of the file). Real S3 and GCS return
//! the whole object as `206` with `Content-Range: bytes 0-(size-1)/size`, and lakeseek relies
//! on that (a tail read with a size hint bigger than a small file). This wrapper rewrites such
//! a range to `bytes=0-` after authentication, so the response is what S3 sends.
//! It also panics (u64 underflow) on any range of an empty object; S3 answers
//! `416 InvalidRange` there, and so does this wrapper.
//!
//! s3s-fs honours `If-None-Match: *` on PUT, but checks that the object is absent before it
//! writes, without a lock: two concurrent conditional PUTs of one key can both pass the
//! check and the second overwrites the first. Real S3 decides atomically (one gets `412`).
//! This wrapper serializes conditional PUTs, so the check and the write are one step, the
//! way S3 behaves (lakeseek's commits rely on it).
//!
//! s3s-fs answers every LIST by walking the whole bucket (each directory and file through
//! tokio's blocking pool) and filtering by prefix afterwards; S3's LIST costs what it
//! returns. With a bucket of ~1,500 fixture files and 64 concurrent LISTs on a busy 2-core
//! machine, LISTs waited more than 30 s for their first byte. This wrapper lists only the
//! directory the prefix's keys live under (s3s-fs over that sub-tree, keys re-prefixed).

use std::path::PathBuf;

use s3s::dto::*;
use s3s::{S3Request, S3Response, S3Result, S3};

/// s3s-fs with the fixes above; every other operation is delegated unchanged.
pub struct FixedFileSystem {
    inner: s3s_fs::FileSystem,
    root: PathBuf,
    conditional_puts: tokio::sync::Mutex<()>,
}

impl FixedFileSystem {
    /// s3s-fs over `root` (buckets are its sub-directories).
    pub fn new(root: PathBuf) -> Self {
        let inner = s3s_fs::FileSystem::new(&root).expect("s3s-fs root");
        Self {
            inner,
            root,
            conditional_puts: tokio::sync::Mutex::new(()),
        }
    }
}

impl FixedFileSystem {
    async fn fixed_get_object(
        &self,
        mut req: S3Request<GetObjectInput>,
    ) -> S3Result<S3Response<GetObjectOutput>> {
        if let Some(range) = &req.input.range {
            let file = self.root.join(&req.input.bucket).join(&req.input.key);
            if let Ok(size) = std::fs::metadata(&file).map(|m| m.len()) {
                if size == 0 {
                    return Err(s3s::s3_error!(InvalidRange));
                }
                if matches!(range, Range::Suffix { length } if *length > size) {
                    req.input.range = Some(Range::Int {
                        first: 0,
                        last: None,
                    });
                }
            }
        }
        self.inner.get_object(req).await
    }

    /// s3s-fs's LIST over only the directory of `prefix` (up to its last `/`): the same
    /// keys, prefixes and continuation tokens as over the whole bucket.
    async fn scoped_list_objects_v2(
        &self,
        req: S3Request<ListObjectsV2Input>,
    ) -> S3Result<S3Response<ListObjectsV2Output>> {
        let prefix = req.input.prefix.clone().unwrap_or_default();
        let Some(cut) = prefix.rfind('/') else {
            return self.inner.list_objects_v2(req).await;
        };
        let base = &prefix[..=cut];
        let dir = self
            .root
            .join(&req.input.bucket)
            .join(base.trim_end_matches('/'));
        let (Some(parent), Some(leaf)) = (dir.parent(), dir.file_name().and_then(|n| n.to_str()))
        else {
            return self.inner.list_objects_v2(req).await;
        };
        // A resume point outside `base`: before it resumes at its start, after it ends.
        let scoped = |token: Option<String>| -> Result<Option<String>, ()> {
            match token {
                Some(t) if t.starts_with(base) => Ok(Some(t[base.len()..].to_string())),
                Some(t) if t.as_str() > base => Err(()),
                _ => Ok(None),
            }
        };
        let input = req.input.clone();
        let (Ok(continuation_token), Ok(start_after)) = (
            scoped(input.continuation_token.clone()),
            scoped(input.start_after.clone()),
        ) else {
            return Ok(S3Response::new(empty_listing(input)));
        };
        if !dir.is_dir() {
            return Ok(S3Response::new(empty_listing(input)));
        }
        let sub = s3s_fs::FileSystem::new(parent)
            .map_err(|e| s3s::s3_error!(InternalError, "scoped list: {e:?}"))?;
        let mut scoped_req = req;
        scoped_req.input.bucket = leaf.to_string();
        scoped_req.input.prefix = Some(prefix[base.len()..].to_string());
        scoped_req.input.continuation_token = continuation_token;
        scoped_req.input.start_after = start_after;
        let mut resp = sub.list_objects_v2(scoped_req).await?;
        let out = &mut resp.output;
        let with_base = |k: &mut Option<String>| {
            if let Some(k) = k {
                k.insert_str(0, base);
            }
        };
        for object in out.contents.iter_mut().flatten() {
            with_base(&mut object.key);
        }
        for common in out.common_prefixes.iter_mut().flatten() {
            with_base(&mut common.prefix);
        }
        with_base(&mut out.next_continuation_token);
        out.name = Some(input.bucket);
        out.prefix = input.prefix;
        out.continuation_token = input.continuation_token;
        out.start_after = input.start_after;
        Ok(resp)
    }

    async fn atomic_put_object(
        &self,
        req: S3Request<PutObjectInput>,
    ) -> S3Result<S3Response<PutObjectOutput>> {
        if req.input.if_none_match.is_some() || req.input.if_match.is_some() {
            let _one_at_a_time = self.conditional_puts.lock().await;
            return self.inner.put_object(req).await;
        }
        self.inner.put_object(req).await
    }
}

/// A LIST answer with no keys.
fn empty_listing(input: ListObjectsV2Input) -> ListObjectsV2Output {
    ListObjectsV2Output {
        key_count: Some(0),
        max_keys: Some(input.max_keys.unwrap_or(1000)),
        is_truncated: Some(false),
        continuation_token: input.continuation_token,
        delimiter: input.delimiter,
        encoding_type: input.encoding_type,
        name: Some(input.bucket),
        prefix: input.prefix,
        start_after: input.start_after,
        ..Default::default()
    }
}

/// Implements `S3` with the fixed `get_object` and the listed operations delegated.
/// (`#[async_trait]` must see the expanded methods, so the macro emits the whole impl.)
macro_rules! impl_s3_delegating {
    ($($name:ident($input:ty) -> $output:ty;)*) => {
        #[async_trait::async_trait]
        impl S3 for FixedFileSystem {
            async fn get_object(&self, req: S3Request<GetObjectInput>) -> S3Result<S3Response<GetObjectOutput>> {
                self.fixed_get_object(req).await
            }
            async fn put_object(&self, req: S3Request<PutObjectInput>) -> S3Result<S3Response<PutObjectOutput>> {
                self.atomic_put_object(req).await
            }
            async fn list_objects_v2(&self, req: S3Request<ListObjectsV2Input>) -> S3Result<S3Response<ListObjectsV2Output>> {
                self.scoped_list_objects_v2(req).await
            }
            $(
                async fn $name(&self, req: S3Request<$input>) -> S3Result<S3Response<$output>> {
                    self.inner.$name(req).await
                }
            )*
        }
    };
}

impl_s3_delegating! {
    create_bucket(CreateBucketInput) -> CreateBucketOutput;
    copy_object(CopyObjectInput) -> CopyObjectOutput;
    delete_bucket(DeleteBucketInput) -> DeleteBucketOutput;
    delete_object(DeleteObjectInput) -> DeleteObjectOutput;
    delete_objects(DeleteObjectsInput) -> DeleteObjectsOutput;
    get_bucket_location(GetBucketLocationInput) -> GetBucketLocationOutput;
    head_bucket(HeadBucketInput) -> HeadBucketOutput;
    head_object(HeadObjectInput) -> HeadObjectOutput;
    list_buckets(ListBucketsInput) -> ListBucketsOutput;
    list_objects(ListObjectsInput) -> ListObjectsOutput;
    create_multipart_upload(CreateMultipartUploadInput) -> CreateMultipartUploadOutput;
    upload_part(UploadPartInput) -> UploadPartOutput;
    upload_part_copy(UploadPartCopyInput) -> UploadPartCopyOutput;
    list_parts(ListPartsInput) -> ListPartsOutput;
    complete_multipart_upload(CompleteMultipartUploadInput) -> CompleteMultipartUploadOutput;
    abort_multipart_upload(AbortMultipartUploadInput) -> AbortMultipartUploadOutput;
}
