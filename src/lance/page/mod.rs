//! Page layouts: planners (which byte ranges a row selection needs) and decoders.
//!
//! A page is read in up to two steps, each a pure function around one I/O wave:
//!
//! 1. **init** ([`PageLayout::init_ranges`] → fetch → [`PageLayout::decode_init`]): the
//!    small per-page data every read needs (mini-block chunk metadata and dictionary,
//!    full-zip row offsets, constant scalars, 2.3 sparse structure). The result,
//!    [`PageInit`], is cached per (path, version, column, page).
//! 2. **values** ([`PageLayout::plan`] → fetch → [`PageLayout::decode`] / [`PageLayout::decode_nested`]): only the
//!    chunks / byte spans that hold the wanted rows, decoded into a
//!    [`values::LeafBuilder`].
//!
//! 2.1/2.2 `PageLayout` messages and 2.3 `PlanarLayout` messages decode into one
//! [`PageLayout`] here (dense planar pages are the 2.2 engines; sparse pages have their
//! own); a 2.0 page's `ArrayEncoding` tree resolves into [`PageLayout::V2_0`]
//! ([`array_encoding`]), which `crate::lance::v2_0` reads.
//!
//! Pages do not know the container: [`crate::lance::file`] hands each page's stored
//! encoding ([`RawPageEncoding`]) and the file's [`FileVersion`] to
//! [`PageLayout::from_encoding`].
//!
//! Flat leaves (one item layer) decode straight to an Arrow array ([`PageLayout::decode`]).
//! Leaves of nested fields decode to their per-layer slots and values
//! ([`PageLayout::decode_nested`] → [`structure::LeafData`]): dense pages through their
//! rep/def levels ([`miniblock_nested`], [`fullzip`], [`constant`]), 2.3 sparse pages
//! through their positions/counts ([`sparse_nested`]); the reader assembles the leaves of
//! a field into struct / list / map arrays ([`structure::assemble`]).

pub(crate) mod array_encoding;
pub(crate) mod constant;
pub(crate) mod few_rows;
pub(crate) mod fullzip;
pub(crate) mod level_runs;
pub(crate) mod miniblock;
pub(crate) mod miniblock_nested;
pub(crate) mod sparse;
pub(crate) mod sparse_nested;
pub(crate) mod sparse_plan;
pub(crate) mod structure;
pub(crate) mod values;

use std::ops::Range;

use arrow_array::ArrayRef;
use arrow_schema::DataType;
use bytes::Bytes;
use prost::Message;

use crate::error::{Error, Result};
use crate::io::cache::DeepSize;
use crate::lance::compression;
use crate::lance::proto::encodings::{self as pb, CompressiveEncoding, RepDefLayer};
use crate::lance::version::FileVersion;

pub(crate) use constant::ConstantPage;
pub(crate) use fullzip::FullZipPage;
pub(crate) use miniblock::MiniBlockPage;
pub(crate) use sparse::SparsePage;
pub(crate) use values::LeafBuilder;

/// How a page's encoding is stored in its column metadata (the container hands it to
/// [`PageLayout::from_encoding`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RawPageEncoding {
    /// An embedded `google.protobuf.Any`.
    Direct {
        /// The `Any` type URL, e.g. `/lance.encodings21.PageLayout`.
        type_url: String,
        /// The serialized message.
        value: Bytes,
    },
    /// Stored in another buffer (never written by pylance).
    Indirect {
        /// Position and size of that buffer.
        range: Range<u64>,
    },
    /// No encoding.
    None,
}

/// Layout of one page, decoded from its `Any`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PageLayout {
    /// Mini-block chunks (2.1/2.2 `MiniBlockLayout`, 2.3 dense + chunked).
    MiniBlock(MiniBlockPage),
    /// Full-zip values (2.1/2.2 `FullZipLayout`, 2.3 dense + zipped).
    FullZip(FullZipPage),
    /// Constant or all-null (2.1/2.2 `ConstantLayout`, 2.3 dense + constant / none).
    Constant(ConstantPage),
    /// 2.3 sparse structure.
    Sparse(SparsePage),
    /// A Lance 2.0 page: its `ArrayEncoding` tree, resolved (read by `crate::lance::v2_0`).
    V2_0(Box<array_encoding::Node>),
    /// A layout lakeseek cannot read (blob pages, indirect encodings, ...):
    /// the file still opens; reading the column fails with `Unsupported`.
    Unsupported {
        /// Short name of the layout.
        name: String,
        /// Why it cannot be read.
        reason: String,
    },
}

impl DeepSize for PageLayout {
    fn deep_size(&self) -> usize {
        // Encodings are small protobufs, except FSST symbol tables (a few KB).
        let encoded = match self {
            PageLayout::MiniBlock(m) => {
                m.value_compression.encoded_len()
                    + m.dictionary.as_ref().map_or(0, |d| d.encoded_len())
            }
            PageLayout::FullZip(f) => f.value_compression.encoded_len(),
            PageLayout::Constant(c) => c.inline_value.as_ref().map_or(0, |v| v.len()),
            PageLayout::Sparse(s) => s.encoded_len(),
            PageLayout::Unsupported { name, reason } => name.len() + reason.len(),
            PageLayout::V2_0(node) => node.describe().len(),
        };
        std::mem::size_of::<Self>() + 2 * encoded
    }
}

/// Decoded per-page init data (cached).
#[derive(Debug, Clone)]
pub enum PageInit {
    /// The layout needs no init data.
    None,
    /// Mini-block chunk table and dictionary.
    MiniBlock(miniblock::MiniBlockInit),
    /// Full-zip row offsets.
    FullZip(fullzip::FullZipInit),
    /// Constant scalar from a value buffer.
    Constant(constant::ConstantInit),
    /// Sparse structure and value-plane init.
    Sparse(sparse::SparseInit),
    /// The decoded dictionary of a 2.0 dictionary page.
    V2_0Dictionary(ArrayRef),
}

impl DeepSize for PageInit {
    fn deep_size(&self) -> usize {
        std::mem::size_of::<Self>()
            + match self {
                PageInit::None => 0,
                PageInit::MiniBlock(m) => m.deep_size(),
                PageInit::FullZip(f) => f.deep_size(),
                PageInit::Constant(c) => c.deep_size(),
                PageInit::Sparse(s) => s.deep_size(),
                PageInit::V2_0Dictionary(a) => a.get_array_memory_size(),
            }
    }
}

/// What a value read of one page fetches and how the decoder finds its pieces.
#[derive(Debug, Clone, PartialEq)]
pub struct PageReadPlan {
    /// Absolute byte ranges to fetch, in the order the decoder expects them.
    pub ranges: Vec<Range<u64>>,
    /// Layout-specific detail of what each range holds.
    pub detail: PlanDetail,
    /// Nested 2.3 sparse pages: the selected rows projected through the structural plan
    /// (layer slots and leaf ranges), computed while planning and reused by the decode.
    pub projection: Option<std::sync::Arc<sparse_plan::Projection>>,
}

/// Layout-specific part of a [`PageReadPlan`].
#[derive(Debug, Clone, PartialEq)]
pub enum PlanDetail {
    /// Nothing to fetch: values come from the layout / init data.
    NoData,
    /// Runs of consecutive mini-block chunks, one per range.
    MiniBlockChunks(Vec<Range<usize>>),
    /// Full-zip spans: page-local rows of each range.
    FullZipRows(Vec<Range<u64>>),
}

/// Sorted, disjoint, non-empty page-local row ranges.
pub(crate) type RowRanges = [Range<u64>];

/// Structural interpretation of a page's layers for a flat (non-nested) read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FlatNullability {
    /// `[ALL_VALID_ITEM]`: no def levels.
    AllValid,
    /// `[NULLABLE_ITEM]`: def 0 = valid, 1 = null.
    Nullable,
}

/// Decode the stored layer enums.
pub(crate) fn decode_layers(raw: &[i32]) -> Result<Vec<RepDefLayer>> {
    raw.iter()
        .map(|&v| match RepDefLayer::try_from(v) {
            Ok(RepDefLayer::RepdefUnspecified) | Err(_) => {
                Err(Error::corrupt(format!("invalid rep/def layer value {v}")))
            }
            Ok(layer) => Ok(layer),
        })
        .collect()
}

/// The nullability of a flat page, or `Unsupported` for nested (list/struct) structure.
pub(crate) fn flat_nullability(layers: &[RepDefLayer]) -> Result<FlatNullability> {
    match layers {
        [RepDefLayer::RepdefAllValidItem] => Ok(FlatNullability::AllValid),
        [RepDefLayer::RepdefNullableItem] => Ok(FlatNullability::Nullable),
        [] => Err(Error::corrupt("page has no rep/def layers")),
        other => Err(Error::unsupported(format!(
            "nested page structure {other:?} read as a flat column"
        ))),
    }
}

fn required<'a, T>(value: &'a Option<T>, what: &str) -> Result<&'a T> {
    value
        .as_ref()
        .ok_or_else(|| Error::corrupt(format!("page layout is missing {what}")))
}

/// True when the encoding tree uses a 2.3-only codec (`Range`, `Delta`).
fn uses_planar_only_codec(encoding: &CompressiveEncoding) -> bool {
    use pb::compressive_encoding::Compression as C;
    let child =
        |c: &Option<Box<CompressiveEncoding>>| c.as_deref().is_some_and(uses_planar_only_codec);
    match &encoding.compression {
        Some(C::Range(_)) | Some(C::Delta(_)) => true,
        Some(C::Variable(v)) => child(&v.offsets),
        Some(C::OutOfLineBitpacking(o)) => child(&o.values),
        Some(C::Fsst(f)) => child(&f.values),
        Some(C::Dictionary(d)) => child(&d.indices) || child(&d.items),
        Some(C::Rle(r)) => child(&r.values) || child(&r.run_lengths),
        Some(C::ByteStreamSplit(b)) => child(&b.values),
        Some(C::General(g)) => child(&g.values),
        Some(C::FixedSizeList(f)) => child(&f.values),
        Some(C::PackedStruct(p)) => child(&p.values),
        Some(C::VariablePackedStruct(v)) => v
            .fields
            .iter()
            .any(|f| f.value.as_ref().is_some_and(uses_planar_only_codec)),
        Some(C::Flat(_)) | Some(C::Constant(_)) | Some(C::InlineBitpacking(_)) | None => false,
    }
}

/// Reject 2.3-only compressive encodings (`Range`, `Delta`) in 2.1/2.2 pages.
fn check_encoding_for_version(encoding: &CompressiveEncoding, version: FileVersion) -> Result<()> {
    if version < FileVersion::V2_3 && uses_planar_only_codec(encoding) {
        return Err(Error::corrupt(format!(
            "2.3-only encoding (Range/Delta) in a {version} page"
        )));
    }
    Ok(())
}

impl PageLayout {
    /// Decode a page's stored encoding. `buffers` are the page's absolute buffer ranges.
    /// `length` is the page's stored `length` (rows; rows × FSL scale for 2.3 sparse).
    pub(crate) fn from_encoding(
        encoding: &RawPageEncoding,
        version: FileVersion,
        buffers: &[Range<u64>],
        length: u64,
    ) -> Result<Self> {
        let (type_url, value) = match encoding {
            RawPageEncoding::Direct { type_url, value } => (type_url.as_str(), value.clone()),
            RawPageEncoding::Indirect { .. } => {
                return Ok(unsupported(
                    "indirect",
                    "indirect (deferred) page encodings",
                ));
            }
            RawPageEncoding::None => return Err(Error::corrupt("page has no encoding")),
        };
        match (type_url, version) {
            (pb::PAGE_LAYOUT_TYPE_URL, FileVersion::V2_1 | FileVersion::V2_2) => {
                let layout = pb::PageLayout::decode(value).map_err(|e| {
                    Error::corrupt(format!("page encoding is not a PageLayout protobuf: {e}"))
                        .with_source(e)
                })?;
                Self::from_page_layout(layout, version, buffers, length)
            }
            (pb::PLANAR_LAYOUT_TYPE_URL, FileVersion::V2_3) => {
                let layout = pb::PlanarLayout::decode(value).map_err(|e| {
                    Error::corrupt(format!("page encoding is not a PlanarLayout protobuf: {e}"))
                        .with_source(e)
                })?;
                Self::from_planar_layout(layout, buffers, length)
            }
            (crate::lance::proto::encodings_v2_0::ARRAY_ENCODING_TYPE_URL, FileVersion::V2_0) => {
                array_encoding::Node::from_bytes(value, buffers)
                    .map(|node| PageLayout::V2_0(Box::new(node)))
            }
            (url, v) => Err(Error::corrupt(format!(
                "page encoding type {url:?} does not belong in a {v} file"
            ))),
        }
    }

    fn from_page_layout(
        layout: pb::PageLayout,
        version: FileVersion,
        buffers: &[Range<u64>],
        length: u64,
    ) -> Result<Self> {
        use pb::page_layout::Layout;
        match layout.layout {
            Some(Layout::MiniBlockLayout(m)) => {
                for e in [
                    &m.rep_compression,
                    &m.def_compression,
                    &m.value_compression,
                    &m.dictionary,
                ]
                .into_iter()
                .flatten()
                {
                    check_encoding_for_version(e, version)?;
                }
                Ok(PageLayout::MiniBlock(MiniBlockPage::new(
                    m, buffers, length,
                )?))
            }
            Some(Layout::FullZipLayout(f)) => {
                if let Some(e) = &f.value_compression {
                    check_encoding_for_version(e, version)?;
                }
                Ok(PageLayout::FullZip(FullZipPage::from_layout(
                    f, buffers, length,
                )?))
            }
            Some(Layout::ConstantLayout(c)) => {
                Ok(PageLayout::Constant(ConstantPage::from_layout(c, buffers)?))
            }
            // Blob v1 (2.1+): the (position, size) descriptors are the inner layout's
            // values; `lance::blob` reads them (the layers only repeat the nullability the
            // descriptors encode).
            Some(Layout::BlobLayout(blob)) => match blob.inner_layout.map(|inner| *inner) {
                Some(pb::PageLayout {
                    layout: Some(Layout::BlobLayout(_)),
                }) => Err(Error::corrupt(
                    "blob page layout nested in a blob page layout",
                )),
                Some(inner) => Self::from_page_layout(inner, version, buffers, length),
                None => Err(Error::corrupt("blob page layout has no inner layout")),
            },
            None => Err(Error::corrupt("PageLayout has no layout")),
        }
    }

    fn from_planar_layout(
        layout: pb::PlanarLayout,
        buffers: &[Range<u64>],
        length: u64,
    ) -> Result<Self> {
        use pb::structural_plane::Codec as Structure;
        let structure = layout
            .structure
            .and_then(|s| s.codec)
            .ok_or_else(|| Error::corrupt("PlanarLayout has no structure"))?;
        let values = layout
            .values
            .and_then(|v| v.codec)
            .ok_or_else(|| Error::corrupt("PlanarLayout has no value plane"))?;
        let dense = match structure {
            Structure::Sparse(sparse) => {
                let page = SparsePage::new(sparse, values, buffers)?;
                let rows = page.rows_in_page(length)?;
                return Ok(PageLayout::Sparse(page.with_rows(rows)?));
            }
            Structure::Dense(dense) => dense,
        };
        Self::from_dense_planar(dense, values, buffers, length)
    }

    /// A dense 2.3 page: the 2.2 engine its value plane names.
    fn from_dense_planar(
        dense: pb::DenseStructure,
        values: pb::value_plane::Codec,
        buffers: &[Range<u64>],
        length: u64,
    ) -> Result<Self> {
        use pb::value_plane::Codec as Values;
        let layers = decode_layers(&dense.layers)?;
        crate::ensure_corrupt!(!layers.is_empty(), "dense planar page has no layers");
        match values {
            Values::Chunked(chunked) => {
                let levels = required(&chunked.levels, "dense chunk levels")?;
                let mini = pb::MiniBlockLayout {
                    rep_compression: levels.repetition.clone(),
                    def_compression: levels.definition.clone(),
                    value_compression: chunked.compression,
                    dictionary: chunked.dictionary,
                    num_dictionary_items: chunked.num_dictionary_items,
                    layers: dense.layers,
                    num_buffers: chunked.num_buffers,
                    repetition_index_depth: levels.repetition_index_depth,
                    num_items: chunked.num_items,
                    has_large_chunk: true,
                };
                Ok(PageLayout::MiniBlock(MiniBlockPage::new(
                    mini, buffers, length,
                )?))
            }
            Values::Zipped(zipped) => {
                let levels = required(&zipped.levels, "dense zip levels")?.clone();
                Ok(PageLayout::FullZip(FullZipPage::from_zipped(
                    zipped,
                    Some(levels),
                    layers,
                    buffers,
                    length,
                )?))
            }
            Values::Constant(value) => {
                crate::ensure_corrupt!(
                    (1..=32).contains(&value.scalar.len()),
                    "planar constant scalar of {} bytes (must be 1..=32)",
                    value.scalar.len()
                );
                crate::ensure_corrupt!(
                    layers.iter().all(|l| *l == RepDefLayer::RepdefAllValidItem),
                    "dense constant page with non-trivial structure {layers:?}"
                );
                Ok(PageLayout::Constant(ConstantPage::inline(
                    layers,
                    value.scalar,
                    buffers,
                )?))
            }
            Values::None(_) => {
                crate::ensure_corrupt!(
                    layers == [RepDefLayer::RepdefNullableItem],
                    "dense page without values must have the single layer NULLABLE_ITEM, has {layers:?}"
                );
                Ok(PageLayout::Constant(ConstantPage::all_null(
                    layers, buffers,
                )?))
            }
            Values::Indexed(_) => Err(Error::corrupt(
                "indexed values in a dense planar page (they require sparse structure)",
            )),
        }
    }

    /// Short name of the layout for `inspect`.
    pub(crate) fn name(&self) -> String {
        match self {
            PageLayout::MiniBlock(_) => "mini-block".into(),
            PageLayout::FullZip(_) => "full-zip".into(),
            PageLayout::Constant(c) => c.name().into(),
            PageLayout::Sparse(s) => s.name(),
            PageLayout::Unsupported { name, .. } => name.clone(),
            PageLayout::V2_0(node) => format!("2.0 {}", node.name()),
        }
    }

    /// Human-readable compression tree(s) of the page for `inspect`.
    pub(crate) fn describe_compression(&self) -> String {
        let with_layers = |text: String, layers: &[RepDefLayer]| {
            if layers.len() > 1 {
                format!("{text}; {}", describe_layers(layers))
            } else {
                text
            }
        };
        match self {
            PageLayout::MiniBlock(m) => with_layers(m.describe(), &m.layers),
            PageLayout::FullZip(f) => with_layers(f.describe(), &f.layers),
            PageLayout::Constant(c) => with_layers(c.describe(), &c.layers),
            PageLayout::Sparse(s) => s.describe(),
            PageLayout::Unsupported { reason, .. } => format!("unsupported: {reason}"),
            PageLayout::V2_0(node) => node.describe(),
        }
    }

    /// Every compressive encoding of the page (values, dictionary, levels, sequences).
    pub(crate) fn encodings(&self) -> Vec<&CompressiveEncoding> {
        match self {
            PageLayout::MiniBlock(m) => m.encodings(),
            PageLayout::FullZip(f) => vec![&f.value_compression],
            PageLayout::Constant(c) => c
                .rep_compression
                .iter()
                .chain(c.def_compression.iter())
                .collect(),
            PageLayout::Sparse(s) => s.encodings(),
            PageLayout::Unsupported { .. } | PageLayout::V2_0(_) => Vec::new(),
        }
    }

    /// Names of the codecs the page uses (deduplicated, sorted), for `inspect` statistics.
    pub(crate) fn codec_names(&self) -> Vec<String> {
        if let PageLayout::V2_0(node) = self {
            return node.codec_names();
        }
        let mut names: Vec<String> = self
            .encodings()
            .into_iter()
            .flat_map(compression::codec_names)
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// Top-level rows in a page whose stored `length` is `length`.
    pub(crate) fn rows_in_page(&self, length: u64) -> Result<u64> {
        match self {
            PageLayout::Sparse(s) => s.rows_in_page(length),
            _ => Ok(length),
        }
    }

    /// Byte ranges the page init needs (empty: none).
    pub(crate) fn init_ranges(&self) -> Vec<Range<u64>> {
        match self {
            PageLayout::MiniBlock(m) => m.init_ranges(),
            PageLayout::FullZip(f) => f.init_ranges(),
            PageLayout::Constant(c) => c.init_ranges(),
            PageLayout::Sparse(s) => s.init_ranges(),
            PageLayout::Unsupported { .. } | PageLayout::V2_0(_) => Vec::new(),
        }
    }

    /// Decode the init data from the bytes of [`Self::init_ranges`] (same order).
    pub(crate) fn decode_init(&self, bytes: &[Bytes]) -> Result<PageInit> {
        crate::ensure_corrupt!(
            bytes.len() == self.init_ranges().len(),
            "page init got {} buffers",
            bytes.len()
        );
        match self {
            PageLayout::MiniBlock(m) => m.decode_init(bytes).map(PageInit::MiniBlock),
            PageLayout::FullZip(f) => f.decode_init(bytes),
            PageLayout::Constant(c) => c.decode_init(bytes),
            PageLayout::Sparse(s) => s.decode_init(bytes).map(PageInit::Sparse),
            PageLayout::Unsupported { .. } | PageLayout::V2_0(_) => Ok(PageInit::None),
        }
    }

    /// Check the page can be read as a flat column; `Unsupported` otherwise.
    pub(crate) fn check_readable(&self) -> Result<()> {
        match self {
            PageLayout::MiniBlock(m) => flat_nullability(&m.layers).map(|_| ()),
            PageLayout::FullZip(f) => flat_nullability(&f.layers).map(|_| ()),
            PageLayout::Constant(c) => c.check_readable(),
            PageLayout::Sparse(s) => s.check_readable(),
            PageLayout::Unsupported { name, reason } => {
                Err(Error::unsupported(format!("{name} page: {reason}")))
            }
            PageLayout::V2_0(node) => match node.unsupported() {
                Some(name) => Err(Error::unsupported(format!("Lance 2.0 {name} encoding"))),
                None => Ok(()),
            },
        }
    }

    /// True when the page's leaf sits below lists or structs (more than one layer).
    pub(crate) fn is_nested(&self) -> bool {
        match self {
            PageLayout::MiniBlock(m) => m.layers.len() > 1,
            PageLayout::FullZip(f) => f.layers.len() > 1,
            PageLayout::Constant(c) => c.layers.len() > 1,
            PageLayout::Sparse(s) => s.flat_validity.is_none(),
            PageLayout::Unsupported { .. } | PageLayout::V2_0(_) => false,
        }
    }

    /// Plan the value read of page-local `rows` (pure).
    pub(crate) fn plan(&self, init: &PageInit, rows: &RowRanges) -> Result<PageReadPlan> {
        if let PageLayout::Unsupported { name, reason } = self {
            return Err(Error::unsupported(format!("{name} page: {reason}")));
        }
        if let PageLayout::V2_0(_) = self {
            return Err(not_v2_1_page());
        }
        if !self.is_nested() {
            self.check_readable()?;
        }
        match (self, init) {
            (PageLayout::MiniBlock(m), PageInit::MiniBlock(i)) if self.is_nested() => {
                m.plan_nested(i, rows)
            }
            (PageLayout::MiniBlock(m), PageInit::MiniBlock(i)) => m.plan(i, rows),
            (PageLayout::FullZip(f), init) => f.plan(init, rows),
            (PageLayout::Constant(_), _) => Ok(PageReadPlan {
                ranges: Vec::new(),
                detail: PlanDetail::NoData,
                projection: None,
            }),
            (PageLayout::Sparse(s), PageInit::Sparse(i)) => s.plan(i, rows),
            _ => Err(Error::corrupt(
                "page init data does not match the page layout",
            )),
        }
    }

    /// Decode page-local `rows` of a nested leaf page into its per-layer slots and values
    /// (pure). `leaf_type` is the Arrow type of the leaf.
    pub(crate) fn decode_nested(
        &self,
        init: &PageInit,
        rows: &RowRanges,
        plan: &PageReadPlan,
        bytes: &[Bytes],
        leaf_type: &DataType,
    ) -> Result<structure::LeafData> {
        crate::ensure_corrupt!(
            bytes.len() == plan.ranges.len(),
            "page read got {} of {} ranges",
            bytes.len(),
            plan.ranges.len()
        );
        match (self, init) {
            (PageLayout::MiniBlock(m), PageInit::MiniBlock(i)) => {
                m.decode_nested(i, rows, plan, bytes, leaf_type)
            }
            (PageLayout::FullZip(f), _) => f.decode_nested(rows, plan, bytes, leaf_type),
            (PageLayout::Constant(c), init) => c.decode_nested(init, rows, leaf_type),
            (PageLayout::Sparse(s), PageInit::Sparse(i)) => {
                s.decode_nested(i, rows, plan, bytes, leaf_type)
            }
            (PageLayout::Unsupported { name, reason }, _) => {
                Err(Error::unsupported(format!("{name} page: {reason}")))
            }
            (PageLayout::V2_0(_), _) => Err(not_v2_1_page()),
            _ => Err(Error::corrupt(
                "page init data does not match the page layout",
            )),
        }
    }

    /// Decode the planned value bytes (`bytes[i]` holds `plan.ranges[i]`) of page-local
    /// `rows` into an array of `data_type` (pure).
    pub(crate) fn decode(
        &self,
        init: &PageInit,
        rows: &RowRanges,
        plan: &PageReadPlan,
        bytes: &[Bytes],
        data_type: &DataType,
    ) -> Result<ArrayRef> {
        crate::ensure_corrupt!(
            bytes.len() == plan.ranges.len(),
            "page read got {} of {} ranges",
            bytes.len(),
            plan.ranges.len()
        );
        if let (PageLayout::Sparse(s), PageInit::Sparse(i)) = (self, init) {
            return s.decode(i, rows, plan, bytes, data_type);
        }
        let mut out = LeafBuilder::new(data_type)?;
        match (self, init) {
            (PageLayout::MiniBlock(m), PageInit::MiniBlock(i)) => {
                m.decode_into(i, rows, plan, bytes, &mut out)?
            }
            (PageLayout::FullZip(f), _) => f.decode_into(rows, plan, bytes, &mut out)?,
            (PageLayout::Constant(c), init) => c.decode_into(init, rows, &mut out)?,
            _ => {
                return Err(Error::corrupt(
                    "page init data does not match the page layout",
                ))
            }
        }
        crate::ensure_corrupt!(
            out.len() as u64 == count_rows(rows),
            "page decoded {} rows, {} were asked for",
            out.len(),
            count_rows(rows)
        );
        out.finish()
    }
}

/// A 2.0 page reached the 2.1+ page engines (the reader sends 2.0 files to `v2_0`).
fn not_v2_1_page() -> Error {
    Error::corrupt("internal: a Lance 2.0 page is read by the 2.0 reader, not the page engines")
}

fn unsupported(name: &str, reason: &str) -> PageLayout {
    PageLayout::Unsupported {
        name: name.into(),
        reason: reason.into(),
    }
}

/// Short names of dense layers (inner → outer), for `inspect`.
pub(crate) fn describe_layers(layers: &[RepDefLayer]) -> String {
    let names: Vec<&str> = layers
        .iter()
        .map(|l| match l {
            RepDefLayer::RepdefAllValidItem => "item",
            RepDefLayer::RepdefNullableItem => "nullable item",
            RepDefLayer::RepdefAllValidList => "list",
            RepDefLayer::RepdefNullableList => "nullable list",
            RepDefLayer::RepdefEmptyableList => "emptyable list",
            RepDefLayer::RepdefNullAndEmptyList => "nullable emptyable list",
            RepDefLayer::RepdefUnspecified => "?",
        })
        .collect();
    format!("layers (inner→outer) [{}]", names.join(", "))
}

/// Describe an optional encoding for `inspect`.
pub(crate) fn describe_opt(encoding: &Option<CompressiveEncoding>) -> String {
    encoding
        .as_ref()
        .map_or_else(|| "-".to_string(), compression::describe)
}

/// Total rows in `rows`.
pub(crate) fn count_rows(rows: &RowRanges) -> u64 {
    rows.iter().map(|r| r.end - r.start).sum()
}

/// Byte range `index` of `buffers`, or a `Corrupt` error naming what it should hold.
pub(crate) fn buffer(buffers: &[Range<u64>], index: usize, what: &str) -> Result<Range<u64>> {
    buffers.get(index).cloned().ok_or_else(|| {
        Error::corrupt(format!(
            "page has {} buffers, missing buffer {index} ({what})",
            buffers.len()
        ))
    })
}
