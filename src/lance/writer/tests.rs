//! Round trips of the writer through lakeseek's own reader (pylance reads the same files
//! back in `tests/fixtures/list_element/check_index_builder.py`).

use std::sync::Arc;

use arrow_array::{ArrayRef, BinaryArray, RecordBatch, UInt32Array, UInt64Array};
use arrow_schema::{DataType, Field, Schema};
use object_store::ObjectStoreExt;
use proptest::prelude::*;

use super::{LanceFileWriter, WriteVersion};
use crate::io::{open_url, FetchOptions, IoStats, RangeFetcher};
use crate::lance::reader::{LanceFileReader, ReaderCaches, RowSelection};
use crate::lance::version::FileVersion;

/// Write `batches` with `version`, then read every row back with lakeseek's reader.
pub(crate) fn round_trip(
    schema: Arc<Schema>,
    batches: &[RecordBatch],
    version: WriteVersion,
    page_bytes: usize,
) -> (RecordBatch, std::collections::HashMap<String, String>) {
    let mut writer = LanceFileWriter::new(Vec::new(), Arc::clone(&schema), version)
        .unwrap()
        .with_page_bytes(page_bytes);
    writer.add_schema_metadata("batch_size", "16");
    for b in batches {
        writer.write_batch(b).unwrap();
    }
    let (bytes, size) = writer.finish().unwrap();
    assert_eq!(bytes.len() as u64, size);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let opened = open_url("memory:///f.lance", &[]).unwrap();
        opened.store.put(&opened.path, bytes.into()).await.unwrap();
        let fetcher = RangeFetcher::new(Arc::clone(&opened.source), FetchOptions::default());
        let stats = IoStats::new();
        let reader = LanceFileReader::open(
            fetcher,
            opened.path.clone(),
            None,
            Arc::new(ReaderCaches::default()),
            &stats,
        )
        .await
        .unwrap();
        let expected = match version {
            WriteVersion::V2_1 => FileVersion::V2_1,
            WriteVersion::V2_2 => FileVersion::V2_2,
        };
        assert_eq!(reader.metadata().version, expected);
        let columns: Vec<usize> = (0..schema.fields().len()).collect();
        let batch = reader
            .read_rows(&columns, &RowSelection::Range(0..reader.num_rows()), &stats)
            .await
            .unwrap();
        (batch, reader.schema().metadata.clone())
    })
}

fn data_schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("values", DataType::Binary, true),
        Field::new("ids", DataType::UInt64, false),
        Field::new("page_idx", DataType::UInt32, false),
    ]))
}

fn batch_of(values: &[Option<Vec<u8>>], ids: &[u64]) -> RecordBatch {
    let v: ArrayRef = Arc::new(BinaryArray::from_iter(values.iter().map(|v| v.as_deref())));
    let i: ArrayRef = Arc::new(UInt64Array::from(ids.to_vec()));
    let p: ArrayRef = Arc::new(UInt32Array::from_iter_values(
        ids.iter().map(|x| (*x % 1000) as u32),
    ));
    RecordBatch::try_new(data_schema(), vec![v, i, p]).unwrap()
}

#[test]
fn index_shaped_file_round_trips_in_both_versions() {
    let values: Vec<Option<Vec<u8>>> = (0..10_000u32)
        .map(|i| (i % 17 != 0).then(|| format!("v{:06}", i * 7919 % 100_000).into_bytes()))
        .collect();
    let ids: Vec<u64> = (0..10_000u64).map(|i| (i / 3000) << 32 | i).collect();
    let batch = batch_of(&values, &ids);
    for version in [WriteVersion::V2_1, WriteVersion::V2_2] {
        // Small pages: several disk pages per column, cut at batch boundaries.
        let parts: Vec<RecordBatch> = (0..10).map(|i| batch.slice(i * 1000, 1000)).collect();
        let (back, metadata) = round_trip(data_schema(), &parts, version, 3000);
        assert_eq!(back.columns(), batch.columns(), "{version:?}");
        assert_eq!(metadata.get("batch_size").map(String::as_str), Some("16"));
    }
}

#[test]
fn empty_file_has_the_schema_and_no_rows() {
    let (back, _) = round_trip(data_schema(), &[], WriteVersion::V2_2, 1 << 20);
    assert_eq!(back.num_rows(), 0);
}

#[test]
fn mismatched_batches_are_refused() {
    let mut w = LanceFileWriter::new(Vec::new(), data_schema(), WriteVersion::V2_2).unwrap();
    let wrong = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("ids", DataType::UInt64, true)])),
        vec![Arc::new(UInt64Array::from(vec![Some(1), None])) as ArrayRef],
    )
    .unwrap();
    assert!(w.write_batch(&wrong).is_err());
    let nulls = batch_of(&[None], &[1]);
    let schema = Arc::new(Schema::new(vec![
        Field::new("values", DataType::Binary, false),
        Field::new("ids", DataType::UInt64, false),
        Field::new("page_idx", DataType::UInt32, false),
    ]));
    let mut w = LanceFileWriter::new(Vec::new(), Arc::clone(&schema), WriteVersion::V2_2).unwrap();
    let nulls = RecordBatch::try_new_with_options(
        schema,
        nulls.columns().to_vec(),
        &arrow_array::RecordBatchOptions::new(),
    );
    // Arrow itself refuses nulls in a non-nullable field.
    assert!(nulls.is_err() || w.write_batch(&nulls.unwrap()).is_err());
    let list = Arc::new(Schema::new(vec![Field::new(
        "l",
        DataType::List(Arc::new(Field::new("item", DataType::Int32, true))),
        true,
    )]));
    assert!(LanceFileWriter::new(Vec::new(), list, WriteVersion::V2_2).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn arbitrary_binary_and_ids_round_trip(
        rows in proptest::collection::vec(
            (proptest::option::weighted(0.9, proptest::collection::vec(any::<u8>(), 0..300)),
             any::<u64>()),
            1..3000,
        ),
        page_bytes in 64usize..100_000,
        v21 in any::<bool>(),
    ) {
        let (values, ids): (Vec<_>, Vec<_>) = rows.into_iter().unzip();
        let batch = batch_of(&values, &ids);
        let version = if v21 { WriteVersion::V2_1 } else { WriteVersion::V2_2 };
        let step = 700.min(batch.num_rows());
        let parts: Vec<RecordBatch> = (0..batch.num_rows())
            .step_by(step)
            .map(|s| batch.slice(s, step.min(batch.num_rows() - s)))
            .collect();
        let (back, _) = round_trip(data_schema(), &parts, version, page_bytes);
        prop_assert_eq!(back.columns(), batch.columns());
    }
}
