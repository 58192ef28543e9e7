//! Read one Lance file by row range and by row list, printing what it cost:
//!
//! ```sh
//! cargo run --example read_file
//! ```

use lakeseek::{IoStats, LanceFile};

#[tokio::main]
async fn main() -> lakeseek::Result<()> {
    let open_cost = IoStats::new();
    let file = LanceFile::builder(&lakeseek::sample::data_file_url())
        .object_store(lakeseek::sample::store().await?)
        .stats(&open_cost)
        .open()
        .await?;
    println!(
        "{} rows, schema {:?}\nopen: {:?}",
        file.num_rows(),
        file.schema()
            .fields()
            .iter()
            .map(|f| f.name())
            .collect::<Vec<_>>(),
        open_cost.snapshot()
    );
    let cost = IoStats::new();
    let head = file
        .with_stats(&cost)
        .read_range(&["key", "camera"], 0..10)
        .await?;
    println!(
        "rows 0..10: {} rows, {:?}",
        head.num_rows(),
        cost.snapshot()
    );
    let cost = IoStats::new();
    let some = file
        .with_stats(&cost)
        .take(&["key", "detections"], &[9000, 3, 4711, 3])
        .await?;
    println!(
        "rows [9000, 3, 4711, 3]: {} rows, {:?}",
        some.num_rows(),
        cost.snapshot()
    );
    Ok(())
}
