//! The experimental list element index (spec: `specs/list-element-index.md`, "List
//! Element Index"): `any_element(list_col, 'predicate')` answered from a BTree over
//! encoded key tuples of the elements of a `list<struct>` column.
//!
//! * [`value`]: values of element fields and typed access to Arrow arrays.
//! * [`key_encoding`]: key types and `LIST_ELEMENT_KEY_ENCODING_ARROW_ROW_V1`.
//! * [`tuple_range`]: encoded tuple ranges for "fixed prefix + one range".
//! * [`details`]: decoding and checking `ListElementIndexDetails`; [`Refusal`].
//! * [`resolve`]: resolving key field ids against the current schema.
//! * [`call`]: recognising `any_element(col, '...')` / `NOT any_element(...)` in a filter.
//! * [`expr`]: parsing the inner predicate (sqlparser) into an untyped tree.
//! * [`bind`]: typing it against the element fields.
//! * [`ranges`]: planning: encoded ranges, exact / superset / not used, NULL rows.
//! * [`three_valued`]: evaluating the call on list data (rechecks, fallbacks).
//! * [`stitch`]: element fields by id from the data files of a list column.
//! * [`query`]: answering a call on a dataset (index search, recheck, scans, NOT).
//! * [`filter`]: filters combining calls with other predicates by AND (CLI).

pub mod bind;
pub mod call;
pub mod details;
pub mod expr;
pub mod filter;
pub mod key_encoding;
pub mod query;
pub mod ranges;
pub mod resolve;
pub mod stitch;
pub mod three_valued;
pub mod tuple_range;
pub mod value;

pub use bind::{BoundElementPredicate, BoundField, ElementPredicate};
pub use call::{any_element_call, parse_any_element_filter, AnyElementCall};
pub use details::{decode_details, Refusal, RefusalKind};
pub use key_encoding::{KeyEncoder, KeyType, ListElementEntries};
pub use ranges::{
    plan_any_element, AnyElementPlan, CallStrategy, IndexAnswer, NullRows, PlanOptions,
};
pub use resolve::{
    resolve, ElementField, FieldView, FlatField, FlatSchema, ResolvedKey, ResolvedListElementIndex,
    SchemaView,
};
pub use three_valued::{eval_element, evaluate_any_element};
pub use tuple_range::{successor, EncodedRange};
pub use value::ElementValue;
