//! Random take by row address from a dataset, including the 2.3 sparse nested `detections`
//! column, cold then warm, printing requests, bytes and round trips:
//!
//! ```sh
//! cargo run --example take_rows
//! ```

use lakeseek::{Dataset, IoStats};

#[tokio::main]
async fn main() -> lakeseek::Result<()> {
    let dataset = Dataset::builder(lakeseek::sample::DATASET_URL)
        .object_store(lakeseek::sample::store().await?)
        .open()
        .await?;
    // Row addresses are `fragment << 32 | offset`; any order, repeats kept.
    let rows: Vec<u64> = vec![130, 3056, 5072, (1 << 32) | 17, (3 << 32) | 999, 130];
    for round in ["cold", "warm"] {
        let cost = IoStats::new();
        let batch = dataset
            .with_stats(&cost)
            .take(&rows, &["key", "detections"])
            .await?;
        println!("{round}: {} rows, {:?}", batch.num_rows(), cost.snapshot());
    }
    let batch = dataset.take(&rows[..2], &["key", "detections"]).await?;
    let mut out = Vec::new();
    let mut writer = arrow_json::LineDelimitedWriter::new(&mut out);
    writer.write_batches(&[&batch])?;
    writer.finish()?;
    print!("{}", String::from_utf8_lossy(&out));
    Ok(())
}
