//! Fuzz entry point `scalar_index` for the BITMAP / LABEL_LIST / ZONEMAP / BLOOMFILTER
//! decoders: `[mode][bytes]`.
//!
//! * mode 0: `bytes` is a serialized `RowAddrTreeMap` (a bitmap value, a null buffer);
//! * mode 1: `bytes` is a bloom filter bitset, probed with hashes of the bytes;
//! * mode 2: `bytes` is a whole `zonemap.lance` (or `bloomfilter.lance`): read it with the
//!   Lance file reader, decode the zones, check them against fragments and evaluate
//!   every query form on every zone;
//! * mode 3: `bytes` is a whole `bitmap_page_lookup.lance`: read up to 256 keys into the
//!   search samples (order checks) and decode up to 256 bitmaps.

use std::ops::Bound;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::Array;
use bytes::Bytes;

use super::{memory_object, runtime};
use crate::index::bitmap_file::search::{KeySamples, SearchPlan};
use crate::index::bitmap_file::treemap::decode_row_set;
use crate::index::bloom::sbbf::{hash, Sbbf};
use crate::index::bloom::BloomIndex;
use crate::index::key::{Key, KeyColumn};
use crate::index::predicate::LeafQuery;
use crate::index::zonemap::{zone_possible, ZoneMap};
use crate::io::{FetchOptions, IoStats, RangeFetcher};
use crate::lance::reader::{LanceFileReader, ReaderCaches, RowSelection};

/// Largest file row count read whole.
const MAX_ROWS: u64 = 4096;

/// Run the scalar-index decoders on `data` (see the module docs for the layout).
pub fn scalar_index(data: &[u8]) {
    let Some((&mode, bytes)) = data.split_first() else {
        return;
    };
    match mode % 4 {
        0 => row_set(bytes),
        1 => bloom_bits(bytes),
        2 => zone_file(bytes),
        _ => bitmap_file(bytes),
    }
}

fn row_set(bytes: &[u8]) {
    if let Ok(set) = decode_row_set(bytes, "fuzz") {
        let addrs = set.to_addresses(&|f| (f % 3 == 0).then_some(u64::from(f % 1000)));
        for a in addrs.iter().take(1000) {
            let fragment = (a >> 32) as u32;
            assert!(set.fragments.iter().any(|(f, _)| *f == fragment));
        }
    }
}

fn bloom_bits(bytes: &[u8]) {
    if let Ok(filter) = Sbbf::new(bytes) {
        for chunk in bytes.chunks(7).take(64) {
            let _ = filter.check_hash(hash(chunk));
        }
    }
}

fn open(bytes: &[u8]) -> Option<LanceFileReader> {
    let (source, path) = memory_object(Bytes::copy_from_slice(bytes));
    let fetcher = RangeFetcher::new(source, FetchOptions::default());
    runtime()
        .block_on(LanceFileReader::open(
            fetcher,
            path,
            None,
            Arc::new(ReaderCaches::new(1 << 20, 1 << 20)),
            &IoStats::new(),
        ))
        .ok()
}

fn queries() -> Vec<LeafQuery> {
    vec![
        LeafQuery::Equals(Key::Int(5)),
        LeafQuery::Equals(Key::Bytes(b"v00370".to_vec())),
        LeafQuery::Equals(Key::Float(f64::NAN)),
        LeafQuery::In {
            values: vec![Key::Int(-1), Key::Int(7)],
            has_null: true,
        },
        LeafQuery::Range {
            lower: Bound::Excluded(Key::Int(3)),
            upper: Bound::Included(Key::Float(0.0)),
        },
        LeafQuery::IsNull,
    ]
}

fn zone_file(bytes: &[u8]) {
    let Some(reader) = open(bytes) else { return };
    if reader.num_rows() > MAX_ROWS {
        return;
    }
    let columns: Vec<usize> = (0..reader.schema().fields.len()).collect();
    let Ok(batch) = runtime().block_on(reader.read_rows(
        &columns,
        &RowSelection::Range(0..reader.num_rows()),
        &IoStats::new(),
    )) else {
        return;
    };
    if let Ok(map) = ZoneMap::decode(&batch, None) {
        let _ = map.check_fragments(&|f| Some(u64::from(f) * 100));
        for z in &map.zones {
            for q in queries() {
                let _ = zone_possible(z, &q);
            }
        }
    }
    if let Ok(index) = BloomIndex::decode(&batch, None) {
        for z in &index.zones {
            let _ = z.filter.check_hash(hash(b"v00370"));
        }
    }
}

fn bitmap_file(bytes: &[u8]) {
    let Some(reader) = open(bytes) else { return };
    let Ok(idx) = reader.field_indices(&["keys", "bitmaps"]) else {
        return;
    };
    let n = reader.num_rows().min(256);
    let stats = IoStats::new();
    let Ok(batch) = runtime().block_on(reader.read_rows(&idx, &RowSelection::Range(0..n), &stats))
    else {
        return;
    };
    if let Ok(keys) = KeyColumn::new(batch.column(0)) {
        let mut samples = KeySamples::default();
        for row in 0..keys.len() {
            if samples
                .insert(row as u64, keys.get(row).map(|k| k.to_key()))
                .is_err()
            {
                break;
            }
        }
        let plan = SearchPlan::new(reader.num_rows(), 4, 16);
        let _ = plan.next_reads(&samples, &[]);
    }
    if let Some(binary) = batch.column(1).as_binary_opt::<i32>() {
        for i in 0..binary.len() {
            if binary.is_valid(i) {
                let _ = decode_row_set(binary.value(i), "fuzz");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seeds() -> Vec<Vec<u8>> {
        let dir = format!(
            "{}/tests/fixtures/datasets/scalar_indices.lance/_indices",
            env!("CARGO_MANIFEST_DIR")
        );
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            for file in std::fs::read_dir(entry.unwrap().path()).unwrap() {
                let path = file.unwrap().path();
                let bytes = std::fs::read(&path).unwrap();
                let name = path.file_name().unwrap().to_string_lossy().to_string();
                let mode = if name.starts_with("bitmap") { 3u8 } else { 2 };
                let mut seed = vec![mode];
                seed.extend_from_slice(&bytes);
                out.push(seed);
            }
        }
        out
    }

    /// xorshift64*.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state >> 12;
        *state ^= *state << 25;
        *state ^= *state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn mutate(seed: &[u8], state: &mut u64) -> Vec<u8> {
        let mut v = seed.to_vec();
        match next(state) % 4 {
            0 => v.truncate(1 + (next(state) as usize % v.len().max(1))),
            _ => {
                for _ in 0..1 + next(state) % 8 {
                    let i = 1 + (next(state) as usize % (v.len() - 1).max(1));
                    if i < v.len() {
                        v[i] = next(state) as u8;
                    }
                }
            }
        }
        v
    }

    /// Every seed and a few hundred mutations of them run without a panic.
    #[test]
    fn seeds_and_mutations_do_not_panic() {
        let seeds = seeds();
        assert!(seeds.len() >= 18);
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for seed in &seeds {
            scalar_index(seed);
            for _ in 0..20 {
                scalar_index(&mutate(seed, &mut state));
            }
        }
        // Row sets and bitsets straight from bytes.
        for i in 0..2000u64 {
            let mut bytes = vec![(i % 2) as u8];
            for _ in 0..(next(&mut state) % 64) {
                bytes.push(next(&mut state) as u8);
            }
            scalar_index(&bytes);
        }
    }

    /// A longer in-process mutation run (`LAKESEEK_FUZZ_SECS`, default 60 s).
    #[test]
    #[ignore = "a long in-process mutation run: LAKESEEK_FUZZ_SECS=N cargo test --lib long_mutation_run -- --ignored"]
    fn long_mutation_run() {
        let secs: u64 = std::env::var("LAKESEEK_FUZZ_SECS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(60);
        let seeds = seeds();
        let start = std::time::Instant::now();
        let mut state = 0x1234_5678_9ABC_DEF1u64;
        let mut runs = 0u64;
        while start.elapsed().as_secs() < secs {
            let seed = &seeds[(next(&mut state) as usize) % seeds.len()];
            scalar_index(&mutate(seed, &mut state));
            runs += 1;
        }
        eprintln!("scalar_index: {runs} executions in {secs} s, no panic");
    }
}
