//! The fuzz targets' bodies (`src/fuzzing/mod.rs`) on every `cargo test`: their seed
//! inputs (built here from the real fixtures) and every saved crash input under
//! `fuzz/regressions/<target>/`. A fixed decoder stays fixed without running libFuzzer.
//!
//! `cargo test --lib suite::proptest_fuzz_replay:: -- --ignored write_fuzz_seeds` writes the seeds
//! to `fuzz/seeds/<target>/` for `cargo fuzz run` (see fuzz/README.md).

use crate::fuzzing as harness;

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> Vec<u8> {
    std::fs::read(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn files_under(dir: &Path, suffix: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files_under(&p, suffix, out);
        } else if p.to_string_lossy().ends_with(suffix) {
            out.push(p);
        }
    }
}

fn with_prefix(prefix: &[u8], body: Vec<u8>) -> Vec<u8> {
    let mut v = prefix.to_vec();
    v.extend(body);
    v
}

/// Seed inputs per target, from the fixtures.
fn seeds() -> Vec<(&'static str, Vec<u8>)> {
    let mut out = Vec::new();
    for rel in [
        "tests/fixtures/files/v2_1/ints.lance",
        "tests/fixtures/files/v2_2/strings.lance",
        "tests/fixtures/files/v2_2/rle.lance",
        "tests/fixtures/files/v2_3/nulls_constants.lance",
        "tests/fixtures/files/v2_3/vectors.lance",
        "tests/fixtures/files/nested/v2_2/detections.lance",
        "tests/fixtures/files/nested/v2_3/detections.lance",
    ] {
        out.push(("file_metadata", with_prefix(&[0], read(rel))));
        out.push(("file_metadata", with_prefix(&[1], read(rel))));
    }
    for rel in [
        "tests/fixtures/files/nested/v2_3_sparse/detections.lance",
        "tests/fixtures/files/nested/v2_3_sparse/nested.lance",
    ] {
        out.push(("sparse_plan", with_prefix(&[0, 0], read(rel))));
        out.push(("sparse_plan", with_prefix(&[0, 3], read(rel))));
    }
    out.push((
        "sparse_plan",
        vec![1, 4, 0, 0x0a, 0x02, 0x0a, 0x00, 8, 0, 0, 0, 1],
    ));
    for rel in [
        "tests/fixtures/files/v2_0/strings.lance",
        "tests/fixtures/files/v2_0/nulls_constants.lance",
        "tests/fixtures/files/nested/v2_0/nested.lance",
    ] {
        out.push(("v2_0_page", with_prefix(&[0], read(rel))));
    }
    out.extend(crate::suite::v2_0_pages::raw_page_seeds());
    let mut manifests = Vec::new();
    for ds in ["types", "bitmap_del", "segments", "stable_ids"] {
        files_under(
            &root().join(format!("tests/fixtures/datasets/{ds}.lance/_versions")),
            ".manifest",
            &mut manifests,
        );
    }
    files_under(
        &root().join("tests/fixtures/list_element/datasets/detections.lance/_versions"),
        ".manifest",
        &mut manifests,
    );
    for m in manifests.iter().rev().take(6) {
        let bytes = std::fs::read(m).unwrap();
        out.push(("manifest", with_prefix(&[0], bytes.clone())));
        out.push(("manifest", with_prefix(&[1], bytes)));
    }
    out.extend(
        row_id_sequence_seeds()
            .into_iter()
            .map(|s| ("row_id_sequence", s)),
    );
    let mut deletions = Vec::new();
    files_under(
        &root().join("tests/fixtures/datasets/bitmap_del.lance/_deletions"),
        "",
        &mut deletions,
    );
    for d in deletions {
        let mode = if d.to_string_lossy().ends_with(".bin") {
            2
        } else {
            3
        };
        out.push(("manifest", with_prefix(&[mode], std::fs::read(d).unwrap())));
    }
    let mut lookups = Vec::new();
    for ds in ["types", "segments", "fmt_v23"] {
        files_under(
            &root().join(format!("tests/fixtures/datasets/{ds}.lance/_indices")),
            "page_lookup.lance",
            &mut lookups,
        );
    }
    for (i, l) in lookups.iter().take(12).enumerate() {
        let probe: Vec<u8> = (0..16).map(|b| (b * 7 + i) as u8).collect();
        out.push((
            "btree_lookup",
            with_prefix(&probe, std::fs::read(l).unwrap()),
        ));
    }
    out.push(("ecp_node", b"\x00\x93NUMPY\x01\x00\x46\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }      \n\x00\x00\x80\x3f\x00\x00\x00\x40".to_vec()));
    out.push((
        "ecp_node",
        vec![
            1, 0, 2, 2, 3, 4, 255, 0, 0, 128, 63, 0, 0, 0, 64, 3, 0, 0, 2, 0, 0, 128, 63, 0, 0,
            128, 63, 0, 0, 0, 64, 0, 0, 0, 64, 0, 1, 0, 1, 1, 2, 0, 0, 0, 128, 63, 0, 0, 128, 63,
            0, 0, 0, 64, 0, 0, 0, 64, 5, 6, 0, 0,
        ],
    ));
    let mut legacy = Vec::new();
    files_under(
        &root().join("tests/fixtures/files/legacy/v0_17"),
        ".lance",
        &mut legacy,
    );
    files_under(
        &root().join("tests/fixtures/files/legacy/v14"),
        ".lance",
        &mut legacy,
    );
    for f in legacy.iter().filter(|f| f.is_file()).take(8) {
        out.push(("legacy_file", std::fs::read(f).unwrap()));
    }
    // Legacy v1 index files (BTree lookup and page data of pylance 0.17), whole and cut.
    let mut legacy_index = Vec::new();
    files_under(
        &root().join("tests/fixtures/datasets/old/p0_17_0_legacy.lance/_indices"),
        ".lance",
        &mut legacy_index,
    );
    let btree_files = legacy_index.iter().filter(|f| {
        f.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("page_"))
    });
    for f in btree_files.take(4) {
        let bytes = std::fs::read(f).unwrap();
        out.push(("legacy_file", bytes[bytes.len() / 3..].to_vec()));
        out.push(("legacy_file", bytes));
    }
    let mut filters = Vec::new();
    for rel in [
        "tests/fixtures/datasets/answers.json",
        "tests/fixtures/list_element/answers.json",
    ] {
        let doc: serde_json::Value = serde_json::from_slice(&read(rel)).unwrap();
        for ds in doc["datasets"].as_object().unwrap().values() {
            for q in ds["queries"].as_array().unwrap() {
                filters.push(q["filter"].as_str().unwrap().to_string());
            }
        }
    }
    filters.sort();
    filters.dedup();
    for f in filters.iter().step_by(3).take(120) {
        out.push(("predicate", f.as_bytes().to_vec()));
    }
    out.extend(input_seeds());
    out.extend(fts_seeds());
    out.extend(vector_index_seeds());
    out
}

/// Seeds of `vector_index`: pylance 0.18.2's legacy `index.idx` files (mode 0), and short
/// inputs of the other modes (IVF message, storage JSON, RaBitQ codes, a legacy partition).
fn vector_index_seeds() -> Vec<(&'static str, Vec<u8>)> {
    let mut out = Vec::new();
    for ds in ["ivf_pq_l2_legacy", "ivf_pq_l2_legacy_delta_p0_18_2"] {
        let mut files = Vec::new();
        files_under(
            &root().join(format!("tests/fixtures/vector/datasets/{ds}/_indices")),
            "index.idx",
            &mut files,
        );
        for f in files.iter().take(2) {
            out.push(("vector_index", with_prefix(&[0], std::fs::read(f).unwrap())));
        }
    }
    let json = br#"{"dim":16,"num_bits":8,"num_sub_vectors":4,"metric_type":"l2"}"#;
    let mut storage = vec![2u8, 0, 8];
    storage.extend((json.len() as u16).to_le_bytes());
    storage.extend_from_slice(json);
    out.push(("vector_index", storage));
    out.push(("vector_index", vec![1, 8, 0, 0, 0, 0x0a, 0x02, 0x10, 0x04]));
    out.push((
        "vector_index",
        vec![3, 4, 1, 2, 0, 0xaa, 0x55, 0x0f, 0xf0, 1, 2, 3, 4],
    ));
    out.push((
        "vector_index",
        vec![4, 2, 2, 4, 0, 1, 2, 3, 7, 0, 0, 0, 0, 0, 0, 0],
    ));
    out
}

/// Seeds of `fts_postings`: a varint tail, a fixed32 tail, a full block's header with a
/// bit width over 32, a length past the documents, and bytes as an FST.
fn fts_seeds() -> Vec<(&'static str, Vec<u8>)> {
    let header = |flags: u8, length: u32, docs: u32| {
        let mut v = vec![flags];
        v.extend(length.to_le_bytes());
        v.extend(docs.to_le_bytes());
        v
    };
    let mut tail = header(0, 3, 10);
    tail.extend(11u16.to_le_bytes());
    tail.extend([0, 0, 0, 0, 1, 2, 3, 1, 1, 1, 0]);
    let mut fixed = header(2, 1, 10);
    fixed.extend(12u16.to_le_bytes());
    fixed.extend([0, 0, 0, 0, 5, 0, 0, 0, 2, 0, 0, 0]);
    let mut wide = header(0, 128, 1000);
    wide.extend(9u16.to_le_bytes());
    wide.extend([0, 0, 0, 0, 0, 0, 0, 0, 40]);
    let mut past = header(1, 300, 10);
    past.extend(4u16.to_le_bytes());
    past.extend([0, 0, 0, 0]);
    let mut fst = vec![4u8];
    fst.extend([3, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 255, 255, 255, 255]);
    [tail, fixed, wide, past, fst]
        .into_iter()
        .map(|v| ("fts_postings", v))
        .collect()
}

/// Seeds of the user-input targets: every extreme filter shape at its largest, and
/// malformed command-line values (URLs, storage options, row lists).
fn input_seeds() -> Vec<(&'static str, Vec<u8>)> {
    let mut out = Vec::new();
    for shape in 0u8..6 {
        for (n, fragment) in [
            (20_000u16, "i32 = 1"),
            (600, "s = 'x'"),
            (3, "-99999999999999999999"),
        ] {
            let mut seed = vec![shape];
            seed.extend(n.to_be_bytes());
            seed.extend(fragment.as_bytes());
            out.push(("filter_extremes", seed));
        }
    }
    for values in [
        &[
            "/tmp/t.lance",
            "coalesce_gap=-1",
            "max_retries=99999999999999999999999",
        ][..],
        &[
            "memory:///x",
            "hedge_fraction=NaN",
            "coalesce_waste=inf",
            "timeout=soon",
        ],
        &["s3://user:pw@bucket/x?sig=1", "aws_region"],
        &["file:///%zz", "=", "==", "retry_timeout_secs=1e309"],
        &["0..18446744073709551616", "5..3", ",,,", "1,2,-3", ""],
        &["memory://", "bogus_option=1"],
    ] {
        out.push(("cli_values", values.join("\0").into_bytes()));
    }
    out
}

/// Serialized row id sequences: a range, and the shapes pylance writes after deletes and
/// compactions (a bitmap, an unsorted u16 array), plus holes and a sorted u32 array.
fn row_id_sequence_seeds() -> Vec<Vec<u8>> {
    use crate::lance::rowids::proto as pb;
    use prost::Message;
    let seg = |s: pb::Segment| pb::U64Segment { segment: Some(s) };
    let u16s = |base: u64, v: &[u16]| pb::EncodedU64Array {
        array: Some(pb::Array::U16(pb::OffsetArray {
            base,
            offsets: v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        })),
    };
    let sequences = vec![
        vec![seg(pb::Segment::Range(pb::Range { start: 0, end: 300 }))],
        vec![
            seg(pb::Segment::RangeWithBitmap(pb::RangeWithBitmap {
                start: 7,
                end: 27,
                bitmap: vec![0b1011_0101, 0xff, 0x0c],
            })),
            seg(pb::Segment::Array(u16s(40, &[9, 2, 300]))),
        ],
        vec![
            seg(pb::Segment::RangeWithHoles(pb::RangeWithHoles {
                start: 100,
                end: 120,
                holes: Some(u16s(100, &[3, 4, 19])),
            })),
            seg(pb::Segment::SortedArray(pb::EncodedU64Array {
                array: Some(pb::Array::U32(pb::OffsetArray {
                    base: 1 << 33,
                    offsets: [1u32, 5, 1 << 20]
                        .iter()
                        .flat_map(|x| x.to_le_bytes())
                        .collect(),
                })),
            })),
        ],
    ];
    sequences
        .into_iter()
        .map(|segments| pb::RowIdSequence { segments }.encode_to_vec())
        .collect()
}

fn regressions() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for target in harness::TARGETS {
        let mut files = Vec::new();
        files_under(
            &root().join("fuzz/regressions").join(target),
            "",
            &mut files,
        );
        out.extend(files.into_iter().map(|f| (target.to_string(), f)));
    }
    out
}

#[test]
fn every_target_has_seeds() {
    let seeds = seeds();
    for target in harness::TARGETS {
        assert!(
            seeds.iter().filter(|(t, _)| t == target).count() >= 2,
            "{target} has seeds"
        );
    }
}

#[test]
fn seeds_and_saved_regressions_run_without_panics() {
    for (target, input) in seeds() {
        harness::run(target, &input);
    }
    for (target, path) in regressions() {
        let input = std::fs::read(&path).unwrap();
        eprintln!("replaying {}", path.display());
        harness::run(&target, &input);
    }
}

#[test]
#[ignore = "writes fuzz/seeds/ for cargo fuzz; run explicitly"]
fn write_fuzz_seeds() {
    for (i, (target, input)) in seeds().into_iter().enumerate() {
        let dir = root().join("fuzz/seeds").join(target);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("seed-{i:03}")), input).unwrap();
    }
}
