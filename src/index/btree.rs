//! The BTREE index kind: a filter leaf answered from the page lookup (page selection
//! exactly as lance 14 does it) and only the touched pages of `page_data.lance`. The file
//! format (page lookup decoding, page selection, page reads) is
//! [`crate::index::btree_file`], which the list element index reads too.

mod explain;
pub(crate) mod kind;
