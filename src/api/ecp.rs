//! The one way to open an ecpfs index: [`EcpIndex::open`].

use std::sync::Arc;

use object_store::ObjectStore;

use crate::ecp::{EcpIndex, OpenOptions};
use crate::error::Result;
use crate::io::{open_url_with, FetchOptions, OpenOptions as StoreOptions, RangeFetcher};
use crate::session::Session;

/// Where an ecpfs index lives besides its URL: storage options, or a ready-made store.
#[derive(Debug, Clone, Default)]
pub struct EcpStore {
    /// `key=value` storage options (object_store builder keys, lakeseek I/O options).
    pub storage_options: Vec<(String, String)>,
    /// Read (and, when writable, save queries) through this store instead of building one
    /// from the URL.
    pub object_store: Option<Arc<dyn ObjectStore>>,
}

impl EcpIndex {
    /// Open the ecpfs index at `url` (`s3://bucket/prefix/index`, `gs://…`, a local path,
    /// `memory://…` with [`EcpStore::object_store`]): one wave of concurrent GETs for
    /// `info/*`, the representatives' metadata and the root node. The node cache holds up to
    /// [`OpenOptions::node_cache_bytes`], at most the session's budget.
    ///
    /// ```
    /// # #[tokio::main] async fn main() -> lakeseek::Result<()> {
    /// use lakeseek::ecp::{EcpIndex, EcpStore, OpenOptions, QueryOptions};
    /// use lakeseek::{IoStats, Session};
    ///
    /// let store = EcpStore { object_store: Some(lakeseek::sample::store().await?), ..Default::default() };
    /// let index = EcpIndex::open(lakeseek::sample::ECP_INDEX_URL, store, OpenOptions::default(), &Session::default()).await?;
    /// let query = vec![0.5_f32; index.info().dim];
    /// let mut search = index.query(query, QueryOptions::default())?;
    /// let first = search.next_k(10).await?; // visits only the nodes it needs
    /// let next = search.next_k(10).await?;  // the next 10, continuing the same search
    /// assert_eq!((first.ids.len(), next.ids.len()), (10, 10));
    /// assert!(first.scores.windows(2).all(|w| w[0] <= w[1]));
    /// # Ok(()) }
    /// ```
    pub async fn open(
        url: &str,
        store: EcpStore,
        options: OpenOptions,
        session: &Session,
    ) -> Result<EcpIndex> {
        let store_options = StoreOptions {
            storage_options: store.storage_options,
            object_store: store.object_store,
            ..StoreOptions::default()
        };
        let opened = open_url_with(url, &store_options)?;
        let admission = session.admission().for_opened(&opened);
        let fetcher = RangeFetcher::new(opened.source, FetchOptions::default())
            .with_admission(Some(admission));
        let writer = options.writable.then_some(opened.store);
        let options = OpenOptions {
            node_cache_bytes: options.node_cache_bytes.min(session.budget_bytes()),
            ..options
        };
        Self::open_with(fetcher, writer, opened.path, url, options).await
    }
}
