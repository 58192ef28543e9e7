//! Bundled sample data (feature `sample-data`, on by default): a small Lance dataset and an
//! ecpfs index, written by the real writers (pylance 14.0.2, zarr-python) with
//! `assets/demo/gen_demo.py`, for `lakeseek demo`, the examples and these docs.
//!
//! * `frames.lance`: 40,000 rows in 4 fragments, Lance 2.3: `detections`
//!   (`list<struct<label, confidence, area, x, y, track_id>>`, 2.3 sparse pages, mostly
//!   empty lists), `camera` (int32) and `key` (string, unique, BTree index `key_idx`), plus
//!   a list element index `det_idx` on `detections` keyed by (label, confidence).
//! * `vectors.lance`: 2,000 float32 vectors of dimension 16 (`id` int64, `vec`) in one
//!   fragment, IVF_PQ index `vec_idx` (4 partitions, 4 sub-vectors of 8 bits, l2), for
//!   [`Dataset::nearest`](crate::Dataset::nearest).
//! * `ecp_index`: an ecpfs index of 2,000 float32 vectors of dimension 16 (L2, 2 levels).
//!
//! ```
//! # #[tokio::main] async fn main() -> lakeseek::Result<()> {
//! let store = lakeseek::sample::store().await?;
//! let dataset = lakeseek::Dataset::builder(lakeseek::sample::DATASET_URL)
//!     .object_store(store)
//!     .open()
//!     .await?;
//! assert!(dataset.index_names().contains(&"key_idx".to_string()));
//! # Ok(()) }
//! ```

use std::sync::Arc;

use bytes::Bytes;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

use crate::error::{Error, Result};

/// Every bundled file: path relative to `assets/demo/`, contents.
pub const FILES: &[(&str, &[u8])] = include!("../assets/demo/files.rs");

/// URL of the sample dataset inside [`store`].
pub const DATASET_URL: &str = "memory:///sample/frames.lance";

/// URL of the sample vector dataset (IVF_PQ index on `vec`) inside [`store`].
pub const VECTORS_URL: &str = "memory:///sample/vectors.lance";

/// URL of the sample ecpfs index inside [`store`].
pub const ECP_INDEX_URL: &str = "memory:///sample/ecp_index";

/// URL of one data file of the sample dataset (a 2.3 Lance file) inside [`store`].
pub fn data_file_url() -> String {
    let data = FILES
        .iter()
        .map(|(path, _)| *path)
        .find(|path| path.starts_with("frames.lance/data/"))
        .unwrap_or("frames.lance/data/missing.lance");
    format!("memory:///sample/{data}")
}

/// A new in-memory object store holding the sample data under `sample/`.
pub async fn store() -> Result<Arc<dyn ObjectStore>> {
    let store = InMemory::new();
    for (path, bytes) in FILES {
        let location = Path::from(format!("sample/{path}"));
        let payload = PutPayload::from(Bytes::from_static(bytes));
        store
            .put(&location, payload)
            .await
            .map_err(|e| Error::Store {
                path: location.to_string(),
                range: None,
                source: std::sync::Arc::new(e),
            })?;
    }
    Ok(Arc::new(store))
}
