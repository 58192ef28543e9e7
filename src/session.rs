//! [`Session`]: every cache lakeseek keeps, within one byte budget, shared by everything
//! opened with it.

use std::sync::Arc;

use crate::lance::dataset::DatasetSession;

/// Default byte budget of a [`Session`] (256 MiB).
pub const DEFAULT_SESSION_BUDGET: u64 = 256 << 20;

/// The caches of lakeseek — decoded manifests and deletion vectors, Lance file metadata,
/// page inits (chunk tables, dictionaries) and 2.3 structural plans, index page lookups and
/// index pages — held within one byte budget.
///
/// Cheap to clone (clones share the caches), `Send + Sync`: create one per process (or per
/// tenant) and open every dataset and file with it, so a warm query reuses what an earlier
/// one decoded.
///
/// ```
/// use lakeseek::Session;
/// let session = Session::with_budget(64 << 20);
/// let shared = session.clone(); // same caches
/// assert_eq!(shared.budget_bytes(), 64 << 20);
/// assert_eq!(Session::default().budget_bytes(), lakeseek::DEFAULT_SESSION_BUDGET);
/// ```
#[derive(Debug, Clone)]
pub struct Session {
    datasets: Arc<DatasetSession>,
    budget_bytes: u64,
}

impl Session {
    /// A session with the default budget ([`DEFAULT_SESSION_BUDGET`]).
    pub fn new() -> Self {
        Self::with_budget(DEFAULT_SESSION_BUDGET)
    }

    /// A session whose caches together hold about `bytes` of decoded data. Index pages are
    /// cached too (a warm repeat of a lookup then needs no request).
    pub fn with_budget(bytes: u64) -> Self {
        Self {
            datasets: Arc::new(DatasetSession::with_budget(bytes)),
            budget_bytes: bytes,
        }
    }

    /// The byte budget.
    pub fn budget_bytes(&self) -> u64 {
        self.budget_bytes
    }

    /// The dataset-level caches (crate-internal handle).
    pub(crate) fn dataset_session(&self) -> &Arc<DatasetSession> {
        &self.datasets
    }
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}
