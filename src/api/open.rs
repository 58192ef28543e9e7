//! What every builder takes before opening something: the URL, storage options, an optional
//! ready-made object store, the session and the stats handle.

use std::sync::Arc;

use object_store::ObjectStore;

use crate::error::Result;
use crate::io::{open_url_with, IoStats, OpenOptions, OpenedUrl};
use crate::session::Session;

/// The storage-option setters every builder over [`OpenParams`] (in a field `params`) has,
/// written once.
macro_rules! storage_option_setters {
    () => {
        /// Add one storage option (`aws_endpoint`, `allow_http`, `coalesce_gap`, …: any
        /// object_store builder key or lakeseek I/O option).
        pub fn storage_option(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
            self.params.storage_options.push((key.into(), value.into()));
            self
        }

        /// Add storage options.
        pub fn storage_options<K: Into<String>, V: Into<String>>(
            mut self,
            options: impl IntoIterator<Item = (K, V)>,
        ) -> Self {
            self.params.add_storage_options(options);
            self
        }
    };
}
pub(crate) use storage_option_setters;

/// Builder state shared by [`DatasetBuilder`](super::DatasetBuilder),
/// [`LanceFileBuilder`](super::LanceFileBuilder) and [`EcpIndexBuilder`](super::EcpIndexBuilder).
#[derive(Debug, Clone, Default)]
pub(crate) struct OpenParams {
    pub(crate) url: String,
    pub(crate) storage_options: Vec<(String, String)>,
    pub(crate) object_store: Option<Arc<dyn ObjectStore>>,
    /// With `object_store`: the same store without object_store's retries (an
    /// [`OpenedStore`](super::OpenedStore)'s), read and listed through.
    pub(crate) read_store: Option<Arc<dyn ObjectStore>>,
    pub(crate) session: Option<Session>,
    pub(crate) stats: IoStats,
}

impl OpenParams {
    pub(crate) fn new(url: &str) -> Self {
        Self {
            url: url.to_string(),
            ..Self::default()
        }
    }

    /// Add storage options (the builders' `storage_options`).
    pub(crate) fn add_storage_options<K: Into<String>, V: Into<String>>(
        &mut self,
        options: impl IntoIterator<Item = (K, V)>,
    ) {
        let pairs = options.into_iter().map(|(k, v)| (k.into(), v.into()));
        self.storage_options.extend(pairs);
    }

    /// The store and path the URL names (or the given store at the URL's path).
    pub(crate) fn open_url(&self) -> Result<OpenedUrl> {
        let options = OpenOptions {
            storage_options: self.storage_options.clone(),
            object_store: self.object_store.clone(),
            read_store: self.read_store.clone(),
            ..OpenOptions::default()
        };
        open_url_with(&self.url, &options)
    }

    /// The session to open with (a new default one when none was given).
    pub(crate) fn session(&self) -> Session {
        self.session.clone().unwrap_or_default()
    }
}
