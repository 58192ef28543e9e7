//! One segment of a row id sequence and the encoded u64 arrays inside segments.

use super::proto;
use crate::error::{Error, Result};

/// A validated `EncodedU64Array`: `base` + little-endian offsets of `width` bytes (2, 4),
/// or plain u64 values (`width` 8, `base` 0). Every value fits in a u64.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct U64Array {
    base: u64,
    width: usize,
    bytes: Vec<u8>,
}

impl U64Array {
    /// Validate a protobuf array (`what` names it in errors).
    fn from_proto(array: Option<proto::EncodedU64Array>, what: &str) -> Result<Self> {
        let (base, width, bytes) = match array.and_then(|a| a.array) {
            None => return Err(Error::corrupt(format!("{what} has no array"))),
            Some(proto::Array::U16(a)) => (a.base, 2, a.offsets),
            Some(proto::Array::U32(a)) => (a.base, 4, a.offsets),
            Some(proto::Array::U64(a)) => (0, 8, a.values),
        };
        if bytes.len() % width != 0 {
            return Err(Error::corrupt(format!(
                "{what}: {} bytes is not a whole number of {}-byte values",
                bytes.len(),
                width
            )));
        }
        let array = Self { base, width, bytes };
        let widest = (0..array.len()).map(|i| array.raw(i)).max().unwrap_or(0);
        if base.checked_add(widest).is_none() {
            return Err(Error::corrupt(format!(
                "{what}: base {base} + offset {widest} overflows u64"
            )));
        }
        Ok(array)
    }

    /// Number of values.
    pub(crate) fn len(&self) -> usize {
        self.bytes.len() / self.width
    }

    /// Offset width in bytes (2, 4 or 8).
    #[cfg_attr(not(test), allow(dead_code))] // tests
    pub(crate) fn width(&self) -> usize {
        self.width
    }

    fn raw(&self, i: usize) -> u64 {
        let b = &self.bytes[i * self.width..(i + 1) * self.width];
        match self.width {
            2 => u64::from(u16::from_le_bytes([b[0], b[1]])),
            4 => u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            _ => u64::from_le_bytes(b.try_into().expect("8 bytes")),
        }
    }

    /// Value `i` (`i < len`).
    pub(crate) fn get(&self, i: usize) -> u64 {
        self.base + self.raw(i)
    }

    /// The values in stored order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Index of `value` in a sorted array.
    fn search(&self, value: u64) -> std::result::Result<usize, usize> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.get(mid).cmp(&value) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    fn strictly_increasing(&self) -> bool {
        (1..self.len()).all(|i| self.get(i - 1) < self.get(i))
    }
}

/// One validated segment of row ids.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum IdSegment {
    /// `start..end`.
    Range {
        /// First id.
        start: u64,
        /// One past the last id.
        end: u64,
    },
    /// `start..end` without `holes` (sorted, inside the range).
    RangeWithHoles {
        /// First value of the range.
        start: u64,
        /// One past the last value of the range.
        end: u64,
        /// Values left out, strictly increasing.
        holes: U64Array,
    },
    /// The values of `start..end` whose bit is set (least significant bit first).
    RangeWithBitmap {
        /// First value of the range.
        start: u64,
        /// One past the last value of the range.
        end: u64,
        /// `ceil((end - start) / 8)` bytes, padding bits zero.
        bitmap: Vec<u8>,
        /// Number of set bits.
        ones: u64,
    },
    /// Strictly increasing ids.
    SortedArray(U64Array),
    /// Ids in any order.
    Array(U64Array),
}

fn check_range(what: &str, start: u64, end: u64) -> Result<u64> {
    end.checked_sub(start)
        .ok_or_else(|| Error::corrupt(format!("{what} range {start}..{end} ends before it starts")))
}

impl IdSegment {
    /// Validate a protobuf segment.
    pub(crate) fn from_proto(segment: proto::U64Segment) -> Result<Self> {
        use proto::Segment as S;
        match segment.segment {
            None => Err(Error::corrupt("segment has no encoding")),
            Some(S::Range(r)) => {
                check_range("Range", r.start, r.end)?;
                Ok(Self::Range {
                    start: r.start,
                    end: r.end,
                })
            }
            Some(S::RangeWithHoles(r)) => {
                let span = check_range("RangeWithHoles", r.start, r.end)?;
                let holes = U64Array::from_proto(r.holes, "RangeWithHoles holes")?;
                let inside = holes.iter().all(|h| h >= r.start && h < r.end);
                if !holes.strictly_increasing() || !inside || holes.len() as u64 > span {
                    return Err(Error::corrupt(format!(
                        "RangeWithHoles {}..{}: holes not strictly increasing inside the range",
                        r.start, r.end
                    )));
                }
                Ok(Self::RangeWithHoles {
                    start: r.start,
                    end: r.end,
                    holes,
                })
            }
            Some(S::RangeWithBitmap(r)) => Self::bitmap(r),
            Some(S::SortedArray(a)) => {
                let array = U64Array::from_proto(Some(a), "SortedArray")?;
                if !array.strictly_increasing() {
                    return Err(Error::corrupt(
                        "SortedArray values are not strictly increasing",
                    ));
                }
                Ok(Self::SortedArray(array))
            }
            Some(S::Array(a)) => Ok(Self::Array(U64Array::from_proto(Some(a), "Array")?)),
        }
    }

    fn bitmap(r: proto::RangeWithBitmap) -> Result<Self> {
        let span = check_range("RangeWithBitmap", r.start, r.end)?;
        let expected = span.div_ceil(8);
        if r.bitmap.len() as u64 != expected {
            return Err(Error::corrupt(format!(
                "RangeWithBitmap {}..{}: bitmap of {} bytes, expected {expected}",
                r.start,
                r.end,
                r.bitmap.len()
            )));
        }
        let tail = span % 8;
        if tail != 0 && r.bitmap.last().is_some_and(|b| b >> tail != 0) {
            return Err(Error::corrupt(format!(
                "RangeWithBitmap {}..{}: padding bits of the last byte are set",
                r.start, r.end
            )));
        }
        let ones = r.bitmap.iter().map(|b| u64::from(b.count_ones())).sum();
        Ok(Self::RangeWithBitmap {
            start: r.start,
            end: r.end,
            bitmap: r.bitmap,
            ones,
        })
    }

    /// Number of ids.
    pub(crate) fn len(&self) -> u64 {
        match self {
            Self::Range { start, end } => end - start,
            Self::RangeWithHoles { start, end, holes } => end - start - holes.len() as u64,
            Self::RangeWithBitmap { ones, .. } => *ones,
            Self::SortedArray(a) | Self::Array(a) => a.len() as u64,
        }
    }

    /// The encoding's name, e.g. `"range_with_bitmap"`, `"sorted_array/u16"`.
    #[cfg_attr(not(test), allow(dead_code))] // tests
    pub(crate) fn encoding(&self) -> String {
        let width = |a: &U64Array| format!("u{}", a.width() * 8);
        match self {
            Self::Range { .. } => "range".into(),
            Self::RangeWithHoles { holes, .. } => format!("range_with_holes/{}", width(holes)),
            Self::RangeWithBitmap { .. } => "range_with_bitmap".into(),
            Self::SortedArray(a) => format!("sorted_array/{}", width(a)),
            Self::Array(a) => format!("array/{}", width(a)),
        }
    }

    /// Smallest and largest id (`None` when empty).
    pub(crate) fn bounds(&self) -> Option<(u64, u64)> {
        if self.len() == 0 {
            return None;
        }
        match self {
            Self::Range { start, end }
            | Self::RangeWithHoles { start, end, .. }
            | Self::RangeWithBitmap { start, end, .. } => Some((*start, end - 1)),
            Self::SortedArray(a) => Some((a.get(0), a.get(a.len() - 1))),
            Self::Array(a) => Some((a.iter().min()?, a.iter().max()?)),
        }
    }

    /// Bytes of the encoded values.
    pub(crate) fn encoded_bytes(&self) -> usize {
        match self {
            Self::Range { .. } => 0,
            Self::RangeWithHoles { holes: a, .. } | Self::SortedArray(a) | Self::Array(a) => {
                a.bytes.len()
            }
            Self::RangeWithBitmap { bitmap, .. } => bitmap.len(),
        }
    }

    /// The id at `i` (`None` past the end).
    pub(crate) fn get(&self, i: u64) -> Option<u64> {
        if i >= self.len() {
            return None;
        }
        Some(match self {
            Self::Range { start, .. } => start + i,
            Self::RangeWithHoles { start, holes, .. } => {
                let mut v = start + i;
                for h in holes.iter() {
                    if h > v {
                        break;
                    }
                    v += 1;
                }
                v
            }
            Self::RangeWithBitmap { start, bitmap, .. } => start + nth_set_bit(bitmap, i)?,
            Self::SortedArray(a) | Self::Array(a) => a.get(i as usize),
        })
    }

    /// The ids in order.
    #[cfg_attr(not(test), allow(dead_code))] // tests
    pub(crate) fn iter(&self) -> Box<dyn Iterator<Item = u64> + '_> {
        match self {
            Self::Range { start, end } => Box::new(*start..*end),
            Self::RangeWithHoles { start, end, holes } => {
                Box::new((*start..*end).filter(move |v| holes.search(*v).is_err()))
            }
            Self::RangeWithBitmap {
                start, end, bitmap, ..
            } => Box::new((*start..*end).filter(move |v| bit(bitmap, v - start))),
            Self::SortedArray(a) | Self::Array(a) => Box::new(a.iter()),
        }
    }

    /// Calls `found(id, position in the segment)` for each of `ids` (sorted, unique,
    /// inside [`IdSegment::bounds`]) the segment holds.
    pub(crate) fn positions_of(&self, ids: &[u64], found: &mut dyn FnMut(u64, u64)) {
        match self {
            Self::Range { start, .. } => ids.iter().for_each(|id| found(*id, id - start)),
            Self::RangeWithHoles { start, holes, .. } => {
                for id in ids {
                    if let Err(below) = holes.search(*id) {
                        found(*id, id - start - below as u64);
                    }
                }
            }
            Self::RangeWithBitmap { start, bitmap, .. } => {
                let (mut byte, mut before) = (0usize, 0u64);
                for id in ids {
                    let b = id - start;
                    let target = (b / 8) as usize;
                    while byte < target {
                        before += u64::from(bitmap[byte].count_ones());
                        byte += 1;
                    }
                    let mask = 1u8 << (b % 8);
                    if bitmap[target] & mask != 0 {
                        found(
                            *id,
                            before + u64::from((bitmap[target] & (mask - 1)).count_ones()),
                        );
                    }
                }
            }
            Self::SortedArray(a) => {
                for id in ids {
                    if let Ok(i) = a.search(*id) {
                        found(*id, i as u64);
                    }
                }
            }
            Self::Array(a) => {
                for (i, v) in a.iter().enumerate() {
                    if ids.binary_search(&v).is_ok() {
                        found(v, i as u64);
                    }
                }
            }
        }
    }
}

#[cfg_attr(not(any(test, feature = "fuzzing")), allow(dead_code))]
fn bit(bitmap: &[u8], i: u64) -> bool {
    bitmap[(i / 8) as usize] & (1 << (i % 8)) != 0
}

/// Offset of the `n`-th (0-based) set bit, least significant bit first.
fn nth_set_bit(bitmap: &[u8], mut n: u64) -> Option<u64> {
    for (i, byte) in bitmap.iter().enumerate() {
        let ones = u64::from(byte.count_ones());
        if n < ones {
            let mut b = *byte;
            for _ in 0..n {
                b &= b - 1;
            }
            return Some(i as u64 * 8 + u64::from(b.trailing_zeros()));
        }
        n -= ones;
    }
    None
}
