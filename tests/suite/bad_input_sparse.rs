//! Malformed 2.3 sparse pages, made by mutating the real pylance fixture
//! `nested/v2_3_sparse/detections.lance` (column `detections.item.label`: a list layer with
//! 54 non-empty positions stored Flat(64), counts, a struct and a leaf validity layer;
//! chunked values with a dictionary). Each read must fail with `Corrupt` naming the file,
//! the column and page, and the sparse rule broken — never panic, never return arrays.

use crate::suite::common::file_fixture;
use crate::suite::read_support as support;

use std::ops::Range;

use crate::lance::page::sparse::SparseValues;
use crate::lance::page::PageLayout;
use crate::lance::proto::encodings as enc;
use crate::lance::proto::file as pb;
use crate::Error;
use support::open_and_read_all;

const NAME: &str = "bad_sparse.lance";
const FIXTURE: &str = "nested/v2_3_sparse/detections.lance";
/// Physical column of `detections.item.label`.
const LABEL: usize = 1;

/// Expect `Corrupt` naming the file, column `LABEL`'s page 0 and every needle.
fn assert_rule(result: crate::Result<()>, needles: &[&str]) {
    match result {
        Err(Error::Corrupt {
            path, range, what, ..
        }) => {
            assert_eq!(path, NAME, "path in {what}");
            assert!(range.is_some(), "no byte range in {what:?}");
            assert!(
                what.contains(&format!("column {LABEL} page 0")),
                "{what:?} does not name the column and page"
            );
            for needle in needles {
                assert!(
                    what.contains(needle),
                    "{what:?} does not mention {needle:?}"
                );
            }
        }
        other => panic!("expected Corrupt mentioning {needles:?}, got {other:?}"),
    }
}

/// The label page's layout as lakeseek parses it, and its buffers.
async fn label_page(file: &[u8]) -> (Vec<Range<u64>>, PageLayout) {
    let (source, path) = support::memory_source(NAME, file.to_vec()).await;
    let reader = support::open(source, path).await.expect("open");
    let page = &reader.metadata().columns[LABEL].pages[0];
    (page.buffers.clone(), page.layout.clone())
}

/// Re-encode the label page after `edit` on its sparse structure and page record.
fn edit_page(
    file: &[u8],
    edit: impl Fn(&mut enc::SparseStructure, &mut pb::column_metadata::Page),
) -> Vec<u8> {
    support::edit_planar_page(file, LABEL, |layout, page| {
        let Some(enc::structural_plane::Codec::Sparse(sparse)) =
            layout.structure.as_mut().and_then(|s| s.codec.as_mut())
        else {
            panic!("sparse")
        };
        edit(sparse, page);
    })
}

/// Absolute byte range of the non-empty positions payload (54 × u64).
async fn non_empty_payload(file: &[u8]) -> Range<usize> {
    let (_, layout) = label_page(file).await;
    let PageLayout::Sparse(sparse) = layout else {
        panic!("not sparse")
    };
    let r = sparse.structural_buffers[0].clone();
    assert_eq!(
        r.end - r.start,
        54 * 8,
        "Flat(64) positions of 54 non-empty lists"
    );
    r.start as usize..r.end as usize
}

fn u64_at(file: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(file[at..at + 8].try_into().expect("8 bytes"))
}

#[tokio::test]
async fn the_unmodified_fixture_reads() {
    open_and_read_all(NAME, file_fixture(FIXTURE))
        .await
        .expect("fixture reads");
}

#[tokio::test]
async fn positions_not_increasing_are_corrupt() {
    let mut file = file_fixture(FIXTURE);
    let p = non_empty_payload(&file).await;
    let (a, b) = (u64_at(&file, p.start), u64_at(&file, p.start + 8));
    file[p.start..p.start + 8].copy_from_slice(&b.to_le_bytes());
    file[p.start + 8..p.start + 16].copy_from_slice(&a.to_le_bytes());
    assert_rule(
        open_and_read_all(NAME, file).await,
        &[
            "positions strictly increasing",
            "layer 0 non-empty positions",
        ],
    );
}

#[tokio::test]
async fn a_position_outside_its_domain_is_corrupt() {
    let mut file = file_fixture(FIXTURE);
    let p = non_empty_payload(&file).await;
    file[p.end - 8..p.end].copy_from_slice(&5000u64.to_le_bytes());
    assert_rule(
        open_and_read_all(NAME, file).await,
        &[
            "positions inside the domain",
            "position 5000 in a domain of 5000 slots",
        ],
    );
}

#[tokio::test]
async fn counts_that_do_not_sum_to_the_child_slots_are_corrupt() {
    let file = edit_page(&file_fixture(FIXTURE), |sparse, _| {
        let Some(enc::sparse_structural_layer::Layer::List(list)) = sparse.layers[0].layer.as_mut()
        else {
            panic!("list layer")
        };
        list.num_child_slots += 3;
    });
    assert_rule(
        open_and_read_all(NAME, file).await,
        &["counts sum to child slots", "the layer has 170 child slots"],
    );
}

#[tokio::test]
async fn a_missing_or_extra_structural_buffer_is_corrupt() {
    let missing = edit_page(&file_fixture(FIXTURE), |_, page| {
        page.buffer_offsets.pop();
        page.buffer_sizes.pop();
    });
    assert_rule(
        open_and_read_all(NAME, missing).await,
        &["buffers match layers", "missing"],
    );
    let extra = edit_page(&file_fixture(FIXTURE), |_, page| {
        page.buffer_offsets.push(0);
        page.buffer_sizes.push(8);
    });
    assert_rule(
        open_and_read_all(NAME, extra).await,
        &["buffers match layers", "structural buffers"],
    );
}

#[tokio::test]
async fn a_layer_whose_domain_does_not_chain_is_corrupt() {
    // The struct validity lives in the list's child domain (167 slots); null positions
    // 160, 165, 170 (a payload-free Range sequence) fit the 5000-row domain but not it.
    let file = edit_page(&file_fixture(FIXTURE), |sparse, _| {
        let Some(enc::sparse_structural_layer::Layer::Validity(set)) =
            sparse.layers[1].layer.as_mut()
        else {
            panic!("struct validity layer")
        };
        set.meaning = enc::sparse_validity_set::Meaning::SparseValidityNullPositions as i32;
        set.num_positions = 3;
        set.positions = Some(enc::CompressiveEncoding {
            compression: Some(enc::compressive_encoding::Compression::Range(enc::Range {
                uncompressed_bits_per_value: 64,
                start: 160,
                step: 5,
            })),
        });
    });
    assert_rule(
        open_and_read_all(NAME, file).await,
        &[
            "positions inside the domain",
            "layer 1",
            "domain of 167 slots",
        ],
    );
    // A leaf validity that is not the inner-most layer.
    let file = edit_page(&file_fixture(FIXTURE), |sparse, _| {
        let list = sparse.layers[0].clone();
        sparse.layers.push(list);
    });
    let result = open_and_read_all(NAME, file).await;
    assert!(matches!(result, Err(Error::Corrupt { .. })), "{result:?}");
}

#[tokio::test]
async fn a_chunk_table_that_does_not_sum_to_the_value_buffer_is_corrupt() {
    let mut file = file_fixture(FIXTURE);
    let (buffers, layout) = label_page(&file).await;
    let PageLayout::Sparse(sparse) = &layout else {
        panic!("not sparse")
    };
    assert!(matches!(sparse.values, SparseValues::Chunked(_)));
    // 2.3 chunk words are u32: bits 4.. hold bytes/8 - 1; grow the first chunk by 8 bytes.
    let at = buffers[0].start as usize;
    let word = u32::from_le_bytes(file[at..at + 4].try_into().expect("word"));
    file[at..at + 4].copy_from_slice(&(word + 16).to_le_bytes());
    assert_rule(open_and_read_all(NAME, file).await, &["sum"]);
}
