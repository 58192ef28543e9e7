//! The one way to open an ecpfs index: [`EcpIndex::open`].

use crate::ecp::{EcpIndex, EcpStore, OpenOptions};
use crate::error::Result;
use crate::io::store::redact_url;
use crate::io::{open_url_with, FetchOptions, OpenOptions as StoreOptions, RangeFetcher};
use crate::session::Session;

impl EcpIndex {
    /// Open the ecpfs index at `url` (`s3://bucket/prefix/index`, `gs://…`, a local path,
    /// `memory://…` with [`EcpStore::object_store`]): one wave of concurrent GETs for
    /// `info/*`, the representatives' metadata and the root node. Nodes are kept in the
    /// session's node cache (its share of the session's budget, shared by every index opened
    /// with the session; [`OpenOptions::node_cache_bytes`] sizes the cache of an index opened
    /// without a session).
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
        let cache = Some(session.ecp_node_cache());
        Self::open_with_cache(fetcher, writer, opened.path, url, options, cache)
            .await
            .map_err(|e| e.naming(&redact_url(url)))
    }
}
