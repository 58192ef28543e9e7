//! Lance files (v2: 2.0, 2.1, 2.2, 2.3; legacy v1): container, schema, page layouts,
//! compressive encodings, readers and datasets.
//!
//! Listed from the bottom up: a module imports only the ones above it in this list (and
//! `dataset`, `writer` sit on top), so the modules mirror the format — the container knows
//! its pages, the per-version readers know the container, one reader picks between them.
//!
//! * [`proto`]: the protobuf messages lakeseek needs, defined here with prost derives.
//! * [`compression`]: pure decoders of the compressive encodings (Flat, Variable,
//!   bitpacking, RLE, dictionary, FSST, general LZ4/zstd, ...).
//! * [`blob`]: blob column descriptors (v1, v2) and where their bytes live (pure).
//! * [`schema`]: the field tree, Arrow types and physical column numbers.
//! * [`version`]: [`version::FileVersion`], the format version a footer names.
//! * [`page`]: page layouts (mini-block, full-zip, constant, 2.3 planar, the 2.0
//!   `ArrayEncoding` tree) — planners that say which byte ranges a row selection needs, and
//!   decoders that build Arrow arrays.
//! * [`file`]: the container — footer, offset tables, schema, column metadata (each page's
//!   layout decoded by [`page`]).
//! * [`v2_0`]: reading Lance 2.0 files: the 2.0 column model and its page decoders.
//! * [`inspect`]: what `lakeseek inspect` shows about a file.
//! * [`selection`]: [`selection::RowSelection`], the rows a read takes.
//! * [`legacy`]: legacy v1 files and their reader.
//! * [`reader`]: [`reader::LanceFileReader`] — open a v2 file, read rows, inspect it; the
//!   caches of every reader ([`reader::ReaderCaches`]).
//! * [`rowids`]: stable row ids, a fragment's `RowIdSequence` (pure decoder).
//! * [`data_file`]: [`data_file::DataFileReader`] — a file of any version behind one
//!   reader, the v2 or the legacy one, chosen by the footer.

pub(crate) mod blob;
pub(crate) mod compression;
pub(crate) mod data_file;
pub(crate) mod dataset;
pub(crate) mod file;
pub(crate) mod inspect;
pub(crate) mod legacy;
pub(crate) mod page;
pub(crate) mod proto;
pub(crate) mod reader;
pub(crate) mod rowids;
pub(crate) mod schema;
pub(crate) mod selection;
pub(crate) mod v2_0;
pub(crate) mod version;
pub(crate) mod writer;
