//! What the zone-based index kinds (ZONEMAP, BLOOMFILTER) share: the zone columns every
//! such file has (`fragment_id`, `zone_start`, `zone_length`: [`bounds`]), the truth
//! values a predicate may take in a zone ([`Possible`], [`possible`]), the exact null rows
//! in a global buffer ([`NULL_BITMAP_KEY`]), and the planned leaf they answer with
//! ([`planned::PlannedZones`]).

pub(crate) mod bounds;
pub(crate) mod planned;

use crate::error::Result;
use crate::index::predicate::LeafQuery;
use crate::io::IoStats;
use crate::lance::data_file::DataFileReader;
use crate::lance::reader::RowSelection;
pub(crate) use bounds::decode_bounds;

/// Schema metadata key of the null-rows global buffer.
pub(crate) const NULL_BITMAP_KEY: &str = "null_bitmap";

/// Rows of one fragment: `start..start + length` (row offsets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ZoneBound {
    /// Fragment id.
    pub(crate) fragment: u32,
    /// First row offset.
    pub(crate) start: u64,
    /// Rows spanned.
    pub(crate) length: u64,
}

impl ZoneBound {
    /// Row offsets of the zone.
    pub(crate) fn rows(&self) -> std::ops::Range<u64> {
        self.start..self.start + self.length
    }
}

/// Every row of `reader` (all columns), for small whole-file decodes.
pub(crate) async fn read_all(
    reader: &DataFileReader,
    stats: &IoStats,
) -> Result<arrow_array::RecordBatch> {
    let columns: Vec<usize> = (0..reader.schema().fields.len()).collect();
    reader
        .read_rows(&columns, &RowSelection::Range(0..reader.num_rows()), stats)
        .await
}

/// Which truth values a test may take on some row of a zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Possible {
    /// TRUE on some row.
    pub(crate) t: bool,
    /// FALSE on some row.
    pub(crate) f: bool,
    /// NULL on some row.
    pub(crate) n: bool,
}

impl Possible {
    /// Whether `want` (TRUE, or FALSE) is possible.
    pub(crate) fn admits(&self, want_true: bool) -> bool {
        if want_true {
            self.t
        } else {
            self.f
        }
    }
}

/// The truth values a predicate tree may take on some row, from its leaves' (SQL
/// three-valued logic, conservatively: a value is reported whenever some combination of
/// the leaves' possible values yields it; rows are not correlated).
pub(crate) fn possible(
    predicate: &crate::index::predicate::Predicate,
    leaf: &dyn Fn(&LeafQuery) -> Possible,
) -> Possible {
    use crate::index::predicate::Predicate as P;
    match predicate {
        P::Leaf(l) => leaf(&l.query),
        P::Not(p) => {
            let p = possible(p, leaf);
            Possible {
                t: p.f,
                f: p.t,
                n: p.n,
            }
        }
        P::IsTrue(p) => {
            let p = possible(p, leaf);
            Possible {
                t: p.t,
                f: p.f || p.n,
                n: false,
            }
        }
        P::And(ps) => {
            let ps: Vec<Possible> = ps.iter().map(|p| possible(p, leaf)).collect();
            Possible {
                t: ps.iter().all(|p| p.t),
                f: ps.iter().any(|p| p.f),
                n: ps.iter().all(|p| p.t || p.n) && ps.iter().any(|p| p.n),
            }
        }
        P::Or(ps) => {
            let ps: Vec<Possible> = ps.iter().map(|p| possible(p, leaf)).collect();
            Possible {
                t: ps.iter().any(|p| p.t),
                f: ps.iter().all(|p| p.f),
                n: ps.iter().all(|p| p.f || p.n) && ps.iter().any(|p| p.n),
            }
        }
    }
}
