//! `lakeseek inspect` of a legacy v1 file: the same report as for v2 files, with one
//! "column" per field id that owns pages and one page per batch.

use arrow_schema::DataType;

use super::decode::{fixed_width, Width};
use super::read::LegacyFileReader;
use crate::lance::inspect::{ColumnInspection, FieldInspection, FileInspection, PageInspection};
use crate::lance::schema::LanceField;

/// The report of a legacy file.
pub(crate) fn inspect(reader: &LegacyFileReader) -> FileInspection {
    let file = reader.file();
    let mut fields = Vec::new();
    let mut columns = Vec::new();
    walk(
        reader,
        &reader.schema().fields,
        "",
        &mut fields,
        &mut columns,
    );
    FileInspection {
        path: reader.path().to_string(),
        version: format!("0.{} (legacy v1)", file.footer.minor_version),
        object_size: file.object_size,
        metadata_bytes: file.object_size - file.page_table_start(),
        num_rows: reader.num_rows(),
        fields,
        columns,
    }
}

fn walk(
    reader: &LegacyFileReader,
    list: &[LanceField],
    prefix: &str,
    fields: &mut Vec<FieldInspection>,
    columns: &mut Vec<ColumnInspection>,
) {
    for f in list {
        let path = if prefix.is_empty() {
            f.name.clone()
        } else {
            format!("{prefix}.{}", f.name)
        };
        let id = usize::try_from(f.id).unwrap_or(0);
        let kind = page_kind(&f.data_type);
        fields.push(FieldInspection {
            path: path.clone(),
            id: f.id,
            parent_id: f.parent_id,
            logical_type: f.logical_type.clone(),
            arrow_type: f.data_type.to_string(),
            nullable: f.nullable,
            columns: if kind.is_some() { id..id + 1 } else { id..id },
        });
        if let Some((layout, width)) = kind {
            columns.push(column(reader, f, &path, layout, width));
        }
        walk(reader, &f.children, &path, fields, columns);
    }
}

/// Page layout name and value width of a field that owns pages.
fn page_kind(t: &DataType) -> Option<(&'static str, Option<Width>)> {
    match t {
        DataType::Struct(_) | DataType::Null => None,
        DataType::List(_) => Some(("legacy list offsets (i32)", Some(Width::Bytes(4)))),
        DataType::LargeList(_) => Some(("legacy list offsets (i64)", Some(Width::Bytes(8)))),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary => {
            Some(("legacy var-binary", Some(Width::Bytes(8))))
        }
        DataType::Dictionary(key, _) => Some(("legacy dictionary keys", fixed_width(key))),
        t => Some(("legacy plain", fixed_width(t))),
    }
}

fn column(
    reader: &LegacyFileReader,
    f: &LanceField,
    path: &str,
    layout: &str,
    width: Option<Width>,
) -> ColumnInspection {
    let file = reader.file();
    let extra = u64::from(layout == "legacy var-binary");
    let pages: Vec<PageInspection> = (0..file.metadata.num_batches())
        .filter_map(|b| {
            let page = file.page_table.page(f.id, b)?;
            let bytes = width
                .and_then(|w| w.byte_range(&(0..page.length + extra)))
                .map_or(0, |r| r.end);
            Some(PageInspection {
                rows: file.metadata.batch_rows(b),
                layout: layout.to_string(),
                compression: "none".into(),
                codecs: Vec::new(),
                buffers: std::iter::once(page.position..page.position.saturating_add(bytes))
                    .collect(),
                bytes,
                structural_plan: None,
            })
        })
        .collect();
    ColumnInspection {
        index: usize::try_from(f.id).unwrap_or(0),
        field: path.to_string(),
        rows: reader.num_rows(),
        bytes: pages.iter().map(|p| p.bytes).sum(),
        metadata_bytes: 0,
        pages,
    }
}
