//! The dataset schema: flat Lance fields (pre-order, with ids and parent ids) and their
//! logical type strings mapped to Arrow types.

use std::sync::Arc;

use arrow_schema::{DataType, TimeUnit};

use crate::error::{Error, Result};
use crate::lance::proto::table as pb;

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
                    "schema: duplicate field id {}",
                    f.id
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
}

/// Arrow type of a leaf logical type string. `Unsupported` for nested and exotic types.
pub(crate) fn arrow_type_of(logical_type: &str) -> Result<DataType> {
    let t = logical_type;
    let simple = match t {
        "null" => Some(DataType::Null),
        "bool" => Some(DataType::Boolean),
        "int8" => Some(DataType::Int8),
        "uint8" => Some(DataType::UInt8),
        "int16" => Some(DataType::Int16),
        "uint16" => Some(DataType::UInt16),
        "int32" => Some(DataType::Int32),
        "uint32" => Some(DataType::UInt32),
        "int64" => Some(DataType::Int64),
        "uint64" => Some(DataType::UInt64),
        "halffloat" => Some(DataType::Float16),
        "float" => Some(DataType::Float32),
        "double" => Some(DataType::Float64),
        "string" => Some(DataType::Utf8),
        "large_string" => Some(DataType::LargeUtf8),
        "binary" => Some(DataType::Binary),
        "large_binary" => Some(DataType::LargeBinary),
        "date32:day" => Some(DataType::Date32),
        "date64:ms" => Some(DataType::Date64),
        _ => None,
    };
    if let Some(dt) = simple {
        return Ok(dt);
    }
    let unsupported = || Error::unsupported(format!("logical type {t:?}"));
    let mut parts = t.splitn(3, ':');
    let head = parts.next().unwrap_or("");
    let unit = parts.next();
    let rest = parts.next();
    match head {
        "timestamp" => {
            let unit = time_unit(unit.ok_or_else(unsupported)?).ok_or_else(unsupported)?;
            let tz = match rest {
                None | Some("-") => None,
                Some(tz) => Some(Arc::<str>::from(tz)),
            };
            Ok(DataType::Timestamp(unit, tz))
        }
        "time32" | "time64" | "duration" if rest.is_none() => {
            let unit = time_unit(unit.ok_or_else(unsupported)?).ok_or_else(unsupported)?;
            Ok(match head {
                "time32" => DataType::Time32(unit),
                "time64" => DataType::Time64(unit),
                _ => DataType::Duration(unit),
            })
        }
        "fixed_size_binary" if rest.is_none() => {
            let n: i32 = unit.and_then(|u| u.parse().ok()).ok_or_else(unsupported)?;
            Ok(DataType::FixedSizeBinary(n))
        }
        _ => Err(unsupported()),
    }
}

fn time_unit(s: &str) -> Option<TimeUnit> {
    Some(match s {
        "s" => TimeUnit::Second,
        "ms" => TimeUnit::Millisecond,
        "us" => TimeUnit::Microsecond,
        "ns" => TimeUnit::Nanosecond,
        _ => return None,
    })
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

    #[test]
    fn logical_types_map_to_arrow() {
        assert_eq!(arrow_type_of("int64").unwrap(), DataType::Int64);
        assert_eq!(arrow_type_of("date32:day").unwrap(), DataType::Date32);
        assert_eq!(
            arrow_type_of("timestamp:us:-").unwrap(),
            DataType::Timestamp(TimeUnit::Microsecond, None)
        );
        assert_eq!(
            arrow_type_of("timestamp:ms:+08:00").unwrap(),
            DataType::Timestamp(TimeUnit::Millisecond, Some("+08:00".into()))
        );
        assert_eq!(
            arrow_type_of("time64:us").unwrap(),
            DataType::Time64(TimeUnit::Microsecond)
        );
        assert!(matches!(
            arrow_type_of("list.struct"),
            Err(Error::Unsupported { .. })
        ));
        assert!(matches!(
            arrow_type_of("timestamp:xs:-"),
            Err(Error::Unsupported { .. })
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
