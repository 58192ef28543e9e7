//! lakeseek-datafusion's integration tests, in one binary (each test binary links all of
//! DataFusion: one instead of two saves ~300 MB of target directory per build profile).

mod common;
mod distributed;
mod queries;
mod sql;
