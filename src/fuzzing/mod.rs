//! The bodies of the fuzz targets (feature `fuzzing`, not a stable API), shared by
//! `fuzz/fuzz_targets/*.rs` and by the regression replay test
//! (`tests/suite/proptest_fuzz_replay.rs`), which runs
//! every file under `fuzz/regressions/<target>/` and `fuzz/seeds/<target>/` through the same
//! function on every `cargo test`.
//!
//! Each function takes arbitrary bytes and must return without panicking; errors are
//! expected and ignored. Asserted contracts (row counts of successful reads) are checks
//! of lakeseek's promises, not of the input.

mod blob;
mod decompress;
mod fts;
mod inputs;
mod legacy;
mod rowids;
mod v2_0;
mod vector;

pub use blob::blob_descriptors;
pub use decompress::decompress;
pub use fts::fts_postings;
pub use inputs::{cli_values, filter_extremes};
pub use legacy::legacy_file;
pub use rowids::row_id_sequence;
pub use v2_0::v2_0_page;
pub use vector::vector_index;

use std::collections::HashMap;
use std::ops::Bound;
use std::sync::Arc;

use crate::ecp::metric::{Metric, Scorer};
use crate::ecp::npy::parse_npy;
use crate::ecp::search::{SearchParams, SearchState, Step};
use crate::ecp::Node;
use crate::index::btree_file::exec::decode_lookup;
use crate::index::btree_file::PageSelection;
use crate::index::key::Key;
use crate::index::list_element::details::{check_details, decode_details};
use crate::index::list_element::parse_any_element_filter;
use crate::index::sql::bind::BoundPredicate;
use crate::index::sql::expr::{parse_sql, SqlContext};
use crate::io::{FetchOptions, IoStats, ObjectStoreSource, RangeFetcher, RangeSource};
use crate::lance::dataset::deletion::decode_deletion_file;
use crate::lance::dataset::manifest::{decode_manifest_file, KnownBytes, ManifestStep};
use crate::lance::dataset::{DeletionKind, Schema};
use crate::lance::file::{parse_file_metadata, MetadataParse};
use crate::lance::page::{PageLayout, RawPageEncoding};
use crate::lance::proto::table as table_pb;
use crate::lance::reader::{LanceFileReader, ReaderCaches, RowSelection};
use crate::lance::version::FileVersion;
use bytes::Bytes;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

/// Most rows a harness asks a reader for (keeps executions fast; the decoders' own limits
/// are what is under test).
const MAX_ROWS: u64 = 64;

pub mod scalar_indices;

fn runtime() -> &'static tokio::runtime::Runtime {
    use std::sync::OnceLock;
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
    })
}

/// A source serving `bytes` as the object `x.lance`.
fn memory_object(bytes: Bytes) -> (Arc<dyn RangeSource>, Path) {
    let store = Arc::new(InMemory::new());
    let path = Path::from("x.lance");
    runtime()
        .block_on(store.put(&path, PutPayload::from(bytes)))
        .expect("in-memory put");
    let store: Arc<dyn ObjectStore> = store;
    (
        Arc::new(ObjectStoreSource::new(store, 0, "memory://")),
        path,
    )
}

/// Open `bytes` as a Lance file and read up to [`MAX_ROWS`] rows of every field, as a
/// range and as scattered rows.
pub fn read_file(bytes: &[u8]) {
    let (source, path) = memory_object(Bytes::copy_from_slice(bytes));
    let fetcher = RangeFetcher::new(source, FetchOptions::default());
    runtime().block_on(async {
        let stats = IoStats::new();
        let caches = Arc::new(ReaderCaches::new(1 << 20, 1 << 20));
        let Ok(reader) = LanceFileReader::open(fetcher, path, None, caches, &stats).await else {
            return;
        };
        let rows = reader.num_rows();
        let fields: Vec<usize> = (0..reader.schema().fields.len()).collect();
        let n = rows.min(MAX_ROWS);
        for columns in fields.iter().map(|f| vec![*f]) {
            if let Ok(batch) = reader
                .read_rows(&columns, &RowSelection::Range(0..n), &stats)
                .await
            {
                assert_eq!(batch.num_rows() as u64, n, "range read row count");
            }
            if rows > 0 {
                let picks = vec![0, rows / 2, rows / 2, rows - 1];
                if let Ok(batch) = reader
                    .read_rows(&columns, &RowSelection::Rows(picks), &stats)
                    .await
                {
                    assert_eq!(batch.num_rows(), 4, "take row count");
                }
            }
        }
    });
}

/// `file_metadata`: `[selector][file bytes...]`. Parses the metadata from the whole object
/// and from a suffix (exercising `NeedMore`), then reads rows of every field.
pub fn file_metadata(data: &[u8]) {
    let Some((&selector, file)) = data.split_first() else {
        return;
    };
    let size = file.len() as u64;
    let suffix = match selector & 3 {
        0 => file.len(),
        1 => 64.min(file.len()),
        2 => (file.len() / 2).max(1).min(file.len()),
        _ => 1024.min(file.len()),
    };
    let tail = Bytes::copy_from_slice(&file[file.len() - suffix..]);
    match parse_file_metadata(&tail, size - suffix as u64, size) {
        Ok(MetadataParse::NeedMore(range)) => {
            assert!(
                range.end <= size - suffix as u64 + 1,
                "asks before the tail"
            );
        }
        Ok(MetadataParse::Parsed(meta)) => {
            assert_eq!(meta.object_size, size);
        }
        Err(_) => {}
    }
    // Absurd object sizes with the same tail must be errors, not panics.
    let _ = parse_file_metadata(&tail, u64::MAX - suffix as u64, u64::MAX);
    if selector & 4 == 0 {
        read_file(file);
    }
}

/// `sparse_plan`: either a whole file (mode bit 0 clear; seeds are 2.3 sparse fixtures),
/// or a raw 2.3 `PlanarLayout` protobuf with buffers:
/// `[mode][u16 layout len][layout][u32 length][u8 buffer count][(u16 len, bytes)...]`.
pub fn sparse_plan(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode & 1 == 0 {
        file_metadata(rest);
        return;
    }
    let mut input = Input(rest);
    let layout_len = input.u16() as usize;
    let layout = input.take(layout_len);
    let length = input.u32() as u64;
    let count = (input.byte() % 12) as usize;
    let mut object = Vec::new();
    let mut buffers = Vec::new();
    for _ in 0..count {
        let len = input.u16() as usize;
        let start = object.len() as u64;
        object.extend_from_slice(input.take(len));
        buffers.push(start..object.len() as u64);
    }
    let encoding = RawPageEncoding::Direct {
        type_url: "/lance.encodings23.PlanarLayout".to_string(),
        value: Bytes::copy_from_slice(layout),
    };
    let version = if mode & 2 == 0 {
        FileVersion::V2_3
    } else {
        FileVersion::V2_2
    };
    let Ok(page) = PageLayout::from_encoding(&encoding, version, &buffers, length) else {
        return;
    };
    exercise_page(&page, &object, length, mode);
}

fn slice_of(object: &[u8], range: &std::ops::Range<u64>) -> Option<Bytes> {
    let start = usize::try_from(range.start).ok()?;
    let end = usize::try_from(range.end).ok()?;
    object.get(start..end).map(Bytes::copy_from_slice)
}

/// init → plan → decode (flat and nested) of page-local rows, with the bytes the plan asks
/// for taken from `object` (absent bytes: stop).
fn exercise_page(page: &PageLayout, object: &[u8], length: u64, mode: u8) {
    let _ = page.check_readable();
    let _ = page.is_nested();
    let init_bytes: Option<Vec<Bytes>> = page
        .init_ranges()
        .iter()
        .map(|r| slice_of(object, r))
        .collect();
    let Some(init_bytes) = init_bytes else {
        return;
    };
    let Ok(init) = page.decode_init(&init_bytes) else {
        return;
    };
    let rows = length.min(MAX_ROWS);
    let row_sets: [Vec<std::ops::Range<u64>>; 2] = [
        std::iter::once(0..rows).collect(),
        vec![0..1.min(rows), rows / 2..rows / 2 + 1.min(rows - rows / 2)],
    ];
    let types = [
        arrow_schema::DataType::Int32,
        arrow_schema::DataType::Int64,
        arrow_schema::DataType::Float32,
        arrow_schema::DataType::Utf8,
        arrow_schema::DataType::Binary,
        arrow_schema::DataType::UInt8,
    ];
    let leaf_type = &types[(mode as usize >> 2) % types.len()];
    for set in &row_sets {
        let set: Vec<_> = set.iter().filter(|r| r.start < r.end).cloned().collect();
        let Ok(plan) = page.plan(&init, &set) else {
            continue;
        };
        let bytes: Option<Vec<Bytes>> = plan.ranges.iter().map(|r| slice_of(object, r)).collect();
        let Some(bytes) = bytes else {
            continue;
        };
        let _ = page.decode_nested(&init, &set, &plan, &bytes, leaf_type);
        if let Ok(array) = page.decode(&init, &set, &plan, &bytes, leaf_type) {
            let want: u64 = set.iter().map(|r| r.end - r.start).sum();
            assert_eq!(array.len() as u64, want, "decoded row count");
        }
    }
}

/// `manifest`: `[mode][bytes...]`. Mode 0-1: the bytes are a manifest file (framing,
/// protobuf, index section, schema, fragments, index metadata); 2: a bitmap deletion
/// file; 3: an Arrow deletion file; 4: list-element index details (`Any.value`).
pub fn manifest(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let bytes = Bytes::copy_from_slice(rest);
    match mode % 5 {
        0 | 1 => {
            let size = bytes.len() as u64;
            let mut known = KnownBytes::new(size);
            // Mode 1: only a short tail first, as a reader would.
            let first = if mode % 5 == 0 {
                0
            } else {
                size.saturating_sub(40)
            };
            known.add(first, bytes.slice(first as usize..));
            for _ in 0..4 {
                match decode_manifest_file(&known) {
                    Ok(ManifestStep::Done(m)) => {
                        let _ = m.fragment_ids();
                        for s in &m.indices {
                            let _ = s.uuid_string();
                            let any = prost_types::Any {
                                type_url: s.details_type_url.clone().unwrap_or_default(),
                                value: s.details.clone(),
                            };
                            if let Ok(d) = decode_details(&any) {
                                let _ = check_details(&d);
                            }
                        }
                        return;
                    }
                    Ok(ManifestStep::NeedRange(r)) => {
                        assert!(r.start <= r.end && r.end <= size, "range inside the file");
                        known.add(r.start, bytes.slice(r.start as usize..r.end as usize));
                    }
                    Err(_) => return,
                }
            }
        }
        2 => {
            let _ = decode_deletion_file(DeletionKind::Bitmap, &bytes);
        }
        3 => {
            let _ = decode_deletion_file(DeletionKind::Arrow, &bytes);
        }
        _ => {
            let any = prost_types::Any {
                type_url: "/lance.index.ListElementIndexDetails".into(),
                value: rest.to_vec(),
            };
            if let Ok(d) = decode_details(&any) {
                let _ = check_details(&d);
            }
        }
    }
}

/// `btree_lookup`: `[probe bytes: 16][page_lookup.lance bytes...]`: decode the lookup
/// (a Lance file of min/max/null_count/page_idx), then select pages for keys derived from
/// the probe bytes and map pages to rows.
pub fn btree_lookup(data: &[u8]) {
    if data.len() < 16 {
        return;
    }
    let (probe, file) = data.split_at(16);
    let path = Path::from("page_lookup.lance");
    let Ok(lookup) = runtime().block_on(decode_lookup(&path, Bytes::copy_from_slice(file))) else {
        return;
    };
    let a = i64::from_le_bytes(probe[0..8].try_into().expect("8"));
    let b = u64::from_le_bytes(probe[8..16].try_into().expect("8"));
    let keys = [
        Key::Int(a),
        Key::UInt(b),
        Key::Float(f64::from_bits(b)),
        Key::Bool(a & 1 == 1),
        Key::Bytes(probe[..(b % 17) as usize].to_vec()),
    ];
    for k in &keys {
        let mut out = PageSelection::new();
        lookup.pages_equal(k.as_key_ref(), &mut out);
        lookup.pages_in_range(&Bound::Included(k.clone()), &Bound::Unbounded, &mut out);
        lookup.pages_in_range(&Bound::Unbounded, &Bound::Excluded(k.clone()), &mut out);
        lookup.pages_in_range(
            &Bound::Excluded(k.clone()),
            &Bound::Included(k.clone()),
            &mut out,
        );
        lookup.pages_null(&mut out);
        for page in out.keys() {
            assert!(lookup.page_numbers().contains(page), "selected page exists");
            let _ = lookup.page_rows(*page, &[b % 100_000, a.unsigned_abs(), u64::MAX]);
        }
    }
    for i in 0..lookup.num_pages().min(8) {
        let _ = lookup.row(i);
    }
    let _ = lookup.page_rows(b as u32, &[]);
}

/// `ecp_node`: `[mode][...]`. Mode 0: `.npy` query parsing. Otherwise an in-memory tree
/// search: metric, dimension, levels, k, params and nodes (embeddings + child ids) from the
/// bytes, driven like `EcpQuery::next_k` (begin / pop / visit / finish / drain).
pub fn ecp_node(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 4 == 0 {
        if let Ok(rows) = parse_npy(rest) {
            assert!(rows.iter().all(|r| r.len() == rows[0].len()), "rectangular");
        }
        return;
    }
    let mut input = Input(rest);
    let metric = if input.byte() & 1 == 0 { "L2" } else { "IP" };
    let Ok(metric) = Metric::parse(metric) else {
        return;
    };
    let dim = (input.byte() % 9) as usize;
    let levels = (input.byte() % 4) as u32;
    let k = input.byte() as usize;
    let params = SearchParams {
        search_exp: input.byte() as u32,
        max_increments: input.byte() as i64 - 2,
    };
    if params.validate().is_err() {
        return;
    }
    let query: Vec<f32> = (0..dim).map(|_| input.f32()).collect();
    let Ok(scorer) = Scorer::new(metric, mode & 4 != 0, query) else {
        return;
    };
    let Some(tree) = FuzzTree::read(&mut input, dim) else {
        return;
    };
    let exclude: Vec<u32> = (0..input.byte() % 4)
        .map(|_| input.byte() as u32 % 10)
        .collect();
    tree.search_pages(&scorer, levels, k, params, exclude);
}

/// The nodes of an [`ecp_node`] input: the first valid one is the root, the others are
/// keyed by (level, id).
struct FuzzTree {
    root: Node,
    nodes: HashMap<(u32, u32), Node>,
}

impl FuzzTree {
    /// Up to 15 nodes of `dim` dimensions from the input; `None` when none is valid.
    fn read(input: &mut Input<'_>, dim: usize) -> Option<Self> {
        let mut nodes: HashMap<(u32, u32), Node> = HashMap::new();
        let mut root = None;
        for _ in 0..(input.byte() % 16) {
            let level = (input.byte() % 4) as u32;
            let id = (input.byte() % 8) as u32;
            let rows = (input.byte() % 6) as usize;
            let embeddings: Vec<f32> = (0..rows * dim.max(1)).map(|_| input.f32()).collect();
            let children: Vec<u32> = (0..rows).map(|_| (input.byte() % 10) as u32).collect();
            let children = if input.byte() & 1 == 0 {
                children
            } else {
                Vec::new()
            };
            if let Ok(node) = Node::new(dim, embeddings, children) {
                if root.is_none() {
                    root = Some(node);
                } else {
                    nodes.insert((level, id), node);
                }
            }
        }
        Some(Self { root: root?, nodes })
    }

    /// Three pages of `k` results, driven like `EcpQuery::next_k` (begin / pop / visit /
    /// finish / drain, at most 10,000 pops a page); no page returns more than `k` items or
    /// an excluded id.
    fn search_pages(
        &self,
        scorer: &Scorer,
        levels: u32,
        k: usize,
        params: SearchParams,
        exclude: Vec<u32>,
    ) {
        let (root, nodes) = (&self.root, &self.nodes);
        let mut state = SearchState::new(levels, exclude.clone());
        for _page in 0..3 {
            if state.needs_search(k) {
                let mut call = state.begin(k, params, &exclude, root, scorer);
                let mut budget = 10_000;
                while let Some(entry) = state.pop() {
                    budget -= 1;
                    if budget == 0 {
                        break;
                    }
                    let node = nodes.get(&(entry.level, entry.node_id));
                    if state.visit(entry, node, scorer, &mut call) == Step::Stop {
                        break;
                    }
                }
                state.finish();
            }
            let items = state.drain(k);
            assert!(items.len() <= k);
            assert!(
                items.iter().all(|i| !exclude.contains(&i.id)),
                "excluded id returned"
            );
        }
    }
}

/// `predicate`: the bytes as filter text: parse, bind against a fixed schema (every key
/// type, a list of structs), parse `any_element` calls.
pub fn predicate(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if text.len() > 4096 {
        return;
    }
    let _ = parse_sql(text, SqlContext::Filter);
    let _ = parse_sql(text, SqlContext::ElementPredicate);
    let _ = BoundPredicate::parse_filter(text, schema());
    let _ = parse_any_element_filter(text);
}

fn schema() -> &'static Schema {
    use std::sync::OnceLock;
    static SCHEMA: OnceLock<Schema> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let mut fields = Vec::new();
        let mut add = |id: i32, parent: i32, name: &str, logical_type: &str| {
            fields.push(table_pb::Field {
                id,
                parent_id: parent,
                name: name.into(),
                logical_type: logical_type.into(),
                nullable: true,
                ..Default::default()
            })
        };
        let flat = [
            "int8",
            "int16",
            "int32",
            "int64",
            "uint8",
            "uint16",
            "uint32",
            "uint64",
            "float",
            "double",
            "string",
            "large_string",
            "binary",
            "bool",
            "date32:day",
            "timestamp:us:-",
            "timestamp:ns:UTC",
            "decimal:128:10:2",
        ];
        for (i, t) in flat.iter().enumerate() {
            add(i as i32, -1, &format!("c{i}"), t);
        }
        add(100, -1, "det", "list.struct");
        add(102, 100, "label", "string");
        add(103, 100, "confidence", "float");
        add(104, -1, "s", "string");
        add(105, -1, "i", "int32");
        Schema::from_proto(&fields).expect("fixed schema")
    })
}

/// Run target `name` on `data` (for the replay test).
pub fn run(name: &str, data: &[u8]) {
    match name {
        "file_metadata" => file_metadata(data),
        "sparse_plan" => sparse_plan(data),
        "manifest" => manifest(data),
        "btree_lookup" => btree_lookup(data),
        "ecp_node" => ecp_node(data),
        "predicate" => predicate(data),
        "v2_0_page" => v2_0_page(data),
        "filter_extremes" => filter_extremes(data),
        "cli_values" => cli_values(data),
        "legacy_file" => legacy_file(data),
        "row_id_sequence" => row_id_sequence(data),
        "fts_postings" => fts_postings(data),
        "vector_index" => vector_index(data),
        other => panic!("unknown fuzz target {other}"),
    }
}

/// Names of the targets with a harness here (`decompress` has its own file).
pub const TARGETS: &[&str] = &[
    "file_metadata",
    "sparse_plan",
    "manifest",
    "btree_lookup",
    "ecp_node",
    "predicate",
    "v2_0_page",
    "filter_extremes",
    "cli_values",
    "legacy_file",
    "row_id_sequence",
    "fts_postings",
    "vector_index",
];

/// Bytes read front to back; reads past the end yield zeros.
struct Input<'a>(&'a [u8]);

impl<'a> Input<'a> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }

    fn take(&mut self, n: usize) -> &'a [u8] {
        let n = n.min(self.0.len());
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        head
    }

    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.byte(), self.byte(), self.byte(), self.byte()])
    }

    fn f32(&mut self) -> f32 {
        f32::from_bits(self.u32())
    }
}
