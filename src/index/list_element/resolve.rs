//! Resolving a list element index against the current schema (spec: "Index Details":
//! "Before using the index, a reader resolves each ID in key_field_ids against the
//! current schema ...").
//!
//! The schema is seen through [`SchemaView`], a small trait over Lance's flat field list
//! (id, parent id, name, logical type), so that any schema type can be plugged in.

use super::details::{check_details, Refusal, RefusalKind};
use super::key_encoding::{KeyEncoder, KeyType};
pub(crate) use crate::index::sql::bind::ElementField;
use crate::lance::proto::list_element::ListElementIndexDetails;

/// One field of a Lance schema, as the resolver needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FieldView<'a> {
    /// Lance field id.
    pub id: i32,
    /// Parent field id (-1 at the top level).
    pub parent_id: i32,
    /// Current (unqualified) name.
    pub name: &'a str,
    /// Lance logical type string (e.g. `string`, `float`, `list.struct`, `struct`).
    pub logical_type: &'a str,
}

/// A Lance schema as a flat list of fields with ids and parent ids.
pub(crate) trait SchemaView {
    /// The field with this id.
    fn field_by_id(&self, id: i32) -> Option<FieldView<'_>>;
    /// The direct children of a field, in schema order.
    fn children_of(&self, id: i32) -> Vec<FieldView<'_>>;
    /// The top-level-to-field path of names joined by `.` (for messages).
    fn path_of(&self, id: i32) -> String {
        let mut names = Vec::new();
        let mut current = self.field_by_id(id);
        let mut guard = 0;
        while let Some(f) = current {
            names.push(f.name.to_string());
            guard += 1;
            if f.parent_id < 0 || guard > 64 {
                break;
            }
            current = self.field_by_id(f.parent_id);
        }
        names.reverse();
        names.join(".")
    }
}

/// An owned field of a [`FlatSchema`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg(test)]
pub(crate) struct FlatField {
    /// Lance field id.
    pub id: i32,
    /// Parent field id (-1 at the top level).
    pub parent_id: i32,
    /// Current name.
    pub name: String,
    /// Lance logical type.
    pub logical_type: String,
}

#[cfg(test)]
impl FlatField {
    /// A field.
    pub(crate) fn new(id: i32, parent_id: i32, name: &str, logical_type: &str) -> Self {
        FlatField {
            id,
            parent_id,
            name: name.to_string(),
            logical_type: logical_type.to_string(),
        }
    }
}

/// A minimal owned schema (Lance's flat field list), implementing [`SchemaView`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg(test)]
pub(crate) struct FlatSchema {
    /// Fields in schema (pre-)order.
    pub fields: Vec<FlatField>,
}

#[cfg(test)]
impl SchemaView for FlatSchema {
    fn field_by_id(&self, id: i32) -> Option<FieldView<'_>> {
        self.fields.iter().find(|f| f.id == id).map(view)
    }

    fn children_of(&self, id: i32) -> Vec<FieldView<'_>> {
        self.fields
            .iter()
            .filter(|f| f.parent_id == id && f.id != id)
            .map(view)
            .collect()
    }
}

#[cfg(test)]
fn view(f: &FlatField) -> FieldView<'_> {
    FieldView {
        id: f.id,
        parent_id: f.parent_id,
        name: &f.name,
        logical_type: &f.logical_type,
    }
}

/// One resolved key.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ResolvedKey {
    /// Lance field id.
    pub field_id: i32,
    /// The field's current name (what predicates use).
    pub name: String,
    /// The name recorded when the segment was written (display only).
    pub written_name: String,
    /// Key type.
    pub key_type: KeyType,
}

/// A list element index whose details passed every check against the current schema.
#[derive(Debug)]
#[allow(dead_code)] // every resolved field is kept (Debug output, explain), not all are read
pub(crate) struct ResolvedListElementIndex {
    /// Field id of the indexed list<struct> column.
    pub column_id: i32,
    /// Current dotted path of the column.
    pub column_path: String,
    /// Whether the column is a LargeList.
    pub large_list: bool,
    /// Field id of the element struct.
    pub element_id: i32,
    /// The element struct's direct children (current names).
    pub element_fields: Vec<ElementField>,
    /// Keys in key order.
    pub keys: Vec<ResolvedKey>,
    /// Encoder for the keys.
    pub encoder: KeyEncoder,
    /// Version of the target BTree.
    pub target_index_version: u32,
}

impl ResolvedListElementIndex {
    /// Key position of a field id, if it is a key.
    #[cfg(test)]
    pub(crate) fn key_position(&self, field_id: i32) -> Option<usize> {
        self.keys.iter().position(|k| k.field_id == field_id)
    }
}

/// Resolve an index: `details` from `IndexMetadata.index_details`, `indexed_fields` =
/// `IndexMetadata.fields`, `index_version` = `IndexMetadata.index_version` (absent = 0).
/// Any failed rule gives a [`Refusal`]: the index must not be used.
pub(crate) fn resolve(
    details: &ListElementIndexDetails,
    indexed_fields: &[i32],
    index_version: i32,
    schema: &impl SchemaView,
) -> Result<ResolvedListElementIndex, Refusal> {
    if index_version != 0 {
        return Err(Refusal::new(
            RefusalKind::UnknownIndexVersion,
            format!("index_version is {index_version}; the list element index is version 0"),
        ));
    }
    let key_types = check_details(details)?;
    let &[column_id] = indexed_fields else {
        return Err(Refusal::new(
            RefusalKind::IndexedFieldCount,
            format!(
                "IndexMetadata.fields has {} entries; a list element index is built on one field",
                indexed_fields.len()
            ),
        ));
    };
    let column = schema.field_by_id(column_id).ok_or_else(|| {
        Refusal::new(
            RefusalKind::IndexedFieldMissing,
            format!("the indexed field id {column_id} is not in the schema"),
        )
    })?;
    let column_path = schema.path_of(column_id);
    let large_list = match column.logical_type {
        "list" | "list.struct" => false,
        "large_list" | "large_list.struct" => true,
        other => return Err(not_list_of_struct(&column_path, other)),
    };
    let element = match schema.children_of(column_id).as_slice() {
        [child] if child.logical_type == "struct" => *child,
        _ => return Err(not_list_of_struct(&column_path, column.logical_type)),
    };
    let element_fields: Vec<ElementField> = schema
        .children_of(element.id)
        .iter()
        .map(|f| ElementField::new(f.id, f.name, f.logical_type))
        .collect();
    let mut keys = Vec::with_capacity(key_types.len());
    for (position, key_type) in key_types.into_iter().enumerate() {
        keys.push(resolve_key(
            details,
            position,
            key_type,
            element.id,
            &column_path,
            schema,
        )?);
    }
    let encoder = KeyEncoder::new(keys.iter().map(|k| k.key_type.clone()).collect())
        .map_err(|e| Refusal::new(RefusalKind::NoKeys, e.to_string()))?;
    Ok(ResolvedListElementIndex {
        column_id,
        column_path,
        large_list,
        element_id: element.id,
        element_fields,
        keys,
        encoder,
        target_index_version: details.target_index_version,
    })
}

/// Resolve key `position` against the current schema: the field still exists, is a direct
/// child of the elements (`element_id`) and has the type the index was trained on.
fn resolve_key(
    details: &ListElementIndexDetails,
    position: usize,
    key_type: KeyType,
    element_id: i32,
    column_path: &str,
    schema: &impl SchemaView,
) -> Result<ResolvedKey, Refusal> {
    let id = details.key_field_ids[position];
    let written_name = details.keys[position].clone();
    let recorded_type = &details.key_types[position];
    let field = schema.field_by_id(id).ok_or_else(|| {
        Refusal::new(
            RefusalKind::KeyFieldMissing,
            format!("key {position} (field id {id}, written as {written_name:?}) is no longer in the schema"),
        )
    })?;
    if field.parent_id != element_id {
        return Err(Refusal::new(
            RefusalKind::KeyFieldNotDirectChild,
            format!(
                "key {position} (field id {id}, now {}) is not a direct child of the elements of {column_path}",
                schema.path_of(id)
            ),
        ));
    }
    if field.logical_type != recorded_type {
        return Err(Refusal::new(
            RefusalKind::KeyFieldTypeChanged,
            format!(
                "key {position} ({}.{}, field id {id}) has type {} but the index was trained on {recorded_type}",
                column_path, field.name, field.logical_type
            ),
        ));
    }
    Ok(ResolvedKey {
        field_id: id,
        name: field.name.to_string(),
        written_name,
        key_type,
    })
}

fn not_list_of_struct(path: &str, logical_type: &str) -> Refusal {
    Refusal::new(
        RefusalKind::IndexedFieldNotListOfStruct,
        format!(
            "the indexed field {path} has type {logical_type}, not a List or LargeList of a Struct"
        ),
    )
}
