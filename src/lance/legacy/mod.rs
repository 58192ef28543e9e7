//! Legacy Lance v1 files (format 0.1 / 0.2), written by pylance up to 0.17 and by later
//! releases with `data_storage_version="legacy"`.
//!
//! * [`format`]: the 16-byte footer, the `Metadata` message, the page table and the
//!   self-describing manifest (pure decoders).
//! * [`decode`]: pure decoders of plain, var-binary and list-offset pages.
//! * [`open`]: opening a file (cached per object version).
//! * [`read`]: [`read::LegacyFileReader`] — rows by batch and field, random access by
//!   value position.
//!
//! [`crate::lance::data_file`], above this reader and the v2 one, picks between them by the
//! footer.

pub(crate) mod decode;
pub(crate) mod format;
pub(crate) mod inspect;
pub(crate) mod open;
pub(crate) mod pages;
pub(crate) mod read;
