//! The key types of the list element spec's table (bool, int8..int64, uint8..uint64, float,
//! double, date32:day, date64:ms, timestamp:{unit}:{tz}, string, large_string, binary,
//! large_binary, spelled as Lance logical types) and their Arrow types: the element field
//! types `any_element` predicates filter on, and the keys a list element index encodes.

use std::sync::Arc;

use arrow_schema::{DataType, TimeUnit};

/// The logical type of a key field, as listed in the spec's key type table.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum KeyType {
    /// `bool`.
    Bool,
    /// `int8`.
    Int8,
    /// `int16`.
    Int16,
    /// `int32`.
    Int32,
    /// `int64`.
    Int64,
    /// `uint8`.
    UInt8,
    /// `uint16`.
    UInt16,
    /// `uint32`.
    UInt32,
    /// `uint64`.
    UInt64,
    /// `float` (Float32).
    Float32,
    /// `double` (Float64).
    Float64,
    /// `date32:day`.
    Date32,
    /// `date64:ms`.
    Date64,
    /// `timestamp:{unit}:{tz}`; `tz` is `None` when Lance spells it `-`.
    Timestamp {
        /// Time unit.
        unit: TimeUnit,
        /// Time zone as written, `None` for `-`.
        tz: Option<String>,
    },
    /// `string` (Utf8 or Utf8View).
    Utf8,
    /// `large_string` (LargeUtf8).
    LargeUtf8,
    /// `binary` (Binary or BinaryView).
    Binary,
    /// `large_binary` (LargeBinary).
    LargeBinary,
}

impl KeyType {
    /// Parse a Lance logical type string; `None` for types outside the spec's key table.
    pub(crate) fn from_logical_type(logical_type: &str) -> Option<KeyType> {
        Some(match logical_type {
            "bool" => KeyType::Bool,
            "int8" => KeyType::Int8,
            "int16" => KeyType::Int16,
            "int32" => KeyType::Int32,
            "int64" => KeyType::Int64,
            "uint8" => KeyType::UInt8,
            "uint16" => KeyType::UInt16,
            "uint32" => KeyType::UInt32,
            "uint64" => KeyType::UInt64,
            "float" => KeyType::Float32,
            "double" => KeyType::Float64,
            "date32:day" => KeyType::Date32,
            "date64:ms" => KeyType::Date64,
            "string" => KeyType::Utf8,
            "large_string" => KeyType::LargeUtf8,
            "binary" => KeyType::Binary,
            "large_binary" => KeyType::LargeBinary,
            other => {
                let rest = other.strip_prefix("timestamp:")?;
                let (unit, tz) = rest.split_once(':')?;
                let unit = match unit {
                    "s" => TimeUnit::Second,
                    "ms" => TimeUnit::Millisecond,
                    "us" => TimeUnit::Microsecond,
                    "ns" => TimeUnit::Nanosecond,
                    _ => return None,
                };
                if tz.is_empty() {
                    return None;
                }
                let tz = (tz != "-").then(|| tz.to_string());
                KeyType::Timestamp { unit, tz }
            }
        })
    }

    /// The Lance logical type string.
    pub(crate) fn logical_type(&self) -> String {
        match self {
            KeyType::Bool => "bool".into(),
            KeyType::Int8 => "int8".into(),
            KeyType::Int16 => "int16".into(),
            KeyType::Int32 => "int32".into(),
            KeyType::Int64 => "int64".into(),
            KeyType::UInt8 => "uint8".into(),
            KeyType::UInt16 => "uint16".into(),
            KeyType::UInt32 => "uint32".into(),
            KeyType::UInt64 => "uint64".into(),
            KeyType::Float32 => "float".into(),
            KeyType::Float64 => "double".into(),
            KeyType::Date32 => "date32:day".into(),
            KeyType::Date64 => "date64:ms".into(),
            KeyType::Timestamp { unit, tz } => {
                let unit = match unit {
                    TimeUnit::Second => "s",
                    TimeUnit::Millisecond => "ms",
                    TimeUnit::Microsecond => "us",
                    TimeUnit::Nanosecond => "ns",
                };
                format!("timestamp:{unit}:{}", tz.as_deref().unwrap_or("-"))
            }
            KeyType::Utf8 => "string".into(),
            KeyType::LargeUtf8 => "large_string".into(),
            KeyType::Binary => "binary".into(),
            KeyType::LargeBinary => "large_binary".into(),
        }
    }

    /// The canonical Arrow type (Utf8 for `string`, Binary for `binary`).
    pub(crate) fn arrow_type(&self) -> DataType {
        match self {
            KeyType::Bool => DataType::Boolean,
            KeyType::Int8 => DataType::Int8,
            KeyType::Int16 => DataType::Int16,
            KeyType::Int32 => DataType::Int32,
            KeyType::Int64 => DataType::Int64,
            KeyType::UInt8 => DataType::UInt8,
            KeyType::UInt16 => DataType::UInt16,
            KeyType::UInt32 => DataType::UInt32,
            KeyType::UInt64 => DataType::UInt64,
            KeyType::Float32 => DataType::Float32,
            KeyType::Float64 => DataType::Float64,
            KeyType::Date32 => DataType::Date32,
            KeyType::Date64 => DataType::Date64,
            KeyType::Timestamp { unit, tz } => {
                DataType::Timestamp(*unit, tz.as_deref().map(Arc::from))
            }
            KeyType::Utf8 => DataType::Utf8,
            KeyType::LargeUtf8 => DataType::LargeUtf8,
            KeyType::Binary => DataType::Binary,
            KeyType::LargeBinary => DataType::LargeBinary,
        }
    }

    /// The key type of an Arrow type, if it has one (view types map to their plain type).
    pub(crate) fn from_arrow_type(data_type: &DataType) -> Option<KeyType> {
        Some(match data_type {
            DataType::Utf8View => KeyType::Utf8,
            DataType::BinaryView => KeyType::Binary,
            DataType::Timestamp(unit, tz) => KeyType::Timestamp {
                unit: *unit,
                tz: tz.as_deref().map(str::to_string),
            },
            other => {
                let key = Self::ALL_PLAIN.iter().find(|k| k.arrow_type() == *other)?;
                key.clone()
            }
        })
    }

    const ALL_PLAIN: [KeyType; 17] = [
        KeyType::Bool,
        KeyType::Int8,
        KeyType::Int16,
        KeyType::Int32,
        KeyType::Int64,
        KeyType::UInt8,
        KeyType::UInt16,
        KeyType::UInt32,
        KeyType::UInt64,
        KeyType::Float32,
        KeyType::Float64,
        KeyType::Date32,
        KeyType::Date64,
        KeyType::Utf8,
        KeyType::LargeUtf8,
        KeyType::Binary,
        KeyType::LargeBinary,
    ];

    /// Whether an array of `data_type` holds values of this key type.
    pub(crate) fn accepts(&self, data_type: &DataType) -> bool {
        KeyType::from_arrow_type(data_type).as_ref() == Some(self)
    }
}

impl std::fmt::Display for KeyType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.logical_type())
    }
}
