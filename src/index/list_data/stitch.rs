//! Assembling the element fields a predicate needs from a `list<struct>` column that data
//! files store under their own (older) names, possibly split across several files (after
//! a cast, lance writes the new child into a new file that repeats the list structure).
//!
//! Pure: each file's read of the top-level list field ([`ListPart`]) comes with the Lance
//! field ids of its struct children; the output holds exactly the wanted fields, found by
//! id and named by their current names, on the list offsets and validities of the first
//! part (all parts must agree on them).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{
    new_null_array, Array, ArrayRef, GenericListArray, OffsetSizeTrait, StructArray,
};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field, Fields};

use crate::error::{Error, Result};

/// One data file's read of the list column.
#[derive(Debug, Clone)]
pub(crate) struct ListPart {
    /// A List or LargeList of Struct, one row per requested row.
    pub array: ArrayRef,
    /// Lance field id of each struct child, in child order.
    pub child_ids: Vec<i32>,
}

/// An element field to deliver.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WantedField {
    /// Lance field id.
    pub id: i32,
    /// Current name.
    pub name: String,
    /// Arrow type (used for an all-null column when no file holds the field).
    pub data_type: DataType,
}

/// Stitch `parts` (all read with the same row selection of `num_rows` rows) into one
/// list<struct<wanted...>>. With no parts (no file holds the column) every row is a null
/// list.
pub(crate) fn stitch_list_parts(
    parts: &[ListPart],
    wanted: &[WantedField],
    num_rows: usize,
) -> Result<ArrayRef> {
    let Some(first) = parts.first() else {
        return Ok(null_lists(wanted, num_rows));
    };
    match first.array.data_type() {
        DataType::List(_) => stitch::<i32>(parts, wanted, num_rows),
        DataType::LargeList(_) => stitch::<i64>(parts, wanted, num_rows),
        other => Err(Error::corrupt(format!(
            "list element column read as {other}, not a list"
        ))),
    }
}

fn struct_type(wanted: &[WantedField]) -> DataType {
    DataType::Struct(Fields::from(
        wanted
            .iter()
            .map(|w| Field::new(&w.name, w.data_type.clone(), true))
            .collect::<Vec<_>>(),
    ))
}

fn null_lists(wanted: &[WantedField], num_rows: usize) -> ArrayRef {
    let item = Arc::new(Field::new("item", struct_type(wanted), true));
    Arc::new(GenericListArray::<i32>::new_null(item, num_rows))
}

fn stitch<O: OffsetSizeTrait>(
    parts: &[ListPart],
    wanted: &[WantedField],
    num_rows: usize,
) -> Result<ArrayRef> {
    let lists: Vec<&GenericListArray<O>> = parts
        .iter()
        .map(|p| {
            p.array
                .as_list_opt::<O>()
                .ok_or_else(|| Error::corrupt("data files disagree on the list type of a column"))
        })
        .collect::<Result<_>>()?;
    check_parts_agree(parts, &lists, num_rows)?;
    let base = lists[0];
    let structs: Vec<&StructArray> = lists
        .iter()
        .map(|l| {
            l.values()
                .as_struct_opt()
                .ok_or_else(|| Error::corrupt("list element column is not a list of struct"))
        })
        .collect::<Result<_>>()?;
    crate::ensure_corrupt!(
        parts[0].child_ids.len() == structs[0].num_columns(),
        "child ids do not match the struct read"
    );
    let values = wanted_struct(parts, &structs, wanted)?;
    let item = Arc::new(Field::new("item", values.data_type().clone(), true));
    let offsets = OffsetBuffer::new(base.offsets().inner().clone());
    Ok(Arc::new(GenericListArray::<O>::try_new(
        item,
        offsets,
        Arc::new(values),
        base.nulls().cloned(),
    )?))
}

/// Every part has `num_rows` lists with the same offsets and validity as the first, and
/// one child id per struct child.
fn check_parts_agree<O: OffsetSizeTrait>(
    parts: &[ListPart],
    lists: &[&GenericListArray<O>],
    num_rows: usize,
) -> Result<()> {
    let base = lists[0];
    crate::ensure_corrupt!(
        base.len() == num_rows,
        "list column read returned {} rows, expected {num_rows}",
        base.len()
    );
    for (part, list) in parts.iter().zip(lists).skip(1) {
        crate::ensure_corrupt!(
            list.len() == base.len() && list.value_offsets() == base.value_offsets(),
            "data files disagree on the list structure of a column"
        );
        crate::ensure_corrupt!(
            list.nulls() == base.nulls(),
            "data files disagree on which lists are null"
        );
        crate::ensure_corrupt!(
            part.child_ids.len() == list.values().as_struct_opt().map_or(0, |s| s.num_columns()),
            "child ids do not match the struct read"
        );
    }
    Ok(())
}

/// The struct of the wanted fields, each taken from the first part holding it (by id) or
/// all null, on the elements and element validity of the first part.
fn wanted_struct(
    parts: &[ListPart],
    structs: &[&StructArray],
    wanted: &[WantedField],
) -> Result<StructArray> {
    let elements = structs[0].len();
    let mut fields = Vec::with_capacity(wanted.len());
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(wanted.len());
    for w in wanted {
        let found = parts.iter().zip(structs).find_map(|(p, s)| {
            p.child_ids
                .iter()
                .position(|id| *id == w.id)
                .map(|i| Arc::clone(s.column(i)))
        });
        let column = match found {
            Some(c) => {
                crate::ensure_corrupt!(
                    c.len() == elements,
                    "data files disagree on the number of list elements"
                );
                c
            }
            None => new_null_array(&w.data_type, elements),
        };
        fields.push(Field::new(&w.name, column.data_type().clone(), true));
        columns.push(column);
    }
    Ok(if fields.is_empty() {
        StructArray::new_empty_fields(elements, structs[0].nulls().cloned())
    } else {
        StructArray::try_new(Fields::from(fields), columns, structs[0].nulls().cloned())?
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::builder::{Float32Builder, ListBuilder, StringBuilder, StructBuilder};
    use arrow_array::{Float64Array, ListArray};

    /// list<struct<label (id 3), confidence (id 4)>>: [ {a,1} ], null, [ null elem, {b,2} ].
    fn part_a() -> ListPart {
        let fields = Fields::from(vec![
            Field::new("label", DataType::Utf8, true),
            Field::new("confidence", DataType::Float32, true),
        ]);
        let mut b = ListBuilder::new(StructBuilder::from_fields(fields, 0));
        let push = |b: &mut ListBuilder<StructBuilder>, l: &str, c: f32, valid: bool| {
            let s = b.values();
            s.field_builder::<StringBuilder>(0).unwrap().append_value(l);
            s.field_builder::<Float32Builder>(1)
                .unwrap()
                .append_value(c);
            s.append(valid);
        };
        push(&mut b, "a", 1.0, true);
        b.append(true);
        b.append(false);
        push(&mut b, "x", 0.0, false);
        push(&mut b, "b", 2.0, true);
        b.append(true);
        ListPart {
            array: Arc::new(b.finish()),
            child_ids: vec![3, 4],
        }
    }

    /// The same structure holding only field 7 (a cast confidence, double).
    fn part_b() -> ListPart {
        let a = part_a();
        let list = a.array.as_list::<i32>();
        let s = list.values().as_struct();
        let doubles: ArrayRef = Arc::new(Float64Array::from(vec![10.0, 0.0, 20.0]));
        let values = StructArray::try_new(
            Fields::from(vec![Field::new("confidence", DataType::Float64, true)]),
            vec![doubles],
            s.nulls().cloned(),
        )
        .unwrap();
        let item = Arc::new(Field::new("item", values.data_type().clone(), true));
        let array = ListArray::try_new(
            item,
            list.offsets().clone(),
            Arc::new(values),
            list.nulls().cloned(),
        )
        .unwrap();
        ListPart {
            array: Arc::new(array),
            child_ids: vec![7],
        }
    }

    fn wanted(id: i32, name: &str, t: DataType) -> WantedField {
        WantedField {
            id,
            name: name.into(),
            data_type: t,
        }
    }

    #[test]
    fn renames_by_id_and_drops_unwanted_children() {
        let out = stitch_list_parts(&[part_a()], &[wanted(3, "kind", DataType::Utf8)], 3).unwrap();
        let list = out.as_list::<i32>();
        assert!(list.is_null(1));
        let s = list.values().as_struct();
        assert_eq!(s.num_columns(), 1);
        assert_eq!(s.fields()[0].name(), "kind");
        assert!(s.is_null(1));
        assert_eq!(s.column(0).as_string::<i32>().value(2), "b");
    }

    #[test]
    fn joins_children_from_several_files() {
        let out = stitch_list_parts(
            &[part_a(), part_b()],
            &[
                wanted(3, "label", DataType::Utf8),
                wanted(7, "confidence", DataType::Float64),
            ],
            3,
        )
        .unwrap();
        let s = out.as_list::<i32>().values().as_struct();
        assert_eq!(s.column(1).data_type(), &DataType::Float64);
        assert_eq!(
            s.column(1)
                .as_primitive::<arrow_array::types::Float64Type>()
                .value(2),
            20.0
        );
        // A field no file holds is all null.
        let out = stitch_list_parts(&[part_a()], &[wanted(9, "gone", DataType::Int32)], 3).unwrap();
        assert_eq!(
            out.as_list::<i32>()
                .values()
                .as_struct()
                .column(0)
                .null_count(),
            3
        );
    }

    #[test]
    fn no_file_means_null_lists_and_disagreement_is_corrupt() {
        let out = stitch_list_parts(&[], &[wanted(3, "label", DataType::Utf8)], 4).unwrap();
        assert_eq!(out.null_count(), 4);
        let mut other = part_b();
        other.array = other.array.slice(1, 2);
        assert!(stitch_list_parts(&[part_a(), other], &[], 3).is_err());
        assert!(stitch_list_parts(&[part_a()], &[], 2).is_err());
        let bad_ids = ListPart {
            child_ids: vec![3],
            ..part_a()
        };
        assert!(stitch_list_parts(&[bad_ids], &[], 3).is_err());
    }
}
