//! Reading a `list<struct>` column for `any_element(col, 'predicate')`: the call typed
//! against the column's element fields ([`type_call`]), the element fields it needs read
//! for some rows of a fragment ([`read_lists`], assembled by [`stitch`] from the data files
//! that hold them) and the call evaluated on them ([`evaluate_rows`], through the one
//! evaluator [`crate::index::sql::any_element`]).
//!
//! The filter engine evaluates `any_element` leaves on data with it (fragments an index does
//! not cover, candidate rows, calls no index answers); the list element index plans with
//! [`type_call`] and builds with [`open_list_files`].

pub(crate) mod stitch;

use std::collections::BTreeSet;

use crate::error::{Error, Result};
use crate::index::sql::any_element::evaluate_any_element;
use crate::index::sql::bind::{BoundPredicate, ElementField};
use crate::index::sql::call::AnyElementCall;
use crate::io::IoStats;
use crate::lance::dataset::{DatasetVersion, Fragment};
use crate::lance::dataset::{Schema, SchemaField};
use crate::lance::reader::RowSelection;
use stitch::{stitch_list_parts, ListPart, WantedField};

/// An `any_element` call typed against its column: the list column it reads and its
/// predicate typed against the element fields.
#[derive(Debug, Clone)]
pub(crate) struct TypedCall {
    /// Field id of the list column.
    pub(crate) column_id: i32,
    /// The typed predicate.
    pub(crate) bound: BoundPredicate,
    /// Element fields the predicate reads.
    pub(crate) wanted: Vec<WantedField>,
}

/// The fields whose parent is field `id`, in schema order.
fn children_of(schema: &Schema, id: i32) -> impl Iterator<Item = &SchemaField> {
    schema
        .fields
        .iter()
        .filter(move |f| f.parent_id == id && f.id != id)
}

/// Resolve the call's column (a list of struct) and type its predicate against the
/// element fields.
pub(crate) fn type_call(schema: &Schema, call: &AnyElementCall) -> Result<TypedCall> {
    let column = schema.field_by_path(&call.column).ok_or_else(|| {
        Error::InvalidArgument(format!("any_element: no column named {:?}", call.column))
    })?;
    let items: Vec<_> = children_of(schema, column.id).collect();
    let item = match (column.logical_type.as_str(), items.as_slice()) {
        ("list" | "list.struct" | "large_list" | "large_list.struct", [item])
            if item.logical_type == "struct" =>
        {
            item.id
        }
        (t, _) => {
            return Err(Error::InvalidArgument(format!(
                "any_element: column {:?} has type {t}, not a list of struct",
                call.column
            )))
        }
    };
    let element_fields: Vec<ElementField> = children_of(schema, item)
        .map(|f| ElementField::new(f.id, &f.name, &f.logical_type))
        .collect();
    let bound = BoundPredicate::parse(&call.predicate, &element_fields)?;
    let wanted = bound
        .fields
        .iter()
        .map(|f| WantedField {
            id: f.id,
            name: f.name.clone(),
            data_type: f.data_type.clone(),
        })
        .collect();
    Ok(TypedCall {
        column_id: column.id,
        bound,
        wanted,
    })
}

/// One data file holding (part of) the list column.
pub(crate) struct ListFile {
    /// The open data file.
    pub(crate) reader: crate::lance::data_file::DataFileReader,
    /// Position of the list column among the file's top-level fields.
    pub(crate) field_index: usize,
    /// Lance field ids of the element struct's children in this file.
    pub(crate) child_ids: Vec<i32>,
}

/// Open the data files of `fragment` needed to read the `wanted` element fields of the
/// list column (at least one holding the list structure), in one wave.
pub(crate) async fn open_list_files(
    dataset: &DatasetVersion,
    fragment: &Fragment,
    column_id: i32,
    wanted: &[WantedField],
    stats: &IoStats,
) -> Result<Vec<ListFile>> {
    let chosen = files_to_read(dataset, fragment, column_id, wanted);
    let opens = chosen.iter().map(|d| async move {
        let (reader, field_index) = dataset
            .open_data_field(fragment, d, column_id, stats)
            .await?;
        let field = &reader.schema().fields[field_index];
        let child_ids = match field.children.as_slice() {
            [item] => item.children.iter().map(|c| c.id).collect(),
            _ => {
                return Err(Error::corrupt(format!(
                    "field {column_id} is not a list of struct in this file"
                ))
                .at(reader.path().as_ref(), None))
            }
        };
        Ok(ListFile {
            reader,
            field_index,
            child_ids,
        })
    });
    futures::future::try_join_all(opens).await
}

/// The data files of `fragment` that hold the `wanted` element fields (one holding the
/// list structure when none does).
fn files_to_read<'a>(
    dataset: &DatasetVersion,
    fragment: &'a Fragment,
    column_id: i32,
    wanted: &[WantedField],
) -> Vec<&'a crate::lance::dataset::DataFile> {
    let subtree = subtree_ids(&dataset.manifest().schema, column_id);
    let holding: Vec<&crate::lance::dataset::DataFile> = fragment
        .files
        .iter()
        .filter(|d| d.fields.iter().any(|f| subtree.contains(f)))
        .collect();
    let mut chosen: Vec<&crate::lance::dataset::DataFile> = Vec::new();
    for w in wanted {
        if let Some(d) = holding.iter().find(|d| d.fields.contains(&w.id)) {
            if !chosen.iter().any(|c| c.path == d.path) {
                chosen.push(d);
            }
        }
    }
    if chosen.is_empty() {
        chosen.extend(holding.first());
    }
    chosen
}

fn subtree_ids(schema: &Schema, root: i32) -> BTreeSet<i32> {
    let mut out = BTreeSet::from([root]);
    // Pre-order: a parent precedes its children.
    for f in &schema.fields {
        if out.contains(&f.parent_id) {
            out.insert(f.id);
        }
    }
    out
}

/// The wanted element fields of `offsets` (sorted; `None`: every row) of a fragment, as one
/// list array.
pub(crate) async fn read_lists(
    dataset: &DatasetVersion,
    fragment: &Fragment,
    typed: &TypedCall,
    offsets: Option<Vec<u64>>,
    stats: &IoStats,
) -> Result<arrow_array::ArrayRef> {
    let files = open_list_files(dataset, fragment, typed.column_id, &typed.wanted, stats).await?;
    let (selection, rows) = match offsets {
        Some(o) => {
            let n = o.len();
            (RowSelection::Rows(o), n)
        }
        None => (
            RowSelection::Range(0..fragment.physical_rows),
            fragment.physical_rows as usize,
        ),
    };
    read_list_files(&files, &typed.wanted, &selection, rows, stats).await
}

/// The `wanted` element fields of the `rows` rows `selection` picks, read from `files` (all
/// at once) and stitched into one list array.
pub(crate) async fn read_list_files(
    files: &[ListFile],
    wanted: &[WantedField],
    selection: &RowSelection,
    rows: usize,
    stats: &IoStats,
) -> Result<arrow_array::ArrayRef> {
    if rows == 0 {
        return stitch_list_parts(&[], wanted, 0);
    }
    let reads = files.iter().map(|f| async move {
        let batch = f
            .reader
            .read_rows(&[f.field_index], selection, stats)
            .await?;
        Ok::<_, Error>(ListPart {
            array: std::sync::Arc::clone(batch.column(0)),
            child_ids: f.child_ids.clone(),
        })
    });
    let parts = futures::future::try_join_all(reads).await?;
    stitch_list_parts(&parts, wanted, rows)
}

/// The truth of the call (not of its `NOT`) on `offsets` (sorted, unique) of `fragment`,
/// reading only those rows' lists.
pub(crate) async fn evaluate_rows(
    dataset: &DatasetVersion,
    typed: &TypedCall,
    fragment: &Fragment,
    offsets: Vec<u64>,
    stats: &IoStats,
) -> Result<Vec<Option<bool>>> {
    let n = offsets.len();
    let selection = (n as u64 != fragment.physical_rows).then_some(offsets);
    let lists = read_lists(dataset, fragment, typed, selection, stats).await?;
    let result = evaluate_any_element(lists.as_ref(), &typed.bound)?;
    if result.len() != n {
        return Err(Error::corrupt("list read returned fewer rows than asked"));
    }
    Ok(result.iter().collect())
}
