//! [`Dataset::describe`]: what a dataset version holds — its manifest, fragments with their
//! data files and file versions, deletions, indices and schema — as a serializable value
//! (`lakeseek inspect DATASET` prints it).

use serde::Serialize;

use super::dataset::Dataset;
use super::describe_vector::describe_vectors;
pub use super::describe_vector::VectorIndexDescription;
use crate::error::Result;
use crate::index::fts::search::describe_inverted;
use crate::lance::dataset::manifest::{Fragment, IndexSegment, Manifest};
use crate::lance::dataset::DatasetVersion;

/// A description of one dataset version (see [`Dataset::describe`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct DatasetDescription {
    /// The version described.
    pub version: u64,
    /// When the version was committed (RFC 3339, UTC), if the manifest records it.
    pub timestamp: Option<String>,
    /// The dataset's data storage version (`"2.0"`, `"2.1"`, …; `"legacy"` for v1 files).
    pub storage_version: String,
    /// The library that wrote the manifest (`"lance 0.39.0"`), if recorded.
    pub writer: Option<String>,
    /// Rows of the version (physical rows minus deleted rows).
    pub num_rows: u64,
    /// Fragments, in manifest order.
    pub fragments: Vec<FragmentDescription>,
    /// Indices, one entry per name.
    pub indices: Vec<IndexDescription>,
    /// Schema fields in pre-order, with their ids.
    pub schema: Vec<FieldDescription>,
}

/// One fragment of a [`DatasetDescription`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct FragmentDescription {
    /// Fragment id (the high 32 bits of its row addresses).
    pub id: u64,
    /// Rows written to the fragment (deleted rows included).
    pub physical_rows: u64,
    /// Deleted rows (0 when the fragment has no deletion file).
    pub deleted_rows: u64,
    /// Data files.
    pub files: Vec<DataFileDescription>,
}

/// One data file of a [`FragmentDescription`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct DataFileDescription {
    /// Path relative to the dataset's `data/` directory.
    pub path: String,
    /// Lance file version (`"2.0"`, `"2.1"`, …, `"legacy"`).
    pub file_version: String,
    /// Field ids stored in the file.
    pub fields: Vec<i32>,
    /// Size in bytes, when the manifest records it.
    pub size_bytes: Option<u64>,
}

/// One index of a [`DatasetDescription`] (all segments sharing a name).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct IndexDescription {
    /// Index name.
    pub name: String,
    /// Kind: `"BTREE"`, `"BITMAP"`, `"LABEL_LIST"`, `"ZONEMAP"`, `"BLOOMFILTER"`,
    /// `"LIST_ELEMENT"`, `"VECTOR"`, …, or the details type name of another kind.
    pub kind: String,
    /// Whether the kind was inferred from the index's files (old releases wrote no
    /// `index_details`).
    pub kind_inferred: bool,
    /// Indexed columns (dotted paths).
    pub columns: Vec<String>,
    /// Fragments covered by some segment, ascending.
    pub fragments: Vec<u32>,
    /// Segments.
    pub segments: Vec<IndexSegmentDescription>,
    /// An INVERTED (full-text) index's first segment: its tokenizer params (base tokenizer,
    /// language, stemming, stop words, lower case, ASCII folding, positions, ...), format
    /// version and partitions (documents, tokens); `{"error": ...}` when it does not open.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_text: Option<serde_json::Value>,
    /// A vector index's type, metric, partitions, quantizer and size (`None` for other
    /// kinds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vector: Option<VectorIndexDescription>,
}

/// One segment of an [`IndexDescription`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct IndexSegmentDescription {
    /// Segment uuid (its directory under `_indices/`).
    pub uuid: String,
    /// Dataset version the segment was built at.
    pub dataset_version: u64,
    /// Fragments the segment covers (`None` when the manifest does not record them).
    pub fragments: Option<Vec<u32>>,
    /// Files the manifest lists for the segment (older releases list none).
    pub files: Vec<String>,
}

/// One schema field of a [`DatasetDescription`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct FieldDescription {
    /// Field id.
    pub id: i32,
    /// Parent field id (-1 for top-level fields).
    pub parent_id: i32,
    /// Dotted path.
    pub path: String,
    /// Lance logical type (`"int64"`, `"string"`, `"list.struct"`, …).
    pub logical_type: String,
    /// Whether the field may hold nulls.
    pub nullable: bool,
}

impl Dataset {
    /// Describe this version: storage version, fragments with their data files (and each
    /// file's version) and deletions, indices and their coverage, and the schema with field
    /// ids. Reads the deletion files whose row counts the manifest does not record (one
    /// wave, cached) and opens each vector index's first segment (type, metric,
    /// partitions, quantizer; cached in the session); everything else comes from the
    /// manifest already read.
    ///
    /// ```
    /// # #[tokio::main] async fn main() -> lakeseek::Result<()> {
    /// use lakeseek::Dataset;
    ///
    /// let dataset = Dataset::builder(lakeseek::sample::DATASET_URL)
    ///     .object_store(lakeseek::sample::store().await?)
    ///     .open()
    ///     .await?;
    /// let description = dataset.describe().await?;
    /// assert_eq!(description.fragments.len(), 4);
    /// assert_eq!(description.num_rows, 40_000);
    /// assert!(description.indices.iter().any(|i| i.kind == "BTREE"));
    /// # Ok(()) }
    /// ```
    pub async fn describe(&self) -> Result<DatasetDescription> {
        let version = self.version_handle();
        let manifest = version.manifest();
        let fragments = describe_fragments(version, self)
            .await
            .map_err(|e| self.named(e))?;
        let mut indices = describe_indices(manifest);
        let names: Vec<&str> = indices.iter().map(|i| i.name.as_str()).collect();
        let vectors = describe_vectors(version, &names, self.stats_handle()).await;
        for (index, vector) in indices.iter_mut().zip(vectors) {
            index.vector = vector;
        }
        let num_rows = fragments
            .iter()
            .map(|f| f.physical_rows.saturating_sub(f.deleted_rows))
            .sum();
        for index in &mut indices {
            let first = manifest.indices.iter().find(|s| s.name == index.name);
            if let Some(segment) = first {
                index.full_text = describe_inverted(version, segment, self.stats_handle()).await;
            }
        }
        Ok(DatasetDescription {
            version: manifest.version,
            timestamp: manifest.timestamp.clone(),
            storage_version: manifest.data_storage_version.clone(),
            writer: manifest.writer.clone(),
            num_rows,
            fragments,
            indices,
            schema: describe_schema(manifest),
        })
    }
}

async fn describe_fragments(
    version: &DatasetVersion,
    dataset: &Dataset,
) -> Result<Vec<FragmentDescription>> {
    let manifest = version.manifest();
    let uncounted: Vec<&Fragment> = manifest
        .fragments
        .iter()
        .filter(|f| f.deletion.as_ref().is_some_and(|d| d.num_deleted_rows == 0))
        .collect();
    let vectors = version
        .deletion_vectors(&uncounted, dataset.stats_handle())
        .await?;
    let deleted = |f: &Fragment| match &f.deletion {
        None => 0,
        Some(d) if d.num_deleted_rows > 0 => d.num_deleted_rows,
        Some(_) => vectors.get(&f.id).map_or(0, |v| v.0.len()),
    };
    Ok(manifest
        .fragments
        .iter()
        .map(|f| FragmentDescription {
            id: f.id,
            physical_rows: f.physical_rows,
            deleted_rows: deleted(f),
            files: f
                .files
                .iter()
                .map(|d| DataFileDescription {
                    path: d.path.clone(),
                    file_version: file_version_name(d.file_version),
                    fields: d.fields.clone(),
                    size_bytes: d.size_bytes,
                })
                .collect(),
        })
        .collect())
}

/// `"legacy"` for v1 files (major 0, minor < 3), else `"major.minor"` (`(0, 3)` is 2.0).
fn file_version_name((major, minor): (u32, u32)) -> String {
    match (major, minor) {
        (0, 3) => "2.0".to_string(),
        (0, _) => "legacy".to_string(),
        (major, minor) => format!("{major}.{minor}"),
    }
}

fn describe_indices(manifest: &Manifest) -> Vec<IndexDescription> {
    let mut out: Vec<IndexDescription> = Vec::new();
    for segment in &manifest.indices {
        let described = describe_segment(segment);
        match out.iter_mut().find(|i| i.name == segment.name) {
            Some(index) => index.segments.push(described),
            None => out.push(IndexDescription {
                name: segment.name.clone(),
                kind: kind_name(segment),
                kind_inferred: segment.details_inferred,
                columns: segment
                    .fields
                    .iter()
                    .map(|&id| manifest.schema.path_of(id))
                    .collect(),
                fragments: Vec::new(),
                segments: vec![described],
                full_text: None,
                vector: None,
            }),
        }
    }
    for index in &mut out {
        let mut covered: Vec<u32> = index
            .segments
            .iter()
            .flat_map(|s| s.fragments.iter().flatten().copied())
            .collect();
        covered.sort_unstable();
        covered.dedup();
        index.fragments = covered;
    }
    out
}

fn describe_segment(segment: &IndexSegment) -> IndexSegmentDescription {
    IndexSegmentDescription {
        uuid: segment.uuid_string(),
        dataset_version: segment.dataset_version,
        fragments: segment.fragment_bitmap.as_ref().map(|b| b.iter().collect()),
        files: segment.files.iter().map(|f| f.path.clone()).collect(),
    }
}

/// The kind of an index segment from its details type name.
fn kind_name(segment: &IndexSegment) -> String {
    let Some(type_name) = segment.type_name() else {
        return "UNKNOWN".to_string();
    };
    let known = [
        ("BTreeIndexDetails", "BTREE"),
        ("BitmapIndexDetails", "BITMAP"),
        ("LabelListIndexDetails", "LABEL_LIST"),
        ("ZoneMapIndexDetails", "ZONEMAP"),
        ("BloomFilterIndexDetails", "BLOOMFILTER"),
        ("ListElementIndexDetails", "LIST_ELEMENT"),
        ("VectorIndexDetails", "VECTOR"),
        ("InvertedIndexDetails", "INVERTED"),
        ("NGramIndexDetails", "NGRAM"),
    ];
    let short = type_name.rsplit('.').next().unwrap_or(type_name);
    known
        .iter()
        .find(|(details, _)| *details == short)
        .map_or_else(|| short.to_string(), |(_, kind)| kind.to_string())
}

fn describe_schema(manifest: &Manifest) -> Vec<FieldDescription> {
    manifest
        .schema
        .fields
        .iter()
        .map(|f| FieldDescription {
            id: f.id,
            parent_id: f.parent_id,
            path: manifest.schema.path_of(f.id),
            logical_type: f.logical_type.clone(),
            nullable: f.nullable,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_versions_are_named_as_lance_names_them() {
        assert_eq!(file_version_name((0, 1)), "legacy");
        assert_eq!(file_version_name((0, 2)), "legacy");
        assert_eq!(file_version_name((0, 3)), "2.0");
        assert_eq!(file_version_name((2, 0)), "2.0");
        assert_eq!(file_version_name((2, 3)), "2.3");
    }
}
