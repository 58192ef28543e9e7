//! Lance v2 files (2.0, 2.1, 2.2, 2.3): container, schema, page layouts and compressive encodings.
//!
//! * [`proto`]: the protobuf messages lakeseek needs, defined here with prost derives.
//! * [`version`]: [`version::FileVersion`], the format version a footer names.
//! * [`file`]: the container — footer, offset tables, schema, column metadata.
//! * [`schema`]: the field tree, Arrow types and physical column numbers.
//! * [`inspect`]: what `lakeseek inspect` shows about a file.
//! * [`reader`]: [`reader::LanceFileReader`] — open a file, read rows, inspect it.
//! * [`compression`]: pure decoders of the compressive encodings (Flat, Variable,
//!   bitpacking, RLE, dictionary, FSST, general LZ4/zstd, ...).
//! * [`page`]: page layouts (mini-block, full-zip, constant, 2.3 planar, the 2.0
//!   `ArrayEncoding` tree) — planners that say which byte ranges a row selection needs, and
//!   decoders that build Arrow arrays.
//! * [`v2_0`]: reading Lance 2.0 files: the 2.0 column model and its page decoders.

pub(crate) mod compression;
pub(crate) mod dataset;
pub(crate) mod file;
pub(crate) mod inspect;
pub(crate) mod legacy;
pub(crate) mod page;
pub(crate) mod proto;
pub(crate) mod reader;
pub(crate) mod schema;
pub(crate) mod v2_0;
pub(crate) mod version;
pub(crate) mod writer;
