//! Lance scalar indices: filters, key values and the BTree index.
//!
//! * [`predicate`]: parse and type filters (sqlparser), three-valued evaluation.
//! * [`key`]: the total order BTree keys sort in, and typed key access to Arrow arrays.
//! * [`btree`]: page lookup decoding, page selection exactly as lance 14 does it, and
//!   reading only the touched pages.
//! * [`filter`]: the one filter entry point (plans over every index kind).
//! * `bitmap`, `label_list`, `zonemap`, `bloom`: the other scalar index kinds pylance
//!   writes (exact bitmap answers; zone maps and bloom filters narrow to zones, rechecked).
//! * [`list_element`]: the experimental list element index (`any_element`).

pub(crate) mod bitmap;
pub(crate) mod bitmap_file;
pub(crate) mod bloom;
pub(crate) mod btree;
pub(crate) mod btree_file;
pub(crate) mod caches;
pub(crate) mod engine;
pub(crate) mod filter;
pub(crate) mod key;
pub(crate) mod kind;
pub(crate) mod label_list;
pub(crate) mod list_element;
pub(crate) mod predicate;
pub(crate) mod prewarm;
pub(crate) mod sql;
pub(crate) mod sql_literal;
pub(crate) mod zonemap;
pub(crate) mod zones;
