//! Malformed pages built by mutating real pylance fixtures in memory: chunk tables, chunk
//! framing, bit widths, dictionary indices, FSST tables, full-zip offsets, page layouts.
//! Each read must fail with `Corrupt` naming the path and the page's byte range, never
//! panic; random byte flips anywhere must never panic.

use crate::suite::common::file_fixture;
use crate::suite::read_support as support;

use std::ops::Range;

use crate::lance::page::miniblock::ChunkFrame;
use crate::lance::page::{PageInit, PageLayout};
use crate::lance::proto::encodings as enc;
use crate::lance::proto::file as pb;
use crate::Error;
use prost::Message;
use support::{column_protos, open_and_read_all, with_columns};

const NAME: &str = "bad.lance";
/// Mutations per file in `random_byte_flips_never_panic` (override with LAKESEEK_FUZZ_ROUNDS).
const FUZZ_ROUNDS_DEFAULT: usize = 60;

fn assert_corrupt(result: crate::Result<()>, needle: &str) {
    match result {
        Err(Error::Corrupt {
            path, range, what, ..
        }) => {
            assert_eq!(path, NAME, "path in {what}");
            assert!(range.is_some(), "no byte range in {what:?}");
            assert!(
                what.to_lowercase().contains(&needle.to_lowercase()),
                "{what:?} does not mention {needle:?}"
            );
        }
        other => panic!("expected Corrupt mentioning {needle:?}, got {other:?}"),
    }
}

/// Page 0 of the column of top-level field `name`: (column index, page buffers, layout).
async fn page_of(file: &[u8], name: &str) -> (usize, Vec<Range<u64>>, PageLayout) {
    let (source, path) = support::memory_source(NAME, file.to_vec()).await;
    let reader = support::open(source, path).await.expect("open");
    let field = &reader.schema().fields[reader.schema().field_index(name).expect("field")];
    let page = &reader.metadata().columns[field.first_column].pages[0];
    (
        field.first_column,
        page.buffers.clone(),
        page.layout.clone(),
    )
}

/// Absolute range of chunk 0 and of its value buffer `index`.
fn first_chunk_value_buffer(
    file: &[u8],
    layout: &PageLayout,
    index: usize,
) -> (Range<usize>, Range<usize>) {
    let PageLayout::MiniBlock(mini) = layout else {
        panic!("not a mini-block page")
    };
    let init_bytes: Vec<bytes::Bytes> = layout
        .init_ranges()
        .iter()
        .map(|r| bytes::Bytes::copy_from_slice(&file[r.start as usize..r.end as usize]))
        .collect();
    let PageInit::MiniBlock(init) = layout.decode_init(&init_bytes).expect("init") else {
        panic!("init")
    };
    let chunk = init.chunks.chunks[0];
    let start = (mini.chunk_data.start + chunk.byte_start) as usize;
    let end = start + chunk.bytes as usize;
    let bytes = bytes::Bytes::copy_from_slice(&file[start..end]);
    let frame = ChunkFrame::parse(
        &bytes,
        mini.rep_compression.is_some(),
        mini.def_compression.is_some(),
        mini.num_buffers,
        mini.has_large_chunk,
    )
    .expect("frame");
    let buffer = &frame.buffers[index];
    let offset = buffer.as_ptr() as usize - bytes.as_ptr() as usize;
    (start..end, start + offset..start + offset + buffer.len())
}

#[tokio::test]
async fn chunk_words_that_do_not_sum_to_the_buffer_are_corrupt() {
    for relative in ["v2_1/ints.lance", "v2_2/ints.lance", "v2_3/ints.lance"] {
        let mut file = file_fixture(relative);
        let (_, buffers, _) = page_of(&file, "i32_full").await;
        // Grow the first chunk by 8 bytes (word bits 4.. hold bytes/8 - 1).
        let at = buffers[0].start as usize;
        let word = u16::from_le_bytes([file[at], file[at + 1]]);
        file[at..at + 2].copy_from_slice(&(word + 16).to_le_bytes());
        assert_corrupt(open_and_read_all(NAME, file).await, "sum");
    }
}

#[tokio::test]
async fn chunk_metadata_of_odd_size_or_bad_counts_is_corrupt() {
    let file = file_fixture("v2_2/ints.lance");
    let (column, _, _) = page_of(&file, "i32_full").await;
    let mut columns = column_protos(&file);
    columns[column].pages[0].buffer_sizes[0] -= 1;
    assert_corrupt(
        open_and_read_all(NAME, with_columns(&file, &columns)).await,
        "word",
    );
    // A non-final chunk whose item count is log2 = 0.
    let mut file = file_fixture("v2_2/ints.lance");
    let (_, buffers, _) = page_of(&file, "i32_full").await;
    let at = buffers[0].start as usize;
    file[at] &= 0xf0;
    assert_corrupt(open_and_read_all(NAME, file).await, "log2");
}

#[tokio::test]
async fn chunk_headers_that_overrun_the_chunk_are_corrupt() {
    let mut file = file_fixture("v2_2/floats.lance");
    let (_, _, layout) = page_of(&file, "f32").await;
    let (chunk, _) = first_chunk_value_buffer(&file, &layout, 0);
    // Buffer size field (u32 after the u16 level count) claims more than the chunk holds.
    let at = chunk.start + 2;
    file[at..at + 4].copy_from_slice(&(chunk.len() as u32 * 2).to_le_bytes());
    assert_corrupt(open_and_read_all(NAME, file).await, "overruns");
}

#[tokio::test]
async fn bit_widths_wider_than_the_type_are_corrupt() {
    for relative in ["v2_1/ints.lance", "v2_2/ints.lance", "v2_3/ints.lance"] {
        let mut file = file_fixture(relative);
        let (_, _, layout) = page_of(&file, "u32_small").await;
        let (_, values) = first_chunk_value_buffer(&file, &layout, 0);
        // Inline bitpacking: word 0 of the chunk's buffer is the bit width.
        file[values.start..values.start + 4].copy_from_slice(&40u32.to_le_bytes());
        let result = open_and_read_all(NAME, file).await;
        assert_corrupt(result, "width");
    }
}

#[tokio::test]
async fn dictionary_indices_out_of_range_are_corrupt() {
    for relative in [
        "v2_1/strings.lance",
        "v2_2/strings.lance",
        "v2_3/strings.lance",
    ] {
        let mut file = file_fixture(relative);
        let (_, _, layout) = page_of(&file, "s_dict").await;
        let PageLayout::MiniBlock(mini) = &layout else {
            panic!("s_dict is mini-block")
        };
        assert!(
            mini.dictionary.is_some() && mini.num_dictionary_items < 64,
            "{relative}: expected a small dictionary"
        );
        let (_, values) = first_chunk_value_buffer(&file, &layout, 0);
        // Every packed index becomes all ones: 2^W - 1 >= 60 items.
        file[values.start + 4..values.end].fill(0xff);
        assert_corrupt(open_and_read_all(NAME, file).await, "dictionary index");
    }
}

/// Re-encode page 0 of `column` after `edit` on its decoded 2.1/2.2 layout.
fn edit_layout(file: &[u8], column: usize, edit: impl Fn(&mut enc::PageLayout)) -> Vec<u8> {
    let mut columns = column_protos(file);
    let page = &mut columns[column].pages[0];
    let Some(pb::encoding::Location::Direct(direct)) =
        page.encoding.as_ref().and_then(|e| e.location.clone())
    else {
        panic!("direct encoding")
    };
    let mut any = prost_types::Any::decode(direct.encoding).expect("any");
    let mut layout = enc::PageLayout::decode(any.value.as_slice()).expect("layout");
    edit(&mut layout);
    any.value = layout.encode_to_vec();
    page.encoding = Some(pb::Encoding {
        location: Some(pb::encoding::Location::Direct(pb::DirectEncoding {
            encoding: any.encode_to_vec().into(),
        })),
    });
    with_columns(file, &columns)
}

fn fsst_of(encoding: &mut Option<enc::CompressiveEncoding>) -> &mut enc::Fsst {
    match encoding.as_mut().and_then(|e| e.compression.as_mut()) {
        Some(enc::compressive_encoding::Compression::Fsst(f)) => f,
        other => panic!("not FSST: {other:?}"),
    }
}

#[tokio::test]
async fn broken_fsst_symbol_tables_are_corrupt() {
    let file = file_fixture("v2_2/strings.lance");
    let (column, _, _) = page_of(&file, "s_fsst").await;
    let truncate = edit_layout(&file, column, |l| {
        let Some(enc::page_layout::Layout::MiniBlockLayout(m)) = &mut l.layout else {
            panic!("mini-block")
        };
        let f = fsst_of(&mut m.value_compression);
        f.symbol_table = f.symbol_table.slice(..f.symbol_table.len() / 2);
    });
    assert_corrupt(open_and_read_all(NAME, truncate).await, "symbol");
    let long_symbol = edit_layout(&file, column, |l| {
        let Some(enc::page_layout::Layout::MiniBlockLayout(m)) = &mut l.layout else {
            panic!("mini-block")
        };
        let f = fsst_of(&mut m.value_compression);
        let mut table = f.symbol_table.to_vec();
        let symbols = table[0] as usize;
        // Every symbol length byte claims 200 bytes.
        table[8 + symbols * 8..8 + symbols * 9].fill(200);
        f.symbol_table = table.into();
    });
    assert_corrupt(open_and_read_all(NAME, long_symbol).await, "symbol");
    // Full-zip FSST too.
    let file = file_fixture("v2_2/long_strings.lance");
    let (column, _, _) = page_of(&file, "long_fsst").await;
    let empty = edit_layout(&file, column, |l| {
        let Some(enc::page_layout::Layout::FullZipLayout(z)) = &mut l.layout else {
            panic!("full-zip")
        };
        fsst_of(&mut z.value_compression).symbol_table = bytes::Bytes::from_static(&[1, 2, 3]);
    });
    assert_corrupt(open_and_read_all(NAME, empty).await, "symbol");
}

#[tokio::test]
async fn layouts_that_disagree_with_their_buffers_are_corrupt() {
    let file = file_fixture("v2_2/ints.lance");
    let (column, _, _) = page_of(&file, "i32_full").await;
    let buffers = edit_layout(&file, column, |l| {
        let Some(enc::page_layout::Layout::MiniBlockLayout(m)) = &mut l.layout else {
            panic!()
        };
        m.num_buffers = 1 << 40;
    });
    assert_corrupt(open_and_read_all(NAME, buffers).await, "value buffers");
    let items = edit_layout(&file, column, |l| {
        let Some(enc::page_layout::Layout::MiniBlockLayout(m)) = &mut l.layout else {
            panic!()
        };
        m.num_items += 5000;
    });
    assert_corrupt(open_and_read_all(NAME, items).await, "item");
    let dictionary = edit_layout(&file, column, |l| {
        let Some(enc::page_layout::Layout::MiniBlockLayout(m)) = &mut l.layout else {
            panic!()
        };
        m.dictionary = m.value_compression.clone();
    });
    assert_corrupt(open_and_read_all(NAME, dictionary).await, "dictionary");
    let layers = edit_layout(&file, column, |l| {
        let Some(enc::page_layout::Layout::MiniBlockLayout(m)) = &mut l.layout else {
            panic!()
        };
        m.layers = vec![0];
    });
    assert_corrupt(open_and_read_all(NAME, layers).await, "layer");
    let planar_codec = edit_layout(&file, column, |l| {
        let Some(enc::page_layout::Layout::MiniBlockLayout(m)) = &mut l.layout else {
            panic!()
        };
        m.value_compression = Some(enc::CompressiveEncoding {
            compression: Some(enc::compressive_encoding::Compression::Range(enc::Range {
                uncompressed_bits_per_value: 32,
                start: 0,
                step: 1,
            })),
        });
    });
    assert!(matches!(
        open_and_read_all(NAME, planar_codec).await,
        Err(Error::Corrupt { .. } | Error::Unsupported { .. })
    ));
}

#[tokio::test]
async fn full_zip_offsets_that_do_not_match_the_data_are_corrupt() {
    let mut file = file_fixture("v2_2/long_strings.lance");
    let (_, buffers, layout) = page_of(&file, "long_bin").await;
    assert!(matches!(layout, PageLayout::FullZip(_)));
    // The last row offset must equal the data size: make it one larger.
    let index = buffers[1].clone();
    let width = ((index.end - index.start) / 121) as usize;
    let last = index.end as usize - width;
    let mut word = [0u8; 8];
    word[..width].copy_from_slice(&file[last..last + width]);
    let v = u64::from_le_bytes(word) + 1;
    file[last..last + width].copy_from_slice(&v.to_le_bytes()[..width]);
    assert_corrupt(open_and_read_all(NAME, file).await, "offsets");
    // Inline lengths that overrun a row's span.
    let mut file = file_fixture("v2_2/long_strings.lance");
    let (_, buffers, _) = page_of(&file, "long_bin").await;
    let data = buffers[0].start as usize;
    file[data..data + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_corrupt(open_and_read_all(NAME, file).await, "overruns");
}

#[tokio::test]
async fn random_byte_flips_never_panic() {
    let mut state = 0x9e3779b97f4a7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let files = [
        "v2_1/ints.lance",
        "v2_2/strings.lance",
        "v2_3/nulls_constants.lance",
        "v2_2/long_strings.lance",
        "v2_3/vectors.lance",
        "v2_2/rle.lance",
        "nested/v2_2/nested.lance",
        "nested/v2_3/nested.lance",
        "nested/v2_3_sparse/nested.lance",
        "nested/v2_3_sparse/detections.lance",
    ];
    let mut outcomes = [0usize; 2];
    let rounds: usize = std::env::var("LAKESEEK_FUZZ_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(FUZZ_ROUNDS_DEFAULT);
    for relative in files {
        let file = file_fixture(relative);
        let footer = support::raw_footer(&file);
        for round in 0..rounds {
            let mut f = file.clone();
            // Half the rounds hit the metadata region, half the data.
            let (lo, hi) = if round % 2 == 0 {
                (footer.column_meta_start as usize, f.len())
            } else {
                (0, footer.column_meta_start as usize)
            };
            for _ in 0..1 + next() % 4 {
                let at = lo + (next() as usize) % (hi - lo);
                f[at] ^= 1 << (next() % 8);
            }
            let handle = tokio::spawn(async move { open_and_read_all(NAME, f).await });
            match handle.await {
                Ok(Ok(())) => outcomes[0] += 1,
                Ok(Err(e)) => {
                    assert!(
                        matches!(
                            e,
                            Error::Corrupt { .. } | Error::Unsupported { .. } | Error::Arrow(_)
                        ),
                        "{relative} round {round}: unexpected error kind {e:?}"
                    );
                    outcomes[1] += 1;
                }
                Err(join) => panic!("{relative} round {round}: reader panicked: {join}"),
            }
        }
    }
    assert!(outcomes[1] > 0, "no mutation was detected: {outcomes:?}");
}

#[tokio::test]
async fn repetition_indexes_that_do_not_add_up_are_corrupt() {
    for relative in ["nested/v2_2/nested.lance", "nested/v2_3/nested.lance"] {
        let file = file_fixture(relative);
        let (_, buffers, layout) = page_of(&file, "li_nulls").await;
        let PageLayout::MiniBlock(mini) = &layout else {
            panic!("li_nulls is mini-block")
        };
        let index = mini.repetition_index.clone().expect("repetition index");
        assert_eq!(index, *buffers.last().expect("buffers"));
        // One more row "ends" in the first chunk than the page has.
        let mut f = file.clone();
        let at = index.start as usize;
        let ends = u64::from_le_bytes(f[at..at + 8].try_into().unwrap());
        f[at..at + 8].copy_from_slice(&(ends + 1).to_le_bytes());
        assert_corrupt(open_and_read_all(NAME, f).await, "rows");
        // A repetition level above the maximum in the first chunk's rep payload is caught
        // by the level decoder or the unraveller, never a panic.
        let mut f = file.clone();
        let meta = buffers[1].start as usize;
        f[meta + 8..meta + 24].fill(0xff);
        assert!(matches!(
            open_and_read_all(NAME, f).await,
            Err(Error::Corrupt { .. })
        ));
    }
}

#[tokio::test]
async fn sparse_counts_that_do_not_match_the_child_slots_are_corrupt() {
    let file = file_fixture("nested/v2_3_sparse/nested.lance");
    let (column, _, _) = page_of(&file, "li_nulls").await;
    let edited = support::edit_planar_page(&file, column, |layout, _| {
        let Some(enc::structural_plane::Codec::Sparse(sparse)) =
            layout.structure.as_mut().and_then(|s| s.codec.as_mut())
        else {
            panic!("sparse")
        };
        let Some(enc::sparse_structural_layer::Layer::List(list)) = sparse.layers[0].layer.as_mut()
        else {
            panic!("list layer")
        };
        list.num_child_slots += 3;
    });
    let result = open_and_read_all(NAME, edited).await;
    assert!(matches!(result, Err(Error::Corrupt { .. })), "{result:?}");
}
