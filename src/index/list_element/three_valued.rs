//! SQL three-valued evaluation of `any_element(col, 'predicate')` over list data (spec:
//! "Accelerated Queries": the call "is TRUE for a row when the predicate is TRUE on at
//! least one element of its list, NULL when the list is null or no element makes it TRUE
//! but it is UNKNOWN on some element, and FALSE otherwise. A null element makes every
//! field UNKNOWN.").
//!
//! Pure functions over Arrow arrays: a `List` or `LargeList` of `Struct`, whose children
//! are found by the bound fields' current names.

use std::cmp::Ordering;

use arrow_array::cast::AsArray;
use arrow_array::{Array, BooleanArray, GenericListArray, OffsetSizeTrait, StructArray};
use arrow_schema::DataType;

use super::bind::{BoundElementPredicate, BoundField, ElementPredicate};
use super::expr::{CompareOp, Truth};
use super::key_encoding::KeyType;
use super::value::{ElementValue, FieldColumn};
use crate::error::{Error, Result};

/// The predicate's value on one element whose referenced fields hold `values` (indexed
/// like [`BoundElementPredicate::fields`]; `None` = null). `None` result = UNKNOWN.
/// `Opaque` nodes evaluate to UNKNOWN here; [`evaluate_any_element`] refuses them first.
pub(crate) fn eval_element(p: &ElementPredicate, values: &[Option<ElementValue>]) -> Option<bool> {
    use ElementPredicate as P;
    let get = |i: &usize| values.get(*i).and_then(Option::as_ref);
    match p {
        P::Constant(c) => *c,
        P::BoolField(f) => match get(f) {
            Some(ElementValue::Bool(b)) => Some(*b),
            _ => None,
        },
        P::Compare { field, op, value } => {
            let ordering = get(field)?.compare(value.as_ref()?)?;
            Some(apply(*op, ordering))
        }
        P::CompareFields { left, op, right } => {
            let ordering = get(left)?.compare(get(right)?)?;
            Some(apply(*op, ordering))
        }
        P::InList {
            field,
            values: list,
            has_null,
            negated,
        } => {
            let v = get(field)?;
            let found = list.iter().any(|x| v.compare(x) == Some(Ordering::Equal));
            let result = if found {
                Some(true)
            } else if *has_null {
                None
            } else {
                Some(false)
            };
            result.map(|r| r != *negated)
        }
        P::IsNull { field, negated } => Some(get(field).is_none() != *negated),
        P::DistinctFrom {
            field,
            value,
            negated,
        } => Some(distinct(get(field), value.as_ref()) != *negated),
        P::DistinctFields {
            left,
            right,
            negated,
        } => Some(distinct(get(left), get(right)) != *negated),
        P::IsTruth {
            inner,
            truth,
            negated,
        } => {
            let v = eval_element(inner, values);
            let is = match truth {
                Truth::True => v == Some(true),
                Truth::False => v == Some(false),
                Truth::Unknown => v.is_none(),
            };
            Some(is != *negated)
        }
        P::And(children) => {
            let mut unknown = false;
            for c in children {
                match eval_element(c, values) {
                    Some(false) => return Some(false),
                    None => unknown = true,
                    Some(true) => {}
                }
            }
            (!unknown).then_some(true)
        }
        P::Or(children) => {
            let mut unknown = false;
            for c in children {
                match eval_element(c, values) {
                    Some(true) => return Some(true),
                    None => unknown = true,
                    Some(false) => {}
                }
            }
            (!unknown).then_some(false)
        }
        P::Not(inner) => eval_element(inner, values).map(|b| !b),
        P::Opaque(_) => None,
    }
}

fn apply(op: CompareOp, o: Ordering) -> bool {
    match op {
        CompareOp::Eq => o == Ordering::Equal,
        CompareOp::NotEq => o != Ordering::Equal,
        CompareOp::Lt => o == Ordering::Less,
        CompareOp::LtEq => o != Ordering::Greater,
        CompareOp::Gt => o == Ordering::Greater,
        CompareOp::GtEq => o != Ordering::Less,
    }
}

fn distinct(a: Option<&ElementValue>, b: Option<&ElementValue>) -> bool {
    match (a, b) {
        (None, None) => false,
        (Some(a), Some(b)) => a.compare(b) != Some(Ordering::Equal),
        _ => true,
    }
}

/// The first opaque sub-expression, if any.
pub(crate) fn find_opaque(p: &ElementPredicate) -> Option<&str> {
    use ElementPredicate as P;
    match p {
        P::Opaque(t) => Some(t),
        P::And(v) | P::Or(v) => v.iter().find_map(find_opaque),
        P::Not(inner) | P::IsTruth { inner, .. } => find_opaque(inner),
        _ => None,
    }
}

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
        .map(|f| field_column(elements, f))
        .collect::<Result<Vec<_>>>()?;
    let offsets = list.value_offsets();
    let mut values: Vec<Option<ElementValue>> = vec![None; columns.len()];
    let mut out = Vec::with_capacity(list.len());
    for row in 0..list.len() {
        if list.is_null(row) {
            out.push(None);
            continue;
        }
        let (start, end) = (offsets[row].as_usize(), offsets[row + 1].as_usize());
        let mut result = Some(false);
        for element in start..end {
            let element_null = elements.is_null(element);
            for (slot, column) in values.iter_mut().zip(&columns) {
                *slot = if element_null {
                    None
                } else {
                    column.value(element)
                };
            }
            match eval_element(&bound.predicate, &values) {
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
fn field_column<'a>(elements: &'a StructArray, field: &BoundField) -> Result<FieldColumn<'a>> {
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
    FieldColumn::new(array.as_ref())
}

#[cfg(test)]
mod tests;
