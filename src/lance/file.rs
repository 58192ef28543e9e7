//! The Lance v2 container: footer, offset tables, schema and column metadata.
