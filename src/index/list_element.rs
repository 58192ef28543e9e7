//! The experimental list element index (spec: `specs/list-element-index.md`, "List
//! Element Index"): `any_element(list_col, 'predicate')` answered from a BTree over
//! encoded key tuples of the elements of a `list<struct>` column.
//!
//! * [`key_encoding`]: key types and `LIST_ELEMENT_KEY_ENCODING_ARROW_ROW_V1`.
//! * [`tuple_range`]: encoded tuple ranges for "fixed prefix + one range".
//! * [`details`]: decoding and checking `ListElementIndexDetails`; [`Refusal`].
//! * [`resolve`]: resolving key field ids against the current schema.
//! * The call is recognised, and its inner predicate parsed, typed and evaluated in the
//!   element scope, by the one SQL stack ([`crate::index::sql`]: `call`, `expr`, `bind`,
//!   `eval`, the `value` model).
//! * [`ranges`]: planning: encoded ranges, exact / superset / not used, NULL rows.
//! * [`query`]: answering a call on a dataset (index search, recheck, scans, NOT).
//! * [`kind`]: the list element index behind the engine's index-kind interface.
//! * [`build`]: building an index and committing it (`lakeseek index create`).

pub(crate) mod build;
pub(crate) mod details;
pub(crate) mod key_encoding;
pub(crate) mod kind;
pub(crate) mod query;
pub(crate) mod ranges;
pub(crate) mod resolve;
pub(crate) mod tuple_range;

#[cfg(test)]
pub(crate) use crate::index::sql::any_element::{eval_element, evaluate_any_element};
#[cfg(test)]
pub(crate) use crate::index::sql::bind::BoundPredicate as BoundElementPredicate;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use crate::index::sql::call::parse_any_element_filter;
#[cfg(test)]
pub(crate) use crate::index::sql::value::ElementValue;
#[cfg(test)]
pub(crate) use details::{decode_details, Refusal, RefusalKind};
#[cfg(test)]
pub(crate) use key_encoding::{KeyEncoder, KeyType};
#[cfg(test)]
pub(crate) use ranges::{
    plan_any_element, AnyElementPlan, CallStrategy, IndexAnswer, NullRows, PlanOptions,
};
#[cfg(test)]
pub(crate) use resolve::{
    resolve, ElementField, FlatField, FlatSchema, ResolvedKey, ResolvedListElementIndex, SchemaView,
};
#[cfg(test)]
pub(crate) use tuple_range::EncodedRange;
