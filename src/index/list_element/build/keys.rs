//! Which column and key fields an index build uses: the column is a `list<struct>` (List or
//! LargeList of a Struct), each key a direct child of its element struct, named by its
//! current name, of a type the spec allows, and no key twice (spec: "Index Details").
//! Pure: schema in, resolved fields or a clear `InvalidArgument` out.

use crate::error::{Error, Result};
use crate::index::list_data::stitch::WantedField;
use crate::index::list_element::key_encoding::KeyType;
use crate::lance::dataset::Schema;

/// The resolved column and keys of a build.
#[derive(Debug, Clone)]
pub(crate) struct BuildKeys {
    /// Field id of the list<struct> column.
    pub(crate) column_id: i32,
    /// Key fields in key order (id, current name, Arrow type).
    pub(crate) fields: Vec<WantedField>,
    /// Key types in key order.
    pub(crate) types: Vec<KeyType>,
    /// Lance logical type strings of the keys (recorded as `key_types`).
    pub(crate) logical_types: Vec<String>,
}

/// The logical types the spec allows for a key.
const ALLOWED: &str = "bool, int8..int64, uint8..uint64, float, double, date32:day, date64:ms, \
                       timestamp:{unit}:{tz}, string, large_string, binary, large_binary";

/// Resolve `column` and `keys` against `schema`.
pub(crate) fn resolve_build_keys(
    schema: &Schema,
    column: &str,
    keys: &[String],
) -> Result<BuildKeys> {
    let col = schema
        .field_by_path(column)
        .ok_or_else(|| Error::NotFound {
            path: column.to_string(),
            what: "no such column in the dataset schema".into(),
        })?;
    if !matches!(
        col.logical_type.as_str(),
        "list.struct" | "large_list.struct"
    ) {
        return Err(Error::InvalidArgument(format!(
            "column {column} is {}, a list element index needs a list<struct> or large_list<struct> column",
            col.logical_type
        )));
    }
    let item = schema
        .fields
        .iter()
        .find(|f| f.parent_id == col.id)
        .ok_or_else(|| Error::corrupt(format!("list column {column} has no element field")))?;
    if keys.is_empty() {
        return Err(Error::InvalidArgument(
            "a list element index needs at least one key".into(),
        ));
    }
    let mut out = BuildKeys {
        column_id: col.id,
        fields: Vec::new(),
        types: Vec::new(),
        logical_types: Vec::new(),
    };
    for key in keys {
        let field = schema
            .fields
            .iter()
            .find(|f| f.parent_id == item.id && f.name == *key)
            .ok_or_else(|| {
                let children: Vec<&str> = schema
                    .fields
                    .iter()
                    .filter(|f| f.parent_id == item.id)
                    .map(|f| f.name.as_str())
                    .collect();
                Error::InvalidArgument(format!(
                    "key {key:?} is not a direct child of the elements of {column} (their fields: {})",
                    children.join(", ")
                ))
            })?;
        if out.fields.iter().any(|w| w.id == field.id) {
            return Err(Error::InvalidArgument(format!("key {key:?} appears twice")));
        }
        let key_type = KeyType::from_logical_type(&field.logical_type).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "key {key:?} has type {}, which a list element index key may not have (allowed: {ALLOWED})",
                field.logical_type
            ))
        })?;
        out.fields.push(WantedField {
            id: field.id,
            name: field.name.clone(),
            data_type: key_type.arrow_type(),
        });
        out.logical_types.push(field.logical_type.clone());
        out.types.push(key_type);
    }
    Ok(out)
}

/// Whether `keys` (resolved at build time) still resolve to the same ids and types in
/// `schema` (a rebase onto a newer version must not change what the index means).
pub(crate) fn still_valid(schema: &Schema, keys: &BuildKeys) -> bool {
    let Some(item) = schema.fields.iter().find(|f| f.parent_id == keys.column_id) else {
        return false;
    };
    keys.fields.iter().zip(&keys.logical_types).all(|(w, t)| {
        schema
            .field_by_id(w.id)
            .is_some_and(|f| f.parent_id == item.id && f.logical_type == *t)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lance::dataset::SchemaField;

    fn schema() -> Schema {
        let f = |id, parent_id, name: &str, t: &str| SchemaField {
            id,
            parent_id,
            name: name.into(),
            logical_type: t.into(),
            nullable: true,
            metadata: Default::default(),
        };
        Schema {
            fields: vec![
                f(0, -1, "id", "int64"),
                f(1, -1, "det", "list.struct"),
                f(2, 1, "item", "struct"),
                f(3, 2, "label", "string"),
                f(4, 2, "confidence", "float"),
                f(5, 2, "h", "halffloat"),
                f(6, 2, "inner", "struct"),
                f(7, 6, "x", "int32"),
            ],
        }
    }

    fn keys(k: &[&str]) -> Vec<String> {
        k.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn resolves_direct_children_by_name() {
        let b = resolve_build_keys(&schema(), "det", &keys(&["confidence", "label"])).unwrap();
        assert_eq!(b.column_id, 1);
        assert_eq!(b.fields.iter().map(|f| f.id).collect::<Vec<_>>(), [4, 3]);
        assert_eq!(b.logical_types, ["float", "string"]);
        assert!(still_valid(&schema(), &b));
    }

    #[test]
    fn refuses_bad_columns_and_keys() {
        let s = schema();
        let e = |c: &str, k: &[&str]| resolve_build_keys(&s, c, &keys(k)).unwrap_err().to_string();
        assert!(e("nope", &["label"]).contains("not found"));
        assert!(e("id", &["label"]).contains("list<struct>"));
        assert!(e("det", &["x"]).contains("not a direct child"));
        assert!(e("det", &["inner.x"]).contains("not a direct child"));
        assert!(e("det", &["h"]).contains("halffloat"));
        assert!(e("det", &["inner"]).contains("struct"));
        assert!(e("det", &["label", "label"]).contains("twice"));
        assert!(e("det", &[]).contains("at least one key"));
    }
}
