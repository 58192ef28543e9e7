//! Lance scalar indices.

pub mod list_element;
