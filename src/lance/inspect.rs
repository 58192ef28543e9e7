//! What `lakeseek inspect` shows about a Lance file: version, sizes, the field tree and,
//! per physical column, its pages with layout, compression tree(s), codecs and buffers.

use std::collections::HashMap;
use std::ops::Range;

use object_store::path::Path;

use crate::lance::file::FileMetadata;
use crate::lance::page::sparse_plan::{PlanLayerSummary, SparseStructuralPlan};
use crate::lance::schema::LanceField;

/// `inspect` data of a file.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FileInspection {
    /// Object path.
    pub path: String,
    /// File version, e.g. `"2.2"`.
    pub version: String,
    /// Object size in bytes.
    pub object_size: u64,
    /// Bytes of the metadata region (schema, column metadata, tables, footer).
    pub metadata_bytes: u64,
    /// Top-level rows.
    pub num_rows: u64,
    /// Fields in depth-first pre-order.
    pub fields: Vec<FieldInspection>,
    /// Physical columns.
    pub columns: Vec<ColumnInspection>,
}

/// One schema field.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FieldInspection {
    /// Dotted path from the top-level field.
    pub path: String,
    /// Field id.
    pub id: i32,
    /// Parent id (-1 for top level).
    pub parent_id: i32,
    /// Lance logical type.
    pub logical_type: String,
    /// Arrow type.
    pub arrow_type: String,
    /// Nullable.
    pub nullable: bool,
    /// Physical columns of the field and its children.
    pub columns: Range<usize>,
}

/// One physical column.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ColumnInspection {
    /// Column index.
    pub index: usize,
    /// Dotted path of the leaf field that owns it.
    pub field: String,
    /// Top-level rows.
    pub rows: u64,
    /// Bytes of all page buffers.
    pub bytes: u64,
    /// Bytes of the column's metadata protobuf.
    pub metadata_bytes: u64,
    /// Pages.
    pub pages: Vec<PageInspection>,
}

/// One page.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PageInspection {
    /// Top-level rows of the page.
    pub rows: Range<u64>,
    /// Layout name (`mini-block`, `full-zip`, `constant`, `all-null`, `sparse(..)`).
    pub layout: String,
    /// Compression tree(s).
    pub compression: String,
    /// Codec names used (for statistics).
    pub codecs: Vec<String>,
    /// Buffer byte ranges.
    pub buffers: Vec<Range<u64>>,
    /// Total buffer bytes.
    pub bytes: u64,
    /// The decoded structural plan of a 2.3 sparse page (`inspect --plans` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structural_plan: Option<PlanInspection>,
}

/// Size report of a sparse page's `SparseStructuralPlan`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PlanInspection {
    /// Heap bytes of the decoded plan (what the page cache holds for the structure).
    pub plan_bytes: u64,
    /// Leaf slots of the page.
    pub leaf_slots: u64,
    /// Entries of the equivalent dense rep/def levels (one per leaf slot plus one per empty
    /// or null list).
    pub dense_level_entries: u64,
    /// Bytes of those dense levels decoded as u16 repetition + u16 definition levels.
    pub dense_level_bytes: u64,
    /// Layers, outer → inner.
    pub layers: Vec<PlanLayerSummary>,
}

impl PlanInspection {
    /// Report on `plan`.
    pub fn of(plan: &SparseStructuralPlan) -> Self {
        let entries = plan.dense_level_entries();
        Self {
            plan_bytes: plan.deep_size() as u64,
            leaf_slots: plan.leaf_slots(),
            dense_level_entries: entries,
            dense_level_bytes: entries.saturating_mul(4),
            layers: plan.summary(),
        }
    }
}

fn field_paths(
    fields: &[LanceField],
    prefix: &str,
    out: &mut Vec<FieldInspection>,
    leaves: &mut HashMap<usize, String>,
) {
    for f in fields {
        let path = if prefix.is_empty() {
            f.name.clone()
        } else {
            format!("{prefix}.{}", f.name)
        };
        out.push(FieldInspection {
            path: path.clone(),
            id: f.id,
            parent_id: f.parent_id,
            logical_type: f.logical_type.clone(),
            arrow_type: f.data_type.to_string(),
            nullable: f.nullable,
            columns: f.first_column..f.first_column + f.num_columns,
        });
        if f.num_columns == 1 {
            leaves.insert(f.first_column, path.clone());
        }
        field_paths(&f.children, &path, out, leaves);
    }
}

/// [`field_paths`] of a 2.0 file: every field owns a column, in pre-order (a struct's or
/// list's own column holds its header or offsets).
fn field_paths_v2_0(
    metadata: &FileMetadata,
    fields: &[LanceField],
    prefix: &str,
    next_column: &mut usize,
    out: &mut Vec<FieldInspection>,
    leaves: &mut HashMap<usize, String>,
) {
    for f in fields {
        let path = if prefix.is_empty() {
            f.name.clone()
        } else {
            format!("{prefix}.{}", f.name)
        };
        let first = *next_column;
        let count = crate::lance::v2_0::fields::column_count(f, metadata, first);
        out.push(FieldInspection {
            path: path.clone(),
            id: f.id,
            parent_id: f.parent_id,
            logical_type: f.logical_type.clone(),
            arrow_type: f.data_type.to_string(),
            nullable: f.nullable,
            columns: first..first + count,
        });
        leaves.insert(first, path.clone());
        *next_column += 1;
        if count > 1 && !f.children.is_empty() {
            field_paths_v2_0(metadata, &f.children, &path, next_column, out, leaves);
        } else if count > 1 {
            // a string stored as a list of bytes (footer 0.3): offsets, then bytes
            leaves.insert(first + 1, format!("{path}.bytes"));
        }
        *next_column = first + count;
    }
}

/// Build the `inspect` data from decoded metadata.
pub(crate) fn inspect(path: &Path, metadata: &FileMetadata) -> FileInspection {
    let mut fields = Vec::new();
    let mut leaves = HashMap::new();
    if metadata.version == crate::lance::version::FileVersion::V2_0 {
        field_paths_v2_0(
            metadata,
            &metadata.schema.fields,
            "",
            &mut 0,
            &mut fields,
            &mut leaves,
        );
    } else {
        field_paths(&metadata.schema.fields, "", &mut fields, &mut leaves);
    }
    let columns = metadata
        .columns
        .iter()
        .enumerate()
        .map(|(index, c)| {
            let pages: Vec<PageInspection> = c
                .pages
                .iter()
                .map(|p| PageInspection {
                    rows: p.rows.clone(),
                    layout: p.layout.name(),
                    compression: p.layout.describe_compression(),
                    codecs: p.layout.codec_names(),
                    buffers: p.buffers.clone(),
                    bytes: p.buffers.iter().map(|b| b.end - b.start).sum(),
                    structural_plan: None,
                })
                .collect();
            ColumnInspection {
                index,
                field: leaves.get(&index).cloned().unwrap_or_default(),
                rows: c.pages.last().map_or(0, |p| p.rows.end),
                bytes: pages.iter().map(|p| p.bytes).sum(),
                metadata_bytes: c.metadata_range.end - c.metadata_range.start,
                pages,
            }
        })
        .collect();
    FileInspection {
        path: path.to_string(),
        version: metadata.version.to_string(),
        object_size: metadata.object_size,
        metadata_bytes: metadata.object_size - metadata.metadata_start,
        num_rows: metadata.num_rows,
        fields,
        columns,
    }
}
