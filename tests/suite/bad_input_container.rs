//! Malformed containers (footer, offset tables, schema, column metadata) built by mutating
//! real pylance fixtures in memory: each must fail with `Corrupt` / `Unsupported` naming the
//! object path (and, for `Corrupt`, the byte range), never panic.

use crate::suite::common::file_fixture;
use crate::suite::read_support as support;

use crate::lance::proto::file as pb;
use crate::Error;
use prost::Message;
use support::{column_protos, open_and_read_all, raw_footer, with_columns};

const NAME: &str = "bad.lance";

/// `Corrupt` naming the path and a byte range, whose message contains `needle`.
fn assert_corrupt(result: crate::Result<()>, needle: &str) {
    match result {
        Err(Error::Corrupt {
            path, range, what, ..
        }) => {
            assert_eq!(path, NAME, "path in {what}");
            assert!(range.is_some(), "no byte range in {what:?}");
            assert!(
                what.contains(needle),
                "{what:?} does not mention {needle:?}"
            );
        }
        other => panic!("expected Corrupt mentioning {needle:?}, got {other:?}"),
    }
}

fn assert_unsupported(result: crate::Result<()>, needle: &str) {
    match result {
        Err(Error::Unsupported { path, what, .. }) => {
            assert_eq!(path, NAME);
            assert!(
                what.contains(needle),
                "{what:?} does not mention {needle:?}"
            );
        }
        other => panic!("expected Unsupported mentioning {needle:?}, got {other:?}"),
    }
}

fn put_u64(file: &mut [u8], at: usize, v: u64) {
    file[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn footer_at(file: &[u8]) -> usize {
    file.len() - 40
}

#[tokio::test]
async fn truncated_files_are_corrupt() {
    let file = file_fixture("v2_2/ints.lance");
    for cut in [0usize, 1, 39, 40, 41, 1000, file.len() / 2, file.len() - 1] {
        let result = open_and_read_all(NAME, file[..cut].to_vec()).await;
        assert!(
            matches!(result, Err(Error::Corrupt { .. })),
            "cut at {cut}: {result:?}"
        );
    }
    assert_corrupt(
        open_and_read_all(NAME, file[..20].to_vec()).await,
        "too small",
    );
    // Dropping a prefix keeps a valid-looking footer whose offsets now point too far.
    let result = open_and_read_all(NAME, file[4096..].to_vec()).await;
    assert!(matches!(result, Err(Error::Corrupt { .. })), "{result:?}");
}

#[tokio::test]
async fn wrong_magic_is_corrupt() {
    let mut file = file_fixture("v2_1/floats.lance");
    let n = file.len();
    file[n - 4..].copy_from_slice(b"PAR1");
    assert_corrupt(open_and_read_all(NAME, file).await, "magic");
}

#[tokio::test]
async fn legacy_and_unknown_versions_are_unsupported() {
    let file = file_fixture("v2_2/floats.lance");
    for (major, minor, needle) in [
        (0u16, 2u16, "legacy"),
        (0, 0, "legacy"),
        (2, 9, "unknown"),
        (3, 0, "unknown"),
        (1, 0, "unknown"),
    ] {
        let mut f = file.clone();
        let at = footer_at(&f) + 32;
        f[at..at + 2].copy_from_slice(&major.to_le_bytes());
        f[at + 2..at + 4].copy_from_slice(&minor.to_le_bytes());
        assert_unsupported(open_and_read_all(NAME, f).await, needle);
    }
}

#[tokio::test]
async fn footer_offsets_outside_their_bounds_are_corrupt() {
    let file = file_fixture("v2_3/strings.lance");
    let footer = raw_footer(&file);
    let at = footer_at(&file);
    let size = file.len() as u64;
    let cases: Vec<(usize, u64, &str)> = vec![
        (at + 16, size, "GBO table"),                // GBO table at the footer
        (at + 16, u64::MAX - 3, "GBO table"),        // overflowing position
        (at + 8, footer.gbo_start + 1, "CMO table"), // CMO after GBO
        (at, footer.cmo_start + 1, "column metadata starts"), // column metadata after CMO
    ];
    for (offset, value, needle) in cases {
        let mut f = file.clone();
        put_u64(&mut f, offset, value);
        assert_corrupt(open_and_read_all(NAME, f).await, needle);
    }
    let mut f = file.clone();
    f[at + 28..at + 32].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_corrupt(open_and_read_all(NAME, f).await, "CMO table");
    let mut f = file.clone();
    f[at + 24..at + 28].copy_from_slice(&0u32.to_le_bytes());
    assert_corrupt(open_and_read_all(NAME, f).await, "no global buffers");
}

#[tokio::test]
async fn table_entries_outside_their_regions_are_corrupt() {
    let file = file_fixture("v2_2/temporal.lance");
    let footer = raw_footer(&file);
    // Global buffer 0 (schema) pointing past the file.
    let mut f = file.clone();
    put_u64(&mut f, footer.gbo_start as usize, file.len() as u64 + 100);
    assert_corrupt(open_and_read_all(NAME, f).await, "global buffer");
    // Schema size running into the column metadata.
    let mut f = file.clone();
    put_u64(
        &mut f,
        footer.gbo_start as usize + 8,
        footer.column_meta_start,
    );
    assert_corrupt(open_and_read_all(NAME, f).await, "global buffer");
    // A column's metadata before the column metadata region.
    let mut f = file.clone();
    put_u64(&mut f, footer.cmo_start as usize + 16, 0);
    assert_corrupt(
        open_and_read_all(NAME, f).await,
        "outside the column metadata region",
    );
    // A column's metadata size past the CMO table.
    let mut f = file.clone();
    put_u64(&mut f, footer.cmo_start as usize + 8, footer.cmo_start);
    assert_corrupt(
        open_and_read_all(NAME, f).await,
        "outside the column metadata region",
    );
}

#[tokio::test]
async fn corrupted_protobufs_are_corrupt() {
    let file = file_fixture("v2_1/ints.lance");
    let footer = raw_footer(&file);
    let schema_pos =
        u64::from_le_bytes(file[footer.gbo_start as usize..][..8].try_into().unwrap()) as usize;
    let mut f = file.clone();
    f[schema_pos..schema_pos + 16].fill(0xff);
    assert_corrupt(open_and_read_all(NAME, f).await, "FileDescriptor");
    let mut f = file.clone();
    let start = footer.column_meta_start as usize;
    f[start..start + 12].fill(0xff);
    assert_corrupt(open_and_read_all(NAME, f).await, "ColumnMetadata");
    // A page encoding that is not an Any.
    let mut columns = column_protos(&file);
    columns[0].pages[0].encoding = Some(pb::Encoding {
        location: Some(pb::encoding::Location::Direct(pb::DirectEncoding {
            encoding: bytes::Bytes::from_static(&[0xff; 12]),
        })),
    });
    assert_corrupt(
        open_and_read_all(NAME, with_columns(&file, &columns)).await,
        "Any",
    );
    // An Any of the wrong type for the version.
    let any = prost_types::Any {
        type_url: "/lance.encodings23.PlanarLayout".into(),
        value: vec![],
    };
    columns[0].pages[0].encoding = Some(pb::Encoding {
        location: Some(pb::encoding::Location::Direct(pb::DirectEncoding {
            encoding: any.encode_to_vec().into(),
        })),
    });
    assert_corrupt(
        open_and_read_all(NAME, with_columns(&file, &columns)).await,
        "does not belong",
    );
    // An Any whose value is garbage.
    let any = prost_types::Any {
        type_url: "/lance.encodings21.PageLayout".into(),
        value: vec![0xff; 9],
    };
    columns[0].pages[0].encoding = Some(pb::Encoding {
        location: Some(pb::encoding::Location::Direct(pb::DirectEncoding {
            encoding: any.encode_to_vec().into(),
        })),
    });
    assert_corrupt(
        open_and_read_all(NAME, with_columns(&file, &columns)).await,
        "PageLayout",
    );
}

#[tokio::test]
async fn page_buffers_and_rows_that_do_not_fit_are_corrupt() {
    let file = file_fixture("v2_2/strings.lance");
    let footer = raw_footer(&file);
    let base = column_protos(&file);
    let edit = |f: &dyn Fn(&mut Vec<pb::ColumnMetadata>)| {
        let mut c = base.clone();
        f(&mut c);
        with_columns(&file, &c)
    };
    let past_end = edit(&|c| c[0].pages[0].buffer_offsets[0] = file.len() as u64);
    assert_corrupt(open_and_read_all(NAME, past_end).await, "data region");
    let into_metadata = edit(&|c| c[0].pages[0].buffer_sizes[1] = footer.column_meta_start);
    assert_corrupt(open_and_read_all(NAME, into_metadata).await, "data region");
    let overflow = edit(&|c| {
        c[0].pages[0].buffer_offsets[0] = u64::MAX - 1;
        c[0].pages[0].buffer_sizes[0] = 10;
    });
    assert_corrupt(open_and_read_all(NAME, overflow).await, "data region");
    let mismatched = edit(&|c| {
        c[0].pages[0].buffer_sizes.pop();
    });
    assert_corrupt(open_and_read_all(NAME, mismatched).await, "buffer sizes");
    let rows = edit(&|c| c[0].pages[0].length += 1);
    assert_corrupt(open_and_read_all(NAME, rows).await, "rows");
    let priority = edit(&|c| c[1].pages[0].priority = 5);
    assert_corrupt(open_and_read_all(NAME, priority).await, "starts at row");
    let dropped = edit(&|c| {
        c.pop();
    });
    assert_corrupt(open_and_read_all(NAME, dropped).await, "physical columns");
    let missing_buffers = edit(&|c| {
        c[0].pages[0].buffer_offsets.truncate(1);
        c[0].pages[0].buffer_sizes.truncate(1);
    });
    assert_corrupt(open_and_read_all(NAME, missing_buffers).await, "buffers");
}

#[tokio::test]
async fn metadata_larger_than_the_tail_needs_exactly_one_more_read() {
    use crate::io::{FetchOptions, IoStats, RangeFetcher};
    use crate::lance::reader::{LanceFileReader, ReaderCaches, RowSelection};
    use std::sync::Arc;
    let file = file_fixture("v2_2/floats.lance");
    let mut columns = column_protos(&file);
    // Column-level buffers are ignored by readers; 40k empty ones make the metadata ~80 KB.
    columns[0].buffer_offsets = vec![0; 40_000];
    columns[0].buffer_sizes = vec![0; 40_000];
    let big = with_columns(&file, &columns);
    let (source, path) = support::memory_source(NAME, big).await;
    let recording = Arc::new(crate::io::wrappers::RecordingSource::new(source));
    let stats = IoStats::new();
    let reader = LanceFileReader::open(
        RangeFetcher::new(
            Arc::<crate::io::wrappers::RecordingSource>::clone(&recording),
            FetchOptions::default(),
        ),
        path,
        None,
        Arc::new(ReaderCaches::default()),
        &stats,
    )
    .await
    .expect("open");
    assert_eq!(stats.snapshot().requests, 2, "{:?}", recording.reads());
    assert_eq!(stats.snapshot().round_trips, 2);
    let batch = reader
        .read_rows(&[0], &RowSelection::Range(0..10), &stats)
        .await
        .expect("read");
    assert_eq!(batch.num_rows(), 10);
}
