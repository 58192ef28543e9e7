//! SQL three-valued evaluation of `any_element(col, 'predicate')` over list data (spec:
//! "Accelerated Queries": the call "is TRUE for a row when the predicate is TRUE on at
//! least one element of its list, NULL when the list is null or no element makes it TRUE
//! but it is UNKNOWN on some element, and FALSE otherwise. A null element makes every
//! field UNKNOWN.").
//!
//! Pure functions over Arrow arrays: a `List` or `LargeList` of `Struct`, whose children
//! are found by the bound fields' current names. The predicate on each element is
//! evaluated by the filter engine's one evaluator ([`crate::index::sql::eval`]).

use arrow_array::cast::AsArray;
use arrow_array::{Array, BooleanArray, GenericListArray, OffsetSizeTrait, StructArray};
use arrow_schema::DataType;

use crate::error::{Error, Result};
use crate::index::key::KeyColumn;
use crate::index::key_type::KeyType;
use crate::index::sql::bind::{BoundField, BoundPredicate as BoundElementPredicate};
use crate::index::sql::eval::ColumnsRow;
pub(crate) use crate::index::sql::eval::{eval_predicate as eval_element, find_opaque};
use crate::index::sql::value::scalar_column;

/// `any_element(list, predicate)` for every row of `list` (a `List` or `LargeList` of
/// `Struct`): TRUE, FALSE or NULL per the spec.
pub(crate) fn evaluate_any_element(
    list: &dyn Array,
    bound: &BoundElementPredicate,
) -> Result<BooleanArray> {
    if let Some(opaque) = find_opaque(&bound.predicate) {
        return Err(Error::unsupported(format!(
            "any_element predicate {:?}: lakeseek cannot evaluate {opaque}",
            bound.text
        )));
    }
    match list.data_type() {
        DataType::List(_) => evaluate_list(list.as_list::<i32>(), bound),
        DataType::LargeList(_) => evaluate_list(list.as_list::<i64>(), bound),
        other => Err(Error::InvalidArgument(format!(
            "any_element needs a List or LargeList of Struct, got {other}"
        ))),
    }
}

fn evaluate_list<O: OffsetSizeTrait>(
    list: &GenericListArray<O>,
    bound: &BoundElementPredicate,
) -> Result<BooleanArray> {
    let elements = list.values().as_struct_opt().ok_or_else(|| {
        Error::InvalidArgument(format!(
            "any_element needs a list of Struct, got a list of {}",
            list.values().data_type()
        ))
    })?;
    let columns = bound
        .fields
        .iter()
        .map(|f| field_column(elements, f).map(Some))
        .collect::<Result<Vec<_>>>()?;
    let offsets = list.value_offsets();
    let mut out = Vec::with_capacity(list.len());
    for row in 0..list.len() {
        if list.is_null(row) {
            out.push(None);
            continue;
        }
        let (start, end) = (offsets[row].as_usize(), offsets[row + 1].as_usize());
        let mut result = Some(false);
        for element in start..end {
            // A null element makes every field NULL.
            let fields: &[Option<KeyColumn>] = if elements.is_null(element) {
                &[]
            } else {
                &columns
            };
            let row = ColumnsRow {
                columns: fields,
                row: element,
            };
            match eval_element(&bound.predicate, &row) {
                Some(true) => {
                    result = Some(true);
                    break;
                }
                None => result = None,
                Some(false) => {}
            }
        }
        out.push(result);
    }
    Ok(BooleanArray::from(out))
}

/// The element child named like `field`, checked to hold its type.
fn field_column(elements: &StructArray, field: &BoundField) -> Result<KeyColumn> {
    let array = elements.column_by_name(&field.name).ok_or_else(|| {
        Error::InvalidArgument(format!("the list elements have no field {:?}", field.name))
    })?;
    let same = array.data_type() == &field.data_type
        || KeyType::from_arrow_type(array.data_type()).is_some_and(|k| k.accepts(&field.data_type));
    if !same {
        return Err(Error::InvalidArgument(format!(
            "element field {:?} holds {} but the predicate was typed for {}",
            field.name,
            array.data_type(),
            field.data_type
        )));
    }
    scalar_column(array)
}

#[cfg(test)]
mod tests;
