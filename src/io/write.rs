//! The write path: the only code in lakeseek that writes objects.
//!
//! * [`ObjectWriter::put`] writes (or replaces) an object;
//! * [`ObjectWriter::put_if_absent`] creates an object only if none exists at the path
//!   (object_store's `PutMode::Create`: `If-None-Match: *` on S3, a hard link on local
//!   disks, a generation precondition on GCS), the primitive a safe commit needs: of two
//!   writers creating the same manifest, exactly one succeeds and the other learns it;
//! * [`ObjectWriter::upload_file`] copies a local file to an object (multipart above
//!   [`MULTIPART_THRESHOLD`]).
//!
//! Writes are not counted in [`crate::io::IoStats`], which measures reads.

use std::sync::Arc;

use bytes::Bytes;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, WriteMultipart};

use crate::error::{Error, Result};

/// Objects larger than this are uploaded in parts.
pub(crate) const MULTIPART_THRESHOLD: u64 = 16 << 20;

/// Part size of multipart uploads.
const PART_BYTES: usize = 8 << 20;

/// Result of [`ObjectWriter::put_if_absent`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PutOutcome {
    /// The object was created.
    Created,
    /// An object already existed at the path; nothing was written.
    AlreadyExists,
}

/// Writes objects of one store.
#[derive(Debug, Clone)]
pub(crate) struct ObjectWriter {
    store: Arc<dyn ObjectStore>,
}

fn store_error(path: &Path, source: object_store::Error) -> Error {
    Error::Store {
        path: path.to_string(),
        range: None,
        source: std::sync::Arc::new(source),
    }
}

impl ObjectWriter {
    /// A writer over `store`.
    pub(crate) fn new(store: Arc<dyn ObjectStore>) -> Self {
        Self { store }
    }

    /// Write `bytes` at `path`, replacing any object there.
    pub(crate) async fn put(&self, path: &Path, bytes: Bytes) -> Result<()> {
        self.store
            .put(path, PutPayload::from(bytes))
            .await
            .map(|_| ())
            .map_err(|e| store_error(path, e))
    }

    /// Create `path` with `bytes` unless an object exists there (never overwrites).
    pub(crate) async fn put_if_absent(&self, path: &Path, bytes: Bytes) -> Result<PutOutcome> {
        let options = PutOptions {
            mode: PutMode::Create,
            ..Default::default()
        };
        match self
            .store
            .put_opts(path, PutPayload::from(bytes), options)
            .await
        {
            Ok(_) => Ok(PutOutcome::Created),
            Err(object_store::Error::AlreadyExists { .. })
            | Err(object_store::Error::Precondition { .. }) => Ok(PutOutcome::AlreadyExists),
            Err(e) => Err(store_error(path, e)),
        }
    }

    /// Copy the local file `local` to `path`; returns its size.
    pub(crate) async fn upload_file(&self, local: &std::path::Path, path: &Path) -> Result<u64> {
        let size = std::fs::metadata(local)?.len();
        if size <= MULTIPART_THRESHOLD {
            let bytes = std::fs::read(local)?;
            self.put(path, bytes.into()).await?;
            return Ok(size);
        }
        let upload = self
            .store
            .put_multipart(path)
            .await
            .map_err(|e| store_error(path, e))?;
        let mut writer = WriteMultipart::new_with_chunk_size(upload, PART_BYTES);
        let mut file = std::fs::File::open(local)?;
        let mut buffer = vec![0u8; PART_BYTES];
        loop {
            let n = std::io::Read::read(&mut file, &mut buffer)?;
            if n == 0 {
                break;
            }
            writer
                .wait_for_capacity(4)
                .await
                .map_err(|e| store_error(path, e))?;
            writer.write(&buffer[..n]);
        }
        writer.finish().await.map_err(|e| store_error(path, e))?;
        Ok(size)
    }

    /// Delete `path`, ignoring failures (clean-up of objects nothing refers to).
    pub(crate) async fn delete_quietly(&self, path: &Path) {
        let _ = self.store.delete(path).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::memory::InMemory;

    #[tokio::test]
    async fn put_if_absent_never_overwrites() {
        for store in [
            Arc::new(InMemory::new()) as Arc<dyn ObjectStore>,
            Arc::new(
                object_store::local::LocalFileSystem::new_with_prefix(
                    tempfile::tempdir().unwrap().keep(),
                )
                .unwrap(),
            ),
        ] {
            let w = ObjectWriter::new(Arc::clone(&store));
            let p = Path::from("v/1.manifest");
            assert_eq!(
                w.put_if_absent(&p, Bytes::from_static(b"a")).await.unwrap(),
                PutOutcome::Created
            );
            assert_eq!(
                w.put_if_absent(&p, Bytes::from_static(b"b")).await.unwrap(),
                PutOutcome::AlreadyExists
            );
            let got = store.get(&p).await.unwrap().bytes().await.unwrap();
            assert_eq!(&got[..], b"a");
        }
    }

    #[tokio::test]
    async fn upload_file_in_parts() {
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let w = ObjectWriter::new(Arc::clone(&store));
        let dir = tempfile::tempdir().unwrap();
        let local = dir.path().join("f");
        let data: Vec<u8> = (0..(MULTIPART_THRESHOLD + 12345))
            .map(|i| i as u8)
            .collect();
        std::fs::write(&local, &data).unwrap();
        let p = Path::from("big");
        assert_eq!(w.upload_file(&local, &p).await.unwrap(), data.len() as u64);
        let got = store.get(&p).await.unwrap().bytes().await.unwrap();
        assert_eq!(got.len(), data.len());
        assert!(got[..] == data[..]);
    }
}
