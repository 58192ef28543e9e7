//! Answer filters from a dataset's indices and read the matching rows, printing what each
//! step cost. Runs on the bundled sample dataset in memory (no network):
//!
//! ```sh
//! cargo run --example query_dataset
//! ```
//! With a bucket, replace the URL and `.object_store(...)` with your `s3://…` URL and
//! `.storage_option(...)` calls.

use lakeseek::{Dataset, IoStats, Session};

#[tokio::main]
async fn main() -> lakeseek::Result<()> {
    let session = Session::default();
    let open_cost = IoStats::new();
    let dataset = Dataset::builder(lakeseek::sample::DATASET_URL)
        .object_store(lakeseek::sample::store().await?)
        .session(&session)
        .stats(&open_cost)
        .open()
        .await?;
    println!(
        "opened version {} ({} indices: {:?}): {:?}",
        dataset.version(),
        dataset.index_names().len(),
        dataset.index_names(),
        open_cost.snapshot()
    );
    for filter in [
        "key = 'cam06-029417'",
        "key IN ('cam00-000001', 'cam06-029417', 'no-such-key')",
        "any_element(detections, 'label = ''car'' AND confidence > 0.9')",
    ] {
        let cost = IoStats::new();
        let result = dataset
            .query()
            .filter(filter)
            .columns(&["key", "camera"])
            .stats(&cost)
            .execute()
            .await?;
        println!(
            "{filter}\n  -> {} rows, {:?}",
            result.row_addresses.len(),
            cost.snapshot()
        );
    }
    Ok(())
}
