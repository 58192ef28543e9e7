//! k-NN search on an ecpfs vector index: the first 10 results and the next 10, printing the
//! nodes each page cost:
//!
//! ```sh
//! cargo run --example ecp_search
//! ```

use lakeseek::ecp::{EcpIndex, QueryOptions};
use lakeseek::Session;

#[tokio::main]
async fn main() -> lakeseek::Result<()> {
    let index = EcpIndex::builder(lakeseek::sample::ECP_INDEX_URL)
        .object_store(lakeseek::sample::store().await?)
        .session(&Session::default())
        .open()
        .await?;
    let info = index.info();
    println!(
        "{} items of dimension {}, {} levels; open: {:?}",
        info.total_items,
        info.dim,
        info.levels,
        index.total_stats()
    );
    let query: Vec<f32> = (0..info.dim).map(|i| (i as f32 * 0.37).sin()).collect();
    let mut search = index.query(query, QueryOptions::default())?;
    for page in 1..=2 {
        let before = search.stats();
        let result = search.next_k(10).await?;
        println!(
            "page {page}: ids {:?}\n  cost {:?}",
            result.ids,
            search.stats().since(&before)
        );
    }
    Ok(())
}
