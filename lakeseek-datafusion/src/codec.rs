//! The `PhysicalExtensionCodec` that ships a [`LakeseekScanExec`] to workers: dataset URL,
//! pinned manifest version, output schema (the projection), residual filter, limit and each
//! task's fragment groups with their row addresses. Never storage options or credentials:
//! a worker opens the dataset with its own.

use std::sync::Arc;

use datafusion::arrow::datatypes::Schema;
use datafusion::common::{internal_err, DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::physical_plan::PhysicalExtensionCodec;
use datafusion_proto::protobuf;
use prost::Message;

use crate::exec::{FragmentGroup, LakeseekScanExec, ScanSource, ScanSpec};
use crate::worker::{DatasetResolver, TaskReporter, TaskTally};

/// Encodes and decodes lakeseek scans for distributed execution. Register it on the
/// coordinator's session and on every worker's (the worker entry point,
/// [`crate::serve_worker`], does).
#[derive(Clone)]
pub struct LakeseekCodec {
    resolver: Arc<DatasetResolver>,
    reporter: Option<TaskReporter>,
}

impl std::fmt::Debug for LakeseekCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LakeseekCodec").finish_non_exhaustive()
    }
}

impl LakeseekCodec {
    /// A codec whose decoded scans open their dataset through `resolver`.
    pub fn new(resolver: Arc<DatasetResolver>) -> Self {
        Self {
            resolver,
            reporter: None,
        }
    }

    /// Decoded scans report each finished task to `reporter`.
    pub fn with_reporter(mut self, reporter: Option<TaskReporter>) -> Self {
        self.reporter = reporter;
        self
    }
}

#[derive(Clone, PartialEq, Message)]
struct ScanProto {
    #[prost(string, tag = "1")]
    url: String,
    #[prost(uint64, tag = "2")]
    version: u64,
    #[prost(message, optional, tag = "3")]
    schema: Option<protobuf::Schema>,
    #[prost(string, optional, tag = "4")]
    residual: Option<String>,
    #[prost(uint64, optional, tag = "5")]
    limit: Option<u64>,
    #[prost(message, repeated, tag = "6")]
    tasks: Vec<TaskProto>,
}

#[derive(Clone, PartialEq, Message)]
struct TaskProto {
    #[prost(message, repeated, tag = "1")]
    groups: Vec<GroupProto>,
}

#[derive(Clone, PartialEq, Message)]
struct GroupProto {
    #[prost(uint64, repeated, tag = "1")]
    fragments: Vec<u64>,
    #[prost(bool, tag = "2")]
    has_rows: bool,
    #[prost(uint64, repeated, tag = "3")]
    rows: Vec<u64>,
    #[prost(uint64, optional, tag = "4")]
    known_rows: Option<u64>,
}

fn encode_spec(spec: &ScanSpec) -> Result<ScanProto> {
    Ok(ScanProto {
        url: spec.url.clone(),
        version: spec.version,
        schema: Some(spec.schema.as_ref().try_into()?),
        residual: spec.residual.as_ref().map(ToString::to_string),
        limit: spec.limit.map(|l| l as u64),
        tasks: spec
            .tasks
            .iter()
            .map(|groups| TaskProto {
                groups: groups
                    .iter()
                    .map(|g| GroupProto {
                        fragments: g.fragments.clone(),
                        has_rows: g.rows.is_some(),
                        rows: g.rows.clone().unwrap_or_default(),
                        known_rows: g.known_rows,
                    })
                    .collect(),
            })
            .collect(),
    })
}

fn decode_spec(proto: ScanProto) -> Result<ScanSpec> {
    let schema: Schema = proto
        .schema
        .as_ref()
        .ok_or_else(|| DataFusionError::Internal("lakeseek scan without a schema".into()))?
        .try_into()?;
    let limit = match proto.limit {
        None => None,
        Some(l) => Some(usize::try_from(l).map_err(|_| {
            DataFusionError::Internal(format!("lakeseek scan limit {l} does not fit"))
        })?),
    };
    Ok(ScanSpec {
        url: proto.url,
        version: proto.version,
        schema: Arc::new(schema),
        residual: proto.residual.map(lakeseek::FilterExpr::sql),
        limit,
        tasks: proto
            .tasks
            .into_iter()
            .map(|t| {
                t.groups
                    .into_iter()
                    .map(|g| FragmentGroup {
                        fragments: g.fragments,
                        rows: g.has_rows.then_some(g.rows),
                        known_rows: g.known_rows,
                    })
                    .collect()
            })
            .collect(),
    })
}

impl PhysicalExtensionCodec for LakeseekCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        _ctx: &TaskContext,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if !inputs.is_empty() {
            return internal_err!("LakeseekScanExec has no inputs, got {}", inputs.len());
        }
        let proto = ScanProto::decode(buf)
            .map_err(|e| DataFusionError::Internal(format!("decoding a lakeseek scan: {e}")))?;
        let spec = decode_spec(proto)?;
        let tally = self.reporter.clone().map(|reporter| {
            let partitions = spec.tasks.iter().map(Vec::len).collect();
            Arc::new(TaskTally::new(reporter, partitions))
        });
        let source = ScanSource::Resolver(Arc::clone(&self.resolver), tally);
        Ok(Arc::new(LakeseekScanExec::new(spec, source)))
    }

    fn try_encode(&self, node: Arc<dyn ExecutionPlan>, buf: &mut Vec<u8>) -> Result<()> {
        let Some(exec) = node.downcast_ref::<LakeseekScanExec>() else {
            return internal_err!(
                "LakeseekCodec encodes LakeseekScanExec, not {}",
                node.name()
            );
        };
        encode_spec(&exec.spec)?
            .encode(buf)
            .map_err(|e| DataFusionError::Internal(format!("encoding a lakeseek scan: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::{DataType, Field};

    #[test]
    fn a_scan_round_trips_through_the_codec() {
        let spec = ScanSpec {
            url: "s3://bucket/t.lance".into(),
            version: 7,
            schema: Arc::new(Schema::new(vec![
                Field::new("key", DataType::Utf8, true),
                Field::new("_rowaddr", DataType::UInt64, false),
            ])),
            residual: Some(lakeseek::FilterExpr::sql("any_element(d, 'x = 1')")),
            limit: Some(10),
            tasks: vec![
                vec![FragmentGroup {
                    fragments: vec![0, 1],
                    rows: Some(vec![5, (1 << 32) | 3]),
                    known_rows: Some(2),
                }],
                vec![FragmentGroup {
                    fragments: vec![2],
                    rows: None,
                    known_rows: None,
                }],
            ],
        };
        let codec = LakeseekCodec::new(Arc::new(DatasetResolver::new(vec![(
            "aws_secret_access_key".into(),
            "do-not-ship".into(),
        )])));
        let exec = Arc::new(LakeseekScanExec::new(
            spec.clone(),
            ScanSource::Resolver(Arc::new(DatasetResolver::default()), None),
        ));
        let mut buf = Vec::new();
        codec.try_encode(exec, &mut buf).unwrap();
        assert!(!String::from_utf8_lossy(&buf).contains("do-not-ship"));
        let ctx = TaskContext::default();
        let decoded = codec.try_decode(&buf, &[], &ctx).unwrap();
        let decoded = decoded.downcast_ref::<LakeseekScanExec>().unwrap();
        assert_eq!(decoded.spec, spec);
        assert!(codec.try_decode(&[0xff, 0xff, 0xff], &[], &ctx).is_err());
        let e = codec
            .try_decode(&ScanProto::default().encode_to_vec(), &[], &ctx)
            .unwrap_err();
        assert!(e.to_string().contains("without a schema"), "{e}");
    }
}
