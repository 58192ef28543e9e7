//! The schema of a Lance file: the flat `lance.file.Field` list of global buffer 0 turned
//! into a field tree with Arrow types and physical column numbers.
//!
//! Arrow types come from each field's `logical_type` string (the spellings of lance-core
//! 14.0.2: `"uint32"`, `"float"`, `"string"`, `"fixed_size_list:float:128"`,
//! `"timestamp:us:UTC"`, `"list.struct"`, ...); the legacy `type`/`encoding` fields that
//! pylance still fills with v1 values are ignored.
//!
//! Physical columns (2.1+): only leaves own a column, numbered in depth-first order of the
//! leaves; structs and lists contribute none. Blob fields and packed structs are a single
//! column each (their children get none).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use arrow_schema::{
    DataType, Field as ArrowField, Fields, Schema as ArrowSchema, SchemaRef, TimeUnit,
};

use crate::error::{Error, Result};
use crate::io::cache::DeepSize;
use crate::lance::blob::BlobFormat;
use crate::lance::proto::file as pb;

/// Field metadata key marking a blob column (one physical column of descriptions).
pub(crate) const BLOB_METADATA_KEY: &str = "lance-encoding:blob";
/// Arrow extension-name metadata key.
pub(crate) const ARROW_EXTENSION_NAME_KEY: &str = "ARROW:extension:name";
/// Extension name of blob v2 fields.
pub(crate) const BLOB_V2_EXTENSION_NAME: &str = "lance.blob.v2";
const PACKED_STRUCT_KEYS: [&str; 2] = ["packed", "lance-encoding:packed"];
/// Extension name of the bfloat16 element type.
pub(crate) const BFLOAT16_EXTENSION_NAME: &str = "lance.bfloat16";
/// Longest logical type accepted (real ones are a few dozen bytes).
const MAX_LOGICAL_TYPE_LEN: usize = 256;

/// One field of a Lance schema with its children.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LanceField {
    /// Field id (unique within the file).
    pub id: i32,
    /// Parent field id, -1 for top-level fields.
    pub parent_id: i32,
    /// Field name.
    pub name: String,
    /// The Lance logical type string, as stored.
    pub logical_type: String,
    /// Whether the field may hold nulls.
    pub nullable: bool,
    /// Field metadata (byte values decoded as UTF-8, lossily, like lance does).
    pub metadata: HashMap<String, String>,
    /// Child fields (struct members, the list item, ...).
    pub children: Vec<LanceField>,
    /// The Arrow type of this field.
    pub data_type: DataType,
    /// Physical columns owned by this field and its descendants:
    /// `first_column .. first_column + num_columns`.
    pub first_column: usize,
    /// Number of physical columns (1 for a leaf, blob or packed struct).
    pub num_columns: usize,
}

impl LanceField {
    /// The Arrow field (name, type, nullability, metadata).
    pub(crate) fn to_arrow(&self) -> ArrowField {
        ArrowField::new(&self.name, self.data_type.clone(), self.nullable)
            .with_metadata(self.metadata.clone())
    }

    /// True for blob fields (stored as one column of blob descriptions).
    pub(crate) fn is_blob(&self) -> bool {
        self.metadata.contains_key(BLOB_METADATA_KEY)
            || self
                .metadata
                .get(ARROW_EXTENSION_NAME_KEY)
                .is_some_and(|n| n == BLOB_V2_EXTENSION_NAME)
    }

    /// The descriptor format of a blob field: v2 for the `lance.blob.v2` extension type (a
    /// struct in the file schema), v1 otherwise. Meaningful only when [`Self::is_blob`].
    pub(crate) fn blob_format(&self) -> BlobFormat {
        let v2 = self.logical_type == "struct"
            || self
                .metadata
                .get(ARROW_EXTENSION_NAME_KEY)
                .is_some_and(|n| n == BLOB_V2_EXTENSION_NAME);
        if v2 {
            BlobFormat::V2
        } else {
            BlobFormat::V1
        }
    }

    /// True for packed structs (all children stored row-major in one column).
    pub(crate) fn is_packed_struct(&self) -> bool {
        PACKED_STRUCT_KEYS
            .iter()
            .any(|key| self.metadata.get(*key).is_some_and(|v| is_truthy(v)))
    }

    /// True when this field owns exactly one physical column and has no structural layers:
    /// a primitive, string/binary or fixed-size-list-of-primitive field.
    pub(crate) fn is_flat_leaf(&self) -> bool {
        self.children.is_empty() && !self.is_blob()
    }
}

fn is_truthy(v: &str) -> bool {
    ["1", "true", "on", "yes", "y"]
        .iter()
        .any(|t| v.eq_ignore_ascii_case(t))
}

/// The schema of one Lance file.
#[derive(Debug, Clone)]
pub(crate) struct LanceSchema {
    /// Top-level fields in order.
    pub fields: Vec<LanceField>,
    /// Schema metadata (byte values decoded as UTF-8, lossily).
    pub metadata: HashMap<String, String>,
    /// The equivalent Arrow schema.
    pub arrow: SchemaRef,
    /// Number of physical columns the fields need (2.1+ numbering).
    pub num_columns: usize,
}

impl LanceSchema {
    /// Build the schema from the protobuf field list (depth-first pre-order, children
    /// after their parent, parents referenced by id).
    pub(crate) fn from_proto(schema: &pb::Schema) -> Result<Self> {
        let nodes = build_tree(&schema.fields)?;
        let mut next_column = 0usize;
        let fields = nodes
            .into_iter()
            .map(|node| finish_field(node, &mut next_column, 0))
            .collect::<Result<Vec<_>>>()?;
        let metadata = lossy_metadata(&schema.metadata);
        let arrow = Arc::new(
            ArrowSchema::new(fields.iter().map(LanceField::to_arrow).collect::<Vec<_>>())
                .with_metadata(metadata.clone()),
        );
        Ok(Self {
            fields,
            metadata,
            arrow,
            num_columns: next_column,
        })
    }

    /// Index of the top-level field named `name`.
    pub(crate) fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }
}

impl DeepSize for LanceSchema {
    fn deep_size(&self) -> usize {
        fn field_size(f: &LanceField) -> usize {
            std::mem::size_of::<LanceField>()
                + f.name.len()
                + f.logical_type.len()
                + f.metadata.iter().map(|(k, v)| k.len() + v.len() + 48).sum::<usize>()
                + f.children.iter().map(field_size).sum::<usize>()
                // The Arrow type repeats names and metadata of the subtree; count it again.
                + 64
        }
        let fields: usize = self.fields.iter().map(field_size).sum();
        // The Arrow schema duplicates roughly the same information.
        2 * fields
            + self
                .metadata
                .iter()
                .map(|(k, v)| k.len() + v.len() + 48)
                .sum::<usize>()
    }
}

fn lossy_metadata(raw: &HashMap<String, Vec<u8>>) -> HashMap<String, String> {
    raw.iter()
        .map(|(k, v)| (k.clone(), String::from_utf8_lossy(v).into_owned()))
        .collect()
}

/// A field with its children attached but types not yet resolved.
struct FieldNode {
    proto: pb::Field,
    children: Vec<FieldNode>,
}

fn build_tree(fields: &[pb::Field]) -> Result<Vec<FieldNode>> {
    let fields = &without_blob_descriptor_fields(fields)[..];
    let mut seen_ids = HashSet::with_capacity(fields.len());
    for f in fields {
        if f.id < 0 {
            return Err(Error::corrupt(format!(
                "schema: field {:?} has negative id {}",
                f.name, f.id
            )));
        }
        if !seen_ids.insert(f.id) {
            return Err(Error::corrupt(format!(
                "schema: field id {} appears twice",
                f.id
            )));
        }
    }
    // Pre-order: every parent appears before its children, so a stack of open ancestors
    // is enough to attach each field.
    let mut roots: Vec<FieldNode> = Vec::new();
    let mut stack: Vec<FieldNode> = Vec::new();
    for f in fields {
        while let Some(top) = stack.last() {
            if f.parent_id == top.proto.id && top.proto.id >= 0 {
                break;
            }
            let done = stack
                .pop()
                .ok_or_else(|| Error::corrupt("schema: internal stack underflow"))?;
            attach(&mut stack, &mut roots, done);
        }
        if stack.is_empty() && f.parent_id != -1 {
            return Err(Error::corrupt(format!(
                "schema: field {:?} (id {}) names parent id {}, which is not an enclosing field before it",
                f.name, f.id, f.parent_id
            )));
        }
        if stack.len() >= MAX_DEPTH {
            return Err(Error::corrupt(format!(
                "schema: fields nested deeper than {MAX_DEPTH} levels"
            )));
        }
        stack.push(FieldNode {
            proto: f.clone(),
            children: Vec::new(),
        });
    }
    while let Some(done) = stack.pop() {
        attach(&mut stack, &mut roots, done);
    }
    Ok(roots)
}

/// The fields without the descriptor fields a blob v2 file lists after its blob field
/// (`kind`, `position`, `size`, `blob_id`, `blob_uri`, with id -1 and parent -1): they own
/// no column (the blob field's one column holds them packed) and no id.
fn without_blob_descriptor_fields(fields: &[pb::Field]) -> Vec<pb::Field> {
    let mut out: Vec<pb::Field> = Vec::with_capacity(fields.len());
    let mut after_blob = false;
    for f in fields {
        if f.id < 0 && after_blob {
            continue;
        }
        after_blob = f.metadata.contains_key(BLOB_METADATA_KEY)
            || f.extension_name == BLOB_V2_EXTENSION_NAME;
        out.push(f.clone());
    }
    out
}

fn attach(stack: &mut [FieldNode], roots: &mut Vec<FieldNode>, node: FieldNode) {
    match stack.last_mut() {
        Some(parent) => parent.children.push(node),
        None => roots.push(node),
    }
}

/// Deepest nesting accepted (guards recursion on hostile schemas).
const MAX_DEPTH: usize = 64;

fn finish_field(node: FieldNode, next_column: &mut usize, depth: usize) -> Result<LanceField> {
    if depth > MAX_DEPTH {
        return Err(Error::corrupt(format!(
            "schema: fields nested deeper than {MAX_DEPTH} levels"
        )));
    }
    let FieldNode { proto, children } = node;
    let mut metadata = lossy_metadata(&proto.metadata);
    if !proto.extension_name.is_empty() {
        metadata.insert(
            ARROW_EXTENSION_NAME_KEY.to_string(),
            proto.extension_name.clone(),
        );
    }
    let first_column = *next_column;
    let mut field = LanceField {
        id: proto.id,
        parent_id: proto.parent_id,
        name: proto.name,
        logical_type: proto.logical_type,
        nullable: proto.nullable,
        metadata,
        children: Vec::new(),
        data_type: DataType::Null,
        first_column,
        num_columns: 0,
    };
    let single_column = field.is_blob() || field.is_packed_struct() || children.is_empty();
    let mut scratch = 0usize;
    let child_columns = if single_column {
        &mut scratch
    } else {
        &mut *next_column
    };
    field.children = children
        .into_iter()
        .map(|c| finish_field(c, child_columns, depth + 1))
        .collect::<Result<Vec<_>>>()?;
    if single_column {
        // Children of a blob/packed struct have no columns of their own.
        for child in &mut field.children {
            clear_columns(child, first_column);
        }
        *next_column += 1;
    }
    field.num_columns = *next_column - first_column;
    field.data_type = if field.is_blob() {
        // A blob column reads as its descriptors (what pylance's `to_table` returns).
        field.blob_format().descriptor_type()
    } else {
        arrow_type(&field).map_err(|e| e.context(format!("schema: field {:?}", field.name)))?
    };
    if field.logical_type == "json" {
        field.metadata.insert(
            ARROW_EXTENSION_NAME_KEY.to_string(),
            "arrow.json".to_string(),
        );
    }
    Ok(field)
}

fn clear_columns(field: &mut LanceField, column: usize) {
    field.first_column = column;
    field.num_columns = 0;
    for c in &mut field.children {
        clear_columns(c, column);
    }
}

fn only_child(field: &LanceField) -> Result<ArrowField> {
    match field.children.as_slice() {
        [child] => Ok(child.to_arrow()),
        other => Err(Error::corrupt(format!(
            "logical type {:?} needs exactly one child field, found {}",
            field.logical_type,
            other.len()
        ))),
    }
}

fn arrow_type(field: &LanceField) -> Result<DataType> {
    let lt = field.logical_type.as_str();
    if lt.len() > MAX_LOGICAL_TYPE_LEN {
        return Err(Error::corrupt(format!(
            "logical type of {} bytes",
            lt.len()
        )));
    }
    match lt {
        "struct" => {
            return Ok(DataType::Struct(
                field
                    .children
                    .iter()
                    .map(LanceField::to_arrow)
                    .collect::<Fields>(),
            ));
        }
        "list" | "list.struct" => return Ok(DataType::List(Arc::new(only_child(field)?))),
        "large_list" | "large_list.struct" => {
            return Ok(DataType::LargeList(Arc::new(only_child(field)?)))
        }
        "map" => return Ok(DataType::Map(Arc::new(only_child(field)?), false)),
        _ => {}
    }
    if let Some(size) = lt.strip_prefix("fixed_size_list:struct:") {
        return Ok(DataType::FixedSizeList(
            Arc::new(only_child(field)?),
            parse_size(size, lt)?,
        ));
    }
    if !field.children.is_empty() {
        return Err(Error::corrupt(format!(
            "leaf logical type {lt:?} has {} child fields",
            field.children.len()
        )));
    }
    leaf_arrow_type(lt)
}

fn parse_size(text: &str, lt: &str) -> Result<i32> {
    text.parse::<i32>()
        .ok()
        .filter(|n| *n >= 0)
        .ok_or_else(|| Error::corrupt(format!("bad size {text:?} in logical type {lt:?}")))
}

fn parse_time_unit(unit: &str, lt: &str) -> Result<TimeUnit> {
    match unit {
        "s" => Ok(TimeUnit::Second),
        "ms" => Ok(TimeUnit::Millisecond),
        "us" => Ok(TimeUnit::Microsecond),
        "ns" => Ok(TimeUnit::Nanosecond),
        _ => Err(Error::corrupt(format!(
            "unknown time unit {unit:?} in logical type {lt:?}"
        ))),
    }
}

/// Arrow type of a leaf logical type (no child fields).
pub(crate) fn leaf_arrow_type(lt: &str) -> Result<DataType> {
    match simple_arrow_type(lt) {
        Some(t) => Ok(t),
        None => parameterized_arrow_type(lt),
    }
}

/// Arrow type of a logical type without parameters (`None` for any other).
fn simple_arrow_type(lt: &str) -> Option<DataType> {
    use DataType::*;
    match lt {
        "null" => Some(Null),
        "bool" => Some(Boolean),
        "int8" => Some(Int8),
        "uint8" => Some(UInt8),
        "int16" => Some(Int16),
        "uint16" => Some(UInt16),
        "int32" => Some(Int32),
        "uint32" => Some(UInt32),
        "int64" => Some(Int64),
        "uint64" => Some(UInt64),
        "halffloat" => Some(Float16),
        "float" => Some(Float32),
        "double" => Some(Float64),
        "string" => Some(Utf8),
        "binary" => Some(Binary),
        "large_string" => Some(LargeUtf8),
        "large_binary" | "blob" | "json" => Some(LargeBinary),
        "date32:day" => Some(Date32),
        "date64:ms" => Some(Date64),
        "time32:s" => Some(Time32(TimeUnit::Second)),
        "time32:ms" => Some(Time32(TimeUnit::Millisecond)),
        "time64:us" => Some(Time64(TimeUnit::Microsecond)),
        "time64:ns" => Some(Time64(TimeUnit::Nanosecond)),
        "duration:s" => Some(Duration(TimeUnit::Second)),
        "duration:ms" => Some(Duration(TimeUnit::Millisecond)),
        "duration:us" => Some(Duration(TimeUnit::Microsecond)),
        "duration:ns" => Some(Duration(TimeUnit::Nanosecond)),
        _ => None,
    }
}

/// Arrow type of a leaf logical type with parameters (fixed-size list and binary,
/// dictionary, decimal, timestamp).
fn parameterized_arrow_type(lt: &str) -> Result<DataType> {
    use DataType::*;
    let parts: Vec<&str> = lt.split(':').collect();
    match parts.as_slice() {
        ["fixed_size_list", inner @ .., size] if !inner.is_empty() => {
            let size = parse_size(size, lt)?;
            let inner = inner.join(":");
            let item = if inner == BFLOAT16_EXTENSION_NAME {
                ArrowField::new("item", FixedSizeBinary(2), true).with_metadata(HashMap::from([
                    (
                        ARROW_EXTENSION_NAME_KEY.to_string(),
                        BFLOAT16_EXTENSION_NAME.to_string(),
                    ),
                    ("ARROW:extension:metadata".to_string(), String::new()),
                ]))
            } else {
                ArrowField::new("item", leaf_arrow_type(&inner)?, true)
            };
            Ok(FixedSizeList(Arc::new(item), size))
        }
        ["fixed_size_binary", size] => Ok(FixedSizeBinary(parse_size(size, lt)?)),
        ["dict", value, index, _] => Ok(Dictionary(
            Box::new(leaf_arrow_type(index)?),
            Box::new(leaf_arrow_type(value)?),
        )),
        ["decimal", bits, precision, scale] => {
            let precision: u8 = precision
                .parse()
                .map_err(|_| Error::corrupt(format!("bad decimal precision in {lt:?}")))?;
            let scale: i8 = scale
                .parse()
                .map_err(|_| Error::corrupt(format!("bad decimal scale in {lt:?}")))?;
            match *bits {
                "128" => Ok(Decimal128(precision, scale)),
                "256" => Ok(Decimal256(precision, scale)),
                _ => Err(Error::corrupt(format!("decimal width {bits} in {lt:?}"))),
            }
        }
        ["timestamp", unit, tz @ ..] if !tz.is_empty() => {
            let unit = parse_time_unit(unit, lt)?;
            let tz = tz.join(":");
            Ok(Timestamp(
                unit,
                if tz == "-" { None } else { Some(tz.into()) },
            ))
        }
        _ => Err(Error::unsupported(format!("logical type {lt:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pb_field(id: i32, parent_id: i32, name: &str, lt: &str) -> pb::Field {
        pb::Field {
            id,
            parent_id,
            name: name.into(),
            logical_type: lt.into(),
            nullable: true,
            ..Default::default()
        }
    }

    #[test]
    fn leaf_types_parse() {
        assert_eq!(leaf_arrow_type("uint32").unwrap(), DataType::UInt32);
        assert_eq!(leaf_arrow_type("halffloat").unwrap(), DataType::Float16);
        assert_eq!(
            leaf_arrow_type("timestamp:us:UTC").unwrap(),
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        );
        assert_eq!(
            leaf_arrow_type("timestamp:ns:+08:00").unwrap(),
            DataType::Timestamp(TimeUnit::Nanosecond, Some("+08:00".into()))
        );
        assert_eq!(
            leaf_arrow_type("timestamp:ms:-").unwrap(),
            DataType::Timestamp(TimeUnit::Millisecond, None)
        );
        assert_eq!(
            leaf_arrow_type("fixed_size_binary:16").unwrap(),
            DataType::FixedSizeBinary(16)
        );
        assert_eq!(
            leaf_arrow_type("decimal:128:10:2").unwrap(),
            DataType::Decimal128(10, 2)
        );
        assert_eq!(
            leaf_arrow_type("fixed_size_list:float:128").unwrap(),
            DataType::FixedSizeList(
                Arc::new(ArrowField::new("item", DataType::Float32, true)),
                128
            )
        );
        assert_eq!(
            leaf_arrow_type("dict:string:int32:false").unwrap(),
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
        );
        assert!(matches!(
            leaf_arrow_type("wat"),
            Err(Error::Unsupported { .. })
        ));
        assert!(matches!(
            leaf_arrow_type("fixed_size_list:float:-3"),
            Err(Error::Corrupt { .. })
        ));
    }

    #[test]
    fn columns_are_numbered_by_leaves_in_depth_first_order() {
        let schema = pb::Schema {
            fields: vec![
                pb_field(0, -1, "a", "uint32"),
                pb_field(1, -1, "l", "list.struct"),
                pb_field(2, 1, "item", "struct"),
                pb_field(3, 2, "s", "string"),
                pb_field(4, 2, "x", "float"),
                pb_field(5, -1, "v", "fixed_size_list:float:8"),
            ],
            metadata: HashMap::new(),
        };
        let s = LanceSchema::from_proto(&schema).unwrap();
        assert_eq!(s.num_columns, 4);
        assert_eq!((s.fields[0].first_column, s.fields[0].num_columns), (0, 1));
        assert_eq!((s.fields[1].first_column, s.fields[1].num_columns), (1, 2));
        assert_eq!(s.fields[1].children[0].children[1].first_column, 2);
        assert_eq!((s.fields[2].first_column, s.fields[2].num_columns), (3, 1));
        let DataType::List(item) = &s.fields[1].data_type else {
            panic!("not a list")
        };
        assert!(matches!(item.data_type(), DataType::Struct(f) if f.len() == 2));
        assert_eq!(s.arrow.fields().len(), 3);
    }

    #[test]
    fn packed_struct_is_one_column() {
        let mut packed = pb_field(1, -1, "p", "struct");
        packed
            .metadata
            .insert("lance-encoding:packed".into(), b"true".to_vec());
        let schema = pb::Schema {
            fields: vec![
                pb_field(0, -1, "a", "int8"),
                packed,
                pb_field(2, 1, "x", "int8"),
                pb_field(3, 1, "y", "int8"),
                pb_field(4, -1, "b", "int8"),
            ],
            metadata: HashMap::new(),
        };
        let s = LanceSchema::from_proto(&schema).unwrap();
        assert_eq!(s.num_columns, 3);
        assert_eq!((s.fields[1].first_column, s.fields[1].num_columns), (1, 1));
        assert_eq!(s.fields[2].first_column, 2);
    }

    #[test]
    fn bad_trees_are_corrupt() {
        let dup = pb::Schema {
            fields: vec![pb_field(0, -1, "a", "int8"), pb_field(0, -1, "b", "int8")],
            metadata: HashMap::new(),
        };
        assert!(matches!(
            LanceSchema::from_proto(&dup),
            Err(Error::Corrupt { .. })
        ));
        let orphan = pb::Schema {
            fields: vec![pb_field(0, -1, "a", "int8"), pb_field(1, 7, "b", "int8")],
            metadata: HashMap::new(),
        };
        assert!(matches!(
            LanceSchema::from_proto(&orphan),
            Err(Error::Corrupt { .. })
        ));
        let childless_list = pb::Schema {
            fields: vec![pb_field(0, -1, "l", "list")],
            metadata: HashMap::new(),
        };
        assert!(matches!(
            LanceSchema::from_proto(&childless_list),
            Err(Error::Corrupt { .. })
        ));
        let leaf_with_child = pb::Schema {
            fields: vec![pb_field(0, -1, "a", "int8"), pb_field(1, 0, "b", "int8")],
            metadata: HashMap::new(),
        };
        assert!(matches!(
            LanceSchema::from_proto(&leaf_with_child),
            Err(Error::Corrupt { .. })
        ));
    }
}
