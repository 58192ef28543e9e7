//! Reads of nested 2.3 sparse pages: the [`SparseStructuralPlan`] (decoded once at page
//! init and cached) projects the wanted rows layer by layer onto leaf-slot ranges; only the
//! values of those slots are read (chunked: the chunks holding them; zipped: the
//! materialized slots among them; constant/none: nothing). When no selected row reaches a
//! leaf slot, the plan has no ranges at all.

use std::sync::Arc;

use arrow_array::{Array, UInt64Array};
use arrow_schema::DataType;
use bytes::Bytes;

use super::sparse::{SparseInit, SparsePage, SparseValueInit, SparseValues};
use super::sparse_plan::SparseStructuralPlan;
use super::structure::LeafData;
use super::values::LeafBuilder;
use super::{PageReadPlan, PlanDetail, RowRanges};
use crate::error::{Error, Result};

impl SparseStructuralPlan {
    /// Plan the value read of page-local `rows`.
    pub fn plan_values(
        &self,
        page: &SparsePage,
        init: &SparseInit,
        rows: &RowRanges,
    ) -> Result<PageReadPlan> {
        let projection = self.project(rows)?;
        let mut plan = match (&page.values, &init.values) {
            (SparseValues::Chunked(m), SparseValueInit::Chunked(i)) => {
                m.plan(i, &projection.leaf_ranges)?
            }
            (SparseValues::Zipped(z), SparseValueInit::Zipped(offsets)) => {
                z.plan_with_offsets(offsets.as_deref(), &self.ordinals(&projection.leaf_ranges)?)?
            }
            (SparseValues::Constant(_) | SparseValues::None, _) => PageReadPlan {
                ranges: Vec::new(),
                detail: PlanDetail::NoData,
                projection: None,
            },
            (SparseValues::Indexed, _) => {
                return Err(Error::unsupported("sparse pages with indexed values"))
            }
            _ => return Err(Error::corrupt("sparse init does not match its value plane")),
        };
        plan.projection = Some(Arc::new(projection));
        Ok(plan)
    }

    /// Decode page-local `rows` into the leaf's slots and values.
    pub fn read(
        &self,
        page: &SparsePage,
        init: &SparseInit,
        rows: &RowRanges,
        plan: &PageReadPlan,
        bytes: &[Bytes],
        leaf_type: &DataType,
    ) -> Result<LeafData> {
        // The projection made while planning these rows, or a fresh one for a plan made
        // elsewhere.
        let projection = match &plan.projection {
            Some(p) => Arc::clone(p),
            None => Arc::new(self.project(rows)?),
        };
        let leaf_len = super::count_rows(&projection.leaf_ranges) as usize;
        let mut out = LeafBuilder::new(leaf_type)?;
        let values = match (&page.values, &init.values) {
            (SparseValues::Chunked(m), SparseValueInit::Chunked(i)) => {
                m.decode_into(i, &projection.leaf_ranges, plan, bytes, &mut out)?;
                out.finish()?
            }
            (SparseValues::Zipped(z), SparseValueInit::Zipped(_)) => {
                z.decode_into(
                    &self.ordinals(&projection.leaf_ranges)?,
                    plan,
                    bytes,
                    &mut out,
                )?;
                let materialized_values = out.finish()?;
                let indices: UInt64Array =
                    self.spread(&projection.leaf_ranges)?.into_iter().collect();
                crate::ensure_corrupt!(
                    indices.len() - indices.null_count() == materialized_values.len(),
                    "{} materialized slots but {} zipped values",
                    indices.len() - indices.null_count(),
                    materialized_values.len()
                );
                arrow_select::take::take(materialized_values.as_ref(), &indices, None)?
            }
            (SparseValues::Constant(scalar), _) => {
                let value = super::constant::inline_scalar(scalar, leaf_type)?;
                let indices: UInt64Array =
                    self.spread(&projection.leaf_ranges)?.into_iter().collect();
                for i in 0..indices.len() {
                    if indices.is_valid(i) {
                        out.push_repeated(&value, 0, 1)?;
                    } else {
                        out.push_nulls(1)?;
                    }
                }
                out.finish()?
            }
            (SparseValues::None, _) => {
                out.push_nulls(leaf_len)?;
                out.finish()?
            }
            (SparseValues::Indexed, _) => {
                return Err(Error::unsupported("sparse pages with indexed values"))
            }
            _ => return Err(Error::corrupt("sparse init does not match its value plane")),
        };
        crate::ensure_corrupt!(
            values.len() == leaf_len,
            "{} values for {leaf_len} leaf slots",
            values.len()
        );
        let layers = Arc::try_unwrap(projection).map_or_else(|p| p.layers.clone(), |p| p.layers);
        Ok(LeafData { layers, values })
    }
}
