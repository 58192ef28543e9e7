//! Errors that name the worker. datafusion-distributed reports a worker that dies while a
//! query runs as a bare transport error (`h2 protocol error: error reading a body from
//! connection ... broken pipe`); every call to a worker and every item of its streams is
//! wrapped here with the worker's URL, so the error says which worker failed.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::RecordBatch;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use datafusion_distributed::grpc::DefaultChannelResolver;
use datafusion_distributed::{
    ChannelResolver, CoordinatorToWorkerMsg, ExecuteTaskRequest, GetWorkerInfoRequest,
    GetWorkerInfoResponse, WorkerChannel, WorkerToCoordinatorMsg,
};
use futures::stream::BoxStream;
use futures::StreamExt;
use url::Url;

/// datafusion-distributed's channel resolver (one cached gRPC channel per worker URL) whose
/// channels name their worker in every error. Cheap to clone (clones share the channels).
#[derive(Clone, Default)]
pub(crate) struct NamingChannelResolver(Arc<DefaultChannelResolver>);

/// `e` with the worker it came from, unless it already names it.
fn naming(url: &Url, e: DataFusionError) -> DataFusionError {
    if e.to_string().contains(url.as_str()) {
        e
    } else {
        e.context(format!("lakeseek worker {url}"))
    }
}

#[async_trait]
impl ChannelResolver for NamingChannelResolver {
    async fn get_worker_client_for_url(&self, url: &Url) -> Result<Box<dyn WorkerChannel>> {
        let inner = self.0.get_worker_client_for_url(url).await;
        let inner = inner.map_err(|e| naming(url, e))?;
        Ok(Box::new(NamedChannel {
            url: url.clone(),
            inner,
        }))
    }
}

/// A worker channel whose errors name `url`.
struct NamedChannel {
    url: Url,
    inner: Box<dyn WorkerChannel>,
}

impl NamedChannel {
    /// `stream` with every error naming the worker.
    fn named<T: Send + 'static>(
        &self,
        stream: BoxStream<'static, Result<T>>,
    ) -> BoxStream<'static, Result<T>> {
        let url = self.url.clone();
        stream.map(move |r| r.map_err(|e| naming(&url, e))).boxed()
    }
}

#[async_trait]
impl WorkerChannel for NamedChannel {
    async fn coordinator_channel(
        &mut self,
        headers: http::HeaderMap,
        c2w_stream: BoxStream<'static, CoordinatorToWorkerMsg>,
    ) -> Result<BoxStream<'static, Result<WorkerToCoordinatorMsg>>> {
        let opened = self.inner.coordinator_channel(headers, c2w_stream).await;
        let stream = opened.map_err(|e| naming(&self.url, e))?;
        Ok(self.named(stream))
    }

    async fn execute_task(
        &mut self,
        headers: http::HeaderMap,
        request: ExecuteTaskRequest,
        metrics: ExecutionPlanMetricsSet,
        task_ctx: &Arc<TaskContext>,
    ) -> Result<Vec<BoxStream<'static, Result<RecordBatch>>>> {
        let started = self
            .inner
            .execute_task(headers, request, metrics, task_ctx)
            .await;
        let streams = started.map_err(|e| naming(&self.url, e))?;
        Ok(streams.into_iter().map(|s| self.named(s)).collect())
    }

    async fn get_worker_info(
        &mut self,
        request: GetWorkerInfoRequest,
    ) -> Result<GetWorkerInfoResponse> {
        let info = self.inner.get_worker_info(request).await;
        info.map_err(|e| naming(&self.url, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_their_worker_once() {
        let url = Url::parse("http://127.0.0.1:50052/").unwrap();
        let e = naming(&url, DataFusionError::Execution("broken pipe".into()));
        let text = e.to_string();
        assert!(
            text.contains("127.0.0.1:50052") && text.contains("broken pipe"),
            "{text}"
        );
        let again = naming(&url, e).to_string();
        assert_eq!(again.matches("127.0.0.1:50052").count(), 1, "{again}");
    }
}
