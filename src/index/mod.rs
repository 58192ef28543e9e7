//! Lance scalar indices and the one filter engine, in layers (each imports only those below
//! it; see `docs/architecture.md`):
//!
//! * [`filter`]: the one filter entry point, and the registry of kinds it hands the engine.
//! * [`engine`]: plans, executes and explains a filter over the kinds it is handed, seen
//!   only through [`kind::IndexKind`].
//! * One module per kind, none importing another: [`btree`], [`bitmap`], [`label_list`],
//!   [`zonemap`], [`bloom`] (the scalar index kinds pylance writes: exact BTree and bitmap
//!   answers; zone maps and bloom filters narrow to zones, rechecked) and [`list_element`]
//!   (the experimental list element index, `any_element`).
//! * Formats several kinds read: [`btree_file`] (page lookup decoding, page selection
//!   exactly as lance 14 does it, reading only the touched pages), [`bitmap_file`] (the
//!   bitmap lookup file and row sets), [`zones`] (zone columns and the zone-based planned
//!   leaf).
//! * [`kind`]: the index-kind interface and the types in its signatures.
//! * [`sql`]: the one SQL stack (parse, bind, three-valued evaluation, value model).
//! * [`list_data`]: reading a `list<struct>` column for `any_element` (the call typed against
//!   its element fields, the fields of some rows read and evaluated): the engine's data
//!   evaluation of `any_element` leaves, and what the list element kind plans and builds with.
//! * [`predicate`], [`key`], [`key_type`], [`sql_literal`], [`caches`]: leaf predicates, the
//!   total order BTree keys sort in, the element key types of the list element spec, literal
//!   typing, the kinds' session caches.
//! * [`prewarm`]: loading every index page of a dataset ahead of queries.

#[macro_use]
mod test_override;

pub(crate) mod bitmap;
pub(crate) mod bitmap_file;
pub(crate) mod bloom;
pub(crate) mod btree;
pub(crate) mod btree_file;
pub(crate) mod caches;
pub(crate) mod engine;
pub(crate) mod filter;
pub(crate) mod fts;
pub(crate) mod key;
pub(crate) mod key_type;
pub(crate) mod kind;
pub(crate) mod label_list;
pub(crate) mod list_data;
pub(crate) mod list_element;
pub(crate) mod ngram;
pub(crate) mod predicate;
pub(crate) mod prewarm;
pub(crate) mod sql;
pub(crate) mod sql_literal;
pub(crate) mod vector;
pub(crate) mod zonemap;
pub(crate) mod zones;
