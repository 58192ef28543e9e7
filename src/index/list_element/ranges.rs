//! Planning `any_element(col, 'predicate')` against a list element index (spec:
//! "Accelerated Queries"). Pure: bound predicate + resolved keys → ranges of encoded
//! tuples to search in the target BTree, and how far the index answers the call.
//!
//! * The predicate must be a conjunction that fixes the **first key** with `=`, `IN` or
//!   `IS NULL`; following keys may be fixed in order, and the last fixed key may be
//!   followed by **one range** on the next key (all `<`, `<=`, `>`, `>=`, `BETWEEN`
//!   conjuncts on that key, intersected). Each combination of fixed values is one range
//!   of encoded tuples ([`EncodedRange`]).
//! * Every other conjunct is **residual**: the ranges then give a superset of the TRUE
//!   rows and the call must be rechecked on their lists. With no residual the answer is
//!   exact. If the first key is not fixed, the index is not used.
//! * For `NOT any_element(...)` the NULL rows are needed too. They come from the index
//!   only when every conjunct is answered from the keys and is UNKNOWN exactly when its
//!   key is null (`=`, `IN` without NULL literals, ranges with non-null bounds; `IS NULL`
//!   is never UNKNOWN): for each non-empty set of constrained keys taken as null, the
//!   other constrained keys matching, one range per combination of IN values — up to
//!   2^k − 1 sets, stopped past [`PlanOptions::max_null_ranges`].

use std::ops::Bound;

use super::key_encoding::KeyEncoder;
use super::resolve::ResolvedKey;
use super::tuple_range::EncodedRange;
use crate::error::Result;
use crate::index::sql::bind::{
    describe, BoundPredicate as BoundElementPredicate, SqlPredicate as ElementPredicate,
};
use crate::index::sql::expr::CompareOp;
use crate::index::sql::value::ElementValue;

/// Limits of the planner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PlanOptions {
    /// Most ranges searched for the TRUE rows; past it, trailing fixed keys become
    /// residual (the first key is always used).
    pub max_ranges: usize,
    /// Most ranges enumerated for the NULL rows of `NOT any_element`; past it, NOT is
    /// evaluated on the data.
    pub max_null_ranges: usize,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            max_ranges: 4096,
            max_null_ranges: 4096,
        }
    }
}

/// How far the index answers the TRUE rows of the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IndexAnswer {
    /// The rows found in [`AnyElementPlan::true_ranges`] are exactly the TRUE rows.
    Exact,
    /// The rows found are a superset of the TRUE rows; evaluate the call on them.
    SupersetWithRecheck,
    /// The index cannot narrow the call; evaluate it on the data.
    NotUsed,
}

/// Whether the NULL rows of the call come from the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NullRows {
    /// NULL rows = (rows whose target value is null, i.e. null lists) ∪ (rows found in
    /// these ranges), minus the TRUE rows.
    FromIndex {
        /// Ranges of tuples on which the predicate is UNKNOWN.
        ranges: Vec<EncodedRange>,
    },
    /// The index does not determine them.
    NotDetermined {
        /// Why (for `--explain`).
        reason: String,
    },
}

/// The plan for one `any_element` call.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AnyElementPlan {
    /// How far the index answers the TRUE rows.
    pub answer: IndexAnswer,
    /// Why the index is not used (for [`IndexAnswer::NotUsed`]).
    pub not_used_reason: Option<String>,
    /// Current names of the keys fixed by `=`, `IN` or `IS NULL`, in key order.
    pub fixed_keys: Vec<String>,
    /// Current name of the key with a range, if any.
    pub range_key: Option<String>,
    /// Conjuncts not answered from the keys (described).
    pub residual: Vec<String>,
    /// Ranges whose rows hold the TRUE rows (sorted, disjoint).
    pub true_ranges: Vec<EncodedRange>,
    /// The NULL rows, when the index determines them.
    pub null_rows: NullRows,
}

/// What to do for a call, given whether it is negated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CallStrategy {
    /// Result = rows found in the TRUE ranges.
    IndexExact,
    /// Candidates = rows found in the TRUE ranges; evaluate the call on their lists.
    IndexThenRecheck,
    /// `NOT`: result = covered rows − rows found in the TRUE ranges − rows found in the
    /// NULL ranges − rows whose target value is null.
    IndexComplement,
    /// Evaluate the call on the lists of all rows.
    EvaluateOnData {
        /// Why.
        reason: String,
    },
}

impl AnyElementPlan {
    /// The strategy for the call, or for `NOT` the call when `negated`.
    pub(crate) fn strategy(&self, negated: bool) -> CallStrategy {
        match (self.answer, negated) {
            (IndexAnswer::NotUsed, _) => CallStrategy::EvaluateOnData {
                reason: self.not_used_reason.clone().unwrap_or_default(),
            },
            (IndexAnswer::Exact, false) => CallStrategy::IndexExact,
            (IndexAnswer::SupersetWithRecheck, false) => CallStrategy::IndexThenRecheck,
            (_, true) => match &self.null_rows {
                NullRows::FromIndex { .. } if self.answer == IndexAnswer::Exact => {
                    CallStrategy::IndexComplement
                }
                NullRows::FromIndex { .. } => CallStrategy::EvaluateOnData {
                    reason: "the index answers only a superset".into(),
                },
                NullRows::NotDetermined { reason } => CallStrategy::EvaluateOnData {
                    reason: format!(
                        "NOT needs the NULL rows, which the index does not determine: {reason}"
                    ),
                },
            },
        }
    }

    /// Lines for `--explain`.
    pub(crate) fn explain(&self) -> Vec<String> {
        let mut lines = Vec::new();
        match self.answer {
            IndexAnswer::NotUsed => lines.push(format!(
                "list element index not used: {}",
                self.not_used_reason.as_deref().unwrap_or("")
            )),
            IndexAnswer::Exact => lines.push("list element index answers exactly".into()),
            IndexAnswer::SupersetWithRecheck => lines.push(format!(
                "list element index answers a superset; recheck on data for: {}",
                self.residual.join(" AND ")
            )),
        }
        if self.answer != IndexAnswer::NotUsed {
            let mut keys = self.fixed_keys.join(", ");
            if let Some(r) = &self.range_key {
                keys.push_str(&format!(" + range on {r}"));
            }
            lines.push(format!("keys used: {keys}"));
            lines.push(format!(
                "{} encoded range(s) searched:",
                self.true_ranges.len()
            ));
            lines.extend(self.true_ranges.iter().map(|r| format!("  {r}")));
        }
        match &self.null_rows {
            NullRows::FromIndex { ranges } => {
                lines.push(format!(
                    "NULL rows for NOT: null lists + {} range(s):",
                    ranges.len()
                ));
                lines.extend(ranges.iter().map(|r| format!("  {r}")));
            }
            NullRows::NotDetermined { reason } => lines.push(format!(
                "NULL rows for NOT not determined by the index: {reason}"
            )),
        }
        lines
    }
}

/// The constraint a conjunct puts on one key.
#[derive(Debug, Clone)]
enum Constraint {
    /// `=` / `IN` / bare boolean: the key is one of the values.
    Values {
        values: Vec<ElementValue>,
        has_null: bool,
    },
    /// `IS NULL`.
    Null,
    /// A lower (`>`, `>=`) or upper (`<`, `<=`) bound.
    Bound {
        value: ElementValue,
        lower: bool,
        inclusive: bool,
    },
}

/// What the plan fixes for one key.
#[derive(Debug, Clone)]
enum Fixed {
    Values {
        values: Vec<ElementValue>,
        has_null: bool,
    },
    Null,
}

struct KeyRange {
    lower: Option<(Vec<u8>, bool)>,
    upper: Option<(Vec<u8>, bool)>,
}

fn flatten_and<'a>(p: &'a ElementPredicate, out: &mut Vec<&'a ElementPredicate>) {
    match p {
        ElementPredicate::And(v) => v.iter().for_each(|c| flatten_and(c, out)),
        other => out.push(other),
    }
}

/// The key position and constraint of a conjunct the keys can answer.
fn classify(
    p: &ElementPredicate,
    bound: &BoundElementPredicate,
    keys: &[ResolvedKey],
) -> Option<(usize, Constraint)> {
    let key_of = |field: &usize| {
        let id = bound.fields.get(*field)?.id;
        keys.iter().position(|k| k.field_id == id)
    };
    match p {
        ElementPredicate::Compare {
            field,
            op,
            value: Some(value),
        } => {
            let key = key_of(field)?;
            let c = match op {
                CompareOp::Eq => Constraint::Values {
                    values: vec![value.clone()],
                    has_null: false,
                },
                CompareOp::NotEq => return None,
                CompareOp::Lt | CompareOp::LtEq | CompareOp::Gt | CompareOp::GtEq => {
                    Constraint::Bound {
                        value: value.clone(),
                        lower: matches!(op, CompareOp::Gt | CompareOp::GtEq),
                        inclusive: matches!(op, CompareOp::LtEq | CompareOp::GtEq),
                    }
                }
            };
            Some((key, c))
        }
        ElementPredicate::InList {
            field,
            values,
            has_null,
            negated: false,
        } => Some((
            key_of(field)?,
            Constraint::Values {
                values: values.clone(),
                has_null: *has_null,
            },
        )),
        ElementPredicate::IsNull {
            field,
            negated: false,
        } => Some((key_of(field)?, Constraint::Null)),
        ElementPredicate::BoolField(field) => Some((
            key_of(field)?,
            Constraint::Values {
                values: vec![ElementValue::Bool(true)],
                has_null: false,
            },
        )),
        _ => None,
    }
}

/// The keys a plan uses, walked in order: fixed keys, then at most one range.
struct KeyWalk {
    /// What the plan fixes for each leading key.
    fixed: Vec<Fixed>,
    /// The conjunct fixing each of `fixed`.
    fixed_conjunct: Vec<usize>,
    /// The key bounded by a range, with its bounding conjuncts.
    range: Option<(usize, Vec<usize>)>,
}

/// Walk the keys in order: fixed keys, then at most one range (never on the first key).
fn walk_keys(classified: &[Option<(usize, Constraint)>], key_count: usize) -> KeyWalk {
    let mut walk = KeyWalk {
        fixed: Vec::new(),
        fixed_conjunct: Vec::new(),
        range: None,
    };
    for key in 0..key_count {
        let fix = classified.iter().enumerate().find_map(|(i, c)| match c {
            Some((k, Constraint::Values { values, has_null })) if *k == key => Some((
                i,
                Fixed::Values {
                    values: values.clone(),
                    has_null: *has_null,
                },
            )),
            Some((k, Constraint::Null)) if *k == key => Some((i, Fixed::Null)),
            _ => None,
        });
        if let Some((i, f)) = fix {
            walk.fixed.push(f);
            walk.fixed_conjunct.push(i);
            continue;
        }
        let bounds: Vec<usize> = classified
            .iter()
            .enumerate()
            .filter(|(_, c)| matches!(c, Some((k, Constraint::Bound { .. })) if *k == key))
            .map(|(i, _)| i)
            .collect();
        if !bounds.is_empty() && key > 0 {
            walk.range = Some((key, bounds));
        }
        break;
    }
    walk
}

/// Why the index is not used when no conjunct fixes the first key.
fn first_key_not_fixed(keys: &[ResolvedKey], classified: &[Option<(usize, Constraint)>]) -> String {
    let first = keys.first().map_or("?", |k| k.name.as_str());
    let has_range = classified
        .iter()
        .any(|c| matches!(c, Some((0, Constraint::Bound { .. }))));
    if has_range {
        format!("the first key {first:?} has only a range; the index needs it fixed by =, IN or IS NULL")
    } else {
        format!("no conjunct fixes the first key {first:?} with =, IN or IS NULL")
    }
}

/// Keep the number of combinations within `max_ranges` by dropping trailing fixed keys
/// (and then the range, which would follow a dropped key).
fn limit_combinations(walk: &mut KeyWalk, max_ranges: usize) {
    let mut keep = 1;
    let mut product = fixed_count(&walk.fixed[0]);
    for f in &walk.fixed[1..] {
        match product.checked_mul(fixed_count(f)) {
            Some(p) if p <= max_ranges => {
                product = p;
                keep += 1;
            }
            _ => break,
        }
    }
    if keep < walk.fixed.len() {
        walk.fixed.truncate(keep);
        walk.fixed_conjunct.truncate(keep);
        walk.range = None;
    }
}

/// How rows of null lists are found: not when a conjunct is left over or an IN list holds
/// a NULL, else from the index's null ranges.
fn plan_null_rows(
    residual: &[String],
    fixed: &[Fixed],
    fixed_options: &[Vec<Vec<u8>>],
    range: Option<(usize, &KeyRange)>,
    encoder: &KeyEncoder,
    options: &PlanOptions,
) -> Result<NullRows> {
    if let Some(first) = residual.first() {
        return Ok(NullRows::NotDetermined {
            reason: format!("conjunct {first} is not answered from the keys"),
        });
    }
    if fixed
        .iter()
        .any(|f| matches!(f, Fixed::Values { has_null: true, .. }))
    {
        return Ok(NullRows::NotDetermined {
            reason: "an IN list holds a NULL literal".into(),
        });
    }
    null_ranges(fixed, fixed_options, range, encoder, options)
}

/// Plan a bound `any_element` predicate against an index's keys.
pub(crate) fn plan_any_element(
    bound: &BoundElementPredicate,
    keys: &[ResolvedKey],
    encoder: &KeyEncoder,
    options: &PlanOptions,
) -> Result<AnyElementPlan> {
    let mut conjuncts = Vec::new();
    flatten_and(&bound.predicate, &mut conjuncts);
    let classified: Vec<Option<(usize, Constraint)>> =
        conjuncts.iter().map(|c| classify(c, bound, keys)).collect();
    let mut walk = walk_keys(&classified, keys.len());
    if walk.fixed.is_empty() {
        return Ok(not_used(first_key_not_fixed(keys, &classified)));
    }
    limit_combinations(&mut walk, options.max_ranges);
    let mut used = vec![false; conjuncts.len()];
    for &i in &walk.fixed_conjunct {
        used[i] = true;
    }
    let key_range = match &walk.range {
        Some((key, bounds)) => {
            for &i in bounds {
                used[i] = true;
            }
            Some(merge_bounds(*key, bounds, &classified, encoder)?)
        }
        None => None,
    };
    let range_key = walk.range.as_ref().map(|(k, _)| *k);
    let residual: Vec<String> = conjuncts
        .iter()
        .zip(&used)
        .filter(|(_, u)| !**u)
        .map(|(c, _)| describe(c, &bound.fields))
        .collect();
    let mut fixed_options = Vec::with_capacity(walk.fixed.len());
    for (key, f) in walk.fixed.iter().enumerate() {
        fixed_options.push(match f {
            Fixed::Null => vec![encoder.encode_key(key, None)?],
            Fixed::Values { values, .. } => encoded_values(encoder, key, values)?,
        });
    }
    let range = range_key.zip(key_range.as_ref());
    let true_ranges = ranges_for(&fixed_options, range, encoder)?;
    let null_rows = plan_null_rows(
        &residual,
        &walk.fixed,
        &fixed_options,
        range,
        encoder,
        options,
    )?;
    Ok(AnyElementPlan {
        answer: if residual.is_empty() {
            IndexAnswer::Exact
        } else {
            IndexAnswer::SupersetWithRecheck
        },
        not_used_reason: None,
        fixed_keys: keys[..walk.fixed.len()]
            .iter()
            .map(|k| k.name.clone())
            .collect(),
        range_key: range_key.map(|k| keys[k].name.clone()),
        residual,
        true_ranges,
        null_rows,
    })
}

fn not_used(reason: String) -> AnyElementPlan {
    AnyElementPlan {
        answer: IndexAnswer::NotUsed,
        not_used_reason: Some(reason.clone()),
        fixed_keys: vec![],
        range_key: None,
        residual: vec![],
        true_ranges: vec![],
        null_rows: NullRows::NotDetermined { reason },
    }
}

fn fixed_count(f: &Fixed) -> usize {
    match f {
        Fixed::Null => 1,
        Fixed::Values { values, .. } => values.len(),
    }
}

fn encoded_values(
    encoder: &KeyEncoder,
    key: usize,
    values: &[ElementValue],
) -> Result<Vec<Vec<u8>>> {
    let mut out = values
        .iter()
        .map(|v| encoder.encode_key(key, Some(v)))
        .collect::<Result<Vec<_>>>()?;
    out.sort();
    out.dedup();
    Ok(out)
}

/// Intersect the bound conjuncts on the range key; bounds compare by their encodings,
/// which sort like the values.
fn merge_bounds(
    key: usize,
    bounds: &[usize],
    classified: &[Option<(usize, Constraint)>],
    encoder: &KeyEncoder,
) -> Result<KeyRange> {
    let mut range = KeyRange {
        lower: None,
        upper: None,
    };
    for &i in bounds {
        let Some((
            _,
            Constraint::Bound {
                value,
                lower,
                inclusive,
            },
        )) = &classified[i]
        else {
            continue;
        };
        let enc = encoder.encode_key(key, Some(value))?;
        if *lower {
            let tighter = match &range.lower {
                None => true,
                Some((e, incl)) => enc > *e || (enc == *e && *incl && !inclusive),
            };
            if tighter {
                range.lower = Some((enc, *inclusive));
            }
        } else {
            let tighter = match &range.upper {
                None => true,
                Some((e, incl)) => enc < *e || (enc == *e && *incl && !inclusive),
            };
            if tighter {
                range.upper = Some((enc, *inclusive));
            }
        }
    }
    Ok(range)
}

fn bound_of((enc, inclusive): &(Vec<u8>, bool)) -> Bound<&[u8]> {
    if *inclusive {
        Bound::Included(enc.as_slice())
    } else {
        Bound::Excluded(enc.as_slice())
    }
}

/// One range per combination of fixed options (cartesian product, in key order),
/// followed by the range on the next key when there is one.
fn ranges_for(
    fixed_options: &[Vec<Vec<u8>>],
    range: Option<(usize, &KeyRange)>,
    encoder: &KeyEncoder,
) -> Result<Vec<EncodedRange>> {
    let mut prefixes: Vec<Vec<u8>> = vec![Vec::new()];
    for options in fixed_options {
        let mut next = Vec::with_capacity(prefixes.len() * options.len());
        for p in &prefixes {
            for o in options {
                next.push([p.as_slice(), o.as_slice()].concat());
            }
        }
        prefixes = next;
    }
    let mut out = Vec::with_capacity(prefixes.len());
    match range {
        None => out.extend(prefixes.into_iter().map(EncodedRange::with_prefix)),
        Some((key, r)) => {
            // No lower bound: "k > NULL" (comparisons are never TRUE on a null key).
            let null = encoder.encode_key(key, None)?;
            let lower = r
                .lower
                .as_ref()
                .map_or(Bound::Excluded(null.as_slice()), bound_of);
            let upper = r.upper.as_ref().map_or(Bound::Unbounded, bound_of);
            for p in &prefixes {
                out.extend(EncodedRange::with_prefix_and_next_key(p, lower, upper));
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// The tuples on which the predicate is UNKNOWN (see the module docs).
fn null_ranges(
    fixed: &[Fixed],
    fixed_options: &[Vec<Vec<u8>>],
    range: Option<(usize, &KeyRange)>,
    encoder: &KeyEncoder,
    options: &PlanOptions,
) -> Result<NullRows> {
    // Constrained keys: fixed by values, and the range key.
    let value_keys: Vec<usize> = (0..fixed.len())
        .filter(|&k| matches!(fixed[k], Fixed::Values { .. }))
        .collect();
    let k = value_keys.len() + usize::from(range.is_some());
    let limit_reason = || NullRows::NotDetermined {
        reason: format!(
            "more than {} null-key combinations to enumerate",
            options.max_null_ranges
        ),
    };
    if k == 0 {
        // Only IS NULL conjuncts: never UNKNOWN.
        return Ok(NullRows::FromIndex { ranges: vec![] });
    }
    if k > 20 {
        return Ok(limit_reason());
    }
    // Count first, so that nothing is built past the limit.
    let mut total: usize = 0;
    for mask in 1u32..(1 << k) {
        let mut count: usize = 1;
        for (bit, &key) in value_keys.iter().enumerate() {
            if mask & (1 << bit) == 0 {
                count = count.saturating_mul(fixed_options[key].len());
            }
        }
        total = total.saturating_add(count);
        if total > options.max_null_ranges {
            return Ok(limit_reason());
        }
    }
    let mut ranges = Vec::with_capacity(total);
    for mask in 1u32..(1 << k) {
        let mut opts: Vec<Vec<Vec<u8>>> = Vec::with_capacity(fixed.len());
        for (key, options) in fixed_options.iter().enumerate() {
            let null_here = match value_keys.iter().position(|&v| v == key) {
                Some(bit) => mask & (1 << bit) != 0,
                None => true, // IS NULL key: always null
            };
            opts.push(if null_here {
                vec![encoder.encode_key(key, None)?]
            } else {
                options.clone()
            });
        }
        match range {
            Some((key, r)) => {
                let range_null = mask & (1 << value_keys.len()) != 0;
                if range_null {
                    opts.push(vec![encoder.encode_key(key, None)?]);
                    ranges.extend(ranges_for(&opts, None, encoder)?);
                } else {
                    ranges.extend(ranges_for(&opts, Some((key, r)), encoder)?);
                }
            }
            None => ranges.extend(ranges_for(&opts, None, encoder)?),
        }
    }
    ranges.sort();
    ranges.dedup();
    Ok(NullRows::FromIndex { ranges })
}

#[cfg(test)]
mod tests;
