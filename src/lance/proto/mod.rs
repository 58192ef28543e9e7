//! Protobuf messages of the Lance file format, defined with prost derives (no protoc).

pub(crate) mod encodings;
pub(crate) mod file;
pub(crate) mod list_element;
pub(crate) mod table;
