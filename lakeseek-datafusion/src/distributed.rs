//! Sessions for SQL over lakeseek tables, single-node or distributed over workers with
//! `datafusion-distributed`, and the task-count / leaf-splitting policy for lakeseek scans.

use std::sync::Arc;

use datafusion::common::{DataFusionError, Result};
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_distributed::{
    DesiredTaskCountEvent, DesiredTaskCountEventResponse, DistributedExt, ScaleUpLeafNodeEvent,
    ScaleUpLeafNodeEventResponse, SessionStateBuilderExt, WorkerResolver,
};
use url::Url;

use crate::codec::LakeseekCodec;
use crate::exec::LakeseekScanExec;
use crate::table::POINT_LOOKUP_ROWS;
use crate::worker::DatasetResolver;
use crate::worker_errors::NamingChannelResolver;

/// A fixed list of worker URLs.
#[derive(Debug, Clone)]
struct StaticWorkers(Vec<Url>);

impl WorkerResolver for StaticWorkers {
    fn get_urls(&self) -> Result<Vec<Url>, DataFusionError> {
        Ok(self.0.clone())
    }
}

/// A DataFusion session for SQL over [`crate::LakeseekTable`]s, with the `any_element` UDF,
/// the `nearest(..)` and `search(..)` table functions and DataFusion's array functions. With `workers` (`http://host:port` of
/// [`crate::serve_worker`] processes) plans run distributed over them: a scan over many
/// fragments becomes one task per fragment group (at most one per worker), while point
/// lookups (up to 1,024 row addresses) and single-group scans stay on this process.
pub fn session_context(workers: &[Url]) -> Result<SessionContext> {
    let mut config = SessionConfig::new().with_information_schema(true);
    if !workers.is_empty() {
        // Enough fragment groups that a many-fragment scan can give every worker a task.
        let partitions = config.target_partitions().max(workers.len());
        config = config.with_target_partitions(partitions);
    }
    let mut builder = SessionStateBuilder::new()
        .with_config(config)
        .with_default_features();
    if !workers.is_empty() {
        let resolver = Arc::new(DatasetResolver::default());
        builder = builder
            .with_distributed_worker_resolver(StaticWorkers(workers.to_vec()))
            .with_distributed_channel_resolver(NamingChannelResolver::default())
            .with_distributed_planner()
            .with_distributed_user_codec(LakeseekCodec::new(resolver))
            .with_distributed_desired_task_count_handler(desired_task_count)
            .with_distributed_scale_up_leaf_node_handler(scale_up_leaf);
    }
    let ctx = SessionContext::from(builder.build());
    ctx.register_udf(crate::any_element_udf());
    ctx.register_udtf("nearest", crate::nearest_function());
    ctx.register_udtf("search", crate::search_function());
    Ok(ctx)
}

/// Tasks a lakeseek scan wants: one for point lookups and single-group scans, else one
/// per fragment group.
fn desired_task_count(
    ev: DesiredTaskCountEvent<'_>,
) -> Option<Result<DesiredTaskCountEventResponse>> {
    let scan = ev.plan.downcast_ref::<LakeseekScanExec>()?;
    let groups = scan.all_groups();
    let taken: Option<usize> = groups.iter().map(|g| g.rows.as_ref().map(Vec::len)).sum();
    let point_lookup = taken.is_some_and(|n| n <= POINT_LOOKUP_ROWS);
    Some(Ok(if point_lookup || groups.len() <= 1 {
        DesiredTaskCountEventResponse::maximum(1)
    } else {
        DesiredTaskCountEventResponse::desired(groups.len())
    }))
}

/// Split a lakeseek scan into `task_count` tasks of contiguous fragment groups.
fn scale_up_leaf(ev: ScaleUpLeafNodeEvent<'_>) -> Option<Result<ScaleUpLeafNodeEventResponse>> {
    let scan = ev.plan.downcast_ref::<LakeseekScanExec>()?;
    Some(Ok(ScaleUpLeafNodeEventResponse::new(Arc::new(
        scan.split_into_tasks(ev.task_count),
    ))))
}
