//! The dataset schema: flat Lance fields (pre-order, with ids and parent ids). Their Arrow
//! types come from the one logical-type mapping of the file schema
//! ([`LanceSchema`](crate::lance::schema::LanceSchema)), applied to a field's subtree.

use std::collections::HashMap;

use arrow_schema::{DataType, Field as ArrowField};

use crate::error::{Error, Result};
use crate::lance::proto::file as file_pb;
use crate::lance::proto::table as pb;
use crate::lance::schema::LanceSchema;

/// One schema field.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SchemaField {
    /// Field id (what data files and indices refer to).
    pub id: i32,
    /// Parent field id, -1 for top-level fields.
    pub parent_id: i32,
    /// Unqualified name.
    pub name: String,
    /// Lance logical type string, e.g. "int64", "timestamp:us:UTC", "list.struct".
    pub logical_type: String,
    /// Whether the field may hold nulls.
    pub nullable: bool,
    /// Field metadata as stored (e.g. `lance-encoding:*` keys, Arrow extension names).
    pub metadata: HashMap<String, Vec<u8>>,
}

/// The dataset schema as stored in the manifest.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Schema {
    /// Fields in pre-order.
    pub fields: Vec<SchemaField>,
}

impl Schema {
    /// Build from the manifest's fields, checking ids are unique and parents precede
    /// their children.
    pub(crate) fn from_proto(fields: &[pb::Field]) -> Result<Self> {
        let mut out: Vec<SchemaField> = Vec::with_capacity(fields.len());
        for f in fields {
            if out.iter().any(|o| o.id == f.id) {
                return Err(Error::corrupt(format!(
                    "schema: duplicate field id {} (a bug of old lance add/drop-column paths; \
                     lakeseek cannot tell which column a data file's field {} is)",
                    f.id, f.id
                )));
            }
            if f.parent_id != -1 && !out.iter().any(|o| o.id == f.parent_id) {
                return Err(Error::corrupt(format!(
                    "schema: field {} (id {}) has parent {} that does not precede it",
                    f.name, f.id, f.parent_id
                )));
            }
            out.push(SchemaField {
                id: f.id,
                parent_id: f.parent_id,
                name: f.name.clone(),
                logical_type: f.logical_type.clone(),
                nullable: f.nullable,
                metadata: f.metadata.clone(),
            });
        }
        Ok(Self { fields: out })
    }

    /// The field with this id.
    pub(crate) fn field_by_id(&self, id: i32) -> Option<&SchemaField> {
        self.fields.iter().find(|f| f.id == id)
    }

    /// Resolve a column path: a top-level name, or `a.b.c` through struct children (never
    /// through lists). An exact top-level name wins over a dotted path.
    pub(crate) fn field_by_path(&self, path: &str) -> Option<&SchemaField> {
        if let Some(f) = self
            .fields
            .iter()
            .find(|f| f.parent_id == -1 && f.name == path)
        {
            return Some(f);
        }
        let mut parent = -1;
        let mut found = None;
        for part in path.split('.') {
            if let Some(p) = found {
                let p: &SchemaField = p;
                if p.logical_type != "struct" {
                    return None;
                }
            }
            let f = self
                .fields
                .iter()
                .find(|f| f.parent_id == parent && f.name == part)?;
            parent = f.id;
            found = Some(f);
        }
        found
    }

    /// Whether the field has children (struct/list parent).
    pub(crate) fn has_children(&self, id: i32) -> bool {
        self.fields.iter().any(|f| f.parent_id == id)
    }

    /// Dotted path of a field (names along the parent chain).
    pub(crate) fn path_of(&self, id: i32) -> String {
        let mut parts = Vec::new();
        let mut cur = self.field_by_id(id);
        let mut guard = 0;
        while let Some(f) = cur {
            parts.push(f.name.as_str());
            guard += 1;
            if f.parent_id == -1 || guard > self.fields.len() {
                break;
            }
            cur = self.field_by_id(f.parent_id);
        }
        parts.reverse();
        parts.join(".")
    }

    /// The Arrow field of field `id` with its whole subtree (name, type, nullability,
    /// metadata), mapped exactly as data files map it. `InvalidArgument` for an unknown id;
    /// `Unsupported`/`Corrupt` (naming the field) for a logical type lakeseek cannot map.
    pub(crate) fn arrow_field(&self, id: i32) -> Result<ArrowField> {
        let root = self
            .field_by_id(id)
            .ok_or_else(|| Error::InvalidArgument(format!("no schema field with id {id}")))?;
        let mut subtree = Vec::new();
        self.push_subtree(root, -1, &mut subtree);
        let schema = LanceSchema::from_proto(&file_pb::Schema {
            fields: subtree,
            metadata: HashMap::new(),
        })?;
        schema
            .fields
            .first()
            .map(|f| f.to_arrow())
            .ok_or_else(|| Error::corrupt(format!("schema: field {:?} vanished", root.name)))
    }

    /// Ids of field `id` and all its descendants. Data files list only the leaf ids of the
    /// nested fields they hold, so "does this file hold the column" asks for any of these.
    pub(crate) fn subtree_ids(&self, id: i32) -> Vec<i32> {
        let mut out = vec![id];
        let mut i = 0;
        while i < out.len() && out.len() <= self.fields.len() {
            let parent = out[i];
            out.extend(
                self.fields
                    .iter()
                    .filter(|f| f.parent_id == parent)
                    .map(|f| f.id),
            );
            i += 1;
        }
        out
    }

    /// The Arrow type of field `id` (see [`Schema::arrow_field`]).
    pub(crate) fn arrow_type(&self, id: i32) -> Result<DataType> {
        Ok(self.arrow_field(id)?.data_type().clone())
    }

    /// `field` and its descendants in pre-order as file-schema fields, `field` re-parented
    /// to `parent` (children are found by parent id, so a child added to a struct by a
    /// later version, stored after other top-level fields, still lands under its parent).
    fn push_subtree(&self, field: &SchemaField, parent: i32, out: &mut Vec<file_pb::Field>) {
        // `from_proto` made every parent precede its children, so the walk terminates; the
        // bound guards it anyway.
        if out.len() > self.fields.len() {
            return;
        }
        out.push(file_pb::Field {
            name: field.name.clone(),
            id: field.id,
            parent_id: parent,
            logical_type: field.logical_type.clone(),
            nullable: field.nullable,
            metadata: field.metadata.clone(),
            ..Default::default()
        });
        for child in self.fields.iter().filter(|c| c.parent_id == field.id) {
            self.push_subtree(child, field.id, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: &str, id: i32, parent: i32, t: &str) -> pb::Field {
        pb::Field {
            name: name.into(),
            id,
            parent_id: parent,
            logical_type: t.into(),
            nullable: true,
            ..Default::default()
        }
    }

    fn arrow(fields: &[pb::Field], id: i32) -> Result<DataType> {
        Schema::from_proto(fields)?.arrow_type(id)
    }

    #[test]
    fn logical_types_map_to_arrow_like_the_file_schema() {
        use arrow_schema::TimeUnit;
        use std::sync::Arc;
        let leaf = |t: &str| arrow(&[field("a", 0, -1, t)], 0);
        assert_eq!(leaf("int64").unwrap(), DataType::Int64);
        assert_eq!(leaf("date32:day").unwrap(), DataType::Date32);
        assert_eq!(
            leaf("timestamp:us:-").unwrap(),
            DataType::Timestamp(TimeUnit::Microsecond, None)
        );
        assert_eq!(
            leaf("timestamp:ms:+08:00").unwrap(),
            DataType::Timestamp(TimeUnit::Millisecond, Some("+08:00".into()))
        );
        assert_eq!(
            leaf("timestamp:us:America/New_York").unwrap(),
            DataType::Timestamp(TimeUnit::Microsecond, Some("America/New_York".into()))
        );
        assert_eq!(
            leaf("time64:us").unwrap(),
            DataType::Time64(TimeUnit::Microsecond)
        );
        assert_eq!(
            leaf("decimal:128:10:2").unwrap(),
            DataType::Decimal128(10, 2)
        );
        assert!(matches!(leaf("timestamp:xs:-"), Err(Error::Corrupt { .. })));
        assert!(matches!(leaf("wat"), Err(Error::Unsupported { .. })));
        // Nested: list<struct<s: string>> and a struct child stored after another column.
        let fields = [
            field("l", 0, -1, "list.struct"),
            field("item", 1, 0, "struct"),
            field("s", 2, 1, "string"),
            field("st", 3, -1, "struct"),
            field("x", 4, 3, "int32"),
            field("late", 5, 3, "float"),
        ];
        let DataType::List(item) = arrow(&fields, 0).unwrap() else {
            panic!("not a list")
        };
        assert_eq!(
            item.data_type(),
            &DataType::Struct(
                vec![Arc::new(arrow_schema::Field::new(
                    "s",
                    DataType::Utf8,
                    true
                ))]
                .into()
            )
        );
        let DataType::Struct(children) = arrow(&fields, 3).unwrap() else {
            panic!("not a struct")
        };
        assert_eq!(children.len(), 2);
        let s = Schema::from_proto(&fields).unwrap();
        assert_eq!(s.subtree_ids(0), vec![0, 1, 2]);
        assert_eq!(s.subtree_ids(3), vec![3, 4, 5]);
        assert_eq!(s.subtree_ids(4), vec![4]);
        assert!(matches!(
            arrow(&[field("l", 0, -1, "list")], 0),
            Err(Error::Corrupt { .. })
        ));
    }

    #[test]
    fn resolves_paths_and_rejects_bad_trees() {
        let s = Schema::from_proto(&[
            field("a", 0, -1, "int32"),
            field("st", 1, -1, "struct"),
            field("x", 2, 1, "string"),
        ])
        .unwrap();
        assert_eq!(s.field_by_path("a").unwrap().id, 0);
        assert_eq!(s.field_by_path("st.x").unwrap().id, 2);
        assert!(s.field_by_path("st.y").is_none());
        assert_eq!(s.path_of(2), "st.x");
        assert!(s.has_children(1));
        assert!(Schema::from_proto(&[field("x", 2, 1, "string")]).is_err());
        assert!(
            Schema::from_proto(&[field("a", 0, -1, "int32"), field("b", 0, -1, "int32")]).is_err()
        );
    }
}
