//! Bad input gives a clear error naming the array (never a panic): unknown format_version or
//! metric, wrong dtypes, shape mismatches, ids out of range, truncated/corrupted chunks,
//! missing arrays, broken metadata, bad saved queries, bad queries and parameters.

use crate::suite::ecp_support;

use std::path::Path as FsPath;

use crate::ecp::{EcpIndex, OpenOptions, QueryOptions, SearchParams};
use crate::Error;
use ecp_support::*;
use serde_json::Value;

const NAME: &str = "l2_l2_f32"; // 2 levels, dim 16; case q0 visits lvl_1/node_1 and lvl_2/node_1

fn meta_path(root: &FsPath, array: &str) -> std::path::PathBuf {
    root.join(array).join("zarr.json")
}

fn edit_meta(root: &FsPath, array: &str, edit: impl FnOnce(&mut Value)) {
    let p = meta_path(root, array);
    let mut v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(&p, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
}

/// Replace an array's codecs by `bytes` only and write chunk 0 uncompressed.
fn write_plain_u32_chunk(root: &FsPath, array: &str, values: &[u32]) {
    edit_meta(root, array, |v| {
        v["codecs"] = serde_json::json!([{"name": "bytes", "configuration": {"endian": "little"}}]);
    });
    let data: Vec<u8> = values.iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(root.join(array).join("c/0"), data).unwrap();
}

fn chunk_rows(root: &FsPath, array: &str) -> usize {
    let v: Value = serde_json::from_slice(&std::fs::read(meta_path(root, array)).unwrap()).unwrap();
    v["chunk_grid"]["configuration"]["chunk_shape"][0]
        .as_u64()
        .unwrap() as usize
}

async fn open(root: &FsPath) -> crate::Result<EcpIndex> {
    EcpIndex::open_url(
        &root.to_string_lossy(),
        &[],
        OpenOptions {
            prefetch: 1,
            ..OpenOptions::default()
        },
    )
    .await
}

/// Run case q0's first page (visits lvl_1/node_1 then lvl_2/node_1).
async fn search_q0(index: &EcpIndex) -> crate::Result<Vec<u32>> {
    let case = &expected(NAME).cases[0];
    let params = SearchParams {
        search_exp: case.search_exp,
        max_increments: case.max_increments,
    };
    let mut q = index.query(
        case.query.clone(),
        QueryOptions {
            params,
            ..Default::default()
        },
    )?;
    Ok(q.next_k(case.k).await?.ids)
}

fn assert_corrupt(e: &Error, array: &str) {
    match e {
        Error::Corrupt { path, .. } => assert!(
            path.ends_with(array),
            "error names {path}, expected {array}: {e}"
        ),
        other => panic!("expected Corrupt naming {array}, got {other}"),
    }
}

#[tokio::test]
async fn unknown_format_version_is_unsupported() {
    let tmp = temp_copy(NAME);
    std::fs::write(tmp.path().join("info/format_version/c"), 2u32.to_le_bytes()).unwrap();
    let e = open(tmp.path()).await.unwrap_err();
    assert!(
        matches!(&e, Error::Unsupported { path, .. } if path.ends_with("info/format_version")),
        "{e}"
    );
}

#[tokio::test]
async fn unknown_metric_is_unsupported() {
    let tmp = temp_copy(NAME);
    // vlen-utf8: element count, then (length, bytes) per element
    let mut chunk = 1u32.to_le_bytes().to_vec();
    chunk.extend_from_slice(&3u32.to_le_bytes());
    chunk.extend_from_slice(b"COS");
    std::fs::write(tmp.path().join("info/metric/c"), chunk).unwrap();
    let e = open(tmp.path()).await.unwrap_err();
    assert!(
        matches!(&e, Error::Unsupported { path, what, .. } if path.ends_with("info/metric") && what.contains("COS")),
        "{e}"
    );
}

#[tokio::test]
async fn wrong_scalar_dtype_is_corrupt() {
    let tmp = temp_copy(NAME);
    edit_meta(tmp.path(), "info/levels", |v| {
        v["data_type"] = "int32".into()
    });
    assert_corrupt(&open(tmp.path()).await.unwrap_err(), "info/levels");
    let tmp = temp_copy(NAME);
    edit_meta(tmp.path(), "info/is_normalized", |v| {
        v["data_type"] = "uint8".into();
        v["fill_value"] = 0.into();
    });
    assert_corrupt(&open(tmp.path()).await.unwrap_err(), "info/is_normalized");
}

#[tokio::test]
async fn wrong_embedding_dtype_is_corrupt() {
    let tmp = temp_copy(NAME);
    edit_meta(tmp.path(), "lvl_1/node_1/embeddings", |v| {
        v["data_type"] = "int32".into();
        v["fill_value"] = 0.into();
    });
    let index = open(tmp.path()).await.unwrap();
    let e = search_q0(&index).await.unwrap_err();
    assert_corrupt(&e, "lvl_1/node_1/embeddings");
    assert!(e.to_string().contains("int32"), "{e}");
    let e = index.node(0, 1).await.unwrap_err();
    assert_corrupt(&e, "lvl_1/node_1/embeddings");
}

#[tokio::test]
async fn wrong_id_dtype_is_corrupt() {
    let tmp = temp_copy(NAME);
    edit_meta(tmp.path(), "lvl_2/node_1/item_ids", |v| {
        v["data_type"] = "int32".into()
    });
    let index = open(tmp.path()).await.unwrap();
    assert_corrupt(
        &search_q0(&index).await.unwrap_err(),
        "lvl_2/node_1/item_ids",
    );
}

#[tokio::test]
async fn ids_rows_must_match_embedding_rows() {
    let tmp = temp_copy(NAME);
    edit_meta(tmp.path(), "lvl_2/node_1/item_ids", |v| {
        let n = v["shape"][0].as_u64().unwrap();
        v["shape"][0] = (n - 1).into();
    });
    let index = open(tmp.path()).await.unwrap();
    assert_corrupt(
        &search_q0(&index).await.unwrap_err(),
        "lvl_2/node_1/item_ids",
    );
}

#[tokio::test]
async fn node_dimension_must_match_root() {
    let tmp = temp_copy(NAME);
    edit_meta(tmp.path(), "lvl_1/node_1/embeddings", |v| {
        v["shape"][1] = 17.into();
        v["chunk_grid"]["configuration"]["chunk_shape"][1] = 17.into();
    });
    let index = open(tmp.path()).await.unwrap();
    let e = search_q0(&index).await.unwrap_err();
    assert_corrupt(&e, "lvl_1/node_1/embeddings");
    assert!(e.to_string().contains("dimension"), "{e}");
}

#[tokio::test]
async fn query_dimension_and_values_are_checked() {
    let index = open(&fixture_dir(NAME)).await.unwrap();
    let e = index
        .query(vec![0.0; 15], QueryOptions::default())
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("dimension")),
        "{e}"
    );
    let mut q = vec![0.0; 16];
    q[3] = f32::NAN;
    let e = index.query(q, QueryOptions::default()).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("not finite")),
        "{e}"
    );
    let mut q = vec![0.0; 16];
    q[0] = f32::INFINITY;
    assert!(index.query(q, QueryOptions::default()).is_err());
}

#[tokio::test]
async fn parameters_are_checked() {
    let index = open(&fixture_dir(NAME)).await.unwrap();
    let bad = SearchParams {
        search_exp: 0,
        max_increments: -1,
    };
    assert!(matches!(
        index.query(
            vec![0.0; 16],
            QueryOptions {
                params: bad,
                ..Default::default()
            }
        ),
        Err(Error::InvalidArgument(_))
    ));
    let bad = SearchParams {
        search_exp: 1,
        max_increments: -5,
    };
    assert!(matches!(
        index.query(
            vec![0.0; 16],
            QueryOptions {
                params: bad,
                ..Default::default()
            }
        ),
        Err(Error::InvalidArgument(_))
    ));
    let mut q = index.query(vec![0.0; 16], QueryOptions::default()).unwrap();
    assert!(matches!(q.next_k(0).await, Err(Error::InvalidArgument(_))));
}

#[tokio::test]
async fn node_id_out_of_range_is_corrupt() {
    let tmp = temp_copy(NAME);
    let array = "lvl_1/node_1/node_ids";
    let mut values = vec![1u32; chunk_rows(tmp.path(), array)];
    values[0] = 4_000_000;
    write_plain_u32_chunk(tmp.path(), array, &values);
    let index = open(tmp.path()).await.unwrap();
    let e = search_q0(&index).await.unwrap_err();
    assert_corrupt(&e, array);
    assert!(e.to_string().contains("out of range"), "{e}");
}

#[tokio::test]
async fn item_id_out_of_range_is_corrupt() {
    let tmp = temp_copy(NAME);
    let array = "lvl_2/node_1/item_ids";
    let mut values = vec![7u32; chunk_rows(tmp.path(), array)];
    values[1] = 2000; // == next_item_id
    write_plain_u32_chunk(tmp.path(), array, &values);
    let index = open(tmp.path()).await.unwrap();
    let e = search_q0(&index).await.unwrap_err();
    assert_corrupt(&e, array);
}

#[tokio::test]
async fn truncated_chunks_are_corrupt() {
    for (array, chunk) in [
        ("lvl_2/node_1/embeddings", "c/0/0"),
        ("lvl_2/node_1/item_ids", "c/0"),
        ("index_root/embeddings", "c/0/0"),
    ] {
        let tmp = temp_copy(NAME);
        let p = tmp.path().join(array).join(chunk);
        let bytes = std::fs::read(&p).unwrap();
        std::fs::write(&p, &bytes[..bytes.len() / 2]).unwrap();
        let e = match open(tmp.path()).await {
            Err(e) => e,
            Ok(index) => search_q0(&index).await.unwrap_err(),
        };
        assert_corrupt(&e, array);
    }
}

#[tokio::test]
async fn garbage_chunks_are_corrupt() {
    let tmp = temp_copy(NAME);
    let p = tmp.path().join("lvl_1/node_1/embeddings/c/0/0");
    std::fs::write(
        &p,
        (0..200u32)
            .map(|i| (i * 37 % 251) as u8)
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    let index = open(tmp.path()).await.unwrap();
    assert_corrupt(
        &search_q0(&index).await.unwrap_err(),
        "lvl_1/node_1/embeddings",
    );
}

#[tokio::test]
async fn uncompressed_chunk_of_wrong_size_is_corrupt() {
    let tmp = temp_copy(NAME);
    let array = "lvl_2/node_1/item_ids";
    let rows = chunk_rows(tmp.path(), array);
    write_plain_u32_chunk(tmp.path(), array, &vec![1u32; rows - 1]);
    let index = open(tmp.path()).await.unwrap();
    assert_corrupt(&search_q0(&index).await.unwrap_err(), array);
}

#[tokio::test]
async fn internal_node_without_node_ids_is_corrupt() {
    let tmp = temp_copy(NAME);
    std::fs::remove_dir_all(tmp.path().join("lvl_1/node_1/node_ids")).unwrap();
    let index = open(tmp.path()).await.unwrap();
    let e = search_q0(&index).await.unwrap_err();
    assert_corrupt(&e, "lvl_1/node_1/node_ids");
    assert!(e.to_string().contains("no node_ids"), "{e}");
}

#[tokio::test]
async fn broken_metadata_is_corrupt() {
    let tmp = temp_copy(NAME);
    std::fs::write(
        meta_path(tmp.path(), "lvl_1/node_1/embeddings"),
        b"{not json",
    )
    .unwrap();
    let index = open(tmp.path()).await.unwrap();
    assert_corrupt(
        &search_q0(&index).await.unwrap_err(),
        "lvl_1/node_1/embeddings",
    );
}

#[tokio::test]
async fn missing_required_arrays_are_not_found() {
    for array in [
        "info/levels",
        "info/metric",
        "rep_item_ids",
        "index_root/embeddings",
    ] {
        let tmp = temp_copy(NAME);
        std::fs::remove_dir_all(tmp.path().join(array)).unwrap();
        let e = open(tmp.path()).await.unwrap_err();
        assert!(
            matches!(&e, Error::NotFound { path, .. } if path.ends_with(array)),
            "{array}: {e}"
        );
    }
    let e = open(FsPath::new("/nonexistent/ecp/index"))
        .await
        .unwrap_err();
    assert!(matches!(e, Error::NotFound { .. }), "{e}");
}

#[tokio::test]
async fn root_must_be_two_dimensional() {
    let tmp = temp_copy(NAME);
    edit_meta(tmp.path(), "index_root/embeddings", |v| {
        v["shape"] = serde_json::json!([112]);
        v["chunk_grid"]["configuration"]["chunk_shape"] = serde_json::json!([16]);
    });
    assert_corrupt(
        &open(tmp.path()).await.unwrap_err(),
        "index_root/embeddings",
    );
}

#[tokio::test]
async fn bad_saved_queries_are_corrupt() {
    // level out of range
    let tmp = temp_copy(NAME);
    let array = "queries/3/tree_pq_level";
    let n = {
        let v: Value =
            serde_json::from_slice(&std::fs::read(meta_path(tmp.path(), array)).unwrap()).unwrap();
        v["shape"][0].as_u64().unwrap() as usize
    };
    write_plain_u32_chunk(tmp.path(), array, &vec![9u32; n]);
    let index = open(tmp.path()).await.unwrap();
    let e = index
        .load_query(3, QueryOptions::default())
        .await
        .unwrap_err();
    assert_corrupt(&e, array);
    // heap arrays of different lengths
    let tmp = temp_copy(NAME);
    edit_meta(tmp.path(), "queries/3/tree_pq_node_id", |v| {
        let n = v["shape"][0].as_u64().unwrap();
        v["shape"][0] = (n + 1).into();
    });
    let index = open(tmp.path()).await.unwrap();
    assert_corrupt(
        &index
            .load_query(3, QueryOptions::default())
            .await
            .unwrap_err(),
        "queries/3/tree_pq_node_id",
    );
    // wrong query dimension
    let tmp = temp_copy(NAME);
    edit_meta(tmp.path(), "queries/3/query", |v| {
        v["shape"][0] = 8.into();
        v["chunk_grid"]["configuration"]["chunk_shape"][0] = 8.into();
    });
    let index = open(tmp.path()).await.unwrap();
    assert_corrupt(
        &index
            .load_query(3, QueryOptions::default())
            .await
            .unwrap_err(),
        "queries/3/query",
    );
    // unknown query id
    let index = open(&fixture_dir(NAME)).await.unwrap();
    assert!(matches!(
        index.load_query(99, QueryOptions::default()).await,
        Err(Error::NotFound { .. })
    ));
}

#[tokio::test]
async fn absurd_shapes_are_corrupt_not_allocated() {
    let tmp = temp_copy(NAME);
    edit_meta(tmp.path(), "lvl_2/node_1/embeddings", |v| {
        v["shape"][0] = 1_000_000_000_000u64.into()
    });
    edit_meta(tmp.path(), "lvl_2/node_1/item_ids", |v| {
        v["shape"][0] = 1_000_000_000_000u64.into()
    });
    let index = open(tmp.path()).await.unwrap();
    assert_corrupt(
        &search_q0(&index).await.unwrap_err(),
        "lvl_2/node_1/embeddings",
    );
    let tmp = temp_copy(NAME);
    edit_meta(tmp.path(), "lvl_1/node_1/embeddings", |v| {
        v["chunk_grid"]["configuration"]["chunk_shape"][0] = 100_000_000u64.into()
    });
    let index = open(tmp.path()).await.unwrap();
    let e = search_q0(&index).await.unwrap_err();
    assert_corrupt(&e, "lvl_1/node_1/embeddings");
    assert!(e.to_string().contains("exceed"), "{e}");
}

/// The builder: an index prefix without an object store is a clear error (no panic, no
/// request); the builder with a session opens what `open_url` opens.
#[tokio::test]
async fn the_builder_needs_a_store_for_a_prefix_and_opens_with_a_session() {
    let tmp = temp_copy(NAME);
    let url = tmp.path().to_string_lossy().to_string();
    let e = EcpIndex::builder(&url)
        .prefix(object_store::path::Path::from("idx"))
        .open()
        .await
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    assert!(e.to_string().contains("object store"), "{e}");
    let session = crate::Session::default();
    let built = EcpIndex::builder(&url).session(&session).prefetch(1);
    let index = built.open().await.unwrap();
    let plain = open(tmp.path()).await.unwrap();
    assert_eq!(index.info().dim, plain.info().dim);
    assert_eq!(
        search_q0(&index).await.unwrap(),
        search_q0(&plain).await.unwrap()
    );
}
