//! External merge sort of index entries (value, row address): entries are kept in memory
//! until they take `budget` bytes, then sorted and spilled to a temporary run file; the
//! result merges the runs (and the in-memory rest) with a heap. Order: null values first,
//! then values by unsigned bytes (a prefix before any longer value), then by address.
//!
//! Run records: `u32` length (`u32::MAX` for a null value), the value bytes, `u64` address,
//! little-endian.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::io::{BufReader, BufWriter, Read, Write};

use crate::error::{Error, Result};

/// One index entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Encoded key tuple; `None` for a null list.
    pub(crate) value: Option<Vec<u8>>,
    /// Row address.
    pub(crate) id: u64,
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        // None < Some: nulls first.
        self.value.cmp(&other.value).then(self.id.cmp(&other.id))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Bytes an entry is charged against the budget.
fn weight(value: Option<&[u8]>) -> usize {
    48 + value.map_or(0, <[u8]>::len)
}

/// Collects entries and sorts them, spilling past a memory budget.
pub(crate) struct ExternalSorter {
    budget: usize,
    used: usize,
    buffer: Vec<Entry>,
    runs: Vec<std::fs::File>,
    dir: tempfile::TempDir,
    total: u64,
}

impl ExternalSorter {
    /// A sorter keeping at most about `budget` bytes of entries in memory.
    pub(crate) fn new(budget: usize) -> Result<Self> {
        Ok(Self {
            budget: budget.max(1 << 10),
            used: 0,
            buffer: Vec::new(),
            runs: Vec::new(),
            dir: tempfile::tempdir()?,
            total: 0,
        })
    }

    /// Add one entry.
    pub(crate) fn push(&mut self, value: Option<&[u8]>, id: u64) -> Result<()> {
        self.used += weight(value);
        self.total += 1;
        self.buffer.push(Entry {
            value: value.map(<[u8]>::to_vec),
            id,
        });
        if self.used >= self.budget {
            self.spill()?;
        }
        Ok(())
    }

    /// Temporary run files written so far.
    pub(crate) fn runs(&self) -> usize {
        self.runs.len()
    }

    fn spill(&mut self) -> Result<()> {
        let mut entries = std::mem::take(&mut self.buffer);
        self.used = 0;
        entries.sort_unstable();
        let file = tempfile::tempfile_in(self.dir.path())?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        for e in &entries {
            match &e.value {
                None => out.write_all(&u32::MAX.to_le_bytes())?,
                Some(v) => {
                    let len = u32::try_from(v.len())
                        .ok()
                        .filter(|l| *l != u32::MAX)
                        .ok_or_else(|| Error::unsupported("index key of 4 GiB or more"))?;
                    out.write_all(&len.to_le_bytes())?;
                    out.write_all(v)?;
                }
            }
            out.write_all(&e.id.to_le_bytes())?;
        }
        let mut file = out.into_inner().map_err(|e| e.into_error())?;
        std::io::Seek::rewind(&mut file)?;
        self.runs.push(file);
        Ok(())
    }

    /// All entries in order.
    pub(crate) fn finish(mut self) -> Result<SortedEntries> {
        self.buffer.sort_unstable();
        let memory = std::mem::take(&mut self.buffer).into_iter();
        let mut sources: Vec<Source> = vec![Source::Memory(memory)];
        for file in std::mem::take(&mut self.runs) {
            sources.push(Source::Run(BufReader::with_capacity(256 << 10, file)));
        }
        let mut heap = BinaryHeap::new();
        for (i, s) in sources.iter_mut().enumerate() {
            if let Some(e) = s.next_entry()? {
                heap.push(Reverse((e, i)));
            }
        }
        Ok(SortedEntries {
            sources,
            heap,
            _dir: self.dir,
        })
    }
}

/// One sorted input of the merge.
enum Source {
    Memory(std::vec::IntoIter<Entry>),
    Run(BufReader<std::fs::File>),
}

impl Source {
    fn next_entry(&mut self) -> Result<Option<Entry>> {
        match self {
            Source::Memory(it) => Ok(it.next()),
            Source::Run(r) => {
                let mut len = [0u8; 4];
                match r.read_exact(&mut len) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
                    Err(e) => return Err(e.into()),
                }
                let len = u32::from_le_bytes(len);
                let value = if len == u32::MAX {
                    None
                } else {
                    let mut v = vec![0u8; len as usize];
                    r.read_exact(&mut v)?;
                    Some(v)
                };
                let mut id = [0u8; 8];
                r.read_exact(&mut id)?;
                Ok(Some(Entry {
                    value,
                    id: u64::from_le_bytes(id),
                }))
            }
        }
    }
}

/// The merged, sorted entries (an iterator of `Result<Entry>`).
pub(crate) struct SortedEntries {
    sources: Vec<Source>,
    heap: BinaryHeap<Reverse<(Entry, usize)>>,
    _dir: tempfile::TempDir,
}

impl Iterator for SortedEntries {
    type Item = Result<Entry>;

    fn next(&mut self) -> Option<Self::Item> {
        let Reverse((entry, source)) = self.heap.pop()?;
        match self.sources[source].next_entry() {
            Ok(Some(next)) => self.heap.push(Reverse((next, source))),
            Ok(None) => {}
            Err(e) => return Some(Err(e)),
        }
        Some(Ok(entry))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        #[test]
        fn sorts_like_an_in_memory_sort_whatever_the_budget(
            entries in proptest::collection::vec(
                (proptest::option::weighted(0.9, proptest::collection::vec(0u8..4, 0..6)), any::<u64>()),
                0..400,
            ),
            budget in 1usize..20_000,
        ) {
            let mut sorter = ExternalSorter::new(budget).unwrap();
            for (v, id) in &entries {
                sorter.push(v.as_deref(), *id).unwrap();
            }
            let got: Vec<Entry> = sorter.finish().unwrap().map(|e| e.unwrap()).collect();
            let mut want: Vec<Entry> = entries
                .into_iter()
                .map(|(value, id)| Entry { value, id })
                .collect();
            want.sort();
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn spills_past_the_budget_and_orders_nulls_first() {
        let mut sorter = ExternalSorter::new(1024).unwrap();
        for i in 0..1000u64 {
            let v = (i % 7 != 0).then(|| (1000 - i).to_be_bytes().to_vec());
            sorter.push(v.as_deref(), i).unwrap();
        }
        assert!(sorter.runs() > 10);
        assert_eq!(sorter.total, 1000);
        let got: Vec<Entry> = sorter.finish().unwrap().map(|e| e.unwrap()).collect();
        assert_eq!(got.len(), 1000);
        assert!(got[..143].iter().all(|e| e.value.is_none()));
        assert!(got.windows(2).all(|w| w[0] <= w[1]));
    }
}
