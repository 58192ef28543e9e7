//! Protobuf messages of the Lance file format, defined with prost derives (no protoc).

pub mod encodings;
pub mod file;
pub mod list_element;
pub mod table;
