//! The `PhysicalExtensionCodec` that ships a [`LakeseekScanExec`] to workers (dataset URL,
//! pinned manifest version, output schema (the projection), residual filter, limit and each
//! task's fragment groups with their row addresses) and a [`LakeseekQueryExec`] (the
//! `nearest(..)` / `search(..)` query and its options). Never storage options or
//! credentials: a worker opens the dataset with its own.

use std::sync::Arc;

use datafusion::arrow::datatypes::Schema;
use datafusion::common::{internal_err, DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::physical_plan::PhysicalExtensionCodec;
use datafusion_proto::protobuf;
use prost::Message;

use crate::exec::{FragmentGroup, LakeseekScanExec, ScanSource, ScanSpec};
use crate::query_exec::{LakeseekQueryExec, QueryKind, QuerySpec};
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

/// One encoded lakeseek node.
#[derive(Clone, PartialEq, Message)]
struct NodeProto {
    #[prost(oneof = "Node", tags = "1, 2")]
    node: Option<Node>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
enum Node {
    #[prost(message, tag = "1")]
    Scan(ScanProto),
    #[prost(message, tag = "2")]
    Query(QueryProto),
}

#[derive(Clone, PartialEq, Message)]
struct QueryProto {
    #[prost(string, tag = "1")]
    url: String,
    #[prost(uint64, tag = "2")]
    version: u64,
    #[prost(message, optional, tag = "3")]
    schema: Option<protobuf::Schema>,
    #[prost(string, tag = "4")]
    column: String,
    /// The vector of a nearest query.
    #[prost(float, repeated, tag = "5")]
    vector: Vec<f32>,
    /// The text of a full-text search (absent for a nearest query).
    #[prost(string, optional, tag = "6")]
    text: Option<String>,
    #[prost(uint64, optional, tag = "7")]
    k: Option<u64>,
    #[prost(string, repeated, tag = "8")]
    option_keys: Vec<String>,
    #[prost(string, repeated, tag = "9")]
    option_values: Vec<String>,
}

fn encode_query(spec: &QuerySpec) -> Result<QueryProto> {
    let (vector, text) = match &spec.kind {
        QueryKind::Nearest(v) => (v.clone(), None),
        QueryKind::Search(t) => (Vec::new(), Some(t.clone())),
    };
    Ok(QueryProto {
        url: spec.url.clone(),
        version: spec.version,
        schema: Some(spec.schema.as_ref().try_into()?),
        column: spec.column.clone(),
        vector,
        text,
        k: spec.k,
        option_keys: spec.options.iter().map(|(k, _)| k.clone()).collect(),
        option_values: spec.options.iter().map(|(_, v)| v.clone()).collect(),
    })
}

fn decode_query(proto: QueryProto) -> Result<QuerySpec> {
    let schema: Schema = proto
        .schema
        .as_ref()
        .ok_or_else(|| DataFusionError::Internal("lakeseek query without a schema".into()))?
        .try_into()?;
    if proto.option_keys.len() != proto.option_values.len() {
        return internal_err!(
            "lakeseek query with {} option keys and {} values",
            proto.option_keys.len(),
            proto.option_values.len()
        );
    }
    Ok(QuerySpec {
        url: proto.url,
        version: proto.version,
        schema: Arc::new(schema),
        column: proto.column,
        kind: match proto.text {
            Some(t) => QueryKind::Search(t),
            None => QueryKind::Nearest(proto.vector),
        },
        k: proto.k,
        options: proto
            .option_keys
            .into_iter()
            .zip(proto.option_values)
            .collect(),
    })
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
        let proto = NodeProto::decode(buf)
            .map_err(|e| DataFusionError::Internal(format!("decoding a lakeseek node: {e}")))?;
        match proto.node {
            Some(Node::Scan(scan)) => {
                let spec = decode_spec(scan)?;
                let tally = self.reporter.clone().map(|reporter| {
                    let partitions = spec.tasks.iter().map(Vec::len).collect();
                    Arc::new(TaskTally::new(reporter, partitions))
                });
                let source = ScanSource::Resolver(Arc::clone(&self.resolver), tally);
                Ok(Arc::new(LakeseekScanExec::new(spec, source)))
            }
            Some(Node::Query(query)) => {
                let spec = decode_query(query)?;
                let tally = self
                    .reporter
                    .clone()
                    .map(|reporter| Arc::new(TaskTally::new(reporter, vec![1])));
                let source = ScanSource::Resolver(Arc::clone(&self.resolver), tally);
                Ok(Arc::new(LakeseekQueryExec::new(spec, source)))
            }
            None => internal_err!("an empty lakeseek node"),
        }
    }

    fn try_encode(&self, node: Arc<dyn ExecutionPlan>, buf: &mut Vec<u8>) -> Result<()> {
        let node = if let Some(exec) = node.downcast_ref::<LakeseekScanExec>() {
            Node::Scan(encode_spec(&exec.spec)?)
        } else if let Some(exec) = node.downcast_ref::<LakeseekQueryExec>() {
            Node::Query(encode_query(&exec.spec)?)
        } else {
            return internal_err!(
                "LakeseekCodec encodes LakeseekScanExec and LakeseekQueryExec, not {}",
                node.name()
            );
        };
        NodeProto { node: Some(node) }
            .encode(buf)
            .map_err(|e| DataFusionError::Internal(format!("encoding a lakeseek node: {e}")))
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
        let empty_scan = NodeProto {
            node: Some(Node::Scan(ScanProto::default())),
        };
        let e = codec
            .try_decode(&empty_scan.encode_to_vec(), &[], &ctx)
            .unwrap_err();
        assert!(e.to_string().contains("without a schema"), "{e}");
        let e = codec
            .try_decode(&NodeProto::default().encode_to_vec(), &[], &ctx)
            .unwrap_err();
        assert!(e.to_string().contains("empty lakeseek node"), "{e}");
    }

    #[test]
    fn a_query_round_trips_through_the_codec() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("_rowaddr", DataType::UInt64, false),
            Field::new("_distance", DataType::Float32, false),
        ]));
        let nearest = QuerySpec {
            url: "s3://bucket/v.lance".into(),
            version: 3,
            schema: Arc::clone(&schema),
            column: "vec".into(),
            kind: QueryKind::Nearest(vec![0.5, -1.25, 3.0]),
            k: Some(7),
            options: vec![
                ("nprobes".into(), "4".into()),
                ("filter".into(), "cat = 2 AND id > 3".into()),
            ],
        };
        let search = QuerySpec {
            kind: QueryKind::Search("quick fox".into()),
            k: None,
            options: vec![],
            ..nearest.clone()
        };
        let codec = LakeseekCodec::new(Arc::new(DatasetResolver::default()));
        let ctx = TaskContext::default();
        for spec in [nearest, search] {
            let exec = Arc::new(LakeseekQueryExec::new(
                spec.clone(),
                ScanSource::Resolver(Arc::new(DatasetResolver::default()), None),
            ));
            let mut buf = Vec::new();
            codec.try_encode(exec, &mut buf).unwrap();
            let decoded = codec.try_decode(&buf, &[], &ctx).unwrap();
            let decoded = decoded.downcast_ref::<LakeseekQueryExec>().unwrap();
            assert_eq!(decoded.spec, spec);
        }
        let lopsided = NodeProto {
            node: Some(Node::Query(QueryProto {
                schema: Some(schema.as_ref().try_into().unwrap()),
                option_keys: vec!["k".into()],
                ..QueryProto::default()
            })),
        };
        let e = codec
            .try_decode(&lopsided.encode_to_vec(), &[], &ctx)
            .unwrap_err();
        assert!(e.to_string().contains("1 option keys and 0 values"), "{e}");
    }
}
