//! Checking a filter without reading anything: whether the indices bound its answer and how
//! exactly they answer it, decided from the manifest alone (the choice the planner makes
//! before it opens an index). A query engine asks this synchronously (DataFusion's filter
//! pushdown) and plans only the filters it then scans.

use super::plan::{choose_leaves, full_scan_reason, Choice, Chosen};
use super::tree::shape;
use super::FilterOptions;
use crate::error::{Error, Result};
use crate::index::kind::{Exactness, IndexKind, IndexLeaf, IndexSegments};
use crate::index::sql::bind::{BoundPredicate, SchemaScope};
use crate::index::sql::parsed::ParsedFilter;
use crate::lance::dataset::DatasetVersion;

/// How the indices would answer `filter` on `dataset`: `Candidates` when some leaf is
/// answered by candidates that execution rechecks; the errors [`super::plan`] gives for a
/// filter no index bounds (unless `options` allow a scan) or that does not bind. An index
/// whose files turn out unreadable is found only by planning (which then evaluates its
/// leaves on data where scans are allowed).
pub(crate) fn check(
    dataset: &DatasetVersion,
    filter: &ParsedFilter,
    options: FilterOptions,
    kinds: &[Box<dyn IndexKind>],
) -> Result<Exactness> {
    let manifest = dataset.manifest();
    let bound =
        BoundPredicate::bind_in(&filter.text, &filter.expr, &SchemaScope(&manifest.schema))?;
    let shape = shape(&bound.predicate);
    let choices = choose_leaves(dataset, kinds, &bound, &shape, &[]);
    full_scan_reason(dataset, &bound, &shape, &choices, options)?;
    let mut exactness = Exactness::Exact;
    for (leaf, choice) in &choices {
        if let Some(leaf) = leaf {
            if leaf_exactness(dataset, kinds, leaf, choice)? == Exactness::Candidates {
                exactness = Exactness::Candidates;
            }
        }
    }
    Ok(exactness)
}

/// How the chosen kind answers one leaf (`Exact` for a leaf no index answers: the engine
/// evaluates it).
fn leaf_exactness(
    dataset: &DatasetVersion,
    kinds: &[Box<dyn IndexKind>],
    leaf: &IndexLeaf,
    choice: &Choice,
) -> Result<Exactness> {
    let (kind, index) = match choice {
        Ok(Chosen::Index(k, index)) => (&kinds[*k], index.clone()),
        Ok(Chosen::Itself(k)) => (
            &kinds[*k],
            IndexSegments {
                name: String::new(),
                segments: Vec::new(),
            },
        ),
        Err(_) => return Ok(Exactness::Exact),
    };
    kind.check(dataset, &index, leaf)
        .map_err(|why| Error::InvalidArgument(format!("{}: {why}", leaf.text)))
}
