//! The storage behind [`S3TestServer`](super::S3TestServer): s3s-fs, plus one fidelity fix.
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

use std::path::PathBuf;

use s3s::dto::*;
use s3s::{S3Request, S3Response, S3Result, S3};

/// s3s-fs with the suffix-range fix; every other operation is delegated unchanged.
pub(super) struct FixedFileSystem {
    inner: s3s_fs::FileSystem,
    root: PathBuf,
    conditional_puts: tokio::sync::Mutex<()>,
}

impl FixedFileSystem {
    /// s3s-fs over `root` (buckets are its sub-directories).
    pub(super) fn new(root: PathBuf) -> Self {
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
    list_objects_v2(ListObjectsV2Input) -> ListObjectsV2Output;
    create_multipart_upload(CreateMultipartUploadInput) -> CreateMultipartUploadOutput;
    upload_part(UploadPartInput) -> UploadPartOutput;
    upload_part_copy(UploadPartCopyInput) -> UploadPartCopyOutput;
    list_parts(ListPartsInput) -> ListPartsOutput;
    complete_multipart_upload(CompleteMultipartUploadInput) -> CompleteMultipartUploadOutput;
    abort_multipart_upload(AbortMultipartUploadInput) -> AbortMultipartUploadOutput;
}
