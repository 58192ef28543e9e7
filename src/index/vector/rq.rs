//! IVF_RQ (RaBitQ) storage as pylance 14.0.2 writes it, and its distance estimate exactly as
//! lance computes it: the `storage_metadata` ("fast" rotation: sign flips and Walsh-Hadamard
//! rounds, no rotation matrix buffer; raw-query estimator), a partition's binary codes
//! (packed in blocks of 32 rows for the fast-scan kernels, the remainder transposed), its
//! extended codes (blocked layout) and per-row factors; and the scan: binary inner products
//! from the 4-bit lookup table (quantized to u8 for rows in whole blocks of 32, as lance's
//! fast scan does; exact for the remainder), refined with the extended codes, rows pruned
//! by their error bound against the current top-k as lance prunes them.
//!
//! Pure functions of bytes and metadata; every count and width is checked before it sizes
//! anything.

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, UInt8Type};
use arrow_array::{Array, ArrayRef, RecordBatch};

use super::distance;
use super::format::Metric;
use crate::error::{Error, Result};

/// Binary code column.
pub(crate) const CODE_COLUMN: &str = "_rabit_codes";
/// Columns read per partition after `_rowid` and the binary codes, in this order: the
/// binary factors, then (multi-bit) the extended codes and their factors.
pub(crate) const FACTOR_COLUMNS: [&str; 3] =
    ["__add_factors", "__scale_factors", "__error_factors"];
/// Extended-code columns (`num_bits > 1`).
pub(crate) const EX_COLUMNS: [&str; 3] = [
    "__blocked_ex_codes",
    "__add_factors_ex",
    "__scale_factors_ex",
];
/// Rows per fast-scan block.
const BATCH: usize = 32;
/// Dimensions per block of the extended-code layout.
const EX_BLOCK_DIMS: usize = 64;
/// Rounds of the fast rotation.
const ROTATION_ROUNDS: usize = 4;
/// Order of the rows within a packed half block (lance's fast-scan shuffle).
const PERM0: [usize; 16] = [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15];
/// Largest rotated dimension accepted.
const MAX_CODE_DIM: usize = 1 << 16;

/// The RaBitQ quantizer of one segment.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RabitQuantizer {
    /// Rotated (code) dimension: a multiple of 8, at least the vector dimension.
    pub code_dim: usize,
    /// Bits per dimension (1 binary + `num_bits - 1` extended).
    pub num_bits: u8,
    /// Sign bytes of the fast rotation, `ROTATION_ROUNDS * code_dim / 8`.
    pub signs: Vec<u8>,
}

impl RabitQuantizer {
    /// Bytes of binary code per row.
    pub(crate) fn code_bytes(&self) -> usize {
        self.code_dim / 8
    }

    /// Extended bits per dimension.
    pub(crate) fn ex_bits(&self) -> u8 {
        self.num_bits - 1
    }

    /// Bytes per row of the blocked extended codes.
    pub(crate) fn ex_code_bytes(&self) -> usize {
        self.code_dim.next_multiple_of(EX_BLOCK_DIMS) * usize::from(self.ex_bits()) / 8
    }

    /// Columns read per partition after `_rowid`.
    pub(crate) fn columns(&self) -> Vec<&'static str> {
        let mut c = vec![CODE_COLUMN];
        c.extend(FACTOR_COLUMNS);
        if self.num_bits > 1 {
            c.extend(EX_COLUMNS);
        }
        c
    }
}

#[derive(serde::Deserialize)]
struct RabitMetadataJson {
    #[serde(default)]
    fast_rotation_signs: Option<Vec<u8>>,
    #[serde(default)]
    rotation_type: Option<String>,
    #[serde(default)]
    code_dim: usize,
    num_bits: u8,
    packed: bool,
    #[serde(default)]
    query_estimator: Option<String>,
}

/// Decode the RaBitQ `storage_metadata` entry (the inner JSON string) of an index whose
/// binary code column holds `code_width` bytes per row.
pub(crate) fn decode_metadata(inner: &str, code_width: usize) -> Result<RabitQuantizer> {
    let m: RabitMetadataJson = serde_json::from_str(inner)
        .map_err(|e| Error::corrupt(format!("RaBitQ storage metadata: {e}")).with_source(e))?;
    match m.rotation_type.as_deref() {
        Some("fast") => {}
        other => {
            return Err(Error::unsupported(format!(
                "IVF_RQ with rotation type {} (lakeseek reads the \"fast\" rotation)",
                other.unwrap_or("matrix (older default)")
            )))
        }
    }
    if m.query_estimator.as_deref() != Some("raw_query") {
        return Err(Error::unsupported(
            "IVF_RQ with the residual-query estimator of older writers (lakeseek reads \"raw_query\")",
        ));
    }
    if !m.packed {
        return Err(Error::unsupported("IVF_RQ with unpacked binary codes"));
    }
    if !(1..=9).contains(&m.num_bits) {
        return Err(Error::corrupt(format!(
            "RaBitQ metadata: {} bits (1..=9 expected)",
            m.num_bits
        )));
    }
    if m.code_dim == 0 || m.code_dim > MAX_CODE_DIM || !m.code_dim.is_multiple_of(8) {
        return Err(Error::corrupt(format!(
            "RaBitQ metadata: code dimension {} (a positive multiple of 8 expected)",
            m.code_dim
        )));
    }
    if code_width != m.code_dim / 8 {
        return Err(Error::corrupt(format!(
            "column {CODE_COLUMN:?} holds {code_width} bytes per row, code dimension {} implies {}",
            m.code_dim,
            m.code_dim / 8
        )));
    }
    let signs = m.fast_rotation_signs.unwrap_or_default();
    if signs.len() != ROTATION_ROUNDS * m.code_dim.div_ceil(8) {
        return Err(Error::corrupt(format!(
            "RaBitQ metadata: {} rotation sign bytes for code dimension {} ({} expected)",
            signs.len(),
            m.code_dim,
            ROTATION_ROUNDS * m.code_dim.div_ceil(8)
        )));
    }
    Ok(RabitQuantizer {
        code_dim: m.code_dim,
        num_bits: m.num_bits,
        signs,
    })
}

/// The codes and factors of one partition, rows in storage order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RabitCodes {
    /// Binary codes, `code_bytes` per row, row-major (unpacked from the fast-scan layout).
    pub binary: Vec<u8>,
    /// Binary add factors.
    pub add: Vec<f32>,
    /// Binary scale factors.
    pub scale: Vec<f32>,
    /// Error factors (the pruning bound).
    pub error: Vec<f32>,
    /// Extended code values, one per rotated dimension per row (empty for 1 bit).
    pub ex: Vec<u8>,
    /// Extended add factors.
    pub ex_add: Vec<f32>,
    /// Extended scale factors.
    pub ex_scale: Vec<f32>,
}

impl RabitCodes {
    /// No rows.
    pub(crate) fn empty() -> Self {
        Self {
            binary: Vec::new(),
            add: Vec::new(),
            scale: Vec::new(),
            error: Vec::new(),
            ex: Vec::new(),
            ex_add: Vec::new(),
            ex_scale: Vec::new(),
        }
    }

    /// Bytes held.
    pub(crate) fn size_bytes(&self) -> usize {
        self.binary.len()
            + self.ex.len()
            + 4 * (self.add.len()
                + self.scale.len()
                + self.error.len()
                + self.ex_add.len()
                + self.ex_scale.len())
    }
}

/// Decode a partition's columns (`batch` columns 1.. as [`RabitQuantizer::columns`] lists
/// them) of `rows` rows.
pub(crate) fn decode_codes(
    batch: &RecordBatch,
    rq: &RabitQuantizer,
    rows: usize,
) -> Result<RabitCodes> {
    let want = 1 + rq.columns().len();
    if batch.num_columns() != want {
        return Err(Error::corrupt(format!(
            "RaBitQ partition batch of {} columns, {want} expected",
            batch.num_columns()
        )));
    }
    let packed = byte_list(batch.column(1), rq.code_bytes(), rows, CODE_COLUMN)?;
    let binary = unpack_binary(packed, rows, rq.code_bytes());
    let add = floats(batch.column(2), rows, FACTOR_COLUMNS[0])?;
    let scale = floats(batch.column(3), rows, FACTOR_COLUMNS[1])?;
    let error = floats(batch.column(4), rows, FACTOR_COLUMNS[2])?;
    let (mut ex, mut ex_add, mut ex_scale) = (Vec::new(), Vec::new(), Vec::new());
    if rq.num_bits > 1 {
        let width = rq.ex_code_bytes();
        let blocked = byte_list(batch.column(5), width, rows, EX_COLUMNS[0])?;
        ex.reserve(rows * rq.code_dim);
        for row in blocked.chunks_exact(width) {
            unpack_ex_row(row, rq.ex_bits(), rq.code_dim, &mut ex);
        }
        ex_add = floats(batch.column(6), rows, EX_COLUMNS[1])?;
        ex_scale = floats(batch.column(7), rows, EX_COLUMNS[2])?;
    }
    Ok(RabitCodes {
        binary,
        add,
        scale,
        error,
        ex,
        ex_add,
        ex_scale,
    })
}

fn byte_list<'a>(column: &'a ArrayRef, width: usize, rows: usize, name: &str) -> Result<&'a [u8]> {
    let list = column.as_fixed_size_list_opt().ok_or_else(|| {
        Error::corrupt(format!(
            "{name:?} is {}, a fixed-size list expected",
            column.data_type()
        ))
    })?;
    if list.value_length() as usize != width || list.len() != rows || list.null_count() > 0 {
        return Err(Error::corrupt(format!(
            "{name:?}: {} rows of {} bytes ({} nulls), {rows} rows of {width} expected",
            list.len(),
            list.value_length(),
            list.null_count()
        )));
    }
    let values = list
        .values()
        .as_primitive_opt::<UInt8Type>()
        .ok_or_else(|| Error::corrupt(format!("{name:?} is not uint8")))?;
    let start = list.offset() * width;
    values
        .values()
        .get(start..start + rows * width)
        .ok_or_else(|| Error::corrupt(format!("{name:?} shorter than its rows")))
}

fn floats(column: &ArrayRef, rows: usize, name: &str) -> Result<Vec<f32>> {
    let values = column.as_primitive_opt::<Float32Type>().ok_or_else(|| {
        Error::corrupt(format!(
            "{name:?} is {}, float expected",
            column.data_type()
        ))
    })?;
    if values.len() != rows || values.null_count() > 0 {
        return Err(Error::corrupt(format!(
            "{name:?}: {} values ({} nulls) for {rows} rows",
            values.len(),
            values.null_count()
        )));
    }
    Ok(values.values().to_vec())
}

/// Row-major binary codes from lance's packed layout: whole blocks of 32 rows hold, per
/// code byte, 16 bytes of low nibbles and 16 of high nibbles (rows in [`PERM0`] order, the
/// first 16 rows in the low half of each byte); the remaining rows are column-major.
fn unpack_binary(packed: &[u8], rows: usize, width: usize) -> Vec<u8> {
    let mut out = vec![0u8; rows * width];
    let blocks = rows / BATCH;
    for b in 0..blocks {
        for i in 0..width {
            let block = &packed[(b * width + i) * BATCH..][..BATCH];
            for j in 0..16 {
                let (v0, v1) = (block[j], block[j + 16]);
                let low_row = b * BATCH + PERM0[j];
                out[low_row * width + i] = (v0 & 0x0f) | ((v1 & 0x0f) << 4);
                out[(low_row + 16) * width + i] = (v0 >> 4) | (v1 & 0xf0);
            }
        }
    }
    let done = blocks * BATCH;
    let rest = rows - done;
    let tail = &packed[done * width..];
    for r in 0..rest {
        for c in 0..width {
            out[(done + r) * width + c] = tail[c * rest + r];
        }
    }
    out
}

/// Dimensions per unpacking group of the blocked extended layout.
fn group_dims(ex_bits: u8) -> usize {
    match ex_bits {
        1 | 4 | 8 => 16,
        _ => EX_BLOCK_DIMS,
    }
}

/// The top-bit plane position of dimension `16k + b` of a 64-dim group.
fn plane_bit(plane: u64, k: usize, b: usize) -> u8 {
    ((plane >> (8 * (b % 8) + 2 * k + b / 8)) & 1) as u8
}

/// Append the `code_dim` extended code values of one blocked row to `out`.
fn unpack_ex_row(row: &[u8], ex_bits: u8, code_dim: usize, out: &mut Vec<u8>) {
    let dims = group_dims(ex_bits);
    let bytes = dims * usize::from(ex_bits) / 8;
    let start = out.len();
    let mut v = [0u8; EX_BLOCK_DIMS];
    for g in row.chunks_exact(bytes) {
        let plane = |at: usize| u64::from_le_bytes(g[at..at + 8].try_into().unwrap_or([0; 8]));
        match ex_bits {
            1 => (0..16).for_each(|i| v[i] = (g[i / 8] >> (i % 8)) & 1),
            2 | 3 => {
                let top = if ex_bits == 3 { plane(16) } else { 0 };
                for k in 0..4 {
                    for b in 0..16 {
                        v[16 * k + b] = ((g[b] >> (2 * k)) & 3) | (plane_bit(top, k, b) << 2);
                    }
                }
            }
            4 => {
                for b in 0..8 {
                    v[b] = g[b] & 0x0f;
                    v[8 + b] = g[b] >> 4;
                }
            }
            5 => {
                let top = plane(32);
                for k in 0..4 {
                    for b in 0..16 {
                        let nibble = (g[16 * (k / 2) + b] >> (4 * (k % 2))) & 0x0f;
                        v[16 * k + b] = nibble | (plane_bit(top, k, b) << 4);
                    }
                }
            }
            6 | 7 => {
                for k in 0..3 {
                    for b in 0..16 {
                        v[16 * k + b] = g[16 * k + b] & 0x3f;
                    }
                }
                for b in 0..16 {
                    v[48 + b] = (g[b] >> 6) | ((g[16 + b] >> 6) << 2) | ((g[32 + b] >> 6) << 4);
                }
                if ex_bits == 7 {
                    let top = plane(48);
                    for k in 0..4 {
                        for b in 0..16 {
                            v[16 * k + b] |= plane_bit(top, k, b) << 6;
                        }
                    }
                }
            }
            _ => v[..16].copy_from_slice(&g[..16]),
        }
        out.extend_from_slice(&v[..dims]);
    }
    out.truncate(start + code_dim);
}

/// lance's fast rotation of `input` into `code_dim` values: per round, sign flips then a
/// normalized Walsh-Hadamard transform (on a power-of-two head/tail with a mixing step
/// when `code_dim` is not a power of two).
pub(crate) fn rotate(input: &[f32], signs: &[u8], code_dim: usize) -> Vec<f32> {
    let mut out = vec![0f32; code_dim];
    let n = input.len().min(code_dim);
    out[..n].copy_from_slice(&input[..n]);
    if code_dim == 0 {
        return out;
    }
    let per_round = code_dim.div_ceil(8);
    let trunc = 1usize << code_dim.ilog2();
    let scale = 1.0f32 / (trunc as f32).sqrt();
    for round in 0..ROTATION_ROUNDS {
        let s = &signs[round * per_round..(round + 1) * per_round];
        for (d, v) in out.iter_mut().enumerate() {
            if (s[d / 8] >> (d % 8)) & 1 == 1 {
                *v = -*v;
            }
        }
        let part = if trunc == code_dim || round % 2 == 0 {
            &mut out[..trunc]
        } else {
            let start = code_dim - trunc;
            &mut out[start..]
        };
        hadamard(part);
        part.iter_mut().for_each(|v| *v *= scale);
        if trunc != code_dim {
            let half = code_dim / 2;
            let (left, right) = out.split_at_mut(half);
            for (x, y) in left.iter_mut().zip(right.iter_mut()) {
                let (a, b) = (*x, *y);
                *x = a + b;
                *y = a - b;
            }
        }
    }
    if trunc != code_dim {
        out.iter_mut().for_each(|v| *v *= 0.25);
    }
    out
}

fn hadamard(v: &mut [f32]) {
    let mut half = 1;
    while half < v.len() {
        for block in v.chunks_exact_mut(half * 2) {
            let (l, r) = block.split_at_mut(half);
            for (x, y) in l.iter_mut().zip(r.iter_mut()) {
                let (a, b) = (*x, *y);
                *x = a + b;
                *y = a - b;
            }
        }
        half *= 2;
    }
}

/// The query side of a segment's scan, prepared once per query.
#[derive(Debug, Clone)]
pub(crate) struct RabitQuery {
    rotated: Vec<f32>,
    sum_q: f32,
    /// `[code_dim / 4][16]`: the sum of the rotated query over each 4-bit subset.
    table: Vec<f32>,
    /// The table quantized to u8 and how to map sums back, or `None` when lance falls
    /// back to exact sums.
    quantized: Option<(Vec<u8>, f32, f32)>,
}

/// Prepare `query` (the index query: normalized for cosine) for `rq`.
pub(crate) fn prepare(rq: &RabitQuantizer, query: &[f32]) -> RabitQuery {
    let rotated = rotate(query, &rq.signs, rq.code_dim);
    let mut table = vec![0f32; rq.code_dim * 4];
    for (seg, t) in table.chunks_exact_mut(16).enumerate() {
        let q = &rotated[seg * 4..seg * 4 + 4];
        for j in 1..16usize {
            let low = j & j.wrapping_neg();
            t[j] = t[j - low] + q[low.trailing_zeros() as usize];
        }
    }
    let sum_q = rotated.iter().sum();
    let quantized = quantize(&table);
    RabitQuery {
        rotated,
        sum_q,
        table,
        quantized,
    }
}

/// lance's u8 quantization of the lookup table: `round_ties_even((v - min) * 255 / (max -
/// min))`, sums mapped back as `sum * (max - min) / 255 + tables * min`.
fn quantize(table: &[f32]) -> Option<(Vec<u8>, f32, f32)> {
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    for &v in table {
        lo = if v < lo { v } else { lo };
        hi = if v > hi { v } else { hi };
    }
    let tables = (table.len() / 16) as f32;
    if !(tables * lo).is_finite() || !(tables * hi).is_finite() || !(tables * (hi - lo)).is_finite()
    {
        return None;
    }
    let factor = 255.0 / (hi - lo);
    let codes = if factor.is_finite() {
        table
            .iter()
            .map(|&v| ((v - lo) * factor).round_ties_even() as u8)
            .collect()
    } else {
        vec![0; table.len()]
    };
    Some((codes, (hi - lo) / 255.0, tables * lo))
}

/// Binary inner products of every row: quantized sums for rows in whole blocks of 32,
/// exact sums for the rest (lance's fast scan and its scalar remainder).
fn binary_products(q: &RabitQuery, codes: &[u8], width: usize) -> Vec<f32> {
    let rows = codes.len().checked_div(width).unwrap_or(0);
    let simd = rows - rows % BATCH;
    codes
        .chunks_exact(width)
        .enumerate()
        .map(|(i, row)| match (&q.quantized, i < simd) {
            (Some((t, range, sum_min)), true) => {
                let s: u32 = row
                    .iter()
                    .enumerate()
                    .map(|(b, &c)| {
                        u32::from(t[(2 * b) * 16 + usize::from(c & 0x0f)])
                            + u32::from(t[(2 * b + 1) * 16 + usize::from(c >> 4)])
                    })
                    .sum();
                s as f32 * range + sum_min
            }
            _ => row.iter().enumerate().fold(0f32, |acc, (b, &c)| {
                acc + (q.table[(2 * b) * 16 + usize::from(c & 0x0f)]
                    + q.table[(2 * b + 1) * 16 + usize::from(c >> 4)])
            }),
        })
        .collect()
}

/// The per-partition terms of the estimate.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PartitionTerms {
    add_scale: f32,
    add_offset: f32,
    query_factor: f32,
    query_error: f32,
}

/// The terms of the partition with `centroid` for `metric` (cosine is scored as L2 of the
/// normalized vectors; dot projects the query on the rotated centroid).
pub(crate) fn partition_terms(
    rq: &RabitQuantizer,
    q: &RabitQuery,
    metric: Metric,
    query: &[f32],
    centroid: &[f32],
) -> PartitionTerms {
    let gated = rq.num_bits > 1;
    if metric == Metric::Dot {
        let c = rotate(centroid, &rq.signs, rq.code_dim);
        let ip = distance::dot(&q.rotated, &c);
        let alpha = ip / distance::dot(&c, &c);
        let alpha = if alpha.is_finite() { alpha } else { 0.0 };
        let norm: f64 = q
            .rotated
            .iter()
            .zip(&c)
            .map(|(&x, &y)| (f64::from(x) - f64::from(alpha) * f64::from(y)).powi(2))
            .sum::<f64>()
            .sqrt();
        let rounded = norm as f32;
        let error = if f64::from(rounded) < norm {
            rounded.next_up()
        } else {
            rounded
        };
        PartitionTerms {
            add_scale: alpha,
            add_offset: 1.0,
            query_factor: 1.0 - ip,
            query_error: if gated { error } else { 0.0 },
        }
    } else {
        let d = distance::l2(query, centroid);
        PartitionTerms {
            add_scale: 1.0,
            add_offset: 0.0,
            query_factor: d,
            query_error: if gated { d.max(0.0).sqrt() } else { 0.0 },
        }
    }
}

/// The running top-k of a segment's scan (lance's heap: rows whose error bound cannot
/// beat the current k-th distance are not refined).
#[derive(Debug, Clone)]
pub(crate) struct TopK {
    k: usize,
    heap: std::collections::BinaryHeap<Ordered>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Ordered(f32);
impl Eq for Ordered {}
impl PartialOrd for Ordered {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Ordered {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

impl TopK {
    /// An empty top-`k`.
    pub(crate) fn new(k: usize) -> Self {
        Self {
            k,
            heap: std::collections::BinaryHeap::new(),
        }
    }

    fn worst(&self) -> Option<f32> {
        (self.heap.len() >= self.k)
            .then(|| self.heap.peek().map(|o| o.0))
            .flatten()
    }

    fn offer(&mut self, d: f32) -> bool {
        if self.heap.len() < self.k {
            self.heap.push(Ordered(d));
            true
        } else if self.worst().is_some_and(|w| w > d) {
            self.heap.pop();
            self.heap.push(Ordered(d));
            true
        } else {
            false
        }
    }
}

/// Estimated distances of a partition's rows (`None`: not accepted, out of `range`, or
/// pruned by its bound against `top`, as lance's scan drops it). `accept(i)` says whether
/// row `i` may be returned (deletions, the prefilter).
pub(crate) fn score(
    codes: &RabitCodes,
    rq: &RabitQuantizer,
    q: &RabitQuery,
    terms: PartitionTerms,
    range: (Option<f32>, Option<f32>),
    top: &mut TopK,
    accept: impl Fn(usize) -> bool,
) -> Vec<Option<f32>> {
    let binary = binary_products(q, &codes.binary, rq.code_bytes());
    let (lower, upper) = (range.0.unwrap_or(f32::MIN), range.1.unwrap_or(f32::MAX));
    let estimate = |i: usize, add: &[f32], scaled: f32| {
        scaled + terms.add_scale * (add[i] - terms.add_offset) + terms.query_factor
    };
    let mut out = Vec::with_capacity(binary.len());
    for (i, &b) in binary.iter().enumerate() {
        if !accept(i) {
            out.push(None);
            continue;
        }
        let one_bit = estimate(i, &codes.add, (b - 0.5 * q.sum_q) * codes.scale[i]);
        if rq.num_bits == 1 {
            // lance scores every row, then keeps the range.
            out.push((one_bit >= lower && one_bit < upper).then_some(one_bit));
            continue;
        }
        let bound = one_bit - codes.error[i] * terms.query_error;
        if bound >= upper || top.worst().is_some_and(|w| bound >= w) {
            out.push(None);
            continue;
        }
        let ex_bits = rq.ex_bits();
        let scale = (1u32 << ex_bits) as f32;
        let ex = &codes.ex[i * rq.code_dim..(i + 1) * rq.code_dim];
        let ex_dot = ex
            .iter()
            .zip(&q.rotated)
            .fold(0f32, |acc, (&c, &x)| acc + x * f32::from(c));
        let full = scale * b + ex_dot - (scale - 0.5) * q.sum_q;
        let d = estimate(i, &codes.ex_add, full * codes.ex_scale[i]);
        if d < lower || d >= upper {
            out.push(None);
            continue;
        }
        top.offer(d);
        out.push(Some(d));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_codes_unpack_to_rows() {
        // 33 rows of 2 bytes: one block of 32 and one transposed row.
        let rows = 33;
        let width = 2;
        let codes: Vec<u8> = (0..rows * width).map(|v| (v * 7 + 3) as u8).collect();
        // Pack as lance does.
        let mut packed = vec![0u8; rows * width];
        for i in 0..width {
            let col: Vec<u8> = (0..32).map(|r| codes[r * width + i]).collect();
            for j in 0..16 {
                let (a, b) = (col[PERM0[j]], col[PERM0[j] + 16]);
                packed[i * 32 + j] = (a & 0x0f) | ((b & 0x0f) << 4);
                packed[i * 32 + j + 16] = (a >> 4) | (b & 0xf0);
            }
        }
        packed[64] = codes[64];
        packed[65] = codes[65];
        assert_eq!(unpack_binary(&packed, rows, width), codes);
    }

    #[test]
    fn fast_rotation_keeps_the_norm() {
        for dim in [16usize, 24] {
            let signs: Vec<u8> = (0..ROTATION_ROUNDS * dim.div_ceil(8))
                .map(|i| (i * 37) as u8)
                .collect();
            let v: Vec<f32> = (0..dim).map(|i| i as f32 - 3.0).collect();
            let r = rotate(&v, &signs, dim);
            let (a, b) = (distance::dot(&v, &v), distance::dot(&r, &r));
            assert!((a - b).abs() < 1e-3 * a, "{dim}: {a} vs {b}");
        }
    }

    #[test]
    fn bad_metadata_is_refused() {
        let ok = r#"{"fast_rotation_signs":[1,2,3,4,5,6,7,8],"rotation_type":"fast","code_dim":16,"num_bits":5,"packed":true,"query_estimator":"raw_query"}"#;
        assert!(decode_metadata(ok, 2).is_ok());
        assert!(decode_metadata(ok, 3).is_err());
        for bad in [
            ok.replace("[1,2,3,4,5,6,7,8]", "[1]"),
            ok.replace("\"num_bits\":5", "\"num_bits\":0"),
            ok.replace("\"code_dim\":16", "\"code_dim\":12"),
            "{".to_string(),
        ] {
            assert!(
                matches!(decode_metadata(&bad, 2), Err(Error::Corrupt { .. })),
                "{bad}"
            );
        }
        let matrix = ok.replace("\"fast\"", "\"matrix\"");
        assert!(matches!(
            decode_metadata(&matrix, 2),
            Err(Error::Unsupported { .. })
        ));
    }
}
