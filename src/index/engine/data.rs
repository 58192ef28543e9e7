//! Evaluating a leaf on data: read only the leaf's column for only the rows asked (the
//! reader fetches just the chunks holding them), evaluate with the one three-valued
//! evaluator ([`crate::index::sql::eval`], the code that also filters BTree pages), keep
//! the rows with the wanted truth value.

use std::collections::BTreeMap;

use arrow_array::{Array, ArrayRef};
use roaring::RoaringTreemap;

use crate::error::{Error, Result};
use crate::index::key::KeyColumn;
use crate::index::kind::Want;
use crate::index::list_data::{self, TypedCall};
use crate::index::sql::bind::{BoundField, SqlPredicate};
use crate::index::sql::eval::{eval_predicate, ColumnsRow};
use crate::io::IoStats;
use crate::lance::dataset::{DatasetVersion, Fragment};
use crate::lance::reader::RowSelection;

/// How a leaf is evaluated on data.
#[derive(Debug)]
pub(crate) enum DataLeaf<'a> {
    /// A predicate on one scalar column.
    Scalar(ScalarLeaf<'a>),
    /// An `any_element` call, typed against its list column.
    AnyElement(TypedCall),
    /// `array_has_any` / `array_has_all` / `array_contains` on a list column.
    ListHas {
        /// Any or all.
        test: crate::index::sql::list_has::ListTest,
        /// The values, sorted.
        values: Vec<crate::index::key::Key>,
        /// The list column.
        field: &'a BoundField,
    },
}

/// A predicate on one scalar column (`slot` = its index in the bound fields).
#[derive(Debug)]
pub(crate) struct ScalarLeaf<'a> {
    /// The predicate.
    pub(crate) predicate: &'a SqlPredicate,
    /// The column.
    pub(crate) field: &'a BoundField,
    /// Its index into the bound fields.
    pub(crate) slot: usize,
    /// Number of bound fields.
    pub(crate) slots: usize,
    /// The text naming the predicate in the session's memo of truth values (none when it
    /// cannot be memoized; [`super::truths::predicate_text`]), made once per leaf.
    memo_text: Option<String>,
}

impl<'a> ScalarLeaf<'a> {
    /// `predicate` on `field`, bound at `slot` of `slots` fields.
    pub(crate) fn new(
        predicate: &'a SqlPredicate,
        field: &'a BoundField,
        slot: usize,
        slots: usize,
    ) -> Self {
        let memo_text = super::truths::predicate_text(field.id, slot, slots, predicate);
        Self {
            predicate,
            field,
            slot,
            slots,
            memo_text,
        }
    }
}

/// The open data file of `fragment` holding field `field_id`, and the field's index in it;
/// `None` when no data file holds it (every value is null).
pub(crate) async fn open_column(
    dataset: &DatasetVersion,
    fragment: &Fragment,
    field_id: i32,
    stats: &IoStats,
) -> Result<Option<(crate::lance::data_file::DataFileReader, usize)>> {
    let Some(file) = file_holding(dataset, fragment, field_id) else {
        return Ok(None);
    };
    let opened = dataset
        .open_data_field(fragment, file, field_id, stats)
        .await?;
    Ok(Some(opened))
}

/// Open the data files of `fragments` holding `field_id` and read their page init of the
/// field when it takes at most [`MAX_EAGER_INIT_PAGES`] pages, through the session caches:
/// a later read of rows of that column then reads only their values. Best effort — an
/// error is left for that read to report (nothing may need reading at all).
pub(crate) async fn prepare_column(
    dataset: &DatasetVersion,
    fragments: &[&Fragment],
    field_id: i32,
    stats: &IoStats,
) {
    let opens = fragments.iter().map(|fragment| async move {
        if let Ok(Some((reader, index))) = open_column(dataset, fragment, field_id, stats).await {
            let pages = reader.pages_needing_init(Some(&[index]), 0, MAX_EAGER_INIT_PAGES);
            let _ = reader.prefetch_page_inits(&pages, stats).await;
        }
    });
    futures::future::join_all(opens).await;
}

/// At most this many pages of a column have their init read by [`prepare_column`].
const MAX_EAGER_INIT_PAGES: usize = 8;

/// Whether opening the data file of `fragment` holding `field_id` needs no request (its
/// metadata is cached, or no file holds the field).
pub(crate) async fn column_is_cached(
    dataset: &DatasetVersion,
    fragment: &Fragment,
    field_id: i32,
) -> bool {
    let Some(file) = file_holding(dataset, fragment, field_id) else {
        return true;
    };
    let Some(size) = file.size_bytes else {
        return false;
    };
    dataset
        .is_file_metadata_cached(&dataset.data_file_path(file), size)
        .await
}

/// The data file of `fragment` holding field `field_id`. Data files list the leaf field
/// ids of nested columns (a list column's items), not always the column's own id.
fn file_holding<'a>(
    dataset: &DatasetVersion,
    fragment: &'a Fragment,
    field_id: i32,
) -> Option<&'a crate::lance::dataset::DataFile> {
    let schema = &dataset.manifest().schema;
    fragment.files.iter().find(|f| {
        f.fields.contains(&field_id)
            || f.fields
                .iter()
                .any(|id| descends_from(schema, *id, field_id))
    })
}

/// Whether field `id` is a (transitive) child of field `ancestor`.
fn descends_from(schema: &crate::lance::dataset::Schema, id: i32, ancestor: i32) -> bool {
    let mut current = schema.field_by_id(id);
    // The parent chain is at most the schema's depth; the bound guards a cyclic schema.
    for _ in 0..schema.fields.len() {
        match current {
            Some(f) if f.parent_id == ancestor => return true,
            Some(f) if f.parent_id >= 0 => current = schema.field_by_id(f.parent_id),
            _ => return false,
        }
    }
    false
}

/// The values of field `field_id` — a top-level column or a child of a struct column —
/// at `offsets` (sorted, unique) of `fragment`; `None` when no data file holds it. A struct
/// column is read once and its child taken out, null where the struct is null.
async fn read_field(
    dataset: &DatasetVersion,
    fragment: &Fragment,
    field_id: i32,
    offsets: Vec<u64>,
    stats: &IoStats,
) -> Result<Option<ArrayRef>> {
    let n = offsets.len();
    let chain = ancestry(&dataset.manifest().schema, field_id)?;
    let Some((reader, index)) = open_column(dataset, fragment, chain[0], stats).await? else {
        return Ok(None);
    };
    let selection = if n as u64 == fragment.physical_rows {
        RowSelection::Range(0..fragment.physical_rows)
    } else {
        RowSelection::Rows(offsets)
    };
    let batch = reader.read_rows(&[index], &selection, stats).await?;
    if batch.num_rows() != n {
        return Err(Error::corrupt("reader returned fewer rows than asked")
            .at(reader.path().as_ref(), None));
    }
    let mut array = std::sync::Arc::clone(batch.column(0));
    for id in &chain[1..] {
        array = struct_child(&array, &dataset.manifest().schema, *id)
            .map_err(|e| e.at(reader.path().as_ref(), None))?;
    }
    Ok(Some(array))
}

/// The top-level column that holds field `field_id` (itself, or the struct it is a child
/// of): the column a data file is opened for.
pub(crate) fn top_level_column(
    schema: &crate::lance::dataset::Schema,
    field_id: i32,
) -> Result<i32> {
    Ok(ancestry(schema, field_id)?[0])
}

/// The ids from the top-level ancestor of `field_id` down to it.
fn ancestry(schema: &crate::lance::dataset::Schema, field_id: i32) -> Result<Vec<i32>> {
    let mut chain = vec![field_id];
    // The parent chain is at most the schema's depth; the bound guards a cyclic schema.
    for _ in 0..schema.fields.len() {
        let parent = schema
            .field_by_id(chain[chain.len() - 1])
            .map(|f| f.parent_id);
        match parent {
            Some(p) if p >= 0 => chain.push(p),
            Some(_) => {
                chain.reverse();
                return Ok(chain);
            }
            None => break,
        }
    }
    Err(Error::corrupt(format!(
        "schema: field {field_id} has no top-level ancestor"
    )))
}

/// Child `id` of the struct `array`, null where the struct is null.
fn struct_child(
    array: &ArrayRef,
    schema: &crate::lance::dataset::Schema,
    id: i32,
) -> Result<ArrayRef> {
    let name = schema
        .field_by_id(id)
        .map(|f| f.name.as_str())
        .unwrap_or("");
    let parent = array
        .as_any()
        .downcast_ref::<arrow_array::StructArray>()
        .ok_or_else(|| {
            Error::unsupported(format!(
                "field {name:?} is a child of a {} column, not of a struct",
                array.data_type()
            ))
        })?;
    let child = parent
        .column_by_name(name)
        .ok_or_else(|| Error::corrupt(format!("struct column read without its child {name:?}")))?;
    let nulls = arrow_buffer::NullBuffer::union(parent.nulls(), child.nulls());
    let data = child.to_data().into_builder().nulls(nulls).build()?;
    Ok(arrow_array::make_array(data))
}

/// The truth of a one-column predicate on each value of `array` (`None` = all null),
/// through the one evaluator.
pub(crate) fn evaluate_column(
    predicate: &SqlPredicate,
    slot: usize,
    slots: usize,
    array: Option<&ArrayRef>,
    rows: usize,
) -> Result<Vec<Option<bool>>> {
    let mut columns: Vec<Option<KeyColumn>> = vec![None; slots.max(slot + 1)];
    let Some(array) = array else {
        let nulls = ColumnsRow {
            columns: &columns,
            row: 0,
        };
        return Ok(vec![eval_predicate(predicate, &nulls); rows]);
    };
    if array.data_type().is_nested() {
        return nested_null_test(predicate, slot, array);
    }
    // A dictionary column is compared by its values.
    let array = match array.data_type() {
        arrow_schema::DataType::Dictionary(_, values) => arrow_cast::cast(array, values)?,
        _ => std::sync::Arc::clone(array),
    };
    let keys = KeyColumn::new(&array)?;
    let len = keys.len();
    columns[slot] = Some(keys);
    Ok((0..len)
        .map(|row| {
            eval_predicate(
                predicate,
                &ColumnsRow {
                    columns: &columns,
                    row,
                },
            )
        })
        .collect())
}

/// The truth of `predicate` on a nested column (a list or a struct): the binder allows
/// only `IS [NOT] NULL` on one, which tests the value as a whole.
fn nested_null_test(
    predicate: &SqlPredicate,
    slot: usize,
    array: &ArrayRef,
) -> Result<Vec<Option<bool>>> {
    match predicate {
        SqlPredicate::IsNull { field, negated } if *field == slot => Ok((0..array.len())
            .map(|row| Some(array.is_null(row) != *negated))
            .collect()),
        _ => Err(Error::unsupported(format!(
            "a {} column is only tested with IS [NOT] NULL",
            array.data_type()
        ))),
    }
}

/// The truth of a leaf on `offsets` (sorted, unique) of `fragment`.
async fn evaluate_fragment(
    dataset: &DatasetVersion,
    leaf: &DataLeaf<'_>,
    fragment: &Fragment,
    offsets: Vec<u64>,
    stats: &IoStats,
) -> Result<Vec<Option<bool>>> {
    match leaf {
        DataLeaf::AnyElement(typed) => {
            list_data::evaluate_rows(dataset, typed, fragment, offsets, stats).await
        }
        DataLeaf::ListHas {
            test,
            values,
            field,
        } => {
            let n = offsets.len();
            let Some((reader, index)) = open_column(dataset, fragment, field.id, stats).await?
            else {
                return Ok(vec![None; n]);
            };
            let batch = reader
                .read_rows(&[index], &RowSelection::Rows(offsets), stats)
                .await?;
            if batch.num_rows() != n {
                return Err(Error::corrupt("reader returned fewer rows than asked")
                    .at(reader.path().as_ref(), None));
            }
            crate::index::sql::list_has::list_has(batch.column(0), *test, values)
                .map_err(|e| e.at(reader.path().as_ref(), None))
        }
        DataLeaf::Scalar(scalar) => {
            evaluate_scalar(dataset, scalar, fragment, offsets, stats).await
        }
    }
}

/// The truth of a scalar leaf on `offsets` of `fragment`: what the session memo knows
/// ([`super::truths`]), the rest read and evaluated (and added to the memo).
async fn evaluate_scalar(
    dataset: &DatasetVersion,
    leaf: &ScalarLeaf<'_>,
    fragment: &Fragment,
    offsets: Vec<u64>,
    stats: &IoStats,
) -> Result<Vec<Option<bool>>> {
    let evaluate = |offsets: Vec<u64>| async move {
        let n = offsets.len();
        let array = read_field(dataset, fragment, leaf.field.id, offsets, stats).await?;
        evaluate_column(leaf.predicate, leaf.slot, leaf.slots, array.as_ref(), n)
    };
    let Some(key) = truths_key(dataset, fragment, leaf)? else {
        return evaluate(offsets).await;
    };
    let memo = super::truths::memo(dataset);
    let mut known = memo
        .get(&key)
        .await
        .map(|t| (*t).clone())
        .unwrap_or_default();
    let missing = known.missing(&offsets);
    if !missing.is_empty() {
        let truth = evaluate(missing.clone()).await?;
        known.record(&missing, &truth);
        known.weigh_key(&key);
        memo.insert(key, std::sync::Arc::new(known.clone())).await;
    }
    Ok(offsets.iter().map(|&o| known.truth(o)).collect())
}

/// The memo key of a scalar leaf on `fragment`: the data file holding its column (when the
/// manifest gives its size) and the predicate as the evaluator reads it.
fn truths_key(
    dataset: &DatasetVersion,
    fragment: &Fragment,
    leaf: &ScalarLeaf<'_>,
) -> Result<Option<crate::io::cache::CacheKey<String>>> {
    let Some(text) = &leaf.memo_text else {
        return Ok(None);
    };
    let column = top_level_column(&dataset.manifest().schema, leaf.field.id)?;
    let Some(file) = file_holding(dataset, fragment, column) else {
        return Ok(None);
    };
    let Some(size) = file.size_bytes else {
        return Ok(None);
    };
    let path = dataset.data_file_path(file);
    Ok(Some(super::truths::key(path.as_ref(), size, text.clone())))
}

/// The rows of `rows` (row addresses of current fragments) where `leaf` has the wanted
/// truth value; every fragment is read concurrently.
pub(crate) async fn rows_with_value(
    dataset: &DatasetVersion,
    leaf: &DataLeaf<'_>,
    want: Want,
    rows: &RoaringTreemap,
    stats: &IoStats,
) -> Result<RoaringTreemap> {
    let manifest = std::sync::Arc::clone(dataset.manifest());
    let mut per_fragment: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for a in rows.iter() {
        per_fragment
            .entry(a >> 32)
            .or_default()
            .push(a & 0xFFFF_FFFF);
    }
    let wanted = Some(want == Want::True);
    let reads = per_fragment.into_iter().filter_map(|(id, offsets)| {
        let fragment = manifest.fragment(id)?;
        Some(async move {
            let truth = evaluate_fragment(dataset, leaf, fragment, offsets.clone(), stats).await?;
            let base = id << 32;
            Ok::<_, Error>(
                offsets
                    .into_iter()
                    .zip(truth)
                    .filter(|(_, t)| *t == wanted)
                    .map(|(o, _)| base | o)
                    .collect::<Vec<u64>>(),
            )
        })
    });
    let mut out = RoaringTreemap::new();
    for found in futures::future::try_join_all(reads).await? {
        out.extend(found);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::types::Int32Type;
    use arrow_array::ListArray;

    use super::*;
    use crate::index::sql::expr::CompareOp;

    fn lists() -> ArrayRef {
        Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(vec![
            Some(vec![Some(1)]),
            None,
            Some(vec![]),
        ]))
    }

    #[test]
    fn a_list_is_null_or_not_as_a_whole() {
        let is_null = SqlPredicate::IsNull {
            field: 0,
            negated: false,
        };
        let got = evaluate_column(&is_null, 0, 1, Some(&lists()), 3).unwrap();
        assert_eq!(got, vec![Some(false), Some(true), Some(false)]);
        let not_null = SqlPredicate::IsNull {
            field: 0,
            negated: true,
        };
        let got = evaluate_column(&not_null, 0, 1, Some(&lists()), 3).unwrap();
        assert_eq!(got, vec![Some(true), Some(false), Some(true)]);
    }

    #[test]
    fn a_list_is_not_compared_with_a_value() {
        let compare = SqlPredicate::Compare {
            field: 0,
            op: CompareOp::Eq,
            value: Some(crate::index::key::Key::Int(1)),
        };
        let err = evaluate_column(&compare, 0, 1, Some(&lists()), 3).unwrap_err();
        assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    }
}
