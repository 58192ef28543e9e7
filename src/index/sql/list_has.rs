//! `array_has_any` / `array_has_all` / `array_contains` evaluated on list data (fragments
//! no label list index covers, rechecks), with lance 14's semantics: NULL for a null list, null
//! elements never match, an empty list is FALSE.

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::index::key::{Key, KeyColumn};

/// A list membership test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListTest {
    /// `array_has_any` (and `array_contains` / `array_has` of one value).
    Any,
    /// `array_has_all`.
    All,
}

/// The truth of the test on each list of `array` (List or LargeList); `values` sorted.
pub(crate) fn list_has(
    array: &ArrayRef,
    test: ListTest,
    values: &[Key],
) -> Result<Vec<Option<bool>>> {
    let (offsets, items, nulls): (Vec<usize>, ArrayRef, Option<arrow_buffer::NullBuffer>) =
        match array.data_type() {
            DataType::List(_) => {
                let l = array.as_list::<i32>();
                (
                    l.value_offsets().iter().map(|o| *o as usize).collect(),
                    Arc::clone(l.values()),
                    l.nulls().cloned(),
                )
            }
            DataType::LargeList(_) => {
                let l = array.as_list::<i64>();
                (
                    l.value_offsets().iter().map(|o| *o as usize).collect(),
                    Arc::clone(l.values()),
                    l.nulls().cloned(),
                )
            }
            other => {
                return Err(Error::unsupported(format!(
                    "array_has_* on a {other} column (lists only)"
                )))
            }
        };
    let keys = KeyColumn::new(&items)?;
    let mut out = Vec::with_capacity(array.len());
    for row in 0..array.len() {
        if nulls.as_ref().is_some_and(|n| n.is_null(row)) {
            out.push(None);
            continue;
        }
        let (start, end) = (offsets[row], offsets[row + 1]);
        if start > end || end > keys.len() {
            return Err(Error::corrupt(format!(
                "list {row} spans items {start}..{end} of {}",
                keys.len()
            )));
        }
        let mut found = vec![false; values.len()];
        for i in start..end {
            if let Some(k) = keys.get(i) {
                if let Ok(pos) = values.binary_search_by(|v| v.as_key_ref().cmp(&k)) {
                    found[pos] = true;
                }
            }
        }
        out.push(Some(match test {
            ListTest::Any => found.iter().any(|f| *f),
            ListTest::All => !values.is_empty() && found.iter().all(|f| *f),
        }));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::builder::{ListBuilder, StringBuilder};

    use super::*;

    #[test]
    fn nulls_and_empty_lists() {
        let mut b = ListBuilder::new(StringBuilder::new());
        b.append_value([Some("a"), None, Some("b")]);
        b.append_null();
        b.append_value(Vec::<Option<&str>>::new());
        b.append_value([None::<&str>]);
        b.append_value([Some("b")]);
        let array: ArrayRef = Arc::new(b.finish());
        let ab = [Key::Bytes("a".into()), Key::Bytes("b".into())];
        assert_eq!(
            list_has(&array, ListTest::Any, &ab).unwrap(),
            vec![Some(true), None, Some(false), Some(false), Some(true)]
        );
        assert_eq!(
            list_has(&array, ListTest::All, &ab).unwrap(),
            vec![Some(true), None, Some(false), Some(false), Some(false)]
        );
    }
}
