//! The experimental list element index (spec: `specs/list-element-index.md`, "List
//! Element Index"): `any_element(list_col, 'predicate')` answered from a BTree over
//! encoded key tuples of the elements of a `list<struct>` column.
//!
//! * [`value`]: values of element fields and typed access to Arrow arrays.
//! * [`key_encoding`]: key types and `LIST_ELEMENT_KEY_ENCODING_ARROW_ROW_V1`.
//! * [`tuple_range`]: encoded tuple ranges for "fixed prefix + one range".

pub mod key_encoding;
pub mod tuple_range;
pub mod value;

pub use key_encoding::{KeyEncoder, KeyType, ListElementEntries};
pub use tuple_range::{successor, EncodedRange};
pub use value::ElementValue;
