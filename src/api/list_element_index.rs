//! [`Dataset::list_element_index`]: build a list element index with chosen page size and
//! sort budget, commit it, and learn what was written (`lakeseek index create` prints it).

use serde::Serialize;

use super::dataset::Dataset;
use crate::error::Result;
use crate::index::list_element::build::{
    build_list_element_index, commit_list_element_index, CreatedIndex, ListElementIndexOptions,
    DEFAULT_PAGE_ROWS, DEFAULT_SORT_MEMORY_BYTES,
};

/// How to build a list element index, made by [`Dataset::list_element_index`]; run it with
/// [`ListElementIndexBuilder::create`].
///
/// ```
/// # #[tokio::main] async fn main() -> lakeseek::Result<()> {
/// use lakeseek::{Dataset, ListElementIndexBuilder};
///
/// let dataset = Dataset::builder(lakeseek::sample::DATASET_URL)
///     .object_store(lakeseek::sample::store().await?)
///     .open()
///     .await?;
/// let created = dataset
///     .list_element_index("detections", &["label"], "detections_by_label")
///     .page_rows(ListElementIndexBuilder::DEFAULT_PAGE_ROWS / 2)
///     .create()
///     .await?;
/// assert_eq!(created.read_version, dataset.version());
/// assert!(created.version > dataset.version() && created.entries > 0);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct ListElementIndexBuilder<'a> {
    dataset: &'a Dataset,
    options: ListElementIndexOptions,
}

/// A committed list element index (see [`ListElementIndexBuilder::create`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CreatedListElementIndex {
    /// Index name.
    pub name: String,
    /// Segment uuid (its directory under `_indices/`).
    pub uuid: String,
    /// The dataset version that adds the index.
    pub version: u64,
    /// That version's manifest (object path).
    pub manifest: String,
    /// The version the index was built from.
    pub read_version: u64,
    /// Index entries (elements, plus one per null list).
    pub entries: u64,
    /// BTree pages.
    pub pages: u32,
    /// Fragments the index covers.
    pub fragments: Vec<u64>,
    /// The index's files and their sizes in bytes.
    pub files: Vec<(String, u64)>,
    /// Sorted runs spilled to temporary files during the build (0: the sort fit in memory).
    pub sort_runs: usize,
    /// Commit attempts (more than 1 when concurrent commits were rebased over).
    pub commit_attempts: usize,
}

impl From<CreatedIndex> for CreatedListElementIndex {
    fn from(created: CreatedIndex) -> Self {
        Self {
            name: created.name,
            uuid: created.uuid,
            version: created.version,
            manifest: created.manifest,
            read_version: created.read_version,
            entries: created.entries,
            pages: created.pages,
            fragments: created.fragments,
            files: created.files,
            sort_runs: created.sort_runs,
            commit_attempts: created.commit_attempts,
        }
    }
}

impl Dataset {
    /// A builder for a list element index on the `list<struct>` column `column`, keyed by
    /// the element fields `keys` (direct children of the element struct, in key order), named
    /// `name`; [`Dataset::create_list_element_index`] with the default page size and sort
    /// budget is the short form.
    pub fn list_element_index(
        &self,
        column: &str,
        keys: &[&str],
        name: &str,
    ) -> ListElementIndexBuilder<'_> {
        ListElementIndexBuilder {
            dataset: self,
            options: ListElementIndexOptions::new(column, keys, name),
        }
    }
}

impl ListElementIndexBuilder<'_> {
    /// Rows per BTree page by default (lance's default zone size).
    pub const DEFAULT_PAGE_ROWS: u32 = DEFAULT_PAGE_ROWS;
    /// Memory the sort holds by default before spilling sorted runs to temporary files.
    pub const DEFAULT_SORT_MEMORY_BYTES: usize = DEFAULT_SORT_MEMORY_BYTES;

    /// Rows per BTree page (at least 1).
    pub fn page_rows(mut self, rows: u32) -> Self {
        self.options.page_rows = rows;
        self
    }

    /// Memory the sort may hold before spilling sorted runs to temporary files.
    pub fn sort_memory_bytes(mut self, bytes: usize) -> Self {
        self.options.sort_memory_bytes = bytes;
        self
    }

    /// Build the index on the dataset's version, upload its files and commit it as a new
    /// version with a put-if-absent manifest write (on a conflict the index is rebased onto
    /// the newer version, or the call fails with [`Error::Conflict`](crate::Error::Conflict)).
    /// Refused when an index named as this one exists. Reopen the dataset to query with it.
    pub async fn create(self) -> Result<CreatedListElementIndex> {
        let dataset = self.dataset;
        self.build_and_commit().await.map_err(|e| dataset.named(e))
    }

    async fn build_and_commit(self) -> Result<CreatedListElementIndex> {
        let dataset = self.dataset;
        let opened = dataset.open_params().open_url()?;
        let (version, stats) = (dataset.version_handle(), dataset.stats_handle());
        let built = build_list_element_index(&opened, version, &self.options, stats).await?;
        let created = commit_list_element_index(&opened, version, &built, stats).await?;
        Ok(created.into())
    }
}
