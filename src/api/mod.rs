//! The public facade: [`Dataset`], [`LanceFile`] and the builders and results around them.
//! Each is a thin driver over the crate's planners, fetcher and decoders.

mod blob;
mod blob_external;
mod columns;
mod dataset;
mod describe;
mod describe_vector;
pub(crate) mod ecp;
mod file;
mod filter_expr;
mod inspect;
mod list_element_index;
mod nearest;
mod open;
mod prewarm;
mod query;
mod scan;
mod search;
mod store;

pub use blob::{BlobHandle, BlobReader, BLOB_READ_CHUNK_BYTES};
pub use columns::ColumnInfo;
pub use dataset::{Dataset, DatasetBuilder};
pub use describe::{
    DataFileDescription, DatasetDescription, FieldDescription, FragmentDescription,
    IndexDescription, IndexSegmentDescription, VectorIndexDescription,
};
pub use ecp::EcpIndexBuilder;
pub use file::{LanceFile, LanceFileBuilder};
pub use filter_expr::{FilterExpr, FilterValue};
pub use inspect::{
    ColumnInspection, FieldInspection, FileInspection, PageInspection, PlanInspection,
    PlanLayerSummary,
};
pub use list_element_index::{CreatedListElementIndex, ListElementIndexBuilder};
pub use nearest::{Nearest, DISTANCE_COLUMN};
pub use prewarm::{Prewarm, PrewarmReport};
pub use query::{Query, QueryResult};
pub use scan::{evaluate_any_element, FilterExactness, FragmentInfo, PlannedFilter};
pub use search::{FullTextQuery, Search, SearchOperator, SearchResult};
pub use store::OpenedStore;
