//! [`LanceFile::inspect`]: what a Lance file holds — version, sizes, the field tree and, per
//! physical column, its pages with layout, compression, codecs and buffers, and (when asked)
//! the size of each 2.3 sparse page's structural plan — as a serializable value
//! (`lakeseek inspect FILE` prints it).

use super::file::LanceFile;
use crate::error::Result;
use crate::io::IoStats;
use crate::lance::data_file::DataFileReader;
use crate::lance::page::{PageInit, PageLayout};
use crate::lance::reader::LanceFileReader;

pub use crate::lance::inspect::{
    ColumnInspection, FieldInspection, FileInspection, PageInspection, PlanInspection,
};
pub use crate::lance::page::sparse_plan::PlanLayerSummary;

impl LanceFile {
    /// Describe the file: version, object and metadata sizes, fields (pre-order, with the
    /// physical columns each spans) and, per physical column, its pages. Needs no request
    /// (the metadata was read by the open). With `plans`, also decode the structural plan of
    /// every 2.3 sparse page (one wave reading their structural buffers) and report its size
    /// next to the equivalent dense rep/def levels; legacy (v1) files have no such pages.
    ///
    /// ```
    /// # #[tokio::main] async fn main() -> lakeseek::Result<()> {
    /// use lakeseek::LanceFile;
    ///
    /// let file = LanceFile::builder(&lakeseek::sample::data_file_url())
    ///     .object_store(lakeseek::sample::store().await?)
    ///     .open()
    ///     .await?;
    /// let inspection = file.inspect(true).await?;
    /// assert_eq!(inspection.version, "2.3");
    /// assert_eq!(inspection.num_rows, file.num_rows());
    /// let sparse = inspection.columns.iter().flat_map(|c| &c.pages);
    /// assert!(sparse.filter_map(|p| p.structural_plan.as_ref()).count() > 0);
    /// # Ok(()) }
    /// ```
    pub async fn inspect(&self, plans: bool) -> Result<FileInspection> {
        match self.data_file_reader() {
            DataFileReader::V2(reader) => {
                let mut inspection = reader.inspect();
                if plans {
                    add_structural_plans(reader, &mut inspection, self.stats_handle())
                        .await
                        .map_err(|e| self.named(e))?;
                }
                Ok(inspection)
            }
            DataFileReader::Legacy(reader) => Ok(crate::lance::legacy::inspect::inspect(reader)),
        }
    }
}

/// Decode every sparse page's structural plan (one wave) and attach its size report.
async fn add_structural_plans(
    reader: &LanceFileReader,
    inspection: &mut FileInspection,
    stats: &IoStats,
) -> Result<()> {
    let mut pages = Vec::new();
    for (column, info) in reader.metadata().columns.iter().enumerate() {
        for (page, p) in info.pages.iter().enumerate() {
            if matches!(p.layout, PageLayout::Sparse(_)) {
                pages.push((column, page));
            }
        }
    }
    let inits = reader.page_inits(&pages, stats).await?;
    for ((column, page), init) in pages.iter().zip(inits) {
        if let (PageInit::Sparse(sparse), Some(target)) = (
            init.as_ref(),
            inspection
                .columns
                .get_mut(*column)
                .and_then(|c| c.pages.get_mut(*page)),
        ) {
            target.structural_plan = Some(PlanInspection::of(&sparse.plan));
        }
    }
    Ok(())
}
