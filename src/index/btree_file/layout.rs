//! The column layout of a BTree page-data file, decided once per file from its schema:
//! `values` + `ids` (pylance 0.26 and later), or `values` + `row_ids` (the layout pylance
//! 0.25 and earlier wrote). Both hold the sorted values and the row address of each.

use crate::error::{Error, Result};
use crate::lance::data_file::DataFileReader;

/// Logical name of the values column.
pub(crate) const VALUES: &str = "values";
/// Logical name of the row-address column.
pub(crate) const IDS: &str = "ids";
/// The row-address column name of older releases.
const ROW_IDS: &str = "row_ids";

/// Which name a page-data file gives its row-address column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PageDataLayout {
    /// `values`, `ids`.
    Ids,
    /// `values`, `row_ids`.
    RowIds,
}

impl PageDataLayout {
    /// The layout of a file whose top-level columns are `names` (`None` when it has
    /// neither `ids` nor `row_ids`, or no `values`).
    pub(crate) fn from_names<'a>(names: impl IntoIterator<Item = &'a str> + Clone) -> Option<Self> {
        let has = |n: &str| names.clone().into_iter().any(|c| c == n);
        if !has(VALUES) {
            return None;
        }
        if has(IDS) {
            Some(Self::Ids)
        } else if has(ROW_IDS) {
            Some(Self::RowIds)
        } else {
            None
        }
    }

    /// The layout of an open page-data file (`NotFound` naming the file when it has no
    /// known layout).
    pub(crate) fn of(reader: &DataFileReader) -> Result<Self> {
        let schema = reader.schema();
        let names = schema.fields.iter().map(|f| f.name.as_str());
        Self::from_names(names.clone()).ok_or_else(|| Error::NotFound {
            path: reader.path().to_string(),
            what: format!(
                "BTree page-data columns \"values\" + \"ids\" (or \"row_ids\"); the file has {:?}",
                names.collect::<Vec<_>>()
            ),
        })
    }

    /// The file's names of the logical columns `logical` ([`VALUES`], [`IDS`]).
    pub(crate) fn names<'a>(self, logical: &[&'a str]) -> Vec<&'a str> {
        logical
            .iter()
            .map(|&n| match (self, n) {
                (Self::RowIds, IDS) => ROW_IDS,
                _ => n,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_decided_by_the_column_names() {
        assert_eq!(
            PageDataLayout::from_names(["values", "ids"]),
            Some(PageDataLayout::Ids)
        );
        assert_eq!(
            PageDataLayout::from_names(["row_ids", "values"]),
            Some(PageDataLayout::RowIds)
        );
        // Both present: the current name wins.
        assert_eq!(
            PageDataLayout::from_names(["values", "row_ids", "ids"]),
            Some(PageDataLayout::Ids)
        );
        assert_eq!(PageDataLayout::from_names(["values"]), None);
        assert_eq!(PageDataLayout::from_names(["ids", "row_ids"]), None);
        assert_eq!(PageDataLayout::from_names(Vec::<&str>::new()), None);
    }

    #[test]
    fn logical_names_map_to_the_file_names() {
        assert_eq!(
            PageDataLayout::RowIds.names(&[VALUES, IDS]),
            vec!["values", "row_ids"]
        );
        assert_eq!(PageDataLayout::Ids.names(&[IDS]), vec!["ids"]);
    }
}
