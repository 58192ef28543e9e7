//! Protobuf messages of the Lance file format, defined with prost derives (no protoc).

// Message and enum names follow the .proto files (and lance's own generated code).
#[allow(clippy::enum_variant_names)]
pub(crate) mod encodings;
#[allow(clippy::enum_variant_names)]
pub(crate) mod encodings_v2_0;
pub(crate) mod file;
pub(crate) mod legacy;
pub(crate) mod list_element;
pub(crate) mod table;
