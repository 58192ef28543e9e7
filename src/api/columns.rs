//! [`Dataset::column_info`] and [`Dataset::column_arrow_type`]: what one top-level column of
//! a dataset version is, before reading it.

use arrow_schema::DataType;

use super::dataset::Dataset;
use crate::error::{Error, Result};
use crate::lance::dataset::schema::SchemaField;

/// One top-level column of a dataset version ([`Dataset::column_info`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ColumnInfo {
    /// Column name.
    pub name: String,
    /// Lance logical type (`"int64"`, `"string"`, `"list.struct"`, …).
    pub logical_type: String,
    /// Whether the column has child fields in the schema (structs, lists).
    pub has_children: bool,
}

impl Dataset {
    /// The top-level column `name` (`None` when the version has none of that name).
    ///
    /// ```
    /// # #[tokio::main] async fn main() -> lakeseek::Result<()> {
    /// # let dataset = lakeseek::Dataset::builder(lakeseek::sample::DATASET_URL)
    /// #     .object_store(lakeseek::sample::store().await?).open().await?;
    /// let key = dataset.column_info("key").expect("a key column");
    /// assert_eq!((key.logical_type.as_str(), key.has_children), ("string", false));
    /// assert!(dataset.column_info("detections").unwrap().has_children);
    /// assert!(dataset.column_info("nope").is_none());
    /// assert_eq!(dataset.column_arrow_type("key")?, arrow_schema::DataType::Utf8);
    /// # Ok(()) }
    /// ```
    pub fn column_info(&self, name: &str) -> Option<ColumnInfo> {
        let schema = &self.version_handle().manifest().schema;
        let field = top_level_field(self, name)?;
        Some(ColumnInfo {
            name: field.name.clone(),
            logical_type: field.logical_type.clone(),
            has_children: schema.has_children(field.id),
        })
    }

    /// The Arrow type [`Dataset::take`] returns the top-level column `name` as: an
    /// [`Error::InvalidArgument`] when there is no such column, the conversion's error when
    /// lakeseek cannot read its type.
    pub fn column_arrow_type(&self, name: &str) -> Result<DataType> {
        let field = top_level_field(self, name)
            .ok_or_else(|| Error::InvalidArgument(format!("no column named {name:?}")))?;
        self.version_handle().manifest().schema.arrow_type(field.id)
    }
}

/// The top-level schema field `name` of `dataset`'s version.
fn top_level_field<'a>(dataset: &'a Dataset, name: &str) -> Option<&'a SchemaField> {
    let schema = &dataset.version_handle().manifest().schema;
    schema
        .fields
        .iter()
        .find(|f| f.parent_id == -1 && f.name == name)
}
