//! The datasets of old pylance releases (`tests/fixtures/datasets/old/`) over the real S3
//! protocol (the in-process s3s server): every dataset pylance 14.0.2 reads is uploaded and
//! read through `s3://` exactly as locally — every row of every column by take
//! ([`take_mismatches`]) and, on the datasets whose index files lakeseek reads
//! ([`READABLE`]), every catalog filter ([`dataset_filter_mismatches`]) — and compared with
//! the same pylance 14.0.2 oracle; `inspect` describes each as the catalog recorded it
//! ([`describe_mismatches`]).

use serde_json::Value;

use super::common::S3TestServer;
use super::old_datasets::{catalog, dataset_filter_mismatches, old_dir, READABLE};
use super::old_datasets_inspect::describe_mismatches;
use super::old_datasets_take::{oracle_datasets, take_mismatches, TAKE_GAPS};
use crate::Dataset;

async fn open(s3: &S3TestServer, entry: &Value) -> crate::Result<Dataset> {
    let key = format!("old/{}", entry["path"].as_str().expect("path"));
    Dataset::builder(&s3.url(&key))
        .storage_options(s3.storage_options())
        .open()
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn old_datasets_over_s3_match_pylance() {
    let catalog = catalog();
    let s3 = S3TestServer::start().await;
    let mut bad = Vec::new();
    let (mut taken, mut filtered, mut described) = (0, 0, 0);
    for entry in oracle_datasets(&catalog) {
        let name = entry["name"].as_str().expect("name");
        let take = !TAKE_GAPS.contains(&name);
        let filters = READABLE.contains(&name);
        if !take && !filters {
            continue;
        }
        let path = entry["path"].as_str().expect("path");
        s3.upload_dir(&old_dir().join(path), &format!("old/{path}"))
            .await;
        let dataset = match open(&s3, &entry).await {
            Ok(d) => d,
            Err(e) => {
                bad.push(format!("{name}: open over S3: {e}"));
                continue;
            }
        };
        match dataset.describe().await {
            Ok(d) => bad.extend(describe_mismatches(&d, &entry)),
            Err(e) => bad.push(format!("{name}: inspect over S3: {e}")),
        }
        described += 1;
        if take {
            bad.extend(take_mismatches(&dataset, &entry).await);
            taken += 1;
        }
        if filters {
            bad.extend(dataset_filter_mismatches(&dataset, &entry).await);
            filtered += 1;
        }
    }
    println!(
        "over S3: {described} datasets inspected, {taken} taken whole, {filtered} with every \
         catalog filter"
    );
    assert!(
        described >= 22,
        "only {described} datasets inspected over S3"
    );
    assert!(taken >= 22, "only {taken} datasets taken over S3");
    assert!(
        filtered >= READABLE.len(),
        "only {filtered} datasets filtered"
    );
    assert!(
        bad.is_empty(),
        "{} mismatches over S3:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
